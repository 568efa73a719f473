/* be_fbwire.c - placeholder for the native fbwire protocol backend.
 *
 * The `fbwire` sysbench driver is registered and parses its options today; this backend refuses
 * to connect until the protocol client (wire/) is plugged in here behind the same vtable as
 * be_fbclient.c (see backend.h for the contract every entry must honour). */
#include "backend.h"

static int fbwire_global_init(fbw_err *err)
{
    (void)err;
    return FBW_OK;
}

static int fbwire_connect(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    (void)conf;
    *out = NULL;
    return fbw_err_set(err, FBW_E_UNSUPPORTED,
                       "fbwire: the native protocol backend is not built into this plug-in yet "
                       "(use --db-driver=fbclient)");
}

static void fbwire_disconnect(fbw_be_conn *c)
{
    (void)c;
}

static int fbwire_unsupported(fbw_err *err)
{
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "fbwire: backend not built in");
}

static int fbwire_txn(fbw_be_conn *c, fbw_err *err)
{
    (void)c;
    return fbwire_unsupported(err);
}

static int fbwire_prepare(fbw_be_conn *c, const char *sql, size_t len, fbw_be_stmt **out,
                          fbw_err *err)
{
    (void)c;
    (void)sql;
    (void)len;
    *out = NULL;
    return fbwire_unsupported(err);
}

static unsigned fbwire_param_count(const fbw_be_stmt *s)
{
    (void)s;
    return 0;
}

static int fbwire_execute(fbw_be_stmt *s, const fbw_val *p, size_t n, fbw_be_result *res,
                          fbw_err *err)
{
    (void)s;
    (void)p;
    (void)n;
    (void)res;
    return fbwire_unsupported(err);
}

static void fbwire_close(fbw_be_stmt *s)
{
    (void)s;
}

static int fbwire_exec(fbw_be_conn *c, const char *sql, size_t len, fbw_be_result *res,
                       fbw_err *err)
{
    (void)c;
    (void)sql;
    (void)len;
    (void)res;
    return fbwire_unsupported(err);
}

static int fbwire_bulk(fbw_be_conn *c, const fbw_bulk_insert *b, fbw_be_result *res,
                       fbw_err *err)
{
    (void)c;
    (void)b;
    (void)res;
    return fbwire_unsupported(err);
}

const fbw_backend fbw_backend_fbwire = {
    .name = "fbwire",
    .global_init = fbwire_global_init,
    .connect = fbwire_connect,
    .disconnect = fbwire_disconnect,
    .begin = fbwire_txn,
    .commit = fbwire_txn,
    .rollback = fbwire_txn,
    .prepare = fbwire_prepare,
    .param_count = fbwire_param_count,
    .execute = fbwire_execute,
    .close = fbwire_close,
    .exec = fbwire_exec,
    .bulk_insert = fbwire_bulk,
    .stats = NULL,
};
