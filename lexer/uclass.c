/* Unicode classes and case equivalence from utf8proc (note [Python classes], note [case folding]). */
#include "lexer/uclass.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "src/base/vec.h"

/* Scan bounds, see the notes in uclass.h. */
#define GM_UCLASS_SCAN_END 0x40000u
#define GM_UCASE_SCAN_END 0x20000u

/*
 * Python 3.11's Lib/re/_casefix.py, as (member, smallest member of its
 * group) for every member that is not the smallest: lowercase letters that
 * share an uppercase with another lowercase letter.
 */
static const uint32_t extra_case_key[][2] = {
    {0x0131, 0x0069}, {0x017f, 0x0073}, {0x03b9, 0x0345}, {0x03bc, 0x00b5}, {0x03c3, 0x03c2},
    {0x03d0, 0x03b2}, {0x03d1, 0x03b8}, {0x03d5, 0x03c6}, {0x03d6, 0x03c0}, {0x03f0, 0x03ba},
    {0x03f1, 0x03c1}, {0x03f5, 0x03b5}, {0x1c80, 0x0432}, {0x1c81, 0x0434}, {0x1c82, 0x043e},
    {0x1c83, 0x0441}, {0x1c84, 0x0442}, {0x1c85, 0x0442}, {0x1c86, 0x044a}, {0x1c87, 0x0463},
    {0x1e9b, 0x1e61}, {0x1fbe, 0x0345}, {0x1fd3, 0x0390}, {0x1fe3, 0x03b0}, {0xa64b, 0x1c88},
    {0xfb06, 0xfb05},
};

static uint32_t case_key_of(uint32_t cp)
{
    uint32_t l = (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
    size_t a = 0, b = sizeof extra_case_key / sizeof extra_case_key[0];
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (extra_case_key[mid][0] < l)
            a = mid + 1;
        else
            b = mid;
    }
    return a < sizeof extra_case_key / sizeof extra_case_key[0] && extra_case_key[a][0] == l
               ? extra_case_key[a][1]
               : l;
}

void gm_uclass_init(gm_uclass *uc, gm_mem *m)
{
    memset(uc, 0, sizeof *uc);
    uc->mem = m;
}

void gm_uclass_free(gm_uclass *uc)
{
    gm_cpset_free(uc->mem, &uc->word);
    gm_cpset_free(uc->mem, &uc->digit);
    gm_mem_free(uc->mem, uc->by_cp);
    gm_mem_free(uc->mem, uc->by_key);
    gm_uclass_init(uc, uc->mem);
}

static int load_classes(gm_uclass *uc)
{
    if (uc->classes_loaded)
        return 0;
    gm_cpset_clear(&uc->word);
    gm_cpset_clear(&uc->digit);
    uint32_t wstart = 0, dstart = 0;
    bool in_w = false, in_d = false;
    for (uint32_t cp = 0; cp <= GM_UCLASS_SCAN_END; cp++) {
        bool w = false, d = false;
        if (cp < GM_UCLASS_SCAN_END) {
            int cat = utf8proc_category((utf8proc_int32_t)cp);
            w = (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
                (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO) || cp == '_';
            d = cat == UTF8PROC_CATEGORY_ND;
        }
        if (w != in_w) {
            if (w)
                wstart = cp;
            else if (gm_cpset_add_range(uc->mem, &uc->word, wstart, cp - 1))
                return -1;
            in_w = w;
        }
        if (d != in_d) {
            if (d)
                dstart = cp;
            else if (gm_cpset_add_range(uc->mem, &uc->digit, dstart, cp - 1))
                return -1;
            in_d = d;
        }
    }
    uc->classes_loaded = true;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    return 0;
}

static int load_case(gm_uclass *uc)
{
    if (uc->case_loaded)
        return 0;
    /* Pass 1 counts, pass 2 fills: cased code points plus each key once. */
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t k = 0;
        for (uint32_t cp = 0; cp < GM_UCASE_SCAN_END; cp++) {
            uint32_t key = case_key_of(cp);
            if (key == cp)
                continue;
            if (pass == 1) {
                uc->by_key[2 * k] = key;
                uc->by_key[2 * k + 1] = cp;
            }
            k++;
        }
        if (pass == 0) {
            /* Keys are added after sorting; reserve room for one per cased code point. */
            n = k;
            uc->by_key = gm_mem_calloc(uc->mem, (size_t)2 * n * 2, sizeof *uc->by_key);
            uc->by_cp = gm_mem_calloc(uc->mem, (size_t)2 * n * 2, sizeof *uc->by_cp);
            if (!uc->by_key || !uc->by_cp) {
                gm_mem_free(uc->mem, uc->by_key);
                gm_mem_free(uc->mem, uc->by_cp);
                uc->by_key = uc->by_cp = NULL;
                return -1;
            }
        }
    }
    /* Each key is a member of its own group: add (key, key) once. */
    qsort(uc->by_key, n, 2 * sizeof *uc->by_key, cmp_pair);
    uint32_t total = n;
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && uc->by_key[2 * i] == uc->by_key[2 * (i - 1)])
            continue;
        uc->by_key[2 * total] = uc->by_key[2 * i];
        uc->by_key[2 * total + 1] = uc->by_key[2 * i];
        total++;
    }
    qsort(uc->by_key, total, 2 * sizeof *uc->by_key, cmp_pair);
    for (uint32_t i = 0; i < total; i++) {
        uc->by_cp[2 * i] = uc->by_key[2 * i + 1];
        uc->by_cp[2 * i + 1] = uc->by_key[2 * i];
    }
    qsort(uc->by_cp, total, 2 * sizeof *uc->by_cp, cmp_pair);
    uc->ncase = total;
    uc->case_loaded = true;
    return 0;
}

/* Index of the first pair in arr (sorted on the first field) with first >= x. */
static uint32_t pair_lower_bound(const uint32_t *arr, uint32_t n, uint32_t x)
{
    uint32_t a = 0, b = n;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (arr[2 * mid] < x)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

int64_t gm_uclass_case_key(gm_uclass *uc, uint32_t cp)
{
    if (load_case(uc))
        return -1;
    uint32_t i = pair_lower_bound(uc->by_cp, uc->ncase, cp);
    if (i < uc->ncase && uc->by_cp[2 * i] == cp)
        return uc->by_cp[2 * i + 1];
    return cp;
}

static int add_ascii_space(gm_mem *m, gm_cpset *s)
{
    return gm_cpset_add_range(m, s, '\t', '\r') || gm_cpset_add_range(m, s, ' ', ' ');
}

static int add_unicode_space(gm_mem *m, gm_cpset *s)
{
    static const uint32_t spaces[][2] = {
        {0x09, 0x0d}, {0x1c, 0x20}, {0x85, 0x85}, {0xa0, 0xa0}, {0x1680, 0x1680},
        {0x2000, 0x200a}, {0x2028, 0x2029}, {0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000},
    };
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (gm_cpset_add_range(m, s, spaces[i][0], spaces[i][1]))
            return -1;
    return 0;
}

static int add_positive(gm_uclass *uc, gm_cpset *dst, char which, bool ascii)
{
    gm_mem *m = uc->mem;
    switch (which) {
    case 'd':
        if (ascii)
            return gm_cpset_add_range(m, dst, '0', '9');
        return load_classes(uc) || gm_cpset_add_set(m, dst, &uc->digit);
    case 'w':
        if (ascii)
            return gm_cpset_add_range(m, dst, '0', '9') || gm_cpset_add_range(m, dst, 'A', 'Z') ||
                   gm_cpset_add_range(m, dst, '_', '_') || gm_cpset_add_range(m, dst, 'a', 'z');
        return load_classes(uc) || gm_cpset_add_set(m, dst, &uc->word);
    case 's':
        return ascii ? add_ascii_space(m, dst) : add_unicode_space(m, dst);
    default:
        return -1;
    }
}

int gm_uclass_add_class(gm_uclass *uc, gm_cpset *dst, char which, bool ascii)
{
    if (which >= 'a')
        return add_positive(uc, dst, which, ascii);
    gm_cpset tmp = {0};
    int rc = add_positive(uc, &tmp, (char)(which - 'A' + 'a'), ascii) ||
             gm_cpset_negate(uc->mem, &tmp) || gm_cpset_add_set(uc->mem, dst, &tmp);
    gm_cpset_free(uc->mem, &tmp);
    return rc ? -1 : 0;
}

int gm_uclass_case_close(gm_uclass *uc, gm_cpset *s, bool ascii)
{
    gm_mem *m = uc->mem;
    if (ascii) {
        for (uint32_t c = 'A'; c <= 'Z'; c++)
            if ((gm_cpset_has(s, c) || gm_cpset_has(s, c + 32)) &&
                (gm_cpset_add_range(m, s, c, c) || gm_cpset_add_range(m, s, c + 32, c + 32)))
                return -1;
        return 0;
    }
    if (load_case(uc))
        return -1;
    /* Collect the keys of all cased members of s, then add every member of those groups. */
    GM_VEC(uint32_t) keys = {0};
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        uint32_t j = pair_lower_bound(uc->by_cp, uc->ncase, s->r[i].lo);
        for (; j < uc->ncase && uc->by_cp[2 * j] <= s->r[i].hi; j++)
            if (gm_vec_push(m, &keys, uc->by_cp[2 * j + 1]))
                rc = -1;
    }
    for (size_t i = 0; i < keys.n && !rc; i++) {
        uint32_t j = pair_lower_bound(uc->by_key, uc->ncase, keys.v[i]);
        for (; j < uc->ncase && uc->by_key[2 * j] == keys.v[i]; j++)
            if (gm_cpset_add_range(m, s, uc->by_key[2 * j + 1], uc->by_key[2 * j + 1]))
                rc = -1;
    }
    gm_vec_free(m, &keys);
    return rc;
}
