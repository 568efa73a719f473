/* SPDX-License-Identifier: MIT */
/* fbwire-link - a TCP relay that adds a network's delay, bandwidth and faults between a client
 * and a server (docs/fbwire-link.md; `fbwire-link --help`).
 *
 *   opts.c      the command line         line.c   one direction: rate, delay, order, stall, slice
 *   units.c     durations, rates, sizes  fault.c  the fault schedule and its triggers
 *   loop.c      sockets, epoll, clock    report.c the exit summary
 *   selftest.c  the accuracy measurement (--self-test) */
#include "loop.h"

int main(int argc, char **argv)
{
    fbl_opts o;
    int rc = fbl_opts_parse(&o, argc, argv);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.self_test)
        return fbl_self_test(&o);
    fbl_summary sum;
    if (fbl_run(&o, -1, &sum))
        return 2;
    fbl_report_text(&o, &sum, stderr);
    rc = o.json && fbl_report_json(&o, &sum, o.json) ? 2 : 0;
    fbl_summary_free(&sum);
    return rc;
}
