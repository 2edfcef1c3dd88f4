/*
 * The code-block engine's matcher ops (note [engine ops]): an Earley
 * TagDispatch grammar whose lalr tags hand their content to a bundled LALR
 * grammar until the tag's end.
 *
 * note [code blocks]
 * A structural tag {"begin": B, "content": {"type": "lalr", "grammar": G},
 * "end": F} (dispatch/stag.h) compiles, in the Earley grammar of the whole
 * structure, to B X F where X is an external symbol (note [external
 * symbols] in earley/engine.h) naming G, B and F. The language: wherever
 * the Earley grammar reads X, the output holds a program P of G such that
 * P F contains F only at its end (Markdown: the first closing fence closes
 * the block), then F, then what the Earley grammar reads after X F.
 *
 * Why a composite engine: the Earley engine cannot host a bundled grammar
 * as it is (a Lark lexer with maximal munch, LALR tables, Python's
 * indentation layer), and converting those grammars would lose the LALR
 * engine's exact and fast masks. So each engine keeps its own states and
 * masks, and they meet only at the fences: the Earley grammar says where a
 * block starts (it can read X), the block's end automaton and the LALR
 * state say where it ends, and the few tokens that cross a fence are
 * walked through both.
 *
 * A state is a small set of configurations (the output may be read more
 * than one way: free text that could also be a tag's begin, say), each
 *   prose (e): the Earley state e; or
 *   block (j, e, k, L): inside block j, e the Earley state after X, L the
 *     LALR state after the code committed so far, and the last k bytes of
 *     the output equal to F[0..k) (the longest such k, Knuth–Morris–Pratt):
 *     they are either the start of F or more code — pending.
 * plus the last bytes of the output (a history). A byte b moves
 *   prose e -> prose (e b), and also block (j, (e b) X, 0, start of G) for
 *     every block j whose begin the output now ends with and which (e b) can
 *     read X at (X only ever follows B's bytes, so this check is complete);
 *   block (j, e, k, L) -> with k' the KMP state after F[0..k) b:
 *     k' = |F|: prose (e F) if L may end here (the program is whole; the
 *       LALR engine's end condition, with Python's open indentation closed);
 *     else block (j, e, k', L c) where c = (F[0..k) b)[0 .. k+1-k') is the
 *       code no longer pending (L must accept it), kept only while it can
 *       go on: L c may end (the F may follow) or L c accepts F[0..k').
 * (The last rule assumes that a program prefix that can go on can go on
 * without writing F, true of Python, Go, Java and JSON, whose code never
 * needs a line starting with ``` to close what is open.) EOS is allowed
 * iff some prose configuration accepts; at most GM_BLOCKS_MAX_CONF
 * configurations (GM_ERR_LIMIT beyond).
 *
 * Masks are the union over configurations, exact without stepping every
 * token: a token is allowed iff stepping its bytes through the rules above
 * leaves some configuration (check_token, the definition), and the fast
 * parts below only take tokens that check_token would allow or leave the
 * rest to it:
 *   prose e: the Earley mask of e (tokens read as free text to their end;
 *     one that ends exactly at B's end is viable in the Earley grammar,
 *     which reads X next). Tokens that finish B and go on into the code are
 *     checked: precomputed per block, the tokens t with, at a position p
 *     before their last byte, t[..p] ending with B, or t[..p] a suffix of B
 *     whose missing start the history supplies (a few tokens per block).
 *   block (j, e, k, L): let L1 = L F[0..k) (the pending bytes taken as
 *     code). A token whose KMP run from state k equals its run from 0 and
 *     never completes F behaves as from (L1, 0): if its run ends at state
 *     0 it is allowed iff L1 accepts it (the LALR mask of L1); if at k'' > 0
 *     (it ends with "\n", "\n`", ...: C_end) it is allowed iff L1 accepts it
 *     or L1 accepts its bytes before the pending k'' and may end there —
 *     the LALR mask; for the C_end tokens it lacks (about 2,000 of them in
 *     llama3: most tokens that end with a line break), filters that are
 *     necessary conditions — the lexer alone reads their bytes before the
 *     pending k'' from L1's lexer state and may end there (a bit set per
 *     lexer state, built on first use), the longest token those bytes
 *     start with is allowed by the LALR mask — then the exact condition on
 *     a virtual stack (gm_mask_can_end_after: no allocation). Every other
 *     token (its run from k differs from the run from 0, or completes F:
 *     tokens holding the fence, tokens starting with '`' after "\n") gets
 *     what the end's automaton alone says about it (the code it commits
 *     before F completes, whether F completes): all pending is decided
 *     exactly (L may end, or L1 accepts it), a token whose committed code
 *     the LALR mask rejects (by the longest token it starts with) or whose
 *     F completes at once where L may not end is rejected, the rest go to
 *     check_token.
 *   The lists are computed once per compiled grammar (gm_cblocks_create).
 * A compiled file holds the Earley automata; loading it reads the blocks
 * from the external symbols and builds their tables again, lazily.
 */
#include "runtime/blocks.h"

#include <stdatomic.h>
#include <string.h>

#include "earley/engine.h"
#include "runtime/engine.h"
#include "runtime/mask.h"
#include "runtime/objects.h"
#include "spanner/tables.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

enum {
    GM_BLOCKS_MAX_CONF = 32,
    HIST = GM_STAG_MAX_FENCE,
    NO_BLOCK = UINT32_MAX,
    NO_ID = UINT32_MAX,
    EMPTY_PREFIX = UINT32_MAX - 1,
};

typedef GM_VEC(uint32_t) idvec;

/*
 * What the end's automaton alone says about a checked token t from state k
 * (filters before check_token, each a necessary condition or the exact
 * answer): the bytes of F[0..k) t committed as code before the end
 * completes (`committed`), whether it completes (`fence`), and the longest
 * token that t's committed bytes start with.
 */
typedef struct checkf {
    uint32_t t;
    uint32_t committed;
    uint32_t prefix;          /* when committed > k: NO_ID or a token */
    uint8_t fence;
} checkf;
typedef GM_VEC(checkf) checkvec;

/* ---- per vocabulary ---------------------------------------------------------- */

typedef struct cblock {
    const gm_block *b;
    gm_compiled *inner;       /* LALR, the same vocabulary (c->inner[i], api_compiled.c's) */
    uint8_t (*next)[256];     /* [end_len] KMP: bytes of F matched after k then b */
    uint32_t *check;          /* [end_len][words]: tokens checked in state k */
    checkvec *check_list;     /* [end_len] the same as lists, with their filters */
    idvec cend;               /* C_end tokens */
    idvec cend_prefix;        /* the longest token their code p starts with: NO_ID,
                                 EMPTY_PREFIX (p is empty) or an id */
    idvec cend_len;           /* the length of p (the token's bytes before the pending end) */
    /* Per spanner state q, built on first use: bit i set when the lexer alone reads the
       code p of cend[i] from q and may end there (lexes_to_end). */
    _Atomic(uint64_t *) *lexok;
    idvec *strad;             /* [begin_len + 1]: tokens entering the block at m = 1.. */
} cblock;

struct gm_cblocks {
    uint32_t n;
    uint32_t words;
    cblock *v;
};

static void cblock_free(gm_mem *m, cblock *cb)
{
    /* cb->b may live in the inner grammar (a loaded file's blocks): read it first */
    uint32_t L = cb->b->end_len, B = cb->b->begin_len;
    for (uint32_t q = 0; cb->lexok && q < cb->inner->spanner->nstates; q++)
        gm_mem_free(m, atomic_load(&cb->lexok[q]));
    gm_mem_free(m, cb->lexok);
    gm_mem_free(m, cb->next);
    gm_mem_free(m, cb->check);
    for (uint32_t k = 0; cb->check_list && k < L; k++)
        gm_vec_free(m, &cb->check_list[k]);
    gm_mem_free(m, cb->check_list);
    gm_vec_free(m, &cb->cend);
    gm_vec_free(m, &cb->cend_prefix);
    gm_vec_free(m, &cb->cend_len);
    for (uint32_t i = 0; cb->strad && i <= B; i++)
        gm_vec_free(m, &cb->strad[i]);
    gm_mem_free(m, cb->strad);
}

void gm_cblocks_destroy(gm_compiled *c)
{
    struct gm_cblocks *x = c->cblocks;
    if (!x)
        return;
    for (uint32_t i = 0; i < x->n; i++)
        cblock_free(&c->mem, &x->v[i]);
    gm_mem_free(&c->mem, x->v);
    gm_mem_free(&c->mem, x);
    c->cblocks = NULL;
}

static void kmp_build(const gm_block *b, uint8_t (*next)[256])
{
    uint32_t L = b->end_len;
    for (uint32_t k = 0; k < L; k++)
        for (unsigned c = 0; c < 256; c++) {
            uint8_t s[GM_STAG_MAX_FENCE + 1];
            memcpy(s, b->end, k);
            s[k] = (uint8_t)c;
            uint32_t j = k + 1;
            while (j && memcmp(s + k + 1 - j, b->end, j))
                j--;
            next[k][c] = (uint8_t)j;
        }
}

static bool bit(const uint32_t *m, uint32_t t) { return (m[t >> 5] >> (t & 31)) & 1; }
static void set_bit(uint32_t *m, uint32_t t) { m[t >> 5] |= (uint32_t)1 << (t & 31); }

/* The longest token that s[0..n) starts with: EMPTY_PREFIX for n = 0, NO_ID when none. */
static uint32_t token_prefix_of(const gm_trie *t, const uint8_t *s, size_t n)
{
    if (!n)
        return EMPTY_PREFIX;
    for (size_t k = n; k > 0; k--) {
        uint32_t node = gm_trie_find(t, s, k);
        if (node != UINT32_MAX && t->nodes[node].depth == k &&
            t->nodes[node].tok_begin < t->nodes[node].tok_end)
            return t->tokens[t->nodes[node].tok_begin];
    }
    return NO_ID;
}

/*
 * Whether the lexer alone, from state q, reads s[0..n) and can end there (the
 * pending lexeme a whole terminal): needed for the code to end after s, and
 * cheap (no parser); inside a string literal it fails for most tokens.
 */
static bool lexes_to_end(const gm_spanner *sp, uint32_t q, const uint8_t *s, size_t n)
{
    uint32_t emit[GM_SPANNER_MAX_EMIT], nemit;
    for (size_t i = 0; i < n; i++)
        if (!gm_spanner_step(sp, q, s[i], &q, emit, &nemit))
            return false;
    return gm_spanner_finish(sp, q, emit, &nemit, &q);
}

/* cb->lexok[q], built on first use (NULL when out of memory). */
static const uint64_t *lexok_of(const gm_compiled *c, const cblock *cb, uint32_t q)
{
    uint64_t *ok = atomic_load_explicit(&cb->lexok[q], memory_order_acquire);
    if (ok)
        return ok;
    gm_mem *m = (gm_mem *)&c->mem;
    size_t n = cb->cend.n;
    ok = gm_mem_calloc(m, n / 64 + 1, sizeof *ok);
    if (!ok)
        return NULL;
    const gm_vocab_data *v = c->vocab->data;
    for (size_t i = 0; i < n; i++) {
        size_t tl;
        const uint8_t *tb = gm_vocab_data_token(v, cb->cend.v[i], &tl);
        if (lexes_to_end(cb->inner->spanner, q, tb, cb->cend_len.v[i]))
            ok[i / 64] |= (uint64_t)1 << (i % 64);
    }
    uint64_t *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&cb->lexok[q], &none, ok, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        gm_mem_free(m, ok);
        ok = none;
    }
    return ok;
}

/* Classifies every token for block cb (note [code blocks]). */
static gm_status cblock_lists(gm_compiled *c, cblock *cb, uint32_t words, gm_error *err)
{
    gm_mem *m = &c->mem;
    const gm_block *b = cb->b;
    const gm_vocab_data *v = c->vocab->data;
    uint32_t L = b->end_len, B = b->begin_len;
    cb->next = gm_mem_calloc(m, L, sizeof *cb->next);
    cb->check = gm_mem_calloc(m, (size_t)L * words, sizeof *cb->check);
    cb->check_list = gm_mem_calloc(m, L, sizeof *cb->check_list);
    cb->strad = gm_mem_calloc(m, (size_t)B + 1, sizeof *cb->strad);
    if (!cb->next || !cb->check || !cb->check_list || !cb->strad)
        return gm_mem_fail(m, err, "code-block tables");
    kmp_build(b, cb->next);
    bool fail = false;
    for (uint32_t t = 0; t < v->size && !fail; t++) {
        if (v->flags[t] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
            continue;
        size_t len;
        const uint8_t *s = gm_vocab_data_token(v, t, &len);
        if (!len)
            continue;
        /* Runs from each state k (k = 0 first). */
        uint32_t end0 = 0;
        bool hit0 = false;
        for (size_t i = 0; i < len && !hit0; i++)
            if ((end0 = cb->next[end0][s[i]]) == L)
                hit0 = true;
        for (uint32_t k = 0; k < L; k++) {
            /* Runs that meet stay together; ones that end apart or complete F from k
               differ (a run from 0 that completes F is hit0). */
            bool differs = hit0;
            uint32_t a = k, z = 0;
            for (size_t i = 0; i < len && !differs && a != z; i++) {
                a = cb->next[a][s[i]];
                z = cb->next[z][s[i]];
                differs = a == L;
            }
            if (differs || a != z) {
                set_bit(cb->check + (size_t)k * words, t);
                checkf f = {t, 0, NO_ID, 0};
                for (uint32_t i = 0, q = k; i < len; i++) {
                    uint32_t nq = cb->next[q][s[i]];
                    if (nq == L) {
                        f.fence = 1;
                        break;
                    }
                    f.committed += q + 1 - nq;
                    q = nq;
                }
                if (f.committed > k)
                    f.prefix = token_prefix_of(c->vocab->trie, s, f.committed - k);
                fail |= gm_vec_push(m, &cb->check_list[k], f) != 0;
            }
        }
        if (!hit0 && end0 > 0) {
            fail |= gm_vec_push(m, &cb->cend, t) != 0;
            fail |= gm_vec_push(m, &cb->cend_prefix,
                                token_prefix_of(c->vocab->trie, s, len - end0)) != 0;
            fail |= gm_vec_push(m, &cb->cend_len, (uint32_t)(len - end0)) != 0;
        }
        /* Tokens that finish the begin before their last byte. */
        uint32_t last_m = 0;
        for (size_t p = 0; p + 1 < len && !fail; p++) {
            if (s[p] != b->begin[B - 1])
                continue;
            uint32_t mm = 0;
            if (p + 1 >= B && !memcmp(s + p + 1 - B, b->begin, B))
                mm = B;
            else if (p + 1 < B && !memcmp(s, b->begin + B - (p + 1), p + 1))
                mm = (uint32_t)(p + 1);
            if (mm && mm != last_m) {
                fail |= gm_vec_push(m, &cb->strad[mm], t) != 0;
                last_m = mm;
            }
        }
    }
    return fail ? gm_mem_fail(m, err, "code-block tables") : GM_OK;
}

gm_status gm_cblocks_create(gm_compiled *c, gm_error *err)
{
    const gm_gblocks *gb = c->grammar->blocks;
    struct gm_cblocks *x = gm_mem_calloc(&c->mem, 1, sizeof *x);
    cblock *v = x ? gm_mem_calloc(&c->mem, gb->n, sizeof *v) : NULL;
    if (!v) {
        gm_mem_free(&c->mem, x);
        return gm_mem_fail(&c->mem, err, "code blocks");
    }
    x->v = v;
    x->words = (uint32_t)GM_MASK_WORDS(c->vocab->data->size);
    c->cblocks = x;
    for (uint32_t i = 0; i < gb->n; i++) {
        cblock *cb = &v[x->n++];
        cb->b = &gb->v[i];
        cb->inner = c->inner[i];
        gm_status st = cblock_lists(c, cb, x->words, err);
        if (st == GM_OK &&
            !(cb->lexok = gm_mem_calloc(&c->mem, cb->inner->spanner->nstates, sizeof *cb->lexok)))
            st = gm_mem_fail(&c->mem, err, "code-block tables");
        if (st != GM_OK) {
            gm_error_prefix(err, "code block %s", cb->b->name);
            return st;
        }
    }
    return GM_OK;
}

/* ---- states ------------------------------------------------------------------ */

typedef struct bconf {
    gm_estate *e;             /* one reference */
    uint32_t block;           /* NO_BLOCK: prose */
    uint32_t k;               /* block: bytes of the end pending */
    gm_mstate in;             /* block: the LALR state of the committed code */
} bconf;

struct gm_bstate {
    atomic_uint refs;
    uint32_t n;
    uint32_t nhist;
    uint8_t hist[HIST];       /* the last bytes of the output (cleared by a special token) */
    bconf conf[];
};

/* Configurations being stepped (on the C stack). */
typedef struct run {
    uint32_t n;
    uint32_t nhist;
    uint8_t hist[HIST];
    bconf v[GM_BLOCKS_MAX_CONF];
} run;

struct gm_bscratch {
    gm_escratch *e;
    uint32_t *tmp;            /* [words] */
};

static gm_mscratch no_scratch(void)
{
    gm_mscratch w = {.none = NULL};
    return w;
}

static const cblock *cblock_of(const gm_compiled *c, uint32_t j) { return &c->cblocks->v[j]; }

static void conf_release(const gm_compiled *c, bconf *x)
{
    gm_estate_release(c->eengine, x->e);
    x->e = NULL;
    if (x->block != NO_BLOCK)
        gm_engine_lalr.release(cblock_of(c, x->block)->inner, &x->in);
}

static void conf_retain(const bconf *x)
{
    gm_estate_retain(x->e);
    if (x->block != NO_BLOCK)
        gm_engine_lalr.retain(&x->in);
}

static void run_release(const gm_compiled *c, run *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        conf_release(c, &r->v[i]);
    r->n = 0;
}

static bool conf_eq(const bconf *a, const bconf *b)
{
    if (a->e != b->e || a->block != b->block)
        return false;
    if (a->block == NO_BLOCK)
        return true;
    return a->k == b->k && a->in.lalr.q == b->in.lalr.q && a->in.lalr.stack == b->in.lalr.stack &&
           a->in.lalr.layer.indents == b->in.lalr.layer.indents &&
           a->in.lalr.layer.parens == b->in.lalr.layer.parens;
}

/* Adds x (references taken over) unless an equal configuration is there. */
static gm_status run_add(const gm_compiled *c, run *r, bconf *x, gm_error *err)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (conf_eq(&r->v[i], x)) {
            conf_release(c, x);
            return GM_OK;
        }
    if (r->n == GM_BLOCKS_MAX_CONF) {
        conf_release(c, x);
        return gm_error_set(err, GM_ERR_LIMIT, "the output can be read in more than %d ways "
                            "(code blocks)", GM_BLOCKS_MAX_CONF);
    }
    r->v[r->n++] = *x;
    return GM_OK;
}

static void hist_push(run *r, uint8_t b)
{
    if (r->nhist == HIST) {
        memmove(r->hist, r->hist + 1, HIST - 1);
        r->nhist--;
    }
    r->hist[r->nhist++] = b;
}

static bool hist_ends(const uint8_t *hist, uint32_t nhist, const uint8_t *s, uint32_t n)
{
    return nhist >= n && !memcmp(hist + nhist - n, s, n);
}

/* Adds prose e (reference taken over) and the blocks that may start after it. */
static gm_status add_prose(const gm_compiled *c, struct gm_bscratch *w, run *r, gm_estate *e,
                           gm_error *err)
{
    bconf x = {e, NO_BLOCK, 0, {.earley = NULL}};
    gm_status st = run_add(c, r, &x, err);
    const struct gm_cblocks *cbs = c->cblocks;
    for (uint32_t j = 0; j < cbs->n && st == GM_OK; j++) {
        const gm_block *b = cbs->v[j].b;
        if (!hist_ends(r->hist, r->nhist, b->begin, b->begin_len))
            continue;
        gm_estate *in = NULL;
        st = gm_estate_accept_symbol(c->eengine, w->e, e, b->sym, &in, err);
        if (st == GM_ERR_REJECTED) {
            st = GM_OK;
            continue;
        }
        if (st != GM_OK)
            break;
        bconf y = {in, j, 0, {.earley = NULL}};
        if ((st = gm_engine_lalr.start(cbs->v[j].inner, &y.in, err)) != GM_OK) {
            gm_estate_release(c->eengine, in);
            break;
        }
        st = run_add(c, r, &y, err);
    }
    return st;
}

/* One configuration of a block over byte b (note [code blocks]). */
static gm_status block_byte(const gm_compiled *c, struct gm_bscratch *w, const bconf *x,
                            uint8_t b, run *to, gm_error *err)
{
    const cblock *cb = cblock_of(c, x->block);
    const gm_compiled *in = cb->inner;
    const gm_engine_ops *lalr = &gm_engine_lalr;
    gm_mscratch none = no_scratch();
    uint32_t L = cb->b->end_len, nk = cb->next[x->k][b];
    if (nk == L) {
        if (!lalr->can_end(in, &x->in))
            return GM_OK;
        gm_estate *e2 = NULL;
        gm_status st = gm_estate_accept_bytes(c->eengine, w->e, x->e, cb->b->end, L, &e2, err);
        if (st == GM_ERR_REJECTED)
            return GM_OK;
        return st == GM_OK ? add_prose(c, w, to, e2, err) : st;
    }
    uint8_t buf[GM_STAG_MAX_FENCE + 1];
    memcpy(buf, cb->b->end, x->k);
    buf[x->k] = b;
    uint32_t committed = x->k + 1 - nk;
    bconf y = {x->e, x->block, nk, x->in};
    gm_status st;
    if (committed) {
        st = lalr->step_bytes(in, &none, &x->in, buf, committed, &y.in, err);
        if (st != GM_OK)
            return st == GM_ERR_REJECTED ? GM_OK : st;
    } else {
        lalr->retain(&y.in);
    }
    if (nk && !lalr->can_end(in, &y.in)) {
        gm_mstate probe;
        st = lalr->step_bytes(in, &none, &y.in, cb->b->end, nk, &probe, err);
        if (st == GM_OK)
            lalr->release(in, &probe);
        if (st != GM_OK) {
            lalr->release(in, &y.in);
            return st == GM_ERR_REJECTED ? GM_OK : st;
        }
    }
    gm_estate_retain(y.e);
    return run_add(c, to, &y, err);
}

/* from -> to over byte b (to is empty on entry). */
static gm_status run_byte(const gm_compiled *c, struct gm_bscratch *w, const run *from, uint8_t b,
                          run *to, gm_error *err)
{
    to->n = 0;
    to->nhist = from->nhist;
    memcpy(to->hist, from->hist, from->nhist);
    hist_push(to, b);
    gm_status st = GM_OK;
    for (uint32_t i = 0; i < from->n && st == GM_OK; i++) {
        const bconf *x = &from->v[i];
        if (x->block != NO_BLOCK) {
            st = block_byte(c, w, x, b, to, err);
            continue;
        }
        gm_estate *e2 = NULL;
        st = gm_estate_accept_bytes(c->eengine, w->e, x->e, &b, 1, &e2, err);
        if (st == GM_ERR_REJECTED)
            st = GM_OK;
        else if (st == GM_OK)
            st = add_prose(c, w, to, e2, err);
    }
    if (st != GM_OK)
        run_release(c, to);
    return st;
}

/* *dst = *src, copying only what is used. */
static void run_move(run *dst, const run *src)
{
    dst->n = src->n;
    dst->nhist = src->nhist;
    memcpy(dst->hist, src->hist, src->nhist);
    memcpy(dst->v, src->v, src->n * sizeof *src->v);
}

static void run_from_state(const gm_bstate *s, run *r)
{
    r->n = s->n;
    r->nhist = s->nhist;
    memcpy(r->hist, s->hist, s->nhist);
    for (uint32_t i = 0; i < s->n; i++) {
        r->v[i] = s->conf[i];
        conf_retain(&r->v[i]);
    }
}

/* r over bytes, in place. */
static gm_status run_bytes(const gm_compiled *c, struct gm_bscratch *w, run *r,
                           const uint8_t *bytes, size_t len, gm_error *err)
{
    run next;
    for (size_t i = 0; i < len && r->n; i++) {
        gm_status st = run_byte(c, w, r, bytes[i], &next, err);
        run_release(c, r);
        if (st != GM_OK)
            return st;
        run_move(r, &next);
    }
    return GM_OK;
}

/* r over a special token, in place: only free text can read one. */
static gm_status run_special(const gm_compiled *c, struct gm_bscratch *w, run *r, uint32_t token,
                             gm_error *err)
{
    run next = {0};
    gm_status st = GM_OK;
    for (uint32_t i = 0; i < r->n && st == GM_OK; i++) {
        if (r->v[i].block != NO_BLOCK)
            continue;
        gm_estate *e2 = NULL;
        st = gm_estate_accept_token(c->eengine, w->e, r->v[i].e, token, &e2, err);
        if (st == GM_ERR_REJECTED)
            st = GM_OK;
        else if (st == GM_OK)
            st = add_prose(c, w, &next, e2, err);
    }
    run_release(c, r);
    run_move(r, &next);
    if (st != GM_OK)
        run_release(c, r);
    return st;
}

/* The configurations after token t from s (*r owns them; none: rejected). */
static gm_status run_token(const gm_compiled *c, struct gm_bscratch *w, const gm_bstate *s,
                           uint32_t t, run *r, gm_error *err)
{
    const gm_vocab_data *v = c->vocab->data;
    run_from_state(s, r);
    if (v->flags[t] & GM_TOK_PADDING) {
        run_release(c, r);
        return GM_OK;
    }
    if (v->flags[t] & GM_TOK_SPECIAL)
        return run_special(c, w, r, t, err);
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(v, t, &len);
    if (!len) {
        run_release(c, r);
        return GM_OK;
    }
    return run_bytes(c, w, r, bytes, len, err);
}

/* A state holding r's configurations (taken over); REJECTED when there are none. */
static gm_status state_of(const gm_compiled *c, run *r, gm_mstate *to, gm_error *err)
{
    if (!r->n)
        return GM_ERR_REJECTED;
    gm_bstate *s = gm_mem_alloc((gm_mem *)&c->mem, sizeof *s + r->n * sizeof *s->conf);
    if (!s) {
        run_release(c, r);
        return gm_mem_fail((gm_mem *)&c->mem, err, "a code-block state");
    }
    atomic_init(&s->refs, 1);
    s->n = r->n;
    s->nhist = r->nhist;
    memcpy(s->hist, r->hist, r->nhist);
    memcpy(s->conf, r->v, r->n * sizeof *s->conf);
    r->n = 0;
    to->blocks = s;
    return GM_OK;
}

/* ---- ops ----------------------------------------------------------------------- */

static gm_status blocks_new_scratch(const gm_compiled *c, gm_mscratch *w, gm_error *err)
{
    gm_mem *m = (gm_mem *)&c->mem;
    struct gm_bscratch *b = gm_mem_calloc(m, 1, sizeof *b);
    if (!b)
        return gm_mem_fail(m, err, "a matcher");
    b->tmp = gm_mem_calloc(m, c->cblocks->words, sizeof *b->tmp);
    gm_status st = b->tmp ? gm_escratch_create(c->eengine, &b->e, err)
                          : gm_mem_fail(m, err, "a matcher");
    if (st != GM_OK) {
        gm_mem_free(m, b->tmp);
        gm_mem_free(m, b);
        return st;
    }
    w->blocks = b;
    return GM_OK;
}

static void blocks_free_scratch(const gm_compiled *c, gm_mscratch *w)
{
    struct gm_bscratch *b = w->blocks;
    if (!b)
        return;
    gm_escratch_destroy(c->eengine, b->e);
    gm_mem_free((gm_mem *)&c->mem, b->tmp);
    gm_mem_free((gm_mem *)&c->mem, b);
    w->blocks = NULL;
}

static gm_status blocks_start(const gm_compiled *c, gm_mstate *s, gm_error *err)
{
    run r = {0};
    r.v[0].e = gm_estate_start(c->eengine, err);
    if (!r.v[0].e)
        return err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
    r.v[0].block = NO_BLOCK;
    r.n = 1;
    return state_of(c, &r, s, err);
}

static void blocks_retain(const gm_mstate *s)
{
    if (s->blocks)
        atomic_fetch_add(&s->blocks->refs, 1);
}

static void blocks_release(const gm_compiled *c, gm_mstate *s)
{
    gm_bstate *b = s->blocks;
    s->blocks = NULL;
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        conf_release(c, &b->conf[i]);
    gm_mem_free((gm_mem *)&c->mem, b);
}

static gm_status blocks_step_token(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   uint32_t token, gm_mstate *to, gm_error *err)
{
    run r;
    gm_status st = run_token(c, w->blocks, from->blocks, token, &r, err);
    return st == GM_OK ? state_of(c, &r, to, err) : st;
}

static gm_status blocks_step_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   const uint8_t *bytes, size_t len, gm_mstate *to,
                                   gm_error *err)
{
    run r;
    run_from_state(from->blocks, &r);
    gm_status st = run_bytes(c, w->blocks, &r, bytes, len, err);
    return st == GM_OK ? state_of(c, &r, to, err) : st;
}

static bool blocks_can_end(const gm_compiled *c, const gm_mstate *s)
{
    for (uint32_t i = 0; i < s->blocks->n; i++)
        if (s->blocks->conf[i].block == NO_BLOCK &&
            gm_estate_accepting(c->eengine, s->blocks->conf[i].e))
            return true;
    return false;
}

/* Sets t in mask when check_token allows it (the definition of the mask). */
static gm_status check_token(const gm_compiled *c, struct gm_bscratch *w, const gm_bstate *s,
                             uint32_t t, uint32_t *mask, gm_error *err)
{
    if (bit(mask, t))
        return GM_OK;
    run r;
    gm_status st = run_token(c, w, s, t, &r, err);
    if (st != GM_OK)
        return st;
    if (r.n)
        set_bit(mask, t);
    run_release(c, &r);
    return GM_OK;
}

static gm_status check_list(const gm_compiled *c, struct gm_bscratch *w, const gm_bstate *s,
                            const idvec *list, uint32_t *mask, gm_error *err)
{
    gm_status st = GM_OK;
    for (size_t i = 0; i < list->n && st == GM_OK; i++)
        st = check_token(c, w, s, list->v[i], mask, err);
    return st;
}

/*
 * The C_end tokens the LALR mask of l1 lacks: allowed iff l1 takes their
 * code p and may end after it (then the end may follow). Filtered first by
 * the lexer alone (lexok), then by the longest token p starts with.
 */
static gm_status cend_mask(const gm_compiled *c, struct gm_bscratch *w, const cblock *cb,
                           const gm_mstate *l1, const uint32_t *check, uint32_t *mask,
                           gm_error *err)
{
    const gm_engine_ops *lalr = &gm_engine_lalr;
    gm_mscratch none = no_scratch();
    const uint64_t *ok = lexok_of(c, cb, l1->lalr.q);
    if (!ok)
        return gm_mem_fail((gm_mem *)&c->mem, err, "code-block tables");
    gm_status st = GM_OK;
    for (size_t wi = 0; wi <= cb->cend.n / 64 && st == GM_OK; wi++)
        for (uint64_t bits = ok[wi]; bits && st == GM_OK; bits &= bits - 1) {
            size_t i = wi * 64 + (size_t)__builtin_ctzll(bits);
            uint32_t t = cb->cend.v[i], pre = cb->cend_prefix.v[i];
            if (bit(check, t) || bit(w->tmp, t) || bit(mask, t) ||
                (pre != NO_ID && pre != EMPTY_PREFIX && !bit(w->tmp, pre)))
                continue;
            if (pre == EMPTY_PREFIX) {
                if (lalr->can_end(cb->inner, l1))
                    set_bit(mask, t);
                continue;
            }
            size_t tl;
            const uint8_t *tb = gm_vocab_data_token(c->vocab->data, t, &tl);
            gm_mask_state ms = {l1->lalr.q, l1->lalr.stack, &l1->lalr.layer, &l1->lalr.win};
            int r = gm_mask_can_end_after(cb->inner->spanner, &ms, tb, cb->cend_len.v[i]);
            if (r >= 0) {
                if (r)
                    set_bit(mask, t);
                continue;
            }
            gm_mstate after;
            st = lalr->step_bytes(cb->inner, &none, l1, tb, cb->cend_len.v[i], &after, err);
            if (st == GM_OK) {
                if (lalr->can_end(cb->inner, &after))
                    set_bit(mask, t);
                lalr->release(cb->inner, &after);
            } else if (st == GM_ERR_REJECTED) {
                st = GM_OK;
            }
        }
    return st;
}

/* The tokens configuration x allows, into mask (note [code blocks]). */
static gm_status block_mask(const gm_compiled *c, struct gm_bscratch *w, const gm_bstate *s,
                            const bconf *x, uint32_t *mask, size_t words, gm_error *err)
{
    const cblock *cb = cblock_of(c, x->block);
    const gm_engine_ops *lalr = &gm_engine_lalr;
    gm_mscratch none = no_scratch();
    gm_mstate l1 = x->in;
    gm_status st = GM_OK;
    bool have = true, own = false;
    if (x->k) {
        st = lalr->step_bytes(cb->inner, &none, &x->in, cb->b->end, x->k, &l1, err);
        have = own = st == GM_OK;
        if (st == GM_ERR_REJECTED)
            st = GM_OK;
    }
    const uint32_t *check = cb->check + (size_t)x->k * words;
    if (have && st == GM_OK)
        st = lalr->fill_mask(cb->inner, &none, &l1, w->tmp, words, err);
    if (have && st == GM_OK) {
        for (size_t i = 0; i < words; i++)
            mask[i] |= w->tmp[i] & ~check[i];
        st = cend_mask(c, w, cb, &l1, check, mask, err);
    }
    /* Tokens whose run of the end's automaton from k differs from the run from 0. */
    const checkvec *cl = &cb->check_list[x->k];
    bool end_here = lalr->can_end(cb->inner, &x->in);
    for (size_t i = 0; i < cl->n && st == GM_OK; i++) {
        const checkf *f = &cl->v[i];
        if (bit(mask, f->t))
            continue;
        if (!f->fence && !f->committed) { /* all pending: exact */
            if (end_here || (have && bit(w->tmp, f->t)))
                set_bit(mask, f->t);
            continue;
        }
        if (f->committed >= x->k && (!have || (f->prefix != NO_ID && !bit(w->tmp, f->prefix))))
            continue; /* its code is rejected */
        if (f->fence && !f->committed && !end_here)
            continue; /* the end completes where the code may not end */
        st = check_token(c, w, s, f->t, mask, err);
    }
    if (own)
        lalr->release(cb->inner, &l1);
    return st;
}

/* Tokens that finish a block's begin and go on into its code. */
static gm_status straddle_mask(const gm_compiled *c, struct gm_bscratch *w, const gm_bstate *s,
                               uint32_t *mask, gm_error *err)
{
    gm_status st = GM_OK;
    for (uint32_t j = 0; j < c->cblocks->n && st == GM_OK; j++) {
        const cblock *cb = cblock_of(c, j);
        uint32_t B = cb->b->begin_len;
        for (uint32_t m = 1; m <= B && st == GM_OK; m++)
            if (cb->strad[m].n && (m == B || hist_ends(s->hist, s->nhist, cb->b->begin, B - m)))
                st = check_list(c, w, s, &cb->strad[m], mask, err);
    }
    return st;
}

static gm_status blocks_fill_mask(const gm_compiled *c, gm_mscratch *ws, const gm_mstate *st_,
                                  uint32_t *mask, size_t words, gm_error *err)
{
    struct gm_bscratch *w = ws->blocks;
    const gm_bstate *s = st_->blocks;
    gm_status st = GM_OK;
    bool single = s->n == 1 && s->conf[0].block == NO_BLOCK, prose = single;
    if (single) /* free text only: the usual case */
        st = gm_estate_fill_mask(c->eengine, w->e, s->conf[0].e, mask, words, err);
    else
        memset(mask, 0, words * sizeof *mask);
    for (uint32_t i = 0; i < s->n && st == GM_OK && !single; i++) {
        const bconf *x = &s->conf[i];
        if (x->block != NO_BLOCK)
            continue;
        prose = true;
        st = gm_estate_fill_mask(c->eengine, w->e, x->e, w->tmp, words, err);
        for (size_t k = 0; k < words && st == GM_OK; k++)
            mask[k] |= w->tmp[k];
    }
    for (uint32_t i = 0; i < s->n && st == GM_OK; i++)
        if (s->conf[i].block != NO_BLOCK)
            st = block_mask(c, w, s, &s->conf[i], mask, words, err);
    if (prose && st == GM_OK)
        st = straddle_mask(c, w, s, mask, err);
    return st;
}

/* Whether an Earley state can read some block's symbol now. */
static bool at_block(const gm_compiled *c, struct gm_bscratch *w, gm_estate *e)
{
    for (uint32_t j = 0; j < c->cblocks->n; j++) {
        gm_estate *in = NULL;
        gm_status st = gm_estate_accept_symbol(c->eengine, w->e, e, cblock_of(c, j)->b->sym, &in,
                                               NULL);
        gm_estate_release(c->eengine, in);
        if (st == GM_OK)
            return true;
    }
    return false;
}

/*
 * Forced bytes (note [forced bytes] in engine_lalr.c) by probing each byte
 * through the rules; stops where free text could take a special token
 * (the Earley engine's own forced bytes say none there).
 */
static gm_status blocks_forced_bytes(const gm_compiled *c, gm_mscratch *ws, const gm_mstate *s,
                                     uint8_t *buf, size_t cap, size_t *len, gm_error *err)
{
    struct gm_bscratch *w = ws->blocks;
    run cur;
    run_from_state(s->blocks, &cur);
    gm_status st = GM_OK;
    while (*len < cap && st == GM_OK) {
        bool stop = false;
        for (uint32_t i = 0; i < cur.n && !stop; i++) {
            const bconf *x = &cur.v[i];
            if (x->block != NO_BLOCK)
                continue;
            uint8_t one;
            size_t n1 = 0;
            if (gm_estate_accepting(c->eengine, x->e))
                stop = true;
            else if ((st = gm_estate_forced_bytes(c->eengine, w->e, x->e, &one, 1, &n1, err)) !=
                     GM_OK)
                stop = true;
            else if (n1 == 0 && !at_block(c, w, x->e))
                stop = true;
        }
        if (stop)
            break;
        int found = 0;
        run only = {0};
        for (unsigned b = 0; b < 256 && found < 2 && st == GM_OK; b++) {
            run next;
            st = run_byte(c, w, &cur, (uint8_t)b, &next, err);
            if (st != GM_OK || !next.n)
                continue;
            if (++found == 1) {
                only = next;
                buf[*len] = (uint8_t)b;
            } else {
                run_release(c, &next);
            }
        }
        if (st != GM_OK || found != 1) {
            run_release(c, &only);
            break;
        }
        ++*len;
        run_release(c, &cur);
        run_move(&cur, &only);
    }
    run_release(c, &cur);
    return st;
}

/* What each reading of the output may take next, joined with "; or ". */
static void blocks_expected(const gm_compiled *c, const gm_mstate *s, struct gm_strbuf *out)
{
    const gm_bstate *b = s->blocks;
    for (uint32_t i = 0; i < b->n; i++) {
        const bconf *x = &b->conf[i];
        if (i)
            gm_strbuf_puts(out, "; or ");
        if (x->block == NO_BLOCK) {
            gm_mstate e = {.earley = x->e};
            gm_engine_earley.expected(c, &e, out);
            continue;
        }
        const cblock *cb = cblock_of(c, x->block);
        gm_strbuf_printf(out, "in the %s block: ", cb->b->name);
        if (x->k)
            gm_strbuf_printf(out, "(after %u bytes of the end) ", x->k);
        gm_engine_lalr.expected(cb->inner, &x->in, out);
        if (gm_engine_lalr.can_end(cb->inner, &x->in))
            gm_strbuf_puts(out, ", or the end of the block");
    }
}

const gm_engine_ops gm_engine_blocks = {
    .kind = GM_ENGINE_EARLEY,
    .new_scratch = blocks_new_scratch,
    .free_scratch = blocks_free_scratch,
    .start = blocks_start,
    .retain = blocks_retain,
    .release = blocks_release,
    .step_token = blocks_step_token,
    .step_bytes = blocks_step_bytes,
    .can_end = blocks_can_end,
    .fill_mask = blocks_fill_mask,
    .forced_bytes = blocks_forced_bytes,
    .expected = blocks_expected,
};
