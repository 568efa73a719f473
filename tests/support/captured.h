/* SPDX-License-Identifier: MIT */
/* captured.h - the bytes of one captured Firebird connection (pcap/NAME.pcap, as pcap/record.sh
 * writes them: one TCP connection, IPv4 over Ethernet or Linux cooked capture) cut into turns:
 * each turn is the payload one side sent before the other answered, in stream order (duplicate
 * and retransmitted segments dropped). Unit tests feed a recorded server's turns to the library
 * as replies, so scripted replies are real bytes. Reads the file with libpcap. */
#ifndef FBW_TEST_CAPTURED_H
#define FBW_TEST_CAPTURED_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fbw_cap_turn {
    int from_client; /* 1: the client's bytes, 0: the server's */
    fbw_buf bytes;
} fbw_cap_turn;

typedef struct fbw_captured {
    fbw_cap_turn *turns;
    size_t n;
} fbw_captured;

/* Load the connection to server port `port` from `file`. Returns 0, or -1 with why in msg (a
 * file that cannot be read, a link type or segment that is not understood, a gap in a stream). */
int fbw_captured_load(const char *file, uint16_t port, fbw_captured *cap, char *msg, size_t size);
void fbw_captured_free(fbw_captured *cap);

#endif
