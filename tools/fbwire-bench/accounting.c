/* SPDX-License-Identifier: MIT */
/* accounting.c - "fbwire-bench accounting": what the sysbench driver's wire statistics report
 * itself costs the client (docs/report.md, "What the report costs").
 *
 * Runs sysbench through the launcher (--sysbench, the fbwire-sysbench script) with the fbwire
 * driver against --db, once per --accounting mode per round (the order rotates each round so
 * drift and other load hit every mode alike), each run --seconds long. Two measures:
 *
 *   - in the run (modes cost-sampled, cost-every-call, the default): the driver alternates
 *     blocks of 256 calls with and without accounting and prints the median paired cost as a
 *     share of client CPU per call (driver/cpuacct.h); printed here: its median over the rounds
 *     with the range, and the same for the pooled figure. This is the figure to trust on a
 *     shared machine.
 *   - between runs (modes off, every-call, sampled): a run's client CPU is the sysbench
 *     process's user + system time (wait4), less the median CPU of a one-event run (start-up,
 *     connect, prepares), per event; printed: median and range over rounds, and the cost
 *     against `off` of the same round (paired). Separate processes on a loaded machine differ
 *     by tens of percent, so this only bounds gross effects.
 *
 * Every run's process CPU per event is printed too, and the load average before and after. The
 * table sbtest1 (--table-size rows) is created at the start and dropped at the end. The
 * password goes to sysbench in its environment (ISC_PASSWORD), never on its command line. */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LIST 8
#define MAX_ARGS 24

typedef struct acct_state {
    const char *sysbench;
    const char *scripts[MAX_LIST], *modes[MAX_LIST];
    int nscripts, nmodes;
    int seconds, table_size;
    char lists[2][256];
} acct_state;

static void acct_init(void *state)
{
    acct_state *st = state;
    st->sysbench = "fbwire-sysbench";
    st->scripts[0] = "oltp_point_select";
    st->scripts[1] = "oltp_read_only";
    st->nscripts = 2;
    st->modes[0] = "cost-every-call";
    st->modes[1] = "cost-sampled";
    st->nmodes = 2;
    st->seconds = 2;
    st->table_size = 10000;
}

/* A comma list into out[] (pointers into buf). */
static int split_list(char *buf, size_t cap, const char *value, const char **out, int *n)
{
    if (snprintf(buf, cap, "%s", value) >= (int)cap)
        return -1;
    *n = 0;
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        if (*n == MAX_LIST)
            return -1;
        out[(*n)++] = p;
    }
    return *n ? 1 : -1;
}

static int acct_option(void *state, const char *name, const char *value)
{
    acct_state *st = state;
    int rc = 1;
    if (!strcmp(name, "--sysbench"))
        st->sysbench = value;
    else if (!strcmp(name, "--scripts"))
        rc = split_list(st->lists[0], sizeof st->lists[0], value, st->scripts, &st->nscripts);
    else if (!strcmp(name, "--accounting"))
        rc = split_list(st->lists[1], sizeof st->lists[1], value, st->modes, &st->nmodes);
    else if (!strcmp(name, "--seconds"))
        rc = (st->seconds = atoi(value)) > 0 ? 1 : -1;
    else if (!strcmp(name, "--table-size"))
        rc = (st->table_size = atoi(value)) > 0 ? 1 : -1;
    else
        return 0;
    if (rc < 0)
        fprintf(stderr, "fbwire-bench accounting: bad value for %s: %s\n", name, value);
    return rc;
}

typedef struct sb_out {
    uint64_t cpu_ns, events;
    int has_cost;                /* the driver printed its in-run cost line */
    double cost_pct, pooled_pct; /* median paired and pooled cost, % of client CPU per call */
} sb_out;

/* "accounting cost (M): +0.83% of client CPU per call, ... (quartiles ...); pooled: ... (+1.1%)" */
static void parse_cost(const char *text, sb_out *out)
{
    const char *p = strstr(text, "accounting cost (");
    const char *q = p ? strstr(p, "): ") : NULL;
    const char *pooled = q ? strstr(q, "pooled:") : NULL;
    const char *pct = pooled ? strstr(pooled, " not (") : NULL;
    out->has_cost = q && pct;
    if (out->has_cost) {
        out->cost_pct = strtod(q + 3, NULL);
        out->pooled_pct = strtod(pct + 6, NULL);
    }
}

/* Run the launcher with args; its stdout is read for sysbench's event count. 0 on success. */
static int run_sysbench(const benchtool_opts *o, const acct_state *st, const char *const *args,
                        sb_out *out)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        if (o->password)
            setenv("ISC_PASSWORD", o->password, 1);
        execvp(st->sysbench, (char *const *)args);
        fprintf(stderr, "cannot run %s: %s\n", st->sysbench, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    static char text[1 << 16];
    size_t len = 0;
    ssize_t n;
    while ((n = read(fd[0], text + len, sizeof text - 1 - len)) > 0 || (n < 0 && errno == EINTR))
        len += n > 0 ? (size_t)n : 0;
    close(fd[0]);
    text[len] = '\0';
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const char *cmd = args[1];
        for (int i = 2; i < MAX_ARGS && args[i]; i++)
            cmd = args[i];
        fprintf(stderr, "fbwire-bench accounting: %s %s failed:\n%s\n", args[1], cmd,
                len > 2000 ? text + len - 2000 : text);
        return -1;
    }
    const char *ev = strstr(text, "total number of events:");
    out->events = ev ? strtoull(ev + 23, NULL, 10) : 0;
    parse_cost(text, out);
    out->cpu_ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
                  ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
    return 0;
}

/* argv for one sysbench command; bufs holds the formatted options. */
static void build_args(const benchtool_opts *o, const acct_state *st, const char *script,
                       const char *mode, const char *tail, const char *cmd,
                       char bufs[6][300], const char **args)
{
    int n = 0;
    args[n++] = st->sysbench;
    args[n++] = script;
    args[n++] = "--db-driver=fbwire";
    snprintf(bufs[0], 300, "--fbwire-db=%s", o->db);
    args[n++] = bufs[0];
    snprintf(bufs[1], 300, "--fbwire-user=%s", o->user ? o->user : "SYSDBA");
    args[n++] = bufs[1];
    args[n++] = "--fbwire-wire-crypt=disabled";
    args[n++] = "--tables=1";
    snprintf(bufs[2], 300, "--table-size=%d", st->table_size);
    args[n++] = bufs[2];
    args[n++] = "--threads=1";
    snprintf(bufs[3], 300, "--fbwire-accounting=%s", mode ? mode : "off");
    args[n++] = bufs[3];
    if (tail)
        args[n++] = tail;
    args[n++] = cmd;
    while (n < MAX_ARGS)
        args[n++] = NULL;
}

static void print_load(const char *when)
{
    char buf[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            snprintf(buf, sizeof buf, "?\n");
        fclose(f);
    }
    printf("load average %s: %s", when, buf);
    if (!strchr(buf, '\n'))
        putchar('\n');
}

/* min, median, max of v[0..n) (sorts v). */
static void stats3(double *v, int n, double out[3])
{
    out[1] = benchtool_median(v, n);
    out[0] = v[0];
    out[2] = v[n - 1];
}

static int one_script(const benchtool_opts *o, const acct_state *st, const char *script)
{
    char bufs[6][300];
    const char *args[MAX_ARGS];
    char timeopt[32];
    snprintf(timeopt, sizeof timeopt, "--time=%d", st->seconds);
    sb_out r;
    double start[100], cpu[MAX_LIST][100], cost[MAX_LIST][100], eps[MAX_LIST][100];
    double inrun[MAX_LIST][100], pooled[MAX_LIST][100];
    int has_inrun[MAX_LIST] = {0};
    int off = -1;
    for (int m = 0; m < st->nmodes; m++)
        if (!strcmp(st->modes[m], "off"))
            off = m;
    for (int k = 0; k < o->runs; k++) {
        build_args(o, st, script, "off", "--events=1", "run", bufs, args);
        if (run_sysbench(o, st, args, &r) != 0)
            return 1;
        start[k] = (double)r.cpu_ns;
        for (int i = 0; i < st->nmodes; i++) {
            int m = (i + k) % st->nmodes; /* rotate the order */
            build_args(o, st, script, st->modes[m], timeopt, "run", bufs, args);
            if (run_sysbench(o, st, args, &r) != 0 || r.events == 0)
                return 1;
            cpu[m][k] = (double)r.cpu_ns; /* start-up subtracted below */
            eps[m][k] = (double)r.events;
            has_inrun[m] = r.has_cost;
            inrun[m][k] = r.cost_pct;
            pooled[m][k] = r.pooled_pct;
        }
    }
    double s3[3], tmp[100];
    memcpy(tmp, start, sizeof tmp);
    stats3(tmp, o->runs, s3);
    double base = s3[1];
    for (int m = 0; m < st->nmodes; m++)
        for (int k = 0; k < o->runs; k++)
            cpu[m][k] = (cpu[m][k] > base ? cpu[m][k] - base : 0) / eps[m][k] / 1e3; /* us/event */
    for (int m = 0; m < st->nmodes; m++)
        for (int k = 0; k < o->runs && off >= 0; k++)
            cost[m][k] = cpu[off][k] > 0 ? 100.0 * (cpu[m][k] - cpu[off][k]) / cpu[off][k] : 0;
    printf("\n%s: %d rounds of %d s runs, start-up CPU %.1f ms (median of the one-event runs)\n",
           script, o->runs, st->seconds, base / 1e6);
    printf("  %-16s %28s %10s %30s\n", "accounting", "process CPU us/event [range]", "events/run",
           "cost vs off, paired [range]");
    for (int m = 0; m < st->nmodes; m++) {
        double c3[3], e3[3], k3[3];
        memcpy(tmp, cpu[m], sizeof tmp);
        stats3(tmp, o->runs, c3);
        memcpy(tmp, eps[m], sizeof tmp);
        stats3(tmp, o->runs, e3);
        printf("  %-16s %9.2f [%7.2f .. %7.2f] %10.0f", st->modes[m], c3[1], c3[0], c3[2], e3[1]);
        if (off >= 0 && m != off) {
            memcpy(tmp, cost[m], sizeof tmp);
            stats3(tmp, o->runs, k3);
            printf(" %+9.2f%% [%+7.2f%% .. %+7.2f%%]", k3[1], k3[0], k3[2]);
        }
        putchar('\n');
    }
    for (int m = 0; m < st->nmodes; m++) {
        if (!has_inrun[m])
            continue;
        double i3[3], p3[3];
        memcpy(tmp, inrun[m], sizeof tmp);
        stats3(tmp, o->runs, i3);
        memcpy(tmp, pooled[m], sizeof tmp);
        stats3(tmp, o->runs, p3);
        printf("  in-run cost of %-12s %+6.2f%% of client CPU per call [%+.2f%% .. %+.2f%%] "
               "(median of the runs' paired medians); pooled %+.2f%% [%+.2f%% .. %+.2f%%]\n",
               st->modes[m] + 5, i3[1], i3[0], i3[2], p3[1], p3[0], p3[2]);
    }
    fflush(stdout);
    return 0;
}

static int acct_run(const benchtool_opts *o, void *state)
{
    acct_state *st = state;
    char bufs[6][300];
    const char *args[MAX_ARGS];
    sb_out r;
    build_args(o, st, st->scripts[0], "off", NULL, "cleanup", bufs, args);
    (void)run_sysbench(o, st, args, &r);
    build_args(o, st, st->scripts[0], "off", NULL, "prepare", bufs, args);
    if (run_sysbench(o, st, args, &r) != 0)
        return 1;
    printf("fbwire-bench accounting: what the wire statistics report costs the client; per mode the\n"
           "process CPU per sysbench event (user + system less start-up) and, for cost-* modes, the\n"
           "driver's own paired in-run figure; medians and ranges over rounds, order rotated\n");
    print_load("before");
    int status = 0;
    for (int i = 0; i < st->nscripts && status == 0; i++)
        status = one_script(o, st, st->scripts[i]);
    print_load("after");
    build_args(o, st, st->scripts[0], "off", NULL, "cleanup", bufs, args);
    (void)run_sysbench(o, st, args, &r);
    return status;
}

const benchtool_mode benchtool_mode_accounting = {
    "accounting",
    "what the sysbench driver's wire statistics report costs the client",
    "  --sysbench CMD     the fbwire-sysbench launcher (default: fbwire-sysbench in PATH)\n"
    "  --scripts LIST     sysbench scripts (default oltp_point_select,oltp_read_only)\n"
    "  --accounting LIST  --fbwire-accounting values to compare (default off,every-call,sampled)\n"
    "  --seconds S        length of each run (default 2)\n"
    "  --table-size N     rows of sbtest1, created and dropped here (default 10000)\n",
    sizeof(acct_state),
    acct_init,
    acct_option,
    acct_run,
};
