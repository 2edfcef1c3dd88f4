/*
 * REPORT.md and plots from a results.json of bench_masks (bench_report.h).
 * Everything shown comes from the results file, so `bench_masks report DIR`
 * rebuilds the report of a past run.
 */
#include "bench/bench_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parser/bundled.h"

/* The seed paper's own figures (Park, Zhou, D'Antoni, "Flexible and Efficient
 * Grammar-Constrained Decoding", ICML 2025, Table 1, GreatGramma), as restated
 * in issues 4 and 7. */
static const char PAPER_REF[] =
    "K. Park, T. Zhou, L. D'Antoni, \"Flexible and Efficient Grammar-Constrained Decoding\", "
    "ICML 2025 (PMLR 267), Table 1: GreatGramma's offline preprocessing 25–261 s and online "
    "masking 5–32 ms per token over its Go, Java and Python grammars and its tokenizers "
    "(the ranges restated in issues 4 and 7; the paper's own machine, Python implementation)";

/* The number at a dotted path of o, or NAN. */
static double num(const json_t *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *cur = o;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = json_object_get(cur, tok);
    return cur && json_is_number(cur) ? json_number_value(cur) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A number with d decimals, or an em dash when missing. Rotating static buffers. */
static const char *f(double v, int d)
{
    static char bufs[16][48];
    static int k;
    char *b = bufs[k++ & 15];
    if (isnan(v))
        return "—";
    if (d < 0) {
        /* Significant digits: 3, at most 2 decimals. */
        d = fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2;
    }
    snprintf(b, 48, "%.*f", d, v);
    return b;
}

static const char *check(double v, double limit)
{
    if (isnan(v))
        return "—";
    return v <= limit ? "✓" : "✗";
}

/* ✓/✗ for v, and when v fails but the more robust figure alt passes, "✗ (what ✓)". */
static const char *check2(double v, double alt, double limit, const char *what)
{
    static char bufs[8][64];
    static int k;
    char *b = bufs[k++ & 7];
    if (isnan(v) || v <= limit || isnan(alt))
        return check(v, limit);
    snprintf(b, 64, "✗ (%s %s)", what, check(alt, limit));
    return b;
}

static bool is_kind(const json_t *row, const char *kind) { return !strcmp(str(row, "kind"), kind); }

static bool is_code(const char *g) { return strcmp(g, "json") != 0; }

/* The .gmc size, flagged when the file could not be written or loaded back. */
static const char *gmc_cell(const json_t *r)
{
    static char b[64];
    if (!json_object_get(r, "gmc_error"))
        return f(num(r, "gmc_mb"), 2);
    snprintf(b, sizeof b, "%s, **does not load** (below)", f(num(r, "gmc_mb"), 2));
    return b;
}

static void gmc_errors(FILE *out, const json_t *rows)
{
    size_t i;
    json_t *r;
    int n = 0;
    json_array_foreach(rows, i, r) {
        const char *e = str(r, "gmc_error");
        if (!is_kind(r, "table") || !*e)
            continue;
        if (!n++)
            fprintf(out, "Compiled files that fail (the other figures of these rows stand):\n\n");
        fprintf(out, "- %s × %s: `%s`\n", str(r, "tokenizer"), str(r, "grammar"), e);
    }
    if (n)
        fprintf(out, "\n");
}

static void table1(FILE *out, const json_t *rows)
{
    fprintf(out,
            "| tokenizer | grammar | true tokens | eager s (CPU s) | first mask ms | mean µs | p50 µs | "
            "p99 µs | max µs | step-min mean / p99 / max µs | Ir/mask | peak RSS MB | .gmc MB |\n"
            "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "table"))
            continue;
        if (json_object_get(r, "error")) {
            fprintf(out, "| %s | %s | ERROR: %s | | | | | | | | | | |\n", str(r, "tokenizer"),
                    str(r, "grammar"), str(r, "error"));
            continue;
        }
        const char *status = str(r, "status");
        char allowed[160];
        if (!strcmp(status, "ok"))
            snprintf(allowed, sizeof allowed, "all %s", f(num(r, "mask.steps"), 0));
        else {
            const json_t *fm = json_object_get(json_object_get(r, "mask"), "first_masked");
            snprintf(allowed, sizeof allowed, "**FAILED** (%s step %s)",
                     fm ? str(fm, "file") : "EOS at end", fm ? f(num(fm, "step"), 0) : "");
        }
        fprintf(out, "| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s / %s / %s | %s | %s | %s |\n",
                str(r, "tokenizer"), str(r, "grammar"), allowed, f(num(r, "eager_s"), 3),
                f(num(r, "eager_cpu_s"), 3),
                f(num(r, "lazy_first_mask_ms"), 1), f(num(r, "mask.best.mean_us"), 2),
                f(num(r, "mask.best.p50_us"), 2), f(num(r, "mask.best.p99_us"), 1),
                f(num(r, "mask.best.max_us"), -1), f(num(r, "mask.stepmin.mean_us"), 2),
                f(num(r, "mask.stepmin.p99_us"), 1), f(num(r, "mask.stepmin.max_us"), -1),
                f(num(r, "ir_per_mask"), 0),
                f(num(r, "peak_rss_mb"), 0), gmc_cell(r));
    }
    fprintf(out, "| seed paper (GreatGramma) | Go, Java, Python | — | 25–261 | — | 5,000–32,000 "
                 "| — | — | — | — | — | — | — |\n\n");
    gmc_errors(out, rows);
}

static void table1_details(FILE *out, const json_t *rows)
{
    fprintf(out,
            "| tokenizer | grammar | tokenizer load ms | grammar ms | lexer states | terminals | "
            "LR states | productions | classes | tables MB | memory MB | RSS after load MB | "
            "RSS in eager compile MB | .gmc load + first mask ms | lazy pass mean / max µs | "
            "accept µs | matcher bytes |\n"
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "table") || json_object_get(r, "error"))
            continue;
        fprintf(out,
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s "
                "| %s | %s |\n",
                str(r, "tokenizer"), str(r, "grammar"), f(num(r, "tokenizer_load_ms"), 0),
                f(num(r, "grammar_ms"), 1), f(num(r, "stats.lexer_states"), 0),
                f(num(r, "stats.terminals"), 0), f(num(r, "stats.lr_states"), 0),
                f(num(r, "stats.productions"), 0), f(num(r, "stats.classes"), 0),
                f(num(r, "stats.table_mb"), 2), f(num(r, "stats.memory_mb"), 1),
                f(num(r, "loaded_rss_mb"), 0), f(num(r, "eager_rss_mb"), 0),
                f(num(r, "gmc_first_mask_ms"), 1), f(num(r, "lazy_walk.best.mean_us"), 1),
                f(num(r, "lazy_walk.best.max_us"), 0), f(num(r, "mask.accept_mean_us"), 2),
                f(num(r, "matcher_bytes"), 0));
    }
    fprintf(out, "\n");
}

static void targets(FILE *out, const json_t *rows)
{
    fprintf(out, "| tokenizer | grammar | eager ≤ 2 s | peak RSS ≤ 1 GB | first mask ≤ 50 ms | "
                 "mean ≤ 10 / 20 µs (llama3) | p99 ≤ 100 / 200 µs (llama3) |\n"
                 "|---|---|:-:|:-:|:-:|:-:|:-:|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "table") || json_object_get(r, "error"))
            continue;
        bool llama = !strcmp(str(r, "tokenizer"), "llama3");
        double mean_lim = is_code(str(r, "grammar")) ? 20 : 10;
        double p99_lim = is_code(str(r, "grammar")) ? 200 : 100;
        const char *mean = "n/a", *p99 = "n/a";
        if (llama) {
            mean = check2(num(r, "mask.best.mean_us"), num(r, "mask.stepmin.mean_us"), mean_lim,
                          "step-min");
            p99 = check2(num(r, "mask.best.p99_us"), num(r, "mask.stepmin.p99_us"), p99_lim,
                         "step-min");
        }
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n", str(r, "tokenizer"),
                str(r, "grammar"), check2(num(r, "eager_s"), num(r, "eager_cpu_s"), 2.0, "CPU"),
                check(num(r, "peak_rss_mb"), 1024), check(num(r, "lazy_first_mask_ms"), 50),
                mean, p99);
    }
    fprintf(out, "\n");
}

static void ablations(FILE *out, const json_t *rows)
{
    fprintf(out, "| grammar | engine | preprocessing s (CPU s) | tables MB | masks timed | mean µs | "
                 "p50 µs | p99 µs | max µs | Ir/mask | true tokens |\n"
                 "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "ablation"))
            continue;
        if (json_object_get(r, "error")) {
            fprintf(out, "| %s | %s | ERROR: %s | | | | | | | | |\n", str(r, "grammar"),
                    str(r, "variant"), str(r, "error"));
            continue;
        }
        char ok[160];
        const json_t *mk = json_object_get(r, "mask");
        if (json_object_get(mk, "mismatches")) {
            double mm = num(r, "mask.mismatches");
            snprintf(ok, sizeof ok, mm == 0 ? "sample (every %s-th step); masks = engine's"
                                            : "sample (every %s-th step); **%s masks differ**",
                     f(num(r, "mask.stride"), 0), f(mm, 0));
        } else {
            bool good = json_is_true(json_object_get(mk, "all_allowed")) &&
                        !json_is_false(json_object_get(mk, "eos_at_end"));
            snprintf(ok, sizeof ok, "%s", good ? "all" : "**FAILED**");
        }
        fprintf(out, "| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                str(r, "grammar"), str(r, "variant"), f(num(r, "preprocess_s"), 3),
                f(num(r, "preprocess_cpu_s"), 3),
                f(num(r, "stats.table_mb"), 2), f(num(r, "mask.steps"), 0),
                f(num(r, "mask.best.mean_us"), -1), f(num(r, "mask.best.p50_us"), -1),
                f(num(r, "mask.best.p99_us"), -1), f(num(r, "mask.best.max_us"), -1),
                f(num(r, "ir_per_mask"), 0), ok);
    }
    fprintf(out, "\n");
}

static void vocab_scaling(FILE *out, const json_t *rows)
{
    fprintf(out, "| grammar | ids kept | vocabulary | tokens (greedy / real BPE) | eager s (CPU s) | "
                 "tables MB | mean µs | p50 µs | p99 µs | max µs | true tokens |\n"
                 "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "vocab"))
            continue;
        json_t *kept = json_object_get(r, "ids_kept");
        char k[32];
        if (json_is_integer(kept))
            snprintf(k, sizeof k, "%lld", (long long)json_integer_value(kept));
        else
            snprintf(k, sizeof k, "all");
        if (json_object_get(r, "error")) {
            fprintf(out, "| %s | %s | ERROR: %s | | | | | | | | |\n", str(r, "grammar"), k,
                    str(r, "error"));
            continue;
        }
        fprintf(out, "| %s | %s | %s | %s / %s | %s (%s) | %s | %s | %s | %s | %s | %s |\n",
                str(r, "grammar"), k, f(num(r, "vocab_size"), 0), f(num(r, "greedy_tokens"), 0),
                f(num(r, "real_tokens"), 0), f(num(r, "eager_s"), 3), f(num(r, "eager_cpu_s"), 3),
                f(num(r, "stats.table_mb"), 2), f(num(r, "mask.best.mean_us"), 2),
                f(num(r, "mask.best.p50_us"), 2), f(num(r, "mask.best.p99_us"), 1),
                f(num(r, "mask.best.max_us"), -1),
                strcmp(str(r, "status"), "ok") ? "**FAILED**" : "all");
    }
    fprintf(out, "\n");
}

static void grammar_scaling(FILE *out, const json_t *rows)
{
    fprintf(out, "| grammar | workload | productions | terminals | LR states | lexer states | "
                 "eager s (CPU s) | tables MB | masks | mean µs | p50 µs | p99 µs | max µs |\n"
                 "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        bool tab = is_kind(r, "table") && !strcmp(str(r, "tokenizer"), "llama3");
        bool syn = is_kind(r, "grammar");
        if ((!tab && !syn) || json_object_get(r, "error"))
            continue;
        char name[64];
        if (syn)
            snprintf(name, sizeof name, "synthetic(%s)", f(num(r, "statement_kinds"), 0));
        else
            snprintf(name, sizeof name, "%s", str(r, "grammar"));
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s |\n",
                name, syn ? "random walks" : "corpus", f(num(r, "stats.productions"), 0),
                f(num(r, "stats.terminals"), 0), f(num(r, "stats.lr_states"), 0),
                f(num(r, "stats.lexer_states"), 0), f(num(r, "eager_s"), 3),
                f(num(r, "eager_cpu_s"), 3), f(num(r, "stats.table_mb"), 2),
                f(num(r, "mask.steps"), 0), f(num(r, "mask.best.mean_us"), 2),
                f(num(r, "mask.best.p50_us"), 2), f(num(r, "mask.best.p99_us"), 1),
                f(num(r, "mask.best.max_us"), -1));
    }
    fprintf(out, "\n");
}

static void batch(FILE *out, const json_t *rows)
{
    fprintf(out, "| grammar | matchers | decode loop, pool of 1 µs/mask | decode loop, pool of 2 "
                 "µs/mask | speedup 2 vs 1 (target ≥ 1.8) | after a gap: plain loop / pool of 1 / "
                 "pool of 2 µs/mask | speedup after a gap |\n"
                 "|---|--:|--:|--:|--:|--:|--:|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "batch"))
            continue;
        if (json_object_get(r, "error")) {
            fprintf(out, "| %s | ERROR: %s | | | | | |\n", str(r, "grammar"), str(r, "error"));
            continue;
        }
        fprintf(out, "| %s | %s | %s | %s | %s %s | %s / %s / %s | %s |\n",
                str(r, "grammar"), f(num(r, "matchers"), 0),
                f(num(r, "decode_t1_us_per_mask"), 2), f(num(r, "decode_t2_us_per_mask"), 2),
                f(num(r, "decode_speedup"), 2), num(r, "decode_speedup") >= 1.8 ? "✓" : "✗",
                f(num(r, "loop_us_per_mask"), 2), f(num(r, "t1_us_per_mask"), 2),
                f(num(r, "t2_us_per_mask"), 2), f(num(r, "speedup"), 2));
    }
    fprintf(out, "\n");
}

/* ------------------------------------------------------------------------
 * Plots
 * ------------------------------------------------------------------------ */

static const char GP_TERM[] =
    "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) "
    "{ set terminal pngcairo size 1100,450 font ',10' } "
    "else { set terminal png size 1100,450 }\n";

static FILE *open_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        fprintf(stderr, "bench_masks: cannot write %s\n", path);
    return fp;
}

/* Opens DIR/BASE.dat and DIR/BASE.gp for writing; 1 (none left open) when either fails. */
static int open_plot(const char *dir, const char *base, FILE **d, FILE **g)
{
    char name[256];
    snprintf(name, sizeof name, "%s.dat", base);
    *d = open_in(dir, name);
    snprintf(name, sizeof name, "%s.gp", base);
    *g = open_in(dir, name);
    if (*d && *g)
        return 0;
    if (*d)
        fclose(*d);
    if (*g)
        fclose(*g);
    return 1;
}

/*
 * Rows of one grammar form one block of the .dat file, in order of first
 * appearance: starts a block (with a header naming the columns) the first
 * time a grammar is seen. names holds the grammars of the blocks so far.
 */
enum { MAX_BLOCKS = 16 };
static void grammar_block(FILE *d, char names[][64], int *n, const char *grammar,
                          const char *columns)
{
    int k;
    for (k = 0; k < *n && strcmp(names[k], grammar); k++)
        ;
    if (k < *n || *n == MAX_BLOCKS)
        return;
    if (*n)
        fprintf(d, "\n\n");
    snprintf(names[(*n)++], 64, "%s", grammar);
    fprintf(d, "# %s: %s\n", grammar, columns);
}

/* vocab_scaling.dat: one block per grammar: vocabulary, mean, p99, eager s. */
static int plot_vocab(const char *dir, const json_t *rows)
{
    FILE *d, *g;
    if (open_plot(dir, "vocab_scaling", &d, &g))
        return 1;
    char names[MAX_BLOCKS][64];
    int n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "vocab") || json_object_get(r, "error"))
            continue;
        grammar_block(d, names, &n, str(r, "grammar"), "vocabulary mean_us p99_us eager_s");
        fprintf(d, "%s %s %s %s\n", f(num(r, "vocab_size"), 0), f(num(r, "mask.stepmin.mean_us"), 3),
                f(num(r, "mask.stepmin.p99_us"), 3), f(num(r, "eager_cpu_s"), 4));
    }
    fprintf(g, "%s", GP_TERM);
    fprintf(g, "set output 'vocab_scaling.png'\nset multiplot layout 1,2 title "
               "'Scaling with vocabulary size (first N ids of qwen3; corpus re-tokenized "
               "greedily)'\nset key top left\nset grid\nset xrange [0:*]\nset yrange [0:*]\n"
               "set xlabel 'vocabulary size (ids)'\nset format x '%%.0s%%c'\n");
    fprintf(g, "set ylabel 'per-token mask time, µs (step-min mean solid, p99 dashed)'\nplot ");
    for (int k = 0; k < n; k++)
        fprintf(g, "%s'vocab_scaling.dat' index %d using 1:2 with linespoints lw 2 lc %d title "
                   "'%s mean', '' index %d using 1:3 with linespoints dt 2 lc %d title '%s p99'",
                k ? ", " : "", k, k + 1, names[k], k, k + 1, names[k]);
    fprintf(g, "\nset ylabel 'eager preprocessing, CPU s'\nplot ");
    for (int k = 0; k < n; k++)
        fprintf(g, "%s'vocab_scaling.dat' index %d using 1:4 with linespoints lw 2 lc %d title '%s'",
                k ? ", " : "", k, k + 1, names[k]);
    fprintf(g, "\nunset multiplot\n");
    fclose(d);
    fclose(g);
    return n ? 0 : -1;
}

/* grammar_scaling.dat: block 0 the bundled grammars (corpus), block 1 synthetic (walks). */
static int plot_grammar(const char *dir, const json_t *rows)
{
    FILE *d, *g;
    if (open_plot(dir, "grammar_scaling", &d, &g))
        return 1;
    int counts[2] = {0, 0};
    for (int blk = 0; blk < 2; blk++) {
        if (blk)
            fprintf(d, "\n\n");
        fprintf(d, "# %s: productions mean_us p99_us eager_s label\n",
                blk ? "synthetic (random walks)" : "bundled (corpus)");
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r) {
            bool ok = blk ? is_kind(r, "grammar")
                          : is_kind(r, "table") && !strcmp(str(r, "tokenizer"), "llama3");
            if (!ok || json_object_get(r, "error"))
                continue;
            char label[64];
            if (blk)
                snprintf(label, sizeof label, "k=%s", f(num(r, "statement_kinds"), 0));
            else
                snprintf(label, sizeof label, "%s", str(r, "grammar"));
            fprintf(d, "%s %s %s %s %s\n", f(num(r, "stats.productions"), 0),
                    f(num(r, "mask.stepmin.mean_us"), 3), f(num(r, "mask.stepmin.p99_us"), 3),
                    f(num(r, "eager_cpu_s"), 4), label);
            counts[blk]++;
        }
        if (!counts[blk])
            fprintf(d, "nan nan nan nan none\n");
    }
    fprintf(g, "%s", GP_TERM);
    fprintf(g, "set output 'grammar_scaling.png'\nset multiplot layout 1,2 title "
               "'Scaling with grammar size (llama3; log-log axes)'\nset key top left\nset grid\n"
               "set logscale xy\nset xlabel 'productions (after EBNF desugaring)'\n");
    fprintf(g, "set ylabel 'per-token mask time, µs (step-min)'\n"
               "plot 'grammar_scaling.dat' index 0 using 1:2 with points pt 7 ps 1.5 lc 1 "
               "title 'bundled, corpus: mean', '' index 0 using 1:2:5 with labels offset 1,1 "
               "notitle, '' index 1 using 1:2 with linespoints lw 2 lc 2 title 'synthetic, "
               "random walks: mean', '' index 1 using 1:3 with linespoints dt 2 lc 2 title "
               "'synthetic: p99'\n");
    fprintf(g, "set ylabel 'eager preprocessing, CPU s'\n"
               "plot 'grammar_scaling.dat' index 0 using 1:4 with points pt 7 ps 1.5 lc 1 "
               "title 'bundled', '' index 0 using 1:4:5 with labels offset 1,1 notitle, '' "
               "index 1 using 1:4 with linespoints lw 2 lc 2 title 'synthetic'\n"
               "unset multiplot\n");
    fclose(d);
    fclose(g);
    return counts[0] + counts[1] ? 0 : -1;
}

/* ablation.dat: per grammar, per engine variant: mean µs (log scale bars). */
static int plot_ablation(const char *dir, const json_t *rows)
{
    FILE *d, *g;
    if (open_plot(dir, "ablation", &d, &g))
        return 1;
    char names[MAX_BLOCKS][64];
    int n = 0, nv = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (!is_kind(r, "ablation") || json_object_get(r, "error"))
            continue;
        grammar_block(d, names, &n, str(r, "grammar"), "order mean_us preprocess_s variant");
        int order = (int)num(r, "order");
        nv = order + 1 > nv ? order + 1 : nv;
        fprintf(d, "%d %s %s \"%s\"\n", order, f(num(r, "mask.stepmin.mean_us"), 3),
                f(num(r, "preprocess_s"), 4), str(r, "tag"));
    }
    fprintf(g, "%s", GP_TERM);
    fprintf(g, "set output 'ablation.png'\nset title 'Ablation (llama3): per-token mask time, "
               "step-min mean (log scale)'\nset logscale y\nset grid ytics\nset style fill solid 0.8\n"
               "set boxwidth %.2f\nset xtics font ',9'\nset ylabel 'µs'\n"
               "set xrange [-0.6:%d.6]\nset key top right\nplot ",
            n ? 0.8 / n : 0.8, nv ? nv - 1 : 0);
    for (int k = 0; k < n; k++)
        fprintf(g, "%s'ablation.dat' index %d using ($1 + %.3f):2%s with boxes lc %d title '%s'",
                k ? ", " : "", k, n ? (k - (n - 1) / 2.0) * 0.8 / n : 0.0,
                k == 0 ? ":xtic(4)" : "", k + 1, names[k]);
    fprintf(g, "\n");
    fclose(d);
    fclose(g);
    return n ? 0 : -1;
}

static void run_gnuplot(const char *dir, const char *script)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fprintf(stderr, "bench_masks: gnuplot is not installed (Debian: apt-get install -y "
                        "gnuplot-nox); the .gp scripts are in %s\n", dir);
    else if (!WIFEXITED(status) || WEXITSTATUS(status))
        fprintf(stderr, "bench_masks: gnuplot %s failed\n", script);
}

/* Copies dir/name into the report, or says it is missing. */
static void include_file(FILE *out, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(out, "(no %s: run `make bench`)\n\n", name);
        return;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, out);
    fclose(f);
    fprintf(out, "\n");
}

/* ------------------------------------------------------------------------
 * REPORT.md
 * ------------------------------------------------------------------------ */

int bm_report_write(const char *dir, json_t *results)
{
    const json_t *meta = json_object_get(results, "meta");
    const json_t *rows = json_object_get(results, "rows");
    FILE *out = open_in(dir, "REPORT.md");
    if (!out)
        return 1;
    bool quick = json_is_true(json_object_get(meta, "quick"));
    fprintf(out, "# gramask benchmark report%s\n\n", quick ? " (quick run)" : "");
    fprintf(out,
            "Written by `make bench` (bench/bench_masks.c; `bench_masks report bench/results` "
            "rebuilds this page from results.json). Run of %s, commit `%s`, %s s in all.\n\n",
            str(meta, "date"), str(meta, "commit"), f(num(meta, "total_s"), 0));
    fprintf(out,
            "**Conditions.** %s, %s online CPUs, Linux %s. The machine is shared with other "
            "sessions building and fuzzing: the 1-minute load average was between %s and %s "
            "during the run. Every row runs single-threaded (except the batch rows) in its own "
            "process. Timing (note [timing hygiene] in bench/bench_util.h): every mask is timed "
            "alone with CLOCK_MONOTONIC; each row walks its sequences %s times (only once when "
            "that takes over %s s: the *runs* field of each row in results.json) and the figures "
            "are those of the **best run** (lowest mean); *step-min* is the percentile over "
            "the per-step minimum of those runs, where preemption spikes (4 / 8 ms) cancel "
            "out. Preprocessing and first-mask times are the best of %s runs. *Ir/mask* is the "
            "number of instructions per `gm_matcher_fill_mask` counted by callgrind "
            "(deterministic, immune to the load). Peak RSS is the measuring process's "
            "ru_maxrss (tokenizer JSON parsing included).\n\n",
            str(meta, "cpu"), f(num(meta, "cpus"), 0), str(meta, "kernel"),
            f(num(meta, "loadavg_min"), 1), f(num(meta, "loadavg_max"), 1),
            f(num(meta, "walk_runs"), 0), f(num(meta, "walk_budget_s"), 0),
            f(num(meta, "eager_runs"), 0));

    json_t *missing = json_object_get(meta, "missing");
    fprintf(out, "**Grammars measured:** ");
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(meta, "grammars"), i, x)
        fprintf(out, "%s%s", i ? ", " : "", json_string_value(x));
    fprintf(out, ".");
    if (json_array_size(missing)) {
        fprintf(out, " **Missing:** ");
        json_array_foreach(missing, i, x)
            fprintf(out, "%s%s (%s)", i ? "; " : "", str(x, "grammar"), str(x, "why"));
        fprintf(out, " — no rows for them, none faked.");
    }
    fprintf(out, "\n\n");
    /* Rows measured later by `bench_masks run --only` (bench-only) and merged in. */
    json_array_foreach(json_object_get(meta, "merged"), i, x)
        fprintf(out,
                "**Merged rows:** the Table 1 rows of %s come from a later run (`make "
                "bench-only`) of %s, commit `%s`, %s, %s; load average %s to %s. The "
                "conditions above are those of the other rows.\n\n",
                str(x, "grammars"), str(x, "date"), str(x, "commit"),
                json_is_true(json_object_get(x, "quick"))
                    ? "quick (llama3 only, 2 preprocessing runs, 3 walks)"
                    : "full",
                json_is_true(json_object_get(x, "callgrind")) ? "with callgrind" : "no callgrind",
                f(num(x, "loadavg_min"), 1), f(num(x, "loadavg_max"), 1));

    fprintf(out, "## 1. Tokenizer × grammar (the seed paper's Table 1 layout)\n\n");
    fprintf(out,
            "*eager s*: `gm_compiled_create` with `eager` (all token tables), tokenizer and "
            "grammar already loaded. *first mask ms*: lazy `gm_compiled_create` + matcher + "
            "first `gm_matcher_fill_mask`. Per-token figures: `gm_matcher_fill_mask` along the "
            "real tokenizations of every file of `corpus/<lang>/ids.<tokenizer>.json` with all "
            "tables built (eager; the always-accepted entries, built on first use, are warm in "
            "the best run), the mask after the last token included; *true tokens*: "
            "every true token was allowed and EOS was allowed at the end of every file (a row "
            "that fails says FAILED, with the first masked token). Last line: the seed paper's "
            "published figures for its own tool — %s.\n\n",
            PAPER_REF);
    table1(out, rows);
    fprintf(out, "### Targets (issues 4, 5, 7)\n\n");
    targets(out, rows);
    fprintf(out, "### Details\n\n*RSS in eager compile*: peak RSS from just before "
                 "`gm_compiled_create` (tokenizer and grammar loaded) to its end. *.gmc load + "
                 "first mask*: `gm_compiled_load` of the eager file + matcher + first mask. "
                 "*lazy pass*: one pass over the corpus with cold lazy caches (tables built on "
                 "first use, inside the timed masks). *matcher bytes*: what "
                 "`gm_matcher_create` allocates.\n\n");
    table1_details(out, rows);
    fprintf(out, "### SynCode grammars (issue 8)\n\n");
    int syn = 0;
    json_t *r;
    json_array_foreach(rows, i, r)
        if (is_kind(r, "table") && !json_is_null(json_object_get(r, "grammar"))) {
            const char *g = str(r, "grammar");
            size_t len; /* bundled grammars (javascript, rust, ...) are no SynCode rows */
            syn += strcmp(g, "json") && strcmp(g, "go") && strcmp(g, "java") &&
                   strcmp(g, "python") && !gm_bundled_grammar(g, &len);
        }
    if (!syn) {
        fprintf(out, "Their Table 1 rows come from bench/bench_syncode (issue 8), which `make "
                     "bench` runs before this suite; its table (`syncode.md` beside this "
                     "report) follows. They can also join the tables above through "
                     "`GM_BENCH_GRAMMARS` in bench/local.mk (`NAME=PATH,lark,corpus=LANG`: "
                     "Lark's conflict resolution).\n\n");
        include_file(out, dir, "syncode.md");
    } else
        fprintf(out, "Rows above whose grammar is not json, go, java or python come from "
                     "`GM_BENCH_GRAMMARS` (SynCode's grammars, `--conflicts=lark`).\n\n");

    fprintf(out, "## 2. Ablations (llama3)\n\n");
    fprintf(out,
            "Each line switches one more technique on (spanner/spanner.h, GM_VARIANT_*; masks "
            "are identical in every variant). *naive*: no tables at all — every id of the "
            "vocabulary goes through the matcher's own acceptance check "
            "(`gm_matcher_validate_tokens` on one token), measured on an even sample of the "
            "corpus steps, and each of its masks is compared bit for bit with the engine's. "
            "*token classes*: the profiles of note [token classes], walked class by class from "
            "the start (no prefix sharing), every token in its state's profile (no first-byte "
            "split), token sets as id lists. *preprocessing*: building every table "
            "(`gm_spanner_build_all`). The last line is the full engine with lazy tables, "
            "timed in one cold pass (its preprocessing is the lazy `gm_compiled_create`). "
            "*Ir/mask* here counts an even sample of about %s masks of the corpus (every k-th "
            "step; the same steps for every variant): callgrind over the slow variants' whole "
            "corpus would take hours. "
            "*always-accepted entries*: the seed paper's A(q, s) / D(q, s), keyed on the top "
            "four stack states (spanner/accept.h, note [always-accepted entries]); they are "
            "built on first use even after an eager compile, so the first pass over the corpus "
            "builds them and the best run (like the instruction count, taken on a second pass) "
            "is warm; the lazy line shows the cold cost.\n\n",
            f(num(meta, "ablation_ir_masks"), 0));
    ablations(out, rows);
    fprintf(out, "![ablation](ablation.png)\n\n");

    fprintf(out, "## 3. Scaling\n\n### Vocabulary size\n\n");
    fprintf(out,
            "Subsets of qwen3: the first N ordinary ids plus all added/special/EOS tokens "
            "(renumbered after them), built with `gm_vocab_create_from_tokens`. The real "
            "corpus ids beyond N do not exist in a subset, so every corpus file is decoded to "
            "text and **re-tokenized greedily (longest match) with the subset** — every byte "
            "is a qwen3 token, so any N works; the \"all\" row uses the same greedy "
            "tokenization, so the rows compare like with like (the real BPE ids of the full "
            "vocabulary are in Table 1).\n\n");
    vocab_scaling(out, rows);
    fprintf(out, "![vocabulary scaling](vocab_scaling.png)\n\n");
    fprintf(out, "### Grammar size\n\n");
    fprintf(out,
            "The bundled grammars (llama3, along the corpus) and synthetic statement "
            "languages with k statement kinds (each its own keyword and shape over a shared "
            "expression grammar; llama3, along seeded random constrained walks: uniform over "
            "the allowed tokens, EOS with probability 1/16 when allowed, at most 256 "
            "tokens).\n\n");
    grammar_scaling(out, rows);
    fprintf(out, "![grammar scaling](grammar_scaling.png)\n\n");

    fprintf(out, "## 4. Batch (`gm_batch_fill_masks`)\n\n");
    fprintf(out,
            "64 matchers of one compiled grammar (llama3, eager), spread over the corpus files "
            "at staggered positions. *Decode loop* (the target figure): a pool alone, 200 "
            "steps of one timed `gm_batch_fill_masks` followed by every matcher accepting its "
            "true token (untimed), from the same start states for both pools (clones; best of "
            "5 loops) — the calls come one step apart, as in a decoder, and the pool's threads "
            "poll for the next call for `spin_us` (100 µs, runtime/batch.c note [batch "
            "spinning]) instead of sleeping. *After a gap*: each step fills the 64 masks with "
            "a plain loop of `gm_matcher_fill_mask`, a pool of 1 and a pool of 2 threads (best "
            "of 3 tries, same states): the 2-thread call comes two batches after the last one, "
            "mostly longer than the spin, so its worker is asleep and must be woken (about 20 "
            "µs on this KVM machine) — what a decoder pays when a model step of milliseconds "
            "separates its calls. A thread keeps the same rows from call to call (note [batch "
            "locality]).\n\n");
    batch(out, rows);
    fprintf(out, "## 5. Earley engine (issue 15)\n\n");
    fprintf(out, "From bench/bench_earley, which `make bench` runs before this suite (its "
                 "table, `earley.md` beside this report, follows).\n\n");
    include_file(out, dir, "earley.md");
    fprintf(out, "## 6. TagDispatch and tool-call presets (issue 17)\n\n");
    fprintf(out, "From bench/bench_dispatch, which `make bench` runs before this suite (its "
                 "tables, `dispatch.md` beside this report, follow).\n\n");
    include_file(out, dir, "dispatch.md");
    fclose(out);

    static const char *const scripts[] = {"vocab_scaling.gp", "grammar_scaling.gp",
                                          "ablation.gp"};
    int made[3] = {plot_vocab(dir, rows), plot_grammar(dir, rows), plot_ablation(dir, rows)};
    for (int k = 0; k < 3; k++)
        if (made[k] == 0)
            run_gnuplot(dir, scripts[k]);
    fprintf(stderr, "bench_masks: wrote %s/REPORT.md\n", dir);
    return 0;
}
