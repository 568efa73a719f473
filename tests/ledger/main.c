/* SPDX-License-Identifier: MIT */
/* fbwire-test-ledger - the commit ledger: proves that the library's outcome of every transaction
 * agrees with the database after connections are reset at random (docs/faults.md).
 *
 * K threads insert numbered rows, one transaction each, through fbwire-link (tests/support/link.h)
 * with a seeded `prob=P reset` rule, in four modes taken in turn: an explicit transaction with a
 * round trip per step (start, insert, commit), the same pipelined (start + insert + commit in one
 * write), an insert in an isc_tpb_autocommit transaction, and four such inserts pipelined (four
 * transactions in one write). Every transaction is recorded as acknowledged (its commit, or its
 * autocommit insert, was answered), failed (an error reply, or the connection failed with no commit
 * outstanding) or unknown (the connection failed with a commit unanswered:
 * fbw_conn_outcome_unknown); after a fatal error the thread reconnects. Afterwards a direct
 * connection reads the table: every acknowledged row must be there (else lost), no failed one (else
 * phantom), no row never inserted; unknown ones are counted present and absent. RSS and open
 * descriptors are sampled every second and must stay flat (after the first sample, at most +8 MiB
 * and +4 descriptors at the end).
 *
 *   fbwire-test-ledger --server fb3|fb4 [--seconds N] [--threads K] [--prob P] [--seed S]
 * Exit 0 when lost = phantom = 0, at least one fault was injected and every outcome occurred
 * (acknowledged, failed or unknown: at least two kinds), 1 otherwise, 2 on bad usage/setup, 3 when
 * the server no longer answers after the run (crashed or hung: the table cannot be checked). */
#define _GNU_SOURCE
#include "link.h"
#include "servers.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { O_NONE, O_ACK, O_FAILED, O_UNKNOWN, O_COUNT };
enum { M_EXPLICIT, M_EXPLICIT_PIPE, M_AUTO, M_AUTO_PIPE, M_COUNT };
#define AUTO_PIPE_ROWS 4
static const char *const outcome_names[] = {"none", "acknowledged", "failed", "unknown"};
static const char *const mode_names[] = {"explicit", "explicit-pipelined", "autocommit",
                                         "autocommit-pipelined"};

typedef struct shared {
    char dsn[1400];
    fbw_client_opts o;
    char table[32];
    double deadline;
    int threads;
} shared;

typedef struct worker {
    pthread_t th;
    int w;
    shared *sh;
    uint8_t *out; /* outcome of row n (id = w + threads * n) */
    size_t n, cap;
    unsigned long by_mode[M_COUNT][O_COUNT];
    unsigned long reconnects, connect_failures, inconsistent, local_errors;
    char last_error[FBW_ERR_MSG_MAX + 32];
} worker;

typedef struct session {
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx *ac; /* isc_tpb_autocommit: each insert commits */
    fbw_stmt *ins;
} session;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new transaction object; out of memory ends the program (a test helper). */
static fbw_tx *tx_new(fbw_conn *c)
{
    fbw_tx *t;
    fbw_err err;
    if (fbw_tx_new(c, &t, &err) != FBW_OK) {
        fprintf(stderr, "ledger: %s\n", err.msg);
        exit(1);
    }
    return t;
}

static void session_end(session *s)
{
    fbw_stmt_free(s->ins);
    s->ins = NULL;
    fbw_tx_free(s->ac);
    s->ac = NULL;
    if (s->cl)
        fbw_client_close(s->cl); /* a failed connection closes without waiting */
    s->cl = NULL;
    s->c = NULL;
}

/* Connect through the link, start the autocommit transaction, prepare the insert. A fault here
 * touches no row: the attempt is simply repeated. */
static int session_begin(worker *wk, session *s)
{
    const char *sql_fmt = "INSERT INTO %s (ID, W) VALUES (?, ?)";
    char sql[128];
    snprintf(sql, sizeof sql, sql_fmt, wk->sh->table);
    while (now_s() < wk->sh->deadline) {
        fbw_err err;
        memset(s, 0, sizeof *s);
        if (fbw_client_connect(wk->sh->dsn, &wk->sh->o, &s->cl, &err) != FBW_OK) {
            wk->connect_failures++;
            snprintf(wk->last_error, sizeof wk->last_error, "connect: %s", err.msg);
            sleep_ms(2);
            continue;
        }
        s->c = fbw_client_conn(s->cl);
        s->ac = tx_new(s->c);
        fbw_tx_opts to;
        fbw_tx_opts_init(&to);
        to.autocommit = 1;
        int rc = fbw_tx_start(s->ac, &to);
        if (rc == FBW_OK)
            rc = fbw_stmt_new(s->c, &s->ins, &err);
        if (rc == FBW_OK)
            rc = fbw_client_wait(s->cl);
        if (rc == FBW_OK && fbw_tx_state(s->ac) == FBW_TX_ACTIVE)
            rc = fbw_stmt_prepare(s->ins, s->ac, sql, strlen(sql));
        if (rc == FBW_OK)
            rc = fbw_client_wait(s->cl);
        if (rc == FBW_OK && fbw_tx_state(s->ac) == FBW_TX_ACTIVE && fbw_stmt_prepared(s->ins))
            return FBW_OK;
        wk->connect_failures++;
        session_end(s);
        sleep_ms(2);
    }
    return FBW_E_TIMEOUT;
}

/* A new row: its index in wk->out (an index, not a pointer: the array grows). */
static size_t slot(worker *wk)
{
    if (wk->n == wk->cap) {
        size_t cap = wk->cap ? wk->cap * 2 : 1024;
        uint8_t *p = realloc(wk->out, cap);
        if (!p)
            abort();
        memset(p + wk->cap, O_NONE, cap - wk->cap);
        wk->out = p;
        wk->cap = cap;
    }
    return wk->n++;
}

static int params_for(worker *wk, session *s, long id, fbw_value v[2])
{
    char a[32], b[32];
    fbw_err err;
    const fbw_msgfmt *in = fbw_stmt_input(s->ins);
    snprintf(a, sizeof a, "%ld", id);
    snprintf(b, sizeof b, "%d", wk->w);
    if (fbw_value_from_text(&in->cols[0], a, strlen(a), &v[0], &err) != FBW_OK ||
        fbw_value_from_text(&in->cols[1], b, strlen(b), &v[1], &err) != FBW_OK) {
        snprintf(wk->last_error, sizeof wk->last_error, "parameter: %s", err.msg);
        return -1;
    }
    return 0;
}

/* The outcome of a transaction whose connection failed: what the library says. A commit that was
 * never queued cannot have happened; one that was must be reported unknown by the library. */
static int after_fatal(worker *wk, session *s, int commit_queued)
{
    int unknown = fbw_conn_outcome_unknown(s->c);
    snprintf(wk->last_error, sizeof wk->last_error, "%s", fbw_client_error(s->cl)->msg);
    if (unknown && !commit_queued)
        wk->inconsistent++; /* unknown although no commit was ever queued */
    return unknown ? O_UNKNOWN : O_FAILED;
}

static void end_tx_quietly(session *s, fbw_tx *t)
{
    if (fbw_tx_live(t)) {
        if (fbw_tx_rollback(t) == FBW_OK)
            fbw_client_wait(s->cl);
    }
}

/* One explicit transaction; pipe: start, insert and commit in one write. Returns the outcome and
 * *fatal when the connection is gone. */
static int tx_explicit(worker *wk, session *s, long id, int pipe, int *fatal)
{
    fbw_value v[2];
    if (params_for(wk, s, id, v))
        return wk->local_errors++, O_FAILED;
    fbw_tx *t = tx_new(s->c);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    fbw_exec_out out;
    memset(&out, 0, sizeof out); /* read below even when the insert was never queued */
    int commit_queued = 0, rc = fbw_tx_start(t, &to);
    if (rc == FBW_OK && !pipe)
        rc = fbw_client_wait(s->cl);
    if (rc == FBW_OK && fbw_tx_state(t) != FBW_TX_FAILED)
        rc = fbw_stmt_execute_out(s->ins, t, v, 0, &out);
    if (rc == FBW_OK && !pipe)
        rc = fbw_client_wait(s->cl);
    if (rc == FBW_OK && fbw_tx_state(t) != FBW_TX_FAILED && (pipe || out.err.code == FBW_OK)) {
        rc = fbw_tx_commit(t);
        commit_queued = rc == FBW_OK;
    }
    if (rc == FBW_OK)
        rc = fbw_client_wait(s->cl);
    if (rc && fbw_is_fatal(rc)) {
        fbw_tx_free(t);
        return *fatal = 1, after_fatal(wk, s, commit_queued);
    }
    if (rc == FBW_OK && commit_queued && fbw_tx_state(t) == FBW_TX_ENDED &&
        fbw_tx_error(t)->code == FBW_OK && out.done && out.err.code == FBW_OK) {
        fbw_tx_free(t);
        return O_ACK;
    }
    /* An error reply: the row is not committed (a failed insert is undone even if the commit ran).
     */
    snprintf(wk->last_error, sizeof wk->last_error, "%s",
             out.err.code ? out.err.msg
             : fbw_tx_error(t)->code ? fbw_tx_error(t)->msg
                          : fbw_client_error(s->cl)->msg);
    end_tx_quietly(s, t);
    fbw_tx_free(t);
    return O_FAILED;
}

/* rows inserts in the autocommit transaction, queued together (one write when rows > 1). */
static void tx_auto(worker *wk, session *s, long *ids, uint8_t *outcome, int rows, int *fatal)
{
    fbw_value v[AUTO_PIPE_ROWS][2];
    fbw_exec_out out[AUTO_PIPE_ROWS];
    memset(out, 0, sizeof out);
    int queued = 0, rc = FBW_OK;
    for (int i = 0; i < rows && rc == FBW_OK; i++) {
        if (params_for(wk, s, ids[i], v[i])) {
            wk->local_errors++;
            break;
        }
        rc = fbw_stmt_execute_out(s->ins, s->ac, v[i], 0, &out[i]);
        queued += rc == FBW_OK;
    }
    if (rc == FBW_OK)
        rc = fbw_client_wait(s->cl);
    int lib = O_NONE;
    if (rc && fbw_is_fatal(rc)) {
        *fatal = 1;
        lib = after_fatal(wk, s, queued > 0);
    }
    for (int i = 0; i < rows; i++) {
        if (i >= queued)
            outcome[i] = O_FAILED; /* never sent */
        else if (out[i].done)
            outcome[i] = out[i].err.code == FBW_OK ? O_ACK : O_FAILED;
        else
            outcome[i] = lib == O_NONE ? O_FAILED : (uint8_t)lib;
        if (i < queued && out[i].done && out[i].err.code)
            snprintf(wk->last_error, sizeof wk->last_error, "%s", out[i].err.msg);
    }
}

static void *run_worker(void *arg)
{
    worker *wk = arg;
    session s;
    memset(&s, 0, sizeof s);
    if (session_begin(wk, &s))
        return NULL;
    for (unsigned long step = 0; now_s() < wk->sh->deadline; step++) {
        int mode = (int)(step % M_COUNT), fatal = 0;
        int rows = mode == M_AUTO_PIPE ? AUTO_PIPE_ROWS : 1;
        long ids[AUTO_PIPE_ROWS];
        uint8_t outc[AUTO_PIPE_ROWS] = {O_NONE};
        size_t at[AUTO_PIPE_ROWS];
        for (int i = 0; i < rows; i++) {
            ids[i] = wk->w + (long)wk->sh->threads * (long)wk->n;
            at[i] = slot(wk);
        }
        if (mode == M_EXPLICIT || mode == M_EXPLICIT_PIPE)
            outc[0] = (uint8_t)tx_explicit(wk, &s, ids[0], mode == M_EXPLICIT_PIPE, &fatal);
        else
            tx_auto(wk, &s, ids, outc, rows, &fatal);
        for (int i = 0; i < rows; i++)
            wk->by_mode[mode][wk->out[at[i]] = outc[i]]++;
        if (fatal) {
            session_end(&s);
            wk->reconnects++;
            if (session_begin(wk, &s))
                return NULL;
        }
    }
    session_end(&s);
    return NULL;
}

/* ---- setup and check over a direct connection ---- */

static int direct_ddl(fbw_client *cl, const char *sql, fbw_err *err)
{
    fbw_tx *t = tx_new(fbw_client_conn(cl));
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    fbw_exec_result res;
    int rc = fbw_tx_start(t, &to);
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc == FBW_OK)
        rc = fbw_exec_immediate(fbw_client_conn(cl), t, sql, strlen(sql), &res);
    if (rc == FBW_OK)
        rc = fbw_tx_commit(t);
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc)
        *err = *fbw_client_error(cl);
    else if (res.err.code)
        *err = res.err, rc = res.err.code;
    else if (fbw_tx_error(t)->code)
        *err = *fbw_tx_error(t), rc = err->code;
    fbw_tx_free(t);
    return rc;
}

/* Every ID in the table into present[] (sized n); returns FBW_OK or an error (err). Rows with an
 * ID out of range count in *stray. */
static int read_ids(fbw_client *cl, const char *table, uint8_t *present, size_t n,
                    unsigned long *stray, fbw_err *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT ID FROM %s", table);
    fbw_tx *t = tx_new(fbw_client_conn(cl));
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    to.read_only = 1;
    fbw_stmt *st = NULL;
    int rc = fbw_tx_start(t, &to);
    if (rc == FBW_OK)
        rc = fbw_stmt_new(fbw_client_conn(cl), &st, err);
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc == FBW_OK)
        rc = fbw_stmt_prepare(st, t, sql, strlen(sql));
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc == FBW_OK && fbw_stmt_prepared(st))
        rc = fbw_stmt_execute(st, t, NULL, 0);
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    fbw_buf text;
    fbw_buf_init(&text);
    while (rc == FBW_OK && fbw_stmt_error(st)->code == FBW_OK) {
        for (size_t r = 0; r < fbw_stmt_row_count(st); r++) {
            fbw_value v;
            fbw_buf_reset(&text);
            rc = fbw_stmt_row(st, r, &v, err);
            if (rc == FBW_OK)
                rc = fbw_value_to_text(&v, &fbw_stmt_output(st)->cols[0], NULL, &text, err);
            if (rc == FBW_OK)
                rc = fbw_buf_append(&text, "", 1);
            if (rc)
                break;
            long id = strtol((const char *)text.data + text.start, NULL, 10);
            if (id >= 0 && (size_t)id < n)
                present[id]++;
            else
                (*stray)++;
        }
        fbw_stmt_clear_rows(st);
        if (rc || fbw_stmt_eof(st))
            break;
        rc = fbw_stmt_fetch(st);
        if (rc == FBW_OK)
            rc = fbw_client_wait(cl);
    }
    fbw_buf_free(&text);
    if (rc == FBW_OK && st && fbw_stmt_error(st)->code) {
        *err = *fbw_stmt_error(st);
        rc = err->code;
    } else if (rc && err->code == FBW_OK) {
        *err = *fbw_client_error(cl);
    }
    fbw_stmt_free(st);
    if (fbw_tx_state(t) == FBW_TX_ACTIVE && fbw_tx_commit(t) == FBW_OK)
        fbw_client_wait(cl);
    fbw_tx_free(t);
    return rc;
}

/* ---- resources ---- */

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory's own descriptor */
}

/* ---- main ---- */

static int usage(void)
{
    fprintf(stderr, "usage: fbwire-test-ledger --server fb3|fb4 [--seconds N] [--threads K] "
                    "[--prob P] [--seed S]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *server = NULL, *prob = "0.02", *seed = "15";
    double seconds = 10;
    int threads = 4;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        if (!strcmp(a, "--server"))
            server = v;
        else if (!strcmp(a, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(a, "--threads"))
            threads = atoi(v);
        else if (!strcmp(a, "--prob"))
            prob = v;
        else if (!strcmp(a, "--seed"))
            seed = v;
        else
            return usage();
    }
    if (!server || (strcmp(server, "fb3") && strcmp(server, "fb4")) || seconds <= 0 ||
        seconds > 86400 || threads < 1 || threads > 64)
        return usage();
    /* The whole run is bounded: a hang anywhere ends the process (ctest reports the signal). */
    alarm((unsigned)seconds + 120);
    setvbuf(stdout, NULL, _IOLBF, 0); /* a soak's minute lines show as they come */
    signal(SIGPIPE, SIG_IGN);

    fbw_servers srv;
    fbw_err err;
    if (fbw_servers_load(&srv, &err)) {
        fprintf(stderr, "ledger: %s\n", err.msg);
        return 2;
    }
    fbw_server_id id = !strcmp(server, "fb3") ? FBW_SRV_FB3 : FBW_SRV_FB4;
    const fbw_server *S = &srv.srv[id];
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.threads = threads;
    fbw_servers_client_opts(&srv, &sh.o);
    snprintf(sh.table, sizeof sh.table, "FBW_LEDGER_%s_%d", server, (int)getpid());
    for (char *p = sh.table; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);

    char dsn[1400], sql[160];
    fbw_servers_dsn(&srv, id, dsn, sizeof dsn);
    fbw_client *direct = NULL;
    if (fbw_client_connect(dsn, &sh.o, &direct, &err)) {
        fprintf(stderr, "ledger: direct connect to %s: %s\n", server, err.msg);
        return 2;
    }
    snprintf(sql, sizeof sql, "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, W INTEGER)",
             sh.table);
    if (direct_ddl(direct, sql, &err)) {
        fprintf(stderr, "ledger: %s: %s\n", sql, err.msg);
        return 2;
    }
    fbw_client_close(direct);

    char fault[64];
    snprintf(fault, sizeof fault, "prob=%s reset", prob);
    const char *opts[] = {"--fault", fault, "--seed", seed, "--quiet", NULL};
    fbw_link link;
    if (fbw_link_start(&link, S->host, S->port, opts, &err)) {
        fprintf(stderr, "ledger: %s\n", err.msg);
        return 2;
    }
    snprintf(sh.dsn, sizeof sh.dsn, "127.0.0.1/%d:%s", link.port, S->db);

    printf("ledger on %s: %d threads, %.0f s, link fault '%s' seed %s, table %s\n", server, threads,
           seconds, fault, seed, sh.table);
    worker *wk = calloc((size_t)threads, sizeof *wk);
    long rss0 = rss_kib(), rss_first = -1, rss_max = 0, rss_last = 0;
    int fd0 = open_fds(), fd_first = -1, fd_max = 0, fd_last = 0, samples = 0;
    double t0 = now_s();
    sh.deadline = t0 + seconds;
    for (int i = 0; i < threads; i++) {
        wk[i].w = i;
        wk[i].sh = &sh;
        pthread_create(&wk[i].th, NULL, run_worker, &wk[i]);
    }
    /* Sample memory and descriptors once a second while the threads run; the first sample is
     * taken after a second, when every thread has its connection and buffers. */
    while (now_s() < sh.deadline) {
        sleep_ms(1000);
        long r = rss_kib();
        int f = open_fds();
        if (rss_first < 0) {
            rss_first = r;
            fd_first = f;
        }
        rss_max = r > rss_max ? r : rss_max;
        fd_max = f > fd_max ? f : fd_max;
        rss_last = r;
        fd_last = f;
        if (seconds >= 60 && ++samples % 60 == 0)
            printf("  t=%.0f s: RSS %ld KiB, %d fds\n", now_s() - t0, r, f);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(wk[i].th, NULL);
    double elapsed = now_s() - t0;
    int link_rc = fbw_link_stop(&link);
    int faults = fbw_link_faults(&link, NULL, 0);
    int fd_end = open_fds();

    /* Check the table through a direct connection. */
    size_t nid = 0;
    for (int i = 0; i < threads; i++)
        if ((size_t)threads * wk[i].n > nid)
            nid = (size_t)threads * wk[i].n;
    uint8_t *present = calloc(nid + 1, 1);
    unsigned long stray = 0;
    if (fbw_client_connect(dsn, &sh.o, &direct, &err)) {
        int gone = err.code == FBW_E_IO || err.code == FBW_E_TIMEOUT || err.code == FBW_E_EOF;
        fprintf(stderr, "ledger: reading %s: %s\n", sh.table, err.msg);
        if (gone) /* the ledger cannot be checked: tests/integ/ledger.sh tells this case apart */
            fprintf(stderr, "ledger: %s stopped answering after the run: the server crashed or hung "
                            "(a client's reset connection must never do that)\n", server);
        return gone ? 3 : 1;
    }
    if (read_ids(direct, sh.table, present, nid + 1, &stray, &err)) {
        fprintf(stderr, "ledger: reading %s: %s\n", sh.table, err.msg);
        return 1;
    }
    unsigned long count[O_COUNT] = {0}, lost = 0, phantom = 0, unk_present = 0, unk_absent = 0;
    unsigned long reconnects = 0, connect_failures = 0, inconsistent = 0, local = 0;
    for (int i = 0; i < threads; i++) {
        for (size_t n = 0; n < wk[i].n; n++) {
            size_t rid = (size_t)i + (size_t)threads * n;
            int o = wk[i].out[n];
            count[o]++;
            if (o == O_ACK && !present[rid])
                lost++;
            if ((o == O_FAILED || o == O_NONE) && present[rid])
                phantom++;
            if (o == O_UNKNOWN)
                present[rid] ? unk_present++ : unk_absent++;
            present[rid] = 0;
        }
        reconnects += wk[i].reconnects;
        connect_failures += wk[i].connect_failures;
        inconsistent += wk[i].inconsistent;
        local += wk[i].local_errors;
    }
    for (size_t k = 0; k <= nid; k++)
        stray += present[k] != 0; /* a row nobody inserted */
    phantom += stray;
    snprintf(sql, sizeof sql, "DROP TABLE %s", sh.table);
    if (direct_ddl(direct, sql, &err))
        fprintf(stderr, "ledger: %s: %s\n", sql, err.msg);
    fbw_client_close(direct);

    unsigned long total = count[O_ACK] + count[O_FAILED] + count[O_UNKNOWN];
    printf("faults injected: %d (link exit %d)\n", faults, link_rc);
    printf("transactions: %lu in %.1f s (%.0f/s): acknowledged %lu, failed %lu, unknown %lu "
           "(present %lu, absent %lu)\n",
           total, elapsed, (double)total / elapsed, count[O_ACK], count[O_FAILED], count[O_UNKNOWN],
           unk_present, unk_absent);
    for (int m = 0; m < M_COUNT; m++) {
        unsigned long a = 0, f = 0, u = 0;
        for (int i = 0; i < threads; i++) {
            a += wk[i].by_mode[m][O_ACK];
            f += wk[i].by_mode[m][O_FAILED];
            u += wk[i].by_mode[m][O_UNKNOWN];
        }
        printf("  %-21s acknowledged %lu, failed %lu, unknown %lu\n", mode_names[m], a, f, u);
    }
    printf("reconnects: %lu, connect attempts that failed: %lu\n", reconnects, connect_failures);
    printf("lost = %lu, phantom = %lu (rows nobody inserted: %lu)\n", lost, phantom, stray);
    printf("RSS KiB: start %ld, first sample %ld, max %ld, last %ld; fds: start %d, first %d, "
           "max %d, last %d, after the run %d\n",
           rss0, rss_first, rss_max, rss_last, fd0, fd_first, fd_max, fd_last, fd_end);
    for (int i = 0; i < threads; i++)
        if (wk[i].last_error[0]) {
            printf("a last error (thread %d): %s\n", i, wk[i].last_error);
            break;
        }

    int ok = 1;
    if (lost || phantom)
        ok = 0, printf("FAIL: lost %lu, phantom %lu\n", lost, phantom);
    if (count[O_NONE])
        ok = 0, printf("FAIL: %lu rows with no outcome recorded\n", count[O_NONE]);
    if (inconsistent || local)
        ok = 0, printf("FAIL: %lu unknown outcomes with no commit queued, %lu local errors\n",
                       inconsistent, local);
    if (faults < 1 || count[O_ACK] == 0 || count[O_FAILED] + count[O_UNKNOWN] == 0)
        ok = 0, printf("FAIL: the run did not exercise faults (faults %d, outcomes %lu/%lu/%lu)\n",
                       faults, count[O_ACK], count[O_FAILED], count[O_UNKNOWN]);
    if (fd_end > fd0 + 1 || (rss_first > 0 && rss_last > rss_first + 8192) ||
        (fd_first >= 0 && fd_last > fd_first + 4))
        ok = 0, printf("FAIL: resources grew (RSS %ld -> %ld KiB, fds %d -> %d, end %d vs %d)\n",
                       rss_first, rss_last, fd_first, fd_last, fd_end, fd0);
    fbw_link_cleanup(&link);
    for (int i = 0; i < threads; i++)
        free(wk[i].out);
    free(wk);
    free(present);
    printf("%s\n", ok ? "PASS" : "FAIL");
    (void)outcome_names;
    return ok ? 0 : 1;
}
