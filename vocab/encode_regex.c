/*
 * The pre-tokenizer regexes of tokenizer.json, matched the way Hugging Face
 * tokenizers matches them.
 *
 * note [pre-tokenizer regex]
 * tokenizers runs Split and Replace patterns with Oniguruma (Ruby syntax,
 * UTF-8): a backtracking engine, so alternation is ordered (the first
 * alternative that leads to a match wins, not the longest) and lookahead
 * such as `\s+(?!\S)` steps back one character. Those are the semantics
 * the token ids depend on, so this is a backtracking engine too: the
 * pattern compiles to a program (CHAR, CLASS, SPLIT with a preferred and an
 * alternative branch, JMP, lookahead and atomic sub-programs) run with an
 * explicit stack of (pc, position) pairs. Classes follow Oniguruma's
 * Unicode meaning: \p{L} \p{Lu} ... \p{N} \p{M} \p{P} \p{S} \p{Z} \p{C} are
 * general categories (from utf8proc); \s is White_Space (\t-\r, space,
 * U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
 * U+3000); \d is Nd; \w is Alphabetic, M, Nd and Pc; `.` is anything but \n.
 * (?i:...) compares characters by simple case folding (so `(?i:'s)` also
 * takes the long s U+017F, as Oniguruma does).
 * Text that is not UTF-8 (which tokenizers never sees: its input is a
 * Rust str) is matched byte by byte, each ill-formed byte a character of
 * no category: it matches `.` and negated classes only.
 * Supported syntax: literals and escapes (\t \n \r \f \v \e \a \xHH
 * \x{H...} \uHHHH, escaped punctuation), classes with ranges, negation and
 * class escapes, groups (...) (?:...) (?i:...) (?-i:...) (?i) (?<name>...),
 * lookahead (?=...) (?!...), atomic groups (?>...), quantifiers ? * + {n}
 * {n,} {n,m} with lazy (?) and possessive (+) forms, ^ $ \A \z. Anything
 * else (lookbehind, backreferences, \b, script properties) is
 * GM_ERR_UNSUPPORTED naming the character. The engine has a step budget
 * (proportional to the text) so a hostile pattern fails instead of hanging:
 * 1000 steps per byte, where the pre-tokenizers of llama3, qwen3 and
 * gpt-oss take 15-25 on the corpus (at most 28 on a file).
 *
 * note [first sets]
 * Most alternatives of a pre-tokenizer pattern fail on their first
 * character (`'s` on a letter, `\p{N}` on a space...), and a backtracking
 * engine pays for each: the push, the dispatch, the failure, the pop. So
 * every instruction gets the set of characters a match from it can start
 * with (the ASCII ones as a bitmap, "some non-ASCII character" as one
 * flag), or "anything" when it may go on without consuming (assertions,
 * lookahead, the end). A SPLIT takes a branch only when the character at
 * the position is in its set, and pushes the other only when that one
 * can start there too; a branch left out would have failed on that very
 * character, so the match found (and its order of trial) is the same, in
 * fewer steps. The sets are the least fixpoint over SPLIT and JMP edges;
 * a pattern whose fixpoint does not settle in a few passes (deeply nested
 * empty loops) is matched without them.
 *
 * note [star]
 * A greedy x* or x+ whose x is one character (a class, mostly: \p{L}+,
 * \s*) is one STAR instruction, not SPLIT / x / JMP per character: it
 * consumes while x matches, pushing at each position what the SPLIT would
 * have pushed (the continuation, when it can start there), and goes on
 * with the continuation. The stack, and so every later step, is the
 * SPLIT loop's; each character still costs a step of the budget.
 */
#include "vocab/encode_regex.h"
#include "vocab/encode_pretok.h"

_Static_assert((int)GM_PRE_KNOWN_NOMATCH == (int)GM_PRE_NOMATCH, "known matchers answer as the engine");

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

#include "base/utf8.h"
#include "base/vec.h"

enum {
    OP_CHAR,   /* x: the character (its fold key under icase) */
    OP_CLASS,  /* x: class index */
    OP_ANY,    /* anything but \n */
    OP_SPLIT,  /* try x, then y */
    OP_JMP,    /* x */
    OP_LOOK,   /* sub-program at pc+1 must match here; then x */
    OP_NLOOK,  /* sub-program at pc+1 must not match here; then x */
    OP_ATOMIC, /* first match of the sub-program at pc+1, never revisited; then x */
    OP_END,    /* end of a sub-program */
    OP_BOL,    /* start of text or after \n */
    OP_EOL,    /* end of text or before \n */
    OP_BOT,    /* \A */
    OP_EOT,    /* \z */
    OP_MATCH,
    OP_STAR    /* greedy loop of the one-character instruction at pc+1; then x
                  (note [star]) */
};

typedef struct rx_inst {
    uint8_t op;
    uint8_t icase;
    uint32_t x, y;
} rx_inst;

enum { IT_RANGE, IT_CATS, IT_SPACE, IT_WORD };

typedef struct rx_item {
    uint8_t kind, neg;
    uint32_t lo, hi;          /* IT_RANGE: lo..hi; IT_CATS: lo = mask of utf8proc categories */
} rx_item;

typedef struct rx_class {
    uint32_t ascii[4];        /* the answer for 0..127, precomputed */
    uint32_t first, count;    /* items[first, first + count) */
    uint8_t neg;
} rx_class;

/*
 * What a match from one instruction can start with (note [first sets]): a
 * set of character classes, the ASCII characters, C_HIGH (a non-ASCII
 * character or an ill-formed byte) and C_END (the end of the text); all of
 * them when the match may go on without consuming.
 */
enum { C_HIGH = 128, C_END = 129 };

typedef struct rx_first {
    uint32_t w[5];
} rx_first;

struct gm_pre_regex {
    gm_mem *mem;
    rx_inst *code;
    size_t ncode;
    rx_class *classes;
    rx_item *items;
    rx_first *first;          /* [ncode] */
    gm_pre_known_fn known;    /* note [known patterns], or NULL */
};

enum { INVALID_BASE = 0x110000 }; /* an ill-formed byte b reads as INVALID_BASE + b */

/* ------------------------------------------------------------------------
 * Characters and classes
 * ------------------------------------------------------------------------ */

static inline uint32_t fetch(const uint8_t *s, size_t n, size_t pos, size_t *len)
{
    if (s[pos] < 0x80) {
        *len = 1;
        return s[pos];
    }
    uint32_t cp;
    size_t k = gm_utf8_decode(s + pos, n - pos, &cp);
    if (k == 0) {
        *len = 1;
        return INVALID_BASE + s[pos];
    }
    *len = k;
    return cp;
}

size_t gm_pre_char_len(const uint8_t *s, size_t n, size_t pos)
{
    size_t len;
    fetch(s, n, pos, &len);
    return len;
}

static uint32_t cat_bit(uint32_t c)
{
    if (c >= INVALID_BASE)
        return 0;
    return 1u << utf8proc_category((utf8proc_int32_t)c);
}

/*
 * \w: Oniguruma's Word property, Alphabetic + M + Nd + Pc. Alphabetic is L,
 * Nl and Other_Alphabetic, which is marks but for the circled and squared
 * Latin letters (So) below.
 */
static bool is_word(uint32_t c)
{
    const uint32_t cats = (1u << UTF8PROC_CATEGORY_LU) | (1u << UTF8PROC_CATEGORY_LL) |
                          (1u << UTF8PROC_CATEGORY_LT) | (1u << UTF8PROC_CATEGORY_LM) |
                          (1u << UTF8PROC_CATEGORY_LO) | (1u << UTF8PROC_CATEGORY_NL) |
                          (1u << UTF8PROC_CATEGORY_MN) | (1u << UTF8PROC_CATEGORY_MC) |
                          (1u << UTF8PROC_CATEGORY_ME) | (1u << UTF8PROC_CATEGORY_ND) |
                          (1u << UTF8PROC_CATEGORY_PC);
    return (cat_bit(c) & cats) || (c >= 0x24b6 && c <= 0x24e9) ||
           (c >= 0x1f130 && c <= 0x1f149) || (c >= 0x1f150 && c <= 0x1f169) ||
           (c >= 0x1f170 && c <= 0x1f189);
}

static bool items_match(const rx_item *it, uint32_t count, uint32_t c)
{
    for (uint32_t i = 0; i < count; i++) {
        bool m;
        switch (it[i].kind) {
        case IT_RANGE: m = c >= it[i].lo && c <= it[i].hi; break;
        case IT_CATS: m = (cat_bit(c) & it[i].lo) != 0; break;
        case IT_WORD: m = is_word(c); break;
        default: m = gm_pre_is_space(c); break;
        }
        if (m != (it[i].neg != 0))
            return true;
    }
    return false;
}

static inline bool class_match(const gm_pre_regex *re, const rx_class *k, uint32_t c)
{
    if (c < 128)
        return (k->ascii[c >> 5] >> (c & 31)) & 1;
    return items_match(re->items + k->first, k->count, c) != (k->neg != 0);
}

static bool class_match_icase(const gm_pre_regex *re, const rx_class *k, uint32_t c)
{
    if (class_match(re, k, c))
        return true;
    if (c >= INVALID_BASE)
        return false;
    uint32_t l = (uint32_t)utf8proc_tolower((utf8proc_int32_t)c);
    uint32_t u = (uint32_t)utf8proc_toupper((utf8proc_int32_t)c);
    return (l != c && class_match(re, k, l)) || (u != c && class_match(re, k, u));
}

/* ------------------------------------------------------------------------
 * Parsing and code generation
 * ------------------------------------------------------------------------ */

typedef struct rx_parser {
    gm_mem *m;
    const char *p;
    size_t n, i;
    GM_VEC(rx_inst) code;
    GM_VEC(rx_class) classes;
    GM_VEC(rx_item) items;
    char *why;
    size_t cap;
    gm_status st;
    int depth;
    bool plain;               /* GM_PRE_PLAIN: no STAR */
} rx_parser;

static int fail(rx_parser *P, gm_status st, const char *what)
{
    if (P->st == GM_OK) {
        P->st = st;
        snprintf(P->why, P->cap, "%s at byte %zu of the pattern", what, P->i + 1);
    }
    return -1;
}

static int nomem(rx_parser *P)
{
    if (P->st == GM_OK)
        P->st = atomic_load(&P->m->over_limit) ? GM_ERR_LIMIT : GM_ERR_NOMEM;
    return -1;
}

static int emit(rx_parser *P, uint8_t op, uint8_t icase, uint32_t x, uint32_t y)
{
    rx_inst in = {op, icase, x, y};
    return gm_vec_push(P->m, &P->code, in) ? nomem(P) : 0;
}

static bool has_target(uint8_t op)
{
    return op == OP_SPLIT || op == OP_JMP || op == OP_LOOK || op == OP_NLOOK ||
           op == OP_ATOMIC || op == OP_STAR;
}

/* Inserts k empty instructions at `at`, shifting what follows and its targets. */
static int insert_at(rx_parser *P, size_t at, size_t k)
{
    if (gm_vec_reserve(P->m, &P->code, P->code.n + k))
        return nomem(P);
    memmove(P->code.v + at + k, P->code.v + at, (P->code.n - at) * sizeof *P->code.v);
    P->code.n += k;
    for (size_t i = at + k; i < P->code.n; i++) {
        rx_inst *in = &P->code.v[i];
        if (has_target(in->op)) {
            if (in->x >= at)
                in->x += (uint32_t)k;
            if (in->op == OP_SPLIT && in->y >= at)
                in->y += (uint32_t)k;
        }
    }
    return 0;
}

/* Appends a copy of block[0..len) (compiled at `from`) at the end, targets moved. */
static int append_copy(rx_parser *P, const rx_inst *block, size_t len, size_t from)
{
    size_t to = P->code.n;
    if (gm_vec_reserve(P->m, &P->code, to + len))
        return nomem(P);
    for (size_t i = 0; i < len; i++) {
        rx_inst in = block[i];
        if (has_target(in.op)) {
            in.x = in.x - (uint32_t)from + (uint32_t)to;
            if (in.op == OP_SPLIT)
                in.y = in.y - (uint32_t)from + (uint32_t)to;
        }
        P->code.v[P->code.n++] = in;
    }
    return 0;
}

static bool at_end(const rx_parser *P) { return P->i >= P->n; }
static char peek(const rx_parser *P) { return P->i < P->n ? P->p[P->i] : '\0'; }

/* Reads one pattern character (UTF-8) at P->i. */
static int read_char(rx_parser *P, uint32_t *cp)
{
    size_t k = gm_utf8_decode((const uint8_t *)P->p + P->i, P->n - P->i, cp);
    if (k == 0)
        return fail(P, GM_ERR_SYNTAX, "the pattern is not UTF-8");
    P->i += k;
    return 0;
}

static int hex_digits(rx_parser *P, size_t min, size_t max, uint32_t *v)
{
    uint32_t x = 0;
    size_t k = 0;
    while (k < max && !at_end(P)) {
        char c = peek(P);
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            break;
        x = x << 4 | (uint32_t)d;
        P->i++;
        k++;
    }
    if (k < min || x > 0x10ffff)
        return fail(P, GM_ERR_SYNTAX, "a bad hexadecimal escape");
    *v = x;
    return 0;
}

/* The utf8proc category mask of a property name (\p{Lu}, \pL ...); 0 if unknown. */
static uint32_t property_mask(const char *s, size_t n)
{
    static const struct { const char *name; uint32_t mask; } props[] = {
#define C(x) (1u << UTF8PROC_CATEGORY_##x)
        {"L", C(LU) | C(LL) | C(LT) | C(LM) | C(LO)}, {"Lu", C(LU)}, {"Ll", C(LL)},
        {"Lt", C(LT)}, {"Lm", C(LM)}, {"Lo", C(LO)},
        {"M", C(MN) | C(MC) | C(ME)}, {"Mn", C(MN)}, {"Mc", C(MC)}, {"Me", C(ME)},
        {"N", C(ND) | C(NL) | C(NO)}, {"Nd", C(ND)}, {"Nl", C(NL)}, {"No", C(NO)},
        {"P", C(PC) | C(PD) | C(PS) | C(PE) | C(PI) | C(PF) | C(PO)}, {"Pc", C(PC)},
        {"Pd", C(PD)}, {"Ps", C(PS)}, {"Pe", C(PE)}, {"Pi", C(PI)}, {"Pf", C(PF)},
        {"Po", C(PO)},
        {"S", C(SM) | C(SC) | C(SK) | C(SO)}, {"Sm", C(SM)}, {"Sc", C(SC)}, {"Sk", C(SK)},
        {"So", C(SO)},
        {"Z", C(ZS) | C(ZL) | C(ZP)}, {"Zs", C(ZS)}, {"Zl", C(ZL)}, {"Zp", C(ZP)},
        {"C", C(CC) | C(CF) | C(CS) | C(CO) | C(CN)}, {"Cc", C(CC)}, {"Cf", C(CF)},
        {"Cs", C(CS)}, {"Co", C(CO)}, {"Cn", C(CN)},
#undef C
    };
    for (size_t i = 0; i < sizeof props / sizeof *props; i++)
        if (strlen(props[i].name) == n && !memcmp(props[i].name, s, n))
            return props[i].mask;
    return 0;
}

static int add_item(rx_parser *P, uint8_t kind, bool neg, uint32_t lo, uint32_t hi)
{
    rx_item it = {kind, neg, lo, hi};
    return gm_vec_push(P->m, &P->items, it) ? nomem(P) : 0;
}

/*
 * After a backslash: a class escape (\s \d \w, upper-case negations,
 * \p{..} \P{..}) is added as an item (returns 1); a character escape sets
 * *cp (returns 0); -1 on error.
 */
static int read_escape(rx_parser *P, uint32_t *cp)
{
    if (at_end(P))
        return fail(P, GM_ERR_SYNTAX, "a pattern ending in a backslash");
    char c = P->p[P->i++];
    switch (c) {
    case 's': case 'S':
        return add_item(P, IT_SPACE, c == 'S', 0, 0) ? -1 : 1;
    case 'd': case 'D':
        return add_item(P, IT_CATS, c == 'D', 1u << UTF8PROC_CATEGORY_ND, 0) ? -1 : 1;
    case 'w': case 'W':
        return add_item(P, IT_WORD, c == 'W', 0, 0) ? -1 : 1;
    case 'p': case 'P': {
        bool neg = c == 'P';
        size_t b, e;
        if (peek(P) == '{') {
            b = ++P->i;
            while (!at_end(P) && peek(P) != '}')
                P->i++;
            if (at_end(P))
                return fail(P, GM_ERR_SYNTAX, "an unclosed \\p{");
            e = P->i++;
            if (e > b && P->p[b] == '^') {
                neg = !neg;
                b++;
            }
        } else {
            b = P->i;
            e = ++P->i;
            if (e > P->n)
                return fail(P, GM_ERR_SYNTAX, "a \\p without a property");
        }
        uint32_t mask = property_mask(P->p + b, e - b);
        if (!mask)
            return fail(P, GM_ERR_UNSUPPORTED,
                        "an unsupported property (only general categories such as L, Lu, N, "
                        "P are)");
        return add_item(P, IT_CATS, neg, mask, 0) ? -1 : 1;
    }
    case 't': *cp = '\t'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    case 'a': *cp = 7; return 0;
    case 'e': *cp = 27; return 0;
    case 'x':
        if (peek(P) == '{') {
            P->i++;
            if (hex_digits(P, 1, 8, cp))
                return -1;
            if (peek(P) != '}')
                return fail(P, GM_ERR_SYNTAX, "an unclosed \\x{");
            P->i++;
            return 0;
        }
        return hex_digits(P, 1, 2, cp) ? -1 : 0;
    case 'u':
        return hex_digits(P, 4, 4, cp) ? -1 : 0;
    default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            P->i--;
            return fail(P, GM_ERR_UNSUPPORTED, "an unsupported escape");
        }
        P->i--;
        return read_char(P, cp) ? -1 : 0;
    }
}

/* Finishes the class whose items start at `first`: precomputes the ASCII answers. */
static int finish_class(rx_parser *P, size_t first, bool neg, uint32_t *index)
{
    rx_class k;
    memset(&k, 0, sizeof k);
    k.first = (uint32_t)first;
    k.count = (uint32_t)(P->items.n - first);
    k.neg = neg;
    for (uint32_t c = 0; c < 128; c++)
        if (items_match(P->items.v + first, k.count, c) != neg)
            k.ascii[c >> 5] |= 1u << (c & 31);
    *index = (uint32_t)P->classes.n;
    return gm_vec_push(P->m, &P->classes, k) ? nomem(P) : 0;
}

static int parse_class(rx_parser *P, uint8_t icase)
{
    P->i++; /* '[' */
    bool neg = false;
    if (peek(P) == '^') {
        neg = true;
        P->i++;
    }
    size_t first = P->items.n;
    bool any = false;
    for (;;) {
        if (at_end(P))
            return fail(P, GM_ERR_SYNTAX, "an unclosed [");
        char c = peek(P);
        if (c == ']' && any) {
            P->i++;
            break;
        }
        if (c == '[')
            return fail(P, GM_ERR_UNSUPPORTED, "a nested class or class operation");
        if (c == '&' && P->i + 1 < P->n && P->p[P->i + 1] == '&')
            return fail(P, GM_ERR_UNSUPPORTED, "a class intersection");
        any = true;
        uint32_t lo;
        if (c == '\\') {
            P->i++;
            int r = read_escape(P, &lo);
            if (r < 0)
                return -1;
            if (r == 1)
                continue;
        } else if (read_char(P, &lo)) {
            return -1;
        }
        uint32_t hi = lo;
        if (peek(P) == '-' && P->i + 1 < P->n && P->p[P->i + 1] != ']') {
            P->i++;
            if (peek(P) == '\\') {
                P->i++;
                int r = read_escape(P, &hi);
                if (r < 0)
                    return -1;
                if (r == 1)
                    return fail(P, GM_ERR_SYNTAX, "a range ending in a class escape");
            } else if (read_char(P, &hi)) {
                return -1;
            }
            if (hi < lo)
                return fail(P, GM_ERR_SYNTAX, "a range out of order");
        }
        if (add_item(P, IT_RANGE, false, lo, hi))
            return -1;
    }
    uint32_t index;
    if (finish_class(P, first, neg, &index))
        return -1;
    return emit(P, OP_CLASS, icase, index, 0);
}

static int parse_alt(rx_parser *P, uint8_t icase);

/* A group after its '(': flags, lookahead, atomic, capturing or not. */
static int parse_group(rx_parser *P, uint8_t icase)
{
    uint8_t op = 0; /* 0: plain group */
    if (peek(P) == '?') {
        P->i++;
        char c = peek(P);
        if (c == ':') {
            P->i++;
        } else if (c == '=' || c == '!' || c == '>') {
            P->i++;
            op = c == '=' ? OP_LOOK : c == '!' ? OP_NLOOK : OP_ATOMIC;
        } else if (c == '<' && P->i + 1 < P->n &&
                   (P->p[P->i + 1] == '=' || P->p[P->i + 1] == '!')) {
            return fail(P, GM_ERR_UNSUPPORTED, "a lookbehind");
        } else if (c == '<' || c == 'P') {
            if (c == 'P')
                P->i++;
            if (peek(P) != '<')
                return fail(P, GM_ERR_UNSUPPORTED, "an unsupported group");
            while (!at_end(P) && peek(P) != '>')
                P->i++;
            if (at_end(P))
                return fail(P, GM_ERR_SYNTAX, "an unclosed group name");
            P->i++;
        } else {
            /* flags: (?i) (?-i) (?i:...) */
            bool on = true, inline_only = false;
            uint8_t f = icase;
            for (;;) {
                c = peek(P);
                if (c == '-') {
                    on = false;
                } else if (c == 'i') {
                    f = on;
                } else if (c == ':') {
                    P->i++;
                    break;
                } else if (c == ')') {
                    inline_only = true;
                    P->i++;
                    break;
                } else {
                    return fail(P, GM_ERR_UNSUPPORTED, "an unsupported group or flag");
                }
                P->i++;
            }
            if (inline_only) /* applies to the rest of the enclosing group */
                return parse_alt(P, f) ? -1 : 1;
            icase = f;
        }
    }
    size_t start = P->code.n;
    if (op && emit(P, op, 0, 0, 0))
        return -1;
    if (parse_alt(P, icase))
        return -1;
    if (peek(P) != ')')
        return fail(P, GM_ERR_SYNTAX, "an unclosed (");
    P->i++;
    if (op) {
        if (emit(P, OP_END, 0, 0, 0))
            return -1;
        P->code.v[start].x = (uint32_t)P->code.n;
    }
    return 0;
}

/*
 * One atom at P->i. Returns 0 (code emitted, may be quantified), 1 (an
 * inline flag group that consumed the rest of the enclosing group), or -1.
 */
static int parse_atom(rx_parser *P, uint8_t icase)
{
    char c = peek(P);
    switch (c) {
    case '(':
        P->i++;
        if (++P->depth > 200)
            return fail(P, GM_ERR_LIMIT, "groups nested too deep");
        {
            int r = parse_group(P, icase);
            P->depth--;
            return r;
        }
    case '[':
        return parse_class(P, icase);
    case '.':
        P->i++;
        return emit(P, OP_ANY, 0, 0, 0);
    case '^':
        P->i++;
        return emit(P, OP_BOL, 0, 0, 0);
    case '$':
        P->i++;
        return emit(P, OP_EOL, 0, 0, 0);
    case '*': case '+': case '?': case '{':
        return fail(P, GM_ERR_SYNTAX, "a quantifier with nothing to repeat");
    case '\\': {
        if (P->i + 1 < P->n && (P->p[P->i + 1] == 'A' || P->p[P->i + 1] == 'z')) {
            P->i += 2;
            return emit(P, P->p[P->i - 1] == 'A' ? OP_BOT : OP_EOT, 0, 0, 0);
        }
        P->i++;
        size_t first = P->items.n;
        uint32_t cp;
        int r = read_escape(P, &cp);
        if (r < 0)
            return -1;
        if (r == 1) {
            uint32_t index;
            if (finish_class(P, first, false, &index))
                return -1;
            return emit(P, OP_CLASS, icase, index, 0);
        }
        return emit(P, OP_CHAR, icase, icase ? gm_pre_fold(cp) : cp, 0);
    }
    default: {
        uint32_t cp;
        if (read_char(P, &cp))
            return -1;
        return emit(P, OP_CHAR, icase, icase ? gm_pre_fold(cp) : cp, 0);
    }
    }
}

static int read_count(rx_parser *P, uint32_t *v)
{
    uint32_t x = 0;
    size_t k = 0;
    while (!at_end(P) && peek(P) >= '0' && peek(P) <= '9') {
        x = x * 10 + (uint32_t)(peek(P) - '0');
        if (x > 1000)
            return fail(P, GM_ERR_LIMIT, "a repeat count over 1000");
        P->i++;
        k++;
    }
    *v = x;
    return k ? 0 : 1;
}

/* Is there a {n}, {n,}, {n,m} at P->i? Reads it (min, max; max UINT32_MAX = none). */
static int read_braces(rx_parser *P, uint32_t *min, uint32_t *max)
{
    size_t save = P->i;
    P->i++;
    int r = read_count(P, min);
    if (r < 0)
        return -1;
    if (r == 1) {
        P->i = save;
        return 1; /* a literal '{' */
    }
    *max = *min;
    if (peek(P) == ',') {
        P->i++;
        r = read_count(P, max);
        if (r < 0)
            return -1;
        if (r == 1)
            *max = UINT32_MAX;
    }
    if (peek(P) != '}') {
        P->i = save;
        return 1;
    }
    P->i++;
    if (*max < *min)
        return fail(P, GM_ERR_SYNTAX, "a repeat {n,m} with m < n");
    return 0;
}

/* Applies the quantifier at P->i (if any) to the code emitted since `start`. */
static int quantify(rx_parser *P, size_t start)
{
    uint32_t min, max;
    char c = peek(P);
    if (c == '*') {
        min = 0, max = UINT32_MAX;
        P->i++;
    } else if (c == '+') {
        min = 1, max = UINT32_MAX;
        P->i++;
    } else if (c == '?') {
        min = 0, max = 1;
        P->i++;
    } else if (c == '{') {
        int r = read_braces(P, &min, &max);
        if (r)
            return r < 0 ? -1 : 0;
    } else {
        return 0;
    }
    bool lazy = false, possessive = false;
    if (peek(P) == '?') {
        lazy = true;
        P->i++;
    } else if (peek(P) == '+') {
        possessive = true;
        P->i++;
    }
    size_t len = P->code.n - start;
    rx_inst block[64];
    rx_inst *copy = len <= 64 ? block : gm_mem_reallocarray(P->m, NULL, len, sizeof *copy);
    if (!copy)
        return nomem(P);
    if (len) /* an empty group emits nothing (and the code may have no array yet) */
        memcpy(copy, P->code.v + start, len * sizeof *copy);
    P->code.n = start;
    int rc = 0;
    for (uint32_t k = 0; k < min && !rc; k++)
        rc = append_copy(P, copy, len, start);
    bool one = len == 1 && !P->plain &&
               (copy[0].op == OP_CHAR || copy[0].op == OP_CLASS || copy[0].op == OP_ANY);
    if (!rc && max == UINT32_MAX && one && !lazy) {
        /* STAR out; body; out: (note [star]) */
        rc = emit(P, OP_STAR, 0, (uint32_t)P->code.n + 2, 0) || append_copy(P, copy, len, start);
    } else if (!rc && max == UINT32_MAX) {
        /* L: SPLIT body, out; body; JMP L */
        size_t l = P->code.n;
        rc = emit(P, OP_SPLIT, 0, 0, 0) || append_copy(P, copy, len, start) ||
             emit(P, OP_JMP, 0, (uint32_t)l, 0);
        if (!rc) {
            uint32_t body = (uint32_t)l + 1, out = (uint32_t)P->code.n;
            P->code.v[l].x = lazy ? out : body;
            P->code.v[l].y = lazy ? body : out;
        }
    } else if (!rc && max > min) {
        size_t nopt = max - min;
        size_t *splits = gm_mem_reallocarray(P->m, NULL, nopt, sizeof *splits);
        if (!splits)
            rc = nomem(P);
        for (size_t k = 0; k < nopt && !rc; k++) {
            splits[k] = P->code.n;
            rc = emit(P, OP_SPLIT, 0, 0, 0) || append_copy(P, copy, len, start);
        }
        if (!rc) {
            uint32_t out = (uint32_t)P->code.n;
            for (size_t k = 0; k < nopt; k++) {
                uint32_t body = (uint32_t)splits[k] + 1;
                P->code.v[splits[k]].x = lazy ? out : body;
                P->code.v[splits[k]].y = lazy ? body : out;
            }
        }
        gm_mem_free(P->m, splits);
    }
    if (copy != block)
        gm_mem_free(P->m, copy);
    if (rc)
        return -1;
    if (possessive) {
        if (insert_at(P, start, 1) || emit(P, OP_END, 0, 0, 0))
            return -1;
        P->code.v[start] = (rx_inst){OP_ATOMIC, 0, (uint32_t)P->code.n, 0};
    }
    if (P->code.n > 1u << 20)
        return fail(P, GM_ERR_LIMIT, "a pattern over a million instructions");
    return 0;
}

/* A sequence of quantified atoms, up to '|', ')' or the end. */
static int parse_seq(rx_parser *P, uint8_t icase)
{
    while (!at_end(P) && peek(P) != '|' && peek(P) != ')') {
        size_t start = P->code.n;
        int r = parse_atom(P, icase);
        if (r < 0)
            return -1;
        if (r == 1)
            return 0;
        if (quantify(P, start))
            return -1;
    }
    return 0;
}

static int parse_alt(rx_parser *P, uint8_t icase)
{
    size_t jumps[256];
    size_t njumps = 0;
    for (;;) {
        size_t branch = P->code.n;
        if (parse_seq(P, icase))
            return -1;
        if (peek(P) != '|')
            break;
        P->i++;
        if (njumps == sizeof jumps / sizeof *jumps)
            return fail(P, GM_ERR_LIMIT, "more than 256 alternatives in one group");
        if (insert_at(P, branch, 1))
            return -1;
        jumps[njumps++] = P->code.n;
        if (emit(P, OP_JMP, 0, 0, 0))
            return -1;
        P->code.v[branch] = (rx_inst){OP_SPLIT, 0, (uint32_t)branch + 1, (uint32_t)P->code.n};
    }
    for (size_t k = 0; k < njumps; k++)
        P->code.v[jumps[k]].x = (uint32_t)P->code.n;
    return 0;
}

static inline void first_add(rx_first *f, unsigned c) { f->w[c >> 5] |= 1u << (c & 31); }

/* The set of one instruction alone (SPLIT, JMP, STAR: empty, filled by first_sets). */
static rx_first first_of(const gm_pre_regex *re, const rx_inst *in)
{
    rx_first f;
    memset(&f, 0, sizeof f);
    switch (in->op) {
    case OP_CHAR:
        for (uint32_t c = 0; c < 128; c++)
            if (in->icase ? gm_pre_fold(c) == in->x : c == in->x)
                first_add(&f, c);
        if (in->icase || in->x >= 128) /* under icase, non-ASCII may fold to ASCII */
            first_add(&f, C_HIGH);
        break;
    case OP_CLASS: {
        const rx_class *k = &re->classes[in->x];
        bool high = k->neg || in->icase;
        for (uint32_t i = 0; i < k->count && !high; i++) {
            const rx_item *it = &re->items[k->first + i];
            high = it->kind != IT_RANGE || it->neg || it->hi >= 128;
        }
        if (high)
            first_add(&f, C_HIGH);
        for (uint32_t c = 0; c < 128; c++)
            if (in->icase ? class_match_icase(re, k, c) : class_match(re, k, c))
                first_add(&f, c);
        break;
    }
    case OP_ANY:
        for (unsigned c = 0; c < 128; c++)
            if (c != '\n')
                first_add(&f, c);
        first_add(&f, C_HIGH);
        break;
    case OP_SPLIT:
    case OP_JMP:
    case OP_STAR:
        break;
    default: /* assertions, lookahead, atomic groups, the end: everything */
        memset(f.w, 0xff, sizeof f.w);
        break;
    }
    return f;
}

static bool first_union(rx_first *dst, const rx_first *a)
{
    bool changed = false;
    for (int i = 0; i < 5; i++) {
        changed |= (a->w[i] | dst->w[i]) != dst->w[i];
        dst->w[i] |= a->w[i];
    }
    return changed;
}

/* t, or where the chain of JMPs from t leads (a few links at most). */
static uint32_t thread_jumps(const gm_pre_regex *re, uint32_t t)
{
    for (int k = 0; k < 64 && re->code[t].op == OP_JMP; k++)
        t = re->code[t].x;
    return t;
}

/* Targets that are JMPs go to the JMPs' targets: fewer steps, and a STAR sees its end. */
static void thread_all(gm_pre_regex *re)
{
    for (size_t pc = 0; pc < re->ncode; pc++) {
        rx_inst *in = &re->code[pc];
        if (has_target(in->op))
            in->x = thread_jumps(re, in->x);
        if (in->op == OP_SPLIT)
            in->y = thread_jumps(re, in->y);
    }
}

/* The first sets of note [first sets]: the least fixpoint over SPLIT, JMP and STAR. */
static void first_sets(gm_pre_regex *re)
{
    for (size_t pc = 0; pc < re->ncode; pc++)
        re->first[pc] = first_of(re, &re->code[pc]);
    bool changed = true;
    /* edges mostly go forward, so a backward sweep settles in a pass or two */
    for (int pass = 0; pass < 16 && changed; pass++) {
        changed = false;
        for (size_t pc = re->ncode; pc-- > 0;) {
            const rx_inst *in = &re->code[pc];
            rx_first *f = &re->first[pc];
            if (in->op == OP_SPLIT)
                changed |= first_union(f, &re->first[in->x]) | first_union(f, &re->first[in->y]);
            else if (in->op == OP_JMP)
                changed |= first_union(f, &re->first[in->x]);
            else if (in->op == OP_STAR)
                changed |= first_union(f, &re->first[pc + 1]) | first_union(f, &re->first[in->x]);
        }
    }
    if (changed) /* not settled: no pruning */
        for (size_t pc = 0; pc < re->ncode; pc++)
            memset(re->first[pc].w, 0xff, sizeof re->first[pc].w);
}

/* Can a match from pc start with c (char_class_at)? */
static inline bool can_start(const gm_pre_regex *re, uint32_t pc, unsigned c)
{
    return (re->first[pc].w[c >> 5] >> (c & 31)) & 1;
}

static inline unsigned char_class_at(const uint8_t *s, size_t n, size_t pos)
{
    return pos >= n ? C_END : s[pos] < 0x80 ? s[pos] : C_HIGH;
}

gm_status gm_pre_regex_compile(gm_mem *m, const char *pat, size_t n, gm_pre_regex **out,
                               char *why, size_t cap)
{
    return gm_pre_regex_compile_ex(m, pat, n, 0, out, why, cap);
}

gm_status gm_pre_regex_compile_ex(gm_mem *m, const char *pat, size_t n, unsigned flags,
                                  gm_pre_regex **out, char *why, size_t cap)
{
    *out = NULL;
    if (cap)
        why[0] = '\0';
    rx_parser P;
    memset(&P, 0, sizeof P);
    P.m = m;
    P.p = pat;
    P.n = n;
    P.why = why;
    P.cap = cap;
    P.plain = flags & GM_PRE_PLAIN;
    if (parse_alt(&P, 0) == 0 && !at_end(&P))
        fail(&P, GM_ERR_SYNTAX, "an unmatched )");
    if (P.st == GM_OK)
        emit(&P, OP_MATCH, 0, 0, 0);
    gm_pre_regex *re = P.st == GM_OK ? gm_mem_calloc(m, 1, sizeof *re) : NULL;
    if (P.st == GM_OK && !re)
        nomem(&P);
    if (P.st != GM_OK) {
        gm_vec_free(m, &P.code);
        gm_vec_free(m, &P.classes);
        gm_vec_free(m, &P.items);
        return P.st;
    }
    re->mem = m;
    re->code = P.code.v;
    re->ncode = P.code.n;
    re->classes = P.classes.v;
    re->items = P.items.v;
    re->first = gm_mem_reallocarray(m, NULL, re->ncode, sizeof *re->first);
    if (!re->first) {
        gm_pre_regex_destroy(re);
        nomem(&P);
        return P.st;
    }
    if (P.plain) {
        memset(re->first, 0xff, re->ncode * sizeof *re->first);
    } else {
        thread_all(re);
        first_sets(re);
        re->known = gm_pre_known(pat, n);
    }
    *out = re;
    return GM_OK;
}

bool gm_pre_regex_is_known(const gm_pre_regex *re) { return re->known != NULL; }

void gm_pre_regex_destroy(gm_pre_regex *re)
{
    if (!re)
        return;
    gm_mem_free(re->mem, re->code);
    gm_mem_free(re->mem, re->classes);
    gm_mem_free(re->mem, re->items);
    gm_mem_free(re->mem, re->first);
    gm_mem_free(re->mem, re);
}

/* ------------------------------------------------------------------------
 * Matching
 * ------------------------------------------------------------------------ */

void gm_pre_scratch_free(gm_pre_scratch *sc)
{
    gm_mem_free(sc->mem, sc->stack);
    sc->stack = NULL;
    sc->cap = 0;
}

static int grow(gm_pre_scratch *sc)
{
    size_t nc = sc->cap ? sc->cap * 2 : 256;
    uint32_t *ns = gm_mem_reallocarray(sc->mem, sc->stack, nc, sizeof *ns);
    if (!ns)
        return -1;
    sc->stack = ns;
    sc->cap = nc;
    return 0;
}

static inline int push(gm_pre_scratch *sc, size_t *sp, uint32_t pc, size_t pos)
{
    if (*sp + 2 > sc->cap && grow(sc))
        return -1;
    sc->stack[(*sp)++] = pc;
    sc->stack[(*sp)++] = (uint32_t)pos;
    return 0;
}

/* Does the CHAR, CLASS or ANY instruction `in` take character c? */
static inline bool one_char(const gm_pre_regex *re, const rx_inst *in, uint32_t c)
{
    if (in->op == OP_CHAR)
        return in->icase ? gm_pre_fold(c) == in->x : c == in->x;
    if (in->op == OP_CLASS)
        return in->icase ? class_match_icase(re, &re->classes[in->x], c)
                         : class_match(re, &re->classes[in->x], c);
    return c != '\n';
}

/* Runs the program from pc at pos with the stack above `base`; the end position or < 0. */
static long run(const gm_pre_regex *re, const uint8_t *s, size_t n, uint32_t pc, size_t pos,
                gm_pre_scratch *sc, size_t base, size_t *budget)
{
    size_t sp = base;
    for (;;) {
        if (*budget == 0)
            return GM_PRE_TOO_LONG;
        --*budget;
        const rx_inst *in = &re->code[pc];
        size_t len;
        uint32_t c;
        long r;
        switch (in->op) {
        case OP_CHAR:
        case OP_CLASS:
        case OP_ANY:
            if (pos >= n)
                goto fail;
            c = fetch(s, n, pos, &len);
            if (!one_char(re, in, c))
                goto fail;
            pos += len;
            pc++;
            continue;
        case OP_STAR: {
            /* note [star]: the SPLIT loop's steps, without its dispatches; the
               continuation being the end, what it would push is never popped */
            bool done = re->code[in->x].op == OP_MATCH || re->code[in->x].op == OP_END;
            while (pos < n) {
                c = fetch(s, n, pos, &len);
                if (!one_char(re, in + 1, c))
                    break;
                if (*budget == 0)
                    return GM_PRE_TOO_LONG;
                --*budget;
                if (!done && can_start(re, in->x, char_class_at(s, n, pos)) &&
                    push(sc, &sp, in->x, pos))
                    return GM_PRE_NOMEM;
                pos += len;
            }
            pc = in->x;
            continue;
        }
        case OP_SPLIT: {
            /* note [first sets]: only the branches that can start here */
            unsigned cc = char_class_at(s, n, pos);
            if (!can_start(re, in->x, cc)) {
                if (!can_start(re, in->y, cc))
                    goto fail;
                pc = in->y;
                continue;
            }
            if (can_start(re, in->y, cc) && push(sc, &sp, in->y, pos))
                return GM_PRE_NOMEM;
            pc = in->x;
            continue;
        }
        case OP_JMP:
            pc = in->x;
            continue;
        case OP_LOOK:
        case OP_NLOOK:
        case OP_ATOMIC:
            r = run(re, s, n, pc + 1, pos, sc, sp, budget);
            if (r < GM_PRE_NOMATCH)
                return r;
            if ((in->op == OP_NLOOK) == (r >= 0))
                goto fail;
            if (in->op == OP_ATOMIC)
                pos = (size_t)r;
            pc = in->x;
            continue;
        case OP_BOL:
            if (pos > 0 && s[pos - 1] != '\n')
                goto fail;
            pc++;
            continue;
        case OP_EOL:
            if (pos < n && s[pos] != '\n')
                goto fail;
            pc++;
            continue;
        case OP_BOT:
            if (pos != 0)
                goto fail;
            pc++;
            continue;
        case OP_EOT:
            if (pos != n)
                goto fail;
            pc++;
            continue;
        default: /* OP_END, OP_MATCH */
            return (long)pos;
        }
    fail:
        if (sp == base)
            return GM_PRE_NOMATCH;
        sp -= 2;
        pc = sc->stack[sp];
        pos = sc->stack[sp + 1];
    }
}

long gm_pre_regex_match_at(const gm_pre_regex *re, const uint8_t *s, size_t n, size_t pos,
                           gm_pre_scratch *sc)
{
    if (re->known)
        return re->known(s, n, pos);
    if (!can_start(re, 0, char_class_at(s, n, pos)))
        return GM_PRE_NOMATCH;
    return run(re, s, n, 0, pos, sc, 0, &sc->budget);
}
