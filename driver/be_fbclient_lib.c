/* SPDX-License-Identifier: MIT */
/* be_fbclient_lib.c - the baseline backend's access to libfbclient: the library dlopen()ed on
 * first use (so it is no build or link dependency and the plug-in still loads where it is
 * missing), its entry points resolved into be_fbclient_lib once under pthread_once (the backend's
 * only process-wide state), and status vectors turned into fbw_err. */
#define _GNU_SOURCE
#include "be_fbclient.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

fbclient_lib be_fbclient_lib = {PTHREAD_ONCE_INIT, FBW_E_UNSUPPORTED, "", {0}};

static void *sym(void *h, const char *name, fbclient_lib *lib)
{
    void *p = dlsym(h, name);
    if (p == NULL && lib->msg[0] == '\0')
        snprintf(lib->msg, sizeof lib->msg, "libfbclient.so.2 lacks %s", name);
    return p;
}

static void load_lib(void)
{
    void *h = dlopen("libfbclient.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(be_fbclient_lib.msg, sizeof be_fbclient_lib.msg, "cannot load libfbclient.so.2: %s",
                 dlerror());
        return;
    }
    fbclient_api *a = &be_fbclient_lib.api;
    *(void **)&a->attach = sym(h, "isc_attach_database", &be_fbclient_lib);
    *(void **)&a->detach = sym(h, "isc_detach_database", &be_fbclient_lib);
    *(void **)&a->create = sym(h, "isc_create_database", &be_fbclient_lib);
    *(void **)&a->start_multiple = sym(h, "isc_start_multiple", &be_fbclient_lib);
    *(void **)&a->commit = sym(h, "isc_commit_transaction", &be_fbclient_lib);
    *(void **)&a->rollback = sym(h, "isc_rollback_transaction", &be_fbclient_lib);
    *(void **)&a->alloc = sym(h, "isc_dsql_allocate_statement", &be_fbclient_lib);
    *(void **)&a->prepare = sym(h, "isc_dsql_prepare", &be_fbclient_lib);
    *(void **)&a->describe = sym(h, "isc_dsql_describe", &be_fbclient_lib);
    *(void **)&a->describe_bind = sym(h, "isc_dsql_describe_bind", &be_fbclient_lib);
    *(void **)&a->execute = sym(h, "isc_dsql_execute", &be_fbclient_lib);
    *(void **)&a->execute2 = sym(h, "isc_dsql_execute2", &be_fbclient_lib);
    *(void **)&a->immediate = sym(h, "isc_dsql_execute_immediate", &be_fbclient_lib);
    *(void **)&a->fetch = sym(h, "isc_dsql_fetch", &be_fbclient_lib);
    *(void **)&a->free_stmt = sym(h, "isc_dsql_free_statement", &be_fbclient_lib);
    *(void **)&a->sql_info = sym(h, "isc_dsql_sql_info", &be_fbclient_lib);
    *(void **)&a->open_blob2 = sym(h, "isc_open_blob2", &be_fbclient_lib);
    *(void **)&a->get_segment = sym(h, "isc_get_segment", &be_fbclient_lib);
    *(void **)&a->close_blob = sym(h, "isc_close_blob", &be_fbclient_lib);
    *(void **)&a->interpret = sym(h, "fb_interpret", &be_fbclient_lib);
    *(void **)&a->sqlstate = sym(h, "fb_sqlstate", &be_fbclient_lib);
    be_fbclient_lib.rc = be_fbclient_lib.msg[0] ? FBW_E_UNSUPPORTED : FBW_OK;
}

int be_fbclient_global_init(fbw_err *err)
{
    pthread_once(&be_fbclient_lib.once, load_lib);
    if (be_fbclient_lib.rc != FBW_OK)
        return fbw_err_set(err, be_fbclient_lib.rc, "fbclient: %s", be_fbclient_lib.msg);
    return FBW_OK;
}

int be_fbclient_status_err(const isc_status *st, fbw_err *err, const char *what)
{
    fbw_err_clear(err);
    for (int i = 0; i < STATUS_LEN - 1 && st[i] != ARG_END; i += 2) {
        if (st[i] == ARG_GDS && err->ngds < FBW_ERR_GDS_MAX)
            err->gds[err->ngds++] = (uint32_t)st[i + 1];
        else if (st[i] == ARG_CSTRING)
            i++; /* length, pointer: one slot more */
    }
    char state[8] = "";
    API->sqlstate(state, st);
    memcpy(err->sqlstate, state, 5);
    err->sqlstate[5] = '\0';
    char line[512];
    size_t used = (size_t)snprintf(err->msg, sizeof err->msg, "%s: ", what);
    const isc_status *p = st;
    int first = 1;
    while (used < sizeof err->msg - 1 && API->interpret(line, sizeof line, &p) > 0) {
        int n = snprintf(err->msg + used, sizeof err->msg - used, "%s%s", first ? "" : "; ", line);
        used += n > 0 ? (size_t)n : 0;
        first = 0;
    }
    err->code = FBW_E_SERVER;
    if (sbdrv_be_conn_lost(FBW_E_SERVER, err))
        err->code = FBW_E_IO;
    return err->code;
}
