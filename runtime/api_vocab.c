/* Public vocabulary objects: loading (vocab/vocab.h) plus the trie, refcounted. */
#include <stdlib.h>
#include <string.h>

#include "runtime/objects.h"
#include "base/mapping.h"
#include "vocab/encoder.h"
#include "base/error.h"

void gm_vocab_options_init_defaults(gm_vocab_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    gm_limits_init_defaults(&opts->limits);
}

static gm_vocab *vocab_new(const gm_vocab_options *opts)
{
    gm_allocator al = opts ? opts->allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_mem boot;
    gm_mem_init(&boot, &al, lim.max_memory);
    /* The object holds its own gm_mem; allocate it with the caller's hook directly. */
    gm_vocab *v = boot.fn(boot.ud, NULL, sizeof *v);
    if (!v)
        return NULL;
    memset(v, 0, sizeof *v);
    gm_mem_init(&v->mem, &al, lim.max_memory);
    atomic_init(&v->refs, 1);
    atomic_init(&v->encoder, NULL);
    pthread_mutex_init(&v->encoder_lock, NULL);
    return v;
}

static void vocab_free(gm_vocab *v)
{
    gm_excache_destroy(atomic_load(&v->excache));
    gm_trie_destroy(v->trie);
    gm_vocab_data_destroy(v->data);
    gm_encoder_destroy(atomic_load(&v->encoder));
    gm_mem_free(&v->mem, v->path);
    pthread_mutex_destroy(&v->encoder_lock);
    gm_realloc_fn fn = v->mem.fn;
    void *ud = v->mem.ud;
    gm_mapping *map = v->mem.mapping; /* note [mapped compiled files]: after the rest */
    fn(ud, v, 0);
    gm_mapping_release(map);
}

static gm_status finish(gm_vocab *v, gm_vocab **out, gm_error *err)
{
    gm_status st = gm_trie_build(&v->mem, v->data, &v->trie, err);
    if (st != GM_OK) {
        vocab_free(v);
        return st;
    }
    *out = v;
    return GM_OK;
}

gm_status gm_vocab_create_from_file(const char *path, const gm_vocab_options *opts,
                                    gm_vocab **out, gm_error *err)
{
    if (!out || !path)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_create_from_file: NULL argument");
    *out = NULL;
    gm_vocab *v = vocab_new(opts);
    if (!v)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a vocabulary");
    gm_vocab_load_options lo = {0};
    if (opts) {
        lo.model_size = opts->model_vocab_size;
        lo.extra_eos = opts->extra_eos_ids;
        lo.nextra_eos = opts->n_extra_eos_ids;
    }
    gm_status st = gm_vocab_load(&v->mem, path, &lo, &v->data, err);
    if (st == GM_OK && v->data->kind != GM_VOCAB_PLAIN)
        st = gm_vocab_set_encoder_path_(v, path, opts && opts->load_encoder, err);
    if (st != GM_OK) {
        vocab_free(v);
        return st;
    }
    return finish(v, out, err);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

gm_status gm_vocab_create_from_tokens(const uint8_t *const *tokens, const size_t *lens,
                                      uint32_t n, const bool *special, const uint32_t *eos_ids,
                                      size_t n_eos, const gm_vocab_options *opts, gm_vocab **out,
                                      gm_error *err)
{
    if (!out || (n && (!tokens || !lens)) || (n_eos && !eos_ids))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_create_from_tokens: NULL argument");
    *out = NULL;
    if (n == 0)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_create_from_tokens: empty vocabulary");
    uint32_t size = opts && opts->model_vocab_size > n ? opts->model_vocab_size : n;
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (lens[i] && !tokens[i])
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "gm_vocab_create_from_tokens: token %u has no bytes pointer", i);
        if (lens[i] > 65535)
            return gm_error_set(err, GM_ERR_LIMIT,
                                "gm_vocab_create_from_tokens: token %u is %zu bytes long (limit 65535)",
                                i, lens[i]);
        total += lens[i];
        if (total > UINT32_MAX)
            return gm_error_set(err, GM_ERR_LIMIT,
                                "gm_vocab_create_from_tokens: tokens hold more than 4 GiB");
    }
    size_t nextra = opts ? opts->n_extra_eos_ids : 0;
    for (size_t i = 0; i < n_eos + nextra; i++) {
        uint32_t id = i < n_eos ? eos_ids[i] : opts->extra_eos_ids[i - n_eos];
        if (id >= n)
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "gm_vocab_create_from_tokens: EOS id %u is out of range", id);
    }
    gm_vocab *v = vocab_new(opts);
    if (!v)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a vocabulary");
    gm_mem *m = &v->mem;
    gm_vocab_data *d = gm_mem_calloc(m, 1, sizeof *d);
    if (!d)
        goto nomem;
    v->data = d;
    d->mem = m;
    d->size = size;
    d->ntokenizer = n;
    d->offsets = gm_mem_calloc(m, (size_t)size + 1, sizeof *d->offsets);
    d->bytes = gm_mem_alloc(m, total ? total : 1);
    d->flags = gm_mem_calloc(m, size, 1);
    d->eos = gm_mem_calloc(m, n_eos + nextra ? n_eos + nextra : 1, sizeof *d->eos);
    if (!d->offsets || !d->bytes || !d->flags || !d->eos)
        goto nomem;
    uint32_t off = 0;
    for (uint32_t i = 0; i < size; i++) {
        d->offsets[i] = off;
        if (i >= n) {
            d->flags[i] = GM_TOK_PADDING;
            continue;
        }
        if (lens[i])
            memcpy(d->bytes + off, tokens[i], lens[i]);
        off += (uint32_t)lens[i];
        if (special && special[i])
            d->flags[i] |= GM_TOK_SPECIAL;
    }
    d->offsets[size] = off;
    for (size_t i = 0; i < n_eos + nextra; i++)
        d->eos[i] = i < n_eos ? eos_ids[i] : opts->extra_eos_ids[i - n_eos];
    qsort(d->eos, n_eos + nextra, sizeof *d->eos, compare_u32);
    for (size_t i = 0; i < n_eos + nextra; i++) {
        if (d->neos && d->eos[d->neos - 1] == d->eos[i])
            continue;
        d->eos[d->neos++] = d->eos[i];
        gm_vocab_mark_eos_(d, d->eos[i]);
    }
    return finish(v, out, err);
nomem:
    {
        gm_status st = gm_mem_fail(m, err, "a vocabulary");
        vocab_free(v);
        return st;
    }
}

gm_vocab *gm_vocab_retain(gm_vocab *v)
{
    if (v)
        atomic_fetch_add(&v->refs, 1);
    return v;
}

void gm_vocab_destroy(gm_vocab *v)
{
    if (v && atomic_fetch_sub(&v->refs, 1) == 1)
        vocab_free(v);
}

uint32_t gm_vocab_size(const gm_vocab *v) { return v ? v->data->size : 0; }

const uint8_t *gm_vocab_token(const gm_vocab *v, uint32_t id, size_t *len)
{
    if (!v || id >= v->data->size) {
        if (len)
            *len = 0;
        return NULL;
    }
    size_t n;
    const uint8_t *p = gm_vocab_data_token(v->data, id, &n);
    if (len)
        *len = n;
    return p;
}

size_t gm_vocab_eos_ids(const gm_vocab *v, const uint32_t **ids)
{
    if (!v) {
        if (ids)
            *ids = NULL;
        return 0;
    }
    if (ids)
        *ids = v->data->eos;
    return v->data->neos;
}

gm_excache *gm_vocab_excache(gm_vocab *v, gm_error *err)
{
    gm_excache *x = atomic_load_explicit(&v->excache, memory_order_acquire);
    if (x)
        return x;
    if (gm_excache_create(&v->mem, v->data, v->trie, &x, err) != GM_OK)
        return NULL;
    gm_excache *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&v->excache, &expected, x, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        /* Another thread made one first: use it. */
        gm_excache_destroy(x);
        x = expected;
    }
    return x;
}
