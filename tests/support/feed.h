/* SPDX-License-Identifier: MIT */
/* feed.h - test helpers for stream decoders: run a decoder on an input whole, byte by byte and split
 * at every offset, and assert that every way of cutting the bytes gives the same result; and
 * guard-page buffers that make any read past the end of the input crash at once.
 *
 * For Criterion tests and fuzz targets only (asserts with cr_assert when used from tests; the
 * guard buffer has no Criterion dependency). Not thread-safe per object; no global state. */
#ifndef FBW_TEST_FEED_H
#define FBW_TEST_FEED_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* ---- guard-page buffer ---- */

/* Two or more mapped pages, the last one PROT_NONE. fbw_guard_place copies input so that it ends
 * exactly at the guard page: reading one byte past the input faults. */
typedef struct fbw_guard {
    uint8_t *map;   /* whole mapping */
    size_t size;    /* mapping size, guard page included */
    size_t room;    /* bytes usable before the guard */
} fbw_guard;

/* Map room for at least `cap` bytes (at least one page) followed by the guard. Aborts on failure. */
void fbw_guard_init(fbw_guard *g, size_t cap);
void fbw_guard_free(fbw_guard *g);
/* Copy p[0..n) to end at the guard and return the copy. n must be <= g->room (aborts otherwise).
 * n == 0 returns a pointer to the guard itself (valid to pass with length 0, never to read). */
const uint8_t *fbw_guard_place(fbw_guard *g, const void *p, size_t n);

/* ---- stateless decoders over a growing buffer (fbw_pkt_decode and the like) ---- */

/* Decode one item from p[0..n) (n may be a prefix of what is coming). Returns FBW_OK with *used set,
 * FBW_AGAIN when the item is incomplete (nothing consumed), or a negative error. On FBW_OK the
 * function appends bytes identifying what it decoded to `transcript`, so that runs over different
 * cuttings of the same input can be compared. */
typedef int (*fbw_feed_decode_fn)(void *arg, const uint8_t *p, size_t n, size_t *used,
                                  fbw_buf *transcript);

typedef struct fbw_feed_result {
    int rc;            /* FBW_OK: input used up exactly; FBW_AGAIN: bytes left over; or the error */
    size_t consumed;   /* bytes taken by complete items */
    size_t items;      /* items decoded */
    fbw_buf transcript;
} fbw_feed_result;

void fbw_feed_result_free(fbw_feed_result *r);

/* Deliver p[0..n) in chunks that end at cuts[0] < cuts[1] < ... (n is added as the last cut), keeping
 * unconsumed bytes and decoding as many items as possible after each chunk, each decoder call on a
 * guard-page copy of the bytes not consumed yet. Stops at the first error. */
void fbw_feed_run(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n, const size_t *cuts,
                  size_t ncuts, fbw_feed_result *res);

/* Run whole, byte by byte, and split in two at every offset 1..n-1; cr_assert that every run has the
 * same rc, consumed, items and transcript as the whole run, which is returned in *whole (free it). */
void fbw_feed_check(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n,
                    fbw_feed_result *whole);

/* For a decoder that re-parses from the start: assert that every strict prefix of p[0..n) gives
 * FBW_AGAIN and the whole gives FBW_OK with used == n. Each call runs on a guard-page copy. */
void fbw_feed_check_prefixes(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n);

/* ---- stateful consumers (fbw_conn_recv and the like) ---- */

/* open: make a fresh consumer; push: give it one chunk (FBW_OK or an error, which ends the run);
 * summary: append its observable state to out; close: free it. */
typedef struct fbw_feed_sink {
    void *(*open)(void *arg);
    int (*push)(void *state, const uint8_t *p, size_t n);
    void (*summary)(void *state, fbw_buf *out);
    void (*close)(void *state);
    void *arg;
} fbw_feed_sink;

/* Push p[0..n) whole, byte by byte, and split at every offset (each chunk on a guard-page copy);
 * cr_assert that the rc of the run and the summaries agree. Returns the rc of the whole run and its
 * summary in *summary (fbw_buf_free it; may be NULL). */
int fbw_feed_check_sink(const fbw_feed_sink *s, const uint8_t *p, size_t n, fbw_buf *summary);

/* ---- small helpers ---- */

/* Parse hex digits (spaces, newlines and '|' ignored) into out; aborts on odd or bad digits. */
void fbw_test_hex(fbw_buf *out, const char *hex);
/* Write bytes to dir/name when dir is not NULL (corpus generation); silently skips otherwise. */
void fbw_test_save(const char *dir, const char *name, const void *p, size_t n);
/* Directory from the environment variable FBW_CORPUS_DIR plus "/sub", created if missing, or NULL
 * when the variable is unset. Result points into buf. */
const char *fbw_test_corpus_dir(const char *sub, char *buf, size_t size);

#endif
