/*
 * gm_matcher_fill_draft_tree (speculative decoding's draft trees) against
 * the accept/fill/rollback loop engines run today, node by node: random
 * trees of 8, 32 and 64 nodes over a real vocabulary (Qwen3's tokenizer)
 * and real grammars (a JSON Schema, XGrammar EBNF, the bundled Lark JSON
 * grammar on the LALR engine), most draft tokens drawn from the exact
 * masks so the trees go deep, some rejected, some EOS. Then every kind of
 * malformed tree (an error naming the node, never a loop), the time limit,
 * end_when_complete, and gm_matcher_options.eos_after_end.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct world {
    gm_vocab *vocab;
    size_t words;
    uint32_t eos;
} world;

static world W;

static int setup(void **state)
{
    (void)state;
    gm_error err;
    const char *path = gm_test_shared_path("tokenizers/qwen3/tokenizer.json");
    if (gm_vocab_create_from_file(path, NULL, &W.vocab, &err) != GM_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return -1;
    }
    W.words = (gm_vocab_size(W.vocab) + 31) / 32;
    const uint32_t *eos;
    assert_true(gm_vocab_eos_ids(W.vocab, &eos) > 0);
    W.eos = eos[0];
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gm_vocab_destroy(W.vocab);
    return 0;
}

static gm_compiled *compile(gm_grammar *g)
{
    gm_compiled *c;
    gm_error err;
    assert_int_equal(gm_compiled_create(g, W.vocab, NULL, &c, &err), GM_OK);
    gm_grammar_destroy(g);
    return c;
}

static const char schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"maxLength\":12},"
    "\"age\":{\"type\":\"integer\",\"minimum\":0},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"bc\",\"def\"]}},"
    "\"ok\":{\"type\":\"boolean\"}},\"required\":[\"name\",\"age\"]}";

static const char ebnf[] =
    "root ::= expr\n"
    "expr ::= term ((\"+\" | \"-\") term)*\n"
    "term ::= factor ((\"*\" | \"/\") factor)*\n"
    "factor ::= [0-9]+ | \"(\" expr \")\" | \"x\" | \"-\" factor\n";

static gm_compiled *compiled_schema(void)
{
    gm_grammar *g;
    gm_error err;
    assert_int_equal(gm_grammar_from_json_schema(schema, strlen(schema), NULL, &g, &err), GM_OK);
    return compile(g);
}

static gm_compiled *compiled_ebnf(const char *text)
{
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.format = GM_FORMAT_EBNF;
    gm_grammar *g;
    gm_error err;
    assert_int_equal(gm_grammar_create(text, strlen(text), "t.ebnf", &o, &g, &err), GM_OK);
    return compile(g);
}

static gm_compiled *compiled_lark_json(void)
{
    gm_grammar *g;
    gm_error err;
    assert_int_equal(gm_grammar_create_bundled("json", NULL, &g, &err), GM_OK);
    return compile(g);
}

/* A random allowed token of mask, or UINT32_MAX when none. */
static uint32_t pick_allowed(const uint32_t *mask, uint64_t *seed)
{
    uint32_t n = gm_vocab_size(W.vocab), count = 0;
    for (size_t w = 0; w < W.words; w++)
        count += (uint32_t)__builtin_popcount(mask[w]);
    if (!count)
        return UINT32_MAX;
    uint32_t k = (uint32_t)(gm_test_rand(seed) % count);
    for (uint32_t t = 0; t < n; t++)
        if ((mask[t >> 5] >> (t & 31) & 1) && k-- == 0)
            return t;
    return UINT32_MAX;
}

typedef struct tree {
    size_t n;
    int64_t next_token[64], next_sibling[64], tokens[64];
} tree;

/*
 * A random tree of n nodes below the state of m: each new node hangs under
 * a random earlier node that still has a live state; its token is one the
 * parent's mask allows (7 in 10), EOS (1 in 20), or any token. Node ids are
 * shuffled so a child's id may be below its parent's.
 */
static void random_tree(gm_matcher *m, size_t n, uint64_t *seed, tree *t)
{
    gm_matcher *state[64] = {0};
    int64_t parent[64], tok[64];
    uint32_t *mask = malloc(W.words * 4);
    gm_error err;
    assert_int_equal(gm_matcher_clone(m, &state[0], &err), GM_OK);
    parent[0] = -1;
    tok[0] = 0;
    for (size_t i = 1; i < n; i++) {
        size_t p;
        do
            p = (size_t)(gm_test_rand(seed) % i);
        while (!state[p] && gm_test_rand(seed) % 8);
        parent[i] = (int64_t)p;
        uint64_t r = gm_test_rand(seed) % 20;
        uint32_t token = (uint32_t)(gm_test_rand(seed) % gm_vocab_size(W.vocab));
        if (r == 0)
            token = W.eos;
        else if (r < 15 && state[p] && !gm_matcher_is_terminated(state[p]) &&
                 gm_matcher_fill_mask(state[p], mask, W.words, &err) == GM_OK) {
            uint32_t a = pick_allowed(mask, seed);
            if (a != UINT32_MAX)
                token = a;
        }
        tok[i] = token;
        if (state[p] && gm_matcher_clone(state[p], &state[i], &err) == GM_OK &&
            gm_matcher_accept_token(state[i], token, &err) != GM_OK) {
            gm_matcher_destroy(state[i]);
            state[i] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        gm_matcher_destroy(state[i]);
    free(mask);
    /* ids: 0 stays the root, the rest shuffled */
    size_t id[64];
    for (size_t i = 0; i < n; i++)
        id[i] = i;
    for (size_t i = n - 1; i > 1; i--) {
        size_t j = 1 + (size_t)(gm_test_rand(seed) % i);
        size_t x = id[i];
        id[i] = id[j];
        id[j] = x;
    }
    t->n = n;
    for (size_t i = 0; i < n; i++)
        t->next_token[i] = t->next_sibling[i] = -1;
    int64_t last_child[64];
    for (size_t i = 0; i < n; i++)
        last_child[i] = -1;
    for (size_t i = 0; i < n; i++) {
        t->tokens[id[i]] = tok[i];
        if (i == 0)
            continue;
        size_t p = (size_t)parent[i];
        if (last_child[p] < 0)
            t->next_token[id[p]] = (int64_t)id[i];
        else
            t->next_sibling[last_child[p]] = (int64_t)id[i];
        last_child[p] = (int64_t)id[i];
    }
}

/* The loop engines run: accept the node's token, fill, the children, roll back. */
static void loop_node(gm_matcher *m, const tree *t, int64_t node, bool root, uint32_t *rows,
                      bool eos_after_end)
{
    gm_error err;
    uint32_t *row = rows + (size_t)node * W.words;
    bool entered = root;
    if (!root) {
        int64_t tok = t->tokens[node];
        entered = tok >= 0 && tok < gm_vocab_size(W.vocab) &&
                  gm_matcher_accept_token(m, (uint32_t)tok, &err) == GM_OK;
    }
    if (entered) {
        if (!gm_matcher_is_terminated(m) || eos_after_end) {
            assert_int_equal(gm_matcher_fill_mask(m, row, W.words, &err), GM_OK);
            for (int64_t c = t->next_token[node]; c != -1; c = t->next_sibling[c])
                loop_node(m, t, c, false, rows, eos_after_end);
        }
        if (!root)
            assert_int_equal(gm_matcher_rollback(m, 1, &err), GM_OK);
    }
}

static void check_trees(gm_compiled *c, uint64_t seed, bool eos_after_end)
{
    static const size_t sizes[] = {8, 32, 64};
    gm_matcher_options mo = {.eos_after_end = eos_after_end};
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, &mo, &m, &err), GM_OK);
    uint32_t *want = calloc(64 * W.words, 4), *got = malloc(64 * W.words * 4);
    uint32_t *before = malloc(W.words * 4), *after = malloc(W.words * 4);
    size_t filled = 0, nodes = 0;
    for (size_t round = 0; round < 3; round++) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            /* the root: a few tokens into the output */
            gm_matcher_reset(m);
            size_t prefix = (size_t)(gm_test_rand(&seed) % 4);
            for (size_t i = 0; i < prefix; i++) {
                assert_int_equal(gm_matcher_fill_mask(m, before, W.words, &err), GM_OK);
                uint32_t tok = pick_allowed(before, &seed);
                if (tok == UINT32_MAX || tok == W.eos)
                    break;
                assert_int_equal(gm_matcher_accept_token(m, tok, &err), GM_OK);
            }
            tree t;
            random_tree(m, sizes[s], &seed, &t);
            memset(want, 0, t.n * W.words * 4);
            loop_node(m, &t, 0, true, want, eos_after_end);
            memset(got, 0xa5, t.n * W.words * 4);
            assert_int_equal(gm_matcher_fill_mask(m, before, W.words, &err), GM_OK);
            bool completed = false;
            if (gm_matcher_fill_draft_tree(m, t.next_token, t.next_sibling, t.tokens, t.n, got,
                                           W.words, NULL, &completed, &err) != GM_OK)
                fail_msg("%s", err.message);
            assert_true(completed);
            for (size_t i = 0; i < t.n; i++) {
                bool any = false;
                for (size_t w = 0; w < W.words; w++)
                    any |= want[i * W.words + w] != 0;
                filled += any;
                if (memcmp(want + i * W.words, got + i * W.words, W.words * 4) != 0)
                    fail_msg("tree of %zu nodes, node %zu: mask differs from the loop's", t.n, i);
            }
            nodes += t.n;
            /* the matcher's state is untouched */
            assert_int_equal(gm_matcher_fill_mask(m, after, W.words, &err), GM_OK);
            assert_memory_equal(before, after, W.words * 4);
        }
    }
    /* the trees went deep enough to mean something: most nodes got a mask */
    assert_true(filled * 2 > nodes);
    free(want);
    free(got);
    free(before);
    free(after);
    gm_matcher_destroy(m);
}

static void test_schema_trees(void **state)
{
    (void)state;
    gm_compiled *c = compiled_schema();
    check_trees(c, 1, false);
    check_trees(c, 2, true);
    gm_compiled_destroy(c);
}

static void test_ebnf_trees(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf(ebnf);
    check_trees(c, 3, false);
    check_trees(c, 4, true);
    gm_compiled_destroy(c);
}

static void test_lalr_trees(void **state)
{
    (void)state;
    gm_compiled *c = compiled_lark_json();
    check_trees(c, 5, false);
    gm_compiled_destroy(c);
}

/* Runs the call on a 4-node tree and returns its status (the message in err). */
static gm_status run(gm_matcher *m, const int64_t *nt, const int64_t *ns, size_t n, gm_error *err)
{
    static const int64_t tokens[8] = {0};
    uint32_t *rows = calloc(8 * W.words, 4);
    gm_status st = gm_matcher_fill_draft_tree(m, nt, ns, tokens, n, rows, W.words, NULL, NULL, err);
    free(rows);
    return st;
}

static void expect_error(gm_matcher *m, const int64_t *nt, const int64_t *ns, size_t n,
                         gm_status code, const char *needle)
{
    gm_error err;
    assert_int_equal(run(m, nt, ns, n, &err), code);
    if (!strstr(err.message, needle))
        fail_msg("expected \"%s\" in: %s", needle, err.message);
}

static void test_malformed(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf(ebnf);
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    int64_t nt[4], ns[4] = {-1, -1, -1, -1};
    /* a cycle through the root */
    memcpy(nt, (int64_t[]){1, 2, 0, -1}, sizeof nt);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "links to the root");
    /* a node linked twice (child of 0 and sibling of 2): a cycle 1 -> 2 -> 1 below the root */
    memcpy(nt, (int64_t[]){1, 2, -1, -1}, sizeof nt);
    memcpy(ns, (int64_t[]){-1, -1, 1, -1}, sizeof ns);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "node 1 is linked from two places");
    /* a cycle out of reach of the root: 2 -> 3 -> 2 */
    memcpy(nt, (int64_t[]){1, -1, 3, -1}, sizeof nt);
    memcpy(ns, (int64_t[]){-1, -1, -1, 2}, sizeof ns);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "lies on a cycle");
    /* out of range */
    memcpy(nt, (int64_t[]){1, 4, -1, -1}, sizeof nt);
    memcpy(ns, (int64_t[]){-1, -1, -1, -1}, sizeof ns);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "next_token[1] is 4");
    memcpy(nt, (int64_t[]){1, -1, -1, -1}, sizeof nt);
    memcpy(ns, (int64_t[]){-1, -7, -1, -1}, sizeof ns);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "next_sibling[1] is -7");
    /* the root with a sibling */
    memcpy(ns, (int64_t[]){2, -1, -1, -1}, sizeof ns);
    expect_error(m, nt, ns, 4, GM_ERR_ARGUMENT, "the root (node 0) has a sibling");
    /* empty, too large (a limit, checked before the arrays are read), NULL, wrong width */
    memcpy(ns, (int64_t[]){-1, -1, -1, -1}, sizeof ns);
    expect_error(m, nt, ns, 0, GM_ERR_ARGUMENT, "empty");
    expect_error(m, nt, ns, GM_DRAFT_TREE_MAX_NODES + 1, GM_ERR_LIMIT, "limit");
    expect_error(m, NULL, ns, 4, GM_ERR_ARGUMENT, "NULL");
    uint32_t *rows = calloc(4 * W.words, 4);
    assert_int_equal(gm_matcher_fill_draft_tree(m, nt, ns, nt, 4, rows, W.words - 1, NULL, NULL,
                                                &err),
                     GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "words"));
    free(rows);
    /* a well-formed tree still works after all that */
    assert_int_equal(run(m, nt, ns, 4, &err), GM_OK);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
}

/* Whether the links form a tree (brute force, by another route than the library's check):
   every link -1 or a non-root node index, the root without a sibling, no node linked
   twice, and no cycle (a depth-first search from every node over both kinds of links). */
static bool is_tree(const int64_t *nt, const int64_t *ns, size_t n)
{
    int indeg[16] = {0};
    if (ns[0] != -1)
        return false;
    for (size_t i = 0; i < n; i++) {
        const int64_t links[2] = {nt[i], ns[i]};
        for (int k = 0; k < 2; k++) {
            if (links[k] == -1)
                continue;
            if (links[k] <= 0 || links[k] >= (int64_t)n || ++indeg[links[k]] > 1)
                return false;
        }
    }
    for (size_t start = 0; start < n; start++) {
        /* a path of more than n steps from start repeats a node: a cycle */
        int64_t stack[64][2];
        size_t depth = 0;
        stack[depth][0] = (int64_t)start;
        stack[depth++][1] = 0;
        while (depth) {
            int64_t node = stack[depth - 1][0], k = stack[depth - 1][1]++;
            if (k == 2) {
                depth--;
                continue;
            }
            int64_t next = k == 0 ? nt[node] : ns[node];
            if (next == -1)
                continue;
            if (depth > n)
                return false;
            stack[depth][0] = next;
            stack[depth++][1] = 0;
        }
    }
    return true;
}

/* Random link arrays: the call never hangs or crashes, and accepts exactly the trees. */
static void test_random_links(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf(ebnf);
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    uint64_t seed = 11;
    int64_t nt[16], ns[16], tok[16] = {0};
    uint32_t *rows = calloc(16 * W.words, 4);
    size_t trees = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = 1 + (size_t)(gm_test_rand(&seed) % 12);
        /* a random tree (each node under a random earlier one), then, half the time, one
           to three links set to anything in -2..n */
        int64_t last[16];
        for (size_t i = 0; i < n; i++)
            nt[i] = ns[i] = last[i] = -1;
        for (size_t i = 1; i < n; i++) {
            size_t p = (size_t)(gm_test_rand(&seed) % i);
            if (last[p] < 0)
                nt[p] = (int64_t)i;
            else
                ns[last[p]] = (int64_t)i;
            last[p] = (int64_t)i;
        }
        if (gm_test_rand(&seed) % 2) {
            for (uint64_t k = 1 + gm_test_rand(&seed) % 3; k; k--) {
                int64_t *a = gm_test_rand(&seed) % 2 ? nt : ns;
                a[gm_test_rand(&seed) % n] = (int64_t)(gm_test_rand(&seed) % (n + 3)) - 2;
            }
        }
        gm_status st = gm_matcher_fill_draft_tree(m, nt, ns, tok, n, rows, W.words, NULL, NULL,
                                                  &err);
        bool valid = is_tree(nt, ns, n);
        trees += valid;
        if (st != (valid ? GM_OK : GM_ERR_ARGUMENT))
            fail_msg("n=%zu: status %d for %s (%s)", n, (int)st, valid ? "a tree" : "no tree",
                     st == GM_OK ? "" : err.message);
    }
    /* both kinds came up often */
    if (trees < 1000 || trees > 2500)
        fail_msg("%zu trees of 3000", trees);
    free(rows);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
}

/* A long chain (allocated scratch) under a near-zero time limit stops early; the root is filled. */
static void test_time_limit(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf("root ::= \"1\"+\n");
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    uint32_t *ids;
    size_t nids;
    assert_int_equal(gm_vocab_encode(W.vocab, "1", 1, NULL, &ids, &nids, &err), GM_OK);
    assert_int_equal(nids, 1);
    enum { N = 5000 };
    int64_t *nt = malloc(N * 8), *ns = malloc(N * 8), *tok = malloc(N * 8);
    for (size_t i = 0; i < N; i++) {
        nt[i] = i + 1 < N ? (int64_t)i + 1 : -1;
        ns[i] = -1;
        tok[i] = ids[0];
    }
    gm_vocab_free_ids(W.vocab, ids);
    uint32_t *rows = malloc((size_t)N * W.words * 4);
    bool completed = true;
    gm_draft_tree_options o = {.time_limit_s = 1e-9};
    assert_int_equal(gm_matcher_fill_draft_tree(m, nt, ns, tok, N, rows, W.words, &o, &completed,
                                                &err),
                     GM_OK);
    assert_false(completed);
    bool any = false, last = false;
    for (size_t w = 0; w < W.words; w++) {
        any |= rows[w] != 0;
        last |= rows[(size_t)(N - 1) * W.words + w] != 0;
    }
    assert_true(any);
    assert_false(last);
    /* without the limit the whole chain is filled */
    o.time_limit_s = 0;
    assert_int_equal(gm_matcher_fill_draft_tree(m, nt, ns, tok, N, rows, W.words, &o, &completed,
                                                &err),
                     GM_OK);
    assert_true(completed);
    for (size_t w = 0; w < W.words; w++)
        last |= rows[(size_t)(N - 1) * W.words + w] != 0;
    assert_true(last);
    free(rows);
    free(nt);
    free(ns);
    free(tok);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
}

static bool only_eos(const uint32_t *row)
{
    for (size_t w = 0; w < W.words; w++) {
        uint32_t want = w == W.eos / 32 ? (uint32_t)1 << (W.eos % 32) : 0;
        const uint32_t *e;
        size_t ne = gm_vocab_eos_ids(W.vocab, &e);
        for (size_t i = 0; i < ne; i++)
            if (e[i] / 32 == w)
                want |= (uint32_t)1 << (e[i] % 32);
        if (row[w] != want)
            return false;
    }
    return true;
}

/* end_when_complete: XGrammar's terminate_without_stop_token, complete = ended. */
static void test_end_when_complete(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf("root ::= \"ab\" | \"a\" \"b\" \"c\"\n");
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    uint32_t *ids;
    size_t nids;
    assert_int_equal(gm_vocab_encode(W.vocab, "ab", 2, NULL, &ids, &nids, &err), GM_OK);
    assert_int_equal(nids, 1);
    int64_t nt[3] = {1, 2, -1}, ns[3] = {-1, -1, -1}, tok[3] = {0, ids[0], W.eos};
    gm_vocab_free_ids(W.vocab, ids);
    uint32_t *rows = malloc(3 * W.words * 4);
    assert_int_equal(gm_matcher_fill_draft_tree(m, nt, ns, tok, 3, rows, W.words, NULL, NULL, &err),
                     GM_OK);
    /* after "ab": EOS and "c" (not only EOS); after EOS nothing */
    assert_true(rows[W.words + W.eos / 32] >> (W.eos % 32) & 1);
    assert_false(only_eos(rows + W.words));
    for (size_t w = 0; w < W.words; w++)
        assert_int_equal(rows[2 * W.words + w], 0);
    gm_draft_tree_options o = {.end_when_complete = true};
    assert_int_equal(gm_matcher_fill_draft_tree(m, nt, ns, tok, 3, rows, W.words, &o, NULL, &err),
                     GM_OK);
    for (size_t w = 0; w < W.words; w++)
        assert_int_equal(rows[W.words + w], 0);
    free(rows);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
}

/* eos_after_end: past EOS, fill gives the EOS ids and accept rejects the rest, not GM_ERR_STATE. */
static void test_eos_after_end(void **state)
{
    (void)state;
    gm_compiled *c = compiled_ebnf("root ::= \"ab\"\n");
    uint32_t *ids;
    size_t nids;
    gm_error err;
    assert_int_equal(gm_vocab_encode(W.vocab, "ab", 2, NULL, &ids, &nids, &err), GM_OK);
    uint32_t ab = ids[0];
    gm_vocab_free_ids(W.vocab, ids);
    uint32_t *row = malloc(W.words * 4), *rows = malloc(2 * W.words * 4);
    for (int mode = 0; mode < 2; mode++) {
        gm_matcher_options mo = {.eos_after_end = mode == 1};
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, &mo, &m, &err), GM_OK);
        assert_int_equal(gm_matcher_accept_token(m, ab, &err), GM_OK);
        assert_int_equal(gm_matcher_accept_token(m, W.eos, &err), GM_OK);
        assert_true(gm_matcher_is_terminated(m));
        gm_batch *b;
        assert_int_equal(gm_batch_create(&(gm_batch_options){.threads = 1}, &b, &err), GM_OK);
        gm_matcher *ms[2] = {m, m};
        memset(rows, 0xff, 2 * W.words * 4);
        assert_int_equal(gm_batch_fill_masks(b, ms, 1, rows, W.words, &err), GM_OK);
        gm_batch_destroy(b);
        if (mode == 0) {
            assert_int_equal(gm_matcher_fill_mask(m, row, W.words, &err), GM_ERR_STATE);
            assert_int_equal(gm_matcher_accept_token(m, W.eos, &err), GM_ERR_STATE);
            assert_int_equal(gm_matcher_accept_token(m, ab, &err), GM_ERR_STATE);
            for (size_t w = 0; w < W.words; w++)
                assert_int_equal(rows[w], 0);
        } else {
            assert_int_equal(gm_matcher_fill_mask(m, row, W.words, &err), GM_OK);
            assert_true(only_eos(row));
            assert_true(only_eos(rows));
            assert_int_equal(gm_matcher_accept_token(m, ab, &err), GM_ERR_REJECTED);
            size_t ok;
            uint32_t seq[3] = {W.eos, W.eos, ab};
            assert_int_equal(gm_matcher_validate_tokens(m, seq, 3, &ok, &err), GM_OK);
            assert_int_equal(ok, 2);
            assert_int_equal(gm_matcher_accept_token(m, W.eos, &err), GM_OK);
            assert_true(gm_matcher_is_terminated(m));
            /* one step each: two rollbacks go back to before the first EOS */
            assert_int_equal(gm_matcher_rollback(m, 2, &err), GM_OK);
            assert_false(gm_matcher_is_terminated(m));
            assert_true(gm_matcher_is_accepting(m));
            /* a clone keeps the mode */
            assert_int_equal(gm_matcher_accept_token(m, W.eos, &err), GM_OK);
            gm_matcher *k;
            assert_int_equal(gm_matcher_clone(m, &k, &err), GM_OK);
            assert_int_equal(gm_matcher_fill_mask(k, row, W.words, &err), GM_OK);
            assert_true(only_eos(row));
            gm_matcher_destroy(k);
        }
        gm_matcher_destroy(m);
    }
    free(row);
    free(rows);
    gm_compiled_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_trees),
        cmocka_unit_test(test_ebnf_trees),
        cmocka_unit_test(test_lalr_trees),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_random_links),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_end_when_complete),
        cmocka_unit_test(test_eos_after_end),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
