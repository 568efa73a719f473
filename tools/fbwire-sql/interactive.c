/* SPDX-License-Identifier: MIT */
/* interactive.c - the terminal loop of fbwire-sql (interactive.h).
 *
 * Ctrl-C: SIGINT is blocked in every thread and a helper thread takes it with sigwait, so the
 * cancel runs in an ordinary thread (fbw_client_cancel takes a lock: not for a signal handler).
 * While a statement runs, it asks the server to cancel it; a statement between two waits (after
 * its prepare, before its execute) is retried for up to a second until a wait takes the cancel.
 * At the prompt Ctrl-C does nothing: the line stays, and EXIT, QUIT or Ctrl-D leave. */
#include "interactive.h"

#include "commands.h"

#include <editline/readline.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_MAX 1000

static struct {
    pthread_mutex_t mu;
    fbw_client *cl; /* set while a statement runs */
} g_run = {PTHREAD_MUTEX_INITIALIZER, NULL};

static void set_running(fbw_client *cl)
{
    pthread_mutex_lock(&g_run.mu);
    g_run.cl = cl;
    pthread_mutex_unlock(&g_run.mu);
}

/* One Ctrl-C: cancel what runs now; FBW_E_USAGE means it is between two waits, so try again. */
static void cancel_running(void)
{
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&g_run.mu);
        int rc = g_run.cl ? fbw_client_cancel(g_run.cl) : FBW_OK;
        pthread_mutex_unlock(&g_run.mu);
        if (rc != FBW_E_USAGE)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void *sigint_thread(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) == 0 && sig == SIGINT)
            cancel_running();
    }
    return NULL;
}

static void start_sigint_thread(void)
{
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by the thread */
    pthread_t th;
    if (pthread_create(&th, NULL, sigint_thread, &set) == 0)
        pthread_detach(th);
    else
        fprintf(stderr, "fbwire-sql: cannot start the Ctrl-C thread: Ctrl-C will not cancel\n");
}

static char *history_path(void)
{
    const char *p = getenv("FBWIRE_SQL_HISTORY");
    if (p)
        return p[0] ? strdup(p) : NULL;
    const char *home = getenv("HOME");
    if (!home || !home[0])
        return NULL;
    size_t n = strlen(home) + sizeof "/.fbwire_sql_history";
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/.fbwire_sql_history", home);
    return s;
}

static int blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
            return 0;
    return 1;
}

/* Run the complete statements of pend; keep the unfinished rest in it. Returns -1 to go on, else
 * how the session ends. */
static int run_complete(sqltool_session *se, sqltool_split *sp, fbw_buf *pend)
{
    sqltool_split_feed(sp, (const char *)pend->data, pend->len);
    int end = -1;
    while (end < 0) {
        sqltool_split_stmt st;
        fbw_err err;
        fbw_err_clear(&err);
        if (sqltool_split_next(sp, &st, &err) != FBW_OK) {
            sqltool_session_fail(se, &err, sp->line); /* a bad SET TERM */
            continue;
        }
        if (!st.sql)
            break;
        int rc;
        set_running(sqltool_session_client(se));
        int cmd = sqltool_cmd_run(se, st.sql, st.len, st.line, &rc);
        if (cmd == SQLTOOL_CMD_SQL)
            rc = sqltool_session_exec(se, st.sql, st.len, st.line);
        set_running(NULL);
        if (cmd == SQLTOOL_CMD_EXIT)
            end = SQLTOOL_IA_END_COMMIT;
        else if (cmd == SQLTOOL_CMD_QUIT)
            end = SQLTOOL_IA_END_ROLLBACK;
        else if (fbw_is_fatal(rc))
            end = SQLTOOL_IA_FATAL;
    }
    size_t rest = sp->rest <= pend->len ? sp->rest : pend->len;
    memmove(pend->data, pend->data + rest, pend->len - rest);
    pend->len -= rest;
    if (blank((const char *)pend->data, pend->len))
        pend->len = 0;
    return end;
}

int sqltool_interactive_run(sqltool_session *se, sqltool_split *sp)
{
    char *hist = history_path();
    if (!isatty(STDOUT_FILENO))
        rl_outstream = stderr; /* rows to the file or pipe, prompts and echo to the terminal */
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist)
        read_history(hist);
    start_sigint_thread();
    sqltool_split_hold(sp, 1);
    fbw_buf pend;
    fbw_buf_init(&pend);
    int end = -1;
    while (end < 0) {
        char *line = readline(pend.len ? "CON> " : "SQL> ");
        if (!line) { /* Ctrl-D or end of input: like EXIT */
            fputc('\n', stdout);
            if (pend.len)
                fprintf(stderr, "fbwire-sql: end of input inside a statement (no \"%s\" after it): "
                                "not run\n", sp->term);
            end = SQLTOOL_IA_END_COMMIT;
            break;
        }
        size_t n = strlen(line);
        if (!blank(line, n))
            add_history(line);
        if (pend.len == 0 && line[0] == '\\') {
            fprintf(stderr, "fbwire-sql: unknown command %s (fbwire-sql has isql's commands: SHOW "
                            "TABLES; SHOW TABLE name; SHOW DATABASE; SET STATS ON; EXIT; QUIT;)\n",
                    line);
            free(line);
            continue;
        }
        int rc = fbw_buf_append(&pend, line, n);
        if (rc == FBW_OK)
            rc = fbw_buf_append(&pend, "\n", 1);
        free(line);
        if (rc) {
            fprintf(stderr, "fbwire-sql: out of memory\n");
            end = SQLTOOL_IA_FATAL;
            break;
        }
        end = run_complete(se, sp, &pend);
    }
    if (hist && write_history(hist) != 0)
        fprintf(stderr, "fbwire-sql: cannot write the history to %s\n", hist);
    free(hist);
    fbw_buf_free(&pend);
    return end;
}
