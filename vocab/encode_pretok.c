/*
 * Hand-written matchers for known pre-tokenizer patterns.
 *
 * note [known patterns]
 * Nearly every byte-level BPE tokenizer splits with one of a few regexes:
 * GPT-2's (also ByteLevel's use_regex), GPT-4's cl100k (Llama 3, DeepSeek
 * V1...), its one-digit variant (Qwen2 and Qwen3) and o200k (GPT-4o,
 * gpt-oss). Even with note [first sets] and note [star], the backtracking
 * engine spends a dozen steps a word on them, most of the encoder's time.
 * So each has a matcher here that decides with a look at one or two
 * characters which alternative wins and scans its runs directly; it is
 * used only for the pattern written exactly as below, and gives what the
 * engine gives (the alternative order, greedy runs, the backtracking of
 * \s*[\r\n]+ and \s+(?!\S), case folding of the contractions, ill-formed
 * bytes as characters of no class): tests/test_encode test_known_patterns
 * compares the two at every position of random texts over characters of
 * every class that matters. Derivations are at each matcher.
 */
#include "vocab/encode_pretok.h"

#include <stdbool.h>
#include <string.h>
#include <utf8proc.h>

#include "vocab/encode_chars.h"
#include "base/utf8.h"

/* What the patterns ask of a character. */
enum {
    P_L = 1,                  /* \p{L} */
    P_N = 2,                  /* \p{N} */
    P_S = 4,                  /* \s */
    P_NL = 8,                 /* \r or \n */
    P_UP = 16,                /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k) */
    P_LO = 32                 /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k) */
};

/* [^\s\p{L}\p{N}]: ill-formed bytes (no class) included */
#define IS_B(p) (((p) & (P_S | P_L | P_N)) == 0)
/* [^\r\n\p{L}\p{N}] */
#define IS_A(p) (((p) & (P_NL | P_L | P_N)) == 0)

/* The properties of ASCII characters: U, W letters by case, D digits, S \s, R \r and \n. */
#define U (P_L | P_UP)
#define W (P_L | P_LO)
#define D P_N
#define S P_S
#define R (P_S | P_NL)
static const uint8_t ascii_props[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, S, R, S, S, R, 0, 0, /* 0x00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    S, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 */
    D, D, D, D, D, D, D, D, D, D, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, /* 0x40 */
    U, U, U, U, U, U, U, U, U, U, U, 0, 0, 0, 0, 0, /* 0x50 */
    0, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, /* 0x60 */
    W, W, W, W, W, W, W, W, W, W, W, 0, 0, 0, 0, 0, /* 0x70 */
};
#undef U
#undef W
#undef D
#undef S
#undef R

static unsigned unicode_props(uint32_t cp)
{
    unsigned p = gm_pre_is_space(cp) ? P_S : 0;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LT:
        return p | P_L | P_UP;
    case UTF8PROC_CATEGORY_LL:
        return p | P_L | P_LO;
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
        return p | P_L | P_UP | P_LO;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
        return p | P_UP | P_LO;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return p | P_N;
    default:
        return p;
    }
}

/* The properties of the character at s[pos] (pos < n) and its length (*cp: UINT32_MAX
   for an ill-formed byte). */
static inline unsigned props_at(const uint8_t *s, size_t n, size_t pos, size_t *len,
                                uint32_t *cp)
{
    unsigned b = s[pos];
    if (b < 0x80) {
        *len = 1;
        *cp = b;
        return ascii_props[b];
    }
    size_t k = gm_utf8_decode(s + pos, n - pos, cp);
    if (k == 0) {
        *len = 1;
        *cp = UINT32_MAX;
        return 0;
    }
    *len = k;
    return unicode_props(*cp);
}

static inline unsigned props(const uint8_t *s, size_t n, size_t pos, size_t *len)
{
    uint32_t cp;
    return props_at(s, n, pos, len, &cp);
}

/* The end of the run of characters with any of `want` from s[p]. */
static size_t run(const uint8_t *s, size_t n, size_t p, unsigned want)
{
    size_t len;
    for (;;) {
        while (p < n && s[p] < 0x80 && (ascii_props[s[p]] & want))
            p++;
        if (p >= n || s[p] < 0x80 || !(props(s, n, p, &len) & want))
            return p;
        p += len;
    }
}

/* The end of the run of [^\s\p{L}\p{N}] from s[p]. */
static size_t run_b(const uint8_t *s, size_t n, size_t p)
{
    size_t len;
    for (;;) {
        while (p < n && s[p] < 0x80 && IS_B(ascii_props[s[p]]))
            p++;
        if (p >= n || s[p] < 0x80 || !IS_B(props(s, n, p, &len)))
            return p;
        p += len;
    }
}

/* The end of the run of \r, \n (and '/' when slash) from s[p]. */
static size_t run_nl(const uint8_t *s, size_t n, size_t p, bool slash)
{
    while (p < n && (s[p] == '\r' || s[p] == '\n' || (slash && s[p] == '/')))
        p++;
    return p;
}

/*
 * 's|'t|'re|'ve|'m|'ll|'d at s[p], under (?i:) when icase (case folding as
 * the engine does it: U+017F long s is an s): its end, or 0.
 */
static size_t contraction(const uint8_t *s, size_t n, size_t p, bool icase)
{
    if (p + 1 >= n || s[p] != '\'')
        return 0;
    size_t l1, l2;
    uint32_t c1, c2 = UINT32_MAX;
    props_at(s, n, p + 1, &l1, &c1);
    if (c1 == UINT32_MAX)
        return 0;
    if (icase)
        c1 = gm_pre_fold(c1);
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
        return p + 1 + l1;
    if (c1 != 'r' && c1 != 'v' && c1 != 'l')
        return 0;
    if (p + 1 + l1 >= n)
        return 0;
    props_at(s, n, p + 1 + l1, &l2, &c2);
    if (c2 == UINT32_MAX)
        return 0;
    if (icase)
        c2 = gm_pre_fold(c2);
    return c2 == (c1 == 'l' ? 'l' : 'e') ? p + 1 + l1 + l2 : 0;
}

/*
 * A run of whitespace from s[pos] (a \s character): the last alternatives
 * of the patterns. \s*[\r\n]+ (when nl) gives back whitespace from the end
 * of the run until it stands before a \r or \n: the match ends after the
 * run's last one. Otherwise \s+(?!\S) takes the run when it ends the text
 * (or before more whitespace: it cannot, the run is whole), else all of
 * it but its last character when that leaves one; else \s+ takes it.
 */
static long spaces(const uint8_t *s, size_t n, size_t pos, bool nl)
{
    size_t e = pos, last = pos, nl_end = 0, len;
    unsigned p;
    while (e < n && ((p = props(s, n, e, &len)) & P_S)) {
        if (p & P_NL)
            nl_end = e + len;
        last = e;
        e += len;
    }
    if (nl && nl_end)
        return (long)nl_end;
    if (e == n || last == pos)
        return (long)e;
    return (long)last;
}

/* \p{N}{1,max} whose first character ends at e: its end. */
static size_t digits(const uint8_t *s, size_t n, size_t e, int max)
{
    for (int k = 1; k < max && e < n; k++) {
        size_t len;
        if (!(props(s, n, e, &len) & P_N))
            break;
        e += len;
    }
    return e;
}

/*
 * The alternatives after the words and digits of cl100k, Qwen2 and o200k:
 * ` ?[^\s\p{L}\p{N}]+` then its line ends (o200k: and '/'), else whitespace.
 * p0, p1: the properties of the characters at pos and after it (has1).
 */
static long punct_or_space(const uint8_t *s, size_t n, size_t pos, unsigned p0, unsigned p1,
                           bool has1, bool slash)
{
    if (s[pos] == ' ' && has1 && IS_B(p1))
        return (long)run_nl(s, n, run_b(s, n, pos + 1), slash);
    if (IS_B(p0))
        return (long)run_nl(s, n, run_b(s, n, pos), slash);
    return spaces(s, n, pos, true);
}

/*
 * cl100k and Qwen2:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *   | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (Qwen2: \p{N} for \p{N}{1,3}). The contraction first; then a letter run,
 * after one character of [^\r\n\p{L}\p{N}] when there is one (the ? tried
 * first) and a letter follows it; digits; an optional space and a run of
 * [^\s\p{L}\p{N}] with the \r \n after it (a space not followed by one
 * gives itself back and the run must start at pos); whitespace. Every
 * character starts one of them.
 */
static long cl100k_like(const uint8_t *s, size_t n, size_t pos, int max_digits)
{
    size_t l0, l1 = 0, e;
    unsigned p0 = props(s, n, pos, &l0), p1 = 0;
    bool has1 = pos + l0 < n;
    if (has1)
        p1 = props(s, n, pos + l0, &l1);
    if (s[pos] == '\'' && (e = contraction(s, n, pos, true)))
        return (long)e;
    if (p0 & P_L)
        return (long)run(s, n, pos + l0, P_L);
    if (IS_A(p0) && has1 && (p1 & P_L))
        return (long)run(s, n, pos + l0 + l1, P_L);
    if (p0 & P_N)
        return (long)digits(s, n, pos + l0, max_digits);
    return punct_or_space(s, n, pos, p0, p1, has1, false);
}

static long cl100k(const uint8_t *s, size_t n, size_t pos)
{
    return pos < n ? cl100k_like(s, n, pos, 3) : GM_PRE_KNOWN_NOMATCH;
}

static long qwen2(const uint8_t *s, size_t n, size_t pos)
{
    return pos < n ? cl100k_like(s, n, pos, 1) : GM_PRE_KNOWN_NOMATCH;
}

/*
 * [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ from s[p]
 * (o200k's words, "upper" U and "lower" W, which share Lm, Lo and M): U*
 * takes its whole run, then gives back characters until W+ can start: at
 * the run's end when a W follows (an Ll), else at the run's last character
 * that is also a W, which W+ takes alone (what follows it in the run is
 * Lu or Lt). Its end, or 0 when no W is found.
 */
static size_t upper_lower(const uint8_t *s, size_t n, size_t p)
{
    size_t e = p, last_w = 0, len;
    unsigned q = 0;
    while (e < n && ((q = props(s, n, e, &len)) & P_UP)) {
        if (q & P_LO)
            last_w = e + len;
        e += len;
    }
    if (e < n && (q & P_LO))
        return run(s, n, e, P_LO);
    return last_w;
}

/*
 * o200k:
 *   [^\r\n\p{L}\p{N}]?U*W+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   |[^\r\n\p{L}\p{N}]?U+W*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * with U and W as above. The first two: with the optional character taken
 * (when it is one) then without, U*W+ (upper_lower) or U+W*, and the
 * contraction when one follows (the ? takes it first, and what follows can
 * not fail). The rest as in cl100k, with '/' after the punctuation run.
 */
static long o200k(const uint8_t *s, size_t n, size_t pos)
{
    if (pos >= n)
        return GM_PRE_KNOWN_NOMATCH;
    size_t l0, l1 = 0, e = 0, c;
    unsigned p0 = props(s, n, pos, &l0), p1 = 0;
    bool has1 = pos + l0 < n;
    if (has1)
        p1 = props(s, n, pos + l0, &l1);
    if (IS_A(p0) && has1)
        e = upper_lower(s, n, pos + l0);
    if (!e)
        e = upper_lower(s, n, pos);
    if (!e) {
        if (IS_A(p0) && has1 && (p1 & P_UP))
            e = run(s, n, run(s, n, pos + l0, P_UP), P_LO);
        else if (p0 & P_UP)
            e = run(s, n, run(s, n, pos, P_UP), P_LO);
    }
    if (e)
        return (long)((c = contraction(s, n, e, true)) ? c : e);
    if (p0 & P_N)
        return (long)digits(s, n, pos + l0, 3);
    return punct_or_space(s, n, pos, p0, p1, has1, true);
}

/*
 * GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * The contraction (case matters); then each run after an optional space
 * (taken when the run's class follows it); whitespace.
 */
static long gpt2(const uint8_t *s, size_t n, size_t pos)
{
    if (pos >= n)
        return GM_PRE_KNOWN_NOMATCH;
    size_t l0, l1 = 0, e;
    unsigned p0 = props(s, n, pos, &l0), p1 = 0;
    bool sp = s[pos] == ' ' && pos + 1 < n;
    if (sp)
        p1 = props(s, n, pos + 1, &l1);
    if (s[pos] == '\'' && (e = contraction(s, n, pos, false)))
        return (long)e;
    if (sp && (p1 & P_L))
        return (long)run(s, n, pos + 1, P_L);
    if (p0 & P_L)
        return (long)run(s, n, pos, P_L);
    if (sp && (p1 & P_N))
        return (long)run(s, n, pos + 1, P_N);
    if (p0 & P_N)
        return (long)run(s, n, pos, P_N);
    if (sp && IS_B(p1))
        return (long)run_b(s, n, pos + 1);
    if (IS_B(p0))
        return (long)run_b(s, n, pos);
    return spaces(s, n, pos, false);
}

static const struct {
    const char *pattern;
    gm_pre_known_fn fn;
} known[] = {
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
     "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     cl100k},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
     "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     qwen2},
    {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
     "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
     "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     o200k},
    {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", gpt2},
};

gm_pre_known_fn gm_pre_known(const char *pat, size_t len)
{
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strlen(known[i].pattern) == len && !memcmp(known[i].pattern, pat, len))
            return known[i].fn;
    return NULL;
}
