/*
 * Thompson's construction over bytes, right to left: compile(node, out)
 * returns the entry of a fragment that continues to `out`.
 *
 * note [UTF-8 sets]
 * A code point set becomes the byte automaton of its UTF-8 sequences
 * (utf8_ranges.h). The sequences arrive sorted, so they are inserted into a
 * trie that keeps only the path of the last sequence open (shared
 * prefixes); a node is frozen once no later sequence can extend it and is
 * looked up by its edge list in a cache (shared suffixes), as in Daciuk's
 * incremental construction of minimal acyclic automata (and Rust
 * regex-automata's Utf8Compiler). \w thus costs a few hundred states
 * instead of thousands, and the frozen states are deterministic, which
 * keeps the subsets of the determinizer small. Frozen states are never
 * changed afterwards, so the cache is shared by the whole NFA.
 */
#include "lexer/nfa.h"

#include <string.h>

#include "lexer/utf8_ranges.h"
#include "base/error.h"
#include "base/vec.h"

/* An edge of a frozen UTF-8 state as the cache key sees it (no padding garbage). */
typedef struct key_edge {
    uint32_t to;
    uint8_t lo, hi, pad0, pad1;
} key_edge;

typedef struct unode {
    key_edge trans[256];
    uint32_t ntrans;
    bool has_last;
    uint8_t last_lo, last_hi;
} unode;

typedef struct builder {
    gm_nfa *nfa;
    bool failed;
    const uint32_t *look_id; /* [regex nodes] look id of each GM_RX_LOOK node */
    /* The open path of the UTF-8 trie: stack[0] is the root. */
    unode stack[5];
    int depth;
    uint32_t target;
} builder;

void gm_nfa_init(gm_nfa *nfa, gm_mem *m, const gm_limits *limits)
{
    memset(nfa, 0, sizeof *nfa);
    nfa->mem = m;
    gm_limits d;
    gm_limits_init_defaults(&d);
    nfa->max_states = limits && limits->max_nfa_states ? limits->max_nfa_states : d.max_nfa_states;
    gm_intern_init(&nfa->cache, m);
    nfa->start = UINT32_MAX;
}

void gm_nfa_free(gm_nfa *nfa)
{
    gm_mem *m = nfa->mem;
    gm_mem_free(m, nfa->tag);
    gm_mem_free(m, nfa->look);
    gm_mem_free(m, nfa->raw);
    gm_mem_free(m, nfa->off);
    gm_mem_free(m, nfa->edges);
    gm_mem_free(m, nfa->nbyte);
    gm_intern_free(&nfa->cache);
    gm_mem_free(m, nfa->cache_state);
    memset(nfa, 0, sizeof *nfa);
    nfa->mem = m;
}

uint32_t gm_nfa_new_state(gm_nfa *nfa, uint32_t tag)
{
    if (nfa->nstates >= nfa->max_states)
        return UINT32_MAX;
    if (gm_vec_grow_(nfa->mem, (void **)&nfa->tag, &nfa->tag_cap, nfa->nstates + 1, sizeof *nfa->tag))
        return UINT32_MAX;
    nfa->tag[nfa->nstates] = tag;
    if (nfa->look) {
        if (gm_vec_grow_(nfa->mem, (void **)&nfa->look, &nfa->look_cap, nfa->nstates + 1, sizeof *nfa->look))
            return UINT32_MAX;
        nfa->look[nfa->nstates] = GM_NFA_NO_TAG;
    }
    return nfa->nstates++;
}

static int add_edge(gm_nfa *nfa, uint32_t from, uint32_t to, uint8_t lo, uint8_t hi, uint8_t eps)
{
    if (gm_vec_grow_(nfa->mem, (void **)&nfa->raw, &nfa->raw_cap, nfa->nraw + 1, sizeof *nfa->raw))
        return -1;
    gm_nfa_raw_edge *r = &nfa->raw[nfa->nraw++];
    r->from = from;
    r->e.to = to;
    r->e.lo = lo;
    r->e.hi = hi;
    r->e.eps = eps;
    return 0;
}

int gm_nfa_add_eps(gm_nfa *nfa, uint32_t from, uint32_t to)
{
    return add_edge(nfa, from, to, 0, 0, 1);
}

int gm_nfa_add_range(gm_nfa *nfa, uint32_t from, uint8_t lo, uint8_t hi, uint32_t to)
{
    return add_edge(nfa, from, to, lo, hi, 0);
}

gm_status gm_nfa_fail(gm_nfa *nfa, gm_error *err)
{
    if (nfa->nstates >= nfa->max_states)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "the NFA needs more than %u states (gm_limits.max_nfa_states)",
                            nfa->max_states);
    return gm_mem_fail(nfa->mem, err, "an NFA");
}

/* ---- frozen byte states with suffix sharing ---- */

static uint32_t freeze(builder *b, const key_edge *trans, uint32_t n)
{
    gm_nfa *nfa = b->nfa;
    uint32_t id = gm_intern_find(&nfa->cache, trans, n * sizeof *trans);
    if (id != UINT32_MAX)
        return nfa->cache_state[id];
    uint32_t s = gm_nfa_new_state(nfa, GM_NFA_NO_TAG);
    if (s == UINT32_MAX)
        goto fail;
    for (uint32_t i = 0; i < n; i++)
        if (gm_nfa_add_range(nfa, s, trans[i].lo, trans[i].hi, trans[i].to))
            goto fail;
    int added;
    if (gm_intern_put(&nfa->cache, trans, n * sizeof *trans, &id, &added) ||
        gm_vec_grow_(nfa->mem, (void **)&nfa->cache_state, &nfa->cache_state_cap, (size_t)id + 1,
                     sizeof *nfa->cache_state))
        goto fail;
    nfa->cache_state[id] = s;
    return s;
fail:
    b->failed = true;
    return UINT32_MAX;
}

static uint32_t single_edge(builder *b, uint8_t lo, uint8_t hi, uint32_t to)
{
    key_edge e = {to, lo, hi, 0, 0};
    return freeze(b, &e, 1);
}

static void push_trans(unode *n, uint8_t lo, uint8_t hi, uint32_t to)
{
    key_edge e = {to, lo, hi, 0, 0};
    n->trans[n->ntrans++] = e;
}

/* Freezes the open nodes deeper than `from`; the node at `from` gets its last edge. */
static void compile_from(builder *b, int from)
{
    uint32_t next = b->target;
    while (from + 1 < b->depth && !b->failed) {
        unode *n = &b->stack[--b->depth];
        push_trans(n, n->last_lo, n->last_hi, next);
        next = freeze(b, n->trans, n->ntrans);
    }
    unode *top = &b->stack[b->depth - 1];
    if (top->has_last && !b->failed) {
        push_trans(top, top->last_lo, top->last_hi, next);
        top->has_last = false;
    }
}

static int add_sequence(void *ud, const gm_utf8_seq *seq)
{
    builder *b = ud;
    int prefix = 0;
    while (prefix < b->depth && prefix < seq->len && b->stack[prefix].has_last &&
           b->stack[prefix].last_lo == seq->lo[prefix] && b->stack[prefix].last_hi == seq->hi[prefix])
        prefix++;
    compile_from(b, prefix);
    if (b->failed)
        return -1;
    unode *top = &b->stack[b->depth - 1];
    top->has_last = true;
    top->last_lo = seq->lo[prefix];
    top->last_hi = seq->hi[prefix];
    for (int i = prefix + 1; i < seq->len; i++) {
        unode *n = &b->stack[b->depth++];
        n->ntrans = 0;
        n->has_last = true;
        n->last_lo = seq->lo[i];
        n->last_hi = seq->hi[i];
    }
    return 0;
}

static uint32_t compile_set(builder *b, const gm_cpset *set, uint32_t out)
{
    b->depth = 1;
    b->stack[0].ntrans = 0;
    b->stack[0].has_last = false;
    b->target = out;
    for (size_t i = 0; i < set->n; i++)
        if (gm_utf8_sequences(set->r[i].lo, set->r[i].hi, add_sequence, b))
            return UINT32_MAX;
    compile_from(b, 0);
    if (b->failed)
        return UINT32_MAX;
    return freeze(b, b->stack[0].trans, b->stack[0].ntrans);
}

/* ---- Thompson's construction ---- */

static uint32_t compile(builder *b, const gm_regex *re, uint32_t node, uint32_t out);

/* A state trying x, then y (y first when lazy). */
static uint32_t choice(builder *b, uint32_t x, uint32_t y, bool lazy)
{
    uint32_t s = gm_nfa_new_state(b->nfa, GM_NFA_NO_TAG);
    if (s == UINT32_MAX || gm_nfa_add_eps(b->nfa, s, lazy ? y : x) ||
        gm_nfa_add_eps(b->nfa, s, lazy ? x : y)) {
        b->failed = true;
        return UINT32_MAX;
    }
    return s;
}

static uint32_t compile_repeat(builder *b, const gm_regex *re, const gm_rx_node *n, uint32_t out)
{
    uint32_t x = re->kids[n->first];
    uint32_t cur;
    if (n->max == GM_RX_INF) {
        /* x{m,} = x^(m-1) x+ ; x+ = e, with the loop state L -> e | out after it. */
        uint32_t loop = gm_nfa_new_state(b->nfa, GM_NFA_NO_TAG);
        if (loop == UINT32_MAX) {
            b->failed = true;
            return UINT32_MAX;
        }
        uint32_t e = compile(b, re, x, loop);
        if (e == UINT32_MAX)
            return e;
        if (gm_nfa_add_eps(b->nfa, loop, n->lazy ? out : e) ||
            gm_nfa_add_eps(b->nfa, loop, n->lazy ? e : out)) {
            b->failed = true;
            return UINT32_MAX;
        }
        if (n->min == 0)
            return loop;
        cur = e;
        for (uint32_t i = 1; i < n->min && cur != UINT32_MAX; i++)
            cur = compile(b, re, x, cur);
        return cur;
    }
    /* x{m,n} = x^m (x (x ...)?)? with n - m optional copies. */
    cur = out;
    for (uint32_t j = n->min; j < n->max && cur != UINT32_MAX; j++) {
        uint32_t e = compile(b, re, x, cur);
        cur = e == UINT32_MAX ? e : choice(b, e, out, n->lazy);
    }
    for (uint32_t i = 0; i < n->min && cur != UINT32_MAX; i++)
        cur = compile(b, re, x, cur);
    return cur;
}

static uint32_t compile(builder *b, const gm_regex *re, uint32_t node, uint32_t out)
{
    if (b->failed)
        return UINT32_MAX;
    const gm_rx_node *n = &re->nodes[node];
    switch (n->kind) {
    case GM_RX_EMPTY:
        return out;
    case GM_RX_BYTE:
        return single_edge(b, (uint8_t)n->cp, (uint8_t)n->cp, out);
    case GM_RX_CHAR: {
        if (n->cp >= 0xD800 && n->cp <= 0xDFFF) {
            key_edge none = {0, 0, 0, 0, 0};
            return freeze(b, &none, 0); /* never in UTF-8 text: a dead state */
        }
        uint8_t buf[4];
        int len = gm_utf8_encode_char(n->cp, buf);
        for (int i = len - 1; i >= 0 && out != UINT32_MAX; i--)
            out = single_edge(b, buf[i], buf[i], out);
        return out;
    }
    case GM_RX_SET:
        return compile_set(b, &re->sets[n->set], out);
    case GM_RX_CONCAT:
        for (uint32_t i = n->count; i-- > 0 && out != UINT32_MAX;)
            out = compile(b, re, re->kids[n->first + i], out);
        return out;
    case GM_RX_ALT: {
        uint32_t s = gm_nfa_new_state(b->nfa, GM_NFA_NO_TAG);
        if (s == UINT32_MAX) {
            b->failed = true;
            return s;
        }
        for (uint32_t i = 0; i < n->count; i++) {
            uint32_t e = compile(b, re, re->kids[n->first + i], out);
            if (e == UINT32_MAX)
                return e;
            if (gm_nfa_add_eps(b->nfa, s, e)) {
                b->failed = true;
                return UINT32_MAX;
            }
        }
        return s;
    }
    case GM_RX_REPEAT:
        return compile_repeat(b, re, n, out);
    case GM_RX_LOOK: {
        /* Conditional passage: the ordered determinizer checks the body (lexer/ordered.h). */
        if (!b->look_id) {
            b->failed = true;
            return UINT32_MAX;
        }
        uint32_t s = gm_nfa_new_state(b->nfa, GM_NFA_NO_TAG);
        if (s == UINT32_MAX || gm_nfa_add_eps(b->nfa, s, out)) {
            b->failed = true;
            return UINT32_MAX;
        }
        b->nfa->look[s] = b->look_id[node];
        return s;
    }
    }
    return UINT32_MAX;
}

/* Starts the look column: every state so far is no lookaround. */
static int look_init(gm_nfa *nfa)
{
    if (gm_vec_grow_(nfa->mem, (void **)&nfa->look, &nfa->look_cap, nfa->nstates + 1, sizeof *nfa->look))
        return -1;
    for (uint32_t s = 0; s < nfa->nstates; s++)
        nfa->look[s] = GM_NFA_NO_TAG;
    return 0;
}

gm_status gm_nfa_add_regex(gm_nfa *nfa, const gm_regex *re, uint32_t out, uint32_t *entry,
                           gm_error *err)
{
    uint64_t need = gm_regex_min_states(re, re->root);
    if (need > nfa->max_states || nfa->nstates + need > nfa->max_states)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "the regex needs at least %llu NFA states, more than the limit of %u "
                            "(gm_limits.max_nfa_states)",
                            (unsigned long long)need, nfa->max_states);
    builder *b = gm_mem_calloc(nfa->mem, 1, sizeof *b);
    if (!b)
        return gm_mem_fail(nfa->mem, err, "an NFA");
    b->nfa = nfa;
    uint32_t *ids = NULL, nlook = 0;
    for (size_t i = 0; i < re->nnodes; i++)
        nlook += re->nodes[i].kind == GM_RX_LOOK;
    if (nlook) {
        ids = gm_mem_calloc(nfa->mem, re->nnodes, sizeof *ids);
        if (!ids || (!nfa->look && look_init(nfa))) {
            gm_mem_free(nfa->mem, ids);
            gm_mem_free(nfa->mem, b);
            return gm_mem_fail(nfa->mem, err, "an NFA");
        }
        for (size_t i = 0; i < re->nnodes; i++)
            if (re->nodes[i].kind == GM_RX_LOOK)
                ids[i] = nfa->nlooks++;
        b->look_id = ids;
    }
    gm_status st = GM_OK;
    uint32_t e = compile(b, re, re->root, out);
    if (e == UINT32_MAX)
        st = gm_nfa_fail(nfa, err);
    else
        *entry = e;
    gm_mem_free(nfa->mem, ids);
    gm_mem_free(nfa->mem, b);
    return st;
}

gm_status gm_nfa_finish(gm_nfa *nfa, uint32_t start, gm_error *err)
{
    gm_mem *m = nfa->mem;
    uint32_t n = nfa->nstates;
    nfa->start = start;
    nfa->off = gm_mem_calloc(m, (size_t)n + 1, sizeof *nfa->off);
    nfa->nbyte = gm_mem_calloc(m, n ? n : 1, sizeof *nfa->nbyte);
    nfa->edges = gm_mem_reallocarray(m, NULL, nfa->nraw ? nfa->nraw : 1, sizeof *nfa->edges);
    if (!nfa->off || !nfa->nbyte || !nfa->edges)
        return gm_mem_fail(m, err, "an NFA");
    /* Counting sort by source state; byte edges before epsilon edges. */
    for (size_t i = 0; i < nfa->nraw; i++) {
        nfa->off[nfa->raw[i].from + 1]++;
        if (!nfa->raw[i].e.eps)
            nfa->nbyte[nfa->raw[i].from]++;
    }
    for (uint32_t s = 0; s < n; s++)
        nfa->off[s + 1] += nfa->off[s];
    uint32_t *fill_b = gm_mem_calloc(m, n ? n : 1, sizeof *fill_b);
    uint32_t *fill_e = gm_mem_calloc(m, n ? n : 1, sizeof *fill_e);
    if (!fill_b || !fill_e) {
        gm_mem_free(m, fill_b);
        gm_mem_free(m, fill_e);
        return gm_mem_fail(m, err, "an NFA");
    }
    for (size_t i = 0; i < nfa->nraw; i++) {
        uint32_t s = nfa->raw[i].from;
        uint32_t at = nfa->raw[i].e.eps ? nfa->off[s] + nfa->nbyte[s] + fill_e[s]++
                                        : nfa->off[s] + fill_b[s]++;
        nfa->edges[at] = nfa->raw[i].e;
    }
    gm_mem_free(m, fill_b);
    gm_mem_free(m, fill_e);
    gm_mem_free(m, nfa->raw);
    nfa->raw = NULL;
    nfa->nraw = nfa->raw_cap = 0;
    gm_intern_free(&nfa->cache);
    gm_intern_init(&nfa->cache, m);
    gm_mem_free(m, nfa->cache_state);
    nfa->cache_state = NULL;
    nfa->cache_state_cap = 0;
    return GM_OK;
}
