/* SPDX-License-Identifier: MIT */
/* turns.h - `fbwire-pcap turns`: the protocol-neutral round-trip count, for any TCP service.
 *
 * Per TCP connection to one of the given ports: turnarounds (each time bytes from the server follow
 * bytes from the client, the definition wire/dec.c applies to Firebird sessions before it knows
 * anything about packets) and payload bytes each way. Nothing is decoded, so it works for
 * PostgreSQL, MariaDB, TLS or Firebird alike; tools/fbwire-compare uses it for the engines whose
 * drivers count nothing themselves. Reassembly is tcp.c's: retransmitted bytes count once. */
#ifndef PCAPTOOL_TURNS_H
#define PCAPTOOL_TURNS_H

/* argv[0] is "turns"; the rest are its arguments. Returns the exit status: 0 every connection was
 * followed to its end, 1 a connection had a gap or the capture was truncated (the figures are then
 * lower bounds, and say so), 2 usage or unreadable file. */
int pcaptool_turns_main(int argc, char **argv);

#endif
