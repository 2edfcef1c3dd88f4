/*
 * The steps every vocabulary loader shares (padding ids, EOS ids,
 * destroying) and decoding ids back to text.
 */
#include "vocab/vocab_data.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"

uint32_t gm_vocab_max_tokens_(const gm_vocab_load_options *opts)
{
    return opts && opts->max_tokens && opts->max_tokens < GM_VOCAB_MAX_TOKENS ? opts->max_tokens
                                                                               : GM_VOCAB_MAX_TOKENS;
}

size_t gm_vocab_max_file_(const gm_vocab_load_options *opts)
{
    return opts && opts->max_file_bytes ? opts->max_file_bytes : GM_VOCAB_DEFAULT_MAX_FILE;
}

gm_vocab_data *gm_vocab_new_(gm_mem *m, uint32_t ntok, size_t bytes_cap)
{
    gm_vocab_data *v = gm_mem_calloc(m, 1, sizeof *v);
    if (!v)
        return NULL;
    v->mem = m;
    v->size = v->ntokenizer = ntok;
    v->offsets = gm_mem_calloc(m, (size_t)ntok + 1, sizeof *v->offsets);
    v->flags = gm_mem_calloc(m, ntok ? ntok : 1, 1);
    v->bytes = gm_mem_alloc(m, bytes_cap ? bytes_cap : 1);
    if (!v->offsets || !v->flags || !v->bytes) {
        gm_vocab_data_destroy(v);
        return NULL;
    }
    return v;
}

void gm_vocab_data_destroy(gm_vocab_data *v)
{
    if (!v)
        return;
    gm_mem *m = v->mem;
    gm_mem_free(m, v->offsets);
    gm_mem_free(m, v->bytes);
    gm_mem_free(m, v->flags);
    gm_mem_free(m, v->eos);
    gm_mem_free(m, v);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

gm_status gm_vocab_finish_(gm_vocab_data *v, const uint32_t *eos, size_t neos,
                           const gm_vocab_load_options *opts, const char *name, gm_error *err)
{
    gm_mem *m = v->mem;
    uint32_t model_size = opts ? opts->model_size : 0;
    if (model_size && model_size < v->ntokenizer)
        return gm_error_set_file(err, GM_ERR_ARGUMENT, name,
                               "the model size %u is smaller than the tokenizer's %u ids",
                               model_size, v->ntokenizer);
    if (model_size > gm_vocab_max_tokens_(opts))
        return gm_error_set_file(err, GM_ERR_LIMIT, name,
                               "the model size %u is over the limit of %u ids", model_size,
                               gm_vocab_max_tokens_(opts));
    if (model_size > v->ntokenizer) {
        uint32_t *off = gm_mem_reallocarray(m, v->offsets, (size_t)model_size + 1, sizeof *off);
        if (!off)
            return gm_mem_fail(m, err, "the vocabulary");
        v->offsets = off;
        uint8_t *fl = gm_mem_realloc(m, v->flags, model_size);
        if (!fl)
            return gm_mem_fail(m, err, "the vocabulary");
        v->flags = fl;
        for (uint32_t i = v->ntokenizer; i < model_size; i++) {
            off[i + 1] = off[v->ntokenizer];
            fl[i] = GM_TOK_PADDING;
        }
        v->size = model_size;
    }
    size_t nextra = opts && opts->extra_eos ? opts->nextra_eos : 0;
    for (size_t i = 0; i < nextra; i++) {
        uint32_t id = opts->extra_eos[i];
        if (i < opts->n_config_eos && opts->config_eos_file && id >= v->ntokenizer)
            return gm_error_set_file(err, GM_ERR_FORMAT, opts->config_eos_file,
                                     "eos_token_id %u is not a token of %s (it has %u ids)", id,
                                     name, v->ntokenizer);
        if (id >= v->size)
            return gm_error_set_file(err, GM_ERR_ARGUMENT, name,
                                   "extra EOS id %u is out of range (the vocabulary has %u ids)",
                                   id, v->size);
        if (v->flags[id] & GM_TOK_PADDING)
            return gm_error_set_file(err, GM_ERR_ARGUMENT, name,
                                   "extra EOS id %u is a padding id", id);
        /* An empty token that is not special is no more a token than padding (the plain
           format writes it as padding, which cannot be EOS). */
        size_t len;
        gm_vocab_data_token(v, id, &len);
        if (len == 0 && !(v->flags[id] & GM_TOK_SPECIAL))
            return gm_error_set_file(err, GM_ERR_ARGUMENT, name,
                                   "extra EOS id %u is an empty token", id);
    }
    size_t total = neos + nextra;
    if (total) {
        v->eos = gm_mem_reallocarray(m, NULL, total, sizeof *v->eos);
        if (!v->eos)
            return gm_mem_fail(m, err, "the vocabulary");
        if (neos)
            memcpy(v->eos, eos, neos * sizeof *eos);
        if (nextra)
            memcpy(v->eos + neos, opts->extra_eos, nextra * sizeof *eos);
        qsort(v->eos, total, sizeof *v->eos, cmp_u32);
        size_t k = 0;
        for (size_t i = 0; i < total; i++)
            if (k == 0 || v->eos[k - 1] != v->eos[i])
                v->eos[k++] = v->eos[i];
        v->neos = (uint32_t)k;
        for (size_t i = 0; i < k; i++)
            gm_vocab_mark_eos_(v, v->eos[i]);
    }
    size_t nbytes = v->offsets[v->size];
    uint8_t *b = gm_mem_realloc(m, v->bytes, nbytes ? nbytes : 1);
    if (b)
        v->bytes = b; /* shrinking failed: keep the larger block */
    return GM_OK;
}

gm_status gm_vocab_decode(const gm_vocab_data *v, const uint32_t *ids, size_t n,
                          gm_strbuf *out, gm_error *err)
{
    size_t start = out->n;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (id >= v->size)
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "token %zu: id %u is out of range (the vocabulary has %u ids)", i,
                                id, v->size);
        if (v->flags[id] & GM_TOK_PADDING)
            return gm_error_set(err, GM_ERR_ARGUMENT, "token %zu: id %u is a padding id", i, id);
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, id, &len);
        gm_strbuf_append(out, (const char *)b, len);
    }
    if (out->failed)
        return gm_mem_fail(out->mem, err, "the decoded text");
    size_t strip = 0;
    while (strip < v->strip_leading && start + strip < out->n && out->s[start + strip] == ' ')
        strip++;
    if (strip) {
        memmove(out->s + start, out->s + start + strip, out->n - start - strip + 1);
        out->n -= strip;
    }
    return GM_OK;
}
