/*
 * The spanner object: Prod sets and first-byte split filters computed at
 * creation, profiles and filter bitsets built lazily and published with an
 * atomic compare-and-swap (no locks; a losing duplicate is freed).
 */
#include "spanner/spanner.h"

#include <stdlib.h>
#include <string.h>

#include "spanner/accept.h"
#include "spanner/profile.h"
#include "spanner/walkshare.h"
#include "base/error.h"
#include "base/hash.h"

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The Prod set of each spanner state as the parser sees it: the terminals
 * the pending lexeme can still become, mapped through the post-lexing
 * layer, plus whether it can end as nothing (ignored). Interned: key is
 * [ignored, sorted terminals...].
 */
/* Adds the elements of prod set p (interned in rows as [ignored, elements...]) to key. */
static uint32_t add_prod(const gm_intern *rows, uint32_t p, uint32_t *key, uint32_t n)
{
    size_t len;
    const uint32_t *k = gm_intern_key(rows, p, &len);
    len /= sizeof(uint32_t);
    key[0] |= k[0];
    for (size_t i = 1; i < len; i++)
        key[n++] = k[i];
    return n;
}

static gm_status intern_prods(gm_spanner *sp, gm_error *err)
{
    const gm_lexer *lx = sp->lexer;
    gm_intern rows, pairs;
    gm_intern_init(&rows, sp->mem);
    gm_intern_init(&pairs, sp->mem);
    /* A set holds terminals, a pending line end, and at most one pair or one other set. */
    size_t cap = 2 * ((size_t)lx->nterminals + 2) + 2;
    uint32_t *key = gm_mem_calloc(sp->mem, cap, sizeof *key);
    sp->slot_prod = gm_mem_calloc(sp->mem, sp->nslots, sizeof(uint32_t));
    if (!key || !sp->slot_prod)
        goto nomem;
    /* Prod(q) does not depend on the width: one per slot, in the order of slots (a
     * window's state, whose set a backtracking state's includes, has a smaller one). */
    for (uint32_t slot = 0; slot < sp->nslots; slot++) {
        uint32_t q = gm_spanner_slot_state(sp, slot);
        uint32_t dfa = q < sp->nlex ? gm_spanner_dfa(sp, q) : 0;
        uint32_t flag = q < sp->nlex ? gm_spanner_flag(sp, q) : 0;
        const uint64_t *row = lx->prod + (size_t)dfa * lx->prod_words;
        uint32_t n = 1;
        key[0] = 0;
        /* The terminals of the row in increasing order, word by word (most rows hold few). */
        for (uint32_t w = 0; w < lx->prod_words; w++)
            for (uint64_t x = row[w]; x; x &= x - 1) {
                uint32_t t = w * 64 + (uint32_t)__builtin_ctzll(x);
                uint32_t f = flag, e = gm_spanner_map(sp, t, &f, 0);
                if (e == GM_LEX_NONE)
                    key[0] = 1;
                else
                    key[n++] = e & GM_SEQ_LINE ? GM_SEQ_PENDING_LINE : e;
            }
        uint32_t emit, resume;
        if (q < sp->nlex && dfa >= lx->ndfa && gm_spanner_break(sp, q, GM_LEX_STOP, &emit, &resume)) {
            /* note [fallback pairs]: the window's state comes first (relex < the state) */
            if (emit == GM_LEX_NONE) {
                n = add_prod(&rows, gm_spanner_prod(sp, resume), key, n);
            } else {
                uint32_t pk[2] = {emit, gm_spanner_prod(sp, resume)}, id;
                if (gm_intern_put(&pairs, pk, sizeof pk, &id, NULL))
                    goto nomem;
                key[n++] = GM_SEQ_PAIR | id;
            }
        }
        qsort(key + 1, n - 1, sizeof *key, compare_u32);
        uint32_t k = 1;
        for (uint32_t i = 1; i < n; i++)
            if (k == 1 || key[i] != key[k - 1])
                key[k++] = key[i];
        uint32_t id;
        if (gm_intern_put(&rows, key, (size_t)k * sizeof *key, &id, NULL))
            goto nomem;
        sp->slot_prod[slot] = id;
    }
    sp->nprods = rows.count;
    sp->prod_off = gm_mem_calloc(sp->mem, (size_t)sp->nprods + 1, sizeof(uint32_t));
    sp->prod_ignored = gm_mem_calloc(sp->mem, sp->nprods ? sp->nprods : 1, 1);
    size_t total = rows.data_len / sizeof(uint32_t);
    sp->prod_terms = gm_mem_calloc(sp->mem, total ? total : 1, sizeof(uint32_t));
    sp->npairs = pairs.count;
    sp->pair_emit = gm_mem_calloc(sp->mem, sp->npairs ? sp->npairs : 1, sizeof(uint32_t));
    sp->pair_prod = gm_mem_calloc(sp->mem, sp->npairs ? sp->npairs : 1, sizeof(uint32_t));
    if (!sp->prod_off || !sp->prod_ignored || !sp->prod_terms || !sp->pair_emit || !sp->pair_prod)
        goto nomem;
    uint32_t off = 0;
    for (uint32_t id = 0; id < sp->nprods; id++) {
        size_t len;
        const uint32_t *k = gm_intern_key(&rows, id, &len);
        len /= sizeof(uint32_t);
        sp->prod_ignored[id] = (uint8_t)k[0];
        sp->prod_off[id] = off;
        memcpy(sp->prod_terms + off, k + 1, (len - 1) * sizeof(uint32_t));
        off += (uint32_t)(len - 1);
    }
    sp->prod_off[sp->nprods] = off;
    for (uint32_t id = 0; id < sp->npairs; id++) {
        size_t len;
        const uint32_t *k = gm_intern_key(&pairs, id, &len);
        sp->pair_emit[id] = k[0];
        sp->pair_prod[id] = k[1];
    }
    gm_mem_free(sp->mem, key);
    gm_intern_free(&rows);
    gm_intern_free(&pairs);
    return GM_OK;
nomem:
    gm_mem_free(sp->mem, key);
    gm_intern_free(&rows);
    gm_intern_free(&pairs);
    return gm_mem_fail(sp->mem, err, "the token spanner");
}

/* Numbers the spanner states (note [spanner states]). */
static gm_status layout_states(gm_spanner *sp, uint32_t strip_leading, gm_error *err)
{
    const gm_lexer *lx = sp->lexer;
    const gm_postlex *pl = sp->postlex;
    /* two flag bits with note [offending-token insertion] (postlex.h), else one */
    sp->nflags = pl && pl->insertion ? (pl->offending ? 4 : 2) : 1;
    sp->flag_bits = sp->nflags == 4 ? 2 : sp->nflags == 2;
    uint64_t nplain = (uint64_t)lx->nstates * sp->nflags, blocks = 0;
    if (nplain > UINT32_MAX / 4)
        return gm_error_set(err, GM_ERR_LIMIT, "too many lexer states for the token spanner");
    sp->nplain = (uint32_t)nplain;
    if (sp->nflags > 1 || (pl && pl->indentation)) {
        sp->width_block = gm_mem_calloc(sp->mem, sp->nplain, sizeof *sp->width_block);
        if (!sp->width_block)
            return gm_mem_fail(sp->mem, err, "the token spanner");
        for (uint32_t i = 0; i < sp->nplain; i++) {
            bool widths = pl->indentation && gm_lexer_can_produce(lx, i >> sp->flag_bits,
                                                                  pl->newline);
            sp->width_block[i] = widths ? (uint32_t)blocks++ : GM_SPANNER_NONE;
        }
        sp->block_slot = gm_mem_calloc(sp->mem, blocks ? blocks : 1, sizeof *sp->block_slot);
        if (!sp->block_slot)
            return gm_mem_fail(sp->mem, err, "the token spanner");
        for (uint32_t i = 0; i < sp->nplain; i++)
            if (sp->width_block[i] != GM_SPANNER_NONE)
                sp->block_slot[sp->width_block[i]] = i;
    }
    sp->plain = sp->nflags == 1 && blocks == 0;
    uint64_t n = nplain + (blocks << GM_SPANNER_BLOCK_BITS);
    if (n + strip_leading > UINT32_MAX / 2)
        return gm_error_set(err, GM_ERR_LIMIT, "too many lexer states for the token spanner");
    sp->nlex = (uint32_t)n;
    sp->nstates = sp->nlex + strip_leading;
    sp->lex_start = 0;
    sp->start = strip_leading ? sp->nlex : 0;
    if (pl && pl->indentation && pl->line_start) {
        /* Lexing starts after a virtual line end (postlex.h, note [indentation]). */
        uint32_t after = gm_lexer_move(lx, 0, lx->byte_class['\n']);
        if (after == GM_LEX_DEAD || !gm_lexer_can_produce(lx, after, pl->newline))
            return gm_error_set(err, GM_ERR_GRAMMAR,
                                "the indentation layer's line-end terminal does not start with a "
                                "line break");
        gm_spanner_enter(sp, after, 0, 0, '\n', &sp->lex_start);
        if (!strip_leading)
            sp->start = sp->lex_start;
    }
    return GM_OK;
}

static gm_status intern_split0(gm_spanner *sp, gm_error *err)
{
    const gm_lexer *lx = sp->lexer;
    gm_intern sets;
    gm_intern_init(&sets, sp->mem);
    sp->state_split0 = gm_mem_calloc(sp->mem, sp->nslots, sizeof(uint32_t));
    if (!sp->state_split0)
        goto nomem;
    /* The filter depends on the DFA state only: the slots of its flags are consecutive
     * (note [spanner states]), so the one of flag 0 serves the others. */
    for (uint32_t slot = 0; slot < sp->nslots; slot++) {
        uint32_t q = gm_spanner_slot_state(sp, slot);
        sp->state_split0[slot] = GM_SPANNER_NONE;
        if (!gm_spanner_pending(sp, q))
            continue;
        uint32_t dfa = gm_spanner_dfa(sp, q);
        if (lx->accept[dfa] == GM_LEX_NONE)
            continue;
        if (slot < sp->nplain && (slot & (sp->nflags - 1)) != 0) {
            sp->state_split0[slot] = sp->state_split0[slot & ~(sp->nflags - 1)];
            continue;
        }
        /* A class after which the lexeme is no terminal (lexer.h, cond) stops no token;
         * under the contextual lexer the next lexeme's lexer may be another one. */
        uint8_t stops[256] = {0}, bytes[32] = {0};
        int any = 0;
        for (uint32_t c = 0; c < lx->nclasses; c++)
            stops[c] = gm_lexer_move(lx, dfa, c) == GM_LEX_DEAD &&
                       (sp->contextual || gm_lexer_move(lx, 0, c) != GM_LEX_DEAD) &&
                       gm_lexer_accept(lx, dfa, c) != GM_LEX_NONE;
        for (unsigned b = 0; b < 256; b++)
            if (stops[lx->byte_class[b]]) {
                bytes[b >> 3] |= (uint8_t)(1u << (b & 7));
                any = 1;
            }
        if (!any)
            continue;
        uint32_t id;
        if (gm_intern_put(&sets, bytes, sizeof bytes, &id, NULL))
            goto nomem;
        sp->state_split0[slot] = id;
    }
    sp->nsplit0 = sets.count;
    sp->split0_filter = gm_mem_calloc(sp->mem, sp->nsplit0 ? sp->nsplit0 : 1,
                                      sizeof *sp->split0_filter);
    if (!sp->split0_filter)
        goto nomem;
    for (uint32_t id = 0; id < sp->nsplit0; id++) {
        size_t len;
        if (!(sp->split0_filter[id] = gm_tokpool_filter(sp->pool, gm_intern_key(&sets, id, &len),
                                                     err))) {
            gm_intern_free(&sets);
            return err->code;
        }
    }
    gm_intern_free(&sets);
    return GM_OK;
nomem:
    gm_intern_free(&sets);
    return gm_mem_fail(sp->mem, err, "the token spanner");
}

static gm_status create(gm_mem *m, const gm_lexer *lexer, const gm_postlex *postlex,
                        const gm_lr_table *lr, const gm_vocab_data *vocab, const gm_trie *trie,
                        const uint32_t *lexer_of, uint32_t lexer_id, gm_tokpool *pool,
                        gm_spanner **out, gm_error *err)
{
    bool contextual = lexer_of != NULL;
    *out = NULL;
    gm_spanner *sp = gm_mem_calloc(m, 1, sizeof *sp);
    if (!sp)
        return gm_mem_fail(m, err, "the token spanner");
    sp->mem = m;
    sp->contextual = contextual;
    sp->lexer_of = lexer_of;
    sp->lexer_id = lexer_id;
    sp->lexer = lexer;
    sp->lr = lr;
    sp->vocab = vocab;
    sp->trie = trie;
    sp->postlex = postlex && (postlex->insertion || postlex->indentation) ? postlex : NULL;
    sp->nbits = vocab->size;
    sp->pool = pool;
    gm_status st = GM_OK;
    if (!pool) {
        st = gm_tokpool_create(m, trie, vocab->size, &sp->pool, err);
        sp->own_pool = st == GM_OK;
    }
    if (st == GM_OK)
        st = layout_states(sp, vocab->strip_leading, err);
    if (st != GM_OK) {
        gm_spanner_destroy(sp);
        return st;
    }
    sp->nslots = sp->nplain + (sp->nstates - sp->nlex);
    st = intern_prods(sp, err);
    if (st == GM_OK)
        st = intern_split0(sp, err);
    if (st == GM_OK) {
        sp->profiles = gm_mem_calloc(m, sp->nslots, sizeof *sp->profiles);
        sp->accept_rows = gm_mem_calloc(m, sp->nslots, sizeof *sp->accept_rows);
        if (!sp->profiles || !sp->accept_rows)
            st = gm_mem_fail(m, err, "the token spanner");
        else
            for (uint32_t i = 0; i < sp->nslots; i++) {
                atomic_init(&sp->profiles[i], NULL);
                atomic_init(&sp->accept_rows[i], NULL);
            }
    }
    if (st != GM_OK) {
        gm_spanner_destroy(sp);
        return st;
    }
    *out = sp;
    return GM_OK;
}

gm_status gm_spanner_create(gm_mem *m, const gm_lexer *lexer, const gm_postlex *postlex,
                            const gm_lr_table *lr, const gm_vocab_data *vocab,
                            const gm_trie *trie, gm_spanner **out, gm_error *err)
{
    return create(m, lexer, postlex, lr, vocab, trie, NULL, 0, NULL, out, err);
}

gm_status gm_spanner_create_contextual(gm_mem *m, const gm_lexer *lexer, const gm_postlex *postlex,
                                       const gm_lr_table *lr, const gm_vocab_data *vocab,
                                       const gm_trie *trie, const uint32_t *lexer_of,
                                       uint32_t lexer_id, gm_tokpool *pool, gm_spanner **out,
                                       gm_error *err)
{
    return create(m, lexer, postlex, lr, vocab, trie, lexer_of, lexer_id, pool, out, err);
}

void gm_spanner_destroy(gm_spanner *sp)
{
    if (!sp)
        return;
    gm_mem *m = sp->mem;
    gm_accept_free_all(sp);
    if (sp->profiles)
        for (uint32_t i = 0; i < sp->nslots; i++)
            gm_profile_destroy(m, atomic_load(&sp->profiles[i]));
    if (sp->own_pool)
        gm_tokpool_destroy(sp->pool);
    gm_mem_free(m, sp->profiles);
    gm_walkshare_detach(sp);
    gm_mem_free(m, sp->split0_filter);
    gm_mem_free(m, sp->state_split0);
    gm_mem_free(m, sp->width_block);
    gm_mem_free(m, sp->block_slot);
    gm_mem_free(m, sp->slot_prod);
    gm_mem_free(m, sp->prod_off);
    gm_mem_free(m, sp->prod_terms);
    gm_mem_free(m, sp->prod_ignored);
    gm_mem_free(m, sp->pair_emit);
    gm_mem_free(m, sp->pair_prod);
    gm_mem_free(m, sp);
}

const gm_profile *gm_spanner_profile(gm_spanner *sp, uint32_t q, gm_error *err)
{
    q = gm_spanner_profile_state(sp, q);
    _Atomic(gm_profile *) *slot = &sp->profiles[gm_spanner_slot(sp, q)];
    gm_profile *p = atomic_load_explicit(slot, memory_order_acquire);
    if (p)
        return p;
    if (gm_profile_build(sp, q, &p, err) != GM_OK)
        return NULL;
    gm_profile *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, p,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        gm_profile_destroy(sp->mem, p);
        return expected;
    }
    return p;
}

const uint32_t *gm_spanner_split0(gm_spanner *sp, uint32_t id, gm_error *err)
{
    return gm_tokpool_filter_bits(sp->pool, sp->split0_filter[id], err);
}

gm_status gm_spanner_build_all(gm_spanner *sp, gm_error *err)
{
    return gm_spanner_build_all_progress(sp, NULL, NULL, err);
}

gm_status gm_spanner_build_all_progress(gm_spanner *sp, gm_progress_fn progress, void *ud,
                                        gm_error *err)
{
    return gm_spanner_build_flags(sp, UINT32_MAX, progress, ud, err);
}

gm_status gm_spanner_build_flags(gm_spanner *sp, uint32_t flags, gm_progress_fn progress, void *ud,
                                 gm_error *err)
{
    gm_error local;
    if (!err)
        err = &local;
    uint64_t total = (uint64_t)sp->nslots + sp->nsplit0;
    for (uint32_t i = 0; i < sp->nslots; i++) {
        if (i < sp->nplain && !((flags >> (i & (sp->nflags - 1))) & 1))
            continue;
        if (!gm_spanner_profile(sp, gm_spanner_slot_state(sp, i), err))
            return err->code;
        if (progress)
            progress(ud, i + 1, total);
    }
    for (uint32_t id = 0; id < sp->nsplit0; id++)
        if (!gm_spanner_split0(sp, id, err))
            return err->code;
    if (progress)
        progress(ud, total, total);
    return GM_OK;
}

void gm_spanner_stats_get(gm_spanner *sp, gm_spanner_stats *st)
{
    memset(st, 0, sizeof *st);
    for (uint32_t i = 0; i < sp->nslots; i++) {
        const gm_profile *p = atomic_load(&sp->profiles[i]);
        if (!p)
            continue;
        st->profiles++;
        st->classes += p->nclasses;
        st->class_tokens += p->ntokens;
        st->bytes += p->bytes;
    }
    if (sp->own_pool)
        st->bytes += gm_tokpool_bytes(sp->pool);
}
