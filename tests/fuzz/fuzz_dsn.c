/* SPDX-License-Identifier: MIT */
/* fuzz_dsn.c - libFuzzer target: parse a connection string; on success every field is terminated
 * within its size, on failure the result is cleared. */
#include "dsn.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    fbw_dsn d;
    fbw_err err;
    int rc = fbw_dsn_parse(text, &d, &err);
    if (rc == FBW_OK) {
        if (strnlen(d.host, sizeof d.host) == sizeof d.host || strnlen(d.port, sizeof d.port) == sizeof d.port ||
            strnlen(d.path, sizeof d.path) == sizeof d.path)
            abort();
        if (!d.host[0] || !d.port[0])
            abort(); /* defaults are filled in */
    } else if (rc != FBW_E_USAGE || d.host[0] || d.port[0] || d.path[0]) {
        abort();
    }
    free(text);
    return 0;
}
