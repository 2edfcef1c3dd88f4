/*
 * libFuzzer target for the Earley front ends: GBNF and XGrammar's EBNF
 * (ir/ebnf_parse.c), a regex as a whole grammar (ir/ebnf_regex.c),
 * the IR check and printer (ir/ebnf.c).
 *
 * Input: byte 0 picks the front end (bits 0-1: 0 GBNF, 1 EBNF, 2 regex,
 * 3 EBNF again); the rest is the text. Checks beyond "no crash, no leak,
 * no hang":
 *   - an error has a message, an expected code, and a line and column
 *     inside the text;
 *   - a grammar that parses prints as ASCII text that parses again (as
 *     EBNF), and printing that gives the same text (a fixed point);
 *   - for small grammars, the reference recognizer (tests/earley_ref.c)
 *     finds the same language before and after printing: the same viable
 *     next bytes and completeness along a short walk driven by the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"

/* The reference recognizer is test code outside libgmcore: compiled in here. */
#include "tests/earley_ref.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(gm_status st, const gm_error *err, const char *text, size_t len)
{
    if (st != GM_ERR_SYNTAX && st != GM_ERR_GRAMMAR && st != GM_ERR_LIMIT &&
        st != GM_ERR_UNSUPPORTED)
        abort();
    if (!err->message[0] || err->code != st)
        abort();
    if (err->line) {
        uint32_t lines = 1;
        for (size_t i = 0; i < len; i++)
            lines += text[i] == '\n';
        if (err->line > lines || err->column == 0 || err->column > len + 1)
            abort();
    }
}

/* Whether the reference recognizer can afford g: few nodes, short Until strings. */
static bool small(const gm_ebnf *g)
{
    if (g->nnodes > 400)
        return false;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == GM_EX_UNTIL) {
            uint32_t total = 0;
            for (uint32_t k = 0; k < g->nodes[i].count; k++)
                total += g->nodes[g->kids[g->nodes[i].first + k]].count;
            if (total > 48)
                return false;
        }
    return true;
}

/* The two grammars agree on the next byte along a walk chosen by the input bytes. */
static void compare_languages(const gm_ebnf *g1, const gm_ebnf *g2, const uint8_t *walk, size_t n)
{
    gm_eref *r1, *r2;
    gm_error err;
    gm_status s1 = gm_eref_create(g1, &r1, &err), s2 = gm_eref_create(g2, &r2, &err);
    if (s1 != s2)
        abort();
    if (s1 != GM_OK) {
        if (s1 != GM_ERR_UNSUPPORTED) /* lookahead assertions only: checked grammars are not empty */
            abort();
        return;
    }
    static uint8_t bytes[256];
    static const uint8_t *ext[256];
    static uint32_t len[256];
    for (int b = 0; b < 256; b++) {
        bytes[b] = (uint8_t)b;
        ext[b] = &bytes[b];
        len[b] = 1;
    }
    for (size_t step = 0; step < 8; step++) {
        uint8_t v1[256], v2[256], c1[256], c2[256];
        gm_eref_try_all(r1, ext, len, 256, v1, c1);
        gm_eref_try_all(r2, ext, len, 256, v2, c2);
        if (memcmp(v1, v2, 256) || memcmp(c1, c2, 256) ||
            gm_eref_accepting(r1) != gm_eref_accepting(r2))
            abort();
        int nv = 0;
        for (int b = 0; b < 256; b++)
            nv += v1[b];
        if (nv == 0)
            break;
        int pick = step < n ? walk[step] % nv : 0, b = 0;
        for (; b < 256; b++)
            if (v1[b] && pick-- == 0)
                break;
        if (!gm_eref_feed(r1, &bytes[b], 1) || !gm_eref_feed(r2, &bytes[b], 1))
            abort();
    }
    gm_eref_destroy(r1);
    gm_eref_destroy(r2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] & 3;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gm_grammar_options opts;
    gm_grammar_options_init_defaults(&opts);
    opts.limits.max_nfa_states = 100000;
    opts.limits.max_regex_repeat = 100;
    opts.limits.max_dfa_states = 2000;
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_error err;
    gm_error_clear(&err);
    gm_status st = mode == 2 ? gm_ebnf_from_regex(&g, "fuzz", text, len, 0, &opts, &err)
                             : gm_ebnf_parse(&g, "fuzz", text, len,
                                             mode == 0 ? GM_EBNF_GBNF : GM_EBNF_XGRAMMAR, &opts, &err);
    if (st != GM_OK) {
        check_error(st, &err, text, len);
    } else {
        gm_strbuf p1, p2;
        gm_strbuf_init(&p1, &m);
        gm_strbuf_init(&p2, &m);
        gm_ebnf_print(&g, &p1);
        if (p1.failed)
            abort();
        for (size_t i = 0; i < p1.n; i++)
            if ((unsigned char)p1.s[i] >= 0x80)
                abort();
        gm_ebnf g2;
        gm_ebnf_init(&g2, &m);
        if (gm_ebnf_parse(&g2, "printed", gm_strbuf_str(&p1), p1.n, GM_EBNF_XGRAMMAR, &opts, &err))
            abort();
        gm_ebnf_print(&g2, &p2);
        if (p1.n != p2.n || memcmp(gm_strbuf_str(&p1), gm_strbuf_str(&p2), p1.n))
            abort();
        if (small(&g) && small(&g2))
            compare_languages(&g, &g2, data + 1, len);
        gm_ebnf_free(&g2);
        gm_strbuf_free(&p1);
        gm_strbuf_free(&p2);
    }
    gm_ebnf_free(&g);
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
