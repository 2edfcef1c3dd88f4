/* A token spanner per contextual lexer (runtime/ctx_spanners.h, note [contextual masks]). */
#include "runtime/ctx_spanners.h"

#include <string.h>

#include "spanner/profile.h"
#include "base/error.h"

gm_status gm_ctx_spanners_create(gm_mem *m, const gm_ctx_lexers *lexers, const gm_postlex *postlex,
                                 const gm_lr_table *lr, const gm_vocab_data *vocab,
                                 const gm_trie *trie, gm_ctx_spanners **out, gm_error *err)
{
    *out = NULL;
    for (uint32_t k = 0; k < lexers->nsets; k++) {
        const gm_lexer *lx = lexers->lexers[k];
        if (lx && lx->ndfa == lx->nstates)
            continue;
        uint32_t s = 0;
        while (s + 1 < lexers->nstates_total && lexers->set_of[s] != k)
            s++;
        return gm_error_set(err, GM_ERR_UNSUPPORTED,
                            lx ? "the contextual lexer of parser state %u backs up to a shorter "
                                 "match (Lark mode's fallback), which masks under the contextual "
                                 "lexer do not support: use the basic lexer"
                               : "the contextual lexer of parser state %u is not built",
                            s);
    }
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
    *out = cs;
    return GM_OK;
}

void gm_ctx_spanners_destroy(gm_ctx_spanners *cs)
{
    if (!cs)
        return;
    for (uint32_t k = 0; k < cs->lexers->nsets; k++)
        gm_spanner_destroy(atomic_load(&cs->sp[k]));
    gm_mem_free(cs->mem, cs->sp);
    gm_mem_free(cs->mem, cs);
}

gm_spanner *gm_ctx_spanner(gm_ctx_spanners *cs, uint32_t k, gm_error *err)
{
    gm_spanner *sp = atomic_load_explicit(&cs->sp[k], memory_order_acquire);
    if (sp)
        return sp;
    if (gm_spanner_create_contextual(cs->mem, cs->lexers->lexers[k], cs->postlex, cs->lr,
                                     cs->vocab, cs->trie, cs->lexers->set_of, k, &sp,
                                     err) != GM_OK)
        return NULL;
    gm_spanner *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&cs->sp[k], &none, sp, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        gm_spanner_destroy(sp);
        sp = none;
    }
    return sp;
}

gm_status gm_ctx_spanners_build_all(gm_ctx_spanners *cs, gm_progress_fn progress, void *ud,
                                    gm_error *err)
{
    for (uint32_t k = 0; k < cs->lexers->nsets; k++) {
        gm_spanner *sp = gm_ctx_spanner(cs, k, err);
        if (!sp)
            return err->code;
        gm_status st = gm_spanner_build_all(sp, err);
        if (st != GM_OK)
            return st;
        if (progress)
            progress(ud, k + 1, cs->lexers->nsets);
    }
    return GM_OK;
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
}

int gm_ctx_step(gm_ctx_spanners *cs, gm_spanner **spp, uint32_t *k, uint32_t *qp, uint8_t b,
                gm_ctx_feed_fn feed, void *ud, gm_error *err)
{
    gm_spanner *sp = *spp;
    uint32_t q = *qp;
    if (q >= sp->nlex) {
        /* A virtual start state (note [spanner states]): nothing was fed yet. */
        if (b == ' ') {
            *qp = q + 1 < sp->nstates ? q + 1 : sp->lex_start;
            return 1;
        }
        q = sp->lex_start;
    }
    for (;;) {
        const gm_lexer *lx = sp->lexer;
        uint32_t cls = lx->byte_class[b], dfa = sp->state_dfa[q];
        uint32_t n = lx->next[(size_t)dfa * lx->nclasses + cls];
        if (n != GM_LEX_DEAD) {
            gm_spanner_enter(sp, n, sp->state_flag[q], sp->state_width[q], b, qp);
            *spp = sp;
            return 1;
        }
        uint32_t e, r;
        if (dfa == 0 || !gm_spanner_break(sp, q, cls, &e, &r))
            return 0;
        q = r;
        if (e == GM_LEX_NONE)
            continue; /* the stack and so the lexer stay */
        uint32_t top;
        int rc = feed(ud, sp, e, &top);
        if (rc <= 0)
            return rc;
        uint32_t k2 = gm_ctx_lexer_of(cs, top);
        if (k2 == *k)
            continue;
        gm_spanner *sp2 = gm_ctx_spanner(cs, k2, err);
        if (!sp2)
            return -2;
        /* No lexer of these backs up, so r is a no-lexeme state: the same one there. */
        q = gm_spanner_id(sp2, 0, sp->state_flag[r], 0);
        sp = sp2;
        *k = k2;
    }
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
