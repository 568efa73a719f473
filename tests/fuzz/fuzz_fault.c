/* SPDX-License-Identifier: MIT */
/* fuzz_fault.c - libFuzzer target: fbwire-link's fault schedule parser (tools/fbwire-link/fault.c).
 * On success the rule is complete and reads back identically from its own formatting, and a few
 * chunks through its triggers never pass more bytes than given; on failure there is a message. */
#include "fault.h"

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
    fbl_rule r, back;
    char err[160] = "", fmt[160];
    if (fbl_rule_parse(text, &r, err, sizeof err) == 0) {
        if (r.action != FBL_RESET && r.action != FBL_SHUTDOWN && r.action != FBL_STALL)
            abort();
        if (r.prob_ppb > 1000000000u || r.dir < -1 || r.dir > FBL_BOTH)
            abort();
        fbl_rule_format(&r, fmt, sizeof fmt);
        if (fbl_rule_parse(fmt, &back, err, sizeof err) || memcmp(&r, &back, sizeof r))
            abort();
        fbl_sched s = {.n = 1};
        s.rule[0] = r;
        fbl_faults f;
        fbl_faults_init(&f, r.conn ? r.conn : 1, size);
        int hit, hits[FBL_MAX_RULES];
        for (size_t i = 0; i < 8; i++) {
            size_t len = (i * 977 + size) % 5000;
            if (fbl_faults_bytes(&f, &s, (int)(i % 2), len, &hit) > len)
                abort();
            if (fbl_faults_chunk(&f, &s, (int)(i % 2), hits) > 1)
                abort();
        }
    } else if (!err[0]) {
        abort();
    }
    free(text);
    return 0;
}
