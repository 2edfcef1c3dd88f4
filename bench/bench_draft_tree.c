/*
 * Speculative decoding's draft trees (issue 35 item 6): the masks of every
 * node in one call (gm_matcher_fill_draft_tree) against the loop engines
 * run today (accept the node's token, fill, the children, roll back), on
 * random trees of 8, 32 and 64 nodes over Llama 3's vocabulary, for a JSON
 * Schema and an XGrammar EBNF grammar. Draft tokens are mostly ones the
 * grammar allows (7 in 10), so the trees go deep; some are rejected, some
 * are EOS. Masks of both are compared (a difference ends the bench with
 * status 1); times are CPU time per tree, the best of RUNS passes over
 * TREES trees, after one warm-up pass (the mask caches are lazy). Writes a
 * Markdown table to stdout and, with --out FILE, to FILE too.
 *
 * usage: bench_draft_tree [--out FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gramask.h"

enum { RUNS = 5, TREES = 20, MAXN = 64 };

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct tree {
    size_t n;
    int64_t next_token[MAXN], next_sibling[MAXN], tokens[MAXN];
} tree;

static gm_vocab *vocab;
static size_t words;
static uint32_t eos;

static uint32_t pick_allowed(const uint32_t *mask, uint64_t *seed)
{
    uint32_t count = 0, n = gm_vocab_size(vocab);
    for (size_t w = 0; w < words; w++)
        count += (uint32_t)__builtin_popcount(mask[w]);
    if (!count)
        return UINT32_MAX;
    uint32_t k = (uint32_t)(rnd(seed) % count);
    for (uint32_t t = 0; t < n; t++)
        if ((mask[t >> 5] >> (t & 31) & 1) && k-- == 0)
            return t;
    return UINT32_MAX;
}

/* As tests/test_draft_tree.c builds them: parents mostly nodes the grammar continues from. */
static void random_tree(gm_matcher *m, size_t n, uint64_t *seed, tree *t, uint32_t *mask)
{
    gm_matcher *state[MAXN] = {0};
    int64_t last[MAXN];
    gm_error err;
    gm_matcher_clone(m, &state[0], &err);
    t->n = n;
    for (size_t i = 0; i < n; i++)
        t->next_token[i] = t->next_sibling[i] = last[i] = -1;
    t->tokens[0] = 0;
    for (size_t i = 1; i < n; i++) {
        size_t p;
        int tries = 0;
        do
            p = (size_t)(rnd(seed) % i);
        while ((!state[p] || gm_matcher_is_terminated(state[p])) && ++tries < 16);
        uint64_t r = rnd(seed) % 20;
        uint32_t token = (uint32_t)(rnd(seed) % gm_vocab_size(vocab));
        if (r == 0)
            token = eos;
        else if (r < 15 && state[p] && !gm_matcher_is_terminated(state[p]) &&
                 gm_matcher_fill_mask(state[p], mask, words, &err) == GM_OK) {
            uint32_t a = pick_allowed(mask, seed);
            if (a != UINT32_MAX)
                token = a;
        }
        t->tokens[i] = token;
        if (last[p] < 0)
            t->next_token[p] = (int64_t)i;
        else
            t->next_sibling[last[p]] = (int64_t)i;
        last[p] = (int64_t)i;
        if (state[p] && gm_matcher_clone(state[p], &state[i], &err) == GM_OK &&
            gm_matcher_accept_token(state[i], token, &err) != GM_OK) {
            gm_matcher_destroy(state[i]);
            state[i] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        gm_matcher_destroy(state[i]);
}

/* The loop engines run today. Returns the masks filled. */
static size_t loop_node(gm_matcher *m, const tree *t, int64_t node, bool root, uint32_t *rows)
{
    gm_error err;
    size_t filled = 0;
    if (!root) {
        int64_t tok = t->tokens[node];
        if (tok < 0 || tok >= gm_vocab_size(vocab) ||
            gm_matcher_accept_token(m, (uint32_t)tok, &err) != GM_OK)
            return 0;
    }
    if (!gm_matcher_is_terminated(m)) {
        gm_matcher_fill_mask(m, rows + (size_t)node * words, words, &err);
        filled++;
        for (int64_t c = t->next_token[node]; c != -1; c = t->next_sibling[c])
            filled += loop_node(m, t, c, false, rows);
    }
    if (!root)
        gm_matcher_rollback(m, 1, &err);
    return filled;
}

typedef struct row {
    const char *grammar;
    size_t n;
    double loop_us, call_us, masks;
} row;

static int bench_grammar(const char *name, gm_grammar *g, row *out)
{
    gm_error err;
    gm_compiled *c;
    gm_matcher *m;
    if (gm_compiled_create(g, vocab, NULL, &c, &err) != GM_OK ||
        gm_matcher_create(c, NULL, &m, &err) != GM_OK) {
        fprintf(stderr, "%s: %s\n", name, err.message);
        return -1;
    }
    gm_grammar_destroy(g);
    static const size_t sizes[] = {8, 32, 64};
    uint32_t *want = malloc(MAXN * words * 4), *got = malloc(MAXN * words * 4);
    static tree trees[TREES];
    int bad = 0;
    for (size_t s = 0; s < 3; s++) {
        uint64_t seed = 35 + s;
        for (size_t i = 0; i < TREES; i++)
            random_tree(m, sizes[s], &seed, &trees[i], want);
        double best_loop = 1e300, best_call = 1e300;
        size_t filled = 0;
        for (int run = 0; run <= RUNS; run++) { /* run 0 warms the caches */
            double t0 = cpu_us();
            filled = 0;
            for (size_t i = 0; i < TREES; i++) {
                memset(want, 0, trees[i].n * words * 4);
                filled += loop_node(m, &trees[i], 0, true, want);
            }
            double t1 = cpu_us();
            for (size_t i = 0; i < TREES; i++)
                if (gm_matcher_fill_draft_tree(m, trees[i].next_token, trees[i].next_sibling,
                                               trees[i].tokens, trees[i].n, got, words, NULL,
                                               NULL, &err) != GM_OK) {
                    fprintf(stderr, "%s: %s\n", name, err.message);
                    return -1;
                }
            double t2 = cpu_us();
            if (run > 0) {
                if (t1 - t0 < best_loop)
                    best_loop = t1 - t0;
                if (t2 - t1 < best_call)
                    best_call = t2 - t1;
            }
        }
        /* identical masks, tree by tree (outside the timed passes) */
        for (size_t i = 0; i < TREES; i++) {
            memset(want, 0, trees[i].n * words * 4);
            loop_node(m, &trees[i], 0, true, want);
            gm_matcher_fill_draft_tree(m, trees[i].next_token, trees[i].next_sibling,
                                       trees[i].tokens, trees[i].n, got, words, NULL, NULL, &err);
            if (memcmp(want, got, trees[i].n * words * 4)) {
                fprintf(stderr, "%s: tree %zu of %zu nodes: masks differ from the loop's\n", name,
                        i, trees[i].n);
                bad = 1;
            }
        }
        out[s] = (row){name, sizes[s], best_loop / TREES, best_call / TREES,
                       (double)filled / TREES};
    }
    free(want);
    free(got);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    return bad ? -1 : 0;
}

static void print(FILE *f, const row *rows, size_t n, const char *tok)
{
    fprintf(f, "# Draft trees: one call against the accept/fill/rollback loop\n\n"
               "`make bench` (bench/bench_draft_tree.c): random draft trees over the %s "
               "vocabulary, %d trees per size, CPU time per tree, best of %d passes after a "
               "warm-up pass; masks of both identical (checked). \"masks\" is the mean number "
               "of nodes that get a mask (the others are rejected or after EOS).\n\n"
               "| grammar | nodes | masks | loop (us/tree) | one call (us/tree) | speed-up |\n"
               "|---|---:|---:|---:|---:|---:|\n", tok, TREES, RUNS);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "| %s | %zu | %.1f | %.1f | %.1f | %.2fx |\n", rows[i].grammar, rows[i].n,
                rows[i].masks, rows[i].loop_us, rows[i].call_us,
                rows[i].loop_us / rows[i].call_us);
}

int main(int argc, char **argv)
{
    const char *out = argc == 3 && !strcmp(argv[1], "--out") ? argv[2] : NULL;
    const char *shared = getenv("GM_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizers/llama3/tokenizer.json", shared ? shared : "../shared");
    gm_error err;
    if (gm_vocab_create_from_file(path, NULL, &vocab, &err) != GM_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    words = (gm_vocab_size(vocab) + 31) / 32;
    const uint32_t *e;
    if (!gm_vocab_eos_ids(vocab, &e))
        return 1;
    eos = e[0];
    static const char schema[] =
        "{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\",\"maxLength\":40},"
        "\"age\":{\"type\":\"integer\",\"minimum\":0},"
        "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"bc\",\"def\"]}},"
        "\"ok\":{\"type\":\"boolean\"}},\"required\":[\"name\",\"age\"]}";
    static const char ebnf[] =
        "root ::= expr\n"
        "expr ::= term ((\"+\" | \"-\") term)*\n"
        "term ::= factor ((\"*\" | \"/\") factor)*\n"
        "factor ::= [0-9]+ | \"(\" expr \")\" | [a-z]+ | \"-\" factor\n";
    row rows[6];
    gm_grammar *g;
    int st = 0;
    if (gm_grammar_from_json_schema(schema, strlen(schema), NULL, &g, &err) != GM_OK) {
        fprintf(stderr, "schema: %s\n", err.message);
        return 1;
    }
    st |= bench_grammar("JSON Schema", g, rows);
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.format = GM_FORMAT_EBNF;
    if (gm_grammar_create(ebnf, strlen(ebnf), "expr.ebnf", &o, &g, &err) != GM_OK) {
        fprintf(stderr, "ebnf: %s\n", err.message);
        return 1;
    }
    st |= bench_grammar("EBNF (expressions)", g, rows + 3);
    print(stdout, rows, 6, "Llama 3");
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            perror(out);
            return 1;
        }
        print(f, rows, 6, "Llama 3");
        fclose(f);
    }
    gm_vocab_destroy(vocab);
    return st ? 1 : 0;
}
