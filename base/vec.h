/*
 * Growable arrays: GM_VEC(T) declares a struct { T *v; size_t n, cap; }.
 * Zero-initialized vectors are empty and valid. gm_vec_push and
 * gm_vec_reserve evaluate to 0 on success and -1 when allocation failed
 * (the vector is unchanged then).
 */
#ifndef GM_BASE_VEC_H
#define GM_BASE_VEC_H

#include <stddef.h>

#include "base/mem.h"

#define GM_VEC(T) struct { T *v; size_t n, cap; }

int gm_vec_grow_(gm_mem *m, void **data, size_t *cap, size_t want, size_t elem);

#define gm_vec_reserve(m, vec, want) \
    ((want) <= (vec)->cap ? 0 : gm_vec_grow_((m), (void **)&(vec)->v, &(vec)->cap, (want), sizeof *(vec)->v))

#define gm_vec_push(m, vec, x) \
    (gm_vec_reserve((m), (vec), (vec)->n + 1) ? -1 : ((vec)->v[(vec)->n++] = (x), 0))

#define gm_vec_free(m, vec) \
    (gm_mem_free((m), (vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)

#endif
