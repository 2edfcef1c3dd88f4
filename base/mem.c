/* The allocation path: size-prefixed blocks counted against a limit. */
#include "base/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* The header keeps max_align_t alignment for the block that follows. */
typedef union block_header {
    size_t size;
    max_align_t align;
} block_header;

static void *libc_realloc(void *ud, void *ptr, size_t size)
{
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

void gm_mem_init(gm_mem *m, const gm_allocator *allocator, size_t limit)
{
    gm_limits defaults;
    gm_limits_init_defaults(&defaults);
    m->fn = allocator && allocator->realloc ? allocator->realloc : libc_realloc;
    m->ud = allocator ? allocator->ud : NULL;
    m->limit = limit ? limit : defaults.max_memory;
    atomic_init(&m->used, 0);
    atomic_init(&m->peak, 0);
    atomic_init(&m->over_limit, 0);
    m->borrow_lo = m->borrow_hi = NULL;
    m->mapping = NULL;
}

/* Whether ptr lies in the mapping m borrows from (not a block of m). */
static int borrowed(const gm_mem *m, const void *ptr)
{
    return m->borrow_lo && (const char *)ptr >= m->borrow_lo && (const char *)ptr < m->borrow_hi;
}

/* Reserves delta bytes against the limit; false when it would pass it. */
static int reserve(gm_mem *m, size_t delta)
{
    size_t used = atomic_fetch_add(&m->used, delta) + delta;
    if (used > m->limit || used < delta) {
        atomic_fetch_sub(&m->used, delta);
        atomic_store(&m->over_limit, 1);
        return 0;
    }
    size_t peak = atomic_load(&m->peak);
    while (used > peak && !atomic_compare_exchange_weak(&m->peak, &peak, used)) {
    }
    return 1;
}

void *gm_mem_realloc(gm_mem *m, void *ptr, size_t size)
{
    if (size == 0) {
        gm_mem_free(m, ptr);
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(block_header) || borrowed(m, ptr))
        return NULL; /* a mapped array is never resized: its owner copies it first */
    size_t total = size + sizeof(block_header);
    block_header *old = ptr ? (block_header *)ptr - 1 : NULL;
    size_t old_total = old ? old->size + sizeof(block_header) : 0;
    if (total > old_total && !reserve(m, total - old_total))
        return NULL;
    block_header *h = m->fn(m->ud, old, total);
    if (!h) {
        if (total > old_total)
            atomic_fetch_sub(&m->used, total - old_total);
        return NULL;
    }
    if (total < old_total)
        atomic_fetch_sub(&m->used, old_total - total);
    h->size = size;
    return h + 1;
}

void *gm_mem_alloc(gm_mem *m, size_t size)
{
    return gm_mem_realloc(m, NULL, size ? size : 1);
}

void *gm_mem_calloc(gm_mem *m, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t n = count * size;
    void *p = gm_mem_alloc(m, n);
    if (p)
        memset(p, 0, n ? n : 1);
    return p;
}

void *gm_mem_reallocarray(gm_mem *m, void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t n = count * size;
    return gm_mem_realloc(m, ptr, n ? n : 1);
}

void gm_mem_free(gm_mem *m, void *ptr)
{
    if (!ptr || borrowed(m, ptr))
        return;
    block_header *h = (block_header *)ptr - 1;
    atomic_fetch_sub(&m->used, h->size + sizeof(block_header));
    m->fn(m->ud, h, 0);
}

char *gm_mem_strndup(gm_mem *m, const char *s, size_t n)
{
    char *p = gm_mem_alloc(m, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

gm_status gm_mem_fail(gm_mem *m, gm_error *err, const char *what)
{
    if (atomic_load(&m->over_limit)) {
        gm_error_set(err, GM_ERR_LIMIT, "memory limit of %zu bytes reached while building %s",
                     m->limit, what);
        return GM_ERR_LIMIT;
    }
    gm_error_set(err, GM_ERR_NOMEM, "out of memory while building %s", what);
    return GM_ERR_NOMEM;
}
