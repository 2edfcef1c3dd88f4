/* The text of JSON strings that must avoid a given string (note [excluded text]). */
#include <string.h>

#include "base/utf8.h"
#include "schema/emit.h"

/*
 * note [excluded text]
 * A JSON value written as an XML parameter (dispatch/stag_xml.c, note [xml
 * styles]) ends at the parameter's closing tag W: a parser of the rendered
 * turn cuts the value at W's first occurrence, so no string of the value may
 * hold W in its text (its spelling between the quotes; "\u003c/parameter>"
 * is fine). gm_schema_compile_excluding asks that of every string whose
 * characters are free (sc_string_chars: the `string` rule, free-form keys).
 * W's characters are neither '"', '\' nor controls, so an occurrence of W
 * is a run of characters written literally (an escape holds a '\').
 *
 * Let w = W[0], m = |W|, and let no prefix W[0..k), k < m, have a border (a
 * proper prefix that is also its suffix): then after W[0..k) a character
 * other than W[k] leaves a partial match of length 1 when it is w, else 0.
 * The texts avoiding W are
 *     ( N(w) | w R* E )* ( w R* F )?
 *   N(X)  one character written literally but not in X, or any escape;
 *   R     W[1..k) w, for k in 1..m-1 with W[k] != w   (a new attempt begins);
 *   E     W[1..k) N({W[k], w}), for k in 1..m-1        (the attempt fails);
 *   F     W[1..k), for k in 1..m-1                     (the text ends in one).
 * Every closing tag of the XML styles but Kimi K3's qualifies; a W that does
 * not is refused (GM_ERR_UNSUPPORTED), as is one with a character a string
 * must escape.
 */

enum { MAX_EXCLUDED = 64 }; /* characters of W */

/* One character written literally but not in x[0..nx), or any escape. */
static uint32_t other(sctx *c, const uint32_t *x, size_t nx)
{
    gm_irb *b = &c->b;
    gm_cpset lit = {0}, all = {0};
    /* the literal part as ~(x | '"' | '\\' | controls) */
    int rc = gm_cpset_add_range(c->mem, &lit, 0, 0x1F) ||
             gm_cpset_add_range(c->mem, &lit, '"', '"') ||
             gm_cpset_add_range(c->mem, &lit, '\\', '\\') ||
             gm_cpset_add_range(c->mem, &all, 0, 0x10FFFF);
    for (size_t i = 0; i < nx && !rc; i++)
        rc = gm_cpset_add_range(c->mem, &lit, x[i], x[i]);
    if (!rc)
        rc = gm_cpset_negate(c->mem, &lit);
    uint32_t node = rc ? gm_irb_fail(b, GM_ERR_NOMEM, "out of memory building a grammar")
                       : gm_irb_alt2(b, gm_irb_cpset(b, &lit), gm_irb_json_escapes(b, &all));
    gm_cpset_free(c->mem, &lit);
    gm_cpset_free(c->mem, &all);
    return node;
}

/* W[from..to) written literally (UTF-8: the characters' offsets are in at[]). */
static uint32_t part(sctx *c, const size_t *at, size_t from, size_t to)
{
    return gm_irb_bytes(&c->b, c->raw_exclude + at[from], at[to] - at[from]);
}

uint32_t sc_excluding_chars(sctx *c)
{
    gm_irb *b = &c->b;
    const char *s = c->raw_exclude;
    size_t len = strlen(s), m = 0;
    uint32_t w[MAX_EXCLUDED];
    size_t at[MAX_EXCLUDED + 1];
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = gm_utf8_decode((const uint8_t *)s + i, len - i, &cp);
        if (!k || m == MAX_EXCLUDED || cp < 0x20 || cp == '"' || cp == '\\')
            return gm_irb_fail(b, GM_ERR_UNSUPPORTED, "strings that avoid \"%s\": only up to "
                               "%d characters that a string may hold unescaped", s,
                               MAX_EXCLUDED);
        at[m] = i;
        w[m++] = cp;
        i += k;
    }
    at[m] = len;
    if (m < 2)
        return gm_irb_fail(b, GM_ERR_UNSUPPORTED, "strings that avoid \"%s\": only a text of "
                           "two characters or more", s);
    /* no prefix W[0..k) has a border: the failure function is 0 throughout */
    for (size_t k = 2; k < m; k++)
        for (size_t blen = 1; blen < k; blen++)
            if (!memcmp(w, w + k - blen, blen * sizeof *w))
                return gm_irb_fail(b, GM_ERR_UNSUPPORTED, "strings that avoid \"%s\": a "
                                   "prefix of it ends as it begins", s);
    uint32_t first = part(c, at, 0, 1);
    uint32_t rs[MAX_EXCLUDED], es[MAX_EXCLUDED], fs[MAX_EXCLUDED];
    size_t nr = 0, ne = 0, nf = 0;
    for (size_t k = 1; k < m; k++) {
        uint32_t done = part(c, at, 1, k); /* EMPTY for k = 1 */
        if (w[k] != w[0])
            rs[nr++] = gm_irb_seq2(b, done, first);
        uint32_t x[2] = {w[k], w[0]};
        es[ne++] = gm_irb_seq2(b, done, other(c, x, 2));
        fs[nf++] = done;
    }
    uint32_t restarts = gm_irb_repeat(b, gm_irb_alt(b, rs, nr), 0, GM_EX_INF);
    uint32_t attempt = gm_irb_seq3(b, first, restarts, gm_irb_alt(b, es, ne));
    uint32_t unit = gm_irb_alt2(b, other(c, w, 1), attempt);
    uint32_t tail = gm_irb_seq3(b, first, restarts, gm_irb_alt(b, fs, nf));
    return gm_irb_seq2(b, gm_irb_repeat(b, unit, 0, GM_EX_INF), gm_irb_opt(b, tail));
}
