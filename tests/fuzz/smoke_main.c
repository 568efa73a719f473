/* SPDX-License-Identifier: MIT */
/* smoke_main.c - runs a libFuzzer target's seeds once through LLVMFuzzerTestOneInput without
 * libFuzzer, so every compiler builds it and the default test run (and its ASan/UBSan build in CI)
 * replays the corpus of every target in seconds. Fuzzing itself is scripts/fuzz.sh.
 *
 * usage: smoke_<target> DIR...   exit 0 when every file ran, 1 when a directory had no seeds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                break;
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t *)"", n);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        size_t files = 0;
        for (struct dirent *e; d && (e = readdir(d));) {
            char path[4096];
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            files += (size_t)run_file(path);
        }
        if (d)
            closedir(d);
        printf("%s: %zu seeds\n", argv[i], files);
        if (files == 0)
            status = 1;
    }
    return status;
}
