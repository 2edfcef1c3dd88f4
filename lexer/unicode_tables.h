/*
 * Unicode tables generated at build time from utf8proc by
 * lexer/gen_unicode_tables.c (see uclass.h for what they mean). Read-only.
 */
#ifndef GM_LEXER_UNICODE_TABLES_H
#define GM_LEXER_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

extern const char gm_unicode_version[];               /* utf8proc's Unicode version */
extern const uint32_t gm_unicode_word[][2];           /* \w as sorted inclusive ranges */
extern const size_t gm_unicode_word_n;
extern const uint32_t gm_unicode_digit[][2];          /* \d */
extern const size_t gm_unicode_digit_n;
extern const uint32_t gm_unicode_case_by_key[][2];    /* (key, member), sorted */
extern const uint32_t gm_unicode_case_by_cp[][2];     /* (member, key), sorted */
extern const size_t gm_unicode_case_n;

#endif
