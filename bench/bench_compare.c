/*
 * The regression guard of `make bench-quick` (bench_report.h): every figure
 * of a new results.json more than a threshold worse than the same figure
 * of the committed one. Rows match by kind, tokenizer, grammar and their
 * variant / size; figures by their JSON path inside the row. A report,
 * never a failure: timing noise on a shared machine is expected.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_report.h"

/* Identity of a row. */
static void row_key(const json_t *r, char *buf, size_t cap)
{
    const char *kind = json_string_value(json_object_get(r, "kind"));
    const char *tok = json_string_value(json_object_get(r, "tokenizer"));
    const char *g = json_string_value(json_object_get(r, "grammar"));
    const char *var = json_string_value(json_object_get(r, "variant"));
    const json_t *kept = json_object_get(r, "ids_kept");
    const json_t *k = json_object_get(r, "statement_kinds");
    char extra[64] = "";
    if (json_is_integer(kept))
        snprintf(extra, sizeof extra, " ids=%lld", (long long)json_integer_value(kept));
    else if (json_is_string(kept))
        snprintf(extra, sizeof extra, " ids=all");
    else if (json_is_integer(k))
        snprintf(extra, sizeof extra, " k=%lld", (long long)json_integer_value(k));
    snprintf(buf, cap, "%s %s%s%s%s%s%s", kind ? kind : "?", tok ? tok : "", g ? " x " : "",
             g ? g : "", var ? ": " : "", var ? var : "", extra);
}

/*
 * The headline figures compared, by JSON path inside a row: +1 when lower is
 * better, -1 when higher is. CPU seconds and step-min percentiles rather than
 * wall times and best-run maxima (note [timing hygiene] in bench_util.h);
 * instruction counts are exact.
 */
static const struct figure {
    const char *path;
    int dir;
} FIGURES[] = {
    {"ir_per_mask_1k", 1},     {"ir_per_mask", 1},          {"eager_cpu_s", 1},
    {"preprocess_cpu_s", 1},   {"lazy_first_mask_ms", 1},   {"gmc_first_mask_ms", 1},
    {"mask.stepmin.mean_us", 1}, {"mask.stepmin.p99_us", 1}, {"peak_rss_mb", 1},
    {"gmc_mb", 1},             {"stats.table_mb", 1},       {"stats.memory_mb", 1},
    {"matcher_bytes", 1},      {"speedup", -1},             {"decode_speedup", -1},
};

typedef struct cmp_state {
    double threshold;
    int regressions, compared;
    const char *row;
} cmp_state;

static double at(const json_t *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && o; tok = strtok(NULL, "."))
        o = json_object_get(o, tok);
    return o && json_is_number(o) ? json_number_value(o) : NAN;
}

static void compare_row(cmp_state *s, const json_t *o, const json_t *n)
{
    for (size_t i = 0; i < sizeof FIGURES / sizeof *FIGURES; i++) {
        double a = at(o, FIGURES[i].path), b = at(n, FIGURES[i].path);
        if (!(a > 0) || isnan(b))
            continue;
        s->compared++;
        double worse = FIGURES[i].dir > 0 ? (b - a) / a : (a - b) / a;
        if (worse > s->threshold) {
            printf("  %-52s %-22s %12.4g -> %-12.4g (%+.0f%%)%s\n", s->row, FIGURES[i].path, a,
                   b, 100.0 * (b - a) / a, !strncmp(FIGURES[i].path, "ir_", 3) ? "  exact" : "");
            s->regressions++;
        }
    }
}

int bm_compare(json_t *old, json_t *new, double threshold)
{
    cmp_state s = {threshold, 0, 0, NULL};
    const json_t *orows = json_object_get(old, "rows"), *nrows = json_object_get(new, "rows");
    const json_t *om = json_object_get(old, "meta"), *nm = json_object_get(new, "meta");
    printf("bench-quick: figures more than %.0f%% worse than the baseline (%s, commit %s, "
           "load %.1f..%.1f; now load %.1f..%.1f)\n",
           threshold * 100, json_string_value(json_object_get(om, "date")),
           json_string_value(json_object_get(om, "commit")),
           json_number_value(json_object_get(om, "loadavg_min")),
           json_number_value(json_object_get(om, "loadavg_max")),
           json_number_value(json_object_get(nm, "loadavg_min")),
           json_number_value(json_object_get(nm, "loadavg_max")));
    size_t i, j;
    json_t *nr, *or;
    int matched = 0;
    json_array_foreach(nrows, i, nr) {
        char nk[512], ok[512];
        row_key(nr, nk, sizeof nk);
        const json_t *found = NULL;
        json_array_foreach(orows, j, or) {
            row_key(or, ok, sizeof ok);
            if (!strcmp(nk, ok)) {
                found = or;
                break;
            }
        }
        const char *nerr = json_string_value(json_object_get(nr, "error"));
        const char *nst = json_string_value(json_object_get(nr, "status"));
        if (nerr)
            printf("  %-58s ERROR: %s\n", nk, nerr);
        if (nst && strcmp(nst, "ok"))
            printf("  %-58s status %s\n", nk, nst);
        if (!found)
            continue;
        matched++;
        const char *ost = json_string_value(json_object_get(found, "status"));
        if (ost && nst && !strcmp(ost, "ok") && strcmp(nst, "ok"))
            s.regressions++;
        s.row = nk;
        compare_row(&s, found, nr);
    }
    printf("bench-quick: %d rows matched, %d figures compared, %d more than %.0f%% worse "
           "(CPU and step-min times still move with the machine's load; Ir counts are exact)\n",
           matched, s.compared, s.regressions, threshold * 100);
    return s.regressions;
}
