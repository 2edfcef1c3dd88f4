/* Growth policy of GM_VEC: doubling, at least 8 elements. */
#include "base/vec.h"

#include <stdint.h>

int gm_vec_grow_(gm_mem *m, void **data, size_t *cap, size_t want, size_t elem)
{
    /* Callers that grow arrays directly (not through gm_vec_reserve) rely on this. */
    if (want <= *cap && *data)
        return 0;
    size_t c = *cap ? *cap : 8;
    while (c < want) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    void *p = gm_mem_reallocarray(m, *data, c, elem);
    if (!p)
        return -1;
    *data = p;
    *cap = c;
    return 0;
}
