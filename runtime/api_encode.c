/* gm_vocab_encode: the vocabulary's text encoder, built once from its tokenizer file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/objects.h"
#include "vocab/encoder.h"
#include "base/error.h"

/* The encoder of v, built from v->path on the first call (thread-safe). */
static gm_status get_encoder(const gm_vocab *cv, const gm_encoder **out, gm_error *err)
{
    gm_vocab *v = (gm_vocab *)cv; /* the lazy encoder is a cache: logically const */
    gm_encoder *e = atomic_load(&v->encoder);
    if (e) {
        *out = e;
        return GM_OK;
    }
    if (!v->path)
        return gm_error_set(err, GM_ERR_UNSUPPORTED,
                            "this vocabulary cannot encode text: it was not loaded from a "
                            "tokenizer.json (encoding needs its merges and pre-tokenizer)");
    gm_status st = GM_OK;
    pthread_mutex_lock(&v->encoder_lock);
    e = atomic_load(&v->encoder);
    if (!e) {
        st = gm_encoder_load(&v->mem, v->path, &e, err);
        if (st == GM_OK)
            st = gm_encoder_check(e, v->data, v->path, err);
        if (st == GM_OK) {
            atomic_store(&v->encoder, e);
        } else {
            gm_encoder_destroy(e);
            e = NULL;
        }
    }
    pthread_mutex_unlock(&v->encoder_lock);
    *out = e;
    return st;
}

gm_status gm_vocab_set_encoder_path_(gm_vocab *v, const char *path, bool now, gm_error *err)
{
    struct stat sb;
    bool dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    size_t n = strlen(path) + sizeof "/tokenizer.json";
    v->path = gm_mem_alloc(&v->mem, n);
    if (!v->path)
        return gm_mem_fail(&v->mem, err, "the vocabulary");
    snprintf(v->path, n, dir ? "%s/tokenizer.json" : "%s", path);
    const gm_encoder *e;
    return now ? get_encoder(v, &e, err) : GM_OK;
}

gm_status gm_vocab_encode(const gm_vocab *v, const char *text, size_t len,
                          const gm_encode_options *opts, uint32_t **ids, size_t *n_ids,
                          gm_error *err)
{
    if (!ids || !n_ids)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_encode: NULL ids or n_ids");
    *ids = NULL;
    *n_ids = 0;
    if (!v || (!text && len))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_encode: NULL argument");
    const gm_encoder *e;
    gm_status st = get_encoder(v, &e, err);
    if (st != GM_OK)
        return st;
    gm_u32vec out = {0};
    st = gm_encoder_run(e, (const uint8_t *)text, len, !(opts && opts->special_as_text), &out,
                        err);
    if (st != GM_OK) {
        gm_vec_free(e->mem, &out);
        return st;
    }
    *ids = out.v;
    *n_ids = out.n;
    return GM_OK;
}

void gm_vocab_free_ids(const gm_vocab *v, uint32_t *ids)
{
    if (v && ids)
        gm_mem_free((gm_mem *)&v->mem, ids);
}
