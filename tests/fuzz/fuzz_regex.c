/*
 * libFuzzer target for the regex parser and compiler (lexer/regex_parse.c
 * through minimization) and, for some inputs, the lexer builder.
 *
 * Input: byte 0 chooses flags (bits i s m x a u) and whether to also build
 * a lexer; the rest is the pattern. Checks beyond "no crash, no leak":
 *   - errors carry a message, a known code and a column inside the pattern;
 *   - Hopcroft and Moore give the same minimal DFA;
 *   - the unminimized and minimal DFAs agree on strings derived from the input;
 *   - a regex never accepts ill-formed UTF-8;
 *   - with bit 7 of byte 0 too, Lark-mode backtracking states are added and
 *     the transducer (gm_lexer_step, gm_lexer_break) gives gm_lexer_run's
 *     terminals on the input, and fails where it fails.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "lexer/utf8_ranges.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool valid_utf8(const uint8_t *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        int k = (int)gm_utf8_decode(s + i, n - i, &cp);
        if (!k)
            return false;
        i += (size_t)k;
    }
    return true;
}

static void check_strings(const gm_dfa *raw, const gm_dfa *min, const uint8_t *p, size_t n)
{
    /* Every substring of a short prefix of the input, as candidate texts. */
    size_t lim = n < 24 ? n : 24;
    for (size_t a = 0; a < lim; a++)
        for (size_t b = a; b <= lim; b++) {
            uint32_t x = gm_dfa_match(raw, p + a, b - a), y = gm_dfa_match(min, p + a, b - a);
            if (x != y)
                abort();
            if (y != GM_LEX_NONE && !valid_utf8(p + a, b - a))
                abort();
        }
}

/* Lexemes must tile the input from offset 0 without gaps. */
static gm_status check_lexeme(void *ud, const gm_lexeme *l)
{
    size_t *next = ud;
    if (l->start != *next || l->end <= l->start || l->terminal >= 3)
        abort();
    *next = l->end;
    return GM_OK;
}

typedef struct terms {
    uint32_t v[1024];
    size_t n;
} terms;

static gm_status collect(void *ud, const gm_lexeme *l)
{
    terms *t = ud;
    if (t->n < 1024)
        t->v[t->n++] = l->terminal;
    return GM_OK;
}

/* lexer/lexer.h note [lexer backtracking]: the states against the backtracking run on s. */
static void compare_backtracking(const gm_lexer *lx, const uint8_t *s, size_t n)
{
    gm_error err;
    terms want = {.n = 0}, got = {.n = 0};
    size_t off = 0;
    gm_status st = gm_lexer_run(lx, s, n, collect, &want, &off, &err);
    uint32_t q = 0;
    size_t fail_at = SIZE_MAX;
    for (size_t i = 0; i < n && fail_at == SIZE_MAX; i++) {
        uint32_t em[GM_LEX_MAX_EMIT], nem;
        if (!gm_lexer_step(lx, q, s[i], &q, em, &nem))
            fail_at = i;
        for (uint32_t k = 0; k < nem && fail_at == SIZE_MAX && got.n < 1024; k++)
            got.v[got.n++] = em[k];
    }
    while (fail_at == SIZE_MAX && q != 0 && got.n < 1024) {
        uint32_t t;
        if (!gm_lexer_break(lx, q, lx->nclasses, &t, &q))
            fail_at = n;
        else
            got.v[got.n++] = t;
    }
    if ((st == GM_OK) != (fail_at == SIZE_MAX) || (st != GM_OK && off != fail_at))
        abort();
    if (st == GM_OK && (got.n != want.n || memcmp(got.v, want.v, got.n * sizeof *got.v)))
        abort();
}

/* Adds the backtracking states, then compares on the input and on substrings of its start. */
static void check_backtracking(gm_lexer *lx, const uint8_t *s, size_t n)
{
    gm_error err;
    gm_status st = gm_lexer_add_backtracking(lx, 2000, &err);
    if (st != GM_OK) {
        if ((st != GM_ERR_LIMIT && st != GM_ERR_NOMEM) || !err.message[0])
            abort();
        return;
    }
    compare_backtracking(lx, s, n < 512 ? n : 512);
    size_t lim = n < 24 ? n : 24;
    for (size_t a = 0; a < lim; a++)
        for (size_t b = a + 1; b <= lim; b++)
            compare_backtracking(lx, s + a, b - a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const unsigned bits[] = {GM_RE_IGNORECASE, GM_RE_DOTALL, GM_RE_MULTILINE, GM_RE_VERBOSE,
                                    GM_RE_ASCII, GM_RE_UNICODE};
    unsigned flags = 0;
    for (int i = 0; i < 6; i++)
        if (data[0] & (1u << i))
            flags |= bits[i];
    bool lexer = data[0] & 0x40;
    const char *pat = (const char *)data + 1;
    size_t len = size - 1;

    gm_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_nfa_states = 20000;
    lim.max_dfa_states = 2000;
    lim.max_regex_repeat = 60;
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_error err;
    gm_error_clear(&err);
    gm_dfa min, raw;
    memset(&raw, 0, sizeof raw);
    raw.mem = &m;
    gm_status st = gm_regex_compile(&m, NULL, pat, len, flags, &lim, &min, &raw, NULL, &err);
    if (st == GM_OK) {
        if ((size_t)raw.nstates * raw.nclasses <= 4000) { /* Moore is slow */
            gm_dfa ref;
            if (gm_dfa_minimize_ref(&raw, false, &ref, &err) != GM_OK)
                abort();
            if (ref.nstates != min.nstates || ref.nclasses != min.nclasses ||
                memcmp(ref.next, min.next, (size_t)min.nstates * min.nclasses * sizeof *min.next) ||
                memcmp(ref.label, min.label, min.nstates * sizeof *min.label))
                abort();
            gm_dfa_free(&ref);
        }
        check_strings(&raw, &min, data + 1, len);
        gm_dfa_free(&min);
        gm_dfa_free(&raw);
    } else {
        if (!err.message[0] || err.column > len + 1)
            abort();
        if (st != GM_ERR_SYNTAX && st != GM_ERR_UNSUPPORTED && st != GM_ERR_LIMIT)
            abort();
    }

    if (lexer) {
        /* The pattern as a regex terminal beside the same bytes as a literal and a catch-all. */
        gm_terminal_spec specs[3];
        memset(specs, 0, sizeof specs);
        specs[0].name = "RE";
        specs[0].pattern = pat;
        specs[0].pattern_len = len;
        specs[0].flags = flags;
        specs[1].name = "LIT";
        specs[1].pattern = pat;
        specs[1].pattern_len = len;
        specs[1].flags = flags & GM_RE_IGNORECASE;
        specs[1].is_literal = true;
        specs[2].name = "ANY";
        specs[2].pattern = ".";
        specs[2].pattern_len = 1;
        specs[2].flags = GM_RE_DOTALL;
        specs[2].ignored = true;
        gm_lexer *lx = NULL;
        st = gm_lexer_build(&m, specs, 3, &lim, NULL, NULL, &lx, &err);
        if (st == GM_OK) {
            /* Lexing the input itself ends cleanly or with an error inside it. */
            size_t off = 0, next = 0;
            gm_status rs = gm_lexer_run(lx, data + 1, len, check_lexeme, &next, &off, &err);
            if ((rs == GM_OK && next != len) || (rs != GM_OK && (rs != GM_ERR_REJECTED || off > len)))
                abort();
            if (data[0] & 0x80)
                check_backtracking(lx, data + 1, len);
            gm_lexer_destroy(lx);
        } else if (!err.message[0] || lx) {
            abort();
        }
    }
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
