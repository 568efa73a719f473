/* SPDX-License-Identifier: MIT */
/* keys.c - the key log fbwire-pcap --keylog reads (format: wire/keylog.h): every line parsed up
 * front, so a malformed one is an error before anything is decoded; looked up per connection by
 * its client and server address, as pcaptool_cap_endpoint prints them. */
#include "pcaptool.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 4096
#define MAX_ENTRIES (1u << 20)

struct pcaptool_keys {
    fbw_keylog_entry *e;
    unsigned *line; /* line number of e[i] */
    size_t n, cap;
};

static int add(pcaptool_keys *k, const fbw_keylog_entry *e, unsigned line, fbw_err *err)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 16;
        if (cap > MAX_ENTRIES)
            return fbw_err_set(err, FBW_E_USAGE, "more than %u key log lines", MAX_ENTRIES);
        fbw_keylog_entry *ne = realloc(k->e, cap * sizeof *ne);
        if (ne)
            k->e = ne;
        unsigned *nl = ne ? realloc(k->line, cap * sizeof *nl) : NULL;
        if (!ne || !nl)
            return fbw_err_set(err, FBW_E_NOMEM, "out of memory reading the key log");
        k->line = nl;
        k->cap = cap;
    }
    k->e[k->n] = *e;
    k->line[k->n++] = line;
    return FBW_OK;
}

static int load(FILE *f, const char *path, pcaptool_keys *k, fbw_err *err)
{
    char *buf = malloc(MAX_LINE);
    fbw_keylog_entry e;
    int rc = buf ? FBW_OK : fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    for (unsigned line = 1; rc == FBW_OK && fgets(buf, MAX_LINE, f); line++) {
        size_t n = strlen(buf);
        if (n == MAX_LINE - 1 && buf[n - 1] != '\n')
            rc = fbw_err_set(err, FBW_E_BADVALUE, "%s:%u: line longer than %d bytes", path, line,
                             MAX_LINE - 2);
        else if ((rc = fbw_keylog_parse(buf, n, &e, err)) == FBW_OK && e.key_len == 0)
            continue; /* a comment or an empty line */
        else if (rc)
            fbw_err_prefix(err, "%s:%u", path, line);
        else
            rc = add(k, &e, line, err);
    }
    if (rc == FBW_OK && ferror(f))
        rc = fbw_err_set_errno(err, errno, "%s: read error", path);
    OPENSSL_cleanse(&e, sizeof e);
    if (buf)
        OPENSSL_cleanse(buf, MAX_LINE);
    free(buf);
    return rc;
}

int pcaptool_keys_load(const char *path, pcaptool_keys **out, fbw_err *err)
{
    *out = NULL;
    pcaptool_keys *k = calloc(1, sizeof *k);
    if (!k)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    FILE *f = fopen(path, "r");
    if (!f) {
        free(k);
        return fbw_err_set_errno(err, errno, "key log %s: cannot open", path);
    }
    int rc = load(f, path, k, err);
    fclose(f);
    if (rc) {
        pcaptool_keys_free(k);
        return rc;
    }
    *out = k;
    return FBW_OK;
}

const fbw_keylog_entry *pcaptool_keys_find(const pcaptool_keys *k, const char *client,
                                           const char *server, unsigned *line)
{
    /* The last line wins: a client port reused later belongs to a later connection. */
    for (size_t i = k ? k->n : 0; i-- > 0;)
        if (!strcmp(k->e[i].client, client) && !strcmp(k->e[i].server, server)) {
            *line = k->line[i];
            return &k->e[i];
        }
    return NULL;
}

void pcaptool_keys_free(pcaptool_keys *k)
{
    if (!k)
        return;
    if (k->e)
        OPENSSL_cleanse(k->e, k->cap * sizeof *k->e);
    free(k->e);
    free(k->line);
    free(k);
}
