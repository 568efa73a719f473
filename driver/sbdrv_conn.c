/* SPDX-License-Identifier: MIT */
/* sbdrv_conn.c - what the drivers' entry (sbdrv.c), options (sbdrv_opts.c) and statement ops
 * (sbdrv_stmt.c) share: the host table of sysbench's functions, releasing a statement, and
 * reattaching after the attachment was lost. The bottom of sbdrv*.c: it calls none of them. */
#include "sbdrv_int.h"

#include <stdlib.h>
#include <time.h>

#define RECONNECT_SECONDS 30

sbdrv_sb_host sbdrv_host;

void sbdrv_stmt_release(sbdrv_conn *sc, sbdrv_stmt *ss)
{
    if (ss->bs)
        sc->d->be->close(ss->bs);
    free(ss->sql);
    if (ss->text != ss->sql)
        free(ss->text);
    free(ss->vals);
    free(ss->scratch);
    free(ss);
}

/* Drop the attachment and attach again, retrying for RECONNECT_SECONDS unless sysbench is
 * stopping. Statements are re-prepared lazily on their next execute. */
int sbdrv_reattach(sbdrv_conn *sc)
{
    for (sbdrv_stmt *ss = sc->stmts; ss; ss = ss->next) {
        if (ss->bs)
            sc->d->be->close(ss->bs);
        ss->bs = NULL;
    }
    sbdrv_sbrep_detach(&sc->rep, 0);
    sc->d->be->disconnect(sc->bc);
    sc->bc = NULL;
    sc->in_txn = 0;
    struct timespec pause = {0, 10 * 1000 * 1000}, t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Bounded by time, not attempts: against a stalled server each attempt itself lasts up to
     * the connect timeout. */
    for (now = t0; now.tv_sec - t0.tv_sec < RECONNECT_SECONDS && !*sbdrv_host.sb_error;
         clock_gettime(CLOCK_MONOTONIC, &now)) {
        fbw_err_clear(&sc->err);
        sbdrv_sbrep_connect_begin(sc->d->rep);
        int rc = sc->d->be->connect(&sc->d->conf, &sc->bc, &sc->err);
        sbdrv_sbrep_connect_end(sc->d->rep, &sc->rep, sc->bc, rc);
        if (rc == FBW_OK)
            return 0;
        nanosleep(&pause, NULL);
    }
    sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s: reconnect to '%s' failed: %s", sc->d->prefix,
                  sc->d->conf.db, sc->err.msg);
    return -1;
}
