/* SPDX-License-Identifier: MIT */
/* test_pcap_ports.c - `fbwire-pcap stats` without --port on a live capture that mixes a Firebird
 * session on FB4's non-default port with PostgreSQL (psql) and MariaDB (mysql) sessions to the
 * peer servers of scripts/peer-servers.sh: the Firebird connection is found by its content and
 * decoded, the other TCP connections are counted as ignored, and `turns` proves they were in the
 * capture. Needs root (tcpdump on lo), the Firebird servers and the peers' clients; it starts the
 * peers (scripts/peer-servers.sh start pg mariadb) itself. */
#include "capture.h"
#include "run_tool.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define OUT_MAX (1u << 20)

typedef struct peers {
    char pg_port[16], pg_user[64], pg_db[64], pg_password[128];
    char my_port[16], my_user[64], my_db[64], my_password[128];
} peers;

/* KEY=VALUE lines of $FBWIRE_STATE/peers.env (written by scripts/peer-servers.sh); 0 if absent. */
static int load_peers(peers *p)
{
    memset(p, 0, sizeof *p);
    const char *state = getenv("FBWIRE_STATE");
    char path[1024];
    snprintf(path, sizeof path, "%s/peers.env", state ? state : FBWIRE_STATE_DEFAULT);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    struct {
        const char *key;
        char *dst;
    } keys[] = {{"PEER_PG_PORT=", p->pg_port},         {"PEER_PG_USER=", p->pg_user},
                {"PEER_PG_DB=", p->pg_db},             {"PEER_PG_PASSWORD=", p->pg_password},
                {"PEER_MARIADB_PORT=", p->my_port},    {"PEER_MARIADB_USER=", p->my_user},
                {"PEER_MARIADB_DB=", p->my_db},        {"PEER_MARIADB_PASSWORD=", p->my_password}};
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            if (!strncmp(line, keys[i].key, strlen(keys[i].key)))
                snprintf(keys[i].dst, 128, "%.127s", line + strlen(keys[i].key));
    }
    fclose(f);
    return p->pg_port[0] && p->my_port[0] && p->pg_password[0] && p->my_password[0];
}

/* One query through a peer's own command-line client; the password goes by environment. */
static void peer_query(const char *pw_var, const char *pw, const char *cmd)
{
    setenv(pw_var, pw, 1);
    int rc = system(cmd);
    unsetenv(pw_var);
    cr_assert_eq(rc, 0, "%s failed (%d)", cmd, rc);
}

static void firebird_session(const fbw_servers *s, int port)
{
    char dsn[1400];
    snprintf(dsn, sizeof dsn, "127.0.0.2/%d:%s", port, s->srv[FBW_SRV_FB4].db);
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    fbw_client *cl = NULL;
    fbw_err err;
    cr_assert_eq(fbw_client_connect(dsn, &o, &cl, &err), FBW_OK, "connect %s: %s", dsn, err.msg);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK);
    cr_assert_eq(fbw_tx_commit(tx), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK);
    fbw_tx_free(tx);
    cr_assert_eq(fbw_client_close(cl), FBW_OK); /* detach and disconnect */
}

static long long json_num(const char *doc, const char *section, const char *key)
{
    const char *s = strstr(doc, section);
    cr_assert(s, "no %s in %s", section, doc);
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *v = strstr(s, k);
    cr_assert(v, "no %s after %s in %s", key, section, doc);
    return strtoll(v + strlen(k), NULL, 10);
}

Test(pcap_ports, firebird_found_among_postgresql_and_mariadb, .timeout = 120)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    if (system("command -v psql >/dev/null && command -v mysql >/dev/null") != 0)
        cr_skip_test("psql or mysql (the peers' clients) not installed");
    /* Like every test that needs a server, it starts the peers itself (idempotent: a second start
     * only verifies): a peers.env left by an earlier run says nothing about whether they still run. */
    cr_assert_eq(system(FBWIRE_SOURCE_DIR "/scripts/peer-servers.sh start pg mariadb >/dev/null"), 0,
                 "scripts/peer-servers.sh start pg mariadb failed");
    peers p;
    cr_assert(load_peers(&p), "no complete peers.env after scripts/peer-servers.sh start");
    fbw_servers s;
    fbw_servers_require(&s);
    int port = s.srv[FBW_SRV_FB4].port;
    cr_assert_neq(port, 3050, "FB4 must be on a non-default port for this test");

    char tmp[] = "/tmp/fbwire-test-ports.XXXXXX", file[600], errlog[600], filter[256];
    cr_assert(mkdtemp(tmp), "mkdtemp: %s", strerror(errno));
    chmod(tmp, 0777); /* tcpdump drops privileges before writing */
    snprintf(file, sizeof file, "%s/mixed.pcap", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(filter, sizeof filter,
             "(host 127.0.0.2 and tcp port %d) or (host 127.0.0.1 and (tcp port %s or tcp port %s))",
             port, p.pg_port, p.my_port);
    pid_t td = fbw_tcpdump_start(file, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));

    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "PGSSLMODE=disable psql -X -q -h 127.0.0.1 -p %s -U %s -d %s -c 'SELECT 1' "
             ">/dev/null",
             p.pg_port, p.pg_user, p.pg_db);
    peer_query("PGPASSWORD", p.pg_password, cmd);
    firebird_session(&s, port);
    snprintf(cmd, sizeof cmd,
             "mysql --ssl=0 -h 127.0.0.1 -P %s -u %s %s -e 'SELECT 1' >/dev/null 2>&1 || "
             "mysql -h 127.0.0.1 -P %s -u %s %s -e 'SELECT 1' >/dev/null",
             p.my_port, p.my_user, p.my_db, p.my_port, p.my_user, p.my_db);
    peer_query("MYSQL_PWD", p.my_password, cmd);
    fbw_tcpdump_stop(td);

    /* every connection of the capture, any protocol */
    const char *targv[] = {"turns", file, "--json", "--port", p.pg_port, "--port", p.my_port, NULL};
    fbw_run tu = fbw_run_tool(TOOL, targv, NULL, OUT_MAX);
    cr_assert_eq(tu.status, 0, "%s", tu.err);
    cr_assert_geq(json_num(tu.out, "\"totals\":{", "connections"), 2,
                  "the capture has no PostgreSQL/MariaDB connection: %s", tu.out);

    const char *sargv[] = {"stats", file, "--json", NULL};
    fbw_run st = fbw_run_tool(TOOL, sargv, NULL, OUT_MAX);
    cr_assert_eq(st.status, 0, "stats: %s%s", st.out, st.err);
    cr_assert_eq(json_num(st.out, "\"total\":{", "connections"), 1, "%s", st.out);
    cr_assert_geq(json_num(st.out, "\"total\":{", "ignored"), 2, "%s", st.out);
    cr_assert_eq(json_num(st.out, "\"total\":{", "problems"), 0, "%s", st.out);
    char server[64];
    snprintf(server, sizeof server, "\"server\":\"127.0.0.2:%d\"", port);
    cr_assert(strstr(st.out, server), "the Firebird connection is not the one listed: %s", st.out);
    cr_assert(strstr(st.out, "\"recognised\":\"op_connect\""), "%s", st.out);
    cr_assert_geq(json_num(st.out, "\"total\":{", "round_trips"), 4, "%s", st.out);

    /* the text says what was left out */
    const char *t2[] = {"stats", file, NULL};
    fbw_run tx = fbw_run_tool(TOOL, t2, NULL, OUT_MAX);
    cr_assert(strstr(tx.out, "other TCP connections not recognised as Firebird: ignored"), "%s",
              tx.out);
    /* --port restricts: only 3050 and the given port are followed */
    const char *t3[] = {"stats", file, "--json", "--port", p.pg_port, NULL};
    fbw_run pg = fbw_run_tool(TOOL, t3, NULL, OUT_MAX);
    cr_assert_eq(json_num(pg.out, "\"total\":{", "ignored"), 0, "%s", pg.out);
    cr_assert(strstr(pg.out, "\"recognised\":\"none\""), "the PostgreSQL connection is listed: %s",
              pg.out);
    cr_assert(!strstr(pg.out, server), "%s", pg.out);
    fbw_run_free(&tu);
    fbw_run_free(&st);
    fbw_run_free(&tx);
    fbw_run_free(&pg);
    unlink(file);
    unlink(errlog);
    rmdir(tmp);
}
