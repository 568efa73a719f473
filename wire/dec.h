/* SPDX-License-Identifier: MIT */
/* dec.h - decode a whole Firebird session from its two byte streams, learning everything the
 * decoder needs from the bytes alone: the protocol version and compression from the accept packet,
 * row formats from the BLR in op_execute/op_execute2/op_fetch/op_batch_create, and which request each
 * reply answers (replies come strictly in request order). The fbclient tap and the capture tool use
 * it; both feed the same round-trip accounting (stats.h) the live client keeps.
 *
 * Encrypted streams cannot be decoded without the session key: after op_crypt the decoder stops with
 * FBW_E_CRYPT naming the plugin. Given the key (fbw_dec_set_key, from a key log), it decrypts both
 * streams from op_crypt on with the same ciphers the peers use (crypt.h, then inflate when
 * compressed) and decodes on exactly as for a clear session. No I/O, no clock: timestamps come in
 * with the bytes.
 *
 * A capture often joins a session late. With fbw_dec_start_anywhere, streams that do not open
 * with op_connect are hunted for a packet boundary (sync.c): candidate decoders, one per protocol
 * layout, start at the beginning of a client burst (packets end where the peer starts talking)
 * and the one that decodes several request/reply exchanges exactly, every reply paired with its
 * request, is locked on. From there packets are decoded as usual; rows and parameters of
 * statements prepared before the capture cannot be framed, so such a packet is skipped to the
 * next packet boundary of its burst, counted and reported with fbw_dec_format_unknown(); a
 * format learned later (the BLR of an execute or fetch) is used from then on. Should framing be
 * lost again, the decoder hunts again. Round trips count from the first byte in every case. */
#ifndef FBW_DEC_H
#define FBW_DEC_H

#include "pkt.h"
#include "stats.h"

typedef struct fbw_dec fbw_dec;

/* Called for every decoded packet (op_dummy included). `bytes` is its XDR size. Views in p are
 * valid during the call only. */
typedef void (*fbw_dec_packet_fn)(void *arg, int from_client, const fbw_pkt *p, size_t bytes,
                                  uint64_t ts_ns);

int fbw_dec_new(fbw_dec_packet_fn fn, void *arg, fbw_dec **out);
/* Call before feeding: the streams may start anywhere in a session (a capture that began after
 * the connection did, or a cut). Without it, bytes that do not decode are an error. */
void fbw_dec_start_anywhere(fbw_dec *d);

/* How the decoder found the session. */
enum fbw_dec_how {
    FBW_DEC_NOT_YET = 0,   /* nothing recognised (yet) */
    FBW_DEC_CONNECT = 1,   /* the client opened with op_connect */
    FBW_DEC_LOCKED_ON = 2, /* joined mid-session: locked on at lock_offset */
};
typedef struct fbw_dec_sync {
    int how;                   /* enum fbw_dec_how */
    int hunting;               /* no packet boundary known at the moment */
    int protocol_lo;           /* locked on: the protocol layouts that decode alike are */
    int protocol_hi;           /* protocol_lo..protocol_hi (fbw_dec_protocol gives _hi) */
    uint64_t lock_offset[2];   /* [1] client, [0] server: stream bytes before the first lock */
    uint64_t skipped[2];       /* all bytes never decoded because no boundary was known */
    uint64_t relocks;          /* framing lost after lock-on and found again */
    uint64_t unknown_rows;     /* op_fetch_response/op_sql_response rows of unknown format */
    uint64_t unknown_msgs;     /* client packets whose message had an unknown format */
} fbw_dec_sync;
const fbw_dec_sync *fbw_dec_sync_info(const fbw_dec *d);
/* During the callback: 1 when the packet could not be framed because its message format was
 * never seen (prepared before the capture); only its header fields are set, bytes is its size. */
int fbw_dec_format_unknown(const fbw_dec *d);
void fbw_dec_free(fbw_dec *d);
/* Feed bytes seen on the wire in one direction, in the order they were seen across both directions.
 * Returns FBW_OK, or the first decode error (then every later call returns it too; err() says
 * where: direction, stream offset, op). */
int fbw_dec_feed(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns);
const fbw_err *fbw_dec_error(const fbw_dec *d);
/* Accounting of everything decoded so far. A round trip is counted when the server's bytes follow
 * client bytes (the client waited for them); wait time is from the last client byte to the first
 * server byte after it. */
const fbw_stats *fbw_dec_stats(const fbw_dec *d);
int fbw_dec_protocol(const fbw_dec *d);
/* During the callback for a server packet: the op of the request it answers (0 when it answers
 * none, e.g. op_dummy), so a printer can say "op_response to op_prepare_statement". */
int32_t fbw_dec_answering(const fbw_dec *d);
/* During the callback for a client packet that carries an input message (op_execute,
 * op_execute2, op_exec_immediate2 with messages = 1): the format the message was framed with, the
 * one its BLR gave or, for an empty BLR, the statement's previous one. Decode the message with
 * fbw_msg_decode(msg, format, fbw_dec_protocol(d), ...). NULL for every other packet. */
const fbw_msgfmt *fbw_dec_message_format(const fbw_dec *d);
/* The key material the session was encrypted with (keylog.h: plugin, session key, server IV; the
 * iv is empty for Arc4). Copied (wiped on free). Call before feeding. When op_crypt names another
 * plugin, or the first bytes decrypted in a direction do not inflate (compressed sessions) or
 * decode (for the server: as the op_response to op_crypt), decoding stops with FBW_E_CRYPT "the key does not decrypt this
 * session: ...", never with garbage. FBW_E_USAGE for sizes beyond crypt.h's or after op_crypt. */
int fbw_dec_set_key(fbw_dec *d, const char *plugin, const uint8_t *key, size_t key_len,
                    const uint8_t *iv, size_t iv_len);
/* 1 once decryption with the key has started. */
int fbw_dec_decrypting(const fbw_dec *d);
/* The session ended (FIN or RST: its last bursts are complete): a decoder that joined late frames
 * what it still holds, skipping packets of unknown format. */
void fbw_dec_end(fbw_dec *d, uint64_t ts_ns);
/* Bytes fed but not yet decoded in a direction (an incomplete packet at the end of a capture). */
size_t fbw_dec_pending(const fbw_dec *d, int from_client);

#endif
