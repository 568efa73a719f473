/* SPDX-License-Identifier: MIT */
/* cliopts.h - option values the verbs of fbwire-pcap share (replay, trace-record), parsed once. */
#ifndef PCAPTOOL_CLIOPTS_H
#define PCAPTOOL_CLIOPTS_H

/* --wire-crypt disabled|enabled|required -> FBW_WIRE_CRYPT_* in *out; 0, or -1 after saying on
 * stderr what it takes. */
int pcaptool_parse_wire_crypt(const char *s, int *out);

#endif
