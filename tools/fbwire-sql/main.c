/* fbwire-sql - command-line client over fbwire. This first form connects, attaches, reports what was
 * negotiated and what it cost on the wire (--info), and detaches. The password is never printed. */
#include "fbwire.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbwire-sql --info [options] DATABASE\n"
            "  DATABASE              host[/port]:path, [ipv6]/port:path, inet://host:port/path or alias\n"
            "  --info                connect, attach, print key: value lines, detach\n"
            "  --user U              login (default $ISC_USER)\n"
            "  --password P          password (default $ISC_PASSWORD)\n"
            "  --auth LIST           auth plugins, default \"Srp256,Srp\" (Legacy_Auth only if listed)\n"
            "  --protocol-min N      lowest protocol offered (10..20, default 10)\n"
            "  --protocol-max N      highest protocol offered (10..20, default 19)\n"
            "  --no-lazy             do not offer lazy send (deferred replies)\n"
            "  --wire-crypt MODE     required | enabled | disabled (default enabled)\n"
            "  --wire-crypt-plugins LIST  default \"ChaCha64,ChaCha,Arc4\"\n"
            "  --compress            ask for zlib wire compression\n"
            "  --create              create the database (with --page-size N)\n"
            "  --connect-timeout S   seconds for TCP connect and login (default 30)\n"
            "  --timeout S           seconds to wait for any later reply (default 60)\n");
}

static int parse_int(const char *s, const char *what, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "fbwire-sql: %s must be a number from %d to %d, got \"%s\"\n", what, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static void print_error(const char *stage, const fbw_err *e)
{
    fprintf(stderr, "fbwire-sql: %s failed: %s\n", stage, e->msg[0] ? e->msg : fbw_rc_name(e->code));
    if (e->sqlstate[0])
        fprintf(stderr, "SQLSTATE = %s\n", e->sqlstate);
    if (e->ngds > 0)
        fprintf(stderr, "gds code = %u\n", e->gds[0]);
}

static void print_info(fbw_client *cl)
{
    fbw_conn *c = fbw_client_conn(cl);
    const fbw_conn_info *i = fbw_conn_get_info(c);
    const fbw_stats *s = fbw_conn_stats(c);
    printf("server_version: %s\n", i->server_version);
    printf("protocol: %d\n", i->protocol);
    printf("lazy_send: %s\n", i->lazy ? "yes" : "no");
    printf("auth_plugin: %s\n", i->auth_plugin[0] ? i->auth_plugin : "none");
    printf("wire_crypt: %s\n", i->wire_crypt);
    printf("compression: %s\n", i->compressed ? "zlib" : "none");
    printf("round_trips: %llu\n", (unsigned long long)s->round_trips);
    printf("packets_sent: %llu\n", (unsigned long long)s->packets_sent);
    printf("packets_received: %llu\n", (unsigned long long)s->packets_received);
    printf("bytes_sent: %llu\n", (unsigned long long)s->bytes_sent);
    printf("bytes_received: %llu\n", (unsigned long long)s->bytes_received);
    printf("wire_bytes_sent: %llu\n", (unsigned long long)s->wire_bytes_sent);
    printf("wire_bytes_received: %llu\n", (unsigned long long)s->wire_bytes_received);
    printf("wait_ms: %.3f\n", (double)s->wait_ns / 1e6);
}

enum { O_USER = 256, O_PASSWORD, O_AUTH, O_PMIN, O_PMAX, O_NOLAZY, O_CRYPT, O_CRYPTLIST, O_COMPRESS,
       O_CREATE, O_PAGESIZE, O_CTIMEOUT, O_TIMEOUT, O_INFO, O_HELP };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"user", required_argument, 0, O_USER}, {"password", required_argument, 0, O_PASSWORD},
        {"auth", required_argument, 0, O_AUTH}, {"protocol-min", required_argument, 0, O_PMIN},
        {"protocol-max", required_argument, 0, O_PMAX}, {"no-lazy", no_argument, 0, O_NOLAZY},
        {"wire-crypt", required_argument, 0, O_CRYPT},
        {"wire-crypt-plugins", required_argument, 0, O_CRYPTLIST},
        {"compress", no_argument, 0, O_COMPRESS}, {"create", no_argument, 0, O_CREATE},
        {"page-size", required_argument, 0, O_PAGESIZE},
        {"connect-timeout", required_argument, 0, O_CTIMEOUT},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"info", no_argument, 0, O_INFO},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    int info = 0, v;
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (ch) {
        case O_USER: o.conn.user = optarg; break;
        case O_PASSWORD: o.conn.password = optarg; break;
        case O_AUTH: o.conn.auth_list = optarg; break;
        case O_PMIN: if (parse_int(optarg, "--protocol-min", 10, 20, &o.conn.protocol_min)) return 2; break;
        case O_PMAX: if (parse_int(optarg, "--protocol-max", 10, 20, &o.conn.protocol_max)) return 2; break;
        case O_NOLAZY: o.conn.lazy = 0; break;
        case O_CRYPT:
            if (!strcmp(optarg, "required")) o.conn.wire_crypt = FBW_WIRE_CRYPT_REQUIRED;
            else if (!strcmp(optarg, "enabled")) o.conn.wire_crypt = FBW_WIRE_CRYPT_ENABLED;
            else if (!strcmp(optarg, "disabled")) o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
            else {
                fprintf(stderr, "fbwire-sql: --wire-crypt takes required, enabled or disabled\n");
                return 2;
            }
            break;
        case O_CRYPTLIST: o.conn.crypt_list = optarg; break;
        case O_COMPRESS: o.conn.compress = 1; break;
        case O_CREATE: o.conn.create = 1; break;
        case O_PAGESIZE: if (parse_int(optarg, "--page-size", 1024, 65536, &o.conn.page_size)) return 2; break;
        case O_CTIMEOUT: if (parse_int(optarg, "--connect-timeout", 1, 86400, &v)) return 2; o.connect_timeout_ms = v * 1000; break;
        case O_TIMEOUT: if (parse_int(optarg, "--timeout", 1, 86400, &v)) return 2; o.timeout_ms = v * 1000; break;
        case O_INFO: info = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc - 1 || !info) {
        usage(stderr);
        return 2;
    }
    if (o.conn.protocol_min > o.conn.protocol_max)
        o.conn.protocol_min = o.conn.protocol_max;
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(argv[optind], &o, &cl, &err) != FBW_OK) {
        print_error("connect", &err);
        return 1;
    }
    fbw_conn *c = fbw_client_conn(cl);
    if (fbw_conn_query_version(c) != FBW_OK || fbw_client_wait(cl) != FBW_OK) {
        print_error("info", fbw_client_error(cl));
        fbw_client_abort(cl);
        return 1;
    }
    /* Report the cost of the whole session: detach first, so its trip is counted too. */
    fbw_stats total;
    if (fbw_conn_detach(c) == FBW_OK && fbw_client_wait(cl) == FBW_OK) {
        const uint8_t *p;
        size_t n;
        fbw_conn_pending(c, &p, &n); /* op_disconnect is queued: count it before printing */
        total = *fbw_conn_stats(c);
    } else {
        print_error("detach", fbw_client_error(cl));
        fbw_client_abort(cl);
        return 1;
    }
    (void)total;
    print_info(cl);
    fbw_client_close(cl);
    return 0;
}
