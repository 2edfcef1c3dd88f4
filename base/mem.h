/*
 * The one allocation path of gramask. Every object tree owns a gm_mem that
 * wraps the caller's allocator hook, counts the bytes it holds, and enforces
 * gm_limits.max_memory: an allocation past the limit fails like an
 * out-of-memory allocation, and the caller reports GM_ERR_LIMIT.
 *
 * Each block carries a small header with its size so that frees and
 * reallocations keep the count exact. The counter is atomic because lazy
 * caches of a shared compiled grammar allocate from several threads.
 */
#ifndef GM_BASE_MEM_H
#define GM_BASE_MEM_H

#include <stdatomic.h>
#include <stddef.h>

#include "gramask.h"

typedef struct gm_mem {
    gm_realloc_fn fn;     /* never NULL after gm_mem_init */
    void *ud;             /* passed to fn */
    size_t limit;         /* bytes allowed in use at once */
    atomic_size_t used;   /* bytes in use, headers included */
    atomic_size_t peak;   /* high-water mark of used */
    atomic_int over_limit;/* set once an allocation failed on the limit */
    /* Arrays of a read-only file mapping an object points into (base/mapping.h): no
       block of this allocator, so freeing one is a no-op. NULL when none. */
    const char *borrow_lo, *borrow_hi;
    struct gm_mapping *mapping; /* the mapping's reference the object holds, or NULL */
} gm_mem;

/* Initializes from an optional allocator and limit (0 = default limit). */
void gm_mem_init(gm_mem *m, const gm_allocator *allocator, size_t limit);

/* All return NULL on failure (out of memory, over the limit or size overflow). */
void *gm_mem_alloc(gm_mem *m, size_t size);
void *gm_mem_calloc(gm_mem *m, size_t count, size_t size);
void *gm_mem_realloc(gm_mem *m, void *ptr, size_t size);
/* realloc of count*size bytes, with overflow check. */
void *gm_mem_reallocarray(gm_mem *m, void *ptr, size_t count, size_t size);
void gm_mem_free(gm_mem *m, void *ptr);
char *gm_mem_strndup(gm_mem *m, const char *s, size_t n);

/*
 * The status to report after an allocation from m returned NULL:
 * GM_ERR_LIMIT when the memory limit refused it, GM_ERR_NOMEM otherwise.
 * Also fills err (may be NULL) with a message naming `what`.
 */
gm_status gm_mem_fail(gm_mem *m, gm_error *err, const char *what);

#endif
