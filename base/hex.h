/*
 * The value of a hexadecimal digit, for the escape readers of every front
 * end (Lark, regexes, EBNF, JSON Schema patterns and URIs, vocabularies).
 */
#ifndef GM_BASE_HEX_H
#define GM_BASE_HEX_H

/* 0..15 for 0-9, a-f, A-F; -1 for anything else (c: a byte value or a char). */
static inline int gm_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
