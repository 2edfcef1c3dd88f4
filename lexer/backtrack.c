/*
 * gm_lexer_add_backtracking: the bounded backtracking states of note
 * [lexer backtracking], found by a breadth-first search from the
 * transitions that leave an accepting state for a non-accepting one.
 *
 * A state (main, T, r) is interned on all three; its depth, 1 + r's (a
 * DFA state's is 0), is what the bound of note [lexer backtracking] holds
 * to GM_LEX_BACKTRACK_MAX. States are expanded in id order and r was made
 * before the state (its key names it), so when a state is expanded the
 * state r of its re-lexed window already has its final row, and every state
 * it creates gets a larger id than the r it names.
 */
#include <string.h>

#include "lexer/lexer.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"

typedef GM_VEC(uint32_t) u32vec;

typedef struct bt_key {
    uint32_t main, fallback, relex;
} bt_key;

typedef struct builder {
    gm_mem *mem;
    const gm_lexer *lx;      /* the DFA as built (its rows are not changed here) */
    uint32_t nclasses;       /* refined classes: spaces, tabs and line breaks apart */
    uint8_t byte_class[256];
    uint8_t class_ws[256];   /* [class] the class's byte may not be in a window */
    uint32_t *class_old;     /* [nclasses] the DFA's class of each refined class */
    u32vec rows;             /* [states * nclasses] transducer rows */
    gm_intern keys;          /* bt_key -> backtracking state - ndfa */
    u32vec depth;            /* [backtracking states] 1 + the depth of the relex state */
    uint32_t max_states;
} builder;

/* The nesting depth of transducer state q (0 for a DFA state). */
static uint32_t depth_of(const builder *b, uint32_t q)
{
    return q < b->lx->ndfa ? 0 : b->depth.v[q - b->lx->ndfa];
}

static uint32_t dfa_next(const builder *b, uint32_t q, uint32_t c)
{
    const gm_lexer *lx = b->lx;
    return gm_lexer_move(lx, q, b->class_old[c]);
}

/*
 * Whether DFA state q may end a lexeme, on any next byte: a window closes
 * there (a state that accepts only before some bytes closes it too, and the
 * lexeme is an error if it dies before the others, where Lark would still
 * fall back; README, Lark compatibility).
 */
static bool tied_ok(const gm_lexer *lx, uint32_t main, uint32_t t)
{
    return t != lx->line_end || gm_lexer_can_produce(lx, main, t);
}

/* Bytes a window may not hold (gm_lexer_window_stop) get classes of their own. */
static int refine_classes(builder *b)
{
    const gm_lexer *lx = b->lx;
    uint32_t first[2 * 256]; /* by DFA class, then by the byte itself for stopping bytes */
    memset(first, 0xff, sizeof first);
    b->nclasses = 0;
    b->class_old = gm_mem_calloc(b->mem, 256, sizeof *b->class_old);
    if (!b->class_old)
        return -1;
    for (unsigned byte = 0; byte < 256; byte++) {
        bool stop = gm_lexer_window_stop(lx, (uint8_t)byte);
        unsigned key = stop ? 256 + byte : lx->byte_class[byte];
        if (first[key] == UINT32_MAX) {
            first[key] = b->nclasses;
            b->class_old[b->nclasses] = lx->byte_class[byte];
            b->class_ws[b->nclasses] = stop;
            b->nclasses++;
        }
        b->byte_class[byte] = (uint8_t)first[key];
    }
    return 0;
}

/* The id of backtracking state k, created (with a dead row) if new; UINT32_MAX on failure. */
static uint32_t intern(builder *b, const bt_key *k, gm_status *st, gm_error *err)
{
    uint32_t id;
    int added;
    if (gm_intern_put(&b->keys, k, sizeof *k, &id, &added)) {
        *st = gm_mem_fail(b->mem, err, "the lexer's backtracking states");
        return UINT32_MAX;
    }
    if (added) {
        if (id >= b->max_states) {
            *st = gm_error_set(err, GM_ERR_LIMIT,
                               "the lexer needs more than %u backtracking states (Lark mode "
                               "falls back over up to %u nested windows)",
                               b->max_states, GM_LEX_BACKTRACK_MAX);
            return UINT32_MAX;
        }
        size_t at = b->rows.n;
        if (gm_vec_push(b->mem, &b->depth, 1 + depth_of(b, k->relex)) ||
            gm_vec_reserve(b->mem, &b->rows, at + b->nclasses)) {
            *st = gm_mem_fail(b->mem, err, "the lexer's backtracking states");
            return UINT32_MAX;
        }
        memset(b->rows.v + at, 0xff, b->nclasses * sizeof *b->rows.v);
        b->rows.n = at + b->nclasses;
    }
    return b->lx->ndfa + id;
}

/*
 * The row of backtracking state s: where the main match goes, as a DFA
 * state when it accepts again or the window cannot grow, else as the next
 * backtracking state with the window re-lexed one byte further.
 */
static gm_status expand(builder *b, uint32_t s, gm_error *err)
{
    const gm_lexer *lx = b->lx;
    bt_key k;
    size_t len;
    memcpy(&k, gm_intern_key(&b->keys, s - lx->ndfa, &len), sizeof k);
    gm_status st = GM_OK;
    for (uint32_t c = 0; c < b->nclasses; c++) {
        uint32_t n = dfa_next(b, k.main, c);
        uint32_t to = n;
        if (n != GM_LEX_DEAD && !gm_lexer_may_accept(lx, n) && !b->class_ws[c] && tied_ok(lx, n, k.fallback)) {
            uint32_t r = b->rows.v[(size_t)k.relex * b->nclasses + c];
            if (r != GM_LEX_DEAD && depth_of(b, r) < GM_LEX_BACKTRACK_MAX) {
                bt_key nk = {n, k.fallback, r};
                to = intern(b, &nk, &st, err);
                if (to == UINT32_MAX)
                    return st;
            }
        }
        b->rows.v[(size_t)s * b->nclasses + c] = to;
    }
    return GM_OK;
}

/* Prod of a backtracking state: the main match's (states are only made when it holds T). */
static void fill_prod(const gm_lexer *lx, uint64_t *prod, uint32_t s, const bt_key *k)
{
    uint32_t w = lx->prod_words;
    memcpy(prod + (size_t)s * w, lx->prod + (size_t)k->main * w, w * sizeof *prod);
}

gm_status gm_lexer_add_backtracking(gm_lexer *lx, uint32_t max_states, gm_error *err)
{
    if (!lx)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_add_backtracking: lexer is NULL");
    if (lx->ndfa != lx->nstates)
        return gm_error_set(err, GM_ERR_STATE, "gm_lexer_add_backtracking: already added");
    builder b;
    memset(&b, 0, sizeof b);
    b.mem = lx->mem;
    b.lx = lx;
    b.max_states = max_states;
    gm_intern_init(&b.keys, b.mem);
    gm_status st = GM_OK;
    uint32_t *accept = NULL, *bmain = NULL, *bfall = NULL, *brelex = NULL, *cond_rows = NULL;
    uint64_t *prod = NULL;
    if (refine_classes(&b) || gm_vec_reserve(b.mem, &b.rows, (size_t)lx->ndfa * b.nclasses))
        goto nomem;
    b.rows.n = (size_t)lx->ndfa * b.nclasses;
    for (uint32_t q = 0; q < lx->ndfa; q++)
        for (uint32_t c = 0; c < b.nclasses; c++)
            b.rows.v[(size_t)q * b.nclasses + c] = dfa_next(&b, q, c);
    /* Windows open where an accepted lexeme continues into a non-accepting state. */
    for (uint32_t q = 1; q < lx->ndfa; q++) {
        if (!gm_lexer_may_accept(lx, q))
            continue;
        for (uint32_t c = 0; c < b.nclasses; c++) {
            /* What q's lexeme is when the window's first byte follows it. */
            uint32_t t = gm_lexer_accept(lx, q, b.class_old[c]);
            uint32_t n = dfa_next(&b, q, c), r = dfa_next(&b, 0, c);
            if (t == GM_LEX_NONE || n == GM_LEX_DEAD || gm_lexer_may_accept(lx, n) || b.class_ws[c] ||
                r == GM_LEX_DEAD || !tied_ok(lx, n, t))
                continue;
            bt_key k = {n, t, r};
            uint32_t s = intern(&b, &k, &st, err);
            if (s == UINT32_MAX)
                goto fail;
            b.rows.v[(size_t)q * b.nclasses + c] = s;
        }
    }
    for (uint32_t s = lx->ndfa; s < lx->ndfa + b.keys.count; s++)
        if ((st = expand(&b, s, err)) != GM_OK)
            goto fail;

    uint32_t nbt = b.keys.count, n = lx->ndfa + nbt, w = lx->prod_words;
    accept = gm_mem_reallocarray(b.mem, NULL, n, sizeof *accept);
    prod = gm_mem_calloc(b.mem, (size_t)n * w, sizeof *prod);
    bmain = gm_mem_reallocarray(b.mem, NULL, nbt ? nbt : 1, sizeof *bmain);
    bfall = gm_mem_reallocarray(b.mem, NULL, nbt ? nbt : 1, sizeof *bfall);
    brelex = gm_mem_reallocarray(b.mem, NULL, nbt ? nbt : 1, sizeof *brelex);
    if (!accept || !prod || !bmain || !bfall || !brelex)
        goto nomem;
    memcpy(accept, lx->accept, lx->ndfa * sizeof *accept);
    memcpy(prod, lx->prod, (size_t)lx->ndfa * w * sizeof *prod);
    for (uint32_t i = 0; i < nbt; i++) {
        bt_key k;
        size_t len;
        memcpy(&k, gm_intern_key(&b.keys, i, &len), sizeof k);
        accept[lx->ndfa + i] = GM_LEX_NONE;
        bmain[i] = k.main;
        bfall[i] = k.fallback;
        brelex[i] = k.relex;
        fill_prod(lx, prod, lx->ndfa + i, &k);
    }
    if (lx->ncond) {
        /* The cond rows over the refined classes (the end of input stays last). */
        uint32_t k = lx->nclasses, nk = b.nclasses;
        cond_rows = gm_mem_reallocarray(b.mem, NULL, (size_t)lx->ncond * (nk + 1), sizeof *cond_rows);
        if (!cond_rows)
            goto nomem;
        for (uint32_t r = 0; r < lx->ncond; r++) {
            for (uint32_t c = 0; c < nk; c++)
                cond_rows[(size_t)r * (nk + 1) + c] = lx->cond_rows[(size_t)r * (k + 1) + b.class_old[c]];
            cond_rows[(size_t)r * (nk + 1) + nk] = lx->cond_rows[(size_t)r * (k + 1) + k];
        }
        gm_mem_free(b.mem, lx->cond_rows);
        lx->cond_rows = cond_rows;
        cond_rows = NULL;
    }
    gm_mem_free(b.mem, lx->next);
    gm_mem_free(b.mem, lx->next16);
    gm_mem_free(b.mem, lx->row16);
    gm_mem_free(b.mem, lx->patch_at);
    gm_mem_free(b.mem, lx->patch);
    gm_mem_free(b.mem, lx->accept);
    gm_mem_free(b.mem, lx->prod);
    lx->next = b.rows.v;
    lx->next16 = NULL;
    lx->row16 = NULL;
    lx->patch_at = NULL;
    lx->patch = NULL;
    lx->accept = accept;
    lx->prod = prod;
    lx->bt_main = bmain;
    lx->bt_fallback = bfall;
    lx->bt_relex = brelex;
    lx->nstates = n;
    lx->nclasses = b.nclasses;
    memcpy(lx->byte_class, b.byte_class, sizeof lx->byte_class);
    gm_intern_free(&b.keys);
    gm_vec_free(b.mem, &b.depth);
    gm_mem_free(b.mem, b.class_old);
    /* On failure the caller destroys the lexer (whose tables are whole, only wider). */
    return gm_lexer_compact(lx, err);
nomem:
    st = gm_mem_fail(b.mem, err, "the lexer's backtracking states");
fail:
    gm_vec_free(b.mem, &b.rows);
    gm_vec_free(b.mem, &b.depth);
    gm_intern_free(&b.keys);
    gm_mem_free(b.mem, b.class_old);
    gm_mem_free(b.mem, accept);
    gm_mem_free(b.mem, prod);
    gm_mem_free(b.mem, bmain);
    gm_mem_free(b.mem, bfall);
    gm_mem_free(b.mem, brelex);
    gm_mem_free(b.mem, cond_rows);
    return st;
}
