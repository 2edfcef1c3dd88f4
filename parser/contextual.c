/* Lark's contextual lexer: one lexer per set of terminals (parser/contextual.h). */
#include "parser/contextual.h"

#include <string.h>

#include "base/error.h"
#include "base/hash.h"

/* Whether state s has an action on terminal x (or lexes it anyway). */
static bool own_term(const gm_cfg *g, const gm_lr_table *t, uint32_t s, uint32_t x)
{
    const gm_postlex *pl = &g->postlex;
    /* a terminal the layer renames after a line end, where its new name has an action */
    if (pl->offending && pl->renamed[x] != GM_POSTLEX_NONE &&
        GM_LR_KIND(gm_lr_action_of(t, s, pl->renamed[x])) != GM_LR_ERROR)
        return true;
    return GM_LR_KIND(gm_lr_action_of(t, s, x)) != GM_LR_ERROR || g->terminals[x].ignored ||
           (pl->indentation && x == pl->newline) ||
           (pl->insertion && x < pl->nterminals && pl->at[x]);
}

/*
 * A set whose terminals that reach the parser are all `glued` (the
 * %insert directive's list, lark_bnf.c) loses the %ignore'd and line-end
 * ones: nothing may come between the previous terminal and a glued one.
 */
static void unglue(const gm_cfg *g, uint64_t *row)
{
    const gm_postlex *pl = &g->postlex;
    bool any = false;
    for (uint32_t x = 0; x < g->nterminals; x++) {
        if (!((row[x >> 6] >> (x & 63)) & 1))
            continue;
        bool aside = g->terminals[x].ignored || (x < pl->nterminals && pl->at[x]);
        if (!aside && !pl->glued[x])
            return;
        any |= !aside;
    }
    if (!any)
        return;
    for (uint32_t x = 0; x < g->nterminals; x++)
        if (g->terminals[x].ignored || (x < pl->nterminals && pl->at[x]))
            row[x >> 6] &= ~((uint64_t)1 << (x & 63));
}

/*
 * note [offending-token insertion] (parser/postlex.h): a state that takes
 * the inserted terminal must also lex what may follow it, or the token that
 * triggers the insertion would not be lexed at all (`a` then a line
 * starting with `const`). follow gets the terminals of every state right
 * after the inserted terminal is shifted, less the `nolex` ones (a state
 * where JavaScript's "/" is division must not lex a regular expression).
 */
static void insert_follow(const gm_cfg *g, const gm_lr_table *t, uint64_t *follow)
{
    const gm_postlex *pl = &g->postlex;
    for (uint32_t s = 0; s < t->nstates; s++) {
        gm_lr_action a = gm_lr_action_of(t, s, pl->insert);
        if (GM_LR_KIND(a) != GM_LR_SHIFT)
            continue;
        uint32_t u = GM_LR_ARG(a);
        for (uint32_t x = 0; x < g->nterminals; x++)
            if (own_term(g, t, u, x) && !(pl->nolex && pl->nolex[x]))
                follow[x >> 6] |= (uint64_t)1 << (x & 63);
    }
}

/*
 * note [keywords are words]
 * A state that takes a keyword but no name (after `for (x` JavaScript
 * takes `of` and `in`, not a name) would lex `ofx` as `of` then `x`,
 * where the language's own scanner, which does not know the parser's
 * state, reads one name `ofx` and the parser refuses it. So outside Lark
 * mode a set that holds a literal terminal also lexes the pattern terminal
 * that matches the literal's whole text (NAME for `of`; the literal still
 * wins on its own text by the lexer's literal-over-regex rule): maximal
 * munch then takes `ofx` whole, and a name where none may stand is refused.
 * words[x] is that pattern terminal of literal x, or GM_LEX_NONE; it is
 * found by lexing each literal's text with a lexer of the grammar's
 * non-ignored pattern terminals alone.
 */
static gm_status literal_words(gm_mem *m, const gm_cfg *g, const gm_limits *limits, uint32_t *words,
                               gm_error *err)
{
    uint32_t n = g->nterminals;
    for (uint32_t x = 0; x < n; x++)
        words[x] = GM_LEX_NONE;
    gm_terminal_spec *specs = gm_mem_reallocarray(m, NULL, n ? n : 1, sizeof *specs);
    if (!specs)
        return gm_mem_fail(m, err, "the contextual lexer");
    memcpy(specs, g->terminals, n * sizeof *specs);
    bool any = false;
    for (uint32_t x = 0; x < n; x++)
        if (specs[x].is_literal || specs[x].ignored || specs[x].line_end) {
            specs[x].pattern = NULL;
            specs[x].pattern_len = 0;
        } else if (specs[x].pattern) {
            any = true;
        }
    gm_lexer *lx = NULL;
    gm_status st = any ? gm_lexer_build_grammar(m, specs, n, false, limits, NULL, NULL, &lx, err) : GM_OK;
    gm_mem_free(m, specs);
    if (st != GM_OK || !lx)
        return st;
    for (uint32_t x = 0; x < n; x++) {
        const gm_terminal_spec *t = &g->terminals[x];
        if (!t->is_literal || t->ignored || !t->pattern || t->pattern_len == 0)
            continue;
        gm_lexeme lexeme;
        gm_error ignore;
        /* a literal no pattern lexes (`=>`) is an error here, and has no word */
        if (gm_lexer_next(lx, (const uint8_t *)t->pattern, t->pattern_len, 0, &lexeme, NULL,
                          &ignore) == GM_OK &&
            lexeme.terminal != GM_LEX_NONE && lexeme.end == t->pattern_len)
            words[x] = lexeme.terminal;
    }
    gm_lexer_destroy(lx);
    return GM_OK;
}

gm_status gm_ctx_lexers_create(gm_mem *m, const gm_cfg *g, const gm_lr_table *t, bool lark,
                               const gm_limits *limits, gm_ctx_lexers **out, gm_error *err)
{
    *out = NULL;
    gm_ctx_lexers *c = gm_mem_calloc(m, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(m, err, "the contextual lexer");
    c->mem = m;
    c->g = g;
    c->lark = lark;
    gm_limits_init_defaults(&c->limits);
    if (limits)
        c->limits = *limits;
    uint32_t n = g->nterminals;
    c->words = (n + 63) / 64 ? (n + 63) / 64 : 1;
    gm_intern sets;
    gm_intern_init(&sets, m);
    uint64_t *row = gm_mem_calloc(m, c->words, sizeof *row);
    uint64_t *follow = gm_mem_calloc(m, c->words, sizeof *follow);
    uint32_t *words = gm_mem_calloc(m, n ? n : 1, sizeof *words);
    c->nstates_total = t->nstates;
    c->set_of = gm_mem_calloc(m, t->nstates ? t->nstates : 1, sizeof *c->set_of);
    if (!row || !follow || !words || !c->set_of) {
        gm_mem_free(m, words);
        gm_mem_free(m, follow);
        goto nomem;
    }
    if (!lark) {
        gm_status st = literal_words(m, g, &c->limits, words, err);
        if (st != GM_OK) {
            gm_mem_free(m, words);
            gm_mem_free(m, follow);
            gm_intern_free(&sets);
            gm_mem_free(m, row);
            gm_ctx_lexers_destroy(c);
            return st;
        }
    }
    const gm_postlex *pl = &g->postlex;
    if (pl->offending)
        insert_follow(g, t, follow);
    for (uint32_t s = 0; s < t->nstates; s++) {
        memset(row, 0, c->words * sizeof *row);
        for (uint32_t x = 0; x < n; x++)
            if (own_term(g, t, s, x))
                row[x >> 6] |= (uint64_t)1 << (x & 63);
        if (pl->offending && GM_LR_KIND(gm_lr_action_of(t, s, pl->insert)) != GM_LR_ERROR)
            for (uint32_t w = 0; w < c->words; w++)
                row[w] |= follow[w];
        if (!lark) /* note [keywords are words] */
            for (uint32_t x = 0; x < n; x++) {
                uint32_t w = words[x];
                if (((row[x >> 6] >> (x & 63)) & 1) && w != GM_LEX_NONE &&
                    g->terminals[x].priority >= g->terminals[w].priority)
                    row[w >> 6] |= (uint64_t)1 << (w & 63);
            }
        if (pl->glued)
            unglue(g, row);
        if (gm_intern_put(&sets, row, c->words * sizeof *row, &c->set_of[s], NULL)) {
            gm_mem_free(m, words);
            gm_mem_free(m, follow);
            goto nomem;
        }
    }
    gm_mem_free(m, words);
    gm_mem_free(m, follow);
    c->nsets = sets.count;
    c->sets = gm_mem_calloc(m, (size_t)c->nsets * c->words + 1, sizeof *c->sets);
    c->nstates_of = gm_mem_calloc(m, c->nsets + 1, sizeof *c->nstates_of);
    c->lexers = gm_mem_calloc(m, c->nsets + 1, sizeof *c->lexers);
    if (!c->sets || !c->nstates_of || !c->lexers)
        goto nomem;
    for (uint32_t k = 0; k < c->nsets; k++) {
        size_t len;
        memcpy(c->sets + (size_t)k * c->words, gm_intern_key(&sets, k, &len), c->words * sizeof *row);
    }
    for (uint32_t s = 0; s < t->nstates; s++)
        c->nstates_of[c->set_of[s]]++;
    gm_intern_free(&sets);
    gm_mem_free(m, row);
    *out = c;
    return GM_OK;
nomem:
    gm_intern_free(&sets);
    gm_mem_free(m, row);
    gm_ctx_lexers_destroy(c);
    return gm_mem_fail(m, err, "the contextual lexer");
}

void gm_ctx_lexers_destroy(gm_ctx_lexers *c)
{
    if (!c)
        return;
    gm_mem *m = c->mem;
    for (uint32_t k = 0; c->lexers && k < c->nsets; k++)
        gm_lexer_destroy(atomic_load(&c->lexers[k]));
    gm_mem_free(m, c->lexers);
    gm_mem_free(m, c->sets);
    gm_mem_free(m, c->set_of);
    gm_mem_free(m, c->nstates_of);
    gm_mem_free(m, c);
}

gm_status gm_ctx_lexers_lexer(gm_ctx_lexers *c, uint32_t k, const gm_lexer **out, gm_error *err)
{
    gm_lexer *lx = atomic_load_explicit(&c->lexers[k], memory_order_acquire);
    if (lx) {
        *out = lx;
        return GM_OK;
    }
    const gm_cfg *g = c->g;
    if (!g) /* loaded from a compiled file, which holds every lexer */
        return gm_error_set(err, GM_ERR_STATE, "contextual lexer %u is missing", k);
    gm_terminal_spec *specs = gm_mem_reallocarray(c->mem, NULL, g->nterminals ? g->nterminals : 1,
                                                  sizeof *specs);
    if (!specs)
        return gm_mem_fail(c->mem, err, "the contextual lexer");
    /* The same terminal ids; those outside the set have no pattern here. */
    memcpy(specs, g->terminals, g->nterminals * sizeof *specs);
    for (uint32_t x = 0; x < g->nterminals; x++)
        if (!gm_ctx_lexers_has(c, k, x)) {
            specs[x].pattern = NULL;
            specs[x].pattern_len = 0;
        }
    gm_status st = gm_lexer_build_grammar(c->mem, specs, g->nterminals, c->lark, &c->limits, NULL,
                                          NULL, &lx, err);
    gm_mem_free(c->mem, specs);
    /* A grammar has many of these: their memory is worth a load per move (note [transition rows]). */
    if (st == GM_OK && (st = gm_lexer_patch_rows(lx, err)) != GM_OK)
        gm_lexer_destroy(lx);
    if (st != GM_OK)
        return st;
    gm_lexer *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&c->lexers[k], &none, lx, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        /* Another thread built it first. */
        gm_lexer_destroy(lx);
        lx = none;
    }
    *out = lx;
    return GM_OK;
}

/* ---- where the contextual lexer differs from the basic one ---- */

enum { WITNESS_MAX = 24 };

/* A byte of class c, printable when the class has one. */
static uint8_t class_byte(const gm_lexer *lx, uint32_t c)
{
    int best = -1;
    for (int b = 0; b < 256; b++) {
        if (lx->byte_class[b] != c)
            continue;
        if (b >= 0x21 && b < 0x7f)
            return (uint8_t)b;
        if (best < 0 || b == ' ')
            best = b;
    }
    return (uint8_t)(best < 0 ? 0 : best);
}

/* The first lexemes of the two lexers on text agree (terminal and length). */
static bool same_first(const gm_lexer *a, const gm_lexer *b, const uint8_t *text, size_t n,
                       gm_lexeme *la, gm_lexeme *lb)
{
    gm_error e;
    bool ea = gm_lexer_next(a, text, n, 0, la, NULL, &e) != GM_OK;
    bool eb = gm_lexer_next(b, text, n, 0, lb, NULL, &e) != GM_OK;
    if (ea || eb) {
        la->terminal = ea ? GM_LEX_DEAD : la->terminal;
        lb->terminal = eb ? GM_LEX_DEAD : lb->terminal;
        return ea == eb;
    }
    return la->terminal == lb->terminal && la->end == lb->end;
}

/*
 * A shortest input on which lexer k finds a first lexeme that is not the
 * basic lexer's (another terminal, another length, or an error there): a
 * breadth-first search over pairs of DFA states, stopped where both lexers
 * end their lexemes alike; where they act differently on a byte, the input
 * is completed to a lexeme of the lexer that goes on and both are run on it
 * to confirm. Up to WITNESS_MAX bytes.
 */
gm_status gm_ctx_lexers_witness(gm_ctx_lexers *c, const gm_lexer *basic, uint32_t k, uint8_t *out,
                                size_t *n, gm_lexeme *lb, gm_lexeme *lk, bool *found, gm_error *err)
{
    *found = false;
    const gm_lexer *lx;
    gm_status st = gm_ctx_lexers_lexer(c, k, &lx, err);
    if (st != GM_OK)
        return st;
    gm_mem *m = c->mem;
    /* Pairs of states and the path to them (parent pointers). */
    typedef struct node {
        uint32_t qb, qk, parent;
        uint8_t byte;
        uint8_t depth;
    } node;
    size_t cap = 4096, count = 0;
    node *q = gm_mem_reallocarray(m, NULL, cap, sizeof *q);
    gm_intern seen;
    gm_intern_init(&seen, m);
    if (!q)
        return gm_mem_fail(m, err, "the lexer comparison");
    q[count++] = (node){0, 0, UINT32_MAX, 0, 0};
    uint32_t pair[2] = {0, 0}, id;
    if (gm_intern_put(&seen, pair, sizeof pair, &id, NULL))
        goto nomem;
    uint8_t text[WITNESS_MAX + 2];
    for (size_t head = 0; head < count && !*found; head++) {
        node nd = q[head];
        if (nd.depth >= WITNESS_MAX)
            continue;
        /* The path so far. */
        size_t len = nd.depth;
        for (uint32_t i = (uint32_t)head; q[i].parent != UINT32_MAX; i = q[i].parent)
            text[q[i].depth - 1] = q[i].byte;
        for (uint32_t cb = 0; cb < basic->nclasses && !*found; cb++) {
            uint8_t b = class_byte(basic, cb);
            uint32_t ck = lx->byte_class[b];
            uint32_t nb = gm_lexer_move(basic, gm_lexer_dfa_state(basic, nd.qb), cb);
            uint32_t nk = gm_lexer_move(lx, gm_lexer_dfa_state(lx, nd.qk), ck);
            nb = gm_lexer_dfa_state(basic, nb);
            nk = gm_lexer_dfa_state(lx, nk);
            bool gb = nb != GM_LEX_DEAD, gk = nk != GM_LEX_DEAD;
            if (gb && gk) {
                pair[0] = nb;
                pair[1] = nk;
                int added;
                if (gm_intern_put(&seen, pair, sizeof pair, &id, &added))
                    goto nomem;
                if (!added)
                    continue;
                if (count == cap) {
                    node *g = gm_mem_reallocarray(m, q, cap * 2, sizeof *q);
                    if (!g)
                        goto nomem;
                    q = g;
                    cap *= 2;
                }
                q[count++] = (node){nb, nk, (uint32_t)head, b, (uint8_t)(nd.depth + 1)};
                continue;
            }
            if (!gb && !gk && nd.depth > 0 &&
                gm_lexer_accept(basic, gm_lexer_dfa_state(basic, nd.qb), cb) ==
                    gm_lexer_accept(lx, gm_lexer_dfa_state(lx, nd.qk), ck))
                continue; /* both end the same lexeme here */
            /* They act differently on b: complete the input along the lexer that goes on. */
            text[len] = b;
            size_t tl = len + 1;
            const gm_lexer *on = gb ? basic : gk ? lx : NULL;
            uint32_t s = gb ? nb : gk ? nk : GM_LEX_DEAD;
            while (on && tl < WITNESS_MAX && gm_lexer_accept(on, s, on->nclasses) == GM_LEX_NONE) {
                uint32_t next = GM_LEX_DEAD, via = 0;
                for (uint32_t cc = 0; cc < on->nclasses && next == GM_LEX_DEAD; cc++) {
                    next = gm_lexer_dfa_state(on, gm_lexer_move(on, s, cc));
                    via = cc;
                }
                if (next == GM_LEX_DEAD)
                    break;
                text[tl++] = class_byte(on, via);
                s = next;
            }
            /* Only where the contextual lexer finds a lexeme: where it finds none the basic
               lexer's is one the state does not accept, and both fail. */
            if (!same_first(basic, lx, text, tl, lb, lk) && lk->terminal != GM_LEX_DEAD) {
                memcpy(out, text, tl);
                *n = tl;
                *found = true;
            }
        }
    }
    gm_intern_free(&seen);
    gm_mem_free(m, q);
    return GM_OK;
nomem:
    gm_intern_free(&seen);
    gm_mem_free(m, q);
    return gm_mem_fail(m, err, "the lexer comparison");
}
