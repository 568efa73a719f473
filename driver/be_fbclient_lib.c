/* SPDX-License-Identifier: MIT */
/* be_fbclient_lib.c - the baseline backend's access to libfbclient: the library dlopen()ed on
 * first use (so it is no build or link dependency and the plug-in still loads where it is
 * missing): libfbclient.so.2 as the dynamic linker finds it, or the one --fbclient-library names
 * (another Firebird version's client, say). Its entry points are resolved into be_fbclient_lib once,
 * under a lock (the backend's only process-wide state), its version read for the report, and
 * status vectors turned into fbw_err. */
#define _GNU_SOURCE
#include "be_fbclient.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_LIBRARY "libfbclient.so.2"

fbclient_lib be_fbclient_lib = {PTHREAD_MUTEX_INITIALIZER, 0, FBW_E_UNSUPPORTED, "", "", {0}};

static void *sym(void *h, const char *name, const char *path, fbclient_lib *lib)
{
    void *p = dlsym(h, name);
    if (p == NULL && lib->msg[0] == '\0')
        snprintf(lib->msg, sizeof lib->msg, "%s lacks %s (is it a Firebird client library?)",
                 path, name);
    return p;
}

/* The file the library was loaded from (dladdr of one of its symbols), else the name asked for. */
static const char *loaded_from(void *any_symbol, const char *asked)
{
    Dl_info info;
    if (any_symbol && dladdr(any_symbol, &info) && info.dli_fname && info.dli_fname[0])
        return info.dli_fname;
    return asked;
}

static void load(const char *path)
{
    fbclient_lib *l = &be_fbclient_lib;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(l->msg, sizeof l->msg, "cannot load %s: %s", path, dlerror());
        return;
    }
    fbclient_api *a = &l->api;
    *(void **)&a->attach = sym(h, "isc_attach_database", path, l);
    *(void **)&a->detach = sym(h, "isc_detach_database", path, l);
    *(void **)&a->create = sym(h, "isc_create_database", path, l);
    *(void **)&a->start_multiple = sym(h, "isc_start_multiple", path, l);
    *(void **)&a->commit = sym(h, "isc_commit_transaction", path, l);
    *(void **)&a->rollback = sym(h, "isc_rollback_transaction", path, l);
    *(void **)&a->alloc = sym(h, "isc_dsql_allocate_statement", path, l);
    *(void **)&a->prepare = sym(h, "isc_dsql_prepare", path, l);
    *(void **)&a->describe = sym(h, "isc_dsql_describe", path, l);
    *(void **)&a->describe_bind = sym(h, "isc_dsql_describe_bind", path, l);
    *(void **)&a->execute = sym(h, "isc_dsql_execute", path, l);
    *(void **)&a->execute2 = sym(h, "isc_dsql_execute2", path, l);
    *(void **)&a->immediate = sym(h, "isc_dsql_execute_immediate", path, l);
    *(void **)&a->fetch = sym(h, "isc_dsql_fetch", path, l);
    *(void **)&a->free_stmt = sym(h, "isc_dsql_free_statement", path, l);
    *(void **)&a->sql_info = sym(h, "isc_dsql_sql_info", path, l);
    *(void **)&a->open_blob2 = sym(h, "isc_open_blob2", path, l);
    *(void **)&a->get_segment = sym(h, "isc_get_segment", path, l);
    *(void **)&a->close_blob = sym(h, "isc_close_blob", path, l);
    *(void **)&a->interpret = sym(h, "fb_interpret", path, l);
    *(void **)&a->sqlstate = sym(h, "fb_sqlstate", path, l);
    *(void **)&a->client_version = sym(h, "isc_get_client_version", path, l);
    if (l->msg[0]) {
        dlclose(h);
        return;
    }
    char version[256] = "";
    a->client_version(version); /* fbclient writes at most a short line into the caller's buffer */
    version[sizeof version - 1] = '\0';
    snprintf(l->about, sizeof l->about, "%s (%s)", loaded_from((void *)a->client_version, path),
             version[0] ? version : "version unknown");
    l->rc = FBW_OK;
}

int be_fbclient_global_init(const sbdrv_be_conf *conf, fbw_err *err)
{
    fbclient_lib *l = &be_fbclient_lib;
    pthread_mutex_lock(&l->lock);
    if (!l->loaded) {
        load(conf && conf->client_library ? conf->client_library : DEFAULT_LIBRARY);
        l->loaded = 1;
    }
    pthread_mutex_unlock(&l->lock);
    if (l->rc != FBW_OK)
        return fbw_err_set(err, l->rc, "fbclient: %s", l->msg);
    return FBW_OK;
}

const char *be_fbclient_client_library(void)
{
    fbclient_lib *l = &be_fbclient_lib;
    pthread_mutex_lock(&l->lock);
    const char *r = l->loaded && l->rc == FBW_OK ? l->about : NULL;
    pthread_mutex_unlock(&l->lock);
    return r;
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
