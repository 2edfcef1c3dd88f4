/*
 * Token spanner tests: the seed paper's example, and a brute-force
 * reference that runs the lexing transducer byte by byte over every token
 * from every lexer state (its own simple loop over the lexer tables, not
 * gm_lexer_step) and compares the emitted terminals and end state with what
 * the profiles and first-byte filters say, for synthetic vocabularies and
 * samples of the real tokenizers.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/lexer.h"
#include "runtime/objects.h"
#include "spanner/spanner.h"
#include "base/mem.h"

/* ---- reference transducer ------------------------------------------------ */

typedef struct outcome {
    int ok;                  /* lexically possible */
    uint32_t seq[256];       /* emitted, parser-visible terminals */
    uint32_t len;
    uint32_t end;            /* end state (lexer state) */
} outcome;

/* The transducer of lexer.h's note, written out independently. */
static void ref_run(const gm_lexer *lx, uint32_t q, const uint8_t *s, size_t n, outcome *o)
{
    o->ok = 0;
    o->len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cls = lx->byte_class[s[i]];
        uint32_t nx = gm_lexer_move(lx, q, cls);
        if (nx == GM_LEX_DEAD) {
            uint32_t t = lx->accept[q];
            if (t == GM_LEX_NONE)
                return;
            if (!lx->terminals[t].ignored) {
                if (o->len == 256)
                    return;
                o->seq[o->len++] = t;
            }
            nx = gm_lexer_move(lx, 0, cls);
            if (nx == GM_LEX_DEAD)
                return;
        }
        q = nx;
    }
    o->ok = 1;
    o->end = q;
}

/* What the spanner says for (q, token): found in a class of q's profile, or
 * in q's first-byte filter (then accept(q) followed by the start state's class). */
static void spanner_outcome(gm_spanner *sp, uint32_t q, uint32_t token, outcome *o, uint32_t *prod)
{
    gm_error err;
    const gm_profile *p = gm_spanner_profile(sp, q, &err);
    assert_non_null(p);
    o->ok = 0;
    o->len = 0;
    for (uint32_t c = 0; c < p->nclasses; c++) {
        if (gm_tokset_has(p->classes[c].tokens, token)) {
            o->ok = 1;
            memcpy(o->seq, p->seqs + p->classes[c].seq, p->classes[c].len * sizeof(uint32_t));
            o->len = p->classes[c].len;
            *prod = p->classes[c].prod;
            return;
        }
    }
    if (p->split0 == GM_SPANNER_NONE)
        return;
    const uint32_t *filter = gm_spanner_split0(sp, p->split0, &err);
    assert_non_null(filter);
    if (!((filter[token >> 5] >> (token & 31)) & 1))
        return;
    outcome rest;
    spanner_outcome(sp, p->split0_next, token, &rest, prod);
    if (!rest.ok)
        return;
    o->ok = 1;
    if (p->split0_emit != GM_SPANNER_NONE)
        o->seq[o->len++] = p->split0_emit;
    memcpy(o->seq + o->len, rest.seq, rest.len * sizeof(uint32_t));
    o->len += rest.len;
}

/* Prod(q) of the lexer as the spanner's sets see it: parser-visible terminals + ignored flag. */
static int prod_matches(const gm_spanner *sp, uint32_t prod, const gm_lexer *lx, uint32_t q)
{
    const uint64_t *row = lx->prod + (size_t)q * lx->prod_words;
    int ignored = 0;
    uint32_t k = sp->prod_off[prod];
    for (uint32_t t = 0; t < lx->nterminals; t++) {
        if (!((row[t >> 6] >> (t & 63)) & 1))
            continue;
        if (lx->terminals[t].ignored) {
            ignored = 1;
            continue;
        }
        if (k >= sp->prod_off[prod + 1] || sp->prod_terms[k] != t)
            return 0;
        k++;
    }
    return k == sp->prod_off[prod + 1] && ignored == sp->prod_ignored[prod];
}

/* Compares the spanner with the reference for every state and every token. */
static void compare_all(gm_spanner *sp, const gm_lexer *lx, const gm_vocab_data *v)
{
    static outcome want, got;
    unsigned long checked = 0, possible = 0;
    for (uint32_t q = 0; q < lx->nstates; q++) {
        for (uint32_t t = 0; t < v->size; t++) {
            if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
                continue;
            size_t len;
            const uint8_t *bytes = gm_vocab_data_token(v, t, &len);
            if (len == 0)
                continue;
            ref_run(lx, q, bytes, len, &want);
            uint32_t prod = UINT32_MAX;
            spanner_outcome(sp, q, t, &got, &prod);
            checked++;
            if (want.ok != got.ok)
                fail_msg("state %u token %u (%.*s): reference says %s, spanner says %s", q, t,
                         (int)len, bytes, want.ok ? "possible" : "impossible",
                         got.ok ? "possible" : "impossible");
            if (!want.ok)
                continue;
            possible++;
            if (want.len != got.len || memcmp(want.seq, got.seq, want.len * sizeof(uint32_t)))
                fail_msg("state %u token %u (%.*s): emitted sequences differ (%u vs %u terminals)",
                         q, t, (int)len, bytes, want.len, got.len);
            if (!prod_matches(sp, prod, lx, want.end))
                fail_msg("state %u token %u (%.*s): Prod of the end state differs", q, t, (int)len,
                         bytes);
        }
    }
    assert_true(possible > 0);
    assert_true(checked > possible); /* some tokens are impossible somewhere */
}

/* ---- fixtures --------------------------------------------------------------- */

typedef struct fixture {
    gm_mem mem;
    gm_lexer *lx;
    gm_vocab *vocab;
    gm_spanner *sp;
} fixture;

static void fixture_lexer(fixture *f, const gm_terminal_spec *specs, uint32_t n)
{
    memset(f, 0, sizeof *f);
    gm_mem_init(&f->mem, NULL, 0);
    gm_error err;
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    if (gm_lexer_build(&f->mem, specs, n, &lim, NULL, NULL, &f->lx, &err) != GM_OK)
        fail_msg("lexer: %s", err.message);
}

static void fixture_vocab(fixture *f, const char *const *tokens, uint32_t n)
{
    const uint8_t **bytes = calloc(n, sizeof *bytes);
    size_t *lens = calloc(n, sizeof *lens);
    for (uint32_t i = 0; i < n; i++) {
        bytes[i] = (const uint8_t *)tokens[i];
        lens[i] = strlen(tokens[i]);
    }
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, lens, n, NULL, NULL, 0, NULL, &f->vocab, &err) != GM_OK)
        fail_msg("vocab: %s", err.message);
    free(bytes);
    free(lens);
}

static void fixture_spanner(fixture *f)
{
    gm_error err;
    if (gm_spanner_create(&f->mem, f->lx, NULL, NULL, f->vocab->data, f->vocab->trie, &f->sp, &err) !=
        GM_OK)
        fail_msg("spanner: %s", err.message);
}

static void fixture_free(fixture *f)
{
    gm_spanner_destroy(f->sp);
    gm_lexer_destroy(f->lx);
    gm_vocab_destroy(f->vocab);
    assert_int_equal(atomic_load(&f->mem.used), 0);
}

static gm_terminal_spec regex(const char *name, const char *re)
{
    gm_terminal_spec s = {0};
    s.name = name;
    s.pattern = re;
    s.pattern_len = strlen(re);
    return s;
}

static gm_terminal_spec literal(const char *name, const char *text)
{
    gm_terminal_spec s = regex(name, text);
    s.is_literal = true;
    return s;
}

/* ---- the seed example --------------------------------------------------------- */

/*
 * Terminals B = /ab*\/, C = /ac*\/; vocabulary a, b, c, ab, ac, aba. The
 * minimal DFA has four states: start, after "a" (accepts B: "a" matches both,
 * B is declared first), after "ab+" (B), after "ac+" (C). Derived by hand from
 * the transducer's definition, the token spanner table is, per state,
 * token -> (emitted terminals, end state):
 *   start: a -> (-, A1)   ab -> (-, AB)  ac -> (-, AC)  aba -> (B, A1)  b, c impossible
 *   A1:    a -> (B, A1)   b -> (-, AB)   c -> (-, AC)   ab -> (B, AB)  ac -> (B, AC)  aba -> (B B, A1)
 *   AB:    a -> (B, A1)   b -> (-, AB)   ab -> (B, AB)  ac -> (B, AC)  aba -> (B B, A1)  c impossible
 *   AC:    a -> (C, A1)   c -> (-, AC)   ab -> (C, AB)  ac -> (C, AC)  aba -> (C B, A1)  b impossible
 * with Prod(start) = Prod(A1) = {B, C}, Prod(AB) = {B}, Prod(AC) = {C}; the
 * realizable sequences from a state are the emitted terminals followed by a
 * terminal of Prod(end state).
 */
enum { TB = 0, TC = 1, NONE = 9 };
typedef struct seed_row {
    const char *token;
    int possible;
    uint32_t seq[2];
    const char *end;         /* "start", "A1", "AB", "AC" */
} seed_row;

static uint32_t state_after(const gm_lexer *lx, const char *s)
{
    outcome o;
    ref_run(lx, 0, (const uint8_t *)s, strlen(s), &o);
    assert_true(o.ok && o.len == 0);
    return o.end;
}

static void check_seed_state(fixture *f, uint32_t q, const seed_row rows[6])
{
    const char *names[4] = {"start", "A1", "AB", "AC"};
    uint32_t states[4] = {0, state_after(f->lx, "a"), state_after(f->lx, "ab"),
                          state_after(f->lx, "ac")};
    for (int i = 0; i < 6; i++) {
        uint32_t token = (uint32_t)i; /* ids follow the vocabulary order below */
        outcome got;
        uint32_t prod;
        spanner_outcome(f->sp, q, token, &got, &prod);
        assert_int_equal(got.ok, rows[i].possible);
        if (!got.ok)
            continue;
        uint32_t len = rows[i].seq[0] == NONE ? 0 : rows[i].seq[1] == NONE ? 1 : 2;
        assert_int_equal(got.len, len);
        for (uint32_t k = 0; k < len; k++)
            assert_int_equal(got.seq[k], rows[i].seq[k]);
        uint32_t end = UINT32_MAX;
        for (int s = 0; s < 4; s++)
            if (!strcmp(rows[i].end, names[s]))
                end = states[s];
        assert_true(prod_matches(f->sp, prod, f->lx, end));
    }
}

static void seed_example(void **state)
{
    (void)state;
    fixture f;
    gm_terminal_spec specs[2] = {regex("B", "ab*"), regex("C", "ac*")};
    fixture_lexer(&f, specs, 2);
    assert_int_equal(f.lx->nstates, 4);
    const char *vocab[6] = {"a", "b", "c", "ab", "ac", "aba"};
    fixture_vocab(&f, vocab, 6);
    fixture_spanner(&f);
    const seed_row start[6] = {
        {"a", 1, {NONE, NONE}, "A1"}, {"b", 0, {NONE, NONE}, ""},   {"c", 0, {NONE, NONE}, ""},
        {"ab", 1, {NONE, NONE}, "AB"}, {"ac", 1, {NONE, NONE}, "AC"}, {"aba", 1, {TB, NONE}, "A1"}};
    const seed_row a1[6] = {
        {"a", 1, {TB, NONE}, "A1"},  {"b", 1, {NONE, NONE}, "AB"}, {"c", 1, {NONE, NONE}, "AC"},
        {"ab", 1, {TB, NONE}, "AB"}, {"ac", 1, {TB, NONE}, "AC"},  {"aba", 1, {TB, TB}, "A1"}};
    const seed_row ab[6] = {
        {"a", 1, {TB, NONE}, "A1"},  {"b", 1, {NONE, NONE}, "AB"}, {"c", 0, {NONE, NONE}, ""},
        {"ab", 1, {TB, NONE}, "AB"}, {"ac", 1, {TB, NONE}, "AC"},  {"aba", 1, {TB, TB}, "A1"}};
    const seed_row ac[6] = {
        {"a", 1, {TC, NONE}, "A1"},  {"b", 0, {NONE, NONE}, ""},   {"c", 1, {NONE, NONE}, "AC"},
        {"ab", 1, {TC, NONE}, "AB"}, {"ac", 1, {TC, NONE}, "AC"},  {"aba", 1, {TC, TB}, "A1"}};
    check_seed_state(&f, 0, start);
    check_seed_state(&f, state_after(f.lx, "a"), a1);
    check_seed_state(&f, state_after(f.lx, "ab"), ab);
    check_seed_state(&f, state_after(f.lx, "ac"), ac);
    /* "abaccab" lexes as B C B. */
    outcome o;
    ref_run(f.lx, 0, (const uint8_t *)"abaccab", 7, &o);
    assert_true(o.ok);
    assert_int_equal(o.len, 2);
    assert_int_equal(o.seq[0], TB);
    assert_int_equal(o.seq[1], TC);
    assert_int_equal(f.lx->accept[o.end], TB);
    compare_all(f.sp, f.lx, f.vocab->data);
    fixture_free(&f);
}

/* ---- synthetic vocabularies ------------------------------------------------- */

/* A JSON-like lexer with an ignored whitespace terminal and a keyword/identifier clash. */
static const gm_terminal_spec *code_specs(uint32_t *n)
{
    static gm_terminal_spec s[12];
    s[0] = literal("LBRACE", "{");
    s[1] = literal("RBRACE", "}");
    s[2] = literal("COMMA", ",");
    s[3] = literal("COLON", ":");
    s[4] = regex("STRING", "\"([^\"\\\\\\n]|\\\\.)*\"");
    s[5] = regex("NUMBER", "-?(0|[1-9][0-9]*)(\\.[0-9]+)?");
    s[6] = literal("TRUE", "true");
    s[7] = regex("NAME", "[a-z_][a-z0-9_]*");
    s[8] = regex("WS", "[ \\t\\n]+");
    s[8].ignored = true;
    s[9] = regex("COMMENT", "#[^\\n]*");
    s[9].ignored = true;
    s[10] = literal("ARROW", "->");
    s[11] = literal("MINUS", "-");
    *n = 12;
    return s;
}

static void synthetic_vocabulary(void **state)
{
    (void)state;
    fixture f;
    uint32_t n;
    const gm_terminal_spec *specs = code_specs(&n);
    fixture_lexer(&f, specs, n);
    /* 3000 random strings over an alphabet that exercises every terminal and errors. */
    const char alphabet[] = "{}:,\"\\ \n\ta0129.-e>rtu_x#\xc3\xa9";
    enum { NTOK = 3000 };
    static char buf[NTOK][9];
    const char *toks[NTOK];
    unsigned seed = 12345;
    for (int i = 0; i < NTOK; i++) {
        seed = seed * 1103515245u + 12345u;
        int len = 1 + (int)((seed >> 16) % 8);
        for (int k = 0; k < len; k++) {
            seed = seed * 1103515245u + 12345u;
            buf[i][k] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        buf[i][len] = '\0';
        toks[i] = buf[i];
    }
    fixture_vocab(&f, toks, NTOK);
    fixture_spanner(&f);
    compare_all(f.sp, f.lx, f.vocab->data);
    fixture_free(&f);
}

/*
 * Shared token sets (note [shared token sets]): one filter per byte set,
 * whoever asks, its bitset the tokens whose first byte is in the set
 * (checked against the vocabulary token by token); one pooled set per
 * content and representation.
 */
static void shared_token_sets(void **state)
{
    (void)state;
    const char *toks[] = {"a", "ab", "b", " x", "\n", "\xc3\xa9", "abc", "ba", "", "zz", "a b"};
    uint32_t n = sizeof toks / sizeof *toks;
    fixture f;
    memset(&f, 0, sizeof f);
    gm_mem_init(&f.mem, NULL, 0);
    fixture_vocab(&f, toks, n);
    gm_error err;
    gm_tokpool *fs;
    assert_int_equal(gm_tokpool_create(&f.mem, f.vocab->trie, f.vocab->data->size, &fs, &err),
                     GM_OK);
    uint8_t sets[3][32] = {{0}};
    sets[0]['a' >> 3] |= 1u << ('a' & 7);
    sets[1]['b' >> 3] |= 1u << ('b' & 7);
    sets[1][' ' >> 3] |= 1u << (' ' & 7);
    sets[1][0xc3 >> 3] |= 1u << (0xc3 & 7);
    gm_filter *e[3];
    for (int i = 0; i < 3; i++)
        assert_non_null(e[i] = gm_tokpool_filter(fs, sets[i], &err));
    assert_ptr_equal(gm_tokpool_filter(fs, sets[0], &err), e[0]);
    assert_ptr_not_equal(e[0], e[1]);
    assert_int_equal(fs->n, 3);
    assert_int_equal(gm_tokpool_bytes(fs), 0);
    for (int i = 0; i < 3; i++) {
        const uint32_t *bits = gm_tokpool_filter_bits(fs, e[i], &err);
        assert_non_null(bits);
        assert_ptr_equal(gm_tokpool_filter_bits(fs, e[i], &err), bits);
        for (uint32_t t = 0; t < n; t++) {
            size_t len;
            const uint8_t *b = gm_vocab_data_token(f.vocab->data, t, &len);
            int want = len > 0 && ((sets[i][b[0] >> 3] >> (b[0] & 7)) & 1);
            int got = (bits[t >> 5] >> (t & 31)) & 1;
            if (want != got)
                fail_msg("set %d token %u (%.*s): filter says %d", i, t, (int)len, b, got);
        }
    }
    size_t filters = 3 * GM_MASK_WORDS(n) * sizeof(uint32_t);
    assert_int_equal(gm_tokpool_bytes(fs), filters);
    uint32_t a[1] = {0x5}, b[1] = {0x5}, c[1] = {0x6};
    const gm_tokset *sa = gm_tokpool_set(fs, a, false);
    assert_non_null(sa);
    assert_ptr_equal(gm_tokpool_set(fs, b, false), sa);
    const gm_tokset *sc = gm_tokpool_set(fs, c, false), *la = gm_tokpool_set(fs, a, true);
    assert_ptr_not_equal(sc, sa);
    assert_int_equal(la->kind, GM_TOKSET_LIST);
    /* A set adopted is the pooled one of the same form and tokens, and is emptied. */
    const uint32_t ids02[] = {0, 2}, ids1[] = {1};
    gm_tokset x = {0}, y = {0};
    assert_int_equal(gm_tokset_list_from_sorted(&f.mem, &x, ids02, 2), 0);
    assert_int_equal(gm_tokset_list_from_sorted(&f.mem, &y, ids1, 1), 0);
    assert_ptr_equal(gm_tokpool_adopt(fs, &x), la);
    assert_int_equal(x.kind, GM_TOKSET_EMPTY);
    const gm_tokset *py = gm_tokpool_adopt(fs, &y);
    assert_ptr_not_equal(py, la);
    assert_true(gm_tokset_has(py, 1) && !gm_tokset_has(py, 0));
    for (uint32_t t = 0; t < n; t++) {
        assert_int_equal(gm_tokset_has(sa, t), (a[0] >> t) & 1);
        assert_int_equal(gm_tokset_has(la, t), (a[0] >> t) & 1);
        assert_int_equal(gm_tokset_has(sc, t), (c[0] >> t) & 1);
    }
    assert_true(gm_tokpool_bytes(fs) > filters);
    gm_tokpool_destroy(fs);
    fixture_free(&f);
}

/* Samples of a real tokenizer (every id below 1500 and 1500 spread over the rest). */
static void real_tokenizer_sample(const char *name)
{
    gm_error err;
    gm_vocab *full;
    if (gm_vocab_create_from_file(gm_test_shared_path(name), NULL, &full, &err) != GM_OK)
        fail_msg("%s: %s", name, err.message);
    const gm_vocab_data *d = full->data;
    enum { NSAMPLE = 3000 };
    const uint8_t *bytes[NSAMPLE];
    size_t lens[NSAMPLE];
    bool special[NSAMPLE];
    uint32_t k = 0;
    for (uint32_t id = 0; id < d->size && k < NSAMPLE; id += id < 1500 ? 1 : d->size / 1500) {
        bytes[k] = gm_vocab_data_token(d, id, &lens[k]);
        special[k] = (d->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) != 0;
        k++;
    }
    fixture f;
    uint32_t n;
    const gm_terminal_spec *specs = code_specs(&n);
    fixture_lexer(&f, specs, n);
    if (gm_vocab_create_from_tokens(bytes, lens, k, special, NULL, 0, NULL, &f.vocab, &err) != GM_OK)
        fail_msg("sample of %s: %s", name, err.message);
    gm_vocab_destroy(full);
    fixture_spanner(&f);
    compare_all(f.sp, f.lx, f.vocab->data);
    fixture_free(&f);
}

static void real_llama3(void **state)
{
    (void)state;
    real_tokenizer_sample("tokenizers/llama3/tokenizer.json");
}

static void real_sp32k(void **state)
{
    (void)state;
    real_tokenizer_sample("tokenizers/sp32k/tokenizer.json");
}

/* An allocation failure anywhere in building profiles is an error, never a crash or leak. */
static void allocation_failures(void **state)
{
    (void)state;
    uint32_t n;
    const gm_terminal_spec *specs = code_specs(&n);
    const char *toks[] = {"{", "\"a", "b\":", " 1", "2,", "true", "-> x", "# c\n", "}"};
    for (unsigned long fail_at = 1; fail_at < 400; fail_at++) {
        fixture f;
        fixture_lexer(&f, specs, n);
        fixture_vocab(&f, toks, sizeof toks / sizeof toks[0]);
        gm_test_failing_alloc fa = {0, 0, 0};
        gm_allocator al = gm_test_failing_allocator(&fa);
        gm_mem m;
        gm_mem_init(&m, &al, 0);
        fa.fail_at = fail_at;
        gm_error err;
        gm_spanner *sp = NULL;
        gm_status st = gm_spanner_create(&m, f.lx, NULL, NULL, f.vocab->data, f.vocab->trie, &sp, &err);
        if (st == GM_OK)
            st = gm_spanner_build_all(sp, &err);
        if (st != GM_OK)
            assert_int_equal(st, GM_ERR_NOMEM);
        gm_spanner_destroy(sp);
        assert_int_equal(fa.live, 0);
        assert_int_equal(atomic_load(&m.used), 0);
        fixture_free(&f);
        if (st == GM_OK && fa.count < fail_at)
            break; /* every allocation has been failed once */
    }
}

/* Token sets in every form OR (and OR-AND) into masks exactly like naive bit loops. */
static void token_sets(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    const uint32_t sizes[] = {1, 31, 32, 33, 200, 1024, 1025, 4097, 128256};
    unsigned seed = 99;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t nbits = sizes[si];
        size_t words = GM_MASK_WORDS(nbits);
        uint32_t *ids = malloc(nbits * sizeof *ids), *bits = calloc(words, 4);
        uint32_t *mask = malloc(words * 4), *want = malloc(words * 4), *filter = malloc(words * 4);
        /* Densities that give each form: sparse (list), half (bitset), nearly full (complement). */
        const double density[] = {0.002, 0.5, 0.998, 0.0, 1.0};
        for (size_t di = 0; di < sizeof density / sizeof density[0]; di++) {
            uint32_t n = 0;
            memset(bits, 0, words * 4);
            for (uint32_t id = 0; id < nbits; id++) {
                seed = seed * 1103515245u + 12345u;
                if ((double)((seed >> 8) % 100000) / 100000.0 < density[di]) {
                    ids[n++] = id;
                    bits[id >> 5] |= (uint32_t)1 << (id & 31);
                }
            }
            gm_tokset a, b;
            assert_int_equal(gm_tokset_from_sorted(&m, &a, ids, n, nbits), 0);
            assert_int_equal(gm_tokset_from_bits(&m, &b, bits, nbits), 0);
            assert_int_equal(a.count, n);
            assert_int_equal(b.kind, a.kind);
            for (uint32_t id = 0; id < nbits; id += 1 + nbits / 97)
                assert_int_equal(gm_tokset_has(&a, id), (bits[id >> 5] >> (id & 31)) & 1);
            for (int trial = 0; trial < 3; trial++) {
                for (size_t w = 0; w < words; w++) {
                    seed = seed * 1103515245u + 12345u;
                    mask[w] = trial == 0 ? 0 : seed;
                    seed = seed * 1103515245u + 12345u;
                    filter[w] = trial == 2 ? ~0u : seed;
                }
                if (nbits % 32) { /* a mask never holds bits past the universe */
                    mask[words - 1] &= ((uint32_t)1 << (nbits % 32)) - 1;
                    filter[words - 1] &= ((uint32_t)1 << (nbits % 32)) - 1;
                }
                memcpy(want, mask, words * 4);
                for (size_t w = 0; w < words; w++)
                    want[w] |= bits[w];
                uint32_t *got = malloc(words * 4);
                memcpy(got, mask, words * 4);
                gm_tokset_or_into(&a, got, nbits);
                assert_memory_equal(got, want, words * 4);
                memcpy(want, mask, words * 4);
                for (size_t w = 0; w < words; w++)
                    want[w] |= bits[w] & filter[w];
                memcpy(got, mask, words * 4);
                gm_tokset_or_and_into(&b, filter, got, nbits);
                assert_memory_equal(got, want, words * 4);
                free(got);
            }
            gm_tokset_free(&m, &a);
            gm_tokset_free(&m, &b);
        }
        free(ids);
        free(bits);
        free(mask);
        free(want);
        free(filter);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_sets),
        cmocka_unit_test(seed_example),
        cmocka_unit_test(synthetic_vocabulary),
        cmocka_unit_test(shared_token_sets),
        cmocka_unit_test(real_llama3),
        cmocka_unit_test(real_sp32k),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
