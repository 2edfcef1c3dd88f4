/*
 * The regexes of tokenizer.json pre-tokenizers and normalizers (Split,
 * Replace): compiled to a small backtracking program over the UTF-8 text,
 * with Oniguruma's meaning, which is what Hugging Face tokenizers runs them
 * with (note [pre-tokenizer regex] in encode_regex.c).
 */
#ifndef GM_SPANNER_ENCODE_REGEX_H
#define GM_SPANNER_ENCODE_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "vocab/encode_chars.h"
#include "base/mem.h"

typedef struct gm_pre_regex gm_pre_regex;

/*
 * Compiles pat[0..n). On GM_ERR_SYNTAX / GM_ERR_UNSUPPORTED, why (cap bytes)
 * says what and at which character; GM_ERR_NOMEM / GM_ERR_LIMIT when an
 * allocation from m failed. *out is freed with gm_pre_regex_destroy.
 */
gm_status gm_pre_regex_compile(gm_mem *m, const char *pat, size_t n, gm_pre_regex **out,
                               char *why, size_t cap);
void gm_pre_regex_destroy(gm_pre_regex *re);

/*
 * gm_pre_regex_compile with flags: GM_PRE_PLAIN turns off what only makes
 * matching faster (note [first sets], note [star], note [known patterns]),
 * for tests that check it changes no match.
 */
enum { GM_PRE_PLAIN = 1 };
gm_status gm_pre_regex_compile_ex(gm_mem *m, const char *pat, size_t n, unsigned flags,
                                  gm_pre_regex **out, char *why, size_t cap);

/* Whether re runs a hand-written matcher (note [known patterns]). */
bool gm_pre_regex_is_known(const gm_pre_regex *re);

/*
 * A backtracking stack and a step budget; one per thread (zero-initialized
 * with its mem set). The budget is shared by every match run with it: the
 * caller sets it in proportion to the whole text, so that a hostile pattern
 * fails with GM_PRE_TOO_LONG instead of running for hours (tokenizers'
 * patterns take a few dozen steps per byte: note [pre-tokenizer regex]).
 */
typedef struct gm_pre_scratch {
    gm_mem *mem;
    uint32_t *stack;          /* (pc, position) pairs */
    size_t cap;
    size_t budget;            /* steps left */
} gm_pre_scratch;

/* The budget to give a text of n bytes. */
#define GM_PRE_BUDGET(n) ((size_t)100000 + (size_t)1000 * (n))

void gm_pre_scratch_free(gm_pre_scratch *sc);

enum {
    GM_PRE_NOMATCH = -1,
    GM_PRE_NOMEM = -2,        /* the stack could not grow */
    GM_PRE_TOO_LONG = -3      /* the backtracking budget ran out (a hostile pattern) */
};

/*
 * The leftmost-first match of re that starts exactly at s[pos] (s is
 * s[0..n), n < 2^31): its end offset, or one of the negative codes above.
 */
long gm_pre_regex_match_at(const gm_pre_regex *re, const uint8_t *s, size_t n, size_t pos,
                           gm_pre_scratch *sc);

/* The length of the character at s[pos] (an ill-formed byte counts as one character). */
size_t gm_pre_char_len(const uint8_t *s, size_t n, size_t pos);

#endif
