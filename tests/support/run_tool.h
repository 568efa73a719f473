/* SPDX-License-Identifier: MIT */
/* run_tool.h - run a built program as a user would (through the shell, popen) and capture its exit
 * status, stdout and stderr, for the integration tests of the command-line tools. Fails the calling
 * Criterion test when the program is missing or the command cannot be run. */
#ifndef FBW_RUN_TOOL_H
#define FBW_RUN_TOOL_H

#include <stddef.h>

typedef struct fbw_run {
    int status;      /* exit code, or 128 + signal */
    char *out, *err; /* heap, NUL-terminated, at most out_max bytes each */
    double seconds;  /* wall time of the run */
} fbw_run;

/* Run program with argv (NULL-terminated), ISC_USER/ISC_PASSWORD unset so only the arguments count,
 * stdin from stdin_path (NULL: /dev/null). */
fbw_run fbw_run_tool(const char *program, const char *const *argv, const char *stdin_path,
                     size_t out_max);
void fbw_run_free(fbw_run *r);

#endif
