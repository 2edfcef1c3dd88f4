/*
 * Unicode data for the regex parser: the \d \w \s classes and case-
 * insensitive matching, as Python 3.11's re defines them. The data comes
 * from utf8proc through tables generated at build time
 * (gen_unicode_tables.c, unicode_tables.h), so using them costs no scan.
 * A gm_uclass only carries the allocator for the sets it fills.
 *
 * note [Python classes]
 * For str patterns Python's re defines (checked exhaustively against
 * Python 3.11 / Unicode 14 by tests/test_uclass.c):
 *   \d = general category Nd;
 *   \w = categories L* and N*, plus '_' (str.isalnum() or '_');
 *   \s = the fixed list \t \n \v \f \r \x1c-\x1f space \x85 \xa0 U+1680
 *        U+2000-U+200A U+2028 U+2029 U+202F U+205F U+3000;
 * and under the ASCII flag [0-9], [0-9A-Za-z_], [ \t\n\r\f\v].
 *
 * note [case folding]
 * Python matches a cased character c against d under IGNORECASE when
 * lower(d) is lower(c) or one of the "extra cases" of lower(c) (lowercase
 * letters with the same uppercase, e.g. s and long s, i and dotless i:
 * Lib/re/_casefix.py). That is an equivalence: d ~ c iff K(d) == K(c) with
 * K(x) = min({lower(x)} + extra[lower(x)]). lower() is the simple lowercase
 * mapping; we take it from utf8proc (Unicode 15 in Debian 12) and the extra
 * cases from Python 3.11's table, so the only differences from Python come
 * from characters whose case mappings changed between Unicode 14 and the
 * utf8proc version. Classes \w \d \s are not case-closed (Python tests them
 * on the character or its lowercase, which agree for every character).
 * Under the ASCII flag only A-Z and a-z fold.
 */
#ifndef GM_LEXER_UCLASS_H
#define GM_LEXER_UCLASS_H

#include <stdbool.h>
#include <stdint.h>

#include "lexer/cpset.h"
#include "base/mem.h"

typedef struct gm_uclass {
    gm_mem *mem;         /* allocator of the sets the functions below grow */
} gm_uclass;

void gm_uclass_init(gm_uclass *uc, gm_mem *m);
void gm_uclass_free(gm_uclass *uc);

/*
 * Adds a class escape to dst: which is one of d w s D W S. ascii selects the
 * ASCII definitions. Returns 0, or -1 on allocation failure.
 */
int gm_uclass_add_class(gm_uclass *uc, gm_cpset *dst, char which, bool ascii);

/* Closes s under case-insensitive equivalence (note [case folding]). 0 or -1. */
int gm_uclass_case_close(gm_uclass *uc, gm_cpset *s, bool ascii);

/* The case key K(cp) of note [case folding] (cp itself for uncased ones). */
uint32_t gm_uclass_case_key(const gm_uclass *uc, uint32_t cp);

/* The Unicode version of the tables ("15.0.0"). */
const char *gm_uclass_unicode_version(void);

#endif
