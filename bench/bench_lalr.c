/*
 * Benchmark of the LALR(1) stage: for each grammar, the time to build the
 * tables from its BNF (gm_lalr_build: LR(0) automaton, DeRemer-Pennello
 * lookaheads, dense tables; the front end's load time is shown apart), and
 * the LR runtime on stacks met while parsing random sentences:
 * gm_lr_can_feed on 1- and 3-terminal sequences (the mask computation's
 * inner loop), gm_lr_feed, gm_lr_accepts. Single-threaded.
 *
 * usage: bench_lalr [GRAMMAR.lark | bundled:NAME ...]
 *   default: the bundled Go grammar (519 BNF productions, no conflicts) and
 *   the syncode Python, Java and Go grammars of
 *   $GM_SHARED_DIR/benchmarks/syncode-grammars; all built with
 *   --conflicts=lark (the syncode grammars were written for Lark).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/bundled.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "base/bitset.h"

enum { BUILD_RUNS = 51, STACKS = 2000 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t below(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return n ? (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) % n) : 0;
}

static void count_warning(void *ud, const gm_error *w)
{
    (void)w;
    (*(unsigned *)ud)++;
}

/* Stacks reached by random walks of the tables (random viable terminals). */
static size_t collect_stacks(const gm_lr_table *t, gm_mem *m, gm_lr_node **stacks, size_t want)
{
    uint64_t *bits = calloc(GM_BITSET_WORDS(t->nterms) + 1, sizeof *bits);
    uint32_t *cand = malloc(t->nterms * sizeof *cand);
    size_t n = 0;
    while (n < want) {
        gm_lr_node *top = gm_lr_stack_new(m);
        for (uint32_t len = 1 + below(200); len > 0 && n < want; len--) {
            gm_lr_expected(t, top, bits);
            uint32_t nc = 0;
            for (uint32_t term = 0; term < t->eof; term++)
                if (gm_bitset_get(bits, term))
                    cand[nc++] = term;
            if (!nc)
                break;
            gm_lr_node *next;
            if (gm_lr_feed(t, m, top, cand[below(nc)], &next) != GM_OK)
                break;
            gm_lr_node_release(m, top);
            top = next;
            if (below(8) == 0) {
                gm_lr_node_retain(top);
                stacks[n++] = top;
            }
        }
        gm_lr_node_release(m, top);
    }
    free(bits);
    free(cand);
    return n;
}

static void bench_runtime(const gm_lr_table *t, gm_mem *m)
{
    gm_lr_node **stacks = malloc(STACKS * sizeof *stacks);
    size_t ns = collect_stacks(t, m, stacks, STACKS);
    /* Query sequences: per stack, 16 random single terminals and 16 random triples. */
    enum { Q = 16 };
    uint32_t *one = malloc(ns * Q * sizeof *one), *three = malloc(ns * Q * 3 * sizeof *three);
    for (size_t i = 0; i < ns * Q; i++) {
        one[i] = below(t->nterms);
        for (int k = 0; k < 3; k++)
            three[3 * i + k] = below(t->nterms);
    }
    /* Also viable triples: the next terminals of a walk continuing from the stack. */
    uint32_t *viable = malloc(ns * 3 * sizeof *viable);
    uint64_t *bits = calloc(GM_BITSET_WORDS(t->nterms) + 1, sizeof *bits);
    size_t nviable = 0;
    for (size_t s = 0; s < ns; s++) {
        gm_lr_node *top = stacks[s];
        gm_lr_node_retain(top);
        int k = 0;
        for (; k < 3; k++) {
            gm_lr_expected(t, top, bits);
            uint32_t pick = UINT32_MAX, seen = 0;
            for (uint32_t term = 0; term < t->eof; term++)
                if (gm_bitset_get(bits, term) && below(++seen) == 0)
                    pick = term;
            if (pick == UINT32_MAX)
                break;
            gm_lr_node *next;
            gm_lr_feed(t, m, top, pick, &next);
            gm_lr_node_release(m, top);
            top = next;
            viable[3 * nviable + k] = pick;
        }
        gm_lr_node_release(m, top);
        if (k == 3)
            nviable++;
    }
    /* Each figure is the best of 7 repetitions (the machine may be shared). */
    unsigned long yes = 0, fed = 0;
    double single = 1e18, triple = 1e18, vtriple = 1e18, acc = 1e18, feed = 1e18;
    for (int round = 0; round < 7; round++) {
        double t0 = now_ns();
        for (size_t s = 0; s < ns; s++)
            for (int q = 0; q < Q; q++)
                yes += gm_lr_can_feed(t, stacks[s], &one[s * Q + q], 1);
        double v = (now_ns() - t0) / ((double)ns * Q);
        single = v < single ? v : single;
        t0 = now_ns();
        for (size_t s = 0; s < ns; s++)
            for (int q = 0; q < Q; q++)
                yes += gm_lr_can_feed(t, stacks[s], &three[3 * (s * Q + q)], 3);
        v = (now_ns() - t0) / ((double)ns * Q);
        triple = v < triple ? v : triple;
        t0 = now_ns();
        for (int rep = 0; rep < 10; rep++)
            for (size_t s = 0; s < nviable; s++)
                yes += gm_lr_can_feed(t, stacks[s], &viable[3 * s], 3);
        v = nviable ? (now_ns() - t0) / (10.0 * nviable) : 0;
        vtriple = v < vtriple ? v : vtriple;
        t0 = now_ns();
        for (size_t s = 0; s < ns; s++)
            yes += gm_lr_accepts(t, stacks[s]);
        v = (now_ns() - t0) / (double)ns;
        acc = v < acc ? v : acc;
        t0 = now_ns();
        unsigned long f = 0;
        for (size_t s = 0; s < nviable; s++) {
            gm_lr_node *next;
            if (gm_lr_feed(t, m, stacks[s], viable[3 * s], &next) == GM_OK) {
                f++;
                gm_lr_node_release(m, next);
            }
        }
        v = f ? (now_ns() - t0) / f : 0;
        feed = v < feed ? v : feed;
        fed += f;
    }
    printf("  runtime on %zu stacks from random walks (best of 7; %lu true answers, %lu feeds):\n", ns, yes,
           fed);
    printf("    gm_lr_can_feed, 1 random terminal        %7.1f ns\n", single);
    printf("    gm_lr_can_feed, 3 random terminals       %7.1f ns\n", triple);
    printf("    gm_lr_can_feed, 3 viable terminals       %7.1f ns\n", vtriple);
    printf("    gm_lr_accepts                            %7.1f ns\n", acc);
    printf("    gm_lr_feed (viable, allocates)           %7.1f ns\n", feed);
    for (size_t s = 0; s < ns; s++)
        gm_lr_node_release(m, stacks[s]);
    free(stacks);
    free(one);
    free(three);
    free(viable);
    free(bits);
}

static int bench_grammar(const char *path)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_cfg *g;
    double t0 = now_ns();
    size_t blen;
    const char *bundled = !strncmp(path, "bundled:", 8) ? gm_bundled_grammar(path + 8, &blen) : NULL;
    gm_status lst = bundled ? gm_grammar_load(&m, path, bundled, blen, NULL, &g, &err)
                            : gm_grammar_load_file(&m, path, NULL, &g, &err);
    if (lst != GM_OK) {
        fprintf(stderr, "bench_lalr: %s\n", err.message);
        return 1;
    }
    double load_ms = (now_ns() - t0) / 1e6;
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflicts = GM_CONFLICTS_LARK;
    unsigned warnings = 0;
    o.warn = count_warning;
    o.warn_ud = &warnings;
    double runs[BUILD_RUNS];
    gm_lr_table *t = NULL;
    size_t table_bytes = 0, peak = 0;
    gm_mem bm; /* the tables' allocator: must outlive the last table */
    gm_mem_init(&bm, NULL, 0);
    for (int i = 0; i < BUILD_RUNS; i++) {
        atomic_store(&bm.peak, 0);
        warnings = 0;
        double t1 = now_ns();
        if (gm_lalr_build(&bm, g, &o, &t, &err) != GM_OK) {
            fprintf(stderr, "bench_lalr: %s\n", err.message);
            gm_cfg_destroy(g);
            return 1;
        }
        runs[i] = (now_ns() - t1) / 1e6;
        table_bytes = atomic_load(&bm.used);
        peak = atomic_load(&bm.peak);
        if (i + 1 < BUILD_RUNS)
            gm_lr_table_destroy(t);
    }
    double first = runs[0];
    qsort(runs, BUILD_RUNS, sizeof *runs, cmp_double);
    printf("%s\n", path);
    printf("  %u BNF productions, %u terminals, %u nonterminals -> %u LALR(1) states, %u conflicts "
           "resolved (Lark)\n",
           g->nprods, g->nterminals, g->nnonterminals, t->nstates, t->nconflicts);
    printf("  front end (load + EBNF -> BNF)  %8.2f ms\n", load_ms);
    printf("  gm_lalr_build  median %7.2f ms   min %7.2f ms   first %7.2f ms   (%d runs)\n",
           runs[BUILD_RUNS / 2], runs[0], first, BUILD_RUNS);
    printf("  tables %.2f MiB (action %u x %u, goto %u x %u), peak during build %.2f MiB\n",
           table_bytes / 1048576.0, t->nstates, t->nterms, t->nstates, t->nnonterms, peak / 1048576.0);
    bench_runtime(t, &m);
    gm_lr_table_destroy(t);
    gm_cfg_destroy(g);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench_grammar(argv[i]);
        return rc;
    }
    const char *shared = getenv("GM_SHARED_DIR");
    rc |= bench_grammar("bundled:go");
    const char *names[] = {"python_grammar.lark", "java_grammar.lark", "go_grammar.lark"};
    for (size_t i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/benchmarks/syncode-grammars/%s", shared && *shared ? shared : "../shared",
                 names[i]);
        rc |= bench_grammar(path);
    }
    return rc;
}
