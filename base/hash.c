/* Byte hashing (64-bit multiply-mix over 8-byte words) and the intern table. */
#include "base/hash.h"

#include <string.h>

#include "base/vec.h"

uint64_t gm_hash_bytes(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ gm_hash_mix64(w)) * 0x9e3779b97f4a7c15ULL;
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    if (len)
        memcpy(&w, p, len); /* p may be NULL for an empty key */
    h = (h ^ gm_hash_mix64(w ^ len)) * 0x9e3779b97f4a7c15ULL;
    return gm_hash_mix64(h);
}

void gm_intern_init(gm_intern *t, gm_mem *m)
{
    memset(t, 0, sizeof *t);
    t->mem = m;
}

void gm_intern_free(gm_intern *t)
{
    gm_mem_free(t->mem, t->slots);
    gm_mem_free(t->mem, t->data);
    gm_mem_free(t->mem, t->offsets);
    gm_mem_free(t->mem, t->hashes);
    gm_intern_init(t, t->mem);
}

void gm_intern_clear(gm_intern *t)
{
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
    t->count = 0;
    t->data_len = 0;
}

static int key_equal(const gm_intern *t, uint32_t id, const void *key, size_t len)
{
    size_t a = t->offsets[id], b = t->offsets[id + 1];
    return b - a == len && (len == 0 || memcmp(t->data + a, key, len) == 0);
}

static uint32_t find_slot(const gm_intern *t, uint64_t h, const void *key, size_t len)
{
    size_t mask = t->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint32_t s = t->slots[i];
        if (!s || (t->hashes[s - 1] == h && key_equal(t, s - 1, key, len)))
            return (uint32_t)i;
    }
}

static int rehash(gm_intern *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = gm_mem_calloc(t->mem, n, sizeof *slots);
    if (!slots)
        return -1;
    gm_mem_free(t->mem, t->slots);
    t->slots = slots;
    t->nslots = n;
    for (uint32_t id = 0; id < t->count; id++) {
        size_t i = (size_t)t->hashes[id] & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    return 0;
}

uint32_t gm_intern_find(const gm_intern *t, const void *key, size_t len)
{
    if (!t->nslots)
        return UINT32_MAX;
    uint64_t h = gm_hash_bytes(key, len, 0);
    uint32_t s = t->slots[find_slot(t, h, key, len)];
    return s ? s - 1 : UINT32_MAX;
}

int gm_intern_put(gm_intern *t, const void *key, size_t len, uint32_t *id, int *added)
{
    if (added)
        *added = 0;
    if ((t->count + 1) * 2 > t->nslots && rehash(t))
        return -1;
    uint64_t h = gm_hash_bytes(key, len, 0);
    uint32_t slot = find_slot(t, h, key, len);
    if (t->slots[slot]) {
        *id = t->slots[slot] - 1;
        return 0;
    }
    if (t->count == UINT32_MAX - 1)
        return -1;
    if ((t->count + 2 > t->offsets_cap &&
         gm_vec_grow_(t->mem, (void **)&t->offsets, &t->offsets_cap, t->count + 2, sizeof *t->offsets)) ||
        (t->count + 1 > t->hashes_cap &&
         gm_vec_grow_(t->mem, (void **)&t->hashes, &t->hashes_cap, t->count + 1, sizeof *t->hashes)))
        return -1;
    if (t->data_len + len > t->data_cap &&
        gm_vec_grow_(t->mem, (void **)&t->data, &t->data_cap, t->data_len + len, 1))
        return -1;
    if (t->count == 0)
        t->offsets[0] = 0;
    if (len)
        memcpy(t->data + t->data_len, key, len);
    t->data_len += len;
    t->offsets[t->count + 1] = t->data_len;
    t->hashes[t->count] = h;
    t->slots[slot] = t->count + 1;
    *id = t->count++;
    if (added)
        *added = 1;
    return 0;
}

const void *gm_intern_key(const gm_intern *t, uint32_t id, size_t *len)
{
    *len = t->offsets[id + 1] - t->offsets[id];
    return t->data + t->offsets[id];
}
