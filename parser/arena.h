/*
 * A bump allocator for the grammar front end's temporary data (syntax trees,
 * definition tables, desugaring work lists). Chunks come from a gm_mem, so
 * limits and failure injection apply; everything is released at once by
 * gm_arena_free, which keeps error paths free of per-object cleanup.
 */
#ifndef GM_PARSER_ARENA_H
#define GM_PARSER_ARENA_H

#include <stddef.h>

#include "base/mem.h"

typedef struct gm_arena_chunk gm_arena_chunk;

typedef struct gm_arena {
    gm_mem *mem;
    gm_arena_chunk *chunks;  /* newest first */
    char *next;              /* free space in the newest chunk */
    size_t left;             /* bytes left there */
} gm_arena;

void gm_arena_init(gm_arena *a, gm_mem *m);
void gm_arena_free(gm_arena *a);

/* Zeroed, max_align_t-aligned memory; NULL on allocation failure (or size overflow). */
void *gm_arena_alloc(gm_arena *a, size_t size);
void *gm_arena_array(gm_arena *a, size_t count, size_t size);
/* A NUL-terminated copy of s[0..n). */
char *gm_arena_strndup(gm_arena *a, const char *s, size_t n);
/*
 * Grows an arena array *v of *cap elements to hold at least want (doubling);
 * the old block is abandoned to the arena. Returns 0, or -1 on failure.
 */
int gm_arena_grow(gm_arena *a, void **v, size_t *cap, size_t want, size_t elem, size_t used);

#endif
