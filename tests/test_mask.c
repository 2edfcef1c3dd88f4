/*
 * Masks against a brute-force reference, over full real vocabularies.
 *
 * The reference knows nothing of profiles, classes, first-byte filters or
 * virtual start states. It keeps the text decoded so far, applies the
 * decoder's text rule itself (strip_leading spaces at the start of the
 * whole text), and for every token asks: is text+token a viable prefix?
 * That is, running the lexing transducer over it (its own loop over the
 * lexer tables) never fails, every emitted terminal feeds the LR stack, and
 * the pending lexeme can still become a terminal the stack accepts (or an
 * ignored one). EOS is allowed when the text is a complete sentence. The
 * mask from gm_matcher_fill_mask must agree exactly, at every sampled step
 * of real corpus files and of random walks.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/lr.h"
#include "runtime/objects.h"
#include "spanner/accept.h"
#include "vocab/ids_file.h"

typedef struct ref_state {
    int ok;                  /* the text is a viable prefix so far */
    uint32_t q;              /* lexer state of the pending lexeme (0 = none) */
    gm_lr_node *stack;       /* one reference */
    /* The indentation layer, kept the plain way (postlex.h, note [indentation]). */
    uint32_t widths[64];     /* width stack above level 0 */
    int nwidths;
    int parens;
    uint8_t lexeme[512];     /* bytes of the pending lexeme (the last 512) */
    size_t lexlen;
    uint32_t last;           /* with backtracking: the longest match of the lexeme so far */
    size_t last_len;         /* its length in lexeme[] */
} ref_state;

typedef struct ref {
    const gm_compiled *c;
    const gm_lexer *lx;
    const gm_lr_table *lr;
    gm_mem *mem;
    uint8_t *text;           /* the grammar's view of the output so far */
    size_t len, cap;
    uint32_t strip_left;     /* leading spaces the decoder still removes */
    ref_state st;            /* after text */
} ref;

static void ref_release(ref *r, ref_state *s)
{
    gm_lr_node_release(r->mem, s->stack);
    s->stack = NULL;
}

static int ref_feed(ref *r, ref_state *s, uint32_t t)
{
    gm_lr_node *fed;
    if (gm_lr_feed(r->lr, r->mem, s->stack, t, &fed) != GM_OK)
        return 0;
    gm_lr_node_release(r->mem, s->stack);
    s->stack = fed;
    return 1;
}

/* The indentation width of the pending lexeme: Lark's count over its last line. */
static uint32_t ref_width(const ref_state *s, uint32_t tab)
{
    size_t from = 0;
    for (size_t i = 0; i < s->lexlen; i++)
        if (s->lexeme[i] == '\n')
            from = i + 1;
    uint32_t w = 0;
    for (size_t i = from; i < s->lexlen; i++)
        w += s->lexeme[i] == ' ' ? 1 : s->lexeme[i] == '\t' ? tab : 0;
    return w > GM_INDENT_MAX_WIDTH ? GM_INDENT_MAX_WIDTH : w;
}

/* One lexed terminal through the layers to the parser. */
static int ref_emit(ref *r, ref_state *s, uint32_t t)
{
    const gm_postlex *pl = &r->c->grammar->postlex;
    if (r->lx->terminals[t].ignored)
        return 1;
    if (!pl->indentation)
        return ref_feed(r, s, t);
    if (t != pl->newline) {
        if (!ref_feed(r, s, t))
            return 0;
        s->parens += pl->bracket[t];
        return 1;
    }
    if (s->parens > 0)
        return 1;
    uint32_t w = ref_width(s, pl->tab_width);
    if (!ref_feed(r, s, pl->newline))
        return 0;
    uint32_t top = s->nwidths ? s->widths[s->nwidths - 1] : 0;
    if (w > top) {
        assert_true(s->nwidths < 64);
        s->widths[s->nwidths++] = w;
        return ref_feed(r, s, pl->indent);
    }
    while (w < top) {
        if (!ref_feed(r, s, pl->dedent))
            return 0;
        s->nwidths--;
        top = s->nwidths ? s->widths[s->nwidths - 1] : 0;
    }
    return w == top;
}

static uint32_t ref_dfa_next(const gm_lexer *lx, uint32_t q, uint8_t b)
{
    return gm_lexer_dfa_state(lx, gm_lexer_move(lx, q, lx->byte_class[b]));
}

/*
 * Lark-mode backtracking may fall back to s->last over the bytes after it
 * (lexer.h, note [lexer backtracking]).
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
 * Ends the pending lexeme (a byte of class cls cannot continue it, or the
 * input ends: cls = nclasses): its match, or with backtracking the longest
 * earlier match, after which the rest of the lexeme is lexed again.
 */
static int ref_break(ref *r, ref_state *s, uint32_t cls)
{
    const gm_lexer *lx = r->lx;
    uint32_t t = gm_lexer_accept(lx, s->q, cls);
    uint8_t window[sizeof s->lexeme];
    size_t wlen = 0;
    if (t == GM_LEX_NONE) {
        if (!ref_window_ok(lx, s))
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

/* Continues state s over bytes (the transducer of lexer.h, written out as a backtracking lexer). */
static void ref_run(ref *r, ref_state *s, const uint8_t *b, size_t n)
{
    const gm_lexer *lx = r->lx;
    for (size_t i = 0; i < n && s->ok; i++) {
        uint32_t nx, cls = lx->byte_class[b[i]];
        for (;;) {
            /* Whether the lexeme so far is a match depends on the byte after it (lexer.h). */
            uint32_t a = s->q ? gm_lexer_accept(lx, s->q, cls) : GM_LEX_NONE;
            if (a != GM_LEX_NONE || gm_lexer_may_accept(lx, s->q)) {
                s->last = a;
                s->last_len = s->lexlen;
            }
            if ((nx = ref_dfa_next(lx, s->q, b[i])) != GM_LEX_DEAD)
                break;
            if (s->q == 0 || !ref_break(r, s, cls)) {
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

/* The pending lexeme can still become a terminal the stack accepts. */
static int ref_pending_ok(ref *r, const ref_state *s)
{
    const gm_lexer *lx = r->lx;
    const gm_postlex *pl = &r->c->grammar->postlex;
    if (s->q == 0)
        return 1;
    for (uint32_t t = 0; t < lx->nterminals; t++) {
        if (!gm_lexer_can_produce(lx, s->q, t))
            continue;
        if (lx->terminals[t].ignored)
            return 1;
        /* A line end still growing can take any width: it fits when _NEWLINE does. */
        if (pl->indentation && t == pl->newline && s->parens > 0)
            return 1;
        uint32_t one = t;
        if (gm_lr_can_feed(r->lr, s->stack, &one, 1))
            return 1;
    }
    /* Or the lexeme falls back to its longest match and the rest is lexed again. */
    if (lx->accept[s->q] != GM_LEX_NONE || s->last == GM_LEX_NONE)
        return 0;
    ref_state c = ref_copy(s);
    int ok = ref_break(r, &c, lx->nclasses) && ref_pending_ok(r, &c);
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
    const gm_postlex *pl = &r->c->grammar->postlex;
    if (!s0->ok)
        return 0;
    ref_state s = ref_copy(s0);
    int ok = 1;
    while (ok && s.q != 0)
        ok = ref_break(r, &s, r->lx->nclasses);
    for (; ok && pl->indentation && s.nwidths > 0; s.nwidths--)
        ok = ref_feed(r, &s, pl->dedent);
    ok = ok && gm_lr_accepts(r->lr, s.stack);
    gm_lr_node_release(r->mem, s.stack);
    return ok;
}

static void ref_init(ref *r, const gm_compiled *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->lx = c->grammar->lexer;
    r->lr = c->grammar->lr;
    r->mem = (gm_mem *)&c->mem;
    r->strip_left = c->vocab->data->strip_leading;
    r->st.ok = 1;
    r->st.last = GM_LEX_NONE;
    r->st.stack = gm_lr_stack_new(r->mem);
    assert_non_null(r->st.stack);
    /* The input starts after a virtual line end when the layer says so (postlex.h). */
    const gm_postlex *pl = &c->grammar->postlex;
    if (pl->indentation && pl->line_start)
        ref_run(r, &r->st, (const uint8_t *)"\n", 1);
}

static void ref_free(ref *r)
{
    ref_release(r, &r->st);
    free(r->text);
}

/* Whether token t is allowed after the text (the reference's verdict). */
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
    /* The decoder's text rule: leading spaces of the whole text are dropped. */
    uint32_t strip = r->len == 0 ? r->strip_left : 0;
    while (strip && n && b[0] == ' ') {
        b++;
        n--;
        strip--;
    }
    ref_state s = ref_copy(&r->st);
    ref_run(r, &s, b, n);
    int ok = s.ok && ref_pending_ok(r, &s);
    ref_release(r, &s);
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

/* Compares the matcher's mask with the reference over the whole vocabulary. */
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

/* ---- always-accepted entries against the plain definition and the real stack ---- */

typedef enum { V_A, V_R, V_D } verdict;

/*
 * Feeds terminal t to a stack known only from st[0] up (accept.h, note
 * [always-accepted entries]), written plainly: A when it shifts, R on an
 * error, D when a reduction needs a state below st[0] (or the stack passes
 * the 320 states the engine simulates).
 */
static verdict plain_feed(const gm_lr_table *lr, uint32_t *st, uint32_t *n, uint32_t t)
{
    for (;;) {
        gm_lr_action a = gm_lr_action_of(lr, st[*n - 1], t);
        if (GM_LR_KIND(a) == GM_LR_SHIFT) {
            if (*n == 320)
                return V_D;
            st[(*n)++] = GM_LR_ARG(a);
            return V_A;
        }
        if (GM_LR_KIND(a) != GM_LR_REDUCE)
            return V_R;
        uint32_t p = GM_LR_ARG(a);
        if (lr->prod_len[p] >= *n)
            return V_D;
        *n -= lr->prod_len[p];
        st[*n] = gm_lr_goto_of(lr, st[*n - 1], lr->prod_lhs[p]);
        (*n)++;
    }
}

/* The class's verdict on the anchored stack: E, then some T of its Prod set. */
static verdict plain_class(const gm_spanner *sp, const gm_profile *p, const gm_class *c,
                           const uint32_t *anchor, uint32_t nanchor)
{
    uint32_t st[320], n = nanchor;
    memcpy(st, anchor, nanchor * sizeof *anchor);
    for (uint32_t i = 0; i < c->len; i++) {
        verdict v = plain_feed(sp->lr, st, &n, p->seqs[c->seq + i]);
        if (v != V_A)
            return v;
    }
    if (sp->prod_ignored[c->prod])
        return V_A;
    verdict best = V_R;
    for (uint32_t k = sp->prod_off[c->prod]; k < sp->prod_off[c->prod + 1]; k++) {
        uint32_t st2[320], n2 = n;
        memcpy(st2, st, n * sizeof *st);
        if (GM_SEQ_IS_PAIR(sp->prod_terms[k])) {
            best = V_D; /* a fallback pair is decided on the real stack, as accept.c does */
            continue;
        }
        verdict v = plain_feed(sp->lr, st2, &n2, sp->prod_terms[k]);
        if (v == V_A)
            return V_A;
        if (v == V_D)
            best = V_D;
    }
    return best;
}

/* Whether seq[0..len) then some element of Prod set prod feeds the real stack. */
static bool real_set(const gm_spanner *sp, const gm_lr_node *top, uint32_t *seq, uint32_t len,
                     uint32_t prod)
{
    if (sp->prod_ignored[prod])
        return gm_lr_can_feed(sp->lr, top, seq, len);
    assert_true(len + 2 < 300);
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        uint32_t e = sp->prod_terms[k];
        if (GM_SEQ_IS_PAIR(e)) { /* spanner/tables.h, note [fallback pairs] */
            seq[len] = sp->pair_emit[e & ~GM_SEQ_PAIR];
            if (real_set(sp, top, seq, len + 1, sp->pair_prod[e & ~GM_SEQ_PAIR]))
                return true;
            continue;
        }
        seq[len] = e;
        if (gm_lr_can_feed(sp->lr, top, seq, len + 1))
            return true;
    }
    return false;
}

/* Whether the class is accepted on the real stack (gm_lr_can_feed, not the simulation). */
static bool real_class(const gm_spanner *sp, const gm_profile *p, const gm_class *c,
                       const gm_lr_node *top)
{
    uint32_t seq[300];
    assert_true(c->len < 280);
    memcpy(seq, p->seqs + c->seq, c->len * sizeof *seq);
    return real_set(sp, top, seq, c->len, c->prod);
}

/*
 * At the reference's state (grammars without post-lexing layers, once no
 * leading space is left to strip): the entry of the profile of the pending
 * lexer state for the stack's top states must classify every class as the
 * plain definition does (A: its tokens in the entry's set; D: in its list;
 * R: neither), and an A or R verdict must be what the real stack says.
 * Returns the number of classes checked.
 */
static size_t check_entries(ref *r, const gm_compiled *c)
{
    gm_spanner *sp = c->spanner;
    if (sp->postlex || r->strip_left || !r->st.ok)
        return 0;
    gm_error err;
    const gm_profile *p = gm_spanner_profile(sp, gm_spanner_id(sp, r->st.q, 0, 0), &err);
    assert_non_null(p);
    uint32_t anchor[GM_ANCHOR_STATES], n = 0;
    for (const gm_lr_node *x = r->st.stack; x && n < GM_ANCHOR_STATES; x = x->parent)
        n++;
    uint32_t k = n;
    for (const gm_lr_node *x = r->st.stack; k > 0; x = x->parent)
        anchor[--k] = x->state;
    const gm_accept_entry *e = gm_accept_entry_get(sp, p, anchor, n, 0);
    assert_non_null(e);
    uint32_t *bits = calloc(GM_MASK_WORDS(sp->nbits), sizeof *bits);
    uint32_t *acc = calloc(GM_MASK_WORDS(sp->nbits), sizeof *acc);
    gm_tokset_or_into(e->accepted, acc, sp->nbits);
    uint32_t di = 0;
    for (uint32_t ci = 0; ci < p->nclasses; ci++) {
        const gm_class *cl = &p->classes[ci];
        bool dep = di < e->ndep && e->dep[di] == ci;
        di += dep;
        memset(bits, 0, GM_MASK_WORDS(sp->nbits) * sizeof *bits);
        gm_tokset_or_into(cl->tokens, bits, sp->nbits);
        size_t in = 0, total = 0;
        for (size_t w = 0; w < GM_MASK_WORDS(sp->nbits); w++) {
            in += (size_t)__builtin_popcount(bits[w] & acc[w]);
            total += (size_t)__builtin_popcount(bits[w]);
        }
        verdict got = dep ? V_D : in ? V_A : V_R;
        if (!dep && in && in != total)
            fail_msg("class %u: %zu of its %zu tokens in the always-accepted set", ci, in, total);
        if (dep && in)
            fail_msg("class %u: context-dependent but %zu tokens always accepted", ci, in);
        verdict want = plain_class(sp, p, cl, anchor, n);
        if (got != want)
            fail_msg("lexer state %u, anchor top %u (%u states), class %u (|E| = %u): entry "
                     "says %c, the definition %c", r->st.q, anchor[n - 1], n, ci, cl->len,
                     "ARD"[got], "ARD"[want]);
        if (want != V_D && real_class(sp, p, cl, r->st.stack) != (want == V_A))
            fail_msg("class %u: %c on the anchored stack but the real stack says otherwise", ci,
                     "ARD"[want]);
    }
    free(bits);
    free(acc);
    return p->nclasses;
}

typedef struct combo {
    const char *grammar;     /* bundled name, inline text (when it holds ':'), or a .lark file
                                under the shared dir (loaded with Lark's conflict resolution) */
    const char *tokenizer;   /* under the shared dir */
    const char *ids;         /* corpus ids file under the shared dir, or NULL */
    bool lark;               /* inline text in Lark mode */
} combo;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static const char indent_grammar_text[] =
    "start: (_NEWLINE | stmt)*\n"
    "?stmt: simple | compound\n"
    "simple: expr _NEWLINE | \"pass\" _NEWLINE\n"
    "compound: \"if\" expr \":\" suite (\"else\" \":\" suite)?\n"
    "suite: simple | _NEWLINE _INDENT stmt+ _DEDENT\n"
    "?expr: NAME | NUMBER | \"(\" expr (\",\" expr)* \")\" | \"[\" [expr (\",\" expr)*] \"]\"\n"
    "NAME: /[a-z_][a-z0-9_]*/\n"
    "NUMBER: /[0-9]+/\n"
    "_NEWLINE: /(\\r?\\n[\\t ]*(#[^\\n]*)?)+/\n"
    "%declare _INDENT _DEDENT\n"
    "%indent _NEWLINE _INDENT _DEDENT \"(\" \")\" \"[\" \"]\"\n"
    "%ignore /[ \\t]+/\n"
    "%ignore /#[^\\n]*/\n";

static gm_compiled *compile(const combo *k, gm_vocab **v, gm_grammar **g)
{
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_shared_path(k->tokenizer), NULL, v, &err) != GM_OK)
        fail_msg("%s: %s", k->tokenizer, err.message);
    const char *text = !strcmp(k->grammar, "indent") ? indent_grammar_text : k->grammar;
    gm_grammar_options lark;
    gm_grammar_options_init_defaults(&lark);
    lark.conflicts = GM_CONFLICTS_LARK;
    gm_status st = ends_with(text, ".lark") ? gm_grammar_create_from_file(gm_test_shared_path(text), &lark, g, &err)
                   : strchr(text, ':')      ? gm_grammar_create(text, strlen(text), "inline.lark",
                                                                k->lark ? &lark : NULL, g, &err)
                                            : gm_grammar_create_bundled(k->grammar, NULL, g, &err);
    if (st != GM_OK)
        fail_msg("grammar: %s", err.message);
    gm_compiled *c;
    if (gm_compiled_create(*g, *v, NULL, &c, &err) != GM_OK)
        fail_msg("compile: %s", err.message);
    return c;
}

/*
 * Decodes corpus files (those whose name ends with `only`, when not NULL),
 * comparing at the first steps and at sampled ones.
 */
static void corpus_steps_only(const combo *k, const char *only, size_t nfiles, size_t every)
{
    gm_vocab *v;
    gm_grammar *g;
    gm_compiled *c = compile(k, &v, &g);
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ids_file *ids;
    gm_error err;
    if (gm_ids_file_load(&mem, gm_test_shared_path(k->ids), &ids, &err) != GM_OK)
        fail_msg("%s", err.message);
    size_t compared = 0;
    for (size_t f = 0, done = 0; f < ids->n && done < nfiles; f++) {
        const gm_ids_entry *e = &ids->entries[f];
        if (only && !ends_with(e->file, only))
            continue;
        done++;
        ref r;
        ref_init(&r, c);
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        for (size_t i = 0; i <= e->nids; i++) {
            if (i < 3 || i % every == 0 || i == e->nids) {
                compare_step(&r, m, e->file, i);
                compared++;
            }
            if (i == e->nids)
                break;
            if (gm_matcher_accept_token(m, e->ids[i], &err) != GM_OK)
                fail_msg("%s step %zu: true token %u rejected: %s", e->file, i, e->ids[i],
                         err.message);
            ref_append(&r, e->ids[i]);
            assert_true(r.st.ok);
        }
        assert_true(ref_can_end(&r, &r.st));
        gm_matcher_destroy(m);
        ref_free(&r);
    }
    assert_true(compared >= 10);
    gm_ids_file_destroy(ids);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static void corpus_steps(const combo *k, size_t nfiles, size_t every)
{
    corpus_steps_only(k, NULL, nfiles, every);
}

/* Random walks: at each step compare, then take a random allowed token. */
static void random_walks(const combo *k, int walks, int steps, unsigned seed)
{
    gm_vocab *v;
    gm_grammar *g;
    gm_compiled *c = compile(k, &v, &g);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint32_t nbits = gm_compiled_vocab_size(c);
    gm_error err;
    size_t entry_classes = 0;
    for (int w = 0; w < walks; w++) {
        ref r;
        ref_init(&r, c);
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        for (int i = 0; i < steps; i++) {
            char where[64];
            snprintf(where, sizeof where, "walk %d", w);
            size_t allowed = compare_step(&r, m, where, (size_t)i);
            assert_true(allowed > 0); /* never a dead end */
            entry_classes += check_entries(&r, c);
            assert_int_equal(gm_matcher_fill_mask(m, mask, words, &err), GM_OK);
            /* A random allowed non-EOS token (stop when only EOS is left). */
            uint32_t pick = UINT32_MAX, seen = 0;
            for (uint32_t t = 0; t < nbits; t++) {
                if (!((mask[t >> 5] >> (t & 31)) & 1) || (c->vocab->data->flags[t] & GM_TOK_EOS))
                    continue;
                seed = seed * 1103515245u + 12345u;
                if ((seed >> 8) % ++seen == 0)
                    pick = t;
            }
            if (pick == UINT32_MAX)
                break;
            assert_int_equal(gm_matcher_accept_token(m, pick, &err), GM_OK);
            ref_append(&r, pick);
        }
        gm_matcher_destroy(m);
        ref_free(&r);
    }
    if (!c->spanner->postlex)
        assert_true(entry_classes > 0); /* the entries were checked */
    free(mask);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static const char expr_grammar[] =
    "start: stmt*\n"
    "stmt: NAME \"=\" expr \";\" | \"if\" \"(\" expr \")\" block (\"else\" block)?\n"
    "block: \"{\" stmt* \"}\"\n"
    "?expr: expr \"+\" term | term\n"
    "?term: term \"*\" atom | atom\n"
    "?atom: NAME | NUMBER | STRING | \"(\" expr \")\" | atom \"(\" [expr (\",\" expr)*] \")\"\n"
    "NAME: /[A-Za-z_][A-Za-z0-9_]*/\n"
    "NUMBER: /[0-9]+(\\.[0-9]+)?/\n"
    "STRING: /\"([^\"\\\\\\n]|\\\\.)*\"/\n"
    "COMMENT: /\\/\\/[^\\n]*/\n"
    "%ignore /[ \\t\\n]+/\n"
    "%ignore COMMENT\n";

static void json_llama3_corpus(void **state)
{
    (void)state;
    combo k = {"json", "tokenizers/llama3/tokenizer.json", "corpus/json/ids.llama3.json", false};
    corpus_steps(&k, 3, 97);
}

static void json_sp32k_corpus(void **state)
{
    (void)state;
    combo k = {"json", "tokenizers/sp32k/tokenizer.json", "corpus/json/ids.sp32k.json", false};
    corpus_steps(&k, 3, 53);
}

static void json_qwen3_walks(void **state)
{
    (void)state;
    combo k = {"json", "tokenizers/qwen3/tokenizer.json", NULL, false};
    random_walks(&k, 3, 12, 7);
}

static void expr_llama3_walks(void **state)
{
    (void)state;
    combo k = {expr_grammar, "tokenizers/llama3/tokenizer.json", NULL, false};
    random_walks(&k, 4, 12, 11);
}

static void expr_sp32k_walks(void **state)
{
    (void)state;
    combo k = {expr_grammar, "tokenizers/sp32k/tokenizer.json", NULL, false};
    random_walks(&k, 6, 15, 3);
}

/* Decodes a program token by token, comparing with the reference at every step. */
static void program_steps(const combo *k, const char *program)
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
    for (size_t i = 0; i <= n; i++) {
        compare_step(&r, m, "program", i);
        if (i == n)
            break;
        if (gm_matcher_accept_token(m, ids[i], &err) != GM_OK)
            fail_msg("program step %zu: token %u rejected: %s", i, ids[i], err.message);
        ref_append(&r, ids[i]);
        assert_true(r.st.ok);
    }
    assert_true(gm_matcher_is_accepting(m));
    assert_true(ref_can_end(&r, &r.st));
    gm_matcher_destroy(m);
    ref_free(&r);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static const char indent_program[] =
    "if x:\n"
    "    if (a,\n"
    "  b):\n"
    "        pass\n"
    "    else:\n"
    "        y\n"
    "\n"
    "    # a comment line\n"
    "    z\n"
    "if [1, 2]:\n"
    "\tw\n"
    "pass\n";

static void indent_llama3_program(void **state)
{
    (void)state;
    combo k = {"indent", "tokenizers/llama3/tokenizer.json", NULL, false};
    program_steps(&k, indent_program);
}

static void indent_sp32k_program(void **state)
{
    (void)state;
    combo k = {"indent", "tokenizers/sp32k/tokenizer.json", NULL, false};
    program_steps(&k, indent_program);
}

/* Every ablation variant of the engine gives the same masks as the full engine. */
static void variants_agree(void **state)
{
    (void)state;
    gm_error err;
    gm_vocab *v;
    gm_grammar *g;
    combo k = {expr_grammar, "tokenizers/llama3/tokenizer.json", NULL, false};
    gm_compiled *full = compile(&k, &v, &g);
    const uint32_t variants[] = {GM_VARIANT_NO_SPLIT0, GM_VARIANT_NO_SHARING,
                                 GM_VARIANT_LISTS_ONLY, GM_VARIANT_NO_ACCEPT_CACHE,
                                 GM_VARIANT_NO_SPLIT0 | GM_VARIANT_NO_SHARING | GM_VARIANT_LISTS_ONLY |
                                     GM_VARIANT_NO_ACCEPT_CACHE};
    size_t words = gm_compiled_mask_words(full);
    uint32_t *a = calloc(words, 4), *b = calloc(words, 4);
    const char *program = "x = f(1, \"two\") * (y + 3.5);\nif (x) { z = x; } else { z = 0; }\n";
    uint32_t ids[256];
    size_t n = gm_test_greedy_tokens(v->data, program, ids, 256);
    for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
        gm_compiled *c;
        assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
        c->spanner->variant = variants[vi];
        gm_matcher *m1, *m2;
        assert_int_equal(gm_matcher_create(full, NULL, &m1, &err), GM_OK);
        assert_int_equal(gm_matcher_create(c, NULL, &m2, &err), GM_OK);
        for (size_t i = 0; i <= n; i++) {
            assert_int_equal(gm_matcher_fill_mask(m1, a, words, &err), GM_OK);
            assert_int_equal(gm_matcher_fill_mask(m2, b, words, &err), GM_OK);
            if (memcmp(a, b, words * 4))
                fail_msg("variant %u differs at step %zu", variants[vi], i);
            if (i < n) {
                assert_int_equal(gm_matcher_accept_token(m1, ids[i], &err), GM_OK);
                assert_int_equal(gm_matcher_accept_token(m2, ids[i], &err), GM_OK);
            }
        }
        gm_matcher_destroy(m1);
        gm_matcher_destroy(m2);
        gm_compiled_destroy(c);
    }
    free(a);
    free(b);
    gm_compiled_destroy(full);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

/* Random walks: uniform over allowed tokens. */
static void indent_llama3_walks(void **state)
{
    (void)state;
    combo k = {"indent", "tokenizers/llama3/tokenizer.json", NULL, false};
    random_walks(&k, 8, 14, 5);
}

static void indent_sp32k_walks(void **state)
{
    (void)state;
    combo k = {"indent", "tokenizers/sp32k/tokenizer.json", NULL, false};
    random_walks(&k, 8, 14, 9);
}

/*
 * Lark mode with what Lark's lexer does beyond maximal munch: a lookahead
 * settled by the byte after the lexeme (OP's "?" before a letter, the
 * empty string before a third quote), lazy strings and comments, the "?"
 * and "if" strings folded into OP and NAME (markers), first-match order
 * (COMMENT before _NL), and fallbacks over windows with line breaks (a
 * COMMENT that turns out to be a line end and a NAME: fallback pairs).
 */
static const char lark_lexer_grammar_text[] =
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
    combo k = {lark_lexer_grammar_text, "tokenizers/sp32k/tokenizer.json", NULL, true};
    random_walks(&k, 6, 30, 11);
    combo q = {lark_lexer_grammar_text, "tokenizers/qwen3/tokenizer.json", NULL, true};
    random_walks(&q, 4, 30, 12);
}

/*
 * SynCode's grammars as given (issue 8): their programs, compared at every
 * few steps, and random walks, with the 32K SentencePiece vocabulary.
 */
#define SYNCODE "benchmarks/syncode-grammars/"

static void syncode_go_sp32k(void **state)
{
    (void)state;
    combo k = {SYNCODE "go_grammar.lark", "tokenizers/sp32k/tokenizer.json", SYNCODE "programs/ids.sp32k.json", false};
    corpus_steps_only(&k, ".go", 5, 9);
    random_walks(&k, 3, 25, 5);
}

static void syncode_java_sp32k(void **state)
{
    (void)state;
    combo k = {SYNCODE "java_grammar.lark", "tokenizers/sp32k/tokenizer.json", SYNCODE "programs/ids.sp32k.json", false};
    corpus_steps_only(&k, ".java", 5, 9);
    random_walks(&k, 3, 25, 6);
}

static void syncode_python_sp32k(void **state)
{
    (void)state;
    combo k = {SYNCODE "python_grammar.lark", "tokenizers/sp32k/tokenizer.json",
               SYNCODE "programs/ids.sp32k.json", false};
    /* Lines start with "for", "from", "r'...'": Lark's _NL falls back (lexer backtracking). */
    corpus_steps_only(&k, ".py", 5, 3);
    random_walks(&k, 4, 25, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(variants_agree),
        cmocka_unit_test(lark_lexer_walks),
        cmocka_unit_test(indent_llama3_program),
        cmocka_unit_test(indent_sp32k_program),
        cmocka_unit_test(indent_llama3_walks),
        cmocka_unit_test(indent_sp32k_walks),
        cmocka_unit_test(json_llama3_corpus),
        cmocka_unit_test(json_sp32k_corpus),
        cmocka_unit_test(json_qwen3_walks),
        cmocka_unit_test(expr_llama3_walks),
        cmocka_unit_test(expr_sp32k_walks),
        cmocka_unit_test(syncode_go_sp32k),
        cmocka_unit_test(syncode_java_sp32k),
        cmocka_unit_test(syncode_python_sp32k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
