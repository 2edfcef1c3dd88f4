/*
 * The cross-grammar cache of one vocabulary (XGrammar 2 §3.3): token-mask
 * cache entries shared by every grammar compiled for the vocabulary.
 */
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"

struct gm_excache {
    gm_mem *mem;
    const gm_vocab_data *v;
    const gm_trie *t;
    pthread_mutex_t lock;
};

gm_status gm_excache_create(gm_mem *m, const gm_vocab_data *v, const gm_trie *t,
                            gm_excache **out, gm_error *err)
{
    *out = NULL;
    gm_excache *x = gm_mem_calloc(m, 1, sizeof *x);
    if (!x)
        return gm_mem_fail(m, err, "the cross-grammar cache");
    x->mem = m;
    x->v = v;
    x->t = t;
    if (pthread_mutex_init(&x->lock, NULL)) {
        gm_mem_free(m, x);
        return gm_error_set(err, GM_ERR_NOMEM, "the cross-grammar cache: cannot create a mutex");
    }
    *out = x;
    return GM_OK;
}

void gm_excache_destroy(gm_excache *x)
{
    if (!x)
        return;
    pthread_mutex_destroy(&x->lock);
    gm_mem_free(x->mem, x);
}
