/* SPDX-License-Identifier: MIT */
/* compare.c - charts of a tools/fbwire-compare summary (reporttool.h, rt_compare_svg). */
#include "reporttool.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#define MAX_T 16 /* targets */
#define MAX_W 32 /* workloads */
#define BAR_W 14
#define GAP 22
#define LEFT 70
#define TOP 60
#define PLOT_H 300

typedef struct cell {
    int known[2]; /* value present: [0] main (tps, client CPU, rt), [1] server CPU */
    double v[2], lo, hi;
    int has_range;
} cell;

typedef struct chart {
    const char *metric;
    int threads, nt, nw;
    const char *targets[MAX_T], *workloads[MAX_W];
    cell c[MAX_W][MAX_T];
    double vmin, vmax;
} chart;

static int index_of(const char *const *list, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], s))
            return i;
    return -1;
}

static int stat_of(json_t *c, const char *key, double *med, double *lo, double *hi)
{
    json_t *s = json_object_get(c, key);
    json_t *m = json_object_get(s, "median");
    if (!json_is_number(m))
        return 0;
    *med = json_number_value(m);
    if (lo)
        *lo = json_number_value(json_object_get(s, "min"));
    if (hi)
        *hi = json_number_value(json_object_get(s, "max"));
    return 1;
}

static void extend(chart *ch, double v)
{
    if (v <= 0)
        return;
    if (ch->vmin == 0 || v < ch->vmin)
        ch->vmin = v;
    if (v > ch->vmax)
        ch->vmax = v;
}

/* One case of the summary into its cell. */
static void take(chart *ch, json_t *c)
{
    int w = index_of(ch->workloads, ch->nw, json_string_value(json_object_get(c, "workload")));
    int t = index_of(ch->targets, ch->nt, json_string_value(json_object_get(c, "target")));
    if (w < 0 || t < 0 || json_integer_value(json_object_get(c, "threads")) != ch->threads)
        return;
    cell *x = &ch->c[w][t];
    if (!strcmp(ch->metric, "tps")) {
        x->known[0] = stat_of(c, "tps", &x->v[0], &x->lo, &x->hi);
        x->has_range = x->known[0];
        if (x->known[0])
            extend(ch, x->lo), extend(ch, x->hi);
    } else if (!strcmp(ch->metric, "rt")) {
        x->known[0] = stat_of(c, "round_trips_per_event", &x->v[0], NULL, NULL);
    } else {
        x->known[0] = stat_of(c, "client_cpu_us_per_event", &x->v[0], NULL, NULL);
        x->known[1] = stat_of(c, "server_cpu_us_per_event", &x->v[1], NULL, NULL);
    }
    double sum = (x->known[0] ? x->v[0] : 0) + (x->known[1] ? x->v[1] : 0);
    extend(ch, sum);
    if (x->known[0])
        extend(ch, x->v[0]);
}

/* Log axis from a power of ten below vmin to one above vmax. */
static double ylog(double lo_exp, double hi_exp, double v)
{
    double l = log10(v > 0 ? v : pow(10, lo_exp));
    return TOP + PLOT_H - (l - lo_exp) / (hi_exp - lo_exp) * PLOT_H;
}

static const char *title_of(const char *m)
{
    return !strcmp(m, "tps") ? "Transactions per second (median of the timed runs, whisker: range)"
           : !strcmp(m, "rt")
               ? "Round trips per event (loopback capture)"
               : "CPU per event, µs: client (sysbench process, solid) + server (light)";
}

static void axis(FILE *f, double lo, double hi, int width)
{
    for (int e = (int)lo; e <= (int)hi; e++)
        for (int m = 1; m <= 5; m += (m == 1 ? 1 : 3)) { /* 1, 2, 5 x 10^e */
            double v = m * pow(10, e);
            if (log10(v) > hi + 1e-9)
                break;
            double y = ylog(lo, hi, v);
            fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"%s/>\n",
                    LEFT, y, width - 20, y, m == 1 ? "" : " stroke-dasharray=\"2,3\"");
            fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\">%g</text>\n", LEFT - 6, y + 4, v);
        }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LEFT,
            TOP + PLOT_H, width - 20, TOP + PLOT_H);
}

static void bar(FILE *f, double x, double y0, double y1, const char *color, double opacity)
{
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
            "fill-opacity=\"%.2f\"/>\n",
            x, y1, BAR_W - 2, y0 - y1 > 0 ? y0 - y1 : 0, color, opacity);
}

static void cell_svg(FILE *f, const cell *x, double bx, double lo, double hi, const char *color)
{
    double base = TOP + PLOT_H;
    if (!x->known[0] && !x->known[1]) {
        fprintf(
            f,
            "<text class=\"na\" x=\"%.1f\" y=\"%d\" transform=\"rotate(-90 %.1f %d)\">n/a</text>\n",
            bx + BAR_W / 2.0 + 3, TOP + PLOT_H - 4, bx + BAR_W / 2.0 + 3, TOP + PLOT_H - 4);
        return;
    }
    double v0 = x->known[0] ? x->v[0] : 0, top = ylog(lo, hi, v0);
    if (x->known[0])
        bar(f, bx, base, top, color, 1.0);
    if (x->known[1]) { /* server CPU stacked on the client's: the bar's top is the sum */
        double sum_top = ylog(lo, hi, v0 + x->v[1]);
        bar(f, bx, x->known[0] ? top : base, sum_top, color, 0.35);
    }
    if (x->has_range) {
        double cx = bx + (BAR_W - 2) / 2.0;
        fprintf(f, "<line class=\"whisk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", cx,
                ylog(lo, hi, x->lo), cx, ylog(lo, hi, x->hi));
    }
}

static void render(FILE *f, const chart *ch)
{
    double lo = floor(log10(ch->vmin)), hi = ceil(log10(ch->vmax));
    if (hi <= lo)
        hi = lo + 1;
    int group = ch->nt * BAR_W + GAP;
    int width = LEFT + ch->nw * group + 40, height = TOP + PLOT_H + 150 + ch->nt * 18;
    if (width < 640)
        width = 640;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
            "%d\">\n<style>\ntext { font-family: sans-serif; fill: #222; }\n"
            ".title { font-size: 15px; font-weight: bold; }\n.tick { font-size: 11px; "
            "text-anchor: end; fill: #555; }\n.xlab { font-size: 11px; text-anchor: end; }\n"
            ".na { font-size: 9px; fill: #999; }\n.leg { font-size: 12px; }\n"
            ".grid { stroke: #ddd; stroke-width: 1; }\n.axis { stroke: #333; stroke-width: 1; }\n"
            ".whisk { stroke: #222; stroke-width: 1; }\n</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
    fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\">", LEFT);
    rt_xml_text(f, title_of(ch->metric));
    fprintf(f, ", %d thread%s, log scale</text>\n", ch->threads, ch->threads == 1 ? "" : "s");
    axis(f, lo, hi, width);
    for (int w = 0; w < ch->nw; w++) {
        double gx = LEFT + 10 + w * group;
        for (int t = 0; t < ch->nt; t++)
            cell_svg(f, &ch->c[w][t], gx + t * BAR_W, lo, hi, rt_color(t));
        double lx = gx + ch->nt * BAR_W / 2.0;
        fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%d\" transform=\"rotate(-35 %.1f %d)\">",
                lx, TOP + PLOT_H + 16, lx, TOP + PLOT_H + 16);
        rt_xml_text(f, ch->workloads[w]);
        fputs("</text>\n", f);
    }
    int y = TOP + PLOT_H + 140;
    for (int t = 0; t < ch->nt; t++, y += 18) {
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", LEFT,
                y - 10, rt_color(t));
        fprintf(f, "<text class=\"leg\" x=\"%d\" y=\"%d\">", LEFT + 18, y);
        rt_xml_text(f, ch->targets[t]);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

int rt_compare_svg(FILE *f, const char *summary_path, const char *metric, int threads)
{
    if (strcmp(metric, "tps") && strcmp(metric, "cpu") && strcmp(metric, "rt")) {
        fprintf(stderr, "fbwire-report: --metric takes tps, cpu or rt\n");
        return -1;
    }
    static chart ch; /* large; one chart per process */
    memset(&ch, 0, sizeof ch);
    ch.metric = metric;
    ch.threads = threads;
    json_error_t e;
    json_t *root = json_load_file(summary_path, 0, &e);
    if (!root) {
        fprintf(stderr, "fbwire-report: %s: %s (line %d)\n", summary_path, e.text, e.line);
        return -1;
    }
    int rc = -1;
    const char *fmt = json_string_value(json_object_get(root, "format"));
    json_t *v;
    size_t i;
    if (!fmt || strcmp(fmt, "fbwire-compare-summary/1")) {
        fprintf(stderr, "fbwire-report: %s is not an fbwire-compare summary\n", summary_path);
        goto done;
    }
    json_array_foreach(json_object_get(root, "targets"), i,
                       v) if (json_is_string(v) && ch.nt < MAX_T) ch.targets[ch.nt++] =
        json_string_value(v);
    json_array_foreach(json_object_get(root, "workloads"), i,
                       v) if (json_is_string(v) && ch.nw < MAX_W) ch.workloads[ch.nw++] =
        json_string_value(v);
    json_array_foreach(json_object_get(root, "cases"), i, v) take(&ch, v);
    if (ch.vmax <= 0) {
        fprintf(stderr, "fbwire-report: %s: no %s figures at %d thread(s)\n", summary_path, metric,
                threads);
        goto done;
    }
    render(f, &ch);
    rc = 0;
done:
    json_decref(root);
    return rc;
}
