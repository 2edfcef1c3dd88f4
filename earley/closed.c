/*
 * Closed subtrees of the vocabulary trie (note [closed subtrees] in
 * maskcache.c): what lies below each trie node, per vocabulary, and the
 * test that lets a mask-cache walk accept a whole subtree without
 * visiting it.
 *
 * note [utf-8 loops]
 * Inside a JSON string the set X after a plain character is the same set
 * again, but only for ASCII: a non-ASCII character takes two to four
 * bytes, through sets that are not X. So a subtree holding any non-ASCII
 * byte was never closed, and byte-level vocabularies put such bytes under
 * most nodes: a string state's walk visited 74,000 of llama3's 275,000
 * nodes. A set is a *UTF-8 loop* when every well-formed multi-byte
 * character leads from it back to it through live sets: checked once per
 * set by stepping it along the UTF-8 automaton below (about 500 cached
 * transitions), each automaton state standing for one set. Then a subtree
 * whose strings are all well-formed UTF-8 prefixes (precomputed per node,
 * for each automaton state, in the same pass as the bytes below) and
 * whose ASCII bytes all lead from X back to X is accepted whole: every
 * token below ends in a live set. Grammars that leave out some non-ASCII
 * characters are not UTF-8 loops and keep the byte test.
 *
 * note [counted loops]
 * A string with a length bound is a repetition rule (note [repetition
 * rules] in fsm.h): each plain character moves its counter on, so the set
 * after it is never the set before, no subtree was closed, and a walk
 * from inside such a string visited the whole trie (270,000 nodes, 8 ms on
 * llama3). But whether a counted item survives a byte depends on its
 * counter only through `counter < max` (`counter >= min` only adds
 * completions: more items, never fewer). Say byte b *shifts* X when it
 * leads to X with the counters of some items moved on and everything else
 * equal (same items, origins, flags). If every counted item of X is at
 * least k iterations from its maximum (X's slack), each of the sets k
 * bytes of loops and shifts away still holds those items, moved on: every
 * one is alive. So a subtree whose bytes all loop or shift, and whose
 * tokens are at most slack bytes longer than the node, is accepted whole.
 * Likewise for UTF-8: when every multi-byte character leads from X to X
 * or to X shifted (one iteration a character, a JSON string's), X is a
 * counted UTF-8 loop, and closes subtrees of UTF-8 text within its slack.
 */
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"

/* The UTF-8 automaton (RFC 3629: no overlongs, no surrogates, nothing past
   U+10FFFF) over the states below; U8_BAD: no transition. */
enum { U8_S0, U8_C1, U8_C2, U8_C3, U8_E0, U8_ED, U8_F0, U8_F4, U8_STATES, U8_BAD = 0xff };
_Static_assert((int)U8_STATES == (int)GM_EINT_STATES, "interiors group by UTF-8 state");

static uint8_t u8_next(uint8_t q, uint8_t b)
{
    switch (q) {
    case U8_S0:
        if (b < 0x80)
            return U8_S0;
        if (b >= 0xc2 && b <= 0xdf)
            return U8_C1;
        if (b == 0xe0)
            return U8_E0;
        if (b == 0xed)
            return U8_ED;
        if (b >= 0xe1 && b <= 0xef)
            return U8_C2;
        if (b == 0xf0)
            return U8_F0;
        if (b == 0xf4)
            return U8_F4;
        if (b >= 0xf1 && b <= 0xf3)
            return U8_C3;
        return U8_BAD;
    case U8_C1:
        return b >= 0x80 && b <= 0xbf ? U8_S0 : U8_BAD;
    case U8_C2:
        return b >= 0x80 && b <= 0xbf ? U8_C1 : U8_BAD;
    case U8_C3:
        return b >= 0x80 && b <= 0xbf ? U8_C2 : U8_BAD;
    case U8_E0:
        return b >= 0xa0 && b <= 0xbf ? U8_C1 : U8_BAD;
    case U8_ED:
        return b >= 0x80 && b <= 0x9f ? U8_C1 : U8_BAD;
    case U8_F0:
        return b >= 0x90 && b <= 0xbf ? U8_C2 : U8_BAD;
    case U8_F4:
        return b >= 0x80 && b <= 0x8f ? U8_C2 : U8_BAD;
    default:
        return U8_BAD;
    }
}

void gm_tbelow_destroy(gm_mem *m, gm_tbelow *b)
{
    if (!b)
        return;
    gm_mem_free(m, b->bytes);
    gm_mem_free(m, b->utf8);
    gm_mem_free(m, b->deep);
    gm_mem_free(m, b);
}

gm_tbelow *gm_tbelow_create(gm_mem *m, const gm_trie *t)
{
    if (!t->nnodes)
        return NULL;
    gm_tbelow *b = gm_mem_calloc(m, 1, sizeof *b);
    if (!b)
        return NULL;
    /* share[row[byte]][bits] maps the validity bits of a child to its
       parent's share: bit q when byte is valid from q and the child's bit
       for the state it leads to is set. Bytes that step the UTF-8
       automaton alike share a row (fourteen rows), so the pass below
       looks the share up rather than stepping every state at every node
       (half of its time on a 150K-token vocabulary). */
    uint8_t to[256][U8_STATES], row[256], rep[256];
    uint32_t nrows = 0;
    uint8_t(*share)[256] = gm_mem_alloc(m, 256 * sizeof *share);
    for (uint32_t c = 0; c < 256 && share; c++) {
        for (uint8_t q = 0; q < U8_STATES; q++)
            to[c][q] = u8_next(q, (uint8_t)c);
        uint32_t r = 0;
        while (r < nrows && memcmp(to[c], to[rep[r]], U8_STATES))
            r++;
        row[c] = (uint8_t)r;
        if (r < nrows)
            continue;
        rep[nrows++] = (uint8_t)c;
        for (uint32_t bits = 0; bits < 256; bits++) {
            uint8_t sh = 0;
            for (uint8_t q = 0; q < U8_STATES; q++)
                if (to[c][q] != U8_BAD && ((bits >> to[c][q]) & 1))
                    sh |= (uint8_t)(1u << q);
            share[r][bits] = sh;
        }
    }
    b->bytes = gm_mem_alloc(m, (size_t)t->nnodes * 4 * sizeof *b->bytes);
    b->utf8 = gm_mem_alloc(m, t->nnodes);
    b->deep = gm_mem_alloc(m, (size_t)t->nnodes * sizeof *b->deep);
    /* One pass in reverse pre-order: a node comes after its whole subtree,
       and acc[d] gathers what lies at depth >= d since the last node at
       depth d - 1 (their parent) took it. */
    uint64_t(*acc)[4] = gm_mem_calloc(m, (size_t)t->max_depth + 2, sizeof *acc);
    uint8_t *ok = gm_mem_alloc(m, (size_t)t->max_depth + 2);
    uint16_t *deep = gm_mem_calloc(m, (size_t)t->max_depth + 2, sizeof *deep);
    if (!b->bytes || !b->utf8 || !b->deep || !acc || !ok || !deep || !share) {
        gm_mem_free(m, share);
        gm_mem_free(m, acc);
        gm_mem_free(m, ok);
        gm_mem_free(m, deep);
        gm_tbelow_destroy(m, b);
        return NULL;
    }
    memset(ok, 0xff, (size_t)t->max_depth + 2);
    memset(b->node1, 0xff, sizeof b->node1);
    for (uint32_t i = 1; i < t->nnodes; i = t->nodes[i].skip)
        b->node1[t->nodes[i].byte] = i;
    for (uint32_t i = t->nnodes; i-- > 0;) {
        uint32_t d = t->nodes[i].depth;
        uint64_t *below = acc[d + 1], *here = acc[d], *out = b->bytes + (size_t)i * 4;
        for (int k = 0; k < 4; k++) {
            out[k] = below[k];
            here[k] |= below[k];
            below[k] = 0;
        }
        b->utf8[i] = ok[d + 1];
        ok[d + 1] = 0xff;
        uint16_t here_d = d > UINT16_MAX ? UINT16_MAX : (uint16_t)d;
        b->deep[i] = deep[d + 1] > here_d ? deep[d + 1] : here_d;
        deep[d + 1] = 0;
        if (b->deep[i] > deep[d])
            deep[d] = b->deep[i];
        if (i) {
            uint8_t c = t->nodes[i].byte;
            here[c >> 6] |= (uint64_t)1 << (c & 63);
            ok[d] &= share[row[c]][b->utf8[i]];
        }
    }
    gm_mem_free(m, share);
    gm_mem_free(m, acc);
    gm_mem_free(m, ok);
    gm_mem_free(m, deep);
    return b;
}

/* Whether t is x with the counters of some items moved on by one
   iteration (note [counted loops]). */
static bool is_shift(const gm_egrammar *g, const gm_estate *x, const gm_estate *t)
{
    if (!t || !x->slack || x->slack == UINT32_MAX || t->nitems != x->nitems ||
        t->flags != x->flags)
        return false;
    for (uint32_t i = 0; i < x->nitems; i++) {
        const gm_eitem *a = &x->items[i], *b = &t->items[i];
        if (a->state != b->state || a->origin != b->origin)
            return false;
        if (a->count != b->count &&
            (b->count != a->count + 2 || !g->rules[g->state_rule[a->state]].repeat))
            return false;
    }
    return true;
}

/* Records what x does with byte class c: to t, back to x, shifted or neither. */
static void learn_loop(const gm_eengine *e, gm_estate *x, uint32_t c, const gm_estate *t)
{
    const uint64_t *cb = e->class_bytes + (size_t)c * 4;
    uint64_t *to = t == x ? x->loops : is_shift(e->g, x, t) ? x->shifts : x->noloop;
    for (int k = 0; k < 4; k++)
        to[k] |= cb[k];
}

/* Whether x is a UTF-8 loop (note [utf-8 loops]): 2, or 3 when characters
   lead back to x with counters moved on (note [counted loops]); 1 when
   not. Learns what every ASCII byte does from x on the way. */
static gm_status utf8_loop(gm_eengine *e, gm_escratch *w, gm_estate *x, uint8_t *kind,
                           gm_error *err)
{
    const gm_egrammar *g = e->g;
    /* Each state is stepped after the one it is entered from. */
    static const uint8_t order[U8_STATES] = {U8_S0, U8_F0, U8_F4, U8_C3, U8_E0, U8_ED, U8_C2, U8_C1};
    gm_estate *sigma[U8_STATES] = {x};
    bool counted = false;
    *kind = 1;
    for (int oi = 0; oi < U8_STATES; oi++) {
        uint8_t q = order[oi];
        if (!sigma[q])
            return GM_OK;
        /* From x, the lead bytes first: a set outside strings fails on the
           first of them, before a step over every ASCII class. */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t b = q == U8_S0 ? (i + 0x80) & 0xff : i;
            uint8_t q2 = u8_next(q, (uint8_t)b);
            if (q2 == U8_BAD)
                continue;
            gm_estate *t;
            gm_status st = gm_eset_step_borrowed(e, w, sigma[q], (uint8_t)b, &t, err);
            if (st != GM_OK)
                return st;
            if (q == U8_S0 && b < 0x80) {
                learn_loop(e, x, g->byte_class[b], t);
                continue;
            }
            if (!t || !t->interned)
                return GM_OK;
            if (q2 == U8_S0) {
                if (t != x && !is_shift(g, x, t))
                    return GM_OK;
                counted |= t != x;
                continue;
            }
            if (sigma[q2] && sigma[q2] != t)
                return GM_OK;
            sigma[q2] = t;
        }
    }
    *kind = counted ? 3 : 2;
    return GM_OK;
}

/* Whether x's successor t keeps a closed subtree closed: x again, or x
   shifted while shifts are within the slack (shift_ok). */
static bool stays(const gm_egrammar *g, const gm_estate *x, const gm_estate *t, bool shift_ok)
{
    return t == x || (shift_ok && is_shift(g, x, t));
}

/* Steps x over byte b and records what b does from x; *ok: as stays. */
static gm_status step_learn(gm_eengine *e, gm_escratch *w, gm_estate *x, uint8_t b, bool shift_ok,
                            bool *ok, gm_error *err)
{
    gm_estate *t;
    gm_status st = gm_eset_step_borrowed(e, w, x, b, &t, err);
    if (st != GM_OK)
        return st;
    learn_loop(e, x, e->g->byte_class[b], t);
    *ok = stays(e->g, x, t, shift_ok);
    return GM_OK;
}

gm_status gm_eclosed_below(gm_eengine *e, gm_escratch *w, gm_estate *x, const gm_tbelow *tb,
                           uint32_t node, bool *closed, gm_error *err)
{
    const gm_egrammar *g = e->g;
    const uint64_t *below = tb->bytes + (size_t)node * 4;
    *closed = false;
    /* Shifts close the subtree only within x's slack (a byte starts at
       most one iteration). */
    bool shift_ok = x->slack != UINT32_MAX &&
                    (uint32_t)(tb->deep[node] - e->t->nodes[node].depth) <= x->slack;
    /* Every test below needs each ASCII byte below to loop (or shift): the
       first child's byte is tried first, as the walk steps it next anyway.
       Most sets outside strings fail here, before the UTF-8 check or a step
       over other bytes below builds sets no walk asks for. */
    uint8_t c1 = e->t->nodes[node + 1].byte;
    if (c1 < 0x80 && !(((x->loops[c1 >> 6] | x->shifts[c1 >> 6]) >> (c1 & 63)) & 1)) {
        bool ok;
        gm_status st = step_learn(e, w, x, c1, shift_ok, &ok, err);
        if (st != GM_OK || !ok)
            return st;
    }
    if ((below[2] | below[3]) && (tb->utf8[node] & (1u << U8_S0))) {
        if (x->u8loop == 0) {
            gm_status st = utf8_loop(e, w, x, &x->u8loop, err);
            if (st != GM_OK)
                return st;
        }
        if (x->u8loop == 2 || (x->u8loop == 3 && shift_ok)) {
            uint64_t ok0 = x->loops[0] | (shift_ok ? x->shifts[0] : 0);
            uint64_t ok1 = x->loops[1] | (shift_ok ? x->shifts[1] : 0);
            *closed = !(below[0] & ~ok0) && !(below[1] & ~ok1);
            return GM_OK;
        }
    }
    uint64_t unk[4], any = 0;
    if (x->slack == UINT32_MAX) {
        /* (the common case, no counters: shifts are empty) */
        for (int k = 0; k < 4; k++) {
            if (below[k] & x->noloop[k])
                return GM_OK;
            unk[k] = below[k] & ~x->loops[k];
            any |= unk[k];
        }
    } else {
        for (int k = 0; k < 4; k++) {
            uint64_t ok = x->loops[k] | (shift_ok ? x->shifts[k] : 0);
            if (below[k] & (x->noloop[k] | (x->shifts[k] & ~ok)))
                return GM_OK;
            unk[k] = below[k] & ~ok;
            any |= unk[k];
        }
    }
    if (!any) {
        *closed = true;
        return GM_OK;
    }
    /* Transitions x has already: no step. */
    if (x->next)
        for (int k = 0; k < 4; k++)
            for (uint64_t m = unk[k]; m; m &= m - 1) {
                uint32_t c = g->byte_class[k * 64 + __builtin_ctzll(m)];
                gm_estate *t = x->next[c];
                if (!t)
                    continue;
                if (t == e->outer)
                    t = NULL;
                learn_loop(e, x, c, t);
                if (!stays(g, x, t, shift_ok))
                    return GM_OK;
            }
    for (int k = 0; k < 4; k++)
        for (uint64_t m = unk[k] & ~x->loops[k] & ~x->shifts[k]; m; m &= m - 1) {
            uint32_t b = (uint32_t)(k * 64 + __builtin_ctzll(m));
            if (((x->loops[k] | x->shifts[k]) >> (b & 63)) & 1)
                continue;
            bool ok;
            gm_status st = step_learn(e, w, x, (uint8_t)b, shift_ok, &ok, err);
            if (st != GM_OK || !ok)
                return st;
        }
    *closed = true;
    return GM_OK;
}

/*
 * note [string interiors]
 * Inside a JSON string the mask cache's entry of the string's content is a
 * walk from a UTF-8 loop X (note [utf-8 loops]): every ASCII byte of L
 * (the bytes that lead from X back to X) and every well-formed multi-byte
 * character keep the walk in X (or in the set sigma[q] X is in after the
 * first bytes of a character, q the UTF-8 automaton's state). A subtree
 * with a quote, a backslash or a line break anywhere below is not closed,
 * so the walk visited every node on the way to one: 13,800 of llama3's
 * 275,000 nodes, 0.5-1 ms, for each such entry of each grammar. What the
 * walk does inside depends on L alone: which tokens it accepts without
 * leaving X (every token whose path stays inside), and the *frontier*,
 * the nodes where the path first leaves (a byte outside L from X, or a
 * byte the UTF-8 automaton refuses from q). So the interior of L is
 * computed once per vocabulary (the cross-grammar cache keeps it) with
 * the frontier grouped by (q, byte): an entry's walk takes the inside
 * tokens as they are, steps sigma[q] once per group, skips a dead group
 * without touching its nodes (a raw line break, most of the frontier),
 * and walks the subtrees of the nodes of the live groups (the string's
 * end, an escape) from the set the step gave. Exact: every path inside
 * ends in X or a sigma[q], all alive, and every other token goes through
 * a frontier node whose set is the real step's.
 */
gm_einterior *gm_einterior_create(gm_mem *m, const gm_trie *t, uint32_t words,
                                  const uint64_t loops[2])
{
    gm_einterior *x = gm_mem_calloc(m, 1, sizeof *x);
    uint8_t *q = gm_mem_alloc(m, (size_t)t->max_depth + 2);
    /* the frontier as (group, node) pairs in walk order, nodes ascending */
    GM_VEC(uint32_t) fr = {0};
    if (!x || !q || !(x->acc = gm_mem_calloc(m, words ? words : 1, sizeof *x->acc)))
        goto fail;
    x->loops[0] = loops[0];
    x->loops[1] = loops[1];
    /* the UTF-8 automaton as a table: the walk of the whole trie steps it */
    uint8_t next[U8_STATES][256];
    for (uint8_t s = 0; s < U8_STATES; s++)
        for (uint32_t c = 0; c < 256; c++)
            next[s][c] = u8_next(s, (uint8_t)c);
    /* One walk: the inside tokens, and the frontier with its size per group
       (a second walk to place the frontier by group was half the time of a
       first mask on a fresh vocabulary: 0.6M nodes for gemma3) */
    uint32_t count[GM_EINT_GROUPS] = {0};
    q[0] = U8_S0;
    for (uint32_t i = 1; i < t->nnodes;) {
        const gm_trie_node *nd = &t->nodes[i];
        uint8_t p = q[nd->depth - 1], b = nd->byte, n;
        if (p == U8_S0 && b < 0x80)
            n = ((loops[b >> 6] >> (b & 63)) & 1) ? U8_S0 : U8_BAD;
        else
            n = next[p][b];
        if (n == U8_BAD) {
            uint32_t g = (uint32_t)p << 8 | b;
            count[g]++;
            if (gm_vec_push(m, &fr, g) || gm_vec_push(m, &fr, i))
                goto fail;
            i = nd->skip;
            continue;
        }
        for (uint32_t k = nd->tok_begin; k < nd->tok_end; k++)
            x->acc[t->tokens[k] >> 5] |= 1u << (t->tokens[k] & 31);
        q[nd->depth] = n;
        i++;
    }
    /* groups in (q, byte) order; key[g]: where group g's next node goes (a
       stable counting sort: each group stays ascending) */
    uint32_t ng = 0, nfront = (uint32_t)(fr.n / 2);
    for (uint32_t g = 0; g < GM_EINT_GROUPS; g++)
        ng += count[g] != 0;
    x->groups = gm_mem_alloc(m, (ng ? ng : 1) * sizeof *x->groups);
    x->front = gm_mem_alloc(m, (nfront ? nfront : 1) * sizeof *x->front);
    if (!x->groups || !x->front)
        goto fail;
    uint32_t at = 0;
    for (uint32_t g = 0; g < GM_EINT_GROUPS; g++) {
        uint32_t c = count[g];
        count[g] = at;
        if (c) {
            x->groups[x->ngroups++] = (gm_eint_group){(uint8_t)(g >> 8), (uint8_t)g, at, c};
            at += c;
        }
    }
    for (size_t k = 0; k < fr.n; k += 2)
        x->front[count[fr.v[k]]++] = fr.v[k + 1];
    x->nfront = nfront;
    gm_mem_free(m, q);
    gm_vec_free(m, &fr);
    x->bytes = sizeof *x + (size_t)words * 4 + (size_t)x->ngroups * sizeof *x->groups +
               (size_t)x->nfront * 4;
    return x;
fail:
    gm_mem_free(m, q);
    gm_vec_free(m, &fr);
    gm_einterior_destroy(m, x);
    return NULL;
}

void gm_einterior_destroy(gm_mem *m, gm_einterior *x)
{
    if (!x)
        return;
    gm_mem_free(m, x->acc);
    gm_mem_free(m, x->groups);
    gm_mem_free(m, x->front);
    gm_mem_free(m, x);
}

gm_status gm_einterior_of(gm_eengine *e, gm_escratch *w, gm_estate *x, bool *is,
                          gm_estate *sigma[GM_EINT_STATES], gm_error *err)
{
    *is = false;
    if (!e->x || !x->interned || x->slack != UINT32_MAX || (x->flags & GM_ES_ESCAPED))
        return GM_OK;
    if (x->u8loop == 0) {
        gm_status st = utf8_loop(e, w, x, &x->u8loop, err);
        if (st != GM_OK)
            return st;
    }
    if (x->u8loop != 2)
        return GM_OK;
    /* sigma[q]: the set after the first bytes of a character that leave
       the automaton in q; utf8_loop checked that every way into q gives one
       set, so one lead byte per state finds it */
    static const uint8_t lead[GM_EINT_STATES] = {[U8_C1] = 0xc2, [U8_C2] = 0xe1, [U8_C3] = 0xf1,
                                                  [U8_E0] = 0xe0, [U8_ED] = 0xed, [U8_F0] = 0xf0,
                                                  [U8_F4] = 0xf4};
    sigma[U8_S0] = x;
    for (uint8_t s = 1; s < GM_EINT_STATES; s++) {
        gm_estate *t;
        gm_status st = gm_eset_step_borrowed(e, w, x, lead[s], &t, err);
        if (st != GM_OK)
            return st;
        if (!t || !t->interned || (t->flags & GM_ES_ESCAPED))
            return GM_OK;
        sigma[s] = t;
    }
    *is = true;
    return GM_OK;
}
