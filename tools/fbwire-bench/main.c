/* SPDX-License-Identifier: MIT */
/* fbwire-bench - client-side benchmarks over fbwire against a live server.
 *
 * `fbwire-bench MODE --db DSN [common options] [mode options]`. Each mode is an entry of the table
 * below (bench.h benchtool_mode); this file only parses the common options, hands the rest to the
 * mode and runs it. Modes print their own table. The password is never printed. */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const benchtool_mode *const MODES[] = {&benchtool_mode_crypt, &benchtool_mode_pipeline,
                                              &benchtool_mode_accounting};
#define NMODES (sizeof MODES / sizeof *MODES)

static void usage(FILE *f)
{
    fprintf(f, "usage: fbwire-bench MODE --db DSN [options]\n"
               "modes:\n");
    for (size_t i = 0; i < NMODES; i++)
        fprintf(f, "  %-10s %s\n", MODES[i]->name, MODES[i]->summary);
    fprintf(f, "common options:\n"
               "  --db DSN         host[/port]:path of the database\n"
               "  --user U         login (default $ISC_USER)\n"
               "  --password P     password (default $ISC_PASSWORD)\n"
               "  --runs N         repetitions, the median is reported (default 5)\n"
               "  --timeout S      seconds to wait for any reply (default 120)\n"
               "  --row-format F   compact (default) or described rows and parameters\n"
               "  --keylog FILE    append each encrypted connection's wire crypt key to FILE\n"
               "                   (default $FBWIRE_KEYLOGFILE; a debugging aid that exposes the\n"
               "                   sessions: fbwire-pcap --keylog decrypts their captures)\n");
    for (size_t i = 0; i < NMODES; i++)
        if (MODES[i]->options_help[0])
            fprintf(f, "%s options:\n%s", MODES[i]->name, MODES[i]->options_help);
}

static int parse_int(const char *s, const char *what, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "fbwire-bench: %s must be a number from %d to %d, got \"%s\"\n", what, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* 1 when name was a common option, -1 for a bad value, 0 when it is not one. */
static int common_option(benchtool_opts *o, const char *name, const char *value)
{
    if (!strcmp(name, "--db"))
        o->db = value;
    else if (!strcmp(name, "--user"))
        o->user = value;
    else if (!strcmp(name, "--password"))
        o->password = value;
    else if (!strcmp(name, "--keylog"))
        o->keylog = value;
    else if (!strcmp(name, "--runs"))
        return parse_int(value, "--runs", 1, 100, &o->runs) ? -1 : 1;
    else if (!strcmp(name, "--timeout"))
        return parse_int(value, "--timeout", 1, 86400, &o->timeout_s) ? -1 : 1;
    else if (!strcmp(name, "--row-format")) {
        if (fbw_row_format_parse(value, &o->row_format) == FBW_OK)
            return 1;
        fprintf(stderr, "fbwire-bench: --row-format takes compact or described, got \"%s\"\n", value);
        return -1;
    }
    else
        return 0;
    return 1;
}

static const benchtool_mode *find_mode(const char *name)
{
    for (size_t i = 0; i < NMODES; i++)
        if (!strcmp(MODES[i]->name, name))
            return MODES[i];
    return NULL;
}

/* Every option takes a value ("--name value" or "--name=value"). */
static int parse_args(int argc, char **argv, benchtool_opts *o, const benchtool_mode *m, void *state)
{
    for (int i = 2; i < argc; i++) {
        char name[64];
        const char *value = NULL, *eq = strchr(argv[i], '=');
        size_t n = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        if (strncmp(argv[i], "--", 2) != 0 || n >= sizeof name) {
            fprintf(stderr, "fbwire-bench: unexpected argument \"%s\"\n", argv[i]);
            return -1;
        }
        memcpy(name, argv[i], n);
        name[n] = 0;
        if (eq)
            value = eq + 1;
        else if (i + 1 < argc)
            value = argv[++i];
        if (!value) {
            fprintf(stderr, "fbwire-bench: %s needs a value\n", name);
            return -1;
        }
        int used = common_option(o, name, value);
        if (used == 0)
            used = m->option(state, name, value);
        if (used == 0)
            fprintf(stderr, "fbwire-bench: %s: unknown option %s\n", m->name, name);
        if (used != 1)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const benchtool_mode *m = find_mode(argv[1]);
    if (!m) {
        fprintf(stderr, "fbwire-bench: unknown mode \"%s\"\n", argv[1]);
        usage(stderr);
        return 2;
    }
    benchtool_opts o = {.runs = 5, .timeout_s = 120};
    void *state = calloc(1, m->state_size ? m->state_size : 1);
    if (!state) {
        fprintf(stderr, "fbwire-bench: out of memory\n");
        return 1;
    }
    m->init(state);
    int status = 2;
    if (parse_args(argc, argv, &o, m, state) == 0) {
        if (!o.user)
            o.user = getenv("ISC_USER");
        if (!o.password)
            o.password = getenv("ISC_PASSWORD");
        if (!o.db)
            fprintf(stderr, "fbwire-bench: --db is required\n");
        else
            status = m->run(&o, state);
    }
    free(state);
    return status;
}
