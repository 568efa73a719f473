/* SPDX-License-Identifier: MIT */
/* fuzz_dec.c - libFuzzer target for the session decoder (wire/dec.c over pkt.c): the input is a
 * sequence of chunks, each a header byte (bit 7: 1 = client -> server; bits 0-6: length - 1) and up
 * to 128 bytes of stream, fed in order the way the capture tool feeds TCP payload. Decoding must
 * end in FBW_OK or a clean error; ASan/UBSan catch everything else. Stats and pending counts are
 * read at the end so their paths run too. Each input runs twice: as a session seen from its start
 * and as one that may start anywhere (the lock-on search of wire/sync.c). */
#include "dec.h"

#include <stddef.h>
#include <stdint.h>

static void on_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts_ns)
{
    size_t *sum = arg;
    (void)from_client;
    (void)ts_ns;
    *sum += bytes + (size_t)(p->op & 0xFF);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One pass over the chunks; anywhere: the streams may start mid-session (wire/sync.c). */
static size_t run(const uint8_t *data, size_t size, int anywhere)
{
    size_t sum = 0;
    fbw_dec *d = NULL;
    if (fbw_dec_new(on_packet, &sum, &d) != FBW_OK)
        return 0;
    if (anywhere)
        fbw_dec_start_anywhere(d);
    uint64_t ts = 1000;
    for (size_t i = 0; i < size;) {
        int from_client = data[i] >> 7;
        size_t n = (size_t)(data[i] & 0x7F) + 1;
        i++;
        if (n > size - i)
            n = size - i;
        if (fbw_dec_feed(d, from_client, data + i, n, ts) != FBW_OK)
            break;
        i += n;
        ts += 1000;
    }
    fbw_dec_end(d, ts);
    const fbw_stats *st = fbw_dec_stats(d);
    const fbw_dec_sync *sy = fbw_dec_sync_info(d);
    sum += (size_t)st->round_trips + fbw_dec_pending(d, 0) + fbw_dec_pending(d, 1) +
           (size_t)fbw_dec_protocol(d) + (size_t)sy->skipped[0] + (size_t)sy->unknown_rows;
    (void)fbw_dec_error(d)->msg[0];
    fbw_dec_free(d);
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t sum = run(data, size, 0) + run(data, size, 1);
    return sum == 0xFFFFFFFF; /* keep sum alive */
}
