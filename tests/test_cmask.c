/*
 * Masks of the bundled C grammar, whose typedef-name layer (parser/ctypedef.h)
 * the matcher applies (runtime/cdecl.h, note [typedef-name masks]), against
 * a brute-force reference over the sp32k vocabulary.
 *
 * The reference knows nothing of matchers or persistent scopes: it keeps the
 * decoded text's lexer DFA state and pending lexeme, the LR stack and the
 * layer's own mutable stream (gm_ctypedef, what `gramask parse` runs). For
 * every token it runs the token's bytes on a copy (the layer saved and put
 * back), feeding each completed lexeme classified by the layer, and asks
 * whether the pending lexeme can still become a terminal the stack takes: an
 * identifier may become any name (so IDENTIFIER when the stack takes it) or a
 * typedef name in scope that starts with its text (TYPEDEF_NAME). The mask
 * from gm_matcher_fill_mask must agree at every step of programs an
 * approximation gets wrong (`T * x;` after `typedef int T;` against `a * b;`,
 * shadowing in inner blocks and by parameters, typedef names declared and
 * used in one declaration list, enumeration constants) and of random walks
 * after typedef declarations; after rollbacks and in a clone too.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ctypedef.h"
#include "parser/lr.h"
#include "runtime/objects.h"

#define NONE UINT32_MAX

typedef struct ref_state {
    int ok;
    uint32_t q;              /* lexer DFA state of the pending lexeme (0: none) */
    gm_lr_node *stack;       /* one reference */
    uint8_t lexeme[2048];
    size_t lexlen;
} ref_state;

typedef struct ref {
    const gm_compiled *c;
    const gm_lexer *lx;
    const gm_lr_table *lr;
    gm_mem *mem;
    gm_ctypedef *td;         /* the layer's stream (mutable) */
    size_t len;              /* bytes decoded */
    uint32_t strip_left;
    ref_state st;
} ref;

/* The layer's stream state, to put it back after trying a token. */
typedef struct td_saved {
    gm_ctypedef_binding *bindings;
    uint32_t *blocks, *pending, *innermost;
    size_t nbindings, nblocks, npending, ninnermost;
} td_saved;

static void *dup(const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    assert_non_null(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

static void td_save(const gm_ctypedef *td, td_saved *s)
{
    s->nbindings = td->bindings.n;
    s->nblocks = td->blocks.n;
    s->npending = td->pending.n;
    s->ninnermost = td->ninnermost;
    s->bindings = dup(td->bindings.v, s->nbindings * sizeof *s->bindings);
    s->blocks = dup(td->blocks.v, s->nblocks * sizeof *s->blocks);
    s->pending = dup(td->pending.v, s->npending * sizeof *s->pending);
    s->innermost = dup(td->innermost, s->ninnermost * sizeof *s->innermost);
}

static void td_restore(gm_ctypedef *td, td_saved *s)
{
    /* the vectors only grow between save and restore, so the saved contents fit (an
       empty one may still be NULL: memcpy must not see it) */
    if (s->nbindings)
        memcpy(td->bindings.v, s->bindings, s->nbindings * sizeof *s->bindings);
    td->bindings.n = s->nbindings;
    if (s->nblocks)
        memcpy(td->blocks.v, s->blocks, s->nblocks * sizeof *s->blocks);
    td->blocks.n = s->nblocks;
    if (s->npending)
        memcpy(td->pending.v, s->pending, s->npending * sizeof *s->pending);
    td->pending.n = s->npending;
    if (s->ninnermost)
        memcpy(td->innermost, s->innermost, s->ninnermost * sizeof *s->innermost);
    for (size_t i = s->ninnermost; i < td->ninnermost; i++)
        td->innermost[i] = NONE;
    free(s->bindings);
    free(s->blocks);
    free(s->pending);
    free(s->innermost);
}

/* One lexed terminal, classified by the layer, to the parser; then the layer learns from it. */
static int ref_emit(ref *r, ref_state *s, uint32_t t)
{
    if (r->lx->terminals[t].ignored)
        return 1;
    uint32_t term = gm_ctypedef_classify(r->td, t, s->lexeme, s->lexlen);
    gm_lr_node *fed;
    if (gm_lr_feed(r->lr, r->mem, s->stack, term, &fed) != GM_OK)
        return 0;
    gm_lr_node_release(r->mem, s->stack);
    s->stack = fed;
    gm_error err;
    assert_int_equal(gm_ctypedef_shifted(r->td, fed, term, s->lexeme, s->lexlen, &err), GM_OK);
    return 1;
}

static void ref_run(ref *r, ref_state *s, const uint8_t *b, size_t n)
{
    const gm_lexer *lx = r->lx;
    for (size_t i = 0; i < n && s->ok; i++) {
        uint32_t cls = lx->byte_class[b[i]];
        uint32_t nx = gm_lexer_move(lx, s->q, cls);
        if (nx == GM_LEX_DEAD) {
            uint32_t t = s->q ? gm_lexer_accept(lx, s->q, cls) : GM_LEX_NONE;
            if (t == GM_LEX_NONE || !ref_emit(r, s, t)) {
                s->ok = 0;
                return;
            }
            s->q = 0;
            s->lexlen = 0;
            nx = gm_lexer_move(lx, 0, cls);
            if (nx == GM_LEX_DEAD) {
                s->ok = 0;
                return;
            }
        }
        assert_true(s->lexlen < sizeof s->lexeme);
        s->lexeme[s->lexlen++] = b[i];
        s->q = nx;
    }
}

/* Whether a typedef name in scope starts with text[0..len) (the layer's own arrays). */
static int type_with_prefix(const gm_ctypedef *td, const uint8_t *text, size_t len)
{
    for (uint32_t id = 0; id < td->names.count && id < td->ninnermost; id++) {
        if (td->innermost[id] == NONE || !td->bindings.v[td->innermost[id]].is_type)
            continue;
        size_t n;
        const uint8_t *name = gm_intern_key(&td->names, id, &n);
        if (n >= len && !memcmp(name, text, len))
            return 1;
    }
    return 0;
}

static int ref_pending_ok(ref *r, const ref_state *s)
{
    if (s->q == 0)
        return 1;
    for (uint32_t t = 0; t < r->lx->nterminals; t++) {
        if (!gm_lexer_can_produce(r->lx, s->q, t))
            continue;
        if (r->lx->terminals[t].ignored || gm_lr_can_feed(r->lr, s->stack, &t, 1))
            return 1;
        if (t == r->td->identifier && gm_lr_can_feed(r->lr, s->stack, &r->td->typedef_name, 1) &&
            type_with_prefix(r->td, s->lexeme, s->lexlen))
            return 1;
    }
    return 0;
}

static ref_state ref_copy(const ref_state *s)
{
    ref_state c = *s;
    gm_lr_node_retain(c.stack);
    return c;
}

static int ref_can_end(ref *r)
{
    if (!r->st.ok)
        return 0;
    td_saved saved;
    td_save(r->td, &saved);
    ref_state s = ref_copy(&r->st);
    int ok = 1;
    if (s.q) {
        uint32_t t = gm_lexer_accept(r->lx, s.q, r->lx->nclasses);
        ok = t != GM_LEX_NONE && ref_emit(r, &s, t);
    }
    ok = ok && gm_lr_accepts(r->lr, s.stack);
    gm_lr_node_release(r->mem, s.stack);
    td_restore(r->td, &saved);
    return ok;
}

static void ref_init(ref *r, const gm_compiled *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->lx = c->grammar->lexer;
    assert_int_equal(r->lx->ndfa, r->lx->nstates); /* no backtracking windows in C */
    r->lr = c->grammar->lr;
    r->mem = (gm_mem *)&c->mem;
    gm_error err;
    assert_int_equal(gm_ctypedef_create(r->mem, c->grammar->cfg, r->lr, &r->td, &err), GM_OK);
    assert_non_null(r->td);
    r->strip_left = c->vocab->data->strip_leading;
    r->st.ok = 1;
    r->st.stack = gm_lr_stack_new(r->mem);
    assert_non_null(r->st.stack);
}

static void ref_free(ref *r)
{
    gm_lr_node_release(r->mem, r->st.stack);
    gm_ctypedef_destroy(r->td);
}

static const uint8_t *token_text(ref *r, uint32_t t, size_t *n, bool strip)
{
    const uint8_t *b = gm_vocab_data_token(r->c->vocab->data, t, n);
    uint32_t k = strip && r->len == 0 ? r->strip_left : 0;
    while (k && *n && b[0] == ' ') {
        b++;
        --*n;
        k--;
    }
    return b;
}

static int ref_allows(ref *r, uint32_t t)
{
    const gm_vocab_data *v = r->c->vocab->data;
    if (v->flags[t] & GM_TOK_EOS)
        return ref_can_end(r);
    if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
        return 0;
    size_t n;
    const uint8_t *b = token_text(r, t, &n, true);
    size_t raw;
    gm_vocab_data_token(v, t, &raw);
    if (raw == 0 || !r->st.ok)
        return 0;
    td_saved saved;
    td_save(r->td, &saved);
    ref_state s = ref_copy(&r->st);
    ref_run(r, &s, b, n);
    int ok = s.ok && ref_pending_ok(r, &s);
    gm_lr_node_release(r->mem, s.stack);
    td_restore(r->td, &saved);
    return ok;
}

static void ref_append(ref *r, uint32_t t)
{
    size_t n;
    const uint8_t *b = token_text(r, t, &n, true);
    if (r->len == 0) {
        size_t raw;
        gm_vocab_data_token(r->c->vocab->data, t, &raw);
        r->strip_left -= (uint32_t)(raw - n);
    }
    ref_run(r, &r->st, b, n);
    r->len += n;
}

/* The matcher's mask against the reference over the whole vocabulary; the allowed count. */
static size_t compare_step(ref *r, gm_matcher *m, const char *where, size_t step)
{
    const gm_vocab_data *v = r->c->vocab->data;
    size_t words = gm_compiled_mask_words(r->c);
    uint32_t *mask = calloc(words, sizeof *mask);
    gm_error err;
    if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK)
        fail_msg("%s step %zu: fill_mask: %s", where, step, err.message);
    size_t allowed = 0;
    for (uint32_t t = 0; t < v->size; t++) {
        int got = (mask[t >> 5] >> (t & 31)) & 1;
        int want = ref_allows(r, t);
        if (got != want) {
            size_t n;
            const uint8_t *b = gm_vocab_data_token(v, t, &n);
            fail_msg("%s step %zu: token %u \"%.*s\" is %s by the mask but %s by the reference",
                     where, step, t, (int)n, b, got ? "allowed" : "masked",
                     want ? "allowed" : "not allowed");
        }
        allowed += (size_t)got;
    }
    free(mask);
    return allowed;
}

static gm_compiled *compile_c(gm_vocab **v, gm_grammar **g)
{
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_src_path("tests/data/sp32k/tokenizer.json"), NULL, v,
                                  &err) != GM_OK)
        fail_msg("sp32k: %s", err.message);
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    if (gm_grammar_create_from_file(gm_test_src_path("grammars/c.lark"), &o, g, &err) != GM_OK)
        fail_msg("grammar: %s", err.message);
    gm_compiled *c;
    if (gm_compiled_create(*g, *v, NULL, &c, &err) != GM_OK)
        fail_msg("compile: %s", err.message);
    return c;
}

/*
 * Decodes a program (greedily tokenized, a space first: sp32k strips the
 * text's first space) comparing at every step, then `walks` random walks of
 * `steps` tokens from its end. valid: the program is C, else decoding must
 * stop at a masked true token.
 */
static void program(gm_compiled *c, const char *text, bool valid, int walks, int steps,
                    uint64_t seed)
{
    char buf[1024];
    snprintf(buf, sizeof buf, " %s", text);
    uint32_t ids[512];
    size_t n = gm_test_greedy_tokens(c->vocab->data, buf, ids, 512);
    gm_error err;
    for (int w = 0; w <= walks; w++) {
        ref r;
        ref_init(&r, c);
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        size_t i = 0;
        for (; i <= n; i++) {
            if (w == 0)
                compare_step(&r, m, text, i);
            if (i == n)
                break;
            gm_status st = gm_matcher_accept_token(m, ids[i], &err);
            if (!valid && st == GM_ERR_REJECTED)
                break;
            if (st != GM_OK)
                fail_msg("%s: step %zu: token %u rejected: %s", text, i, ids[i], err.message);
            ref_append(&r, ids[i]);
            assert_true(r.st.ok);
        }
        if (w == 0 && valid) {
            assert_true(gm_matcher_is_accepting(m));
            assert_true(ref_can_end(&r));
            /* Persistent scopes: a clone, then rollback to each third of the program, agree
               with a reference that decoded only that far (the clone keeps the end). */
            gm_matcher *keep;
            assert_int_equal(gm_matcher_clone(m, &keep, &err), GM_OK);
            for (size_t back = n / 3; back && back < n; back += n / 3) {
                assert_int_equal(gm_matcher_rollback(m, n / 3, &err), GM_OK);
                ref r2;
                ref_init(&r2, c);
                for (size_t j = 0; j < n - back; j++)
                    ref_append(&r2, ids[j]);
                compare_step(&r2, m, "after rollback", n - back);
                ref_free(&r2);
            }
            compare_step(&r, keep, "the clone", n);
            gm_matcher_destroy(keep);
        } else if (w == 0) {
            assert_true(i < n);
        }
        size_t words = gm_compiled_mask_words(c);
        uint32_t *mask = calloc(words, sizeof *mask);
        for (int k = 0; w > 0 && k < steps; k++) {
            char where[64];
            snprintf(where, sizeof where, "walk %d after the program", w);
            assert_true(compare_step(&r, m, where, (size_t)k) > 0);
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            uint32_t pick = UINT32_MAX, seen = 0;
            for (uint32_t t = 0; t < c->vocab->data->size; t++)
                if (((mask[t >> 5] >> (t & 31)) & 1) && !(c->vocab->data->flags[t] & GM_TOK_EOS) &&
                    gm_test_rand(&seed) % ++seen == 0)
                    pick = t;
            if (pick == UINT32_MAX)
                break;
            assert_int_equal(gm_matcher_accept_token(m, pick, &err), GM_OK);
            ref_append(&r, pick);
            assert_true(r.st.ok);
        }
        free(mask);
        gm_matcher_destroy(m);
        ref_free(&r);
    }
}

static gm_vocab *V;
static gm_grammar *G;
static gm_compiled *C;

static int setup(void **state)
{
    (void)state;
    C = compile_c(&V, &G);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gm_compiled_destroy(C);
    gm_grammar_destroy(G);
    gm_vocab_destroy(V);
    return 0;
}

/* `T * x;` declares x after `typedef int T;`; `a * b;` multiplies. */
static void declaration_or_product(void **state)
{
    (void)state;
    program(C, "typedef int T; T * x; int a, b; void f(void) { a * b; T * y; (void)y; }", true, 2,
            12, 1);
    program(C, "int a; void f(void) { a x; }", false, 0, 0, 0);
}

/* An inner declaration shadows a typedef name until its block ends; parameters do too. */
static void shadowing(void **state)
{
    (void)state;
    program(C, "typedef int T; void f(void) { { int T = 1; T * 2; } T * y; (void)y; }", true, 2,
            12, 2);
    program(C, "typedef int T; int g(T T) { return T * 2; } T z;", true, 0, 0, 0);
    program(C, "typedef int T; void f(void) { int T = 1; T x; }", false, 0, 0, 0);
}

/* Typedef names declared and used in one declaration list, and in the next declarations. */
static void same_declaration(void **state)
{
    (void)state;
    program(C, "typedef struct s { int v; } S, *SP; SP p; S q; typedef S U[2], W; U u; W w;", true,
            2, 12, 3);
}

/* Enumeration constants are ordinary names, in the enclosing block. */
static void enumerators(void **state)
{
    (void)state;
    program(C, "typedef int E; void f(void) { enum { E = 1, F = E * 2 }; int x = E * F; (void)x; } E y;",
            true, 1, 12, 4);
    program(C, "typedef int E; void f(void) { enum { E }; E x; }", false, 0, 0, 0);
}

/*
 * The layer's viability checks start on overlays of one state (note
 * [typedef-layer overlays]): nearly every check overflows it and is redone
 * on larger ones; the masks must not change (an overflow counted as viable,
 * or as not viable, would let a token through or mask it).
 */
static void small_overlays(void **state)
{
    (void)state;
    C->cdecl_overlay = 1;
    program(C, "typedef int T; void f(void) { { int T = 1; T * 2; } T * y; (void)y; }", true, 2,
            12, 5);
    program(C, "typedef struct s { int v; } S, *SP; SP p; int g(S s) { return s.v * (p->v); }",
            true, 0, 0, 0);
    C->cdecl_overlay = 0;
}

/*
 * sp32k has no token that joins punctuation and a name ("(T", ",_"): such
 * tokens emit a terminal inside them before a name that may open a typedef
 * name, the case note [quiet exceptions] reads without a step. A vocabulary
 * of sp32k's tokens and such joins (greedy tokenization takes them).
 */
static gm_vocab *V2;
static gm_compiled *C2;

static void joined_vocab(void)
{
    static const char *const pre[] = {"(", " (", "*", " *", ",", ", ", ")", "=", " =", ";", "{",
                                      "}", "[", "&", "!", "->", ".", "((", ");", "x(", "++", "} ",
                                      "; ", "{ ", ") ", "(*", "**", "(&"};
    static const char *const suf[] = {"T", "S", "SP", "U", "W", "_", "E", "F", "s", "x", "y", "v",
                                      "int", "typedef", "void", "Ta", "SPx"};
    const gm_vocab_data *v = V->data;
    uint32_t nextra = (uint32_t)(sizeof pre / sizeof *pre * (sizeof suf / sizeof *suf));
    uint32_t n = v->size + nextra, neos = 0, eos[8];
    const uint8_t **bytes = calloc(n, sizeof *bytes);
    size_t *lens = calloc(n, sizeof *lens);
    bool *special = calloc(n, sizeof *special);
    char (*joined)[32] = calloc(nextra, sizeof *joined);
    for (uint32_t t = 0; t < v->size; t++) {
        bytes[t] = gm_vocab_data_token(v, t, &lens[t]);
        special[t] = v->flags[t] & GM_TOK_SPECIAL;
        if ((v->flags[t] & GM_TOK_EOS) && neos < 8)
            eos[neos++] = t;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        for (size_t j = 0; j < sizeof suf / sizeof *suf; j++, k++) {
            snprintf(joined[k], sizeof joined[k], "%s%s", pre[i], suf[j]);
            bytes[v->size + k] = (const uint8_t *)joined[k];
            lens[v->size + k] = strlen(joined[k]);
        }
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, lens, n, special, eos, neos, NULL, &V2, &err) != GM_OK)
        fail_msg("joined vocabulary: %s", err.message);
    if (gm_compiled_create(G, V2, NULL, &C2, &err) != GM_OK)
        fail_msg("compile: %s", err.message);
    free(bytes);
    free(lens);
    free(special);
    free(joined);
}

/* Programs whose tokens join punctuation and typedef names, masks against the reference. */
static void joined_tokens(void **state)
{
    (void)state;
    joined_vocab();
    program(C2, "typedef int T; int x; void g(int *p) { x = (T)1; x = sizeof(T) * x; (*p); }", true, 2,
            10, 6);
    program(C2, "typedef struct s { int v; } S, *SP; int f(S *a,SP b) { return (*a).v+(*b).v; }", true,
            2, 10, 7);
    program(C2, "typedef int T; void h(void) { int T; T = 2; (T); { typedef char T; (T)T; } }", false,
            2, 10, 8);
    gm_compiled_destroy(C2);
    gm_vocab_destroy(V2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(declaration_or_product),
        cmocka_unit_test(shadowing),
        cmocka_unit_test(same_declaration),
        cmocka_unit_test(enumerators),
        cmocka_unit_test(small_overlays),
        cmocka_unit_test(joined_tokens),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
