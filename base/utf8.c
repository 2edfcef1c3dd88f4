/* Strict UTF-8 decoding (RFC 3629) and encoding. */
#include "base/utf8.h"

size_t gm_utf8_decode(const uint8_t *s, size_t len, uint32_t *cp)
{
    if (len == 0)
        return 0;
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4 || n > len)
        return 0;
    uint32_t v = c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10ffff)) ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

size_t gm_utf8_encode(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xc0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xe0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (uint8_t)(0xf0 | cp >> 18);
    o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

unsigned gm_utf8_step(unsigned state, uint8_t b)
{
    /* states: 1-3 need that many continuation bytes (80-BF); 4-7 are the first
       continuation after E0 (A0-BF), ED (80-9F), F0 (90-BF), F4 (80-8F) */
    switch (state) {
    case GM_UTF8_START:
        if (b < 0x80)
            return GM_UTF8_START;
        if (b >= 0xc2 && b <= 0xdf)
            return 1;
        if (b == 0xe0)
            return 4;
        if (b == 0xed)
            return 5;
        if (b >= 0xe1 && b <= 0xef)
            return 2;
        if (b == 0xf0)
            return 6;
        if (b >= 0xf1 && b <= 0xf3)
            return 3;
        if (b == 0xf4)
            return 7;
        return GM_UTF8_DEAD;
    case 1:
    case 2:
    case 3: return b >= 0x80 && b <= 0xbf ? state - 1 : GM_UTF8_DEAD;
    case 4: return b >= 0xa0 && b <= 0xbf ? 1 : GM_UTF8_DEAD;
    case 5: return b >= 0x80 && b <= 0x9f ? 1 : GM_UTF8_DEAD;
    case 6: return b >= 0x90 && b <= 0xbf ? 2 : GM_UTF8_DEAD;
    case 7: return b >= 0x80 && b <= 0x8f ? 2 : GM_UTF8_DEAD;
    default: return GM_UTF8_DEAD;
    }
}
