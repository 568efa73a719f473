/* SPDX-License-Identifier: MIT */
/* replay.c - the slowest statement fingerprints of an `fbwire-pcap replay --json` output as
 * horizontal bars (reporttool.h, rt_replay_svg), drawn with render.c's SVG writer. */
#include "reporttool.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#define WIDTH 960
#define LAB_X 112        /* right edge of the series labels */
#define X0 120           /* plot left */
#define X1 (WIDTH - 110) /* plot right; values are written after the bar */
#define TOP 96           /* first group */
#define BAR_H 11
#define BAR_GAP 2
#define GROUP_H (20 + 4 * (BAR_H + BAR_GAP) + 14)
#define CHAR_W 7.3 /* advance of 12px monospace text (about 0.6 em), for fitting labels */

typedef struct series {
    const char *name, *side, *key;
    int color;
    double opacity;
} series;

static const series SERIES[4] = {{"capture p50", "capture", "p50_ms", 0, 1.0},
                                 {"capture p95", "capture", "p95_ms", 0, 0.45},
                                 {"replay p50", "replay", "p50_ms", 1, 1.0},
                                 {"replay p95", "replay", "p95_ms", 1, 0.45}};

/* A latency of one statement; -1 when the JSON has null (nothing measured). */
static double latency(json_t *st, const series *s)
{
    json_t *v = json_object_get(json_object_get(st, s->side), s->key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* Write s cut to at most max characters (UTF-8 aware), "…" marking a cut. */
static void fitted_text(FILE *f, const char *s, int max)
{
    int chars = 0;
    size_t i = 0, cut = 0;
    for (; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == max - 1)
                cut = i;
            chars++;
        }
    if (chars <= max) {
        rt_xml_text(f, s);
        return;
    }
    char buf[1024];
    if (cut >= sizeof buf)
        cut = sizeof buf - 1;
    memcpy(buf, s, cut);
    buf[cut] = 0;
    rt_xml_text(f, buf);
    fputs("…", f);
}

static void chart(FILE *f, json_t *doc, json_t *stmts, int n, int total)
{
    json_t *load = json_object_get(doc, "load");
    /* log scale, whole decades: p95 and the COMMITs are often 10-100 times the p50 of a point
     * select, and the p50 comparison must stay readable */
    double maxv = 0, minv = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            double v = latency(json_array_get(stmts, (size_t)i), &SERIES[k]);
            if (v > maxv)
                maxv = v;
            if (v > 0 && (minv == 0 || v < minv))
                minv = v;
        }
    double lo = minv > 0 ? floor(log10(minv)) : -1, hi = maxv > 0 ? ceil(log10(maxv)) : 0;
    if (hi <= lo)
        hi = lo + 1;
    int height = TOP + n * GROUP_H + 50;
    rt_svg_begin(f, WIDTH, height);
    fputs("<style>.stmt { font-size: 12px; font-family: monospace; } "
          ".meta { font-size: 11px; fill: #666; }</style>\n",
          f);
    fprintf(f, "<text class=\"title\" x=\"20\" y=\"26\">Slowest statements of the replay: latency "
               "in the capture and in the replay</text>\n");
    json_t *db = json_object_get(doc, "database"), *pace = json_object_get(load, "pace");
    fprintf(f,
            "<text class=\"sub\" x=\"20\" y=\"44\">%d of %d fingerprints, slowest first (replay "
            "time in total); ms from request to last reply; pace %s, wall %.3f s for a %.3f s "
            "capture</text>\n",
            n, total, json_is_string(pace) ? json_string_value(pace) : "?",
            json_number_value(json_object_get(load, "wall_s")),
            json_number_value(json_object_get(load, "capture_s")));
    fputs("<text class=\"sub\" x=\"20\" y=\"60\">replayed on ", f);
    fitted_text(f, json_is_string(db) ? json_string_value(db) : "?", 120);
    fputs("</text>\n", f);
    /* scale: decades on top, grid through every group */
    int gy0 = TOP - 12, gy1 = TOP + n * GROUP_H - 10;
    for (double d = lo; d <= hi + 0.5; d += 1) {
        for (int m = 1; m <= (d < hi ? 9 : 1); m++) {
            double x = X0 + (d + log10(m) - lo) / (hi - lo) * (X1 - X0);
            fprintf(f, "<line class=\"grid\"%s x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n",
                    m == 1 ? "" : " stroke-opacity=\"0.35\"", x, x, gy0, gy1);
            if (m == 1)
                fprintf(f,
                        "<text class=\"tick\" x=\"%.1f\" y=\"%d\" style=\"text-anchor: "
                        "middle\">%g</text>\n",
                        x, gy0 - 4, pow(10, d));
        }
    }
    fprintf(f,
            "<text class=\"tick\" x=\"%d\" y=\"%d\" style=\"text-anchor: start\">ms (log "
            "scale)</text>\n",
            X1 + 28, gy0 - 4);
    int max_stmt = (int)((WIDTH - 40) / CHAR_W);
    for (int i = 0; i < n; i++) {
        json_t *st = json_array_get(stmts, (size_t)i);
        json_t *sql = json_object_get(st, "statement"), *ratio = json_object_get(st, "ratio");
        int y = TOP + i * GROUP_H;
        char meta[96];
        int ml = json_is_number(ratio)
                     ? snprintf(meta, sizeof meta, "%lld executions, replay/capture p50 %.2f",
                                (long long)json_integer_value(json_object_get(st, "count")),
                                json_number_value(ratio))
                     : snprintf(meta, sizeof meta, "%lld executions",
                                (long long)json_integer_value(json_object_get(st, "count")));
        fprintf(f, "<g class=\"fingerprint\" data-rank=\"%d\">\n<title>", i + 1);
        rt_xml_text(f, json_is_string(sql) ? json_string_value(sql) : "?");
        fprintf(f, "</title>\n<text class=\"stmt\" x=\"20\" y=\"%d\">%d. ", y + 2, i + 1);
        fitted_text(f, json_is_string(sql) ? json_string_value(sql) : "?",
                    max_stmt - ml - 2 - (i + 1 >= 10 ? 4 : 3));
        fprintf(f, "<tspan class=\"meta\" dx=\"12\">%s</tspan></text>\n", meta);
        for (int k = 0; k < 4; k++) {
            double v = latency(st, &SERIES[k]);
            int by = y + 8 + k * (BAR_H + BAR_GAP);
            fprintf(f,
                    "<text class=\"rlab\" x=\"%d\" y=\"%d\" style=\"font-size: 10px\">%s</text>\n",
                    LAB_X, by + BAR_H - 1, SERIES[k].name);
            if (v < 0) {
                fprintf(f, "<text class=\"val\" x=\"%d\" y=\"%d\">n/a</text>\n", X0 + 4,
                        by + BAR_H - 1);
                continue;
            }
            double w = v <= 0 ? 0 : (log10(v) - lo) / (hi - lo) * (X1 - X0);
            if (v > 0 && w < 1)
                w = 1;
            fprintf(f,
                    "<rect class=\"bar\" data-fingerprint=\"%d\" data-series=\"%s\" "
                    "data-ms=\"%.3f\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
                    "fill-opacity=\"%.2f\"><title>%s: %.3f ms</title></rect>\n",
                    i + 1, SERIES[k].name, v, X0, by, w, BAR_H, rt_color(SERIES[k].color),
                    SERIES[k].opacity, SERIES[k].name, v);
            fprintf(f, "<text class=\"val\" x=\"%.1f\" y=\"%d\">%.3f</text>\n", X0 + w + 4,
                    by + BAR_H - 1, v);
        }
        fputs("</g>\n", f);
    }
    int ly = TOP + n * GROUP_H + 6;
    for (int k = 0; k < 4; k++) {
        int lx = 20 + k * 150;
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" "
                "fill-opacity=\"%.2f\"/>\n<text class=\"leg\" x=\"%d\" y=\"%d\">%s</text>\n",
                lx, ly, rt_color(SERIES[k].color), SERIES[k].opacity, lx + 20, ly + 12,
                SERIES[k].name);
    }
    fputs("</svg>\n", f);
}

int rt_replay_svg(FILE *f, const char *replay_json, int top)
{
    json_error_t je;
    json_t *doc = json_load_file(replay_json, 0, &je);
    if (!doc) {
        fprintf(stderr, "fbwire-report: %s:%d: %s\n", replay_json, je.line, je.text);
        return -1;
    }
    json_t *stmts = json_object_get(json_object_get(doc, "load"), "statements");
    int rc = 0;
    if (!json_is_array(stmts)) {
        fprintf(stderr,
                "fbwire-report: %s: not `fbwire-pcap replay --json` output (no "
                "load.statements; --list output has none)\n",
                replay_json);
        rc = -1;
    } else if (json_array_size(stmts) == 0) {
        fprintf(stderr, "fbwire-report: %s: the replay has no statements\n", replay_json);
        rc = -1;
    } else {
        int total = (int)json_array_size(stmts);
        chart(f, doc, stmts, top < total ? top : total, total);
    }
    json_decref(doc);
    return rc;
}
