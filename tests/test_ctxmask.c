/*
 * Masks under Lark's contextual lexer (runtime/ctx_spanners.h, note
 * [contextual masks]) against a brute-force reference, over full real
 * vocabularies.
 *
 * The reference knows nothing of spanners, profiles or classes. It keeps
 * the decoded text's lexing state written out plainly: the lexer of the
 * pending lexeme — the contextual lexer of the parser state on top of the
 * stack when the lexeme started (parser/contextual.h) — its DFA state, the
 * LR stack and the post-lexing layers, run by the parser's own stream
 * (gm_postlex_stream, what gramask parse uses). For every token it asks: is
 * text+token a viable prefix? Running the bytes through the lexers (a new
 * lexeme takes the lexer of the stack's top then) never fails, every
 * terminal feeds the stack, and the pending lexeme can still become a
 * terminal its lexer has and the stack accepts (or an ignored one). The
 * mask from gm_matcher_fill_mask must agree exactly at every step of the
 * programs and random walks, on grammars written so that the contextual
 * lexers lex differently from the basic one (keywords that are names
 * elsewhere, longer operators the state does not accept, overlapping
 * number and name terminals), with an indentation layer and with semicolon
 * insertion (Go's, and JavaScript's offending-token rule, whose insertions
 * the reference decides on its own LR stack), in gramask's and Lark's
 * lexer modes.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/contextual.h"
#include "parser/lr.h"
#include "runtime/ctx_spanners.h"
#include "runtime/objects.h"
#include "spanner/walkshare.h"

typedef struct ref_state {
    int ok;                  /* the text is a viable prefix so far */
    const gm_lexer *lx;      /* the lexer of the pending lexeme (when q != 0) */
    uint32_t q;              /* its DFA state (0 = none pending) */
    gm_lr_node *stack;       /* one reference */
    gm_postlex_stream layers;
    uint8_t lexeme[512];     /* the pending lexeme's last bytes */
    size_t lexlen;
    uint32_t last;           /* Lark mode: the longest match of the lexeme so far */
    size_t last_len;         /* its length in lexeme[] */
} ref_state;

typedef struct ref {
    const gm_compiled *c;
    gm_ctx_lexers *ctx;
    const gm_lr_table *lr;
    gm_mem *mem;
    uint8_t *text;
    size_t len, cap;
    uint32_t strip_left;
    ref_state st;
} ref;

static int ref_feed(ref *r, ref_state *s, uint32_t t)
{
    gm_lr_node *fed;
    if (gm_lr_feed(r->lr, r->mem, s->stack, t, &fed) != GM_OK)
        return 0;
    gm_lr_node_release(r->mem, s->stack);
    s->stack = fed;
    return 1;
}

/*
 * Element e of the layers (note [offending-token insertion] in
 * parser/postlex.h): a marked terminal gets the inserted terminal first
 * when the stack cannot take it and can take that.
 */
static int ref_feed_elem(ref *r, ref_state *s, uint32_t e)
{
    if (!(e & GM_POSTLEX_TRY))
        return ref_feed(r, s, e);
    uint32_t t = e & ~GM_POSTLEX_TRY, ins = r->c->grammar->postlex.insert;
    if (!gm_lr_can_feed(r->lr, s->stack, &t, 1) && gm_lr_can_feed(r->lr, s->stack, &ins, 1) &&
        !ref_feed(r, s, ins))
        return 0;
    return ref_feed(r, s, t);
}

/* Whether the stack takes element e (as ref_feed_elem feeds it). */
static int ref_elem_viable(ref *r, const gm_lr_node *stack, uint32_t e)
{
    uint32_t t = e & ~GM_POSTLEX_TRY, two[2] = {r->c->grammar->postlex.insert, t};
    if (gm_lr_can_feed(r->lr, stack, &t, 1))
        return 1;
    return (e & GM_POSTLEX_TRY) && gm_lr_can_feed(r->lr, stack, two, 2);
}

/* One lexed terminal through the layers to the parser. */
static int ref_emit(ref *r, ref_state *s, uint32_t t)
{
    if (s->lx->terminals[t].ignored)
        return 1;
    const uint32_t *out;
    size_t n;
    gm_error err;
    if (gm_postlex_stream_feed(&s->layers, t, s->lexeme, s->lexlen, &out, &n, &err) != GM_OK)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ref_feed_elem(r, s, out[i]))
            return 0;
    return 1;
}

/* The contextual lexer of the parser state on top of s's stack. */
static const gm_lexer *ref_lexer(ref *r, const ref_state *s)
{
    const gm_lexer *lx;
    gm_error err;
    assert_int_equal(gm_ctx_lexers_get(r->ctx, s->stack->state, &lx, &err), GM_OK);
    return lx;
}

/* Ends the pending lexeme before a byte of class cls (nclasses: the end of input). */
/*
 * Lark mode: the lexeme may fall back to s->last over the bytes after it,
 * within the bounds of the lexer's backtracking (lexer.h, note [lexer
 * backtracking]).
 */
static int ref_window_ok(const gm_lexer *lx, const ref_state *s)
{
    if (lx->ndfa == lx->nstates || s->last == GM_LEX_NONE ||
        (s->last == lx->line_end && !gm_lexer_can_produce(lx, s->q, s->last)))
        return 0;
    return gm_lexer_window_depth(lx, s->lexeme + s->last_len, s->lexlen - s->last_len) <
           GM_LEX_BACKTRACK_MAX;
}

static void ref_run(ref *r, ref_state *s, const uint8_t *b, size_t n);

/*
 * Ends the pending lexeme before a byte of class cls (nclasses: the end of
 * input): its match, or its longest earlier match, after which the bytes
 * after that match are lexed again — by the lexer of the parser's state
 * then, which may be another one (Lark's contextual lexer).
 */
static int ref_break(ref *r, ref_state *s, uint32_t cls)
{
    uint32_t t = gm_lexer_accept(s->lx, s->q, cls);
    uint8_t window[sizeof s->lexeme];
    size_t wlen = 0;
    if (t == GM_LEX_NONE) {
        if (!ref_window_ok(s->lx, s))
            return 0;
        t = s->last;
        wlen = s->lexlen - s->last_len;
        memcpy(window, s->lexeme + s->last_len, wlen);
        s->lexlen = s->last_len;
    }
    if (!ref_emit(r, s, t))
        return 0;
    s->q = 0;
    s->lexlen = 0;
    s->last = GM_LEX_NONE;
    ref_run(r, s, window, wlen);
    return s->ok;
}

static void ref_run(ref *r, ref_state *s, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n && s->ok; i++) {
        uint32_t nx;
        for (;;) {
            if (s->q == 0)
                s->lx = ref_lexer(r, s); /* a new lexeme: the lexer of the parser's state */
            const gm_lexer *lx = s->lx;
            /* Whether the lexeme so far is a match depends on the byte after it (lexer.h). */
            uint32_t a = s->q ? gm_lexer_accept(lx, s->q, lx->byte_class[b[i]]) : GM_LEX_NONE;
            if (a != GM_LEX_NONE || gm_lexer_may_accept(lx, s->q)) {
                s->last = a;
                s->last_len = s->lexlen;
            }
            nx = gm_lexer_dfa_state(lx, gm_lexer_move(lx, s->q, lx->byte_class[b[i]]));
            if (nx != GM_LEX_DEAD)
                break;
            if (s->q == 0 || !ref_break(r, s, lx->byte_class[b[i]])) {
                s->ok = 0;
                return;
            }
        }
        if (s->lexlen == sizeof s->lexeme) {
            memmove(s->lexeme, s->lexeme + 256, sizeof s->lexeme - 256);
            s->lexlen -= 256;
            s->last = s->last_len >= 256 ? s->last : GM_LEX_NONE;
            s->last_len -= s->last_len >= 256 ? 256 : 0;
        }
        s->lexeme[s->lexlen++] = b[i];
        s->q = nx;
    }
}

static ref_state ref_copy(const ref_state *s);

/* The pending lexeme can still become a terminal of its lexer that the stack accepts. */
static int ref_pending_ok(ref *r, const ref_state *s)
{
    const gm_postlex *pl = &r->c->grammar->postlex;
    if (s->q == 0)
        return 1;
    for (uint32_t t = 0; t < s->lx->nterminals; t++) {
        if (!gm_lexer_can_produce(s->lx, s->q, t))
            continue;
        if (s->lx->terminals[t].ignored)
            return 1;
        if (pl->indentation && t == pl->newline) {
            /* A line end still growing: its width is not known yet. */
            uint32_t one = t;
            if (s->layers.depth > 0 || gm_lr_can_feed(r->lr, s->stack, &one, 1))
                return 1;
            continue;
        }
        /* What the layers hand the parser for it (a ";", or nothing for a line end). */
        gm_postlex_stream layers = s->layers;
        const uint32_t *out;
        size_t n;
        gm_error err;
        if (gm_postlex_stream_feed(&layers, t, s->lexeme, s->lexlen, &out, &n, &err) != GM_OK)
            continue;
        if (n == 1 && (out[0] & GM_POSTLEX_TRY) ? ref_elem_viable(r, s->stack, out[0])
                                                : n == 0 || gm_lr_can_feed(r->lr, s->stack, out, n))
            return 1;
    }
    /* Or the lexeme falls back to its longest match and the rest is lexed again. */
    if (s->lx->accept[s->q] != GM_LEX_NONE || s->last == GM_LEX_NONE)
        return 0;
    ref_state c = ref_copy(s);
    int ok = ref_break(r, &c, s->lx->nclasses) && ref_pending_ok(r, &c);
    gm_lr_node_release(r->mem, c.stack);
    return ok;
}

static ref_state ref_copy(const ref_state *s)
{
    ref_state c = *s;
    gm_lr_node_retain(c.stack);
    return c;
}

static int ref_can_end(ref *r, const ref_state *s0)
{
    /* (with fallbacks: a lexeme that ends in a window breaks more than once) */
    if (!s0->ok)
        return 0;
    ref_state s = ref_copy(s0);
    int ok = 1;
    while (ok && s.q != 0)
        ok = ref_break(r, &s, s.lx->nclasses);
    const uint32_t *out;
    size_t n = 0;
    if (ok)
        gm_postlex_stream_end(&s.layers, &out, &n);
    for (size_t i = 0; ok && i < n; i++)
        ok = ref_feed(r, &s, out[i]);
    const gm_postlex *pl = &r->c->grammar->postlex;
    if (ok && pl->offending && !gm_lr_accepts(r->lr, s.stack) &&
        gm_lr_can_feed(r->lr, s.stack, &pl->insert, 1))
        ok = ref_feed(r, &s, pl->insert); /* the insertion before $end */
    ok = ok && gm_lr_accepts(r->lr, s.stack);
    gm_lr_node_release(r->mem, s.stack);
    return ok;
}

static void ref_init(ref *r, const gm_compiled *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->ctx = c->grammar->ctx;
    assert_non_null(r->ctx);
    r->lr = c->grammar->lr;
    r->mem = (gm_mem *)&c->mem;
    r->strip_left = c->vocab->data->strip_leading;
    r->st.ok = 1;
    r->st.last = GM_LEX_NONE;
    r->st.stack = gm_lr_stack_new(r->mem);
    assert_non_null(r->st.stack);
    const gm_postlex *pl = &c->grammar->postlex;
    gm_postlex_stream_init(&r->st.layers, pl);
    if (pl->indentation && pl->line_start)
        ref_run(r, &r->st, (const uint8_t *)"\n", 1);
}

static void ref_free(ref *r)
{
    gm_lr_node_release(r->mem, r->st.stack);
    free(r->text);
}

static int ref_allows(ref *r, uint32_t t)
{
    const gm_vocab_data *v = r->c->vocab->data;
    if (v->flags[t] & GM_TOK_EOS)
        return ref_can_end(r, &r->st);
    if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
        return 0;
    size_t n;
    const uint8_t *b = gm_vocab_data_token(v, t, &n);
    if (n == 0 || !r->st.ok)
        return 0;
    uint32_t strip = r->len == 0 ? r->strip_left : 0;
    while (strip && n && b[0] == ' ') {
        b++;
        n--;
        strip--;
    }
    ref_state s = ref_copy(&r->st);
    ref_run(r, &s, b, n);
    int ok = s.ok && ref_pending_ok(r, &s);
    gm_lr_node_release(r->mem, s.stack);
    return ok;
}

static void ref_append(ref *r, uint32_t t)
{
    size_t n;
    const uint8_t *b = gm_vocab_data_token(r->c->vocab->data, t, &n);
    if (r->len == 0)
        while (r->strip_left && n && b[0] == ' ') {
            b++;
            n--;
            r->strip_left--;
        }
    if (r->len + n > r->cap) {
        r->cap = (r->len + n) * 2 + 64;
        r->text = realloc(r->text, r->cap);
        assert_non_null(r->text);
    }
    memcpy(r->text + r->len, b, n);
    r->len += n;
    ref_run(r, &r->st, b, n);
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
            fail_msg("%s step %zu: token %u \"%.*s\" is %s by the mask but %s by the reference "
                     "(text so far: %zu bytes, ending \"%.*s\")",
                     where, step, t, (int)n, b, got ? "allowed" : "masked",
                     want ? "allowed" : "not allowed", r->len, (int)(r->len < 40 ? r->len : 40),
                     r->text + (r->len < 40 ? 0 : r->len - 40));
        }
        allowed += (size_t)got;
    }
    free(mask);
    return allowed;
}

typedef struct combo {
    const char *grammar;     /* inline Lark text, or a path under GM_SRCDIR ending in .lark */
    const char *tokenizer;   /* under GM_SHARED_DIR */
    bool lark;               /* Lark mode (conflicts and lexer) */
    const char *start;       /* start rule (NULL: start) */
} combo;

static gm_compiled *compile(const combo *k, gm_vocab **v, gm_grammar **g)
{
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_shared_path(k->tokenizer), NULL, v, &err) != GM_OK)
        fail_msg("%s: %s", k->tokenizer, err.message);
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.lexer = GM_LEXER_CONTEXTUAL;
    if (k->lark)
        o.conflicts = GM_CONFLICTS_LARK;
    o.start = k->start;
    size_t n = strlen(k->grammar);
    const char *path = k->grammar[0] == '/' ? k->grammar : gm_test_src_path(k->grammar);
    gm_status st = n > 5 && !strcmp(k->grammar + n - 5, ".lark")
                       ? gm_grammar_create_from_file(path, &o, g, &err)
                       : gm_grammar_create(k->grammar, n, "inline.lark", &o, g, &err);
    if (st != GM_OK)
        fail_msg("grammar: %s", err.message);
    gm_compiled *c;
    if (gm_compiled_create(*g, *v, NULL, &c, &err) != GM_OK)
        fail_msg("compile: %s", err.message);
    return c;
}

static void destroy_all(gm_compiled *c, gm_grammar *g, gm_vocab *v)
{
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

/*
 * Decodes a program token by token, comparing at every step; `valid`: the
 * program is in the language (under the contextual lexer), else decoding
 * must stop at a masked true token.
 */
static void program_steps(const combo *k, const char *program, bool valid)
{
    gm_vocab *v;
    gm_grammar *g;
    gm_compiled *c = compile(k, &v, &g);
    uint32_t ids[512];
    size_t n = gm_test_greedy_tokens(c->vocab->data, program, ids, 512);
    gm_error err;
    ref r;
    ref_init(&r, c);
    gm_matcher *m;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    size_t i = 0;
    for (; i <= n; i++) {
        compare_step(&r, m, "program", i);
        if (i == n)
            break;
        gm_status st = gm_matcher_accept_token(m, ids[i], &err);
        if (!valid && st == GM_ERR_REJECTED)
            break;
        if (st != GM_OK)
            fail_msg("program step %zu: token %u rejected: %s", i, ids[i], err.message);
        ref_append(&r, ids[i]);
        assert_true(r.st.ok);
    }
    if (valid) {
        assert_true(gm_matcher_is_accepting(m));
        assert_true(ref_can_end(&r, &r.st));
    } else {
        assert_true(i < n); /* rejected before its end */
    }
    gm_matcher_destroy(m);
    ref_free(&r);
    destroy_all(c, g, v);
}

/* Random walks: at each step compare, then take a random allowed token. */
static void random_walks(const combo *k, int walks, int steps, uint64_t seed)
{
    gm_vocab *v;
    gm_grammar *g;
    gm_compiled *c = compile(k, &v, &g);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint32_t nbits = gm_compiled_vocab_size(c);
    gm_error err;
    for (int w = 0; w < walks; w++) {
        ref r;
        ref_init(&r, c);
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        for (int i = 0; i < steps; i++) {
            char where[64];
            snprintf(where, sizeof where, "walk %d", w);
            size_t allowed = compare_step(&r, m, where, (size_t)i);
            assert_true(allowed > 0);
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            /* A random allowed non-EOS token, tokens spanning several lexemes preferred. */
            uint32_t pick = UINT32_MAX, seen = 0;
            for (uint32_t t = 0; t < nbits; t++) {
                if (!((mask[t >> 5] >> (t & 31)) & 1) || (c->vocab->data->flags[t] & GM_TOK_EOS))
                    continue;
                if (gm_test_rand(&seed) % ++seen == 0)
                    pick = t;
            }
            if (pick == UINT32_MAX)
                break;
            assert_int_equal(gm_matcher_accept_token(m, pick, &err), GM_OK);
            ref_append(&r, pick);
            assert_true(r.st.ok);
        }
        gm_matcher_destroy(m);
        ref_free(&r);
    }
    free(mask);
    destroy_all(c, g, v);
}

#define LLAMA3 "tokenizers/llama3/tokenizer.json"
#define SP32K "tokenizers/sp32k/tokenizer.json"
#define QWEN3 "tokenizers/qwen3/tokenizer.json"

/* tests/lark/contextual.lark: "print" is a keyword or a name by the parser's state. */
static void print_name(void **state)
{
    (void)state;
    combo k = {"tests/lark/contextual.lark", LLAMA3, true, NULL};
    program_steps(&k, "print x; x = y; print print; x = print;", true);
    program_steps(&k, "print x; print = x;", false); /* a keyword at a statement's start */
    combo s = {"tests/lark/contextual.lark", SP32K, false, NULL};
    program_steps(&s, "print print;x=print;  print=print;", false);
    random_walks(&k, 3, 30, 1);
    random_walks(&s, 3, 30, 2);
}

/*
 * Where the lexers differ in more ways: keywords that are names after
 * "let" and "."; "=>" and "==" that a state after a name in a declaration
 * does not accept (the contextual lexer lexes "=" and then ">" there);
 * HEX overlapping NAME and NUMBER, lexed only after "color"; "->" against
 * "-" and ">".
 */
static const char expr_grammar[] =
    "start: stmt*\n"
    "stmt: \"let\" NAME \"=\" expr \";\" | \"color\" HEX \";\" | expr \";\"\n"
    "    | \"if\" expr \"=>\" stmt | NAME \"->\" NAME \";\"\n"
    "?expr: expr \"==\" sum | sum\n"
    "?sum: sum \"-\" atom | sum \">\" atom | \"-\" atom | atom\n"
    "?atom: NAME | NUMBER | \"(\" expr \")\" | atom \".\" NAME\n"
    "NAME: /[a-z_][a-z0-9_]*/\n"
    "NUMBER: /[0-9]+/\n"
    "HEX: /[0-9a-f]+/\n"
    "%ignore /[ \\t\\n]+/\n";

static void expr_programs(void **state)
{
    (void)state;
    combo k = {expr_grammar, LLAMA3, true, NULL};
    program_steps(&k, "let let = 1;\ncolor beef;\ncolor 12ab;\nlet x =>y;\nif a==b=> x.let;\n"
                      "f->g; x.color->y;\n", false);
    program_steps(&k, "let let = 1;\ncolor beef;\ncolor 12ab;\nif a==b=> x.let;\nf->g;\n"
                      "x.if;let a=-b-c;\n", true);
    combo s = {expr_grammar, SP32K, false, NULL};
    program_steps(&s, "color abc; color 0f;let color=color.let-1>2;", true);
}

static void expr_walks(void **state)
{
    (void)state;
    combo k = {expr_grammar, LLAMA3, true, NULL};
    random_walks(&k, 4, 30, 3);
    combo s = {expr_grammar, SP32K, false, NULL};
    random_walks(&s, 4, 30, 4);
    combo q = {expr_grammar, QWEN3, true, NULL};
    random_walks(&q, 3, 30, 5);
}

/* An indentation layer (line ends, _INDENT, _DEDENT) with a soft keyword, "match". */
static const char indent_grammar[] =
    "start: (_NEWLINE | stmt)*\n"
    "?stmt: simple | compound\n"
    "simple: expr _NEWLINE | \"pass\" _NEWLINE\n"
    "compound: \"if\" expr \":\" suite | \"match\" expr \":\" suite\n"
    "suite: simple | _NEWLINE _INDENT stmt+ _DEDENT\n"
    "?expr: NAME | NUMBER | \"(\" expr (\",\" expr)* \")\" | expr \".\" NAME\n"
    "NAME: /[a-z_][a-z0-9_]*/\n"
    "NUMBER: /[0-9]+/\n"
    "_NEWLINE: /(\\n[\\t ]*)+/\n"
    "%declare _INDENT _DEDENT\n"
    "%indent _NEWLINE _INDENT _DEDENT \"(\" \")\"\n"
    "%ignore /[ \\t]+/\n";

static const char indent_program[] =
    "match match:\n"
    "    if (a,\n"
    "  match):\n"
    "        pass\n"
    "    x.match\n"
    "x.if\n"
    "if x: pass\n";

static void indent_programs(void **state)
{
    (void)state;
    combo k = {indent_grammar, LLAMA3, false, NULL};
    program_steps(&k, indent_program, true);
    combo s = {indent_grammar, SP32K, true, NULL};
    program_steps(&s, indent_program, true);
    random_walks(&k, 3, 30, 6);
    random_walks(&s, 3, 30, 7);
}

/* Semicolon insertion (Go's rule): a line end after NAME, ")", "}" or "return" is a ";". */
static const char semi_grammar[] =
    "start: (stmt \";\")*\n"
    "stmt: NAME | \"return\" NAME? | \"{\" start \"}\" | \"(\" NAME \")\" | \"print\" NAME\n"
    "NAME: /[a-z]+/\n"
    "NEWLINE: /\\n/\n"
    "%ignore \" \"\n"
    "%insert \";\" at NEWLINE after NAME \"}\" \")\" \"return\"\n";

static void semicolon_programs(void **state)
{
    (void)state;
    combo k = {semi_grammar, LLAMA3, false, NULL};
    program_steps(&k, "print print\nreturn return\n{ x; return; }\n(print)\nreturn\n", true);
    random_walks(&k, 3, 30, 8);
    combo s = {semi_grammar, SP32K, true, NULL};
    program_steps(&s, "{print return\n}\nprint\n;x\n", false);
    random_walks(&s, 3, 30, 9);
}

/*
 * JavaScript's offending-token rule (parser/postlex.h, note [offending-token
 * insertion]) on a small grammar: ASI goes before a terminal the parser
 * cannot take after a line end, before "}", at the end, and always after
 * "return" at a line end; "/" after an operand divides (REGEX is nolex).
 */
static const char asi_grammar[] =
    "start: stmt*\n"
    "stmt: expr _semi | \"return\" expr? _semi | \"{\" stmt* \"}\" | \";\"\n"
    "    | \"if\" \"(\" expr \")\" stmt\n"
    "_semi: \";\" | ASI\n"
    "?expr: expr \"+\" atom | expr \"/\" atom | atom\n"
    "?atom: NAME | REGEX | \"(\" expr \")\" | atom \"(\" expr? \")\"\n"
    "NAME: /[a-z]+/\n"
    "REGEX: /\\/[a-z]+\\//\n"
    "NEWLINE: /\\n/\n"
    "%declare ASI\n"
    "%ignore \" \"\n"
    "%insert ASI at NEWLINE after \"return\" offending \"}\" nolex REGEX\n";

static void asi_programs(void **state)
{
    (void)state;
    combo k = {asi_grammar, LLAMA3, false, NULL};
    program_steps(&k, "a\nb\n(c)\nd /e/ f\n{ x }\nif (a) b\n/ c\nreturn\nx + y\n/re/\nq\n", true);
    program_steps(&k, "a b\n", false);          /* no line end: no insertion */
    program_steps(&k, "if (a)\n;\nif (b)\nc", true);
    program_steps(&k, "if (a)\n}", false);      /* ASI would be an empty statement */
    random_walks(&k, 3, 30, 14);
    combo s = {asi_grammar, SP32K, false, NULL};
    program_steps(&s, "x\n(y)(z)\n{ return\n}", true);
    random_walks(&s, 3, 30, 15);
}

/* The bundled JavaScript grammar (note [js: semicolons] in grammars/javascript.lark). */
static void javascript_program(void **state)
{
    (void)state;
    combo k = {"grammars/javascript.lark", LLAMA3, false, NULL};
    program_steps(&k, "'use strict'\nconst a = b\n(c)\nlet d = `x${a}//${ {e: 1}.e }`\n"
                      "if (a) return /r[/]/g.test(d) }\nx = y / 2 / z\nthrow e\n", false);
    program_steps(&k, "x = (a)\n=> 1\n", false); /* no line end before => */
    program_steps(&k, "'use strict'\nconst a = b\n(c)\nlet d = `x${a}//${ {e: 1}.e }`\n"
                      "function f() { if (a) return /r[/]/g.test(d) }\nx = y / 2 / z\ni\n++j\n", true);
    random_walks(&k, 2, 25, 16);
}

/* The bundled TypeScript grammar: `>>` closing type arguments lexed as two
 * `>` (note [ts: closing type arguments]), "<" and "[" after a line end
 * ending an interface member (note [ts: line ends in types]), arrows with
 * typed parameters, `as`, non-null `!`. */
static void typescript_program(void **state)
{
    (void)state;
    combo k = {"grammars/typescript.lark", LLAMA3, false, NULL};
    program_steps(&k, "let a: Map<string, Array<Set<number>>> = new Map<K, V<W>>()\n"
                      "interface I {\n  a: B\n  <T>(x: T): T\n  [k: string]: C\n}\n"
                      "const f = (x: number, y?: A<B>): R => x as unknown as T[]\nz!.w\n", true);
    program_steps(&k, "type A = B<C<D>>>;\n", false);
    program_steps(&k, "interface I { a: B c: D }\n", false);
    random_walks(&k, 2, 25, 17);
}

/*
 * Lark mode's fallbacks (note [contextual fallbacks]): "1e" may fall back
 * to NUMBER, r"a to NAME, ".." to ".", and the window goes to the lexer of
 * the state after the fallback: after a NUMBER in an expression that one
 * takes "e" as a NAME, after a NAME it takes no '"', after "x." no ".".
 */
static const char fallback_grammar[] =
    "start: stmt*\n"
    "stmt: \"let\" NAME \"=\" expr \";\" | expr \";\" | \"at\" (NUMBER NAME | FLOAT) \";\"\n"
    "?expr: atom | expr \"...\" atom | expr \".\" NAME | \"-\" atom\n"
    "?atom: NAME | NUMBER NAME? | FLOAT | STRING | \"(\" expr \")\"\n"
    "NAME: /[a-z_][a-z0-9_]*/\n"
    "NUMBER: /[0-9]+/\n"
    "FLOAT: /[0-9]+e[0-9]+/\n"
    "STRING: /r?\"[^\"\\n ]*\"/\n"
    "%ignore \" \"\n";

static void fallback_programs(void **state)
{
    (void)state;
    combo k = {fallback_grammar, LLAMA3, true, NULL};
    program_steps(&k, "let x = 1e5 ... 2ex;let z=3e;at 2e3;x.y...3;r;(r).let;", true);
    program_steps(&k, "let u = r\"ab;", false);
    program_steps(&k, "let v = 4e5e;", false);
    program_steps(&k, "x..y;", false);
    random_walks(&k, 4, 30, 10);
    combo s = {fallback_grammar, SP32K, true, NULL};
    program_steps(&s, "at 1e2;let a=3e;let b=1e;", true);
    random_walks(&s, 4, 30, 11);
}

/* Lark's own lexer-mode tests of test_mask (lookaheads, lazy strings, fallbacks over line ends). */
static const char lark_lexer_grammar[] =
    "start: _NL? (stmt _NL)*\n"
    "stmt: \"if\" expr | NAME \"=\" expr\n"
    "expr: atom (OP atom)*\n"
    "atom: NAME | STRING | NUMBER | \"(\" expr \")\" | \"?\" atom\n"
    "OP: /[+*]|[?](?![a-z])/\n"
    "NAME: /[a-z_][a-z0-9_]*/\n"
    "STRING: /\"(?!\"\").*?\"|\"\"\"(?:.|\\n)*?\"\"\"/\n"
    "NUMBER: /[0-9]+/\n"
    "_NL: /(\\r?\\n)+\\s*/\n"
    "COMMENT: /\\s*\\/\\/[^\\n]*/\n"
    "%ignore COMMENT\n"
    "%ignore /[ \\t]+/\n";

static void lark_lexer_walks(void **state)
{
    (void)state;
    combo k = {lark_lexer_grammar, SP32K, true, NULL};
    random_walks(&k, 5, 30, 12);
    combo q = {lark_lexer_grammar, QWEN3, true, NULL};
    random_walks(&q, 3, 30, 13);
}

/*
 * Lark's own python.lark (Debian python3-lark; skipped without it) on a
 * program with docstrings and raw strings (fallbacks of STRING and
 * LONG_STRING), numbers, keywords that are names elsewhere and the
 * indentation layer: every step against the reference.
 */
static void lark_python(void **state)
{
    (void)state;
    const char *path = gm_test_lark_python_grammar();
    if (!path)
        skip();
    static const char program[] =
        "\"\"\"Module doc.\"\"\"\n"
        "import re\n"
        "pat = re.compile(r'(\\d+),(\\d+)')\n"
        "def f(x, case=1e5, *args):\n"
        "    '''Doc string.'''\n"
        "    if x is not None and case:\n"
        "        return [match.x for match in args if match]\n"
        "    y = 0x1f + 1_000 + 2.5e-3j\n"
        "    return {'a': b\"\\x00\", **x}\n"
        "class C(object):\n"
        "    pass\n";
    combo k = {path, LLAMA3, true, "file_input"};
    program_steps(&k, program, true);
}

/* The contextual lexers of g built so far (note [lazy lexers]). */
static uint32_t lexers_built(const gm_grammar *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->ctx->nsets; k++)
        n += atomic_load(&g->ctx->lexers[k]) != NULL;
    return n;
}

/* An allocator that refuses every new block once *ud is set. */
static void *refusing_realloc(void *ud, void *p, size_t n)
{
    if (n == 0) {
        free(p);
        return NULL;
    }
    return *(const bool *)ud ? NULL : realloc(p, n);
}

/*
 * note [lazy lexers]: a grammar builds no contextual lexer, a first mask
 * the lexers of the states its tokens reach (not all of them), and a lexer
 * that cannot be allocated fails the mask that needs it, cleanly.
 */
static void lazy_lexers(void **state)
{
    (void)state;
    gm_error err;
    gm_vocab *v;
    if (gm_vocab_create_from_file(gm_test_shared_path(SP32K), NULL, &v, &err) != GM_OK)
        fail_msg("%s", err.message);
    bool refuse = false;
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.lexer = GM_LEXER_CONTEXTUAL;
    o.allocator = (gm_allocator){refusing_realloc, &refuse};
    size_t words = (gm_vocab_size(v) + 31) / 32;
    uint32_t *mask = calloc(words, sizeof *mask);
    for (int run = 0; run < 2; run++) {
        gm_grammar *g;
        assert_int_equal(gm_grammar_create(expr_grammar, strlen(expr_grammar), "inline.lark", &o,
                                           &g, &err), GM_OK);
        assert_true(g->ctx->nsets > 2);
        assert_int_equal(lexers_built(g), 0);
        gm_compiled *c;
        gm_matcher *m;
        assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        if (run == 0) {
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            uint32_t built = lexers_built(g);
            assert_true(built > 0 && built < g->ctx->nsets);
        } else {
            /* The grammar's allocator now refuses: the next lexer cannot be built (the
               matcher has the start state's). */
            uint32_t before = lexers_built(g);
            refuse = true;
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_ERR_NOMEM);
            assert_non_null(strstr(err.message, "lexer"));
            assert_int_equal(lexers_built(g), before);
            /* A failed matcher wants a reset; then the lexer is built. */
            refuse = false;
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_ERR_STATE);
            gm_matcher_reset(m);
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            assert_true(lexers_built(g) > before);
        }
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_grammar_destroy(g);
    }
    free(mask);
    gm_vocab_destroy(v);
}

/* An unknown lexer kind is an argument error. */
static void bad_lexer_kind(void **state)
{
    (void)state;
    static const char text[] = "start: NAME*\nNAME: /[a-z]+/\n";
    gm_error err;
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.lexer = (gm_lexer_kind)7;
    gm_grammar *bad = NULL;
    assert_int_equal(gm_grammar_create(text, strlen(text), "x.lark", &o, &bad, &err),
                     GM_ERR_ARGUMENT);
    assert_null(bad);
}

/* Whether every token of a is in b. */
typedef struct in_set {
    const gm_tokset *b;
    uint32_t missing;
} in_set;

static int count_missing(void *ud, uint32_t id)
{
    in_set *x = ud;
    x->missing += !gm_tokset_has(x->b, id);
    return 0;
}

/*
 * note [shared walks]: every profile of every contextual lexer built through
 * the shared walks equals the one its own walk gives (the same classes:
 * sequences, Prod sets and tokens), and walks are shared: more states of
 * the lexers can be described than there are templates. Lark's python.lark
 * (skipped without python3-lark) is the one that caught a description
 * naming a part that could not be described.
 */
static void shared_walks_match(const combo *k, uint32_t lexer_step)
{
    gm_vocab *v;
    gm_grammar *g;
    gm_compiled *c = compile(k, &v, &g);
    gm_error err;
    gm_ctx_spanners *own;
    assert_int_equal(gm_ctx_spanners_create(&c->mem, g->ctx, &g->postlex, g->lr, v->data, v->trie,
                                            &own, &err),
                     GM_OK);
    gm_walkshare_destroy(own->walks);
    own->walks = NULL;
    uint32_t describable = 0, profiles = 0;
    for (uint32_t lx = 0; lx < g->ctx->nsets; lx += lexer_step) {
        gm_spanner *a = gm_ctx_spanner(c->ctx, lx, &err), *b = gm_ctx_spanner(own, lx, &err);
        assert_non_null(a);
        assert_non_null(b);
        assert_null(b->walks);
        for (uint32_t i = 0; i < a->nslots; i++) {
            uint32_t q = gm_spanner_slot_state(a, i);
            const gm_profile *pa = gm_spanner_profile(a, q, &err), *pb = gm_spanner_profile(b, q, &err);
            assert_non_null(pa);
            assert_non_null(pb);
            profiles++;
            uint32_t id;
            assert_int_equal(gm_walkshare_describe(a, q, &id), 0);
            describable += id != GM_WALK_NONE;
            assert_int_equal(pa->nclasses, pb->nclasses);
            assert_int_equal(pa->ntokens, pb->ntokens);
            for (uint32_t j = 0; j < pa->nclasses; j++) {
                const gm_class *ca = &pa->classes[j], *cb = &pb->classes[j];
                assert_int_equal(ca->len, cb->len);
                assert_int_equal(ca->prod, cb->prod);
                assert_memory_equal(pa->seqs + ca->seq, pb->seqs + cb->seq,
                                    ca->len * sizeof *pa->seqs);
                assert_int_equal(ca->tokens->count, cb->tokens->count);
                in_set x = {cb->tokens, 0};
                gm_tokset_foreach(ca->tokens, a->nbits, count_missing, &x);
                assert_int_equal(x.missing, 0);
            }
        }
    }
    uint32_t templates = 0;
    for (size_t i = 0; i < c->ctx->walks->templates.n; i++)
        templates += c->ctx->walks->templates.v[i] != NULL;
    print_message("%s: %u profiles, %u describable, %u templates\n", k->tokenizer, profiles,
                  describable, templates);
    /* Some profiles came from another lexer's walk. */
    assert_true(templates > 0);
    assert_true(describable > templates);
    gm_ctx_spanners_destroy(own);
    destroy_all(c, g, v);
}

/*
 * An allocation failure anywhere in building the contextual spanners'
 * profiles through shared walks (descriptions, templates, whole classes) is
 * GM_ERR_NOMEM, never a crash or a leak: every allocation is failed in turn.
 */
static void shared_walk_allocation_failures(void **state)
{
    (void)state;
    const char *words[] = {"let", " x", "x", "=", " 1", "12", "ab", "cd;", " beef", ";\n", "->",
                           "-", ">", "==", "(a", ").", "let;", " color", "ff;", "_b", "if"};
    enum { N = sizeof words / sizeof words[0] };
    const uint8_t *bytes[N];
    size_t lens[N];
    for (size_t i = 0; i < N; i++) {
        bytes[i] = (const uint8_t *)words[i];
        lens[i] = strlen(words[i]);
    }
    gm_error err;
    gm_vocab *v;
    gm_grammar *g;
    assert_int_equal(gm_vocab_create_from_tokens(bytes, lens, N, NULL, NULL, 0, NULL, &v, &err),
                     GM_OK);
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.lexer = GM_LEXER_CONTEXTUAL;
    assert_int_equal(gm_grammar_create(expr_grammar, strlen(expr_grammar), "inline.lark", &o, &g,
                                       &err),
                     GM_OK);
    uint32_t templates = 0;
    for (unsigned long fail_at = 1;; fail_at++) {
        gm_test_failing_alloc fa = {0, 0, 0};
        gm_allocator al = gm_test_failing_allocator(&fa);
        gm_mem m;
        gm_mem_init(&m, &al, 0);
        fa.fail_at = fail_at;
        gm_ctx_spanners *cs = NULL;
        gm_status st = gm_ctx_spanners_create(&m, g->ctx, &g->postlex, g->lr, v->data, v->trie,
                                              &cs, &err);
        if (st == GM_OK)
            st = gm_ctx_spanners_build_all(cs, NULL, NULL, &err);
        if (st != GM_OK)
            assert_int_equal(st, GM_ERR_NOMEM);
        else
            for (size_t i = 0; i < cs->walks->templates.n; i++)
                templates += cs->walks->templates.v[i] != NULL;
        gm_ctx_spanners_destroy(cs);
        assert_int_equal(fa.live, 0);
        assert_int_equal(atomic_load(&m.used), 0);
        if (st == GM_OK && fa.count < fail_at)
            break; /* every allocation has been failed once */
    }
    assert_true(templates > 0); /* the walks were shared */
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static void shared_walks(void **state)
{
    (void)state;
    combo expr = {expr_grammar, SP32K, false, NULL};
    shared_walks_match(&expr, 1);
    combo semi = {semi_grammar, SP32K, true, NULL};
    shared_walks_match(&semi, 1);
    combo fallback = {fallback_grammar, SP32K, true, NULL};
    shared_walks_match(&fallback, 1);
    combo indent = {indent_grammar, SP32K, false, NULL};
    shared_walks_match(&indent, 1);
    combo go = {"grammars/go.lark", SP32K, false, NULL};
    shared_walks_match(&go, 9);
    combo python = {"grammars/python.lark", SP32K, false, NULL};
    shared_walks_match(&python, 23);
    combo java = {"grammars/java.lark", SP32K, false, NULL};
    shared_walks_match(&java, 37);
    /* Four flags (offending-token insertion), components with several heavy states
     * (note [hubs of several heavy states]) under llama3. */
    combo javascript = {"grammars/javascript.lark", LLAMA3, false, NULL};
    shared_walks_match(&javascript, 61);
    const char *path = gm_test_lark_python_grammar();
    if (path) {
        combo lark_python = {path, SP32K, true, "file_input"};
        shared_walks_match(&lark_python, 47);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(print_name),
        cmocka_unit_test(expr_programs),
        cmocka_unit_test(expr_walks),
        cmocka_unit_test(indent_programs),
        cmocka_unit_test(semicolon_programs),
        cmocka_unit_test(asi_programs),
        cmocka_unit_test(javascript_program),
        cmocka_unit_test(typescript_program),
        cmocka_unit_test(fallback_programs),
        cmocka_unit_test(lark_lexer_walks),
        cmocka_unit_test(bad_lexer_kind),
        cmocka_unit_test(lazy_lexers),
        cmocka_unit_test(lark_python),
        cmocka_unit_test(shared_walks),
        cmocka_unit_test(shared_walk_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
