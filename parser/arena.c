/* The front end's bump allocator: chunks from gm_mem, freed all at once. */
#include "parser/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

struct gm_arena_chunk {
    gm_arena_chunk *prev;
    max_align_t align[]; /* the chunk's bytes follow */
};

enum { ARENA_CHUNK = 64 * 1024 };

void gm_arena_init(gm_arena *a, gm_mem *m)
{
    memset(a, 0, sizeof *a);
    a->mem = m;
}

void gm_arena_free(gm_arena *a)
{
    gm_arena_chunk *c = a->chunks;
    while (c) {
        gm_arena_chunk *prev = c->prev;
        gm_mem_free(a->mem, c);
        c = prev;
    }
    a->chunks = NULL;
    a->next = NULL;
    a->left = 0;
}

void *gm_arena_alloc(gm_arena *a, size_t size)
{
    const size_t al = alignof(max_align_t);
    if (size > SIZE_MAX / 2)
        return NULL;
    size = (size + al - 1) & ~(al - 1);
    if (size == 0)
        size = al;
    if (size > a->left) {
        /* Big requests get a chunk of their own, so the current one keeps its space. */
        size_t bytes = size > ARENA_CHUNK / 4 ? size : ARENA_CHUNK;
        gm_arena_chunk *c = gm_mem_alloc(a->mem, sizeof *c + bytes);
        if (!c)
            return NULL;
        if (bytes == size && a->chunks) {
            c->prev = a->chunks->prev;
            a->chunks->prev = c;
            memset(c->align, 0, size);
            return c->align;
        }
        c->prev = a->chunks;
        a->chunks = c;
        a->next = (char *)c->align;
        a->left = bytes;
    }
    void *p = a->next;
    a->next += size;
    a->left -= size;
    memset(p, 0, size);
    return p;
}

void *gm_arena_array(gm_arena *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return gm_arena_alloc(a, count * size);
}

char *gm_arena_strndup(gm_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = gm_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int gm_arena_grow(gm_arena *a, void **v, size_t *cap, size_t want, size_t elem, size_t used)
{
    if (want <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    void *nv = gm_arena_array(a, ncap, elem);
    if (!nv)
        return -1;
    if (used)
        memcpy(nv, *v, used * elem);
    *v = nv;
    *cap = ncap;
    return 0;
}
