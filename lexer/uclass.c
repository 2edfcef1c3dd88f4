/* Unicode classes and case equivalence (note [Python classes], note [case folding]). */
#include "lexer/uclass.h"

#include "lexer/unicode_tables.h"
#include "base/vec.h"

void gm_uclass_init(gm_uclass *uc, gm_mem *m)
{
    uc->mem = m;
}

void gm_uclass_free(gm_uclass *uc)
{
    (void)uc;
}

const char *gm_uclass_unicode_version(void)
{
    return gm_unicode_version;
}

/* Index of the first pair (sorted on the first field) with first >= x. */
static size_t pair_lower_bound(const uint32_t (*arr)[2], size_t n, uint32_t x)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (arr[mid][0] < x)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

uint32_t gm_uclass_case_key(const gm_uclass *uc, uint32_t cp)
{
    (void)uc;
    size_t i = pair_lower_bound(gm_unicode_case_by_cp, gm_unicode_case_n, cp);
    return i < gm_unicode_case_n && gm_unicode_case_by_cp[i][0] == cp ? gm_unicode_case_by_cp[i][1] : cp;
}

static int add_table(gm_mem *m, gm_cpset *s, const uint32_t (*t)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gm_cpset_add_range(m, s, t[i][0], t[i][1]))
            return -1;
    return 0;
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
    return add_table(m, s, spaces, sizeof spaces / sizeof spaces[0]);
}

static int add_positive(gm_uclass *uc, gm_cpset *dst, char which, bool ascii)
{
    gm_mem *m = uc->mem;
    switch (which) {
    case 'd':
        if (ascii)
            return gm_cpset_add_range(m, dst, '0', '9');
        return add_table(m, dst, gm_unicode_digit, gm_unicode_digit_n);
    case 'w':
        if (ascii)
            return gm_cpset_add_range(m, dst, '0', '9') || gm_cpset_add_range(m, dst, 'A', 'Z') ||
                   gm_cpset_add_range(m, dst, '_', '_') || gm_cpset_add_range(m, dst, 'a', 'z');
        return add_table(m, dst, gm_unicode_word, gm_unicode_word_n);
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
    /* Collect the keys of all cased members of s, then add every member of those groups. */
    GM_VEC(uint32_t) keys = {0};
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        size_t j = pair_lower_bound(gm_unicode_case_by_cp, gm_unicode_case_n, s->r[i].lo);
        for (; j < gm_unicode_case_n && gm_unicode_case_by_cp[j][0] <= s->r[i].hi; j++)
            if (gm_vec_push(m, &keys, gm_unicode_case_by_cp[j][1]))
                rc = -1;
    }
    for (size_t i = 0; i < keys.n && !rc; i++) {
        size_t j = pair_lower_bound(gm_unicode_case_by_key, gm_unicode_case_n, keys.v[i]);
        for (; j < gm_unicode_case_n && gm_unicode_case_by_key[j][0] == keys.v[i]; j++)
            if (gm_cpset_add_range(m, s, gm_unicode_case_by_key[j][1], gm_unicode_case_by_key[j][1]))
                rc = -1;
    }
    gm_vec_free(m, &keys);
    return rc;
}
