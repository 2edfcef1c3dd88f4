/* Splitting code point ranges into UTF-8 byte-range sequences (see utf8_ranges.h). */
#include "lexer/utf8_ranges.h"

int gm_utf8_encode_char(uint32_t cp, uint8_t out[4])
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Emits [lo, hi] whose ends have the same encoded length and differ only in a suffix of full continuation ranges. */
static int emit(uint32_t lo, uint32_t hi, int (*fn)(void *, const gm_utf8_seq *), void *ud)
{
    gm_utf8_seq seq;
    uint8_t a[4], b[4];
    int n = gm_utf8_encode_char(lo, a);
    gm_utf8_encode_char(hi, b);
    seq.len = (uint8_t)n;
    for (int i = 0; i < n; i++) {
        seq.lo[i] = a[i];
        seq.hi[i] = b[i];
    }
    return fn(ud, &seq);
}

int gm_utf8_sequences(uint32_t lo, uint32_t hi, int (*fn)(void *ud, const gm_utf8_seq *seq),
                      void *ud)
{
    /* Pending upper parts; processing the lower part first keeps the output ascending. */
    uint32_t stack[32][2];
    int top = 0;
    if (hi > 0x10FFFF)
        hi = 0x10FFFF;
    if (lo > hi)
        return 0;
    /* Surrogates are not scalar values: split them out. */
    if (lo <= 0xDFFF && hi >= 0xD800) {
        if (hi > 0xDFFF) {
            stack[top][0] = 0xE000;
            stack[top][1] = hi;
            top++;
        }
        if (lo < 0xD800) {
            stack[top][0] = lo;
            stack[top][1] = 0xD7FF;
            top++;
        }
    } else {
        stack[top][0] = lo;
        stack[top][1] = hi;
        top++;
    }
    static const uint32_t len_max[3] = {0x7F, 0x7FF, 0xFFFF};
    while (top > 0) {
        top--;
        uint32_t a = stack[top][0], b = stack[top][1];
        for (;;) {
            int split = 0;
            /* Both ends must have the same encoded length. */
            for (int i = 0; i < 3 && !split; i++) {
                if (a <= len_max[i] && b > len_max[i]) {
                    stack[top][0] = len_max[i] + 1;
                    stack[top][1] = b;
                    top++;
                    b = len_max[i];
                    split = 1;
                }
            }
            if (split)
                continue;
            if (b <= 0x7F)
                break;
            /* Then each continuation byte position must range over all of 80-BF or share a prefix. */
            for (int i = 1; i < 4 && !split; i++) {
                uint32_t m = (1u << (6 * i)) - 1;
                if ((a & ~m) != (b & ~m)) {
                    if ((a & m) != 0) {
                        stack[top][0] = (a | m) + 1;
                        stack[top][1] = b;
                        top++;
                        b = a | m;
                        split = 1;
                    } else if ((b & m) != m) {
                        stack[top][0] = b & ~m;
                        stack[top][1] = b;
                        top++;
                        b = (b & ~m) - 1;
                        split = 1;
                    }
                }
            }
            if (!split)
                break;
        }
        int rc = emit(a, b, fn, ud);
        if (rc)
            return rc;
    }
    return 0;
}
