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

/*
 * note [excluded texts]
 * Texts avoiding several strings W_1..W_n (an XML value's closing tag and a
 * model family's special tokens, dispatch/stag.c note [special texts in free
 * text]): when every W_i begins with the same character w and none holds w
 * anywhere else (the tags and tokens of every preset: "<tool_call>",
 * "</parameter>", "<｜tool▁sep｜>"), a failed attempt at matching leaves a
 * partial match of length 1 when the character is w, else 0, as above. With
 * the trie of the W_i less their first character (a node is a proper prefix
 * that holds no W_i; a W_i ends at a leaf, the longer W_j through it dropped),
 * from a node u:
 *     R(u) = w | c R(v)        for each child v of u by c  (a new attempt)
 *     E(u) = N(C(u) + w) | c E(v)                          (the attempt fails)
 *     F(u) = "" | c F(v)                                   (the text ends in it)
 * with C(u) the characters of u's children, those that end a W_i included;
 * the texts are ( N(w) | w R(root)* E(root) )* ( w R(root)* F(root) )?.
 * Other sets are refused (GM_ERR_UNSUPPORTED), as one string is above.
 */
enum { MAX_TRIE = 1024, MAX_TEXTS = 64 };

typedef struct trie {
    uint32_t cp[MAX_TRIE];     /* the character into the node */
    uint32_t child[MAX_TRIE];  /* first child, or 0 */
    uint32_t next[MAX_TRIE];   /* next sibling, or 0 */
    bool leaf[MAX_TRIE];       /* a W_i ends here */
    uint32_t n;
} trie;

static uint32_t one_char(sctx *c, uint32_t cp)
{
    uint8_t buf[4];
    size_t k = gm_utf8_encode(buf, cp);
    return gm_irb_bytes(&c->b, buf, k);
}

/* (recursion: as deep as the longest text, MAX_EXCLUDED characters) */
static uint32_t r_of(sctx *c, const trie *t, uint32_t u, uint32_t w)
{
    uint32_t alts[MAX_TEXTS + 2];
    size_t n = 0;
    alts[n++] = one_char(c, w);
    for (uint32_t v = t->child[u]; v; v = t->next[v])
        if (!t->leaf[v])
            alts[n++] = gm_irb_seq2(&c->b, one_char(c, t->cp[v]), r_of(c, t, v, w));
    return gm_irb_alt(&c->b, alts, n);
}

static uint32_t e_of(sctx *c, const trie *t, uint32_t u, uint32_t w)
{
    uint32_t alts[MAX_TEXTS + 2], x[MAX_TEXTS + 2];
    size_t n = 0, nx = 0;
    x[nx++] = w;
    for (uint32_t v = t->child[u]; v; v = t->next[v])
        x[nx++] = t->cp[v];
    alts[n++] = other(c, x, nx);
    for (uint32_t v = t->child[u]; v; v = t->next[v])
        if (!t->leaf[v])
            alts[n++] = gm_irb_seq2(&c->b, one_char(c, t->cp[v]), e_of(c, t, v, w));
    return gm_irb_alt(&c->b, alts, n);
}

static uint32_t f_of(sctx *c, const trie *t, uint32_t u)
{
    uint32_t alts[MAX_TEXTS + 2];
    size_t n = 0;
    alts[n++] = gm_irb_empty(&c->b);
    for (uint32_t v = t->child[u]; v; v = t->next[v])
        if (!t->leaf[v])
            alts[n++] = gm_irb_seq2(&c->b, one_char(c, t->cp[v]), f_of(c, t, v));
    return gm_irb_alt(&c->b, alts, n);
}

static uint32_t excluding_all(sctx *c)
{
    gm_irb *b = &c->b;
    trie *t = gm_mem_calloc(c->mem, 1, sizeof *t);
    if (!t)
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory building a grammar");
    t->n = 1;
    uint32_t w = 0;
    uint32_t node = GM_EX_NONE;
    if (c->n_raw_excludes > MAX_TEXTS) {
        gm_irb_fail(b, GM_ERR_LIMIT, "strings that avoid %zu texts: at most %d",
                    c->n_raw_excludes, MAX_TEXTS);
        goto out;
    }
    for (size_t i = 0; i < c->n_raw_excludes; i++) {
        const char *s = c->raw_excludes[i];
        size_t len = strlen(s), nchars = 0;
        uint32_t u = 0;
        bool through_leaf = false;
        for (size_t at = 0; at < len;) {
            uint32_t cp;
            size_t k = gm_utf8_decode((const uint8_t *)s + at, len - at, &cp);
            bool first = at == 0;
            if (!k || nchars == MAX_EXCLUDED || cp < 0x20 || cp == '"' || cp == '\\' ||
                (first && i && cp != w) || (!first && cp == w)) {
                gm_irb_fail(b, GM_ERR_UNSUPPORTED, "strings that avoid \"%s\" and \"%s\": only "
                            "texts that begin with one same character and hold it nowhere else, "
                            "of up to %d characters a string may hold unescaped (note [excluded "
                            "texts])", c->raw_excludes[0], s, MAX_EXCLUDED);
                goto out;
            }
            at += k;
            nchars++;
            if (first) {
                w = cp;
                continue;
            }
            if (t->leaf[u]) {
                through_leaf = true; /* a shorter W_j is a prefix: it ends first */
                break;
            }
            uint32_t v = t->child[u];
            while (v && t->cp[v] != cp)
                v = t->next[v];
            if (!v) {
                if (t->n == MAX_TRIE) {
                    gm_irb_fail(b, GM_ERR_LIMIT, "strings that avoid %zu texts: more than %d "
                                "characters in all", c->n_raw_excludes, MAX_TRIE);
                    goto out;
                }
                v = t->n++;
                t->cp[v] = cp;
                t->next[v] = t->child[u];
                t->child[u] = v;
            }
            u = v;
        }
        if (!through_leaf && nchars < 2) {
            gm_irb_fail(b, GM_ERR_UNSUPPORTED, "strings that avoid \"%s\": only a text of two "
                        "characters or more", s);
            goto out;
        }
        if (!through_leaf) {
            t->leaf[u] = true;
            t->child[u] = 0; /* longer texts through it end here first */
        }
    }
    uint32_t first = one_char(c, w);
    uint32_t restarts = gm_irb_repeat(b, r_of(c, t, 0, w), 0, GM_EX_INF);
    uint32_t attempt = gm_irb_seq3(b, first, restarts, e_of(c, t, 0, w));
    uint32_t unit = gm_irb_alt2(b, other(c, &w, 1), attempt);
    uint32_t tail = gm_irb_seq3(b, first, restarts, f_of(c, t, 0));
    node = gm_irb_seq2(b, gm_irb_repeat(b, unit, 0, GM_EX_INF), gm_irb_opt(b, tail));
out:
    gm_mem_free(c->mem, t);
    return node;
}

uint32_t sc_excluding_chars(sctx *c)
{
    if (c->n_raw_excludes > 1)
        return excluding_all(c);
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
