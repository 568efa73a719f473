/* SPDX-License-Identifier: MIT */
/* capture.h - loopback captures with tcpdump for the integration tests that compare what fbwire
 * counts with what went over the wire. Needs root (tcpdump on lo). */
#ifndef FBW_TEST_CAPTURE_H
#define FBW_TEST_CAPTURE_H

#include <stddef.h>
#include <sys/types.h>

/* Start tcpdump writing `file` for the BPF `filter`, its stderr to `errlog`, and wait (up to 4 s)
 * until it says it is listening. Returns its pid, or -1 with errno set when it cannot start. */
pid_t fbw_tcpdump_start(const char *file, const char *filter, const char *errlog);
/* Let the last packets reach it, then stop it (SIGINT) and reap it. */
void fbw_tcpdump_stop(pid_t pid);
/* Make a fresh directory for a capture, $TMPDIR/fbwire-test-NAME.XXXXXX (TMPDIR default /tmp),
 * writable by everyone: tcpdump drops privileges before it writes. Returns 0, or -1 with errno. */
int fbw_capture_dir(const char *name, char *out, size_t size);

#endif
