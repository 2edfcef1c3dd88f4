/*
 * bench_earley: the Earley engine (issue 15) on llama3, single thread.
 *
 *   json   tests/data/json_lark.gbnf (a value root) over ../shared/corpus/json
 *          (reference ids): compile time (grammar build + lazy engine), the
 *          first mask, per-token masks in a cold pass (caches built inside
 *          the timed masks) and in warm passes (best of R per step).
 *   c      ../shared/grammars/gbnf/c.gbnf over the small C programs of
 *          bench/data/c (inside that grammar's language), encoded with the
 *          tokenizer's own encoder.
 *   rep    root ::= [a-z]{0,65536} over 20000 random lowercase letters.
 *   ablation: each of pruning, state cache, repetition compression and the
 *          cross-grammar cache switched off in turn (GM_EVARIANT_*), on the
 *          same walks; masks compared with the full engine's at every step.
 *   cross  two grammars sharing sub-structures (JSON and a JSON-lines
 *          grammar) compiled for one vocabulary with one gm_excache: cold
 *          pass of the second with and without the first before it.
 *
 * Wall times per step (CLOCK_MONOTONIC); the machine is shared (2 cores,
 * other sessions), so p99 and max carry preemption spikes: warm figures are
 * the per-step minimum over R passes, and the load average is printed.
 *
 * usage: bench_earley [--tokenizer NAME] [--runs R] [--out FILE] [--only json|c|rep]
 *
 * --only runs the lazy and eager rows of one grammar and nothing else (for
 * profiling, e.g. under valgrind --tool=callgrind).
 */
#define _DEFAULT_SOURCE /* getloadavg */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gramask.h"
#include "base/timing.h"
#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "vocab/ids_file.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"

static FILE *out_file;

static void say(const char *fmt, ...) GM_PRINTF(1, 2);
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (out_file) {
        va_start(ap, fmt);
        vfprintf(out_file, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

static void die(const char *what, const gm_error *err)
{
    fprintf(stderr, "bench_earley: %s: %s\n", what, err ? err->message : "");
    exit(1);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(s);
        return NULL;
    }
    fclose(f);
    s[n] = 0;
    *len = (size_t)n;
    return s;
}

typedef struct seqs {
    uint32_t **ids;
    size_t *n;
    size_t count, steps;
} seqs;

static void seqs_add(seqs *s, uint32_t *ids, size_t n)
{
    s->ids = realloc(s->ids, (s->count + 1) * sizeof *s->ids);
    s->n = realloc(s->n, (s->count + 1) * sizeof *s->n);
    s->ids[s->count] = ids;
    s->n[s->count++] = n;
    s->steps += n + 1;
}

typedef struct env {
    gm_mem mem;
    gm_vocab *pv;          /* public vocabulary: its encoder */
    gm_vocab_data *v;
    gm_trie *t;
    size_t words;
    double vocab_ms;       /* creating a vocabulary's cross-grammar cache (its tables) */
} env;

static gm_egrammar *build(env *E, const char *text, size_t len, double *ms)
{
    gm_error err;
    uint64_t t0 = gm_clock_ns();
    gm_ebnf src;
    gm_ebnf_init(&src, &E->mem);
    if (gm_ebnf_parse(&src, "bench.gbnf", text, len, GM_EBNF_GBNF, NULL, &err) != GM_OK)
        die("grammar", &err);
    gm_egrammar *g;
    if (gm_egrammar_build(&E->mem, &src, NULL, &g, &err) != GM_OK)
        die("grammar build", &err);
    gm_ebnf_free(&src);
    if (ms)
        *ms = (gm_clock_ns() - t0) / 1e6;
    return g;
}

typedef struct walk {
    uint64_t *ns;          /* [steps] per-step mask time */
    double accept_us;      /* mean accept time */
    size_t steps;
    bool ok;               /* every true token allowed, EOS at the end */
    uint32_t *masks;       /* [steps * words] when recorded */
} walk;

/* One pass over s with engine e; per-step times into w (min with what is there when `min`). */
static void run_pass(env *E, gm_eengine *e, const seqs *s, walk *w, bool min, bool record,
                     const uint32_t *compare)
{
    gm_error err;
    gm_escratch *sc;
    if (gm_escratch_create(e, &sc, &err) != GM_OK)
        die("scratch", &err);
    uint32_t *mask = malloc(E->words * 4);
    size_t k = 0;
    uint64_t acc_ns = 0, nacc = 0;
    w->ok = true;
    for (size_t i = 0; i < s->count; i++) {
        gm_estate *st = gm_estate_start(e, &err);
        for (size_t j = 0; j <= s->n[i]; j++, k++) {
            uint64_t t0 = gm_clock_ns();
            if (gm_estate_fill_mask(e, sc, st, mask, E->words, &err) != GM_OK)
                die("fill_mask", &err);
            uint64_t dt = gm_clock_ns() - t0;
            w->ns[k] = min && w->ns[k] < dt ? w->ns[k] : dt;
            if (record)
                memcpy(w->masks + k * E->words, mask, E->words * 4);
            if (compare && memcmp(compare + k * E->words, mask, E->words * 4)) {
                fprintf(stderr, "bench_earley: masks differ from the full engine at step %zu\n", k);
                w->ok = false;
            }
            if (j == s->n[i]) {
                if (!gm_estate_accepting(e, st))
                    w->ok = false;
                k++;
                break;
            }
            uint32_t id = s->ids[i][j];
            if (!((mask[id / 32] >> (id % 32)) & 1))
                w->ok = false;
            gm_estate *nx;
            t0 = gm_clock_ns();
            if (gm_estate_accept_token(e, sc, st, id, &nx, &err) != GM_OK) {
                fprintf(stderr, "sequence %zu, token %zu (id %u)\n", i, j, id);
                die("accept_token", &err);
            }
            acc_ns += gm_clock_ns() - t0;
            nacc++;
            gm_estate_release(e, st);
            st = nx;
        }
        gm_estate_release(e, st);
    }
    w->accept_us = nacc ? acc_ns / 1e3 / nacc : 0;
    free(mask);
    gm_escratch_destroy(e, sc);
}

static gm_latency lat(const walk *w)
{
    uint64_t *c = malloc(w->steps * sizeof *c);
    memcpy(c, w->ns, w->steps * sizeof *c);
    gm_latency l = gm_latency_of(c, w->steps);
    free(c);
    return l;
}

typedef struct result {
    gm_latency cold, warm;
    double accept_us, first_ms, engine_ms;
    bool ok;
    gm_eengine_stats st;
} result;

/* Cold pass, then runs-1 warm passes (per-step minimum), on a fresh engine. */
static result measure_opts(env *E, gm_egrammar *g, gm_excache *x, uint32_t variant, bool eager,
                           const seqs *s, int runs, uint32_t **record, const uint32_t *compare)
{
    result r;
    memset(&r, 0, sizeof r);
    gm_eengine *e;
    /* The public API gives every engine its vocabulary's cross-grammar cache:
       a fresh one (nothing shared yet) unless the run brings its own or
       switches it off. */
    gm_excache *fresh = NULL;
    if (!x && !(variant & GM_EVARIANT_NO_CROSS_CACHE)) {
        gm_error err;
        uint64_t t0 = gm_clock_ns();
        if (gm_excache_create(&E->mem, E->v, E->t, &fresh, &err) != GM_OK)
            die("cross-grammar cache", &err);
        E->vocab_ms = (gm_clock_ns() - t0) / 1e6;
        x = fresh;
    }
    {
        gm_error err;
        gm_eengine_options o;
        memset(&o, 0, sizeof o);
        o.variant = variant;
        o.eager = eager;
        uint64_t t0 = gm_clock_ns();
        if (gm_eengine_create(&E->mem, g, E->v, E->t, x, &o, &e, &err) != GM_OK)
            die("engine", &err);
        r.engine_ms = (gm_clock_ns() - t0) / 1e6;
    }
    walk w;
    memset(&w, 0, sizeof w);
    w.steps = s->steps;
    w.ns = calloc(s->steps, sizeof *w.ns);
    if (record)
        w.masks = *record = malloc(s->steps * E->words * 4);
    run_pass(E, e, s, &w, false, record != NULL, compare);
    r.first_ms = w.ns[0] / 1e6;
    r.cold = lat(&w);
    r.ok = w.ok;
    for (int i = 1; i < runs; i++) {
        run_pass(E, e, s, &w, i > 1, false, NULL);
        r.ok &= w.ok;
    }
    r.warm = runs > 1 ? lat(&w) : r.cold;
    r.accept_us = w.accept_us;
    gm_eengine_get_stats(e, &r.st);
    gm_eengine_destroy(e);
    gm_excache_destroy(fresh);
    free(w.ns);
    return r;
}

static result measure(env *E, gm_egrammar *g, gm_excache *x, uint32_t variant, const seqs *s,
                      int runs, uint32_t **record, const uint32_t *compare)
{
    return measure_opts(E, g, x, variant, false, s, runs, record, compare);
}

/* A cross-grammar cache filled by one cold pass of `sibling` over s. */
static gm_excache *warm_cache(env *E, gm_egrammar *sibling, const seqs *s)
{
    gm_error err;
    gm_excache *x;
    if (gm_excache_create(&E->mem, E->v, E->t, &x, &err) != GM_OK)
        die("cross-grammar cache", &err);
    result r = measure(E, sibling, x, 0, s, 1, NULL, NULL);
    (void)r;
    return x;
}

static uint32_t *encode(env *E, const char *text, size_t len, size_t *n)
{
    gm_error err;
    uint32_t *ids, *copy;
    if (gm_vocab_encode(E->pv, text, len, NULL, &ids, n, &err) != GM_OK)
        die("encode", &err);
    copy = malloc((*n ? *n : 1) * sizeof *copy);
    memcpy(copy, ids, *n * sizeof *copy);
    gm_vocab_free_ids(E->pv, ids);
    return copy;
}

static void row(const char *name, const result *r)
{
    say("| %s | %.2f | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %u | %s |\n", name,
        r->engine_ms, r->first_ms, r->cold.mean, r->cold.p99, r->warm.mean, r->warm.p50,
        r->warm.p99, r->accept_us, r->st.cache_entries, r->ok ? "yes" : "**NO**");
}

static const char *const HEAD =
    "| run | engine ms | first mask ms | cold mean µs | cold p99 µs | warm mean µs | "
    "warm p50 µs | warm p99 µs | accept µs | cache entries | exact |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n";

int main(int argc, char **argv)
{
    const char *tok = "llama3", *outp = NULL, *only = NULL;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc)
            tok = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            outp = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "json") || !strcmp(argv[i + 1], "c") ||
                  !strcmp(argv[i + 1], "rep")))
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_earley [--tokenizer NAME] [--runs R] [--out FILE] "
                            "[--only json|c|rep]\n");
            return 2;
        }
    }
    const char *shared = getenv("GM_SHARED_DIR") ? getenv("GM_SHARED_DIR") : "../shared";
    const char *srcdir = getenv("GM_SRCDIR") ? getenv("GM_SRCDIR") : ".";
    if (outp && !(out_file = fopen(outp, "w"))) {
        fprintf(stderr, "bench_earley: cannot write %s\n", outp);
        return 1;
    }
    env E;
    memset(&E, 0, sizeof E);
    gm_mem_init(&E.mem, NULL, 0);
    gm_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizers/%s/tokenizer.json", shared, tok);
    if (gm_vocab_create_from_file(path, NULL, &E.pv, &err) != GM_OK ||
        gm_vocab_load(&E.mem, path, NULL, &E.v, &err) != GM_OK ||
        gm_trie_build(&E.mem, E.v, &E.t, &err) != GM_OK)
        die("vocabulary", &err);
    E.words = (E.v->size + 31) / 32;
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);

    /* Corpora. */
    seqs json = {0}, cprog = {0}, rep = {0};
    snprintf(path, sizeof path, "%s/corpus/json/ids.%s.json", shared, tok);
    gm_ids_file *idf;
    if (gm_ids_file_load(&E.mem, path, &idf, &err) != GM_OK)
        die("ids", &err);
    for (size_t i = 0; i < idf->n; i++) {
        uint32_t *c = malloc((idf->entries[i].nids + 1) * sizeof *c);
        memcpy(c, idf->entries[i].ids, idf->entries[i].nids * sizeof *c);
        seqs_add(&json, c, idf->entries[i].nids);
    }
    gm_ids_file_destroy(idf);
    static const char *const cfiles[] = {"gcd.c", "sum.c", "fib.c", "collatz.c", "stats.c"};
    for (size_t i = 0; i < sizeof cfiles / sizeof *cfiles; i++) {
        size_t len, n;
        snprintf(path, sizeof path, "%s/bench/data/c/%s", srcdir, cfiles[i]);
        char *text = read_all(path, &len);
        if (!text)
            die(path, NULL);
        uint32_t *ids = encode(&E, text, len, &n);
        seqs_add(&cprog, ids, n);
        free(text);
    }
    {
        char *text = malloc(20001);
        uint32_t rng = 1;
        for (int i = 0; i < 20000; i++) {
            rng = rng * 1103515245u + 12345u;
            text[i] = (char)('a' + (rng >> 16) % 26);
        }
        text[20000] = 0;
        size_t n;
        uint32_t *ids = encode(&E, text, 20000, &n);
        seqs_add(&rep, ids, n);
        free(text);
    }

    size_t jlen, clen;
    snprintf(path, sizeof path, "%s/tests/data/json_lark.gbnf", srcdir);
    char *jtext = read_all(path, &jlen);
    snprintf(path, sizeof path, "%s/grammars/gbnf/c.gbnf", shared);
    char *ctext = read_all(path, &clen);
    if (!jtext || !ctext)
        die("grammar files", NULL);
    const char *rtext = "root ::= [a-z]{0,65536}";

    say("Earley engine (issue 15), bench/bench_earley.\n\n");
    say("`bench/bench_earley --tokenizer %s --runs %d` (single thread); load average %.2f %.2f "
        "%.2f on a shared 2-core machine: wall times, p99 carries preemption spikes.\n\n",
        tok, runs, load[0], load[1], load[2]);
    say("Corpora: json = %zu files of ../shared/corpus/json (%zu masks); c = %zu C programs "
        "of bench/data/c inside c.gbnf's language (%zu masks); rep = 20000 random letters "
        "under `[a-z]{0,65536}` (%zu masks). *engine ms*: gm_eengine_create (lazy); "
        "*first mask*: the first gm_estate_fill_mask on a fresh engine; *cold*: the first pass "
        "(mask-cache entries built inside the timed masks); every engine gets a fresh "
        "cross-grammar cache of the vocabulary, as the public API gives it the vocabulary's "
        "(nothing shared yet; its per-vocabulary tables are built with it, not in the masks: "
        "see the end); *warm*: per-step minimum over %d "
        "more passes with the same engine; *exact*: every true token allowed, EOS at the end, "
        "and (ablations) masks identical to the full engine's at every step.\n\n",
        json.count, json.steps, cprog.count, cprog.steps, rep.steps, runs - 1);

    double jbuild, cbuild, rbuild;
    /* Compile times: median of 11 builds. */
    double tms[11];
    for (int i = 0; i < 11; i++) {
        gm_egrammar *g = build(&E, jtext, jlen, &tms[i]);
        gm_egrammar_destroy(g);
    }
    for (int i = 0; i < 11; i++)
        for (int j = i + 1; j < 11; j++)
            if (tms[j] < tms[i]) {
                double t = tms[i];
                tms[i] = tms[j];
                tms[j] = t;
            }
    jbuild = tms[5];
    gm_egrammar *gj = build(&E, jtext, jlen, NULL);
    /* The sibling: the same JSON with an optional ";" at the end. */
    const char *oldroot = "root   ::= ws value ws\n", *newroot = "root ::= ws value ws (\";\" ws)?\n";
    char *at = strstr(jtext, oldroot);
    if (!at)
        die("json_lark.gbnf has no root line to vary", NULL);
    char *stext = malloc(jlen + 64);
    snprintf(stext, jlen + 64, "%.*s%s%s", (int)(at - jtext), jtext, newroot, at + strlen(oldroot));
    gm_egrammar *gjs = build(&E, stext, strlen(stext), NULL);
    free(stext);
    gm_egrammar *gc = build(&E, ctext, clen, &cbuild);
    gm_egrammar *gr = build(&E, rtext, strlen(rtext), &rbuild);
    gm_egrammar_stats gs;

    say("### Grammars\n\n| grammar | rules | states | edges | build ms |\n|---|---|---|---|---|\n");
    gm_egrammar_get_stats(gj, &gs);
    say("| json_lark.gbnf | %u | %u | %u | %.2f (median of 11) |\n", gs.rules, gs.states, gs.edges,
        jbuild);
    gm_egrammar_get_stats(gc, &gs);
    say("| c.gbnf | %u | %u | %u | %.2f |\n", gs.rules, gs.states, gs.edges, cbuild);
    gm_egrammar_get_stats(gr, &gs);
    say("| [a-z]{0,65536} | %u | %u | %u | %.2f |\n\n", gs.rules, gs.states, gs.edges, rbuild);

    say("### Masks\n\n%s", HEAD);
    uint32_t *jm = NULL, *cm = NULL, *rm = NULL;
    if (only) {
        gm_egrammar *g = !strcmp(only, "json") ? gj : !strcmp(only, "c") ? gc : gr;
        const seqs *s = !strcmp(only, "json") ? &json : !strcmp(only, "c") ? &cprog : &rep;
        uint32_t *m;
        result r = measure(&E, g, NULL, 0, s, runs, &m, NULL);
        row(only, &r);
        r = measure_opts(&E, g, NULL, 0, true, s, runs, NULL, m);
        char name[64];
        snprintf(name, sizeof name, "%s, eager", only);
        row(name, &r);
        free(m);
        goto done;
    }
    result rj = measure(&E, gj, NULL, 0, &json, runs, &jm, NULL);
    row("json", &rj);
    result rc = measure(&E, gc, NULL, 0, &cprog, runs, &cm, NULL);
    row("c", &rc);
    result rr = measure(&E, gr, NULL, 0, &rep, runs, &rm, NULL);
    row("rep", &rr);
    result a;
    a = measure_opts(&E, gj, NULL, 0, true, &json, runs, NULL, jm);
    row("json, eager", &a);
    a = measure_opts(&E, gc, NULL, 0, true, &cprog, runs, NULL, cm);
    row("c, eager", &a);
    a = measure_opts(&E, gr, NULL, 0, true, &rep, runs, NULL, rm);
    row("rep, eager", &a);
    /* Cross-grammar cache: warmed by a sibling grammar (json: the same JSON
       with an optional ";" at the end; c, rep: the same grammar compiled
       before, as a server sees a repeated request). */
    gm_excache *xj = warm_cache(&E, gjs, &json), *xc = warm_cache(&E, gc, &cprog),
               *xr = warm_cache(&E, gr, &rep);
    a = measure(&E, gj, xj, 0, &json, runs, NULL, jm);
    row("json, cross cache warmed by a sibling", &a);
    a = measure(&E, gc, xc, 0, &cprog, runs, NULL, cm);
    row("c, cross cache warmed by itself", &a);
    a = measure(&E, gr, xr, 0, &rep, runs, NULL, rm);
    row("rep, cross cache warmed by itself", &a);
    say("\nCreating a vocabulary's cross-grammar cache (what lies below each of its trie nodes: "
        "once per vocabulary, like the trie): %.1f ms.\n", E.vocab_ms);
    say("\nTargets: json mean ≤ 5 µs, p99 ≤ 50 µs, compile ≤ 5 ms; c mean ≤ 50 µs, p99 ≤ 1 ms; "
        "rep compile ≤ 5 ms, per token ≤ 20 µs. *eager*: gm_eengine_create builds every "
        "mask-cache entry of states without counters (its time is *engine ms*); masks of new "
        "Earley sets are still computed on first use. *cross cache*: the engine gets a "
        "gm_excache filled by one pass of another grammar first.\n\n");

    say("### Ablation\n\nEach line switches one technique off (GM_EVARIANT_*) in the full "
        "engine of the lines above; every engine here gets the cross-grammar cache warmed as "
        "above, which only the last technique's lines ignore; masks are compared with the full "
        "engine's at every step.\n\n%s", HEAD);
    static const struct {
        const char *name;
        uint32_t v;
    } vars[] = {
        {"no pruning", GM_EVARIANT_NO_PRUNING},
        {"no state cache", GM_EVARIANT_NO_STATE_CACHE},
        {"no repetition compression", GM_EVARIANT_NO_REPEAT_COMPRESS},
        {"no cross-grammar cache", GM_EVARIANT_NO_CROSS_CACHE},
    };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        char name[128];
        snprintf(name, sizeof name, "json, %s", vars[i].name);
        a = measure(&E, gj, xj, vars[i].v, &json, runs, NULL, jm);
        row(name, &a);
        snprintf(name, sizeof name, "c, %s", vars[i].name);
        a = measure(&E, gc, xc, vars[i].v, &cprog, runs, NULL, cm);
        row(name, &a);
        snprintf(name, sizeof name, "rep, %s", vars[i].name);
        a = measure(&E, gr, xr, vars[i].v, &rep, runs, NULL, rm);
        row(name, &a);
    }
    say("\n");
    gm_excache_destroy(xj);
    gm_excache_destroy(xc);
    gm_excache_destroy(xr);
done:
    gm_egrammar_destroy(gjs);
    free(jm);
    free(cm);
    free(rm);
    gm_egrammar_destroy(gj);
    gm_egrammar_destroy(gc);
    gm_egrammar_destroy(gr);
    free(jtext);
    free(ctext);
    for (size_t i = 0; i < json.count; i++)
        free(json.ids[i]);
    for (size_t i = 0; i < cprog.count; i++)
        free(cprog.ids[i]);
    for (size_t i = 0; i < rep.count; i++)
        free(rep.ids[i]);
    if (out_file)
        fclose(out_file);
    return 0;
}
