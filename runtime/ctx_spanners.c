/* A token spanner per contextual lexer (runtime/ctx_spanners.h, note [contextual masks]). */
#include "runtime/ctx_spanners.h"

#include <string.h>

#include "spanner/profile.h"
#include "spanner/walkshare.h"
#include "base/error.h"

gm_status gm_ctx_spanners_create(gm_mem *m, gm_ctx_lexers *lexers, const gm_postlex *postlex,
                                 const gm_lr_table *lr, const gm_vocab_data *vocab,
                                 const gm_trie *trie, gm_ctx_spanners **out, gm_error *err)
{
    *out = NULL;
    gm_ctx_spanners *cs = gm_mem_calloc(m, 1, sizeof *cs);
    if (!cs)
        return gm_mem_fail(m, err, "the contextual spanners");
    cs->mem = m;
    cs->lexers = lexers;
    cs->postlex = postlex;
    cs->lr = lr;
    cs->vocab = vocab;
    cs->trie = trie;
    cs->sp = gm_mem_calloc(m, lexers->nsets ? lexers->nsets : 1, sizeof *cs->sp);
    if (!cs->sp) {
        gm_mem_free(m, cs);
        return gm_mem_fail(m, err, "the contextual spanners");
    }
    gm_status st = gm_tokpool_create(m, trie, vocab->size, &cs->pool, err);
    if (st == GM_OK)
        st = gm_walkshare_create(m, &cs->walks, err);
    if (st != GM_OK) {
        gm_ctx_spanners_destroy(cs);
        return st;
    }
    *out = cs;
    return GM_OK;
}

void gm_ctx_spanners_destroy(gm_ctx_spanners *cs)
{
    if (!cs)
        return;
    for (uint32_t k = 0; k < cs->lexers->nsets; k++)
        gm_spanner_destroy(atomic_load(&cs->sp[k]));
    gm_walkshare_destroy(cs->walks);
    gm_tokpool_destroy(cs->pool);
    gm_mem_free(cs->mem, cs->sp);
    gm_mem_free(cs->mem, cs);
}

/* gm_suffixes_fn for always-accepted entries: an error leaves the class to the walk, which
 * meets it again and reports it. */
static bool entry_suffixes(void *ud, const gm_spanner *from, const gm_profile *p, uint32_t ci,
                           uint32_t depth, uint32_t k, const gm_profile **sub,
                           const gm_spanner **to)
{
    gm_ctx_spanners *cs = ud;
    gm_error err;
    if (gm_ctx_suffixes(cs, from, p, ci, depth, k, sub, &err) != GM_OK || !*sub)
        return false;
    return (*to = gm_ctx_spanner(cs, k, &err)) != NULL; /* built by gm_ctx_suffixes */
}

gm_spanner *gm_ctx_spanner(gm_ctx_spanners *cs, uint32_t k, gm_error *err)
{
    gm_spanner *sp = atomic_load_explicit(&cs->sp[k], memory_order_acquire);
    if (sp)
        return sp;
    const gm_lexer *lx;
    if (gm_ctx_lexers_lexer(cs->lexers, k, &lx, err) != GM_OK)
        return NULL;
    if (gm_spanner_create_contextual(cs->mem, lx, cs->postlex, cs->lr,
                                     cs->vocab, cs->trie, cs->lexers->set_of, k, cs->pool,
                                     &sp, err) != GM_OK)
        return NULL;
    sp->suffixes = entry_suffixes;
    sp->suffixes_ud = cs;
    if (cs->walks && gm_walkshare_attach(cs->walks, sp, err) != GM_OK) {
        gm_spanner_destroy(sp);
        return NULL;
    }
    gm_spanner *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&cs->sp[k], &none, sp, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        gm_spanner_destroy(sp);
        sp = none;
    }
    return sp;
}

/*
 * note [eager flags]
 * A spanner's states carry the semicolon layer's flag (note [spanner
 * states]), and gm_postlex_map reaches only some of its values: bit 0 ("the
 * last terminal triggers insertion") is set only by feeding a terminal of
 * the `after` list, and a line-end terminal clears it as it sets
 * GM_POSTLEX_LINE_SEEN, so both bits are never set together; an ignored
 * lexeme keeps the flag and the lexer. So a state with bit 0 is lexed only
 * by the lexer of a parser state entered by shifting such a terminal (or
 * what the layer renames it to), and flag 3 by none. An eager compile
 * builds the profiles of the flags each lexer can have; a state outside
 * them, were it ever reached, would be built on first use as in a lazy
 * compile (masks do not depend on when a profile is built:
 * tests/test_eager_lazy). JavaScript's 142 lexers had 324,648 profiles
 * to build eagerly; these are the ones a decoding can reach.
 */
static gm_status eager_flags(gm_ctx_spanners *cs, uint32_t **out, gm_error *err)
{
    const gm_ctx_lexers *lx = cs->lexers;
    const gm_postlex *pl = cs->postlex;
    const gm_lr_table *lr = cs->lr;
    *out = gm_mem_calloc(cs->mem, lx->nsets ? lx->nsets : 1, sizeof **out);
    if (!*out)
        return gm_mem_fail(cs->mem, err, "the contextual spanners");
    for (uint32_t k = 0; k < lx->nsets; k++)
        (*out)[k] = !pl || !pl->insertion || !lr->accessing ? UINT32_MAX
                    : pl->offending ? 1u << 0 | 1u << GM_POSTLEX_LINE_SEEN : 1u << 0;
    if (!pl || !pl->insertion || !lr->accessing)
        return GM_OK;
    uint32_t nterms = pl->nterminals;
    for (uint32_t s = 1; s < lr->nstates; s++) {
        uint32_t a = lr->accessing[s];
        bool after = false;
        for (uint32_t t = 0; a < nterms && t < nterms && !after; t++)
            after = pl->after[t] && (t == a || (pl->renamed && pl->renamed[t] == a));
        if (after)
            (*out)[lx->set_of[s]] |= 1u << 1;
    }
    return GM_OK;
}

gm_status gm_ctx_spanners_build_all(gm_ctx_spanners *cs, gm_progress_fn progress, void *ud,
                                    gm_error *err)
{
    uint32_t *flags;
    gm_status st = eager_flags(cs, &flags, err);
    for (uint32_t k = 0; st == GM_OK && k < cs->lexers->nsets; k++) {
        gm_spanner *sp = gm_ctx_spanner(cs, k, err);
        if (!sp) {
            st = err->code;
            break;
        }
        st = gm_spanner_build_flags(sp, flags[k], NULL, NULL, err);
        if (st == GM_OK && progress)
            progress(ud, k + 1, cs->lexers->nsets);
    }
    gm_mem_free(cs->mem, flags);
    return st;
}

void gm_ctx_spanners_stats(gm_ctx_spanners *cs, gm_spanner_stats *st)
{
    memset(st, 0, sizeof *st);
    for (uint32_t k = 0; k < cs->lexers->nsets; k++) {
        gm_spanner *sp = atomic_load(&cs->sp[k]);
        if (!sp)
            continue;
        gm_spanner_stats one;
        gm_spanner_stats_get(sp, &one);
        st->profiles += one.profiles;
        st->classes += one.classes;
        st->class_tokens += one.class_tokens;
        st->bytes += one.bytes;
    }
    st->bytes += gm_tokpool_bytes(cs->pool);
    if (cs->walks)
        st->bytes += gm_walkshare_bytes(cs->walks);
}

/* The window after entering state n of sp from state q on byte b. */
static int window_step(const gm_spanner *sp, uint32_t q, uint32_t n, gm_ctx_window *win, uint8_t b,
                       gm_error *err)
{
    if (!gm_ctx_backtracking(sp, n)) {
        win->n = 0;
        return 1;
    }
    if (!gm_ctx_backtracking(sp, q))
        win->n = 0; /* a window starts after the longest match so far */
    if (win->n == GM_CTX_WINDOW_MAX) {
        gm_error_set(err, GM_ERR_LIMIT,
                     "a lexeme backs up over more than %d bytes under the contextual lexer",
                     GM_CTX_WINDOW_MAX);
        return -2;
    }
    win->b[win->n++] = b;
    return 1;
}

/*
 * Ends the lexeme pending in *q before a byte of class cls (nclasses: the
 * end of input): feeds its terminal, switches to the lexer of the new top,
 * and, after a fallback, steps the window again (note [contextual
 * fallbacks]). *q is then the state that takes the byte.
 */
static int ctx_break(gm_ctx_spanners *cs, gm_spanner **spp, uint32_t *k, uint32_t *q,
                     gm_ctx_window *win, uint32_t cls, gm_ctx_feed_fn feed, void *ud, gm_error *err)
{
    gm_spanner *sp = *spp;
    uint32_t e, r;
    bool fallback = gm_ctx_backtracking(sp, *q);
    if (!gm_spanner_break(sp, *q, cls, &e, &r))
        return 0;
    uint32_t flag = gm_spanner_flag(sp, r);
    gm_ctx_window again;
    again.n = win->n;
    memcpy(again.b, win->b, win->n);
    win->n = 0;
    *q = r;
    if (e != GM_LEX_NONE) {
        uint32_t top;
        int rc = feed(ud, sp, e, &top);
        if (rc <= 0)
            return rc;
        uint32_t k2 = gm_ctx_lexer_of(cs, top);
        if (k2 != *k) {
            if (!(sp = gm_ctx_spanner(cs, k2, err)))
                return -2;
            *spp = sp;
            *k = k2;
            *q = gm_spanner_id(sp, 0, flag, 0);
        }
    }
    if (!fallback)
        return 1;
    /* The window again, from the no-lexeme state of the lexer now in use. */
    *q = gm_spanner_id(*spp, 0, flag, 0);
    for (uint32_t i = 0; i < again.n; i++) {
        int rc = gm_ctx_step(cs, spp, k, q, win, again.b[i], feed, ud, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

int gm_ctx_step(gm_ctx_spanners *cs, gm_spanner **spp, uint32_t *k, uint32_t *qp,
                gm_ctx_window *win, uint8_t b, gm_ctx_feed_fn feed, void *ud, gm_error *err)
{
    gm_spanner *sp = *spp;
    if (*qp >= sp->nlex) {
        /* A virtual start state (note [spanner states]): nothing was fed yet. */
        if (b == ' ') {
            *qp = *qp + 1 < sp->nstates ? *qp + 1 : sp->lex_start;
            return 1;
        }
        *qp = sp->lex_start;
    }
    for (;;) {
        sp = *spp;
        const gm_lexer *lx = sp->lexer;
        uint32_t q = *qp, cls = lx->byte_class[b], slot = gm_spanner_lex_slot(sp, q);
        uint32_t dfa = slot >> sp->flag_bits, n = gm_lexer_move(lx, dfa, cls);
        if (n != GM_LEX_DEAD) {
            gm_spanner_enter(sp, n, slot, q, b, qp);
            return window_step(sp, q, *qp, win, b, err);
        }
        if (dfa == 0)
            return 0;
        int rc = ctx_break(cs, spp, k, qp, win, cls, feed, ud, err);
        if (rc <= 0)
            return rc;
    }
}

int gm_ctx_finish(gm_ctx_spanners *cs, gm_spanner **spp, uint32_t *k, uint32_t *qp,
                  gm_ctx_window *win, gm_ctx_feed_fn feed, void *ud, gm_error *err)
{
    while (gm_spanner_pending(*spp, *qp)) {
        int rc = ctx_break(cs, spp, k, qp, win, (*spp)->lexer->nclasses, feed, ud, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

static const gm_suffixes *find_suffixes(const gm_suffixes *s, uint32_t depth, uint32_t k)
{
    for (; s; s = s->next)
        if (s->depth == depth && s->lexer == k)
            return s;
    return NULL;
}

gm_status gm_ctx_suffixes(gm_ctx_spanners *cs, const gm_spanner *from, const gm_profile *p,
                          uint32_t ci, uint32_t depth, uint32_t k, const gm_profile **out,
                          gm_error *err)
{
    const gm_class *c = &p->classes[ci];
    /* The list is the class's cache: entries are only ever pushed, with a compare-and-swap. */
    _Atomic(gm_suffixes *) *head = (_Atomic(gm_suffixes *) *)&c->suffixes;
    gm_suffixes *first = atomic_load_explicit(head, memory_order_acquire);
    const gm_suffixes *found = find_suffixes(first, depth, k);
    if (found) {
        *out = found->p;
        return GM_OK;
    }
    gm_spanner *to = gm_ctx_spanner(cs, k, err);
    if (!to)
        return err->code;
    gm_profile *np;
    uint32_t count = 1;
    while (ci + count < p->nclasses && p->classes[ci + count].shared > depth)
        count++;
    gm_status st = gm_profile_build_suffixes(from, p, ci, count, depth, to, &np, err);
    if (st != GM_OK)
        return st;
    gm_suffixes *s = gm_mem_calloc(cs->mem, 1, sizeof *s);
    if (!s) {
        gm_profile_destroy(cs->mem, np);
        return gm_mem_fail(cs->mem, err, "a contextual suffix profile");
    }
    s->depth = depth;
    s->lexer = k;
    s->p = np;
    for (;;) {
        s->next = first;
        if (atomic_compare_exchange_weak_explicit(head, &first, s, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
        if ((found = find_suffixes(first, depth, k))) {
            /* Another thread built it first. */
            gm_profile_destroy(cs->mem, np);
            gm_mem_free(cs->mem, s);
            *out = found->p;
            return GM_OK;
        }
    }
    *out = np;
    return GM_OK;
}

int gm_ctx_fallback(gm_ctx_spanners *cs, gm_spanner **spp, uint32_t *k, uint32_t *qp,
                    gm_ctx_window *win, gm_ctx_feed_fn feed, void *ud, gm_error *err)
{
    return ctx_break(cs, spp, k, qp, win, GM_LEX_STOP, feed, ud, err);
}
