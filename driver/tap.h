/* SPDX-License-Identifier: MIT */
/* tap.h - watch the socket traffic of a client library inside the process and decode it with
 * fbw_dec (wire/dec.h), so libfbclient's round trips are counted by the same decoder and the
 * same rule as a capture of fbwire's own traffic.
 *
 * The plug-in is LD_PRELOADed into sysbench, so interpose.c defines connect/send/recv/close; the
 * tap subscribes to them (interpose.h) when a thread first arms it. They pass straight through
 * unless the descriptor was connected while the calling thread had the tap armed (around an
 * attach made by our backend); then they hand the tap the bytes. Only plain streams decode; an encrypted one (wire crypt on) is
 * counted at the socket instead: round trips, send/recv calls and bytes. Tapping never changes
 * the bytes or the calls. */
#ifndef SBDRV_TAP_H
#define SBDRV_TAP_H

#include "report.h"
#include "stats.h"

typedef struct sbdrv_tap sbdrv_tap;

enum {
    SBDRV_TAP_SESSION = 0,   /* decode the whole session until the tap is freed */
    SBDRV_TAP_HANDSHAKE = 1  /* decode until the attach is answered, then let go of the socket
                              (connection facts only: fbwire counts its own traffic) */
};

/* Arm the calling thread: TCP sockets it connects until sbdrv_tap_disarm are tapped. */
void sbdrv_tap_arm(int mode);
/* Disarm. Returns the tap of the last socket connected while armed that is still open (the
 * caller owns it), or NULL. Taps of sockets closed meanwhile (failed attempts) are freed. */
sbdrv_tap *sbdrv_tap_disarm(void);
/* Stop tapping (if the socket is still open) and free. NULL is fine. */
void sbdrv_tap_free(sbdrv_tap *t);
/* Cumulative accounting of everything seen so far (decodes what the socket calls left pending:
 * call it outside the span whose CPU time is measured). */
const fbw_stats *sbdrv_tap_stats(sbdrv_tap *t);
/* True when the session is encrypted: sbdrv_tap_stats then holds socket-level figures (round trips,
 * waits; packets_* are send/recv calls, bytes_* socket bytes; no op codes). */
int sbdrv_tap_socket_level(sbdrv_tap *t);
/* What the handshake showed: protocol, auth plugin, wire crypt, compression, lazy send, and
 * whether the figures are socket-level (f->socket_level). Any other decoder error is put into
 * f->note. server_version is left alone. */
void sbdrv_tap_facts(sbdrv_tap *t, sbdrv_rep_facts *f);
/* The socket the tap adopted (still that connection's while it is attached); -1 for NULL. */
int sbdrv_tap_fd(const sbdrv_tap *t);

#endif
