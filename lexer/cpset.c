/* Code point range sets: insertion with merging, union, complement. */
#include "lexer/cpset.h"

#include <string.h>

#include "base/vec.h"

void gm_cpset_free(gm_mem *m, gm_cpset *s)
{
    gm_mem_free(m, s->r);
    s->r = NULL;
    s->n = s->cap = 0;
}

void gm_cpset_clear(gm_cpset *s)
{
    s->n = 0;
}

/* Index of the first range whose hi + 1 >= cp (it may touch or contain cp). */
static size_t lower_bound(const gm_cpset *s, uint32_t cp)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if ((uint64_t)s->r[mid].hi + 1 < cp)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

int gm_cpset_add_range(gm_mem *m, gm_cpset *s, uint32_t lo, uint32_t hi)
{
    if (lo > hi)
        return 0;
    /* Fast path: ranges added in increasing order. */
    if (s->n == 0 || (uint64_t)s->r[s->n - 1].hi + 1 < lo) {
        if (gm_vec_grow_(m, (void **)&s->r, &s->cap, s->n + 1, sizeof *s->r))
            return -1;
        s->r[s->n].lo = lo;
        s->r[s->n].hi = hi;
        s->n++;
        return 0;
    }
    size_t i = lower_bound(s, lo);
    /* Ranges i..j-1 touch or overlap [lo, hi]. */
    size_t j = i;
    while (j < s->n && s->r[j].lo <= (uint64_t)hi + 1)
        j++;
    if (i == j) {
        if (gm_vec_grow_(m, (void **)&s->r, &s->cap, s->n + 1, sizeof *s->r))
            return -1;
        memmove(s->r + i + 1, s->r + i, (s->n - i) * sizeof *s->r);
        s->r[i].lo = lo;
        s->r[i].hi = hi;
        s->n++;
        return 0;
    }
    uint32_t nlo = s->r[i].lo < lo ? s->r[i].lo : lo;
    uint32_t nhi = s->r[j - 1].hi > hi ? s->r[j - 1].hi : hi;
    s->r[i].lo = nlo;
    s->r[i].hi = nhi;
    memmove(s->r + i + 1, s->r + j, (s->n - j) * sizeof *s->r);
    s->n -= j - i - 1;
    return 0;
}

int gm_cpset_add_set(gm_mem *m, gm_cpset *s, const gm_cpset *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (gm_cpset_add_range(m, s, t->r[i].lo, t->r[i].hi))
            return -1;
    return 0;
}

int gm_cpset_copy(gm_mem *m, gm_cpset *dst, const gm_cpset *src)
{
    dst->n = 0;
    if (src->n && gm_vec_grow_(m, (void **)&dst->r, &dst->cap, src->n, sizeof *dst->r))
        return -1;
    if (src->n)
        memcpy(dst->r, src->r, src->n * sizeof *src->r);
    dst->n = src->n;
    return 0;
}

int gm_cpset_negate(gm_mem *m, gm_cpset *s)
{
    /* The complement has at most n + 1 ranges. */
    if (gm_vec_grow_(m, (void **)&s->r, &s->cap, s->n + 1, sizeof *s->r))
        return -1;
    uint32_t next = 0; /* first code point not yet covered */
    size_t out = 0;
    bool end_reached = false;
    for (size_t i = 0; i < s->n; i++) {
        gm_cprange r = s->r[i];
        if (r.lo > next) {
            s->r[out].lo = next;
            s->r[out].hi = r.lo - 1;
            out++;
        }
        if (r.hi >= GM_CP_MAX) {
            end_reached = true;
            break;
        }
        next = r.hi + 1;
    }
    if (!end_reached) {
        s->r[out].lo = next;
        s->r[out].hi = GM_CP_MAX;
        out++;
    }
    s->n = out;
    return 0;
}

bool gm_cpset_has(const gm_cpset *s, uint32_t cp)
{
    size_t i = lower_bound(s, cp);
    return i < s->n && s->r[i].lo <= cp && cp <= s->r[i].hi;
}

bool gm_cpset_equal(const gm_cpset *a, const gm_cpset *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->r, b->r, a->n * sizeof *a->r) == 0);
}

uint32_t gm_cpset_count(const gm_cpset *s)
{
    uint32_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->r[i].hi - s->r[i].lo + 1;
    return n;
}
