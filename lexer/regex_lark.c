/*
 * The Lark translation: terminal regexes written for Python's backtracking
 * re (lazy quantifiers, lookarounds) rewritten to the regular language
 * whose longest prefix match is the match Lark finds.
 *
 * note [Lark idioms]
 * Lark matches a terminal with Python's re.match on the rest of the text:
 * a backtracking, leftmost-first search that returns the first way the
 * pattern matches, so a lazy `".*?"` ends at the first closing quote.
 * gramask's lexer takes the longest prefix in the terminal's language
 * instead, where the lazy quantifier alone would read as `".*"` and run on
 * to the last quote of the line. gm_regex_parse with GM_RE_LARK_MATCH (the
 * lexer builder sets it for every regex terminal) keeps laziness and
 * lookarounds in the AST, and this pass rewrites the idioms below to
 * languages whose longest prefix is Python's match. Every other lazy
 * quantifier or lookaround is GM_ERR_UNSUPPORTED, naming the construct.
 *
 * Words used below. X: a pattern of exactly one character (., a class, a
 * character, an alternation of those). D: a string of literal characters.
 * "At the tail": the construct ends its alternative and nothing after it
 * in the pattern can fail (what follows are only the ends of groups,
 * alternatives and loops with at most one mandatory iteration), so Python
 * never backtracks into it once it has matched.
 *
 *  1. X*? D at the tail (also X+?, X{m,}?: m copies of X first). Python
 *     takes the shortest run of X followed by D: up to the first D. That
 *     is B D, where B are the strings w of X such that D occurs in w D
 *     only at its end, built from the KMP automaton of D by state
 *     elimination. `".*?"` gives `"[^"\n]*"`; `"""(?:.|\n)*?"""` gives
 *     `"""(?:[^"]|"[^"]|""[^"])*"""`. A character of D outside X can only
 *     be part of the closing D.
 *  2. The escaped-string idiom X*? (?<!\\) (\\\\)*? q at the tail, after a
 *     character that is never a backslash, X containing \ and q (Lark's
 *     common ESCAPED_STRING, `".*?(?<!\\)(\\\\)*?"`). Python takes the
 *     first q preceded by an even run of backslashes, the language
 *     (?:[X minus q and \]|\\X)* q.
 *  3. A lookbehind (?<!S) or (?<=S) over single characters S, right after
 *     a single character that is always outside S (inside S): always
 *     true, dropped. SynCode's LONG_STRING `"""(?<!\\).*?"""`.
 *  4. q (?!qq) X*? q at the tail (SynCode's STRING `"(?!"").*?"`): as 1,
 *     except that the empty string qq is no match when a third q follows.
 *     That looks past the lexeme, which a language cannot say: it becomes
 *     a follow condition (gm_rx_follow: these lexemes, not before q), and
 *     the lexer builder checks that its transducer never ends such a lexeme
 *     before q, because another terminal continues it (LONG_STRING does in
 *     SynCode's Python grammar); otherwise the terminal is an error.
 *  5. A lazy quantifier where nothing at all can follow (the end of the
 *     pattern, not inside a loop): its minimum, X{m}.
 *
 * The translation is exact for the idiom itself. Around it, gramask keeps
 * the one difference it has everywhere: Python's alternation takes the
 * first branch that matches, the lexer the longest. tests/lark_match.py
 * compares every terminal of the SynCode grammars with re.match.
 */
#include "lexer/regex.h"

#include <string.h>

#include "lexer/utf8_ranges.h"
#include "base/error.h"
#include "base/vec.h"

#define NONE UINT32_MAX

enum { MAX_DELIM = 16, MAX_WORD = 256 };

typedef GM_VEC(uint32_t) idvec;

typedef struct tr {
    gm_regex *re;
    gm_error *err;
    gm_status st;
} tr;

/* The items before a construct along its path from the root, innermost last. */
typedef struct seg {
    const struct seg *up;
    const uint32_t *ids;
    size_t n;
} seg;

typedef struct ctx {
    bool tail;        /* nothing after the node can fail */
    bool end;         /* nothing can follow the node */
    bool plain;       /* no loop on the path: `prefix` is what precedes the node */
    const seg *prefix;
} ctx;

const char *gm_regex_look_name(int look)
{
    switch (look) {
    case GM_RX_AHEAD: return "lookahead (?=...)";
    case GM_RX_NOT_AHEAD: return "negative lookahead (?!...)";
    case GM_RX_BEHIND: return "lookbehind (?<=...)";
    default: return "negative lookbehind (?<!...)";
    }
}

static void fail(tr *t, uint32_t at, const char *what, const char *why)
{
    if (t->st != GM_OK)
        return;
    t->st = GM_ERR_UNSUPPORTED;
    if (t->err) {
        if (why)
            gm_error_set(t->err, GM_ERR_UNSUPPORTED, "unsupported construct: %s (%s)", what, why);
        else
            gm_error_set(t->err, GM_ERR_UNSUPPORTED, "unsupported construct: %s", what);
        t->err->column = at + 1;
    }
}

static uint32_t nomem(tr *t)
{
    if (t->st == GM_OK)
        t->st = gm_mem_fail(t->re->mem, t->err, "a regex");
    return NONE;
}

/* ---- building nodes (t->re->nodes may move: no node pointer is kept across these) ---- */

static uint32_t node_new(tr *t, gm_rx_kind kind)
{
    if (t->st != GM_OK)
        return NONE;
    uint32_t id = gm_regex_add_node(t->re, kind);
    return id == NONE ? nomem(t) : id;
}

static uint32_t node_parent(tr *t, gm_rx_kind kind, const uint32_t *ids, size_t n)
{
    if (t->st != GM_OK)
        return NONE;
    for (size_t i = 0; i < n; i++)
        if (ids[i] == NONE)
            return NONE;
    uint32_t id = gm_regex_add_parent(t->re, kind, ids, n);
    return id == NONE ? nomem(t) : id;
}

/* Takes ownership of *s. */
static uint32_t node_set(tr *t, gm_cpset *s)
{
    if (t->st != GM_OK) {
        gm_cpset_free(t->re->mem, s);
        return NONE;
    }
    uint32_t id = gm_regex_add_set(t->re, s);
    return id == NONE ? nomem(t) : id;
}

static uint32_t node_char(tr *t, uint32_t cp)
{
    uint32_t id = node_new(t, GM_RX_CHAR);
    if (id != NONE)
        t->re->nodes[id].cp = cp;
    return id;
}

static uint32_t node_repeat(tr *t, uint32_t kid, uint32_t min, uint32_t max)
{
    uint32_t id = node_parent(t, GM_RX_REPEAT, &kid, 1);
    if (id != NONE) {
        t->re->nodes[id].min = min;
        t->re->nodes[id].max = max;
    }
    return id;
}

static uint32_t node_seq(tr *t, const uint32_t *ids, size_t n)
{
    if (n == 0)
        return node_new(t, GM_RX_EMPTY);
    return n == 1 ? ids[0] : node_parent(t, GM_RX_CONCAT, ids, n);
}

/* a | b, where either may be NONE for "no path" (only then is NONE not an error). */
static uint32_t node_or(tr *t, uint32_t a, uint32_t b)
{
    if (a == NONE || b == NONE)
        return a == NONE ? b : a;
    uint32_t ids[2] = {a, b};
    return node_parent(t, GM_RX_ALT, ids, 2);
}

/* ---- reading the AST ---- */

/*
 * When node matches exactly one character (CHAR, SET, an ALT of those),
 * adds its characters to *out and returns 1; 0 when it does not; -1 on
 * an allocation failure.
 */
static int char_set(const gm_regex *re, uint32_t node, gm_cpset *out)
{
    const gm_rx_node *n = &re->nodes[node];
    switch (n->kind) {
    case GM_RX_CHAR:
        return gm_cpset_add_range(re->mem, out, n->cp, n->cp) ? -1 : 1;
    case GM_RX_SET:
        return gm_cpset_add_set(re->mem, out, &re->sets[n->set]) ? -1 : 1;
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count; i++) {
            int r = char_set(re, re->kids[n->first + i], out);
            if (r <= 0)
                return r;
        }
        return 1;
    default:
        return 0;
    }
}

/* The one code point a CHAR node (or a one-character SET) matches, or NONE. */
static uint32_t literal_char(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    if (n->kind == GM_RX_CHAR)
        return n->cp;
    if (n->kind == GM_RX_SET && re->sets[n->set].n == 1 && re->sets[n->set].r[0].lo == re->sets[n->set].r[0].hi)
        return re->sets[n->set].r[0].lo;
    return NONE;
}

/* Appends node's items, looking through nested concatenations. */
static int flatten(const gm_regex *re, uint32_t node, idvec *out)
{
    const gm_rx_node *n = &re->nodes[node];
    if (n->kind != GM_RX_CONCAT)
        return gm_vec_push(re->mem, out, node);
    uint32_t first = n->first, count = n->count;
    for (uint32_t i = 0; i < count; i++)
        if (flatten(re, re->kids[first + i], out))
            return -1;
    return 0;
}

/* The literal string node matches (a CHAR or a concatenation of them), at most cap long; its length or 0. */
static size_t literal_string(tr *t, uint32_t node, uint32_t *cps, size_t cap)
{
    const gm_regex *re = t->re;
    idvec items = {0};
    size_t n = 0;
    if (flatten(re, node, &items))
        nomem(t);
    else if (items.n <= cap) {
        for (; n < items.n; n++)
            if ((cps[n] = literal_char(re, items.v[n])) == NONE)
                break;
        if (n < items.n)
            n = 0;
    }
    gm_vec_free(re->mem, &items);
    return n;
}

static bool is_lazy_star(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    return n->kind == GM_RX_REPEAT && n->lazy && n->min == 0 && n->max == GM_RX_INF;
}

/* s := a minus b. */
static int cpset_minus(gm_mem *m, gm_cpset *s, const gm_cpset *a, const gm_cpset *b)
{
    gm_cpset_clear(s);
    return gm_cpset_copy(m, s, a) || gm_cpset_negate(m, s) || gm_cpset_add_set(m, s, b) ||
                   gm_cpset_negate(m, s)
               ? -1
               : 0;
}

/* ---- the idioms ---- */

/*
 * Idiom 1: the strings w D with w over X and D occurring in w D only at its
 * end. States 0..n-1 of the KMP automaton of D count the characters of D
 * matched so far; a character that breaks the match commits the
 * characters that no longer belong to a prefix of D to w, where they must
 * be in X. State n (D seen) is final and has no way out. The regex comes
 * from state elimination, eliminating n-1 down to 1.
 */
static uint32_t first_delim(tr *t, const gm_cpset *x, const uint32_t *d, size_t n)
{
    gm_mem *m = t->re->mem;
    uint32_t cls[MAX_DELIM + 1]; /* the distinct characters of D, then "other" (NONE) */
    size_t ncls = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < ncls && cls[j] != d[i])
            j++;
        if (j == ncls)
            cls[ncls++] = d[i];
    }
    gm_cpset dset = {0}, other = {0};
    for (size_t i = 0; i < ncls; i++)
        if (gm_cpset_add_range(m, &dset, cls[i], cls[i])) {
            gm_cpset_free(m, &dset);
            return nomem(t);
        }
    if (cpset_minus(m, &other, x, &dset)) {
        gm_cpset_free(m, &dset);
        gm_cpset_free(m, &other);
        return nomem(t);
    }
    gm_cpset_free(m, &dset);
    bool has_other = other.n > 0;
    gm_cpset_free(m, &other);
    if (has_other)
        cls[ncls++] = NONE;

    size_t ns = n + 1;
    uint32_t *r = gm_mem_reallocarray(m, NULL, ns * ns, sizeof *r);
    if (!r)
        return nomem(t);
    for (size_t i = 0; i < ns * ns; i++)
        r[i] = NONE;
    for (size_t j = 0; j < n && t->st == GM_OK; j++) {
        for (size_t c = 0; c < ncls && t->st == GM_OK; c++) {
            uint32_t ch = cls[c];
            size_t to;
            if (ch == d[j]) {
                to = j + 1;
            } else {
                /* s = d[0..j) ch: the longest proper prefix of D that ends s */
                uint32_t s[MAX_DELIM + 1];
                memcpy(s, d, j * sizeof *s);
                s[j] = ch;
                size_t k = j;
                while (k > 0 && memcmp(s + j + 1 - k, d, k * sizeof *s) != 0)
                    k--;
                to = k;
                bool ok = true;
                for (size_t i = 0; i < j + 1 - k; i++)
                    if (s[i] != NONE && !gm_cpset_has(x, s[i]))
                        ok = false;
                if (!ok)
                    continue;
            }
            uint32_t edge;
            if (ch == NONE) {
                gm_cpset o = {0}, ds = {0};
                for (size_t i = 0; i < ncls; i++)
                    if (cls[i] != NONE && gm_cpset_add_range(m, &ds, cls[i], cls[i]))
                        nomem(t);
                if (t->st == GM_OK && cpset_minus(m, &o, x, &ds))
                    nomem(t);
                gm_cpset_free(m, &ds);
                edge = node_set(t, &o);
            } else {
                edge = node_char(t, ch);
            }
            r[j * ns + to] = node_or(t, r[j * ns + to], edge);
        }
    }
    for (size_t k = n - 1; k >= 1 && t->st == GM_OK; k--) {
        uint32_t loop = r[k * ns + k] == NONE ? NONE : node_repeat(t, r[k * ns + k], 0, GM_RX_INF);
        for (size_t i = 0; i < k && t->st == GM_OK; i++) {
            if (r[i * ns + k] == NONE)
                continue;
            for (size_t j = 0; j < ns && t->st == GM_OK; j++) {
                if ((j >= k && j != n) || r[k * ns + j] == NONE)
                    continue;
                uint32_t path[3];
                size_t np = 0;
                path[np++] = r[i * ns + k];
                if (loop != NONE)
                    path[np++] = loop;
                path[np++] = r[k * ns + j];
                r[i * ns + j] = node_or(t, r[i * ns + j], node_seq(t, path, np));
            }
        }
    }
    uint32_t result = NONE;
    if (t->st == GM_OK) {
        uint32_t path[2];
        size_t np = 0;
        if (r[0] != NONE)
            path[np++] = node_repeat(t, r[0], 0, GM_RX_INF);
        path[np++] = r[n];
        result = node_seq(t, path, np);
    }
    gm_mem_free(m, r);
    return result;
}

/* Idiom 2: (?:[X minus q and \]|\\X)* q. */
static uint32_t escaped_string(tr *t, const gm_cpset *x, uint32_t q)
{
    gm_mem *m = t->re->mem;
    gm_cpset plain = {0}, sp = {0}, any = {0};
    if (gm_cpset_add_range(m, &sp, q, q) || gm_cpset_add_range(m, &sp, '\\', '\\') ||
        cpset_minus(m, &plain, x, &sp) || gm_cpset_copy(m, &any, x)) {
        gm_cpset_free(m, &plain);
        gm_cpset_free(m, &sp);
        gm_cpset_free(m, &any);
        return nomem(t);
    }
    gm_cpset_free(m, &sp);
    uint32_t esc[2] = {node_char(t, '\\'), node_set(t, &any)};
    uint32_t pair = node_seq(t, esc, 2);
    uint32_t body = plain.n ? node_or(t, node_set(t, &plain), pair) : pair;
    gm_cpset_free(m, &plain);
    uint32_t ids[2] = {node_repeat(t, body, 0, GM_RX_INF), node_char(t, q)};
    return node_seq(t, ids, 2);
}

/* Idiom 3: whether a lookbehind `look` right after node `prev` always holds. */
static int lookbehind_holds(tr *t, uint32_t prev, uint32_t look)
{
    const gm_regex *re = t->re;
    gm_rx_node l = re->nodes[look];
    if (l.look != GM_RX_NOT_BEHIND && l.look != GM_RX_BEHIND)
        return 0;
    gm_cpset p = {0}, s = {0}, d = {0};
    int rp = char_set(re, prev, &p), rs = rp > 0 ? char_set(re, re->kids[l.first], &s) : 0;
    int holds = 0;
    if (rp < 0 || rs < 0) {
        holds = -1;
    } else if (rp > 0 && rs > 0) {
        /* d = p minus s: p never in s when d == p; p always in s when d is empty */
        if (cpset_minus(re->mem, &d, &p, &s))
            holds = -1;
        else if (l.look == GM_RX_NOT_BEHIND)
            holds = gm_cpset_equal(&d, &p);
        else
            holds = d.n == 0;
    }
    gm_cpset_free(re->mem, &p);
    gm_cpset_free(re->mem, &s);
    gm_cpset_free(re->mem, &d);
    if (holds < 0)
        nomem(t);
    return holds;
}

static int add_follow(tr *t, uint32_t node, uint32_t cp, uint32_t at)
{
    gm_regex *re = t->re;
    if (gm_vec_grow_(re->mem, (void **)&re->follow, &re->follow_cap, re->nfollow + 1, sizeof *re->follow)) {
        nomem(t);
        return -1;
    }
    re->follow[re->nfollow].node = node;
    re->follow[re->nfollow].cp = cp;
    re->follow[re->nfollow].at = at;
    re->nfollow++;
    return 0;
}

/* ---- the walk ---- */

static uint32_t tr_node(tr *t, uint32_t node, const ctx *c);

static const char *const LAZY_WHY =
    "Lark's shortest match is translated only before a closing literal at the end of the "
    "pattern, or at its very end: lexer/regex.h note [Lark idioms]";

/* Idiom 4 at items[i] (the lookahead); 1 when it applied, 0 when not, -1 on error. */
static int string_idiom(tr *t, const uint32_t *items, size_t i, size_t n, idvec *out, const ctx *c)
{
    const gm_regex *re = t->re;
    gm_rx_node l = re->nodes[items[i]];
    if (l.look != GM_RX_NOT_AHEAD || i == 0 || i + 3 != n || !c->tail || !is_lazy_star(re, items[i + 1]))
        return 0;
    uint32_t q = literal_char(re, items[i - 1]), qq[2];
    if (q == NONE || literal_char(re, items[i + 2]) != q ||
        literal_string(t, re->kids[l.first], qq, 2) != 2 || qq[0] != q || qq[1] != q)
        return 0;
    gm_cpset x = {0};
    int r = char_set(re, re->kids[re->nodes[items[i + 1]].first], &x);
    if (r <= 0) {
        gm_cpset_free(re->mem, &x);
        return r < 0 ? (nomem(t), -1) : 0;
    }
    if (!c->plain) {
        gm_cpset_free(re->mem, &x);
        fail(t, l.at, gm_regex_look_name(l.look), "the empty string it rules out is inside a loop");
        return -1;
    }
    uint32_t body = first_delim(t, &x, &q, 1);
    gm_cpset_free(re->mem, &x);
    /* The lexemes that may not be followed by q: the path so far, the opening q, the closing q. */
    idvec k = {0};
    int rc = 0;
    GM_VEC(const seg *) segs = {0};
    for (const seg *s = c->prefix; s && !rc; s = s->up)
        rc = gm_vec_push(re->mem, &segs, s);
    for (size_t j = segs.n; j-- > 0 && !rc;)
        for (size_t a = 0; a < segs.v[j]->n && !rc; a++)
            rc = gm_vec_push(re->mem, &k, segs.v[j]->ids[a]);
    for (size_t a = 0; a < out->n && !rc; a++)
        rc = gm_vec_push(re->mem, &k, out->v[a]);
    uint32_t close = node_char(t, q);
    if (!rc)
        rc = gm_vec_push(re->mem, &k, close);
    gm_vec_free(re->mem, &segs);
    if (rc) {
        gm_vec_free(re->mem, &k);
        nomem(t);
        return -1;
    }
    uint32_t lexemes = node_seq(t, k.v, k.n);
    gm_vec_free(re->mem, &k);
    if (body == NONE || lexemes == NONE || add_follow(t, lexemes, q, l.at) || gm_vec_push(re->mem, out, body)) {
        nomem(t);
        return -1;
    }
    return 1;
}

/* Idioms 1 and 2 at items[i] (a lazy quantifier); 1 when one applied, 0 when not, -1 on error. */
static int lazy_idiom(tr *t, const uint32_t *items, size_t i, size_t n, idvec *out, const ctx *c)
{
    const gm_regex *re = t->re;
    gm_rx_node z = re->nodes[items[i]];
    if (z.kind != GM_RX_REPEAT || !z.lazy || z.max != GM_RX_INF || !c->tail || i + 1 >= n)
        return 0;
    gm_cpset x = {0};
    int r = char_set(re, re->kids[z.first], &x);
    if (r <= 0) {
        gm_cpset_free(re->mem, &x);
        return r < 0 ? (nomem(t), -1) : 0;
    }
    uint32_t d[MAX_DELIM], result = NONE;
    int applied = 0;
    /* 2: X*? (?<!\\) (\\\\)*? q after a character that is never a backslash */
    uint32_t bs[2];
    if (i + 4 == n && i > 0 && z.min == 0 && re->nodes[items[i + 1]].kind == GM_RX_LOOK &&
        re->nodes[items[i + 1]].look == GM_RX_NOT_BEHIND &&
        literal_string(t, re->kids[re->nodes[items[i + 1]].first], bs, 1) == 1 && bs[0] == '\\' &&
        is_lazy_star(re, items[i + 2]) &&
        literal_string(t, re->kids[re->nodes[items[i + 2]].first], bs, 2) == 2 && bs[0] == '\\' &&
        bs[1] == '\\' && (d[0] = literal_char(re, items[i + 3])) != NONE && d[0] != '\\' &&
        gm_cpset_has(&x, '\\') && gm_cpset_has(&x, d[0])) {
        gm_cpset prev = {0};
        int rp = char_set(re, items[i - 1], &prev);
        bool ok = rp > 0 && !gm_cpset_has(&prev, '\\');
        gm_cpset_free(re->mem, &prev);
        if (rp < 0) {
            applied = -1;
            nomem(t);
        } else if (ok) {
            result = escaped_string(t, &x, d[0]);
            applied = 1;
        }
    }
    /* 1: X*? D */
    if (!applied && n - i - 1 <= MAX_DELIM) {
        size_t nd = 0;
        for (size_t j = i + 1; j < n && (d[nd] = literal_char(re, items[j])) != NONE; j++)
            nd++;
        if (nd == n - i - 1) {
            uint32_t ids[2];
            size_t k = 0;
            if (z.min > 0) {
                gm_cpset copy = {0};
                if (gm_cpset_copy(re->mem, &copy, &x))
                    nomem(t);
                ids[k++] = node_repeat(t, node_set(t, &copy), z.min, z.min);
            }
            ids[k++] = first_delim(t, &x, d, nd);
            result = node_seq(t, ids, k);
            applied = 1;
        }
    }
    gm_cpset_free(re->mem, &x);
    if (applied == 1 && (result == NONE || gm_vec_push(re->mem, out, result))) {
        nomem(t);
        return -1;
    }
    return applied;
}

static uint32_t tr_seq(tr *t, uint32_t node, const ctx *c)
{
    gm_mem *m = t->re->mem;
    idvec items = {0}, out = {0};
    uint32_t result = NONE;
    if (flatten(t->re, node, &items)) {
        nomem(t);
        goto done;
    }
    size_t n = items.n;
    for (size_t i = 0; i < n && t->st == GM_OK;) {
        gm_rx_node x = t->re->nodes[items.v[i]];
        int r = 0;
        if (x.kind == GM_RX_LOOK && i > 0 && (r = lookbehind_holds(t, items.v[i - 1], items.v[i])) == 1) {
            i++;
            continue;
        }
        if (r == 0 && x.kind == GM_RX_LOOK)
            r = string_idiom(t, items.v, i, n, &out, c);
        if (r == 1) {
            i += 3;
            continue;
        }
        if (r == 0 && (r = lazy_idiom(t, items.v, i, n, &out, c)) == 1)
            break; /* it took the rest of the items */
        if (r < 0)
            goto done;
        bool last = i + 1 == n;
        seg s = {c->prefix, out.v, out.n};
        ctx k = {c->tail && last, c->end && last, c->plain, &s};
        uint32_t y = tr_node(t, items.v[i], &k);
        if (y == NONE)
            goto done;
        if (gm_vec_push(m, &out, y)) {
            nomem(t);
            goto done;
        }
        i++;
    }
    if (t->st == GM_OK)
        result = node_seq(t, out.v, out.n);
done:
    gm_vec_free(m, &items);
    gm_vec_free(m, &out);
    return t->st == GM_OK ? result : NONE;
}

static uint32_t tr_node(tr *t, uint32_t node, const ctx *c)
{
    if (t->st != GM_OK)
        return NONE;
    gm_rx_node n = t->re->nodes[node];
    switch (n.kind) {
    case GM_RX_EMPTY:
    case GM_RX_CHAR:
    case GM_RX_SET:
    case GM_RX_BYTE:
        return node;
    case GM_RX_LOOK:
        fail(t, n.at, gm_regex_look_name(n.look), NULL); /* only the idioms are translated */
        return NONE;
    case GM_RX_CONCAT:
        return tr_seq(t, node, c);
    case GM_RX_ALT: {
        idvec kids = {0};
        bool changed = false;
        for (uint32_t i = 0; i < n.count && t->st == GM_OK; i++) {
            uint32_t k = t->re->kids[n.first + i];
            uint32_t y = tr_node(t, k, c);
            changed |= y != k;
            if (y != NONE && gm_vec_push(t->re->mem, &kids, y))
                nomem(t);
        }
        uint32_t id = t->st != GM_OK ? NONE : changed ? node_parent(t, GM_RX_ALT, kids.v, kids.n) : node;
        gm_vec_free(t->re->mem, &kids);
        return id;
    }
    case GM_RX_REPEAT: {
        /* Inside the loop the body is at the tail when at most one iteration is mandatory,
           at the end only when there is a single one. */
        bool once = n.max == 1, few = n.min <= 1;
        ctx k = {c->tail && few, c->end && (once || n.lazy) && few, c->plain && once, c->prefix};
        if (n.lazy && !c->end) {
            fail(t, n.at, "lazy quantifier", LAZY_WHY);
            return NONE;
        }
        uint32_t kid = t->re->kids[n.first];
        uint32_t y = tr_node(t, kid, &k);
        if (y == NONE)
            return y;
        if (n.lazy) /* 5: nothing follows, so Python stops at the minimum */
            return n.min == 0 ? node_new(t, GM_RX_EMPTY) : node_repeat(t, y, n.min, n.min);
        return y == kid ? node : node_repeat(t, y, n.min, n.max);
    }
    }
    return NONE;
}

gm_status gm_regex_lark_translate(gm_regex *re, gm_error *err)
{
    tr t = {re, err, GM_OK};
    ctx c = {true, true, true, NULL};
    uint32_t root = tr_node(&t, re->root, &c);
    if (t.st != GM_OK)
        return t.st;
    re->root = root;
    return GM_OK;
}

/* ---- the strings of a finite regex ---- */

typedef struct words {
    gm_strbuf b;   /* NUL-terminated strings */
    size_t n;
} words;

static gm_status words_of(const gm_regex *re, uint32_t node, size_t max, words *w);

/* a := a b (every pair). */
static gm_status words_cross(gm_mem *m, words *a, const words *b, size_t max)
{
    if (a->b.failed || b->b.failed)
        return GM_ERR_NOMEM;
    if (a->n && b->n > max / a->n)
        return GM_ERR_LIMIT;
    words r = {{0}, 0};
    gm_strbuf_init(&r.b, m);
    for (size_t i = 0, ai = 0; i < a->n; i++) {
        const char *sa = a->b.s + ai;
        size_t la = strlen(sa);
        for (size_t j = 0, bj = 0; j < b->n; j++) {
            const char *sb = b->b.s + bj;
            size_t lb = strlen(sb);
            if (la + lb > MAX_WORD) {
                gm_strbuf_free(&r.b);
                return GM_ERR_LIMIT;
            }
            gm_strbuf_append(&r.b, sa, la);
            gm_strbuf_append(&r.b, sb, lb);
            gm_strbuf_append(&r.b, "", 1);
            r.n++;
            bj += lb + 1;
        }
        ai += la + 1;
    }
    if (r.b.failed) {
        gm_strbuf_free(&r.b);
        return GM_ERR_NOMEM;
    }
    gm_strbuf_free(&a->b);
    *a = r;
    return GM_OK;
}

static gm_status words_of(const gm_regex *re, uint32_t node, size_t max, words *w)
{
    gm_mem *m = re->mem;
    const gm_rx_node *n = &re->nodes[node];
    gm_strbuf_init(&w->b, m);
    w->n = 0;
    gm_status st = GM_OK;
    switch (n->kind) {
    case GM_RX_EMPTY:
        gm_strbuf_append(&w->b, "", 1);
        w->n = 1;
        break;
    case GM_RX_BYTE: {
        char c = (char)n->cp;
        gm_strbuf_append(&w->b, &c, 1);
        gm_strbuf_append(&w->b, "", 1);
        w->n = 1;
        break;
    }
    case GM_RX_CHAR:
    case GM_RX_SET: {
        gm_cpset one = {0};
        const gm_cpset *s = &one;
        if (n->kind == GM_RX_SET)
            s = &re->sets[n->set];
        else if (gm_cpset_add_range(m, &one, n->cp, n->cp))
            return GM_ERR_NOMEM;
        if (gm_cpset_count(s) > max)
            st = GM_ERR_LIMIT;
        for (size_t i = 0; i < s->n && st == GM_OK; i++)
            for (uint32_t cp = s->r[i].lo; cp <= s->r[i].hi; cp++) {
                uint8_t buf[4];
                int len = cp >= 0xD800 && cp <= 0xDFFF ? 0 : gm_utf8_encode_char(cp, buf);
                if (len > 0) {
                    gm_strbuf_append(&w->b, (const char *)buf, (size_t)len);
                    gm_strbuf_append(&w->b, "", 1);
                    w->n++;
                }
                if (cp == s->r[i].hi)
                    break;
            }
        gm_cpset_free(m, &one);
        break;
    }
    case GM_RX_CONCAT:
        gm_strbuf_append(&w->b, "", 1);
        w->n = 1;
        for (uint32_t i = 0; i < n->count && st == GM_OK; i++) {
            words k;
            st = words_of(re, re->kids[n->first + i], max, &k);
            if (st == GM_OK)
                st = words_cross(m, w, &k, max);
            gm_strbuf_free(&k.b);
        }
        break;
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count && st == GM_OK; i++) {
            words k;
            st = words_of(re, re->kids[n->first + i], max, &k);
            if (st == GM_OK && k.n > max - w->n)
                st = GM_ERR_LIMIT;
            if (st == GM_OK && w->b.failed)
                st = GM_ERR_NOMEM;
            if (st == GM_OK) {
                gm_strbuf_append(&w->b, k.b.s, k.b.n);
                w->n += k.n;
            }
            gm_strbuf_free(&k.b);
        }
        break;
    case GM_RX_REPEAT: {
        if (n->max == GM_RX_INF || n->max > 64)
            return GM_ERR_LIMIT;
        words k;
        st = words_of(re, re->kids[n->first], max, &k);
        if (st != GM_OK)
            return st;
        /* all i in [min, max]: start with the empty string, cross i times, keep from min on */
        words acc = {{0}, 0};
        gm_strbuf_init(&acc.b, m);
        gm_strbuf_append(&acc.b, "", 1);
        acc.n = 1;
        for (uint32_t i = 0; i <= n->max && st == GM_OK; i++) {
            if (acc.b.failed)
                st = GM_ERR_NOMEM;
            else if (i >= n->min) {
                if (acc.n > max - w->n)
                    st = GM_ERR_LIMIT;
                else {
                    gm_strbuf_append(&w->b, acc.b.s, acc.b.n);
                    w->n += acc.n;
                }
            }
            if (i < n->max && st == GM_OK)
                st = words_cross(m, &acc, &k, max);
        }
        gm_strbuf_free(&acc.b);
        gm_strbuf_free(&k.b);
        break;
    }
    case GM_RX_LOOK:
        st = GM_ERR_LIMIT;
        break;
    }
    if (st == GM_OK && w->b.failed)
        st = GM_ERR_NOMEM;
    if (st != GM_OK) {
        gm_strbuf_free(&w->b);
        w->n = 0;
    }
    return st;
}

gm_status gm_regex_words(const gm_regex *re, uint32_t node, size_t max_words, gm_strbuf *out,
                         size_t *nwords)
{
    words w;
    gm_status st = words_of(re, node, max_words, &w);
    if (st != GM_OK)
        return st;
    gm_strbuf_append(out, w.b.s, w.b.n);
    *nwords = w.n;
    gm_strbuf_free(&w.b);
    return out->failed ? GM_ERR_NOMEM : GM_OK;
}

/* ---- Lark's lexer order ---- */

static uint32_t sat_sum(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

uint32_t gm_regex_max_width(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    uint32_t w = 0;
    switch (n->kind) {
    case GM_RX_EMPTY:
    case GM_RX_LOOK:
        return 0;
    case GM_RX_CHAR:
    case GM_RX_SET:
    case GM_RX_BYTE:
        return 1;
    case GM_RX_CONCAT:
        for (uint32_t i = 0; i < n->count; i++)
            w = sat_sum(w, gm_regex_max_width(re, re->kids[n->first + i]));
        return w;
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count; i++) {
            uint32_t k = gm_regex_max_width(re, re->kids[n->first + i]);
            w = k > w ? k : w;
        }
        return w;
    case GM_RX_REPEAT: {
        uint32_t k = gm_regex_max_width(re, re->kids[n->first]);
        if (!k || !n->max)
            return 0;
        if (n->max == GM_RX_INF || k > UINT32_MAX / n->max)
            return UINT32_MAX;
        return k * n->max;
    }
    }
    return w;
}
