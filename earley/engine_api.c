/*
 * The Earley engine's objects (engine.h): grammar x vocabulary engines,
 * states, scratch space, and the operations on states, each taking the
 * engine's lock around what touches its shared tables (note
 * [hash-consed Earley sets] in eengine.h).
 */
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"

enum {
    TABLE_BUDGET_MAX = 256u << 20,  /* Earley sets held by the hash-cons and transition tables */
    MEMO_BUDGET_MAX = 256u << 20,   /* memoized masks */
};

/* Appends id to e->sym_ids (n used of cap). */
static gm_status add_sym_id(gm_eengine *e, uint32_t id, size_t *n, size_t *cap, gm_error *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        uint32_t *p = gm_mem_reallocarray(e->mem, e->sym_ids, nc, sizeof *p);
        if (!p)
            return gm_mem_fail(e->mem, err, "special tokens");
        e->sym_ids = p;
        *cap = nc;
    }
    e->sym_ids[(*n)++] = id;
    return GM_OK;
}

/*
 * The ids of a token id set (ir/ebnf.h note [token id sets]), ascending:
 * its ids, or every id but them, the stop ids and padding.
 */
static gm_status resolve_ids(gm_eengine *e, const uint8_t *text, size_t len, bool exclude,
                             size_t at, size_t *n, size_t *cap, gm_error *err)
{
    const gm_vocab_data *v = e->v;
    uint32_t id;
    bool more = gm_ebnf_token_ids_next(text, len, &at, &id);
    for (; more; more = gm_ebnf_token_ids_next(text, len, &at, &id))
        if (id >= v->size)
            return gm_error_set(err, GM_ERR_GRAMMAR,
                                "the grammar names token id %u, past the vocabulary (%u tokens)",
                                id, v->size);
    gm_ebnf_token_ids(text, len, &exclude, &at);
    more = gm_ebnf_token_ids_next(text, len, &at, &id);
    gm_status st = GM_OK;
    if (!exclude) {
        for (; more && st == GM_OK; more = gm_ebnf_token_ids_next(text, len, &at, &id))
            if (!(v->flags[id] & GM_TOK_PADDING))
                st = add_sym_id(e, id, n, cap, err);
        return st;
    }
    for (uint32_t t = 0; t < v->size && st == GM_OK; t++) {
        if (more && t == id) {
            more = gm_ebnf_token_ids_next(text, len, &at, &id);
            continue;
        }
        if (!(v->flags[t] & (GM_TOK_EOS | GM_TOK_PADDING)))
            st = add_sym_id(e, t, n, cap, err);
    }
    return st;
}

static gm_status resolve_specials(gm_eengine *e, gm_error *err)
{
    const gm_egrammar *g = e->g;
    const gm_vocab_data *v = e->v;
    e->sym_off = gm_mem_calloc(e->mem, (size_t)g->ntokens + 1, sizeof *e->sym_off);
    if (!e->sym_off)
        return gm_mem_fail(e->mem, err, "special tokens");
    if (!g->ntokens)
        return GM_OK;
    /* the vocabulary's special tokens, once (not a pass over it per symbol:
       a Harmony grammar names ten of gpt-oss's 200K tokens) */
    uint32_t nspecial = 0;
    for (uint32_t id = 0; id < v->size; id++)
        nspecial += (v->flags[id] & GM_TOK_SPECIAL) != 0;
    uint32_t *special = gm_mem_alloc(e->mem, (nspecial ? nspecial : 1) * sizeof *special);
    if (!special)
        return gm_mem_fail(e->mem, err, "special tokens");
    nspecial = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (v->flags[id] & GM_TOK_SPECIAL)
            special[nspecial++] = id;
    gm_status st = GM_OK;
    size_t n = 0, cap = 0;
    for (uint32_t s = 0; s < g->ntokens && st == GM_OK; s++) {
        const uint8_t *text = g->tok_text + g->tok_text_off[s];
        size_t len = g->tok_text_off[s + 1] - g->tok_text_off[s];
        bool exclude;
        size_t at;
        if (gm_ebnf_token_ids(text, len, &exclude, &at)) {
            st = resolve_ids(e, text, len, exclude, at, &n, &cap, err);
            e->sym_off[s + 1] = (uint32_t)n;
            e->any_ids = true;
            continue;
        }
        size_t found = 0;
        for (uint32_t k = 0; k < nspecial; k++) {
            uint32_t id = special[k];
            size_t tl;
            const uint8_t *tb = gm_vocab_data_token(v, id, &tl);
            if (tl != len || memcmp(tb, text, len))
                continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                uint32_t *p = gm_mem_reallocarray(e->mem, e->sym_ids, nc, sizeof *p);
                if (!p) {
                    st = gm_mem_fail(e->mem, err, "special tokens");
                    break;
                }
                e->sym_ids = p;
                cap = nc;
            }
            e->sym_ids[n++] = id;
            found++;
        }
        bool external = len >= 2 && !memcmp(text, GM_ESYM_EXTERNAL, 2);
        /* No special token has this text: the ordinary token that has it, by id, as
           XGrammar's token references (a structural tag's {"type": "token"}) and
           llama.cpp's <text> take it. It is ordinary text too, so a matcher reads it
           both ways (note [token reading] in eengine.h). */
        for (uint32_t id = 0; st == GM_OK && !found && !external && id < v->size; id++) {
            size_t tl;
            const uint8_t *tb = gm_vocab_data_token(v, id, &tl);
            if (tl == len && !(v->flags[id] & GM_TOK_PADDING) && !memcmp(tb, text, len)) {
                st = add_sym_id(e, id, &n, &cap, err);
                e->any_ids = true;
                found++;
            }
        }
        if (st == GM_OK && !found && !external)
            st = gm_error_set(err, GM_ERR_GRAMMAR,
                              "the grammar names the token \"%.*s\", which no token of the "
                              "vocabulary is", (int)(len > 200 ? 200 : len), (const char *)text);
        e->sym_off[s + 1] = (uint32_t)n;
    }
    gm_mem_free(e->mem, special);
    return st;
}

void gm_eengine_destroy(gm_eengine *e)
{
    if (!e)
        return;
    gm_eset_fini(e);
    gm_emask_fini(e);
    gm_mem_free(e->mem, e->sym_off);
    gm_mem_free(e->mem, e->sym_ids);
    pthread_mutex_destroy(&e->lock);
    gm_mem_free(e->mem, e);
}

gm_status gm_eengine_create(gm_mem *m, const gm_egrammar *g, const gm_vocab_data *v,
                            const gm_trie *t, gm_excache *x, const gm_eengine_options *opts,
                            gm_eengine **out, gm_error *err)
{
    *out = NULL;
    if (!m || !g || !v || !t)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_eengine_create: NULL argument");
    gm_eengine *e = gm_mem_calloc(m, 1, sizeof *e);
    if (!e)
        return gm_mem_fail(m, err, "the Earley engine");
    e->mem = m;
    e->g = g;
    e->v = v;
    e->t = t;
    e->variant = opts ? opts->variant : 0;
    e->x = (e->variant & GM_EVARIANT_NO_CROSS_CACHE) ? NULL : x;
    if (e->x && !gm_excache_fits(e->x, v, t)) {
        gm_mem_free(m, e);
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_eengine_create: the cross-grammar cache is for another vocabulary");
    }
    gm_limits_resolve(&e->lim, opts ? &opts->limits : NULL);
    e->max_items = e->lim.max_nfa_states;
    e->table_budget = e->lim.max_memory / 8 < TABLE_BUDGET_MAX ? e->lim.max_memory / 8
                                                               : TABLE_BUDGET_MAX;
    e->memo_budget = e->lim.max_memory / 8 < MEMO_BUDGET_MAX ? e->lim.max_memory / 8
                                                             : MEMO_BUDGET_MAX;
    atomic_init(&e->memo_bytes, 0);
    atomic_init(&e->cache_bytes, 0);
    atomic_init(&e->nentries, 0);
    atomic_init(&e->ncross, 0);
    atomic_init(&e->ninterior, 0);
    atomic_init(&e->nderived, 0);
    atomic_init(&e->nuncertain, 0);
    if (pthread_mutex_init(&e->lock, NULL)) {
        gm_mem_free(m, e);
        return gm_error_set(err, GM_ERR_NOMEM, "the Earley engine: cannot create a mutex");
    }
    gm_status st;
    if ((st = resolve_specials(e, err)) != GM_OK || (st = gm_emask_init(e, err)) != GM_OK ||
        (st = gm_eset_init(e, err)) != GM_OK) {
        gm_eengine_destroy(e);
        return st;
    }
    if (opts && opts->eager) {
        gm_escratch *w;
        if ((st = gm_escratch_create(e, &w, err)) != GM_OK) {
            gm_eengine_destroy(e);
            return st;
        }
        st = gm_emask_build_all(e, w, err);
        gm_escratch_destroy(e, w);
        if (st != GM_OK) {
            gm_eengine_destroy(e);
            return st;
        }
    }
    *out = e;
    return GM_OK;
}

void gm_eengine_get_stats(gm_eengine *e, gm_eengine_stats *st)
{
    memset(st, 0, sizeof *st);
    st->cache_entries = atomic_load(&e->nentries);
    st->cross_hits = atomic_load(&e->ncross);
    st->interiors = atomic_load(&e->ninterior);
    st->derived = atomic_load(&e->nderived);
    st->uncertain = atomic_load(&e->nuncertain);
    st->cache_bytes = atomic_load(&e->cache_bytes) + atomic_load(&e->memo_bytes);
    pthread_mutex_lock(&e->lock);
    st->memory_bytes = st->cache_bytes + e->table_bytes +
                       e->sets_slots * sizeof *e->sets + e->tc_slots * sizeof *e->tc +
                       (e->own_below ? (size_t)e->t->nnodes * (32 + 1 + sizeof(uint16_t)) : 0) +
                       (size_t)e->g->nstates * sizeof *e->entry;
    pthread_mutex_unlock(&e->lock);
}

void gm_egrammar_get_stats(const gm_egrammar *g, gm_egrammar_stats *st)
{
    memset(st, 0, sizeof *st);
    st->rules = g->nrules;
    st->states = g->nstates;
    /* Byte edges counted as ranges of equal targets: a target is constant on
       each run of the byte-class map, so the runs are walked, not the bytes. */
    uint16_t run[257];
    uint32_t nruns = gm_fsm_class_runs(g, run), edges = 0;
    for (uint32_t s = 0; s < g->nstates; s++) {
        uint32_t prev = GM_FSM_NONE;
        for (uint32_t i = 0; i < nruns; i++) {
            uint32_t to = gm_fsm_next(g, s, (uint8_t)run[i]);
            if (to != GM_FSM_NONE && to != prev)
                edges++;
            prev = to;
        }
    }
    st->edges = edges + g->ref_off[g->nstates] + g->tok_off[g->nstates];
    st->special_tokens = g->ntokens;
}

/* ---- states ---------------------------------------------------------------- */

gm_estate *gm_estate_start(gm_eengine *e, gm_error *err)
{
    (void)err;
    gm_estate_retain(e->start);
    return e->start;
}

gm_status gm_escratch_create(gm_eengine *e, gm_escratch **out, gm_error *err)
{
    *out = gm_mem_calloc(e->mem, 1, sizeof **out);
    if (!*out)
        return gm_mem_fail(e->mem, err, "an Earley scratch");
    return GM_OK;
}

void gm_escratch_destroy(gm_eengine *e, gm_escratch *w)
{
    if (!w)
        return;
    gm_vec_free(e->mem, &w->items);
    gm_vec_free(e->mem, &w->done);
    gm_vec_free(e->mem, &w->citems);
    gm_vec_free(e->mem, &w->nodes);
    gm_vec_free(e->mem, &w->merged);
    gm_vec_free(e->mem, &w->enodes);
    gm_vec_free(e->mem, &w->rnodes);
    gm_vec_free(e->mem, &w->key);
    gm_mem_free(e->mem, w->knum);
    gm_mem_free(e->mem, w->krule);
    gm_mem_free(e->mem, w->kqueue);
    gm_mem_free(e->mem, w->slots);
    gm_mem_free(e->mem, w->predicted);
    gm_mem_free(e->mem, w->stack);
    gm_mem_free(e->mem, w->unc);
    gm_mem_free(e->mem, w->bits);
    gm_mem_free(e->mem, w);
}

bool gm_estate_accepting(const gm_eengine *e, const gm_estate *s)
{
    (void)e;
    return (s->flags & GM_ES_ACCEPTING) != 0;
}

/* Steps s over bytes (the lock is held): a new reference, or REJECTED. */
static gm_status step_bytes(gm_eengine *e, gm_escratch *w, gm_estate *s, const uint8_t *b,
                            size_t len, gm_estate **out, gm_error *err)
{
    gm_estate *cur = s;
    gm_estate_retain(cur);
    for (size_t i = 0; i < len; i++) {
        gm_estate *nx;
        gm_status st = gm_eset_step(e, w, cur, b[i], &nx, err);
        gm_estate_release(e, cur);
        if (st != GM_OK)
            return st;
        if (!nx)
            return gm_error_set(err, GM_ERR_REJECTED, "byte %zu of the input is not allowed here",
                                i);
        cur = nx;
    }
    *out = cur;
    return GM_OK;
}

gm_status gm_estate_accept_bytes(gm_eengine *e, gm_escratch *w, gm_estate *s,
                                 const uint8_t *bytes, size_t len, gm_estate **out,
                                 gm_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    gm_status st = step_bytes(e, w, s, bytes, len, out, err);
    pthread_mutex_unlock(&e->lock);
    return st;
}

/*
 * accept_token for grammars with token id sets (note [token reading] in
 * eengine.h): the token is read over every symbol whose ids hold it and,
 * unless it is special, over its bytes; the result is the union.
 */
static gm_status accept_token_sets(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t token,
                                   gm_estate **out, gm_error *err)
{
    const gm_vocab_data *v = e->v;
    uint32_t nsym = e->g->ntokens, nhit = 0;
    uint32_t stack_syms[16], *syms = stack_syms;
    if (nsym > 16 && !(syms = gm_mem_alloc(e->mem, nsym * sizeof *syms)))
        return gm_mem_fail(e->mem, err, "a token step");
    for (uint32_t y = 0; y < nsym; y++) {
        uint32_t lo = e->sym_off[y], hi = e->sym_off[y + 1];
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (e->sym_ids[mid] < token)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < e->sym_off[y + 1] && e->sym_ids[lo] == token)
            syms[nhit++] = y;
    }
    gm_estate *bytes_state = NULL;
    gm_status st = GM_OK;
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    if (!(v->flags[token] & GM_TOK_SPECIAL)) {
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, token, &len);
        if (len && (st = step_bytes(e, w, s, b, len, &bytes_state, err)) == GM_ERR_REJECTED)
            st = GM_OK;
    }
    if (st == GM_OK && nhit)
        st = gm_eset_step_syms(e, w, s, syms, nhit, bytes_state, out, err);
    else if (st == GM_OK)
        *out = bytes_state, bytes_state = NULL;
    if (bytes_state)
        gm_estate_release(e, bytes_state);
    pthread_mutex_unlock(&e->lock);
    if (syms != stack_syms)
        gm_mem_free(e->mem, syms);
    if (st == GM_OK && !*out)
        st = gm_error_set(err, GM_ERR_REJECTED, "token %u is not allowed here", token);
    return st;
}

gm_status gm_estate_accept_token(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t token,
                                 gm_estate **out, gm_error *err)
{
    const gm_vocab_data *v = e->v;
    *out = NULL;
    if (token >= v->size)
        return gm_error_set(err, GM_ERR_ARGUMENT, "token id %u is out of range (vocabulary of %u)",
                            token, v->size);
    uint8_t f = v->flags[token];
    if (f & GM_TOK_PADDING)
        return gm_error_set(err, GM_ERR_REJECTED, "token %u is a padding id", token);
    if (e->any_ids && !((f & GM_TOK_EOS) && gm_estate_accepting(e, s)))
        return accept_token_sets(e, w, s, token, out, err);
    if (f & GM_TOK_SPECIAL) {
        uint32_t sym = GM_FSM_NONE;
        for (uint32_t k = 0; k < e->sym_off[e->g->ntokens] && sym == GM_FSM_NONE; k++)
            if (e->sym_ids[k] == token)
                for (uint32_t y = 0; y < e->g->ntokens; y++)
                    if (e->sym_off[y] <= k && k < e->sym_off[y + 1])
                        sym = y;
        if (sym == GM_FSM_NONE) {
            if ((f & GM_TOK_EOS) && gm_estate_accepting(e, s)) {
                gm_estate_retain(s);
                *out = s;
                return GM_OK;
            }
            return gm_error_set(err, GM_ERR_REJECTED, "special token %u is not allowed here",
                                token);
        }
        pthread_mutex_lock(&e->lock);
        gm_eset_maintain(e, w);
        gm_status st = gm_eset_step(e, w, s, 256 + sym, out, err);
        pthread_mutex_unlock(&e->lock);
        if (st == GM_OK && !*out)
            st = gm_error_set(err, GM_ERR_REJECTED, "special token %u is not allowed here",
                              token);
        return st;
    }
    size_t len;
    const uint8_t *b = gm_vocab_data_token(v, token, &len);
    if (len == 0)
        return gm_error_set(err, GM_ERR_REJECTED, "token %u has no bytes", token);
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    gm_status st = step_bytes(e, w, s, b, len, out, err);
    pthread_mutex_unlock(&e->lock);
    if (st == GM_ERR_REJECTED)
        gm_error_set(err, GM_ERR_REJECTED, "token %u is not allowed here", token);
    return st;
}

uint32_t gm_egrammar_nsymbols(const gm_egrammar *g) { return g->ntokens; }

const uint8_t *gm_egrammar_symbol(const gm_egrammar *g, uint32_t sym, size_t *len)
{
    *len = g->tok_text_off[sym + 1] - g->tok_text_off[sym];
    return g->tok_text + g->tok_text_off[sym];
}

gm_status gm_estate_accept_symbol(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t sym,
                                  gm_estate **out, gm_error *err)
{
    *out = NULL;
    if (sym >= e->g->ntokens)
        return gm_error_set(err, GM_ERR_ARGUMENT, "symbol %u is out of range", sym);
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    gm_status st = gm_eset_step(e, w, s, 256 + sym, out, err);
    pthread_mutex_unlock(&e->lock);
    if (st == GM_OK && !*out)
        st = GM_ERR_REJECTED;
    return st;
}

gm_status gm_estate_fill_mask(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t *mask,
                              size_t words, gm_error *err)
{
    if (words != e->words)
        return gm_error_set(err, GM_ERR_ARGUMENT, "mask of %zu words, the vocabulary needs %u",
                            words, e->words);
    if (gm_emask_memo(e, s, mask))
        return GM_OK;
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    gm_status st = gm_emask_fill(e, w, s, mask, err);
    pthread_mutex_unlock(&e->lock);
    return st;
}

gm_status gm_estate_forced_bytes(gm_eengine *e, gm_escratch *w, gm_estate *s, uint8_t *buf,
                                 size_t cap, size_t *len, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_status st = GM_OK;
    *len = 0;
    pthread_mutex_lock(&e->lock);
    gm_eset_maintain(e, w);
    gm_estate *cur = s;
    gm_estate_retain(cur);
    while (*len < cap && !(cur->flags & GM_ES_ACCEPTING)) {
        uint64_t bytes[4] = {0, 0, 0, 0};
        bool tokens = false;
        for (uint32_t i = 0; i < cur->nitems; i++) {
            const gm_eitem *it = &cur->items[i];
            uint8_t f = g->state_flags[it->state];
            if (f & GM_FS_TOKENS)
                tokens = true;
            if (!(f & GM_FS_SCANS))
                continue;
            if (gm_eitem_rep_full(g, it))
                continue;
            for (uint32_t b = 0; b < 256; b++)
                if (gm_fsm_next(g, it->state, (uint8_t)b) != GM_FSM_NONE)
                    bytes[b >> 6] |= (uint64_t)1 << (b & 63);
        }
        uint32_t n = 0, only = 0;
        for (uint32_t k = 0; k < 4; k++)
            if (bytes[k]) {
                n += (uint32_t)__builtin_popcountll(bytes[k]);
                only = k * 64 + (uint32_t)__builtin_ctzll(bytes[k]);
            }
        if (tokens || n != 1)
            break;
        gm_estate *nx;
        if ((st = gm_eset_step(e, w, cur, only, &nx, err)) != GM_OK || !nx)
            break;
        gm_estate_release(e, cur);
        cur = nx;
        buf[(*len)++] = (uint8_t)only;
    }
    gm_estate_release(e, cur);
    pthread_mutex_unlock(&e->lock);
    return st;
}
