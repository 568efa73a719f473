/* SPDX-License-Identifier: MIT */
/* cliopts.c - option values the verbs of fbwire-pcap share (cliopts.h). */
#include "cliopts.h"

#include "conn.h"

#include <stdio.h>
#include <string.h>

int pcaptool_parse_wire_crypt(const char *s, int *out)
{
    if (!strcmp(s, "disabled"))
        *out = FBW_WIRE_CRYPT_DISABLED;
    else if (!strcmp(s, "enabled"))
        *out = FBW_WIRE_CRYPT_ENABLED;
    else if (!strcmp(s, "required"))
        *out = FBW_WIRE_CRYPT_REQUIRED;
    else {
        fprintf(stderr, "fbwire-pcap: --wire-crypt takes disabled, enabled or required\n");
        return -1;
    }
    return 0;
}
