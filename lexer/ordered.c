/*
 * The ordered determinizer (note [ordered matching] in lexer/ordered.h).
 *
 * A state's key is its history (the last bytes of the lexeme, as history
 * classes, only when some terminal has a lookbehind), its marker set
 * (sorted) and its list of paths in priority order, each path an NFA state
 * with its open lookahead conditions: [state, n, (look, body state) x n],
 * conditions sorted. A step on a byte class goes down the list in order:
 * a path at its terminal's end whose conditions hold after the byte is a
 * match at this state; any other path moves on the byte, and the epsilon
 * closure of where it lands is appended depth first in edge order. A
 * match cuts the paths after it (all of them, or its terminal's).
 */
#include "lexer/ordered.h"

#include <stdlib.h>
#include <string.h>

#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"

typedef GM_VEC(uint32_t) u32vec;

/* A view of a key. */
typedef struct view {
    uint32_t hlen;
    const uint32_t *hist;
    uint32_t nmarks;
    const uint32_t *marks;
    const uint32_t *paths;    /* [npath_words] */
    size_t npath_words;
} view;

typedef struct ord {
    const gm_ord_input *in;
    const gm_nfa *nfa;
    gm_mem *mem;
    gm_error *err;
    gm_status st;
    uint32_t bad_look;
    uint32_t nclasses;
    uint8_t byte_class[256];
    uint8_t rep[256];            /* [class] its first byte */
    uint32_t hist_max;           /* bytes of history a state keeps (0: no lookbehind) */
    uint8_t hclass[256];         /* byte -> history class */
    uint8_t (*hset)[GM_LOOK_BEHIND_MAX][32]; /* [look] history classes allowed per position */
    /* One step's scratch. */
    u32vec out;                  /* the successor's paths */
    u32vec pool;                 /* conditions of stacked paths */
    u32vec stack;                /* DFS: (state, pool offset, count) */
    u32vec seen;                 /* visited paths with conditions: (state, pool offset, count) */
    u32vec conds;                /* the conditions of the path being advanced */
    uint32_t *stamp;             /* [nfa states] visited without conditions in this step */
    uint32_t gen;
    uint32_t *cut;               /* [nterminals] cut in this step (== cut_gen) */
    uint32_t cut_gen;
    bool cut_all;
    u32vec matched;              /* terminals matched at the state for this class */
    u32vec marks;                /* the successor's marker set */
    u32vec mstack;
    uint32_t *mstamp;            /* [nfa states] marker closure visits */
    uint32_t mgen;
    u32vec key;
    u32vec present;              /* markers present at the state */
} ord;

static void set_nomem(ord *o)
{
    if (o->st == GM_OK)
        o->st = gm_mem_fail(o->mem, o->err, "the lexer's DFA");
}

static bool set_has(const uint8_t set[32], unsigned b)
{
    return (set[b >> 3] >> (b & 7)) & 1;
}

/* ---- byte classes ---- */

/*
 * Classes are the intervals between the boundaries of every NFA byte edge,
 * every lookahead body's class and every history class, so one byte stands
 * for its class in all of them.
 */
static void make_classes(ord *o)
{
    const gm_nfa *nfa = o->nfa;
    bool boundary[257] = {false};
    for (uint32_t s = 0; s < nfa->nstates; s++)
        for (uint32_t i = nfa->off[s]; i < nfa->off[s] + nfa->nbyte[s]; i++) {
            boundary[nfa->edges[i].lo] = true;
            boundary[nfa->edges[i].hi + 1] = true;
        }
    for (uint32_t l = 0; l < nfa->nlooks; l++) {
        const gm_look *lk = &o->in->looks[l];
        if (lk->kind == GM_RX_AHEAD || lk->kind == GM_RX_NOT_AHEAD)
            for (int b = 1; b < 256; b++)
                if (lk->body.byte_class[b] != lk->body.byte_class[b - 1])
                    boundary[b] = true;
    }
    for (int b = 1; b < 256; b++)
        if (o->hclass[b] != o->hclass[b - 1])
            boundary[b] = true;
    uint32_t c = 0;
    o->rep[0] = 0;
    for (int b = 0; b < 256; b++) {
        if (b > 0 && boundary[b]) {
            c++;
            o->rep[c] = (uint8_t)b;
        }
        o->byte_class[b] = (uint8_t)c;
    }
    o->nclasses = c + 1;
}

/* History classes: bytes apart when some lookbehind position tells them apart. */
static int make_history(ord *o)
{
    const gm_nfa *nfa = o->nfa;
    memset(o->hclass, 0, sizeof o->hclass);
    o->hist_max = 0;
    for (uint32_t l = 0; l < nfa->nlooks; l++) {
        const gm_look *lk = &o->in->looks[l];
        if ((lk->kind == GM_RX_BEHIND || lk->kind == GM_RX_NOT_BEHIND) && lk->width > o->hist_max)
            o->hist_max = lk->width;
    }
    if (!o->hist_max)
        return 0;
    /* Signature of a byte: its membership in every lookbehind position, hashed, then numbered. */
    uint64_t sig[256];
    for (int b = 0; b < 256; b++) {
        uint64_t h = 0x51af;
        for (uint32_t l = 0; l < nfa->nlooks; l++) {
            const gm_look *lk = &o->in->looks[l];
            if (lk->kind != GM_RX_BEHIND && lk->kind != GM_RX_NOT_BEHIND)
                continue;
            for (uint32_t i = 0; i < lk->width; i++)
                h = gm_hash_mix64(h ^ ((uint64_t)set_has(lk->set[i], (unsigned)b) + 2 * (l * 8 + i)));
        }
        sig[b] = h;
    }
    uint32_t n = 0;
    uint64_t first[256];
    for (int b = 0; b < 256; b++) {
        uint32_t k = 0;
        while (k < n && first[k] != sig[b])
            k++;
        if (k == n)
            first[n++] = sig[b];
        o->hclass[b] = (uint8_t)k;
    }
    o->hset = gm_mem_calloc(o->mem, nfa->nlooks, sizeof *o->hset);
    if (!o->hset)
        return -1;
    for (uint32_t l = 0; l < nfa->nlooks; l++) {
        const gm_look *lk = &o->in->looks[l];
        if (lk->kind != GM_RX_BEHIND && lk->kind != GM_RX_NOT_BEHIND)
            continue;
        for (uint32_t i = 0; i < lk->width; i++)
            for (unsigned b = 0; b < 256; b++)
                if (set_has(lk->set[i], b))
                    o->hset[l][i][o->hclass[b] >> 3] |= (uint8_t)(1u << (o->hclass[b] & 7));
    }
    return 0;
}

/* ---- keys ---- */

static void parse_key(const uint32_t *k, size_t n, view *v)
{
    size_t i = 0;
    v->hlen = k[i++];
    v->hist = k + i;
    i += v->hlen;
    v->nmarks = k[i++];
    v->marks = k + i;
    i += v->nmarks;
    v->paths = k + i;
    v->npath_words = n - i;
}

/* ---- conditions ---- */

/*
 * Advances the conditions c[0..n) over byte b (or the end of input when
 * eof) into o->conds. False when the path dies.
 */
static bool advance(ord *o, const uint32_t *c, uint32_t n, unsigned b, bool eof)
{
    o->conds.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = c[2 * i], y = c[2 * i + 1];
        const gm_look *lk = &o->in->looks[l];
        bool positive = lk->kind == GM_RX_AHEAD;
        if (eof) {
            if (positive)
                return false; /* the body never matched */
            continue;         /* nor can it any more */
        }
        const gm_dfa *d = &lk->body;
        uint32_t y2 = d->next[(size_t)y * d->nclasses + d->byte_class[b]];
        if (y2 == GM_LEX_DEAD) {
            if (positive)
                return false;
            continue;
        }
        if (d->label[y2] != GM_LEX_NONE) {
            if (!positive)
                return false;
            continue;
        }
        if (gm_vec_reserve(o->mem, &o->conds, o->conds.n + 2)) {
            set_nomem(o);
            return false;
        }
        o->conds.v[o->conds.n++] = l;
        o->conds.v[o->conds.n++] = y2;
    }
    return true;
}

/*
 * Pushes (s, conditions src[off .. off + 2n) plus (l, y) when l != NONE,
 * sorted) on the DFS stack. src may be the pool itself, which may move.
 */
static void push(ord *o, uint32_t s, const u32vec *src, size_t off, uint32_t n, uint32_t l, uint32_t y)
{
    size_t at = o->pool.n;
    if (gm_vec_reserve(o->mem, &o->pool, o->pool.n + 2 * (size_t)n + 2) ||
        gm_vec_reserve(o->mem, &o->stack, o->stack.n + 3)) {
        set_nomem(o);
        return;
    }
    const uint32_t *c = src && src->v ? src->v + off : NULL; /* an empty pool has no array */
    uint32_t *dst = o->pool.v + at;
    uint32_t k = 0;
    bool placed = l == GM_LEX_NONE;
    for (uint32_t i = 0; i <= n; i++) {
        if (!placed && (i == n || c[2 * i] > l || (c[2 * i] == l && c[2 * i + 1] >= y))) {
            if (i == n || c[2 * i] != l || c[2 * i + 1] != y) {
                dst[2 * k] = l;
                dst[2 * k + 1] = y;
                k++;
            }
            placed = true;
        }
        if (i < n) {
            dst[2 * k] = c[2 * i];
            dst[2 * k + 1] = c[2 * i + 1];
            k++;
        }
    }
    o->pool.n = at + 2 * (size_t)k;
    o->stack.v[o->stack.n++] = s;
    o->stack.v[o->stack.n++] = (uint32_t)at;
    o->stack.v[o->stack.n++] = k;
}

static void append_path(ord *o, uint32_t s, const u32vec *src, size_t off, uint32_t n)
{
    if (gm_vec_reserve(o->mem, &o->out, o->out.n + 2 + 2 * (size_t)n)) {
        set_nomem(o);
        return;
    }
    o->out.v[o->out.n++] = s;
    o->out.v[o->out.n++] = n;
    if (n)
        memcpy(o->out.v + o->out.n, src->v + off, 2 * (size_t)n * sizeof *src->v);
    o->out.n += 2 * (size_t)n;
}

/* Whether (s, conds) was visited in this step; marks it. */
static bool visited(ord *o, uint32_t s, uint32_t off, uint32_t n)
{
    if (n == 0) {
        if (o->stamp[s] == o->gen)
            return true;
        o->stamp[s] = o->gen;
        return false;
    }
    for (size_t i = 0; i < o->seen.n; i += 3) {
        if (o->seen.v[i] != s || o->seen.v[i + 2] != n)
            continue;
        if (!memcmp(o->pool.v + o->seen.v[i + 1], o->pool.v + off, 2 * (size_t)n * sizeof(uint32_t)))
            return true;
    }
    if (gm_vec_reserve(o->mem, &o->seen, o->seen.n + 3)) {
        set_nomem(o);
        return true;
    }
    o->seen.v[o->seen.n++] = s;
    o->seen.v[o->seen.n++] = off;
    o->seen.v[o->seen.n++] = n;
    return false;
}

static bool is_cut(const ord *o, uint32_t s)
{
    uint32_t t = o->in->owner[s];
    return o->cut_all || (t != GM_LEX_NONE && o->cut[t] == o->cut_gen);
}

/* Whether lookbehind l holds with history h[0..hlen); -1 when it looks before the lexeme. */
static int behind_holds(const ord *o, uint32_t l, const uint32_t *h, uint32_t hlen)
{
    const gm_look *lk = &o->in->looks[l];
    if (hlen < lk->width)
        return -1;
    for (uint32_t i = 0; i < lk->width; i++) {
        uint32_t k = h[hlen - lk->width + i];
        if (!((o->hset[l][i][k >> 3] >> (k & 7)) & 1))
            return 0;
    }
    return 1;
}

static void fail_look(ord *o, uint32_t l, const char *why)
{
    if (o->st != GM_OK)
        return;
    o->bad_look = l;
    o->st = gm_error_set(o->err, GM_ERR_UNSUPPORTED, "unsupported construct: %s (%s)",
                         gm_regex_look_name(o->in->looks[l].kind), why);
    o->err->column = o->in->looks[l].at + 1;
}

/*
 * Appends to o->out the epsilon closure of the stacked paths in priority
 * order; the history h[0..hlen) is the lexeme's after the byte just read.
 */
static void closure(ord *o, const uint32_t *h, uint32_t hlen)
{
    const gm_nfa *nfa = o->nfa;
    bool global = o->in->global_cut;
    while (o->stack.n && o->st == GM_OK && !o->cut_all) {
        o->stack.n -= 3;
        uint32_t s = o->stack.v[o->stack.n], off = o->stack.v[o->stack.n + 1],
                 n = o->stack.v[o->stack.n + 2];
        if (visited(o, s, off, n) || is_cut(o, s))
            continue;
        uint32_t l = nfa->look ? nfa->look[s] : GM_NFA_NO_TAG;
        uint32_t next = nfa->off[s + 1] > nfa->off[s] + nfa->nbyte[s] ? nfa->edges[nfa->off[s] + nfa->nbyte[s]].to
                                                                     : GM_LEX_NONE;
        if (l != GM_NFA_NO_TAG) {
            const gm_look *lk = &o->in->looks[l];
            if (lk->kind == GM_RX_AHEAD || lk->kind == GM_RX_NOT_AHEAD) {
                bool body_empty = lk->body.label[0] != GM_LEX_NONE;
                if (body_empty && lk->kind == GM_RX_AHEAD)
                    push(o, next, &o->pool, off, n, GM_LEX_NONE, 0);
                else if (!body_empty)
                    push(o, next, &o->pool, off, n, l, 0);
            } else {
                int r = behind_holds(o, l, h, hlen);
                if (r < 0)
                    fail_look(o, l, "it looks before the start of the lexeme, at the previous one, "
                                    "which Lark's re sees and gramask's lexer states do not");
                else if ((r == 1) == (lk->kind == GM_RX_BEHIND))
                    push(o, next, &o->pool, off, n, GM_LEX_NONE, 0);
            }
            continue;
        }
        uint32_t tag = nfa->tag[s];
        if (tag != GM_NFA_NO_TAG && tag < o->in->nterminals) {
            append_path(o, s, &o->pool, off, n);
            if (n == 0) {
                if (global)
                    o->cut_all = true;
                else if (!o->in->ordered || o->in->ordered[tag])
                    o->cut[tag] = o->cut_gen;
            }
            continue;
        }
        if (nfa->nbyte[s])
            append_path(o, s, &o->pool, off, n);
        /* Epsilon edges pushed last first, so the first is explored first. */
        for (uint32_t i = nfa->off[s + 1]; i-- > nfa->off[s] + nfa->nbyte[s];)
            push(o, nfa->edges[i].to, &o->pool, off, n, GM_LEX_NONE, 0);
    }
    o->stack.n = 0;
}

static void begin_step(ord *o)
{
    o->out.n = o->pool.n = o->stack.n = o->seen.n = 0;
    o->matched.n = 0;
    o->cut_all = false;
    if (++o->gen == 0) {
        memset(o->stamp, 0, o->nfa->nstates * sizeof *o->stamp);
        o->gen = 1;
    }
    if (++o->cut_gen == 0) {
        memset(o->cut, 0, (o->in->nterminals ? o->in->nterminals : 1) * sizeof *o->cut);
        o->cut_gen = 1;
    }
}

/* ---- markers: plain subset construction ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted kernel of the closure of the stacked marker states, into o->marks. */
static void marker_closure(ord *o)
{
    const gm_nfa *nfa = o->nfa;
    o->marks.n = 0;
    if (++o->mgen == 0) {
        memset(o->mstamp, 0, nfa->nstates * sizeof *o->mstamp);
        o->mgen = 1;
    }
    while (o->mstack.n) {
        uint32_t s = o->mstack.v[--o->mstack.n];
        if (o->mstamp[s] == o->mgen)
            continue;
        o->mstamp[s] = o->mgen;
        if ((nfa->nbyte[s] || nfa->tag[s] != GM_NFA_NO_TAG) && gm_vec_push(o->mem, &o->marks, s)) {
            set_nomem(o);
            return;
        }
        for (uint32_t i = nfa->off[s] + nfa->nbyte[s]; i < nfa->off[s + 1]; i++)
            if (gm_vec_push(o->mem, &o->mstack, nfa->edges[i].to)) {
                set_nomem(o);
                return;
            }
    }
    if (o->marks.n > 1)
        qsort(o->marks.v, o->marks.n, sizeof *o->marks.v, cmp_u32);
}

static void marker_step(ord *o, const uint32_t *marks, uint32_t n, unsigned b)
{
    const gm_nfa *nfa = o->nfa;
    o->mstack.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = marks[i];
        for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s]; e++)
            if (nfa->edges[e].lo <= b && b <= nfa->edges[e].hi &&
                gm_vec_push(o->mem, &o->mstack, nfa->edges[e].to)) {
                set_nomem(o);
                return;
            }
    }
    marker_closure(o);
}

/* ---- one step ---- */

/*
 * Steps state v over class c (c == nclasses: the end of input): the label
 * at v for that next byte in *label; the successor's paths in o->out,
 * markers in o->marks.
 */
static void step(ord *o, const view *v, uint32_t c, uint32_t *label)
{
    const gm_nfa *nfa = o->nfa;
    bool eof = c == o->nclasses;
    unsigned b = eof ? 0 : o->rep[c];
    bool global = o->in->global_cut;
    begin_step(o);
    /* The history after the byte, for the lookbehinds of the closure. */
    uint32_t h[GM_LOOK_BEHIND_MAX + 1], hlen = 0;
    if (o->hist_max && !eof) {
        for (uint32_t i = 0; i < v->hlen; i++)
            h[hlen++] = v->hist[i];
        h[hlen++] = o->hclass[b];
        if (hlen > o->hist_max) {
            memmove(h, h + 1, (hlen - 1) * sizeof *h);
            hlen--;
        }
    }
    for (size_t i = 0; i < v->npath_words && o->st == GM_OK && !o->cut_all;) {
        uint32_t s = v->paths[i], n = v->paths[i + 1];
        const uint32_t *c0 = v->paths + i + 2;
        i += 2 + 2 * (size_t)n;
        if (is_cut(o, s))
            continue;
        if (!advance(o, c0, n, b, eof))
            continue;
        uint32_t tag = nfa->tag[s];
        if (tag != GM_NFA_NO_TAG && tag < o->in->nterminals) {
            if (o->conds.n) {
                fail_look(o, o->conds.v[0],
                          "it looks more than one byte past the end of the lexeme; gramask's "
                          "lexer decides a lexeme on the one byte after it");
                return;
            }
            if (gm_vec_push(o->mem, &o->matched, tag)) {
                set_nomem(o);
                return;
            }
            if (global)
                o->cut_all = true;
            else if (!o->in->ordered || o->in->ordered[tag])
                o->cut[tag] = o->cut_gen;
            continue;
        }
        if (eof)
            continue;
        for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s] && !o->cut_all; e++) {
            if (nfa->edges[e].lo > b || b > nfa->edges[e].hi)
                continue;
            push(o, nfa->edges[e].to, &o->conds, 0, (uint32_t)(o->conds.n / 2), GM_LEX_NONE, 0);
            closure(o, h, hlen);
        }
    }
    if (o->st != GM_OK)
        return;
    /* The label: what matched here, with the markers this lexeme equals. */
    o->present.n = 0;
    for (uint32_t i = 0; i < v->nmarks; i++) {
        uint32_t t = nfa->tag[v->marks[i]];
        if (t != GM_NFA_NO_TAG && t >= o->in->nterminals &&
            gm_vec_push(o->mem, &o->present, t - o->in->nterminals)) {
            set_nomem(o);
            return;
        }
    }
    *label = o->matched.n || o->present.n
                 ? o->in->resolve(o->in->resolve_ud, o->matched.v, (uint32_t)o->matched.n,
                                  o->present.v, (uint32_t)o->present.n)
                 : GM_LEX_NONE;
    o->marks.n = 0;
    if (!eof && o->out.n && v->nmarks)
        marker_step(o, v->marks, v->nmarks, b);
    /* The successor's key: history, markers, paths. */
    if (!eof && o->out.n) {
        o->key.n = 0;
        size_t need = 2 + hlen + o->marks.n + o->out.n;
        if (gm_vec_reserve(o->mem, &o->key, need)) {
            set_nomem(o);
            return;
        }
        o->key.v[o->key.n++] = hlen;
        if (hlen) /* memcpy from NULL (an empty vector) is undefined even for 0 bytes */
            memcpy(o->key.v + o->key.n, h, hlen * sizeof *h);
        o->key.n += hlen;
        o->key.v[o->key.n++] = (uint32_t)o->marks.n;
        if (o->marks.n)
            memcpy(o->key.v + o->key.n, o->marks.v, o->marks.n * sizeof *o->marks.v);
        o->key.n += o->marks.n;
        if (o->out.n)
            memcpy(o->key.v + o->key.n, o->out.v, o->out.n * sizeof *o->out.v);
        o->key.n += o->out.n;
    }
}

/* Splits the groups of the classes in [lo, hi] (of size[] classes each) from the rest of theirs. */
static void split_groups(uint8_t *group, uint16_t *size, uint32_t *ngroups, uint32_t lo, uint32_t hi)
{
    uint16_t inside[256], to[256];
    for (uint32_t c = lo; c <= hi; c++) {
        inside[group[c]] = 0;
        to[group[c]] = UINT16_MAX;
    }
    for (uint32_t c = lo; c <= hi; c++)
        inside[group[c]]++;
    for (uint32_t c = lo; c <= hi; c++) {
        uint32_t g = group[c];
        if (to[g] == UINT16_MAX) {
            to[g] = (uint16_t)g;
            if (inside[g] < size[g]) {
                to[g] = (uint16_t)(*ngroups)++;
                size[to[g]] = inside[g];
                size[g] = (uint16_t)(size[g] - inside[g]);
            }
        }
        group[c] = (uint8_t)to[g];
    }
}

/*
 * Classes that step alike from v: group[c] for each class; false when v's
 * steps depend on more than the byte edges.
 * Without lookahead conditions on v's paths nor history, a step's label
 * does not depend on the byte (what matched, in path order, with the
 * cuts; the markers present), and its successor only on which edges of
 * the paths and the markers the byte takes: classes that no edge tells
 * apart have the same successor and label, and one step serves them all.
 * Most classes of a state inside a lexeme are such (a name's state moves
 * on letters alike, beside 150 classes of keywords and UTF-8 ranges on
 * which it dies): stepping each of them over every path was most of a
 * lexer's build, and most of a contextual lexer's first use.
 */
static bool class_groups(const ord *o, const view *v, uint8_t group[256])
{
    const gm_nfa *nfa = o->nfa;
    uint32_t k = o->nclasses;
    if (o->hist_max)
        return false;
    for (size_t i = 0; i < v->npath_words; i += 2)
        if (v->paths[i + 1])
            return false;
    memset(group, 0, k);
    uint32_t ngroups = 1;
    uint16_t size[256] = {(uint16_t)k};
    for (size_t j = 0; j < v->npath_words / 2 + v->nmarks; j++) {
        uint32_t s = j < v->npath_words / 2 ? v->paths[2 * j] : v->marks[j - v->npath_words / 2];
        for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s]; e++) {
            uint32_t lo = o->byte_class[nfa->edges[e].lo], hi = o->byte_class[nfa->edges[e].hi];
            if (lo > 0 || hi + 1 < k)
                split_groups(group, size, &ngroups, lo, hi);
        }
    }
    return true;
}

/* The start state's key: the closure of the NFA's start, and of the markers' entries. */
static void start_key(ord *o)
{
    begin_step(o);
    push(o, o->nfa->start, NULL, 0, 0, GM_LEX_NONE, 0);
    closure(o, NULL, 0);
    o->mstack.n = 0;
    for (uint32_t i = 0; i < o->in->nmarkers; i++)
        if (gm_vec_push(o->mem, &o->mstack, o->in->marker_entry[i]))
            set_nomem(o);
    marker_closure(o);
    o->key.n = 0;
    if (o->st != GM_OK || gm_vec_reserve(o->mem, &o->key, 2 + o->marks.n + o->out.n)) {
        set_nomem(o);
        return;
    }
    o->key.v[o->key.n++] = 0;
    o->key.v[o->key.n++] = (uint32_t)o->marks.n;
    if (o->marks.n) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(o->key.v + o->key.n, o->marks.v, o->marks.n * sizeof *o->marks.v);
    o->key.n += o->marks.n;
    if (o->out.n)
        memcpy(o->key.v + o->key.n, o->out.v, o->out.n * sizeof *o->out.v);
    o->key.n += o->out.n;
}

/* The label id of a state with row r (GM_ORD_ROW entries). */
static uint32_t row_label(ord *o, gm_intern *rows, const uint32_t *r)
{
    bool same = true;
    for (int i = 1; i < GM_ORD_ROW && same; i++)
        same = r[i] == r[0];
    if (same)
        return r[0];
    uint32_t id;
    if (gm_intern_put(rows, r, GM_ORD_ROW * sizeof *r, &id, NULL)) {
        set_nomem(o);
        return GM_LEX_NONE;
    }
    return o->in->nterminals + id;
}

static gm_status ord_init(ord *o, const gm_ord_input *in, gm_mem *m, gm_error *err)
{
    memset(o, 0, sizeof *o);
    o->in = in;
    o->nfa = in->nfa;
    o->mem = m;
    o->err = err;
    o->bad_look = UINT32_MAX;
    uint32_t n = in->nfa->nstates ? in->nfa->nstates : 1;
    o->stamp = gm_mem_calloc(m, n, sizeof *o->stamp);
    o->mstamp = gm_mem_calloc(m, n, sizeof *o->mstamp);
    o->cut = gm_mem_calloc(m, in->nterminals ? in->nterminals : 1, sizeof *o->cut);
    if (!o->stamp || !o->mstamp || !o->cut || make_history(o))
        set_nomem(o);
    else
        make_classes(o);
    return o->st;
}

static void ord_free(ord *o)
{
    gm_mem *m = o->mem;
    gm_vec_free(m, &o->out);
    gm_vec_free(m, &o->pool);
    gm_vec_free(m, &o->stack);
    gm_vec_free(m, &o->seen);
    gm_vec_free(m, &o->conds);
    gm_vec_free(m, &o->matched);
    gm_vec_free(m, &o->marks);
    gm_vec_free(m, &o->mstack);
    gm_vec_free(m, &o->key);
    gm_vec_free(m, &o->present);
    gm_mem_free(m, o->stamp);
    gm_mem_free(m, o->mstamp);
    gm_mem_free(m, o->cut);
    gm_mem_free(m, o->hset);
}

/* Copies o->key into *dst. */
static int take_key(ord *o, u32vec *dst)
{
    dst->n = 0;
    if (gm_vec_reserve(o->mem, dst, o->key.n + 1)) {
        set_nomem(o);
        return -1;
    }
    memcpy(dst->v, o->key.v, o->key.n * sizeof *o->key.v);
    dst->n = o->key.n;
    return 0;
}

gm_status gm_ord_determinize(const gm_ord_input *in, gm_mem *m, gm_dfa *out, gm_ord_rows *rows,
                             uint32_t *bad_look, gm_error *err)
{
    gm_limits defaults;
    gm_limits_init_defaults(&defaults);
    uint32_t max_states = in->max_states ? in->max_states : defaults.max_dfa_states;
    memset(out, 0, sizeof *out);
    out->mem = m;
    rows->n = 0;
    rows->rows = NULL;
    ord o;
    gm_intern sets, rowset;
    gm_intern_init(&sets, m);
    gm_intern_init(&rowset, m);
    u32vec startk = {0}, cur = {0};
    size_t next_cap = 0, label_cap = 0;
    if (ord_init(&o, in, m, err) != GM_OK)
        goto done;
    uint32_t k = out->nclasses = o.nclasses;
    memcpy(out->byte_class, o.byte_class, sizeof out->byte_class);
    start_key(&o);
    if (o.st != GM_OK || take_key(&o, &startk))
        goto done;
    uint32_t nstates = 1, row[GM_ORD_ROW], cls_label[257];
    for (uint32_t q = 0; q < nstates && o.st == GM_OK; q++) {
        /* Copy the key: the intern table may move its storage while states are added. */
        const uint32_t *key = startk.v;
        size_t klen = startk.n;
        if (q > 0) {
            size_t bytes;
            key = gm_intern_key(&sets, q - 1, &bytes);
            klen = bytes / sizeof *key;
        }
        cur.n = 0;
        if (gm_vec_reserve(m, &cur, klen + 1)) {
            set_nomem(&o);
            break;
        }
        memcpy(cur.v, key, klen * sizeof *key);
        cur.n = klen;
        view v;
        parse_key(cur.v, cur.n, &v);
        if (gm_vec_grow_(m, (void **)&out->next, &next_cap, (size_t)(q + 1) * k, sizeof *out->next) ||
            gm_vec_grow_(m, (void **)&out->label, &label_cap, (size_t)q + 1, sizeof *out->label)) {
            set_nomem(&o);
            break;
        }
        uint8_t group[256];
        uint32_t group_cell[256], group_label[256];
        bool group_done[256] = {false};
        bool grouped = class_groups(&o, &v, group);
        for (uint32_t c = 0; c <= k && o.st == GM_OK; c++) {
            uint32_t *cell = out->next + (size_t)q * k + c;
            if (c < k && grouped && group_done[group[c]]) {
                cls_label[c] = group_label[group[c]];
                *cell = group_cell[group[c]];
                continue;
            }
            step(&o, &v, c, &cls_label[c]);
            if (c == k || o.st != GM_OK)
                continue;
            *cell = GM_LEX_DEAD;
            if (o.out.n) {
                uint32_t id;
                int added;
                if (gm_intern_put(&sets, o.key.v, o.key.n * sizeof *o.key.v, &id, &added)) {
                    set_nomem(&o);
                    break;
                }
                if (added && nstates >= max_states) {
                    o.st = gm_error_set(err, GM_ERR_LIMIT,
                                        "the DFA needs more than %u states (gm_limits.max_dfa_states)",
                                        max_states);
                    break;
                }
                nstates += (uint32_t)added;
                *cell = id + 1;
            }
            if (grouped) {
                group_done[group[c]] = true;
                group_label[group[c]] = cls_label[c];
                group_cell[group[c]] = *cell;
            }
        }
        if (o.st != GM_OK)
            break;
        for (int b = 0; b < 256; b++)
            row[b] = cls_label[o.byte_class[b]];
        row[256] = cls_label[k];
        out->label[q] = row_label(&o, &rowset, row);
    }
    if (o.st == GM_OK) {
        out->nstates = nstates;
        rows->n = rowset.count;
        rows->rows = gm_mem_reallocarray(m, NULL, (size_t)rowset.count * GM_ORD_ROW + 1, sizeof *rows->rows);
        if (!rows->rows)
            set_nomem(&o);
        for (uint32_t i = 0; i < rowset.count && o.st == GM_OK; i++) {
            size_t bytes;
            memcpy(rows->rows + (size_t)i * GM_ORD_ROW, gm_intern_key(&rowset, i, &bytes),
                   GM_ORD_ROW * sizeof *rows->rows);
        }
    }
done:
    if (o.st != GM_OK) {
        gm_dfa_free(out);
        gm_mem_free(m, rows->rows);
        rows->rows = NULL;
        rows->n = 0;
    }
    if (bad_look)
        *bad_look = o.bad_look;
    gm_intern_free(&sets);
    gm_intern_free(&rowset);
    gm_vec_free(m, &startk);
    gm_vec_free(m, &cur);
    ord_free(&o);
    return o.st;
}

gm_status gm_ord_match(const gm_ord_input *in, gm_mem *m, const uint8_t *text, size_t len,
                       long *match_len, uint32_t *label, uint32_t *bad_look, gm_error *err)
{
    ord o;
    u32vec cur = {0};
    *match_len = -1;
    *label = GM_LEX_NONE;
    if (ord_init(&o, in, m, err) == GM_OK)
        start_key(&o);
    for (size_t i = 0; o.st == GM_OK && !take_key(&o, &cur); i++) {
        view v;
        parse_key(cur.v, cur.n, &v);
        uint32_t t;
        step(&o, &v, i < len ? o.byte_class[text[i]] : o.nclasses, &t);
        if (o.st == GM_OK && t != GM_LEX_NONE) {
            *match_len = (long)i;
            *label = t;
        }
        if (i == len || !o.out.n)
            break;
    }
    if (bad_look)
        *bad_look = o.bad_look;
    gm_vec_free(m, &cur);
    ord_free(&o);
    return o.st;
}
