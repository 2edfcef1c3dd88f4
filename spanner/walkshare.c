/* Profile walks shared between contextual spanners (spanner/walkshare.h, note [shared walks]). */
#include "spanner/walkshare.h"

#include <string.h>

#include "base/error.h"

gm_status gm_walkshare_create(gm_mem *m, gm_walkshare **out, gm_error *err)
{
    *out = NULL;
    gm_walkshare *w = gm_mem_calloc(m, 1, sizeof *w);
    if (!w)
        return gm_mem_fail(m, err, "the shared profile walks");
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        gm_mem_free(m, w);
        return gm_mem_fail(m, err, "the shared profile walks");
    }
    w->mem = m;
    gm_intern_init(&w->keys, m);
    *out = w;
    return GM_OK;
}

static void template_free(gm_mem *m, gm_walk_template *t)
{
    if (!t)
        return;
    gm_mem_free(m, t->stays);
    gm_mem_free(m, t->breaks);
    gm_mem_free(m, t);
}

void gm_walkshare_destroy(gm_walkshare *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->templates.n; i++)
        template_free(w->mem, w->templates.v[i]);
    gm_vec_free(w->mem, &w->templates);
    gm_intern_free(&w->keys);
    pthread_mutex_destroy(&w->lock);
    gm_mem_free(w->mem, w);
}

/* Slot -> description index, for at most GM_WALK_MAX_STATES slots. */
#define NUMBER_SLOTS (4 * GM_WALK_MAX_STATES)

typedef struct numbering {
    uint32_t slot[NUMBER_SLOTS]; /* UINT32_MAX: empty */
    uint32_t index[NUMBER_SLOTS];
} numbering;

/* The index of slot s, numbering it next (appended to states) when new; UINT32_MAX when
 * there are too many states, or on no memory (*nomem set). */
static uint32_t number(gm_mem *m, numbering *nb, gm_walk_words *states, uint32_t s, int *nomem)
{
    uint32_t h = (s * 2654435761u) & (NUMBER_SLOTS - 1);
    while (nb->slot[h] != UINT32_MAX) {
        if (nb->slot[h] == s)
            return nb->index[h];
        h = (h + 1) & (NUMBER_SLOTS - 1);
    }
    if (states->n == GM_WALK_MAX_STATES)
        return UINT32_MAX;
    if (gm_vec_push(m, states, s)) {
        *nomem = 1;
        return UINT32_MAX;
    }
    nb->slot[h] = s;
    nb->index[h] = (uint32_t)states->n - 1;
    return nb->index[h];
}

/* What a byte does in a described state. */
enum { MOVE = 1, BREAK = 2, FAIL = 3 };

int gm_walkshare_describe(const gm_spanner *sp, uint32_t q, gm_walk_words *key,
                          gm_walk_words *states)
{
    const gm_lexer *lx = sp->lexer;
    gm_mem *m = sp->mem;
    key->n = 0;
    states->n = 0;
    /* Only lexer states with a lexeme pending and no width: q is then its own slot. */
    if (q >= sp->nplain || (q >> sp->flag_bits) == 0)
        return 0;
    numbering *nb = gm_mem_alloc(m, sizeof *nb);
    if (!nb)
        return -1;
    memset(nb->slot, 0xff, sizeof nb->slot);
    int nomem = 0, rc = 1;
    uint32_t kind[257], a[257], b[257];
    /* Most states reach too many (a name's Unicode letters are hundreds of UTF-8 states):
     * count first, by moves alone. */
    if (number(m, nb, states, q, &nomem) == UINT32_MAX)
        goto no;
    for (size_t i = 0; i < states->n; i++) {
        uint32_t s = states->v[i], dfa = s >> sp->flag_bits, flag = s & (sp->nflags - 1);
        if (dfa >= lx->ndfa)
            goto no;
        for (uint32_t c = 0; c < lx->nclasses; c++) {
            uint32_t t = gm_lexer_move(lx, dfa, c);
            if (t != GM_LEX_DEAD && number(m, nb, states, t << sp->flag_bits | flag, &nomem) == UINT32_MAX)
                goto no;
        }
    }
    /* Then number them in the order of bytes (the lexers' byte classes differ). */
    memset(nb->slot, 0xff, sizeof nb->slot);
    states->n = 0;
    if (number(m, nb, states, q, &nomem) == UINT32_MAX || gm_vec_push(m, key, sp->variant))
        goto fail;
    for (size_t i = 0; i < states->n; i++) {
        uint32_t s = states->v[i], dfa = s >> sp->flag_bits, flag = s & (sp->nflags - 1);
        if (dfa >= lx->ndfa || (!sp->plain && sp->width_block[s] != GM_SPANNER_NONE))
            goto no;
        uint32_t p = sp->slot_prod[s], off = sp->prod_off[p], n = sp->prod_off[p + 1] - off;
        if (gm_vec_reserve(m, key, key->n + 2 + n))
            goto fail;
        key->v[key->n++] = sp->prod_ignored[p];
        key->v[key->n++] = n;
        for (uint32_t j = 0; j < n; j++) {
            if (GM_SEQ_IS_PAIR(sp->prod_terms[off + j]))
                goto no;
            key->v[key->n++] = sp->prod_terms[off + j];
        }
        for (uint32_t c = 0; c < lx->nclasses; c++) {
            uint32_t t = gm_lexer_move(lx, dfa, c), e, r;
            if (t != GM_LEX_DEAD) {
                kind[c] = MOVE;
                a[c] = t << sp->flag_bits | flag;
            } else if (gm_spanner_break(sp, s, c, &e, &r)) {
                /* A break that resumes inside a re-lexed window is the lexer's own. */
                if (r >= sp->nlex || gm_spanner_dfa(sp, r) != 0)
                    goto no;
                kind[c] = BREAK;
                a[c] = e;
                b[c] = gm_spanner_flag(sp, r);
            } else {
                kind[c] = FAIL;
            }
        }
        /* Bytes in order, in runs of equal outcomes. */
        uint32_t run[4] = {0, 0, 0, 0};
        for (unsigned byte = 0; byte < 257; byte++) {
            uint32_t out[3] = {0, 0, 0};
            if (byte < 256) {
                uint32_t c = lx->byte_class[byte];
                out[0] = kind[c];
                if (kind[c] == MOVE) {
                    out[1] = number(m, nb, states, a[c], &nomem);
                    if (out[1] == UINT32_MAX)
                        goto no;
                } else if (kind[c] == BREAK) {
                    out[1] = a[c];
                    out[2] = b[c];
                }
                if (run[0] && !memcmp(run + 1, out, sizeof out)) {
                    run[0]++;
                    continue;
                }
            }
            if (run[0] && (gm_vec_reserve(m, key, key->n + 4) == 0)) {
                memcpy(key->v + key->n, run, sizeof run);
                key->n += 4;
            } else if (run[0]) {
                goto fail;
            }
            run[0] = 1;
            memcpy(run + 1, out, sizeof out);
        }
    }
    gm_mem_free(m, nb);
    return rc;
no:
    if (nomem)
        goto fail;
    gm_mem_free(m, nb);
    return 0;
fail:
    gm_mem_free(m, nb);
    return -1;
}

const gm_walk_template *gm_walkshare_find(gm_walkshare *w, const gm_walk_words *key)
{
    pthread_mutex_lock(&w->lock);
    uint32_t id = gm_intern_find(&w->keys, key->v, key->n * sizeof *key->v);
    const gm_walk_template *t = id == UINT32_MAX ? NULL : w->templates.v[id];
    pthread_mutex_unlock(&w->lock);
    return t;
}

const gm_walk_template *gm_walkshare_add(gm_walkshare *w, const gm_walk_words *key,
                                         gm_walk_template *t)
{
    const gm_walk_template *kept = NULL;
    pthread_mutex_lock(&w->lock);
    uint32_t id;
    int added = 0;
    if (gm_vec_reserve(w->mem, &w->templates, w->templates.n + 1) == 0 &&
        gm_intern_put(&w->keys, key->v, key->n * sizeof *key->v, &id, &added) == 0) {
        if (added) {
            w->templates.v[w->templates.n++] = t;
            w->bytes += key->n * sizeof *key->v + sizeof *t + t->nstays * sizeof *t->stays +
                        t->nbreaks * sizeof *t->breaks;
            kept = t;
        } else {
            kept = w->templates.v[id];
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (kept != t)
        template_free(w->mem, t);
    return kept;
}

size_t gm_walkshare_bytes(gm_walkshare *w)
{
    pthread_mutex_lock(&w->lock);
    size_t n = w->bytes;
    pthread_mutex_unlock(&w->lock);
    return n;
}
