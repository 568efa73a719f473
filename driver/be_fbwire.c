/* SPDX-License-Identifier: MIT */
/* be_fbwire.c - the native backend: fbwire's own protocol client behind the backend vtable.
 *
 * Where fbclient waits after every request, this backend queues what belongs together and waits
 * once (docs/design.md, Pipelining). Statements outside BEGIN (--fbwire-autocommit):
 *   - shared (default): one read-committed transaction with isc_tpb_autocommit, so the engine
 *     commits (retaining) every statement that changed something, durably, before its reply;
 *     op_execute + op_info_sql(records) go out together, one round trip; the transaction is
 *     restarted every N statements or T ms (it would hold back garbage collection), the restart
 *     riding along with the next statement; DDL runs in a transaction of its own;
 *   - pipelined: a write gets its own transaction: op_transaction + op_execute +
 *     op_info_sql(records) + op_commit in one write, one round trip; a SELECT runs in a
 *     long-lived read-only read-committed transaction restarted like the shared one;
 *   - BEGIN queues op_transaction, which goes out with the first statement of the transaction;
 *   - a multi-row INSERT goes through the batch API on protocol 16+ (Firebird 4+: create, rows
 *     and execute in one round trip), else as one pipelined run of single-row executes.
 * --fbwire-pipeline=transaction: inside BEGIN ... COMMIT, executions of prepared statements are
 * queued without waiting (be_fbwire_pipe.c, on the library's pipeline mode); COMMIT of a
 * transaction that wrote nothing rides along with them (one round trip), a writing transaction
 * is committed only after every reply was checked (two round trips).
 * --fbwire-autocommit=per-statement and =shared behave like the fbclient backend's modes so that
 * the two clients can be compared request for request.
 *
 * This file is the backend's entry: the vtable sysbench's driver (sbdrv.c) reaches through
 * backend.h. The parts below it form layers; each calls only layers under it:
 *   be_fbwire.c       entry: the vtable, connect/create/disconnect, statistics
 *   be_fbwire_bulk.c  multi-row INSERT: pipelined single-row executes, or the batch API
 *   be_fbwire_exec.c  executions: where a statement runs (explicit, pipelined, autocommit
 *                     modes), reading a pipelined result, SQL text and its unprepared fast path
 *   be_fbwire_stmt.c  statements: prepare, binding, execution in a planned transaction, results
 *   be_fbwire_tx.c    transactions: BEGIN/COMMIT/ROLLBACK, ending one, the transaction a prepare
 *                     uses, the shared transaction and its restart
 *   be_fbwire_pipe.c  pipelined transactions on the library's pipeline mode (wire/pipe.h)
 *   be_fbwire_conn.c  the core: the attachment and statement records, attach/detach, errors and
 *                     waits
 * Each has a header of the same name that is its contract. */
#include "be_fbwire_bulk.h"
#include "be_fbwire_conn.h"
#include "be_fbwire_exec.h"
#include "be_fbwire_stmt.h"
#include "be_fbwire_tx.h"

static int fbwire_global_init(const sbdrv_be_conf *conf, fbw_err *err)
{
    (void)conf, (void)err;
    return FBW_OK;
}

static int fbwire_connect(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err)
{
    return be_fbwire_attach(conf, 0, out, err);
}

static int fbwire_create(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err)
{
    return be_fbwire_attach(conf, 1, out, err);
}

static int fbwire_stats(sbdrv_be_conn *c, fbw_stats *out, fbw_err *err)
{
    (void)err;
    *out = *fbw_conn_stats(c->conn);
    return FBW_OK;
}

static const fbw_stats *fbwire_stats_ref(sbdrv_be_conn *c) { return fbw_conn_stats(c->conn); }

/* The library follows every request that may commit (fbw_conn_outcome_unknown). */
static int fbwire_outcome_unknown(sbdrv_be_conn *c)
{
    return c && c->conn ? fbw_conn_outcome_unknown(c->conn) : -1;
}

const sbdrv_backend sbdrv_backend_fbwire = {
    .name = "fbwire",
    .global_init = fbwire_global_init,
    .connect = fbwire_connect,
    .create = fbwire_create,
    .disconnect = be_fbwire_detach,
    .begin = be_fbwire_begin,
    .commit = be_fbwire_commit,
    .rollback = be_fbwire_rollback,
    .prepare = be_fbwire_prepare,
    .param_count = be_fbwire_param_count,
    .execute = be_fbwire_execute,
    .close = be_fbwire_close,
    .exec = be_fbwire_exec,
    .bulk_insert = be_fbwire_bulk_insert,
    .fetch_rows = be_fbwire_fetch_rows,
    .stats = fbwire_stats,
    .stats_ref = fbwire_stats_ref,
    .outcome_unknown = fbwire_outcome_unknown,
};
