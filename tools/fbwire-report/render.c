/* SPDX-License-Identifier: MIT */
/* render.c - Markdown table and SVG chart of several runs. */
#include "reporttool.h"

#include <math.h>
#include <string.h>

#define PREPARE_ID "prepare"
#define SESSION_ID "session"

static const char *const COLORS[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                     "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
#define NCOLORS (sizeof COLORS / sizeof COLORS[0])

static const rt_class *find_class(const rt_run *r, const char *id)
{
    for (int i = 0; i < r->ncls; i++)
        if (!strcmp(r->cls[i].id, id))
            return &r->cls[i];
    return NULL;
}

static const rt_op *find_op(const rt_run *r, const char *name)
{
    for (int i = 0; i < r->nops; i++)
        if (!strcmp(r->ops[i].name, name))
            return &r->ops[i];
    return NULL;
}

/* Statement classes present in any run, in first-seen order (the drivers write a fixed order). */
static int union_classes(const rt_run *runs, int n, const rt_class **out, int with_pseudo)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < runs[i].ncls; c++) {
            const rt_class *x = &runs[i].cls[c];
            if (!with_pseudo && (!strcmp(x->id, PREPARE_ID) || !strcmp(x->id, SESSION_ID)))
                continue;
            int seen = 0;
            for (int j = 0; j < k && !seen; j++)
                seen = !strcmp(out[j]->id, x->id);
            if (!seen && k < RT_MAX_CLASSES * 2)
                out[k++] = x;
        }
    return k;
}

/* ---------------------------------------------------------------- Markdown */

static void cell(FILE *f, double v, double base, int is_base, const char *fmt, int known)
{
    if (!known) {
        fputs(" – |", f);
        return;
    }
    fputc(' ', f);
    fprintf(f, fmt, v);
    if (!is_base && base > 0)
        fprintf(f, " (%.2f×)", v / base);
    fputs(" |", f);
}

static void header(FILE *f, const char *first, int n)
{
    fprintf(f, "| %s |", first);
    for (int i = 0; i < n; i++)
        fprintf(f, " run %d |", i + 1);
    fputs("\n|---|", f);
    for (int i = 0; i < n; i++)
        fputs("---:|", f);
    fputc('\n', f);
}

typedef double (*metric_fn)(const rt_run *r, int *known);

static double m_tps(const rt_run *r, int *k) { *k = !r->is_capture; return r->tps; }
static double m_qps(const rt_run *r, int *k) { *k = !r->is_capture; return r->qps; }
static double m_rte(const rt_run *r, int *k) { *k = !r->is_capture && r->has_rte; return r->rt_per_event; }
static double m_rtt(const rt_run *r, int *k) { *k = !r->is_capture && r->has_rtt; return r->rt_per_transaction; }
static double m_rts(const rt_run *r, int *k) { *k = !r->is_capture; return r->rt_per_second; }
static double m_rt(const rt_run *r, int *k) { *k = 1; return r->round_trips; }
static double m_wait(const rt_run *r, int *k) { *k = !r->is_capture; return r->wait_share * 100; }
static double m_cpue(const rt_run *r, int *k) { *k = r->has_cpu; return r->cpu_us_per_event; }
static double m_cpus(const rt_run *r, int *k) { *k = r->has_cpu; return r->cpu_us_per_execution; }
static double m_spr(const rt_run *r, int *k) { *k = r->stmts_per_rt > 0; return r->stmts_per_rt; }
static double m_srve(const rt_run *r, int *k)
{
    *k = r->has_server_cpu;
    return r->server_us_per_event;
}
static double m_srvs(const rt_run *r, int *k)
{
    *k = r->has_server_cpu;
    return r->server_us_per_execution;
}

static void metric_row(FILE *f, const char *name, const char *fmt, metric_fn fn, const rt_run *runs,
                       int n, int baseline)
{
    int kb;
    double base = fn(&runs[baseline], &kb);
    fprintf(f, "| %s |", name);
    for (int i = 0; i < n; i++) {
        int k;
        double v = fn(&runs[i], &k);
        cell(f, v, kb ? base : 0, i == baseline, fmt, k);
    }
    fputc('\n', f);
}

static void class_table(FILE *f, const rt_run *runs, int n, int baseline, int per_event)
{
    const rt_class *cls[RT_MAX_CLASSES * 2];
    int nc = union_classes(runs, n, cls, !per_event);
    header(f, "statement class", n);
    for (int c = 0; c < nc; c++) {
        fprintf(f, "| %s |", cls[c]->label);
        const rt_class *b = find_class(&runs[baseline], cls[c]->id);
        double base = b ? (per_event ? (runs[baseline].events > 0 ? b->round_trips / runs[baseline].events : 0)
                                     : b->round_trips / b->executions)
                        : 0;
        for (int i = 0; i < n; i++) {
            const rt_class *x = find_class(&runs[i], cls[c]->id);
            double v = !x ? 0 : per_event ? (runs[i].events > 0 ? x->round_trips / runs[i].events : 0)
                                          : x->round_trips / x->executions;
            cell(f, v, base, i == baseline, "%.3f", x != NULL);
        }
        fputc('\n', f);
    }
}

static void op_table(FILE *f, const rt_run *runs, int n)
{
    const char *names[RT_MAX_OPS * 4];
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int o = 0; o < runs[i].nops; o++) {
            int seen = 0;
            for (int j = 0; j < k && !seen; j++)
                seen = !strcmp(names[j], runs[i].ops[o].name);
            if (!seen && k < RT_MAX_OPS * 4)
                names[k++] = runs[i].ops[o].name;
        }
    header(f, "op code (sent / received per event)", n);
    for (int j = 0; j < k; j++) {
        fprintf(f, "| %s |", names[j]);
        for (int i = 0; i < n; i++) {
            const rt_op *o = find_op(&runs[i], names[j]);
            double ev = runs[i].events;
            if (!o)
                fputs(" 0 |", f);
            else if (ev > 0)
                fprintf(f, " %.3f / %.3f |", o->packets_sent / ev, o->packets_received / ev);
            else
                fprintf(f, " %.0f / %.0f |", o->packets_sent, o->packets_received);
        }
        fputc('\n', f);
    }
}

void rt_markdown(FILE *f, const rt_run *runs, int n, int baseline)
{
    fprintf(f, "## Firebird wire statistics: %d run%s, ratios to run %d\n\n", n, n == 1 ? "" : "s",
            baseline + 1);
    header(f, "", n);
    fputs("| file |", f);
    for (int i = 0; i < n; i++)
        fprintf(f, " `%s` |", runs[i].file);
    fputs("\n| driver |", f);
    for (int i = 0; i < n; i++) {
        char name[48];
        rt_run_name(&runs[i], name, sizeof name);
        fprintf(f, " %s |", name);
    }
    fputs("\n| server |", f);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s%s (protocol %d) |", runs[i].server[0] ? "Firebird " : "",
                runs[i].server[0] ? runs[i].server : "?", runs[i].protocol); /* 0: unknown */
    fputs("\n| script, threads |", f);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s, %d |", runs[i].script[0] ? runs[i].script : "–", runs[i].threads);
    fputs("\n| pipeline |", f);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s |", runs[i].pipeline[0] ? runs[i].pipeline : "–");
    fputc('\n', f);
    metric_row(f, "TPS (events/s)", "%.2f", m_tps, runs, n, baseline);
    metric_row(f, "QPS", "%.2f", m_qps, runs, n, baseline);
    metric_row(f, "**round trips per event**", "**%.3f**", m_rte, runs, n, baseline);
    metric_row(f, "round trips per transaction", "%.3f", m_rtt, runs, n, baseline);
    metric_row(f, "round trips per second", "%.1f", m_rts, runs, n, baseline);
    metric_row(f, "round trips (statements)", "%.0f", m_rt, runs, n, baseline);
    metric_row(f, "waiting on the server, % of thread time", "%.1f", m_wait, runs, n, baseline);
    metric_row(f, "client CPU in the driver, µs per event", "%.2f", m_cpue, runs, n, baseline);
    metric_row(f, "client CPU in the driver, µs per statement", "%.2f", m_cpus, runs, n, baseline);
    metric_row(f, "statements per round trip", "%.2f", m_spr, runs, n, baseline);
    metric_row(f, "server CPU, µs per event", "%.2f", m_srve, runs, n, baseline);
    metric_row(f, "server CPU, µs per statement", "%.2f", m_srvs, runs, n, baseline);
    fputs("\n### Round trips per event, by statement class\n\n", f);
    class_table(f, runs, n, baseline, 1);
    fputs("\n### Round trips per execution, by statement class\n\n", f);
    class_table(f, runs, n, baseline, 0);
    fputs("\n### Packets per event, by op code\n\n", f);
    op_table(f, runs, n);
}

/* ---------------------------------------------------------------- SVG */

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* A round axis maximum and its tick step for values up to v. */
double rt_nice_step(double v)
{
    if (v <= 0)
        return 1;
    double raw = v / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
}

#define BAR_W 20
#define GROUP_GAP 28
#define LEFT 70
#define TOP 70
#define PLOT_H 260

static double class_rt_per_event(const rt_run *r, const char *id)
{
    const rt_class *c = find_class(r, id);
    return c && r->events > 0 ? c->round_trips / r->events : 0;
}

/* Grouped bars: one group per statement class plus "all classes", one bar per run. */
static int bars_panel(FILE *f, const rt_run *runs, int n, int width)
{
    const rt_class *cls[RT_MAX_CLASSES * 2];
    int nc = union_classes(runs, n, cls, 0);
    double maxv = 0;
    for (int i = 0; i < n; i++) {
        if (runs[i].rt_per_event > maxv)
            maxv = runs[i].rt_per_event;
        for (int c = 0; c < nc; c++)
            if (class_rt_per_event(&runs[i], cls[c]->id) > maxv)
                maxv = class_rt_per_event(&runs[i], cls[c]->id);
    }
    double step = rt_nice_step(maxv), top = ceil(maxv / step) * step;
    if (top <= 0)
        top = 1;
    fprintf(f, "<text class=\"title\" x=\"%d\" y=\"28\">Round trips per sysbench event, by statement "
               "class</text>\n", LEFT);
    fprintf(f, "<text class=\"sub\" x=\"%d\" y=\"46\">class round trips / events; the last group "
               "is their sum, the headline figure</text>\n", LEFT);
    for (double t = 0; t <= top + step / 2; t += step) {
        double y = TOP + PLOT_H - t / top * PLOT_H;
        fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", LEFT,
                width - 20, y, y);
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\">%g</text>\n", LEFT - 6, y + 4, t);
    }
    int slots = 0;
    for (int i = 0; i < n; i++)
        slots += !runs[i].is_capture;
    int group_w = slots * BAR_W + GROUP_GAP;
    for (int g = 0; g <= nc; g++) {
        int x0 = LEFT + GROUP_GAP / 2 + g * group_w, slot = 0;
        const char *label = g < nc ? cls[g]->label : "all classes";
        fprintf(f, "<g class=\"group\" data-class=\"%s\">\n", g < nc ? cls[g]->id : "total");
        for (int i = 0; i < n; i++) {
            if (runs[i].is_capture)
                continue; /* a capture has no sysbench events */
            double v = g < nc ? class_rt_per_event(&runs[i], cls[g]->id) : runs[i].rt_per_event;
            double h = v / top * PLOT_H;
            int x = x0 + slot++ * BAR_W;
            fprintf(f, "  <rect class=\"bar\" data-run=\"%d\" x=\"%d\" y=\"%.1f\" width=\"%d\" "
                       "height=\"%.1f\" fill=\"%s\"><title>run %d: %.3f</title></rect>\n",
                    i + 1, x, TOP + PLOT_H - h, BAR_W - 2, h, COLORS[i % NCOLORS], i + 1, v);
            if (v > 0)
                fprintf(f, "  <text class=\"val\" transform=\"translate(%d,%.1f) rotate(-90)\">%.2f"
                           "</text>\n", x + BAR_W / 2 + 3, TOP + PLOT_H - h - 4, v);
        }
        fprintf(f, "  <text class=\"xlab\" transform=\"translate(%d,%d) rotate(-35)\">", x0 + slots * BAR_W / 2,
                TOP + PLOT_H + 14);
        xml_text(f, label);
        fputs("</text>\n</g>\n", f);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", LEFT, width - 20,
            TOP + PLOT_H, TOP + PLOT_H);
    return TOP + PLOT_H + 110;
}

/* Horizontal bars: TPS per run, with the ratio to the baseline. */
static int tps_panel(FILE *f, const rt_run *runs, int n, int baseline, int width, int y0)
{
    double maxv = 0;
    for (int i = 0; i < n; i++)
        if (runs[i].tps > maxv)
            maxv = runs[i].tps;
    fprintf(f, "<text class=\"title\" x=\"%d\" y=\"%d\">Throughput per run (sysbench events per "
               "second)</text>\n", LEFT, y0);
    int label_w = 250, bar_max = width - LEFT - label_w - 230, y = y0 + 20;
    for (int i = 0; i < n; i++, y += 30) {
        char name[48];
        rt_run_name(&runs[i], name, sizeof name);
        double w = maxv > 0 ? runs[i].tps / maxv * bar_max : 0;
        if (runs[i].is_capture) {
            fprintf(f, "<text class=\"rlab\" x=\"%d\" y=\"%d\">run %d: capture</text>\n"
                       "<text class=\"val2\" x=\"%d\" y=\"%d\">%.0f round trips in the capture, no "
                       "sysbench events</text>\n", LEFT + label_w - 8, y + 15, i + 1, LEFT + label_w,
                    y + 15, runs[i].round_trips);
            continue;
        }
        fprintf(f, "<text class=\"rlab\" x=\"%d\" y=\"%d\">run %d: ", LEFT + label_w - 8, y + 15, i + 1);
        xml_text(f, name);
        fprintf(f, "</text>\n<rect class=\"tps\" data-run=\"%d\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                   "height=\"22\" fill=\"%s\"/>\n", i + 1, LEFT + label_w, y, w, COLORS[i % NCOLORS]);
        double base = runs[baseline].tps;
        fprintf(f, "<text class=\"val2\" x=\"%.1f\" y=\"%d\">%.1f", LEFT + label_w + w + 6, y + 15,
                runs[i].tps);
        if (i != baseline && base > 0)
            fprintf(f, " (%.2f× run %d)", runs[i].tps / base, baseline + 1);
        fputs("</text>\n", f);
    }
    return y + 10;
}

static int legend(FILE *f, const rt_run *runs, int n, int y0)
{
    int y = y0 + 10;
    for (int i = 0; i < n; i++, y += 20) {
        char name[48];
        rt_run_name(&runs[i], name, sizeof name);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", LEFT, y,
                COLORS[i % NCOLORS]);
        fprintf(f, "<text class=\"leg\" x=\"%d\" y=\"%d\">run %d: ", LEFT + 20, y + 12, i + 1);
        xml_text(f, name);
        char proto[12] = "?";
        if (runs[i].protocol > 0)
            snprintf(proto, sizeof proto, "%d", runs[i].protocol);
        if (runs[i].is_capture)
            fprintf(f, ", protocol %s, %d connection%s — ", proto, runs[i].threads,
                    runs[i].threads == 1 ? "" : "s");
        else
            fprintf(f, ", Firebird %s, protocol %s, %s, %d thread%s — ",
                    runs[i].server[0] ? runs[i].server : "?", proto,
                    runs[i].script[0] ? runs[i].script : "?", runs[i].threads,
                    runs[i].threads == 1 ? "" : "s");
        xml_text(f, runs[i].file);
        fputs("</text>\n", f);
    }
    return y + 10;
}

void rt_svg(FILE *f, const rt_run *runs, int n, int baseline)
{
    const rt_class *cls[RT_MAX_CLASSES * 2];
    int nc = union_classes(runs, n, cls, 0);
    int slots = 0;
    for (int i = 0; i < n; i++)
        slots += !runs[i].is_capture;
    int width = LEFT + (nc + 1) * (slots * BAR_W + GROUP_GAP) + 40;
    if (width < 900)
        width = 900;
    int height = TOP + PLOT_H + 110 + 40 + n * 30 + 30 + n * 20 + 30;
    rt_svg_begin(f, width, height);
    int y = bars_panel(f, runs, n, width);
    y = tps_panel(f, runs, n, baseline, width, y + 30);
    legend(f, runs, n, y);
    fputs("</svg>\n", f);
}

/* ---------------------------------------------------------------- shared with compare.c, replay.c */

/* The document, its classes (title, sub, tick, xlab, val, val2, rlab, leg, grid, axis) and a
 * white background; the caller ends it with "</svg>". */
void rt_svg_begin(FILE *f, int width, int height)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
               "<style>\n"
               "text { font-family: sans-serif; fill: #222; }\n"
               ".title { font-size: 16px; font-weight: bold; }\n"
               ".sub { font-size: 11px; fill: #666; }\n"
               ".tick { font-size: 11px; text-anchor: end; fill: #555; }\n"
               ".xlab { font-size: 12px; text-anchor: end; }\n"
               ".val { font-size: 10px; fill: #333; }\n"
               ".val2 { font-size: 12px; }\n"
               ".rlab { font-size: 12px; text-anchor: end; }\n"
               ".leg { font-size: 12px; }\n"
               ".grid { stroke: #ddd; stroke-width: 1; }\n"
               ".axis { stroke: #333; stroke-width: 1; }\n"
               "</style>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
}

const char *rt_color(int i) { return COLORS[(size_t)i % NCOLORS]; }

void rt_xml_text(FILE *f, const char *s) { xml_text(f, s); }
