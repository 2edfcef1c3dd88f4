/*
 * bench_masks: gramask's benchmark suite (issue 7). Measures, single-
 * threaded, every tokenizer x grammar pair (the seed paper's Table 1
 * layout), the ablations of the mask engine, scaling against vocabulary
 * and grammar size, and batch throughput; writes results.json, REPORT.md
 * and gnuplot scripts (bench_report.c); compares two results files
 * (bench_compare.c). Each measurement runs in its own child process so
 * that its peak RSS is its own and a crash costs one row, not the suite.
 *
 * usage:
 *   bench_masks run [--quick] [--out DIR] [--shared DIR] [--commit TEXT]
 *                   [--grammar NAME=[PATH][,lark][,contextual][,corpus=LANG][,files=LIST]]...
 *                   [--no-callgrind] [--only NAME[,NAME...]]
 *   bench_masks report DIR              REPORT.md and plots from DIR/results.json
 *   bench_masks compare OLD.json NEW.json   figures of NEW > 20% worse than OLD
 *   bench_masks loop (--gmc FILE | --grammar G --tokenizer T [--lark] [--contextual]
 *                    [--variant V])
 *                    --ids IDS.json      one untimed pass for callgrind
 *                                        (--toggle-collect=bm_fill_one)
 *
 * A --grammar without PATH is the bundled one of that NAME; `contextual`
 * builds it with the contextual lexer (GM_LEXER_CONTEXTUAL; javascript
 * needs it); `files=LIST` names a file listing source files (one path a
 * line, # comments) that are encoded with each tokenizer (gm_vocab_encode)
 * at the start of the run, for languages without ids in ../shared/corpus.
 * --only runs just the Table 1 rows of the named grammars and merges them
 * into OUT/results.json (their old rows replaced, every other row kept as
 * it was), then rewrites REPORT.md: new rows without re-measuring the rest.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_report.h"
#include "bench/bench_util.h"
#include "parser/bundled.h"
#include "parser/grammar.h"
#include "runtime/objects.h"

/* ------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------ */

enum { MAX_GRAMMARS = 32 };

typedef struct grammar_spec {
    char name[64];
    char path[1024];          /* empty: bundled */
    char corpus[64];          /* corpus language folder */
    bool lark;                /* --conflicts=lark */
    bool contextual;          /* GM_LEXER_CONTEXTUAL */
    char files[1024];         /* list of source files to encode (empty: ids of the corpus) */
} grammar_spec;

typedef struct bench_cfg {
    char shared[1024];
    char out[1024];
    char tmp[1100];
    char self[1024];
    const char *commit;
    bool quick;
    bool callgrind;
    int eager_runs;           /* eager compiles per row (best reported) */
    int walk_runs;            /* corpus passes per row (note [timing hygiene]) */
    double walk_budget_s;     /* no more passes (beyond 2) after this long */
    int ablation_ir_masks;    /* callgrind counts of the ablations: an even sample of masks */
    int naive_samples;        /* steps the naive baseline measures */
    grammar_spec grammars[MAX_GRAMMARS];
    int ngrammars;
    bool present[MAX_GRAMMARS];
    char missing_why[MAX_GRAMMARS][256];
    char only[512];           /* --only: comma-separated grammar names (empty: full suite) */
} bench_cfg;

static const char *const TOKENIZERS[] = {"sp32k", "llama3", "qwen3"};
static const char *const CORE_GRAMMARS[] = {"json", "go", "java", "python"};

static void tokenizer_dir(const bench_cfg *c, const char *tok, char *buf, size_t cap)
{
    bm_strf(buf, cap, "%s/tokenizers/%s", c->shared, tok);
}

static void ids_path(const bench_cfg *c, const grammar_spec *g, const char *tok, char *buf,
                     size_t cap)
{
    if (g->files[0])
        bm_strf(buf, cap, "%s/ids.%s.%s.json", c->tmp, g->name, tok); /* encode_files */
    else
        bm_strf(buf, cap, "%s/corpus/%s/ids.%s.json", c->shared, g->corpus, tok);
}

static gm_status load_grammar(const grammar_spec *g, gm_grammar **out, gm_error *err)
{
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    if (g->lark)
        o.conflicts = GM_CONFLICTS_LARK;
    if (g->contextual)
        o.lexer = GM_LEXER_CONTEXTUAL;
    if (g->path[0])
        return gm_grammar_create_from_file(g->path, &o, out, err);
    return gm_grammar_create_bundled(g->name, &o, out, err);
}

static gm_status load_vocab(const bench_cfg *c, const char *tok, gm_vocab **out, gm_error *err)
{
    char dir[1200];
    tokenizer_dir(c, tok, dir, sizeof dir);
    return gm_vocab_create_from_file(dir, NULL, out, err);
}

static gm_status compile(gm_grammar *g, gm_vocab *v, bool eager, gm_compiled **out,
                         gm_error *err)
{
    gm_compile_options o;
    gm_compile_options_init_defaults(&o);
    o.eager = eager;
    return gm_compiled_create(g, v, &o, out, err);
}

static json_t *stats_json(const gm_compiled *cg)
{
    gm_compiled_stats st;
    gm_compiled_get_stats(cg, &st);
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:I, s:f, s:f}", "vocab_size",
                     (int)st.vocab_size, "lexer_states", (int)st.lexer_states, "terminals",
                     (int)st.terminals, "lr_states", (int)st.lr_states, "productions",
                     (int)st.productions, "profiles_built", (int)st.profiles_built, "classes",
                     (json_int_t)st.classes, "table_mb", (double)st.table_bytes / 1048576.0,
                     "memory_mb", (double)st.memory_bytes / 1048576.0);
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static json_t *runs_json(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

/* ------------------------------------------------------------------------
 * The untimed loop callgrind counts
 * ------------------------------------------------------------------------ */

/* The only function callgrind collects in (--toggle-collect=bm_fill_one). */
__attribute__((noinline)) static gm_status bm_fill_one(gm_matcher *m, uint32_t *mask,
                                                       size_t words, gm_error *err)
{
    return gm_matcher_fill_mask(m, mask, words, err);
}

static int loop_main(int argc, char **argv)
{
    const char *gmc = NULL, *gname = NULL, *tok = NULL, *ids = NULL;
    bool lark = false, contextual = false;
    uint32_t variant = 0;
    size_t max_masks = SIZE_MAX, samples = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--gmc") && i + 1 < argc)
            gmc = argv[++i];
        else if (!strcmp(argv[i], "--grammar") && i + 1 < argc)
            gname = argv[++i];
        else if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc)
            tok = argv[++i];
        else if (!strcmp(argv[i], "--ids") && i + 1 < argc)
            ids = argv[++i];
        else if (!strcmp(argv[i], "--variant") && i + 1 < argc)
            variant = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--max-masks") && i + 1 < argc)
            max_masks = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--lark"))
            lark = true;
        else if (!strcmp(argv[i], "--contextual"))
            contextual = true;
        else {
            fprintf(stderr, "bench_masks loop: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!ids || (!gmc && (!gname || !tok))) {
        fprintf(stderr, "bench_masks loop: need --ids and --gmc or --grammar/--tokenizer\n");
        return 2;
    }
    gm_error err;
    gm_compiled *cg = NULL;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    if (gmc) {
        gm_compile_options lo;
        gm_compile_options_init_defaults(&lo);
        lo.eager = true; /* what the file lacks (first-byte filters) is built before counting */
        if (gm_compiled_load(gmc, &lo, &cg, &err) != GM_OK)
            goto fail;
    } else {
        grammar_spec gs;
        memset(&gs, 0, sizeof gs);
        gs.lark = lark;
        gs.contextual = contextual;
        if (strchr(gname, '/') || strstr(gname, ".lark"))
            bm_strf(gs.path, sizeof gs.path, "%s", gname);
        else
            bm_strf(gs.name, sizeof gs.name, "%s", gname);
        if (gm_vocab_create_from_file(tok, NULL, &v, &err) != GM_OK ||
            load_grammar(&gs, &g, &err) != GM_OK || compile(g, v, false, &cg, &err) != GM_OK)
            goto fail;
        cg->spanner->variant = variant;
        if (gm_spanner_build_all(cg->spanner, &err) != GM_OK)
            goto fail;
    }
    bm_corpus c;
    if (bm_corpus_load(ids, &c, &err))
        goto fail;
    size_t words = gm_compiled_mask_words(cg), masks = 0;
    /* --samples N: count an even sample of about N masks (every stride-th step). */
    size_t stride = samples && c.steps > samples ? c.steps / samples : 1;
    uint32_t *mask = calloc(words, sizeof *mask);
    /*
     * Pass 0 warms the caches built at run time (always-accepted entries) on
     * the same masks, uncounted; pass 1 is counted, like the best timed run.
     */
    for (int pass = 0; pass < 2; pass++) {
        size_t step = 0, n = 0;
        for (size_t si = 0; si < c.n && n < max_masks; si++) {
            gm_matcher *m;
            if (gm_matcher_create(cg, NULL, &m, &err) != GM_OK)
                goto fail;
            for (size_t i = 0; i <= c.seqs[si].n && n < max_masks; i++, step++) {
                if (step % stride == 0) {
                    gm_status st = pass ? bm_fill_one(m, mask, words, &err)
                                        : gm_matcher_fill_mask(m, mask, words, &err);
                    if (st != GM_OK)
                        goto fail;
                    n++;
                }
                if (i == c.seqs[si].n ||
                    gm_matcher_accept_token(m, c.seqs[si].ids[i], &err) != GM_OK)
                    break;
            }
            gm_matcher_destroy(m);
        }
        masks = n;
    }
    printf("masks %zu\n", masks);
    free(mask);
    bm_corpus_free(&c);
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    return 0;
fail:
    fprintf(stderr, "bench_masks loop: %s\n", err.message);
    return 1;
}

/*
 * Instructions per mask: callgrind over `bench_masks loop ARGS`, collecting
 * only inside bm_fill_one. Returns -1 when valgrind is not available.
 */
static double callgrind_ir(const bench_cfg *c, const char *label, const char *const *args)
{
    if (!c->callgrind)
        return -1;
    char out[1400], log[1400];
    bm_strf(out, sizeof out, "%s/callgrind.%s.out", c->tmp, label);
    bm_strf(log, sizeof log, "%s/callgrind.%s.stdout", c->tmp, label);
    char *argv[32];
    int n = 0;
    char outarg[1500];
    bm_strf(outarg, sizeof outarg, "--callgrind-out-file=%s", out);
    argv[n++] = "valgrind";
    argv[n++] = "--tool=callgrind";
    argv[n++] = "--toggle-collect=bm_fill_one";
    argv[n++] = "--quiet";
    argv[n++] = outarg;
    argv[n++] = (char *)c->self;
    argv[n++] = "loop";
    for (int i = 0; args[i] && n < 30; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        (void)f;
        execvp("valgrind", argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
        if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
            fprintf(stderr, "bench_masks: valgrind not found; no instruction counts\n");
        return -1;
    }
    double masks = 0, ir = -1;
    FILE *f = fopen(log, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "masks ", 6))
            masks = strtod(line + 6, NULL);
    if (f)
        fclose(f);
    f = fopen(out, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "totals:", 7))
            ir = strtod(line + 7, NULL);
        else if (!strncmp(line, "summary:", 8) && ir < 0)
            ir = strtod(line + 8, NULL);
    }
    if (f)
        fclose(f);
    unlink(out);
    unlink(log);
    return ir >= 0 && masks > 0 ? ir / masks : -1;
}

/* ------------------------------------------------------------------------
 * Table 1: one tokenizer x grammar pair
 * ------------------------------------------------------------------------ */

typedef struct row_arg {
    const bench_cfg *cfg;
    const char *tok;
    const grammar_spec *g;
    uint32_t variant;
    int mode;                 /* ablation: 0 engine, 1 naive, 2 lazy cold */
    uint32_t nvocab;          /* vocab scaling: ids kept (0: all) */
    int synth;                /* grammar scaling: size of the synthetic grammar */
    char gmc[1200];           /* where the eager .gmc goes (table rows) */
} row_arg;

static json_t *measure_table(void *argp)
{
    row_arg *a = argp;
    const bench_cfg *c = a->cfg;
    gm_error err;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *eager = NULL, *lazy = NULL;
    bm_corpus corpus = {0};
    bm_walk w = {0};
    json_t *o = json_object();
    char path[1400];
    ids_path(c, a->g, a->tok, path, sizeof path);
    if (bm_corpus_load(path, &corpus, &err))
        goto fail;

    uint64_t t0 = gm_clock_ns();
    if (load_vocab(c, a->tok, &v, &err) != GM_OK)
        goto fail;
    json_object_set_new(o, "tokenizer_load_ms", json_real(bm_ms_since(t0)));
    t0 = gm_clock_ns();
    if (load_grammar(a->g, &g, &err) != GM_OK)
        goto fail;
    json_object_set_new(o, "grammar_ms", json_real(bm_ms_since(t0)));
    double base_mb = bm_hwm_mb();

    /* Eager preprocessing. */
    double eager_s[16] = {0}, eager_cpu[16] = {0}, eager_rss = 0;
    int E = c->eager_runs;
    bool hwm_ok = false;
    for (int e = 0; e < E; e++) {
        gm_compiled_destroy(eager);
        eager = NULL;
        hwm_ok = bm_hwm_reset();
        t0 = gm_clock_ns();
        uint64_t c0 = bm_cpu_ns();
        if (compile(g, v, true, &eager, &err) != GM_OK)
            goto fail;
        eager_s[e] = bm_ms_since(t0) / 1e3;
        eager_cpu[e] = (double)(bm_cpu_ns() - c0) / 1e9;
        double hwm = bm_hwm_mb();
        eager_rss = hwm > eager_rss ? hwm : eager_rss;
    }
    json_object_set_new(o, "eager_s", json_real(min_of(eager_s, E)));
    json_object_set_new(o, "eager_s_runs", runs_json(eager_s, E));
    json_object_set_new(o, "eager_cpu_s", json_real(min_of(eager_cpu, E)));
    if (hwm_ok)
        json_object_set_new(o, "eager_rss_mb", json_real(eager_rss));
    json_object_set_new(o, "loaded_rss_mb", json_real(base_mb));
    json_object_set_new(o, "gm_peak_mb",
                        json_real((double)atomic_load(&eager->mem.peak) / 1048576.0));
    json_object_set_new(o, "stats", stats_json(eager));

    /* The compiled file (a failure here is recorded; the other figures still count). */
    if (gm_compiled_save(eager, a->gmc, &err) != GM_OK) {
        json_object_set_new(o, "gmc_error", json_string(err.message));
    } else {
        struct stat sb;
        if (stat(a->gmc, &sb) == 0)
            json_object_set_new(o, "gmc_mb", json_real((double)sb.st_size / 1048576.0));
        double gl[16] = {0};
        size_t words = gm_compiled_mask_words(eager);
        uint32_t *mask = calloc(words, sizeof *mask);
        int e;
        for (e = 0; e < E; e++) {
            gm_compiled *lc;
            gm_matcher *m = NULL;
            t0 = gm_clock_ns();
            if (gm_compiled_load(a->gmc, NULL, &lc, &err) != GM_OK)
                break;
            gm_status st = gm_matcher_create(lc, NULL, &m, &err);
            if (st == GM_OK)
                st = gm_matcher_fill_mask(m, mask, words, &err);
            gl[e] = bm_ms_since(t0);
            gm_matcher_destroy(m);
            gm_compiled_destroy(lc);
            if (st != GM_OK)
                break;
        }
        free(mask);
        if (e < E)
            json_object_set_new(o, "gmc_error", json_string(err.message));
        else
            json_object_set_new(o, "gmc_first_mask_ms", json_real(min_of(gl, E)));
    }

    /* A matcher's own memory. */
    {
        size_t before = atomic_load(&eager->mem.used);
        gm_matcher *m;
        if (gm_matcher_create(eager, NULL, &m, &err) != GM_OK)
            goto fail;
        json_object_set_new(o, "matcher_bytes",
                            json_integer((json_int_t)(atomic_load(&eager->mem.used) - before)));
        gm_matcher_destroy(m);
    }

    /* Per-token masks along the corpus, tables built. */
    if (bm_walk_corpus(eager, &corpus, c->walk_runs, c->walk_budget_s, false, &w, &err))
        goto fail;
    json_object_set_new(o, "mask", bm_walk_json(&w, &corpus, true));
    json_object_set_new(o, "status",
                        json_string(w.all_allowed && w.eos_at_end ? "ok" : "FAILED"));
    bm_walk_free(&w);

    /* Lazy: load to first mask, then one cold pass. */
    double lf[16] = {0};
    for (int e = 0; e < E; e++) {
        gm_compiled_destroy(lazy);
        lazy = NULL;
        gm_matcher *m;
        size_t words = gm_compiled_mask_words(eager);
        uint32_t *mask = calloc(words, sizeof *mask);
        t0 = gm_clock_ns();
        if (compile(g, v, false, &lazy, &err) != GM_OK ||
            gm_matcher_create(lazy, NULL, &m, &err) != GM_OK ||
            gm_matcher_fill_mask(m, mask, words, &err) != GM_OK)
            goto fail;
        lf[e] = bm_ms_since(t0);
        gm_matcher_destroy(m);
        free(mask);
    }
    json_object_set_new(o, "lazy_first_mask_ms", json_real(min_of(lf, E)));
    t0 = gm_clock_ns();
    if (bm_walk_corpus(lazy, &corpus, 1, 0, false, &w, &err))
        goto fail;
    json_t *lw = bm_walk_json(&w, &corpus, false);
    json_object_set_new(lw, "total_ms", json_real(bm_ms_since(t0)));
    gm_compiled_stats st;
    gm_compiled_get_stats(lazy, &st);
    json_object_set_new(lw, "profiles_built", json_integer(st.profiles_built));
    json_object_set_new(lw, "table_mb", json_real((double)st.table_bytes / 1048576.0));
    json_object_set_new(o, "lazy_walk", lw);

    goto out;
fail:
    json_decref(o);
    o = bm_error_json("%s", err.message);
out:
    gm_compiled_destroy(eager);
    gm_compiled_destroy(lazy);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    bm_corpus_free(&corpus);
    return o;
}

/* ------------------------------------------------------------------------
 * Ablations: the engine with techniques switched off, and the naive baseline
 * ------------------------------------------------------------------------ */

typedef struct variant_def {
    const char *name;
    const char *tag;          /* short name for plots */
    int mode;                 /* 0 engine variant, 1 naive, 2 lazy cold */
    uint32_t flags;
} variant_def;

static const variant_def VARIANTS[] = {
    {"naive: the matcher's own check of every token", "naive", 1, 0},
    {"token classes (no prefix sharing, no first-byte filters, id lists)", "classes", 0,
     GM_VARIANT_NO_SPLIT0 | GM_VARIANT_NO_SHARING | GM_VARIANT_LISTS_ONLY |
         GM_VARIANT_NO_ACCEPT_CACHE},
    {"+ first-byte filters", "+filters", 0,
     GM_VARIANT_NO_SHARING | GM_VARIANT_LISTS_ONLY | GM_VARIANT_NO_ACCEPT_CACHE},
    {"+ prefix sharing", "+sharing", 0, GM_VARIANT_LISTS_ONLY | GM_VARIANT_NO_ACCEPT_CACHE},
    {"+ adaptive storage", "+adaptive", 0, GM_VARIANT_NO_ACCEPT_CACHE},
    {"+ always-accepted entries (the full engine, eager)", "+accept cache", 0, 0},
    {"full engine, lazy (cold caches, one pass)", "lazy (cold)", 2, 0},
};
enum { NVARIANTS = sizeof VARIANTS / sizeof VARIANTS[0] };

/* A whole file's bytes (malloc'd, *len set), or NULL. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/*
 * The ids of the files a grammar's files= list names, encoded with the
 * row's tokenizer by the project's own encoder (gm_vocab_encode, exact to
 * Hugging Face's), written where ids_path finds them (format of
 * ../shared/corpus). Runs in a child: the encoder's memory stays out of
 * the rows' peak RSS.
 */
static json_t *encode_files(void *argp)
{
    row_arg *a = argp;
    gm_error err;
    gm_vocab *v = NULL;
    json_t *arr = json_array();
    size_t nfiles = 0, ntokens = 0;
    char line[2048], out[1400];
    FILE *list = fopen(a->g->files, "r");
    if (!list) {
        json_decref(arr);
        return bm_error_json("%s: %s", a->g->files, strerror(errno));
    }
    if (load_vocab(a->cfg, a->tok, &v, &err) != GM_OK)
        goto fail;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        size_t len = 0, n = 0;
        uint32_t *ids = NULL;
        char *text = read_all(line, &len);
        if (!text) {
            bm_strf(err.message, sizeof err.message, "%s (listed in %s): %s", line,
                     a->g->files, strerror(errno));
            goto fail;
        }
        gm_status st = gm_vocab_encode(v, text, len, NULL, &ids, &n, &err);
        free(text);
        if (st != GM_OK)
            goto fail;
        json_t *jids = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(jids, json_integer(ids[i]));
        gm_vocab_free_ids(v, ids);
        json_array_append_new(arr, json_pack("{s:s, s:o}", "file", line, "ids", jids));
        nfiles++;
        ntokens += n;
    }
    fclose(list);
    list = NULL;
    ids_path(a->cfg, a->g, a->tok, out, sizeof out);
    if (json_dump_file(arr, out, 0)) {
        bm_strf(err.message, sizeof err.message, "cannot write %s", out);
        goto fail;
    }
    json_decref(arr);
    gm_vocab_destroy(v);
    char sum[128];
    bm_strf(sum, sizeof sum, "%zu files, %zu tokens", nfiles, ntokens);
    return json_pack("{s:s}", "summary", sum);
fail:
    if (list)
        fclose(list);
    json_decref(arr);
    gm_vocab_destroy(v);
    return bm_error_json("%s", err.message);
}

/* The files encode_files wrote. */
static void remove_encoded(const bench_cfg *c)
{
    for (int gi = 0; gi < c->ngrammars; gi++)
        for (size_t ti = 0; c->grammars[gi].files[0] && ti < sizeof TOKENIZERS / sizeof *TOKENIZERS;
             ti++) {
            char path[1400];
            ids_path(c, &c->grammars[gi], TOKENIZERS[ti], path, sizeof path);
            unlink(path);
        }
}

/* The naive mask: every id through gm_matcher_validate_tokens. */
static gm_status naive_mask(gm_matcher *m, uint32_t nbits, uint32_t *mask, gm_error *err)
{
    memset(mask, 0, ((nbits + 31) / 32) * sizeof *mask);
    for (uint32_t t = 0; t < nbits; t++) {
        size_t acc;
        gm_status st = gm_matcher_validate_tokens(m, &t, 1, &acc, err);
        if (st != GM_OK)
            return st;
        if (acc)
            mask[t >> 5] |= 1u << (t & 31);
    }
    return GM_OK;
}

static json_t *measure_naive(const bench_cfg *c, gm_compiled *cg, const bm_corpus *corpus,
                             json_t *o, gm_error *err)
{
    size_t stride = corpus->steps / (size_t)c->naive_samples;
    stride = stride ? stride : 1;
    size_t words = gm_compiled_mask_words(cg);
    uint32_t nbits = gm_compiled_vocab_size(cg);
    uint32_t *naive = calloc(words, sizeof *naive), *engine = calloc(words, sizeof *engine);
    uint64_t *ns = calloc(corpus->steps / stride + 2, sizeof *ns);
    size_t k = 0, step = 0, mismatched = 0, first_bad = 0;
    int rc = -1;
    for (size_t si = 0; si < corpus->n; si++) {
        const bm_seq *s = &corpus->seqs[si];
        gm_matcher *m;
        if (gm_matcher_create(cg, NULL, &m, err) != GM_OK)
            goto out;
        for (size_t i = 0; i <= s->n; i++, step++) {
            if (step % stride == 0) {
                uint64_t t0 = gm_clock_ns();
                if (naive_mask(m, nbits, naive, err) != GM_OK) {
                    gm_matcher_destroy(m);
                    goto out;
                }
                ns[k++] = gm_clock_ns() - t0;
                if (gm_matcher_fill_mask(m, engine, words, err) != GM_OK) {
                    gm_matcher_destroy(m);
                    goto out;
                }
                if (memcmp(naive, engine, words * sizeof *naive)) {
                    if (!mismatched)
                        first_bad = step;
                    mismatched++;
                }
            }
            if (i == s->n || gm_matcher_accept_token(m, s->ids[i], err) != GM_OK)
                break;
        }
        gm_matcher_destroy(m);
    }
    gm_latency l = gm_latency_of(ns, k);
    json_t *mk = json_pack("{s:i, s:I, s:o, s:I, s:I}", "runs", 1, "steps", (json_int_t)k, "best",
                           bm_lat_json(&l), "stride", (json_int_t)stride, "mismatches",
                           (json_int_t)mismatched);
    if (mismatched)
        json_object_set_new(mk, "first_mismatch_step", json_integer((json_int_t)first_bad));
    json_object_set_new(o, "mask", mk);
    rc = 0;
out:
    free(naive);
    free(engine);
    free(ns);
    return rc ? NULL : o;
}

static json_t *measure_variant(void *argp)
{
    row_arg *a = argp;
    const bench_cfg *c = a->cfg;
    gm_error err;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *cg = NULL;
    bm_corpus corpus = {0};
    bm_walk w = {0};
    json_t *o = json_object();
    char path[1400];
    ids_path(c, a->g, a->tok, path, sizeof path);
    if (bm_corpus_load(path, &corpus, &err) || load_vocab(c, a->tok, &v, &err) != GM_OK ||
        load_grammar(a->g, &g, &err) != GM_OK)
        goto fail;
    if (a->mode == 1) {
        if (compile(g, v, false, &cg, &err) != GM_OK)
            goto fail;
        json_object_set_new(o, "preprocess_s", json_real(0));
        if (!measure_naive(c, cg, &corpus, o, &err))
            goto fail;
    } else if (a->mode == 2) {
        uint64_t t0 = gm_clock_ns();
        if (compile(g, v, false, &cg, &err) != GM_OK)
            goto fail;
        json_object_set_new(o, "preprocess_s", json_real(bm_ms_since(t0) / 1e3));
        if (bm_walk_corpus(cg, &corpus, 1, 0, false, &w, &err))
            goto fail;
        json_object_set_new(o, "mask", bm_walk_json(&w, &corpus, true));
        json_object_set_new(o, "stats", stats_json(cg));
    } else {
        double pre[16] = {0}, cpu[16] = {0};
        for (int e = 0; e < c->eager_runs; e++) {
            gm_compiled_destroy(cg);
            cg = NULL;
            uint64_t t0 = gm_clock_ns(), c0 = bm_cpu_ns();
            if (compile(g, v, false, &cg, &err) != GM_OK)
                goto fail;
            cg->spanner->variant = a->variant;
            if (gm_spanner_build_all(cg->spanner, &err) != GM_OK)
                goto fail;
            pre[e] = bm_ms_since(t0) / 1e3;
            cpu[e] = (double)(bm_cpu_ns() - c0) / 1e9;
        }
        json_object_set_new(o, "preprocess_s", json_real(min_of(pre, c->eager_runs)));
        json_object_set_new(o, "preprocess_cpu_s", json_real(min_of(cpu, c->eager_runs)));
        json_object_set_new(o, "stats", stats_json(cg));
        if (bm_walk_corpus(cg, &corpus, c->walk_runs, c->walk_budget_s, false, &w, &err))
            goto fail;
        json_object_set_new(o, "mask", bm_walk_json(&w, &corpus, true));
    }
    goto out;
fail:
    json_decref(o);
    o = bm_error_json("%s", err.message);
out:
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    bm_corpus_free(&corpus);
    return o;
}

/* ------------------------------------------------------------------------
 * Scaling with the vocabulary: the first N ids of qwen3
 * ------------------------------------------------------------------------ */

/*
 * The first n ordinary ids of full, then its added tokens (special or not,
 * EOS kept) renumbered after them. *map_eos receives nothing: EOS ids are
 * set through the vocabulary itself.
 */
static gm_status subset_vocab(const gm_vocab *full, uint32_t n, gm_vocab **out, gm_error *err)
{
    const gm_vocab_data *d = full->data;
    uint32_t total = 0, neos = 0;
    const uint8_t **toks = malloc(d->size * sizeof *toks);
    size_t *lens = malloc(d->size * sizeof *lens);
    bool *special = malloc(d->size * sizeof *special);
    uint32_t *eos = malloc((d->neos + 1) * sizeof *eos);
    gm_status st = GM_ERR_NOMEM;
    if (!toks || !lens || !special || !eos)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t id = 0; id < d->size; id++) {
            uint8_t f = d->flags[id];
            bool added = f & (GM_TOK_ADDED | GM_TOK_SPECIAL | GM_TOK_EOS);
            if (f & GM_TOK_PADDING)
                continue;
            if (pass == 0 ? (added || id >= n) : !added)
                continue;
            toks[total] = gm_vocab_data_token(d, id, &lens[total]);
            special[total] = f & GM_TOK_SPECIAL;
            if (f & GM_TOK_EOS)
                eos[neos++] = total;
            total++;
        }
    }
    st = gm_vocab_create_from_tokens(toks, lens, total, special, eos, neos, NULL, out, err);
out:
    free(toks);
    free(lens);
    free(special);
    free(eos);
    return st;
}

/* Greedy longest-match tokenization of text with v's trie (every byte is a token of qwen3). */
static int greedy_tokenize(const gm_vocab *v, const uint8_t *text, size_t len, uint32_t **out,
                           size_t *nout)
{
    const gm_trie *t = v->trie;
    uint32_t *ids = malloc((len ? len : 1) * sizeof *ids);
    size_t n = 0, pos = 0;
    if (!ids)
        return -1;
    while (pos < len) {
        uint32_t node = 0, best = UINT32_MAX;
        size_t best_len = 0;
        for (size_t i = pos; i < len; i++) {
            uint32_t ch = node + 1, found = UINT32_MAX;
            while (ch < t->nodes[node].skip) {
                if (t->nodes[ch].byte == text[i]) {
                    found = ch;
                    break;
                }
                ch = t->nodes[ch].skip;
            }
            if (found == UINT32_MAX)
                break;
            node = found;
            if (t->nodes[node].tok_begin < t->nodes[node].tok_end) {
                best = t->tokens[t->nodes[node].tok_begin];
                best_len = i + 1 - pos;
            }
        }
        if (best == UINT32_MAX) {
            free(ids);
            return -1;
        }
        ids[n++] = best;
        pos += best_len;
    }
    *out = ids;
    *nout = n;
    return 0;
}

static json_t *measure_vocab_scaling(void *argp)
{
    row_arg *a = argp;
    const bench_cfg *c = a->cfg;
    gm_error err;
    gm_vocab *full = NULL, *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *cg = NULL;
    bm_corpus real = {0}, corpus = {0};
    bm_walk w = {0};
    json_t *o = json_object();
    char path[1400];
    ids_path(c, a->g, a->tok, path, sizeof path);
    if (bm_corpus_load(path, &real, &err) || load_vocab(c, a->tok, &full, &err) != GM_OK ||
        load_grammar(a->g, &g, &err) != GM_OK)
        goto fail;
    if (subset_vocab(full, a->nvocab, &v, &err) != GM_OK)
        goto fail;
    /* The corpus files re-tokenized greedily with the subset. */
    for (size_t si = 0; si < real.n; si++) {
        const bm_seq *s = &real.seqs[si];
        size_t cap = 1024, len = 0;
        uint8_t *text = malloc(cap);
        for (size_t i = 0; i < s->n && text; i++) {
            size_t tl;
            const uint8_t *b = gm_vocab_token(full, s->ids[i], &tl);
            while (len + tl > cap) {
                uint8_t *nt = realloc(text, cap * 2);
                if (!nt) {
                    free(text);
                    text = NULL;
                    break;
                }
                text = nt;
                cap *= 2;
            }
            if (text && b) {
                memcpy(text + len, b, tl);
                len += tl;
            }
        }
        uint32_t *ids;
        size_t n;
        if (!text || greedy_tokenize(v, text, len, &ids, &n) || bm_corpus_add(&corpus, s->name, ids, n)) {
            free(text);
            bm_strf(err.message, sizeof err.message, "%s: cannot re-tokenize with %u ids",
                     s->name, a->nvocab);
            goto fail;
        }
        free(text);
    }
    json_object_set_new(o, "vocab_size", json_integer(gm_vocab_size(v)));
    json_object_set_new(o, "greedy_tokens", json_integer((json_int_t)(corpus.steps - corpus.n)));
    json_object_set_new(o, "real_tokens", json_integer((json_int_t)(real.steps - real.n)));
    double pre[16] = {0}, cpu[16] = {0};
    for (int e = 0; e < c->eager_runs; e++) {
        gm_compiled_destroy(cg);
        cg = NULL;
        uint64_t t0 = gm_clock_ns(), c0 = bm_cpu_ns();
        if (compile(g, v, true, &cg, &err) != GM_OK)
            goto fail;
        pre[e] = bm_ms_since(t0) / 1e3;
            cpu[e] = (double)(bm_cpu_ns() - c0) / 1e9;
    }
    json_object_set_new(o, "eager_s", json_real(min_of(pre, c->eager_runs)));
    json_object_set_new(o, "eager_cpu_s", json_real(min_of(cpu, c->eager_runs)));
    json_object_set_new(o, "stats", stats_json(cg));
    if (bm_walk_corpus(cg, &corpus, c->walk_runs, c->walk_budget_s, false, &w, &err))
        goto fail;
    json_object_set_new(o, "mask", bm_walk_json(&w, &corpus, true));
    json_object_set_new(o, "status", json_string(w.all_allowed && w.eos_at_end ? "ok" : "FAILED"));
    goto out;
fail:
    json_decref(o);
    o = bm_error_json("%s", err.message);
out:
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    gm_vocab_destroy(full);
    bm_corpus_free(&real);
    bm_corpus_free(&corpus);
    return o;
}

/* ------------------------------------------------------------------------
 * Scaling with the grammar: synthetic grammars of k statement kinds
 * ------------------------------------------------------------------------ */

/*
 * A statement language with k statement kinds, each with its own keyword and
 * its own shape, over a shared expression grammar: productions, terminals,
 * LR states and lexer states all grow linearly with k.
 */
static char *synthetic_grammar(int k)
{
    size_t cap = 4096 + (size_t)k * 256, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len += (size_t)snprintf(s + len, cap - len, "start: stmt*\n?stmt: s0");
    for (int i = 1; i < k; i++)
        len += (size_t)snprintf(s + len, cap - len, " | s%d", i);
    len += (size_t)snprintf(s + len, cap - len, "\n");
    for (int i = 0; i < k; i++) {
        switch (i % 4) {
        case 0:
            len += (size_t)snprintf(s + len, cap - len, "s%d: \"kw%d\" NAME \"=\" expr \";\"\n", i, i);
            break;
        case 1:
            len += (size_t)snprintf(s + len, cap - len,
                                    "s%d: \"kw%d\" \"(\" [expr (\",\" expr)*] \")\" block\n", i, i);
            break;
        case 2:
            len += (size_t)snprintf(s + len, cap - len,
                                    "s%d: \"kw%d\" NAME \"[\" expr \"]\" \"kw%d_end\" \";\"\n", i,
                                    i, i);
            break;
        default:
            len += (size_t)snprintf(s + len, cap - len, "s%d: \"kw%d\" expr (\"op%d\" expr)* \";\"\n",
                                    i, i, i);
            break;
        }
    }
    len += (size_t)snprintf(s + len, cap - len,
                            "block: \"{\" stmt* \"}\"\n"
                            "?expr: term | expr \"+\" term | expr \"-\" term\n"
                            "?term: atom | term \"*\" atom | term \"/\" atom\n"
                            "?atom: NUMBER | NAME | STRING | \"(\" expr \")\" | NAME \"(\" [expr (\",\" expr)*] \")\"\n"
                            "%%import common.CNAME -> NAME\n"
                            "%%import common.INT -> NUMBER\n"
                            "%%import common.ESCAPED_STRING -> STRING\n"
                            "%%import common.WS\n"
                            "%%ignore WS\n");
    (void)len;
    return s;
}

/* Random constrained walks (uniform over allowed tokens; EOS taken with p = 1/16 when allowed). */
static int random_walks(gm_compiled *cg, int nwalks, int maxlen, uint64_t seed, bm_corpus *out,
                        size_t *dead_ends, gm_error *err)
{
    size_t words = gm_compiled_mask_words(cg);
    uint32_t nbits = gm_compiled_vocab_size(cg);
    uint32_t *mask = calloc(words, sizeof *mask);
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(gm_compiled_vocab(cg), &eos);
    uint64_t x = seed * 2654435761u + 1;
    *dead_ends = 0;
    for (int wi = 0; wi < nwalks; wi++) {
        gm_matcher *m;
        if (gm_matcher_create(cg, NULL, &m, err) != GM_OK)
            return -1;
        uint32_t *ids = malloc((size_t)maxlen * sizeof *ids);
        size_t n = 0;
        while ((int)n < maxlen) {
            if (gm_matcher_fill_mask(m, mask, words, err) != GM_OK)
                return -1;
            bool eos_ok = false;
            for (size_t k = 0; k < neos; k++)
                if ((mask[eos[k] >> 5] >> (eos[k] & 31)) & 1) {
                    eos_ok = true;
                    mask[eos[k] >> 5] &= ~(1u << (eos[k] & 31));
                }
            size_t cnt = bm_mask_count(mask, nbits);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (eos_ok && (cnt == 0 || x % 16 == 0))
                break;
            if (cnt == 0) {
                ++*dead_ends;
                break;
            }
            size_t pick = (size_t)((x >> 11) % cnt);
            uint32_t tok = 0;
            for (uint32_t wd = 0; wd < words; wd++) {
                size_t pc = (size_t)__builtin_popcount(mask[wd]);
                if (pick >= pc) {
                    pick -= pc;
                    continue;
                }
                uint32_t bits = mask[wd];
                while (pick--)
                    bits &= bits - 1;
                tok = wd * 32 + (uint32_t)__builtin_ctz(bits);
                break;
            }
            if (gm_matcher_accept_token(m, tok, err) != GM_OK)
                return -1;
            ids[n++] = tok;
        }
        gm_matcher_destroy(m);
        char name[32];
        bm_strf(name, sizeof name, "walk%d", wi);
        bm_corpus_add(out, name, ids, n);
    }
    free(mask);
    return 0;
}

static json_t *measure_grammar_scaling(void *argp)
{
    row_arg *a = argp;
    const bench_cfg *c = a->cfg;
    gm_error err;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *cg = NULL;
    bm_corpus corpus = {0};
    bm_walk w = {0};
    json_t *o = json_object();
    char *text = synthetic_grammar(a->synth);
    char name[64];
    bm_strf(name, sizeof name, "synthetic%d.lark", a->synth);
    if (!text || load_vocab(c, a->tok, &v, &err) != GM_OK ||
        gm_grammar_create(text, strlen(text), name, NULL, &g, &err) != GM_OK)
        goto fail;
    double pre[16] = {0}, cpu[16] = {0};
    int runs = a->synth >= 256 ? 1 : c->eager_runs; /* big ones take seconds each */
    for (int e = 0; e < runs; e++) {
        gm_compiled_destroy(cg);
        cg = NULL;
        uint64_t t0 = gm_clock_ns(), c0 = bm_cpu_ns();
        if (compile(g, v, true, &cg, &err) != GM_OK)
            goto fail;
        pre[e] = bm_ms_since(t0) / 1e3;
            cpu[e] = (double)(bm_cpu_ns() - c0) / 1e9;
    }
    json_object_set_new(o, "eager_s", json_real(min_of(pre, runs)));
    json_object_set_new(o, "eager_cpu_s", json_real(min_of(cpu, runs)));
    json_object_set_new(o, "stats", stats_json(cg));
    size_t dead;
    if (random_walks(cg, c->quick ? 4 : 16, 256, (uint64_t)a->synth, &corpus, &dead, &err))
        goto fail;
    json_object_set_new(o, "dead_ends", json_integer((json_int_t)dead));
    if (bm_walk_corpus(cg, &corpus, c->walk_runs, c->walk_budget_s, false, &w, &err))
        goto fail;
    json_object_set_new(o, "mask", bm_walk_json(&w, &corpus, false));
    json_object_set_new(o, "status", json_string(w.all_allowed && !dead ? "ok" : "FAILED"));
    goto out;
fail:
    json_decref(o);
    o = bm_error_json("%s", err.message);
out:
    free(text);
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    bm_corpus_free(&corpus);
    return o;
}

/* ------------------------------------------------------------------------
 * Batch: 64 matchers, gm_batch_fill_masks on 1 and 2 threads
 * ------------------------------------------------------------------------ */

enum { BATCH = 64, BATCH_ROUNDS = 200 };

typedef struct batch_start {
    gm_matcher *m;            /* state at the start of the decode loops */
    size_t pos;               /* its position in its corpus file */
} batch_start;

/*
 * One decode loop of `rounds` steps on clones of the start states: a timed
 * gm_batch_fill_masks, then every matcher accepts its true token (untimed).
 * *ns is the time inside the fill calls.
 */
static gm_status batch_decode_loop(gm_batch *b, const batch_start *start, const size_t *file,
                                   const bm_corpus *corpus, size_t words, uint32_t *masks,
                                   int rounds, double *ns, gm_error *err)
{
    gm_matcher *ms[BATCH] = {0};
    size_t pos[BATCH];
    gm_status st = GM_OK;
    *ns = 0;
    for (size_t i = 0; i < BATCH && st == GM_OK; i++) {
        st = gm_matcher_clone(start[i].m, &ms[i], err);
        pos[i] = start[i].pos;
    }
    for (int r = 0; r < rounds && st == GM_OK; r++) {
        uint64_t t0 = gm_clock_ns();
        st = gm_batch_fill_masks(b, ms, BATCH, masks, words, err);
        *ns += (double)(gm_clock_ns() - t0);
        for (size_t i = 0; i < BATCH && st == GM_OK; i++) {
            const bm_seq *s = &corpus->seqs[file[i]];
            if (pos[i] >= s->n) {
                gm_matcher_reset(ms[i]);
                pos[i] = 0;
            } else {
                st = gm_matcher_accept_token(ms[i], s->ids[pos[i]++], err);
            }
        }
    }
    for (size_t i = 0; i < BATCH; i++)
        gm_matcher_destroy(ms[i]);
    return st;
}

static json_t *measure_batch(void *argp)
{
    row_arg *a = argp;
    const bench_cfg *c = a->cfg;
    gm_error err;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *cg = NULL;
    gm_batch *b1 = NULL, *b2 = NULL;
    gm_matcher *ms[BATCH] = {0};
    batch_start start[BATCH] = {0};
    size_t pos[BATCH], file[BATCH];
    bm_corpus corpus = {0};
    uint32_t *masks = NULL;
    json_t *o = json_object();
    char path[1400];
    ids_path(c, a->g, a->tok, path, sizeof path);
    if (bm_corpus_load(path, &corpus, &err) || load_vocab(c, a->tok, &v, &err) != GM_OK ||
        load_grammar(a->g, &g, &err) != GM_OK || compile(g, v, true, &cg, &err) != GM_OK ||
        gm_batch_create(&(gm_batch_options){.threads = 1}, &b1, &err) != GM_OK ||
        gm_batch_create(&(gm_batch_options){.threads = 2, .spin_us = GM_BATCH_SPIN_US_DEFAULT},
                        &b2, &err) != GM_OK)
        goto fail;
    size_t words = gm_compiled_mask_words(cg);
    masks = calloc(BATCH * words, sizeof *masks);
    /* Matchers spread over the corpus: matcher i starts in file i % n at a staggered step. */
    for (size_t i = 0; i < BATCH; i++) {
        file[i] = i % corpus.n;
        pos[i] = 0;
        if (gm_matcher_create(cg, NULL, &ms[i], &err) != GM_OK)
            goto fail;
        size_t skip = (i * 97) % (corpus.seqs[file[i]].n + 1);
        for (; pos[i] < skip; pos[i]++)
            if (gm_matcher_accept_token(ms[i], corpus.seqs[file[i]].ids[pos[i]], &err) != GM_OK)
                goto fail;
    }
    for (size_t i = 0; i < BATCH; i++) {
        if (gm_matcher_clone(ms[i], &start[i].m, &err) != GM_OK)
            goto fail;
        start[i].pos = pos[i];
    }
    int rounds = c->quick ? BATCH_ROUNDS / 4 : BATCH_ROUNDS;
    double t_loop = 0, t_1 = 0, t_2 = 0;
    for (int r = 0; r < rounds; r++) {
        /* Each figure is the best of 3 tries at this round (note [timing hygiene]). */
        double best[3] = {1e30, 1e30, 1e30};
        for (int tr = 0; tr < 3; tr++) {
            uint64_t t0 = gm_clock_ns();
            for (size_t i = 0; i < BATCH; i++)
                if (gm_matcher_fill_mask(ms[i], masks + i * words, words, &err) != GM_OK)
                    goto fail;
            double d = (double)(gm_clock_ns() - t0);
            best[0] = d < best[0] ? d : best[0];
            t0 = gm_clock_ns();
            if (gm_batch_fill_masks(b1, ms, BATCH, masks, words, &err) != GM_OK)
                goto fail;
            d = (double)(gm_clock_ns() - t0);
            best[1] = d < best[1] ? d : best[1];
            t0 = gm_clock_ns();
            if (gm_batch_fill_masks(b2, ms, BATCH, masks, words, &err) != GM_OK)
                goto fail;
            d = (double)(gm_clock_ns() - t0);
            best[2] = d < best[2] ? d : best[2];
        }
        t_loop += best[0];
        t_1 += best[1];
        t_2 += best[2];
        for (size_t i = 0; i < BATCH; i++) {
            const bm_seq *s = &corpus.seqs[file[i]];
            if (pos[i] >= s->n) {
                gm_matcher_reset(ms[i]);
                pos[i] = 0;
                continue;
            }
            if (gm_matcher_accept_token(ms[i], s->ids[pos[i]++], &err) != GM_OK)
                goto fail;
        }
    }
    /* Decode loops: each pool alone, the calls one round apart (fill, then every
       matcher accepts its true token), from the same start states (clones). */
    double loop_ns[2] = {1e300, 1e300};
    for (int rep = 0; rep < 5; rep++)
        for (int k = 0; k < 2; k++) {
            double t;
            if (batch_decode_loop(k ? b2 : b1, start, file, &corpus, words, masks, rounds, &t,
                                  &err) != GM_OK)
                goto fail;
            loop_ns[k] = t < loop_ns[k] ? t : loop_ns[k];
        }
    double n = (double)BATCH * rounds;
    json_object_set_new(o, "decode_t1_us_per_mask", json_real(loop_ns[0] / n / 1e3));
    json_object_set_new(o, "decode_t2_us_per_mask", json_real(loop_ns[1] / n / 1e3));
    json_object_set_new(o, "decode_speedup", json_real(loop_ns[0] / loop_ns[1]));
    json_object_set_new(o, "spin_us", json_integer(GM_BATCH_SPIN_US_DEFAULT));
    json_object_set_new(o, "matchers", json_integer(BATCH));
    json_object_set_new(o, "rounds", json_integer(rounds));
    json_object_set_new(o, "loop_us_per_mask", json_real(t_loop / n / 1e3));
    json_object_set_new(o, "t1_us_per_mask", json_real(t_1 / n / 1e3));
    json_object_set_new(o, "t2_us_per_mask", json_real(t_2 / n / 1e3));
    json_object_set_new(o, "speedup", json_real(t_1 / t_2));
    json_object_set_new(o, "speedup_vs_loop", json_real(t_loop / t_2));
    goto out;
fail:
    json_decref(o);
    o = bm_error_json("%s", err.message);
out:
    for (size_t i = 0; i < BATCH; i++) {
        gm_matcher_destroy(ms[i]);
        gm_matcher_destroy(start[i].m);
    }
    free(masks);
    gm_batch_destroy(b1);
    gm_batch_destroy(b2);
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    bm_corpus_free(&corpus);
    return o;
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------ */

static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

typedef struct suite {
    bench_cfg *cfg;
    json_t *rows;
    double load_min, load_max;
    uint64_t t0;
} suite;

/* Runs one measurement in a child, tags it and appends it. */
static json_t *run_row(suite *s, const char *kind, bm_child_fn fn, row_arg *a, const char *label)
{
    double l0 = loadavg1();
    fprintf(stderr, "[%6.0f s] %-10s %s ...", bm_ms_since(s->t0) / 1e3, kind, label);
    uint64_t t0 = gm_clock_ns();
    json_t *o = bm_in_child(fn, a);
    double l1 = loadavg1();
    s->load_min = l0 >= 0 && l0 < s->load_min ? l0 : s->load_min;
    s->load_max = l1 > s->load_max ? l1 : s->load_max;
    json_object_set_new(o, "kind", json_string(kind));
    if (a->tok)
        json_object_set_new(o, "tokenizer", json_string(a->tok));
    if (a->g)
        json_object_set_new(o, "grammar", json_string(a->g->name));
    json_object_set_new(o, "loadavg", json_real(l0));
    json_object_set_new(o, "wall_s", json_real(bm_ms_since(t0) / 1e3));
    const char *e = json_string_value(json_object_get(o, "error"));
    fprintf(stderr, " %.1f s%s%s\n", bm_ms_since(t0) / 1e3, e ? "  ERROR: " : "", e ? e : "");
    json_array_append_new(s->rows, o);
    /* Kept up to date, so an interrupted run still leaves its rows. */
    char path[1200];
    bm_strf(path, sizeof path, "%s/results.partial.json", s->cfg->out);
    json_dump_file(s->rows, path, JSON_INDENT(1));
    return o;
}

static const grammar_spec *find_grammar(const bench_cfg *c, const char *name)
{
    for (int i = 0; i < c->ngrammars; i++)
        if (c->present[i] && !strcmp(c->grammars[i].name, name))
            return &c->grammars[i];
    return NULL;
}

static bool is_core(const grammar_spec *g)
{
    for (size_t i = 0; i < sizeof CORE_GRAMMARS / sizeof *CORE_GRAMMARS; i++)
        if (!strcmp(g->name, CORE_GRAMMARS[i]))
            return true;
    return false;
}

static json_t *meta_json(const bench_cfg *c, const suite *s)
{
    struct utsname u;
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                bm_strf(model, sizeof model, "%s", p + 2);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    if (f)
        fclose(f);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    json_t *missing = json_array();
    for (int i = 0; i < c->ngrammars; i++)
        if (!c->present[i])
            json_array_append_new(missing, json_pack("{s:s, s:s}", "grammar", c->grammars[i].name,
                                                     "why", c->missing_why[i]));
    json_t *grammars = json_array();
    for (int i = 0; i < c->ngrammars; i++)
        if (c->present[i])
            json_array_append_new(grammars, json_string(c->grammars[i].name));
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:b, s:i, s:i, s:i, s:f, s:f, s:f, s:o, s:o, s:s, "
                     "s:f, s:i}",
                     "date", date, "commit", c->commit ? c->commit : "unknown", "cpu", model,
                     "kernel", uname(&u) == 0 ? u.release : "unknown", "cpus",
                     (int)sysconf(_SC_NPROCESSORS_ONLN), "quick", c->quick, "eager_runs",
                     c->eager_runs, "walk_runs", c->walk_runs, "naive_samples", c->naive_samples,
                     "loadavg_min", s->load_min, "loadavg_max", s->load_max, "total_s",
                     bm_ms_since(s->t0) / 1e3, "grammars", grammars, "missing", missing,
                     "shared", c->shared, "walk_budget_s", c->walk_budget_s, "ablation_ir_masks",
                     c->ablation_ir_masks);
}

/* Whether name is one of the comma-separated names of list. */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, name, n))
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

static bool row_is(const json_t *r, const char *kind, const char *tok)
{
    const char *k = json_string_value(json_object_get(r, "kind"));
    const char *t = json_string_value(json_object_get(r, "tokenizer"));
    return k && !strcmp(k, kind) && (!tok || (t && !strcmp(t, tok)));
}

/*
 * --only: the new Table 1 rows into OUT/results.json. Rows of the named
 * grammars are replaced; each new row goes after the last table row of its
 * tokenizer (the table stays grouped); every other row and the meta of the
 * run that measured them stay as they were, the meta gaining a "merged"
 * entry (date, commit, grammars, load) for this run. Then REPORT.md again.
 */
static int merge_rows(bench_cfg *c, suite *s)
{
    remove_encoded(c);
    rmdir(c->tmp);
    char path[1200];
    bm_strf(path, sizeof path, "%s/results.json", c->out);
    json_error_t je;
    json_t *results = json_load_file(path, 0, &je);
    json_t *rows = json_object_get(results, "rows");
    if (!json_is_array(rows)) {
        fprintf(stderr, "bench_masks --only: %s: %s (run the full suite first)\n", path,
                results ? "no rows" : je.text);
        json_decref(results);
        return 1;
    }
    json_t *kept = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *g = json_string_value(json_object_get(r, "grammar"));
        if (!(row_is(r, "table", NULL) && g && in_list(c->only, g)))
            json_array_append(kept, r);
    }
    json_array_foreach(s->rows, i, r) {
        const char *tok = json_string_value(json_object_get(r, "tokenizer"));
        size_t at = json_array_size(kept), k;
        json_t *x;
        json_array_foreach(kept, k, x)
            if (row_is(x, "table", tok))
                at = k + 1;
        json_array_insert(kept, at, r);
    }
    json_object_set_new(results, "rows", kept);
    json_t *meta = json_object_get(results, "meta");
    json_t *now = meta_json(c, s);
    json_t *merged = json_object_get(meta, "merged");
    if (!json_is_array(merged)) {
        merged = json_array();
        json_object_set_new(meta, "merged", merged);
    }
    json_array_append_new(merged, json_pack("{s:O, s:O, s:s, s:b, s:b, s:O, s:O, s:O}", "date",
                                            json_object_get(now, "date"), "commit",
                                            json_object_get(now, "commit"), "grammars", c->only,
                                            "quick", c->quick, "callgrind", c->callgrind,
                                            "loadavg_min", json_object_get(now, "loadavg_min"),
                                            "loadavg_max", json_object_get(now, "loadavg_max"),
                                            "total_s", json_object_get(now, "total_s")));
    json_decref(now);
    json_decref(s->rows);
    if (json_dump_file(results, path, JSON_INDENT(1) | JSON_REAL_PRECISION(6))) {
        fprintf(stderr, "bench_masks: cannot write %s\n", path);
        json_decref(results);
        return 1;
    }
    fprintf(stderr, "bench_masks: merged the rows of %s into %s\n", c->only, path);
    bm_strf(path, sizeof path, "%s/results.partial.json", c->out);
    unlink(path);
    int rc = bm_report_write(c->out, results);
    json_decref(results);
    return rc;
}

static int run_main(int argc, char **argv)
{
    static bench_cfg cfg;
    bench_cfg *c = &cfg;
    memset(c, 0, sizeof *c);
    const char *sh = getenv("GM_SHARED_DIR");
    bm_strf(c->shared, sizeof c->shared, "%s", sh && *sh ? sh : "../shared");
    bm_strf(c->out, sizeof c->out, "bench/results");
    c->callgrind = true;
    for (int i = 2; i < argc; i++) {
        const char *x = argv[i];
        if (!strcmp(x, "--quick")) {
            c->quick = true;
        } else if (!strcmp(x, "--no-callgrind")) {
            c->callgrind = false;
        } else if (!strcmp(x, "--out") && i + 1 < argc) {
            bm_strf(c->out, sizeof c->out, "%s", argv[++i]);
        } else if (!strcmp(x, "--shared") && i + 1 < argc) {
            bm_strf(c->shared, sizeof c->shared, "%s", argv[++i]);
        } else if (!strcmp(x, "--only") && i + 1 < argc) {
            bm_strf(c->only, sizeof c->only, "%s", argv[++i]);
        } else if (!strcmp(x, "--commit") && i + 1 < argc) {
            c->commit = argv[++i];
        } else if (!strcmp(x, "--grammar") && i + 1 < argc && c->ngrammars < MAX_GRAMMARS) {
            /* NAME=[PATH][,lark][,contextual][,corpus=LANG][,files=LIST] */
            grammar_spec *g = &c->grammars[c->ngrammars++];
            char spec[1200];
            bm_strf(spec, sizeof spec, "%s", argv[++i]);
            char *eq = strchr(spec, '=');
            if (!eq) {
                fprintf(stderr, "bench_masks: --grammar wants "
                                "NAME=[PATH][,lark][,contextual][,corpus=LANG][,files=LIST]\n");
                return 2;
            }
            *eq = 0;
            bm_strf(g->name, sizeof g->name, "%s", spec);
            bm_strf(g->corpus, sizeof g->corpus, "%s", spec);
            char *opt = strchr(eq + 1, ',');
            if (opt)
                *opt++ = 0;
            bm_strf(g->path, sizeof g->path, "%s", eq + 1);
            while (opt && *opt) {
                char *next = strchr(opt, ',');
                if (next)
                    *next++ = 0;
                if (!strcmp(opt, "lark")) {
                    g->lark = true;
                } else if (!strcmp(opt, "contextual")) {
                    g->contextual = true;
                } else if (!strncmp(opt, "corpus=", 7)) {
                    bm_strf(g->corpus, sizeof g->corpus, "%s", opt + 7);
                } else if (!strncmp(opt, "files=", 6)) {
                    bm_strf(g->files, sizeof g->files, "%s", opt + 6);
                } else {
                    fprintf(stderr, "bench_masks: --grammar %s: unknown option %s\n", g->name, opt);
                    return 2;
                }
                opt = next;
            }
        } else {
            fprintf(stderr, "bench_masks run: bad argument %s\n", x);
            return 2;
        }
    }
    ssize_t sl = readlink("/proc/self/exe", c->self, sizeof c->self - 1);
    if (sl <= 0)
        bm_strf(c->self, sizeof c->self, "%s", argv[0]);
    c->eager_runs = c->quick ? 2 : 3;
    c->walk_runs = c->quick ? 3 : 5;
    c->naive_samples = c->quick ? 10 : 100;
    c->walk_budget_s = 20;
    c->ablation_ir_masks = 200;
    bm_strf(c->tmp, sizeof c->tmp, "%s/tmp", c->out);
    mkdir(c->out, 0777);
    mkdir(c->tmp, 0777);

    /* The bundled grammars first, then those given on the command line. */
    int given = c->ngrammars;
    grammar_spec extra[MAX_GRAMMARS];
    memcpy(extra, c->grammars, sizeof extra);
    c->ngrammars = 0;
    /* The four languages, then any other corpus language with a bundled grammar. */
    char langs[MAX_GRAMMARS][64];
    int nlangs = 0;
    for (size_t i = 0; i < sizeof CORE_GRAMMARS / sizeof *CORE_GRAMMARS; i++)
        bm_strf(langs[nlangs++], sizeof langs[0], "%s", CORE_GRAMMARS[i]);
    char corpus_dir[1200];
    bm_strf(corpus_dir, sizeof corpus_dir, "%s/corpus", c->shared);
    struct dirent **ents;
    int nents = scandir(corpus_dir, &ents, NULL, alphasort);
    for (int i = 0; i < nents; i++) {
        size_t len;
        bool known = false;
        for (int k = 0; k < nlangs; k++)
            known |= !strcmp(langs[k], ents[i]->d_name);
        if (!known && ents[i]->d_name[0] != '.' && nlangs < MAX_GRAMMARS / 2 &&
            gm_bundled_grammar(ents[i]->d_name, &len))
            bm_strf(langs[nlangs++], sizeof langs[0], "%s", ents[i]->d_name);
        free(ents[i]);
    }
    if (nents >= 0)
        free(ents);
    for (int i = 0; i < nlangs; i++) {
        grammar_spec *g = &c->grammars[c->ngrammars];
        memset(g, 0, sizeof *g);
        bm_strf(g->name, sizeof g->name, "%s", langs[i]);
        bm_strf(g->corpus, sizeof g->corpus, "%s", langs[i]);
        bool overridden = false;
        for (int k = 0; k < given; k++)
            overridden |= !strcmp(extra[k].name, g->name);
        if (overridden)
            continue;
        size_t len;
        c->present[c->ngrammars] = gm_bundled_grammar(g->name, &len) != NULL;
        if (!c->present[c->ngrammars])
            bm_strf(c->missing_why[c->ngrammars], sizeof c->missing_why[0],
                     "not bundled in this build (grammars/%s.lark is not on main yet)", g->name);
        c->ngrammars++;
    }
    for (int k = 0; k < given && c->ngrammars < MAX_GRAMMARS; k++) {
        c->grammars[c->ngrammars] = extra[k];
        struct stat sb;
        size_t len;
        if (!extra[k].path[0]) {
            c->present[c->ngrammars] = gm_bundled_grammar(extra[k].name, &len) != NULL;
            if (!c->present[c->ngrammars])
                bm_strf(c->missing_why[c->ngrammars], sizeof c->missing_why[0],
                         "no bundled grammar %s in this build", extra[k].name);
        } else {
            c->present[c->ngrammars] = stat(extra[k].path, &sb) == 0;
            if (!c->present[c->ngrammars])
                bm_strf(c->missing_why[c->ngrammars], sizeof c->missing_why[0], "%s: %s",
                         extra[k].path, strerror(errno));
        }
        c->ngrammars++;
    }

    suite s = {c, json_array(), 1e9, -1, gm_clock_ns()};
    s.load_min = loadavg1();
    s.load_max = s.load_min;

    /* --only: the named grammars' Table 1 rows, nothing else. */
    if (c->only[0])
        for (int gi = 0; gi < c->ngrammars; gi++)
            c->present[gi] = c->present[gi] && in_list(c->only, c->grammars[gi].name);
    /* Grammars with a files= list: their ids for every tokenizer, before any row needs them. */
    for (int gi = 0; gi < c->ngrammars; gi++) {
        if (!c->present[gi] || !c->grammars[gi].files[0])
            continue;
        for (size_t ti = 0; ti < sizeof TOKENIZERS / sizeof *TOKENIZERS; ti++) {
            row_arg a = {.cfg = c, .tok = TOKENIZERS[ti], .g = &c->grammars[gi]};
            json_t *o = bm_in_child(encode_files, &a);
            const char *e = json_string_value(json_object_get(o, "error"));
            fprintf(stderr, "encode %s x %s: %s\n", a.tok, a.g->name,
                    e ? e : json_string_value(json_object_get(o, "summary")));
            json_decref(o);
        }
    }

    /* 1. Table 1. */
    for (size_t ti = 0; ti < sizeof TOKENIZERS / sizeof *TOKENIZERS; ti++) {
        const char *tok = TOKENIZERS[ti];
        if (c->quick && strcmp(tok, "llama3"))
            continue;
        for (int gi = 0; gi < c->ngrammars; gi++) {
            if (!c->present[gi])
                continue;
            row_arg a = {.cfg = c, .tok = tok, .g = &c->grammars[gi]};
            bm_strf(a.gmc, sizeof a.gmc, "%s/%s.%s.gmc", c->tmp, a.g->name, tok);
            char label[160];
            bm_strf(label, sizeof label, "%s x %s", tok, a.g->name);
            json_t *o = run_row(&s, "table", measure_table, &a, label);
            if (!strcmp(tok, "llama3") && !json_object_get(o, "error")) {
                char ids[1400], tokdir[1200];
                ids_path(c, a.g, tok, ids, sizeof ids);
                tokenizer_dir(c, tok, tokdir, sizeof tokdir);
                /*
                 * From the .gmc when it loads (fast under valgrind), else from the
                 * sources: the whole corpus (full runs), and an even sample of 1000
                 * masks (also in quick runs: the exact figure bench-quick compares).
                 */
                bool src = json_object_get(o, "gmc_error") != NULL;
                const char *from_gmc[] = {"--gmc", a.gmc, "--ids", ids, "--samples", "1000",
                                          NULL};
                const char *flag1 = a.g->lark ? "--lark" : a.g->contextual ? "--contextual" : NULL;
                const char *flag2 = a.g->lark && a.g->contextual ? "--contextual" : NULL;
                const char *from_src[] = {"--grammar", a.g->path[0] ? a.g->path : a.g->name,
                                          "--tokenizer", tokdir, "--ids", ids, "--samples",
                                          "1000", flag1, flag2, NULL};
                char cl[96];
                bm_strf(cl, sizeof cl, "table-%s", a.g->name);
                double ir = callgrind_ir(c, cl, src ? from_src : from_gmc);
                if (ir > 0)
                    json_object_set_new(o, "ir_per_mask_1k", json_real(ir));
                if (!c->quick) {
                    from_gmc[4] = NULL; /* the whole corpus */
                    from_src[6] = flag1;
                    from_src[7] = flag2;
                    from_src[8] = NULL;
                    ir = callgrind_ir(c, cl, src ? from_src : from_gmc);
                    if (ir > 0)
                        json_object_set_new(o, "ir_per_mask", json_real(ir));
                }
            }
            unlink(a.gmc);
        }
    }

    if (c->only[0])
        return merge_rows(c, &s);

    /* 2. Ablations on llama3: json and every code grammar. */
    const grammar_spec *abl[MAX_GRAMMARS];
    int nabl = 0;
    if (find_grammar(c, "json"))
        abl[nabl++] = find_grammar(c, "json");
    for (int i = 0; i < c->ngrammars; i++)
        if (c->present[i] && is_core(&c->grammars[i]) && strcmp(c->grammars[i].name, "json"))
            abl[nabl++] = &c->grammars[i];
    for (int k = 0; k < nabl && !c->quick; k++) {
        for (int vi = 0; vi < (int)NVARIANTS; vi++) {
            const variant_def *vd = &VARIANTS[vi];
            row_arg a = {.cfg = c, .tok = "llama3", .g = abl[k], .variant = vd->flags,
                         .mode = vd->mode};
            char label[200];
            bm_strf(label, sizeof label, "llama3 x %s: %s", abl[k]->name, vd->name);
            json_t *o = run_row(&s, "ablation", measure_variant, &a, label);
            json_object_set_new(o, "variant", json_string(vd->name));
            json_object_set_new(o, "tag", json_string(vd->tag));
            json_object_set_new(o, "order", json_integer(vi));
            json_object_set_new(o, "flags", json_integer(vd->flags));
            if (vd->mode == 0 && !json_object_get(o, "error")) {
                char ids[1400], var[32], tokdir[1200];
                ids_path(c, abl[k], "llama3", ids, sizeof ids);
                tokenizer_dir(c, "llama3", tokdir, sizeof tokdir);
                bm_strf(var, sizeof var, "%u", vd->flags);
                char maxm[32];
                bm_strf(maxm, sizeof maxm, "%d", c->ablation_ir_masks);
                const char *args[] = {"--grammar", abl[k]->path[0] ? abl[k]->path : abl[k]->name,
                                      "--tokenizer", tokdir, "--variant", var, "--ids", ids,
                                      "--samples", maxm, NULL};
                char cl[96];
                bm_strf(cl, sizeof cl, "abl-%s-%d", abl[k]->name, vi);
                double ir = callgrind_ir(c, cl, args);
                if (ir > 0)
                    json_object_set_new(o, "ir_per_mask", json_real(ir));
            }
        }
    }

    /* 3a. Vocabulary size: qwen3 subsets. */
    static const uint32_t SIZES[] = {8192, 32768, 65536, 131072, 0};
    for (int gi = 0; gi < c->ngrammars; gi++) {
        if (!c->present[gi] || !is_core(&c->grammars[gi]))
            continue;
        if (c->quick && strcmp(c->grammars[gi].name, "json"))
            continue;
        for (size_t k = 0; k < sizeof SIZES / sizeof *SIZES; k++) {
            uint32_t n = SIZES[k] ? SIZES[k] : UINT32_MAX;
            if (c->quick && n != 32768)
                continue;
            row_arg a = {.cfg = c, .tok = "qwen3", .g = &c->grammars[gi], .nvocab = n};
            char label[160];
            bm_strf(label, sizeof label, "qwen3[:%s] x %s", SIZES[k] ? "" : "all",
                     c->grammars[gi].name);
            if (SIZES[k])
                bm_strf(label, sizeof label, "qwen3[:%u] x %s", n, c->grammars[gi].name);
            json_t *o = run_row(&s, "vocab", measure_vocab_scaling, &a, label);
            json_object_set_new(o, "ids_kept", SIZES[k] ? json_integer(n) : json_string("all"));
        }
    }

    /* 3b. Grammar size: synthetic grammars, llama3. */
    static const int SYNTH[] = {4, 16, 64, 256, 1024};
    for (size_t k = 0; k < sizeof SYNTH / sizeof *SYNTH; k++) {
        if (c->quick && SYNTH[k] != 16)
            continue;
        row_arg a = {.cfg = c, .tok = "llama3", .synth = SYNTH[k]};
        char label[64];
        bm_strf(label, sizeof label, "llama3 x synthetic(%d)", SYNTH[k]);
        json_t *o = run_row(&s, "grammar", measure_grammar_scaling, &a, label);
        json_object_set_new(o, "statement_kinds", json_integer(SYNTH[k]));
    }

    /* 4. Batch. */
    static const char *const batch_grammars[] = {"json", "go", "java", "python"};
    for (size_t k = 0; k < sizeof batch_grammars / sizeof *batch_grammars; k++) {
        const grammar_spec *bg = find_grammar(c, batch_grammars[k]);
        if (!bg || (c->quick && k > 0))
            continue;
        row_arg a = {.cfg = c, .tok = "llama3", .g = bg};
        char label[160];
        bm_strf(label, sizeof label, "llama3 x %s, %d matchers", bg->name, BATCH);
        run_row(&s, "batch", measure_batch, &a, label);
    }

    remove_encoded(c);
    rmdir(c->tmp);
    json_t *results = json_pack("{s:o, s:o}", "meta", meta_json(c, &s), "rows", s.rows);
    char path[1200];
    bm_strf(path, sizeof path, "%s/results.json", c->out);
    if (json_dump_file(results, path, JSON_INDENT(1) | JSON_REAL_PRECISION(6))) {
        fprintf(stderr, "bench_masks: cannot write %s\n", path);
        json_decref(results);
        return 1;
    }
    fprintf(stderr, "bench_masks: wrote %s\n", path);
    bm_strf(path, sizeof path, "%s/results.partial.json", c->out);
    unlink(path);
    int rc = bm_report_write(c->out, results);
    json_decref(results);
    return rc;
}

static int report_main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_masks report DIR\n");
        return 2;
    }
    char path[4096];
    bm_strf(path, sizeof path, "%s/results.json", argv[2]);
    json_error_t je;
    json_t *r = json_load_file(path, 0, &je);
    if (!r) {
        fprintf(stderr, "bench_masks: %s: %s\n", path, je.text);
        return 1;
    }
    int rc = bm_report_write(argv[2], r);
    json_decref(r);
    return rc;
}

static int compare_main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_masks compare OLD.json NEW.json\n");
        return 2;
    }
    json_error_t je;
    json_t *old = json_load_file(argv[2], 0, &je);
    if (!old) {
        printf("bench-quick: no baseline to compare with (%s: %s)\n", argv[2], je.text);
        return 0;
    }
    json_t *new = json_load_file(argv[3], 0, &je);
    if (!new) {
        fprintf(stderr, "bench_masks: %s: %s\n", argv[3], je.text);
        json_decref(old);
        return 1;
    }
    bm_compare(old, new, 0.20);
    json_decref(old);
    json_decref(new);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return run_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "report"))
        return report_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "compare"))
        return compare_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "loop"))
        return loop_main(argc, argv);
    fprintf(stderr, "usage: bench_masks run|report|compare|loop ... (see bench/bench_masks.c)\n");
    return 2;
}
