/* SPDX-License-Identifier: MIT */
/* report_int.h - the wire statistics report's parts (driver/report*.c) and the small helpers
 * they share. Internal to the report; its contract is report.h.
 *   report.c       per-class round-trip accounting, merging, totals
 *   report_text.c  the text report and the interval line
 *   report_json.c  the JSON document (with jansson; without it, an error saying so) */
#ifndef SBDRV_REPORT_INT_H
#define SBDRV_REPORT_INT_H

#include "report.h"

static inline double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

static inline const char *str(const char *s, const char *dflt) { return s && s[0] ? s : dflt; }

#endif
