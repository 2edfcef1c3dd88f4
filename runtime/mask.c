/*
 * The mask of a matcher state (q, stacks) is the union of (note [token
 * classes], note [first-byte split] in spanner/spanner.h):
 *   - the classes (E, P) of q's profile whose E·T can be fed to the stack
 *     for some T in P (or E alone when P can end as nothing);
 *   - when q's lexeme is complete: the classes of the no-lexeme state
 *     after it, on the stack after its terminal, restricted to q's
 *     first-byte filter.
 * Every element goes through the post-lexing layers (runtime/layer.h).
 *
 * note [class walk]
 * Classes are sorted by E, so consecutive classes share prefixes. The walk
 * keeps one virtual stack per depth (snapshots) and re-feeds only the part
 * of E after the shared prefix; once a prefix is rejected, every following
 * class sharing it is skipped without any parser work. This is the trie
 * walk over realizable sequences of the seed paper, done on the real
 * stack, so every answer is exact (no context-dependent approximation).
 */
#include "runtime/mask.h"

#include <string.h>

#include "runtime/ctx_spanners.h"
#include "runtime/vstack.h"
#include "spanner/accept.h"

enum {
    WALK_DEPTH = 48,          /* snapshots kept; longer sequences re-feed their tail */
    WALK_REGION = 320,        /* LR overlay capacity of one snapshot: a token of up to 128
                                 bytes can push a state per byte (a run of unary minuses) */
    WALK_INDENTS = 16,        /* width overlay capacity of one snapshot */
    MEMO_WORDS = 32,          /* terminals memoized at depth 0: up to 2048 */
    BIG_OVERLAY = 1u << 20,   /* overflow path: largest capacity tried */
    SUFFIX_ENTRY_CLASSES = 16 /* suffix profiles with always-accepted entries: this many
                                 classes or more (python.lark's contextual trace: p50 per mask
                                 23 -> 11 us, memory +1.3 MB; every suffix profile +5 MB) */
};

typedef struct walker {
    const gm_spanner *sp;
    uint32_t *mask;
    const uint32_t *filter;   /* first-byte filter, or NULL */
    uint32_t rel_width;       /* pending width for relative line ends */
    gm_vstack snap[WALK_DEPTH + 1];
    uint32_t regions[WALK_DEPTH + 2][WALK_REGION];
    uint32_t iregions[WALK_DEPTH + 1][WALK_INDENTS];
    uint64_t known[MEMO_WORDS], viable[MEMO_WORDS]; /* depth-0 terminal memo */
    int overflow;             /* an overlay filled up: redo with the big path */
    /* The contextual lexer (runtime/ctx_spanners.h, note [contextual masks]), or NULL. */
    gm_ctx_spanners *ctx;
    uint32_t lexer;           /* the lexer of sp, the profile's */
    int diverged;             /* class_big: the lexer changed inside the class */
    uint32_t depth;           /* suffix profiles walked inside one another */
    /* Where the walked tokens start, for answering them one by one. */
    const gm_spanner *top_sp;
    uint32_t top_lexer;
    uint32_t q0;
    const gm_vstack *top_vs0;
    const gm_ctx_saved_window *top_win; /* the window of q0 (NULL: none) */
    int need_tokens;          /* a fallback pair needs the window's bytes: token by token */
} walker;

static void add_tokens(walker *w, const gm_tokset *ts)
{
    if (w->filter)
        gm_tokset_or_and_into(ts, w->filter, w->mask, w->sp->nbits);
    else
        gm_tokset_or_into(ts, w->mask, w->sp->nbits);
}

/* Copies a virtual stack into buffers of cap LR states and icap widths. */
static int vs_copy(gm_vstack *dst, const gm_vstack *src, uint32_t *buf, uint32_t cap,
                   uint32_t *ibuf, uint32_t icap)
{
    if (src->n > cap || src->in > icap)
        return -1;
    *dst = *src;
    dst->ov = buf;
    dst->cap = cap;
    dst->iov = ibuf;
    dst->icap = icap;
    memcpy(buf, src->ov, (size_t)src->n * sizeof *buf);
    memcpy(ibuf, src->iov, (size_t)src->in * sizeof *ibuf);
    return 0;
}

static int set_viable(const gm_spanner *sp, const gm_vstack *vs, uint32_t prod, uint32_t *scratch,
                      uint32_t cap);

/*
 * Whether Prod-set element e can come next on vs: 1 yes, 0 no, -1 an
 * overlay filled up. A fallback pair (spanner/tables.h, note [fallback
 * pairs]) feeds its element on a copy, then asks its set.
 */
static int elem_viable(const gm_spanner *sp, const gm_vstack *vs, uint32_t e, uint32_t *scratch,
                       uint32_t cap)
{
    if (!GM_SEQ_IS_PAIR(e))
        return gm_layer_vviable(sp, vs, e, scratch, cap);
    uint32_t k = e & ~GM_SEQ_PAIR, buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack c;
    if (vs_copy(&c, vs, buf, WALK_REGION, ibuf, WALK_INDENTS))
        return -1;
    int r = gm_layer_vfeed(sp, &c, sp->pair_emit[k], 0);
    if (r == GM_VFEED_OVERFLOW)
        return -1;
    if (r != GM_VFEED_SHIFTED)
        return 0;
    /* Another lexer re-lexes the window: its bytes decide (note [contextual fallbacks]). */
    if (sp->lexer_of && sp->lexer_of[gm_vstack_top(&c)] != sp->lexer_id)
        return -2;
    return set_viable(sp, &c, sp->pair_prod[k], scratch, cap);
}

/* Whether some element of Prod set prod can come next on vs (as elem_viable). */
static int set_viable(const gm_spanner *sp, const gm_vstack *vs, uint32_t prod, uint32_t *scratch,
                      uint32_t cap)
{
    if (sp->prod_ignored[prod])
        return 1;
    int over = 0, tokens = 0;
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        int r = elem_viable(sp, vs, sp->prod_terms[k], scratch, cap);
        if (r > 0)
            return 1;
        over |= r == -1;
        tokens |= r == -2;
    }
    return over ? -1 : tokens ? -2 : 0;
}

/* Whether one Prod-set element can come next on vs. */
static bool viable_elem(walker *w, const gm_vstack *vs, uint32_t elem)
{
    int r = elem_viable(w->sp, vs, elem, w->regions[WALK_DEPTH + 1], WALK_REGION);
    if (r == -1)
        w->overflow = 1;
    if (r == -2)
        w->need_tokens = 1;
    return r > 0;
}

static bool prod_viable(walker *w, const gm_vstack *vs, uint32_t prod, bool depth0)
{
    const gm_spanner *sp = w->sp;
    if (sp->prod_ignored[prod])
        return true;
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        uint32_t t = sp->prod_terms[k];
        if (depth0 && t < MEMO_WORDS * 64) { /* terminals only: a pair is far above */
            uint64_t bit = (uint64_t)1 << (t & 63);
            if (!(w->known[t >> 6] & bit)) {
                w->known[t >> 6] |= bit;
                if (viable_elem(w, vs, t))
                    w->viable[t >> 6] |= bit;
            }
            if (w->viable[t >> 6] & bit)
                return true;
        } else if (viable_elem(w, vs, t)) {
            return true;
        }
    }
    return false;
}

/* One attempt of class_big with overlays of cap states: 1 fits, 0 overflowed, -1 no memory. */
static int class_big_try(walker *w, const gm_vstack *vs0, const gm_profile *p, const gm_class *c,
                         uint32_t cap, bool *ok)
{
    const gm_spanner *sp = w->sp;
    uint32_t *buf = gm_mem_alloc(sp->mem, (size_t)cap * 3 * sizeof(uint32_t));
    if (!buf)
        return -1;
    gm_vstack vs;
    *ok = false;
    int fits = !vs_copy(&vs, vs0, buf, cap, buf + 2 * (size_t)cap, cap);
    for (uint32_t i = 0; i < c->len && fits; i++) {
        int r = gm_layer_vfeed(sp, &vs, p->seqs[c->seq + i], w->rel_width);
        if (r == GM_VFEED_OVERFLOW)
            fits = 0;
        else if (r != GM_VFEED_SHIFTED)
            goto done;
        else if (w->ctx && gm_ctx_lexer_of(w->ctx, gm_vstack_top(&vs)) != w->lexer) {
            w->diverged = 1;
            goto done;
        }
    }
    if (fits && c->prod != GM_PROD_SWITCH) {
        if (sp->prod_ignored[c->prod])
            *ok = true;
        for (uint32_t k = sp->prod_off[c->prod]; k < sp->prod_off[c->prod + 1] && !*ok; k++) {
            int r = elem_viable(sp, &vs, sp->prod_terms[k], buf + cap, cap);
            fits = r != -1;
            *ok = r > 0;
            if (r == -2)
                w->diverged = 1; /* the class token by token */
        }
    }
done:
    gm_mem_free(sp->mem, buf);
    return fits;
}

/*
 * The exact answer for one class on heap overlays, doubled until they fit
 * (rare: nesting deeper than the snapshots hold).
 */
static gm_status class_big(walker *w, const gm_vstack *vs0, const gm_profile *p, const gm_class *c,
                           bool *ok, gm_error *err)
{
    for (uint32_t cap = 2 * WALK_REGION; cap <= BIG_OVERLAY; cap *= 2) {
        int r = class_big_try(w, vs0, p, c, cap, ok);
        if (r < 0)
            return gm_mem_fail(w->sp->mem, err, "a parser overlay");
        if (r > 0)
            return GM_OK;
    }
    return gm_error_set(err, GM_ERR_LIMIT,
                        "a token needs more than %u parser states of reductions", BIG_OVERLAY);
}

/*
 * note [repeated elements]
 * Vocabularies hold long runs of one character ("-----", "=====", "////"),
 * which become sequences of one terminal repeated dozens of times. A feed
 * reads only the states it pops and the one below them (the goto), and
 * replaces the popped ones with what it pushes. So when a terminal's feed
 * read the top k states W and left the stack with W again on top (a unary
 * minus pops its shifted "-", pushes the operator's state and a new "-"),
 * feeding it once more pops and pushes the same: the walk does that
 * without looking at the tables. Line ends are not repeated this way (the
 * layer reads its own state), nor elements that may insert a terminal
 * (note [offending-token insertion]), nor feeds that reach below the overlay.
 */
enum { REPEAT_WINDOW = 8 };

typedef struct repeat {
    uint32_t depth;           /* the element fed at this depth (UINT32_MAX: none) ... */
    uint32_t elem;            /* ... was this one, left what it read on top, */
    uint32_t pop;             /* popped this many states, */
    uint32_t push;            /* pushed these (the last push states on the stack after it), */
    int32_t dparens;          /* and changed the bracket count by this */
} repeat;

/*
 * Feeds element e of a class at depth d into vs, which holds the stack at
 * depth d; again: the class's next element is e too (worth recording).
 */
static int walk_feed(walker *w, gm_vstack *vs, uint32_t e, uint32_t d, bool again, repeat *rp)
{
    if (d > 0 && rp->depth == d - 1 && rp->elem == e) {
        /* note [repeated elements]: the same feed again, its states copied from the last one */
        uint32_t n = vs->n;
        if (n < rp->push || n - rp->pop + rp->push > vs->cap)
            return GM_VFEED_OVERFLOW;
        uint32_t *to = vs->ov + n - rp->pop, *from = vs->ov + n - rp->push;
        if (rp->pop < rp->push)
            for (uint32_t i = rp->push; i-- > 0;)
                to[i] = from[i];
        vs->n = n - rp->pop + rp->push;
        vs->parens += rp->dparens;
        rp->depth = d;
        return GM_VFEED_SHIFTED;
    }
    rp->depth = UINT32_MAX;
    if (!again || (e & GM_SEQ_LINE) || (e & GM_POSTLEX_TRY))
        return gm_layer_vfeed(w->sp, vs, e, w->rel_width);
    uint32_t n0 = vs->n, in0 = vs->in, old[REPEAT_WINDOW];
    uint32_t saved = n0 < REPEAT_WINDOW ? n0 : REPEAT_WINDOW;
    for (uint32_t i = 0; i < saved; i++)
        old[i] = vs->ov[n0 - saved + i];
    const gm_lr_node *base0 = vs->base;
    int32_t parens0 = vs->parens;
    vs->low = n0;
    int r = gm_layer_vfeed(w->sp, vs, e, w->rel_width);
    if (r != GM_VFEED_SHIFTED || vs->base != base0 || vs->in != in0 || vs->low == 0)
        return r;
    /* It read ov[low - 1 .. n0) of the old stack; the same states must be on top again. */
    uint32_t k = n0 - vs->low + 1, n1 = vs->n;
    if (k > saved || n1 < k || n1 < n0)
        return r;
    for (uint32_t i = 0; i < k; i++)
        if (old[saved - k + i] != vs->ov[n1 - k + i])
            return r;
    rp->depth = d;
    rp->elem = e;
    rp->pop = n0 - vs->low;
    rp->push = n1 - vs->low;
    rp->dparens = vs->parens - parens0;
    return r;
}

/* ---- the contextual lexer: tokens answered one by one (note [contextual masks]) ---- */

static int ctx_vfeed(void *ud, const gm_spanner *sp, uint32_t elem, uint32_t *top);

/*
 * Whether the lexeme pending in q (of spanner sp of lexer k, window win)
 * can still become something vs takes, a fallback included (note
 * [contextual fallbacks]): 1, 0, -1 an overlay filled up, -2 err filled.
 */
static int ctx_pending(gm_ctx_spanners *cs, gm_spanner *sp, uint32_t k, uint32_t q,
                       const gm_ctx_window *win, const gm_vstack *vs, uint32_t *scratch,
                       uint32_t cap, gm_error *err)
{
    uint32_t prod = gm_spanner_prod(sp, q);
    if (!gm_ctx_backtracking(sp, q))
        return set_viable(sp, vs, prod, scratch, cap); /* no fallback pairs there */
    if (sp->prod_ignored[prod])
        return 1;
    int over = 0;
    for (uint32_t i = sp->prod_off[prod]; i < sp->prod_off[prod + 1]; i++) {
        if (GM_SEQ_IS_PAIR(sp->prod_terms[i]))
            continue; /* the fallback comes below, with the window's bytes */
        int r = elem_viable(sp, vs, sp->prod_terms[i], scratch, cap);
        if (r > 0)
            return 1;
        over |= r < 0;
    }
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack c;
    if (vs_copy(&c, vs, buf, WALK_REGION, ibuf, WALK_INDENTS))
        return -1;
    gm_ctx_window again;
    again.n = win->n;
    memcpy(again.b, win->b, win->n);
    int r = gm_ctx_fallback(cs, &sp, &k, &q, &again, ctx_vfeed, &c, err);
    if (r > 0)
        r = ctx_pending(cs, sp, k, q, &again, &c, scratch, cap, err);
    return r == 0 && over ? -1 : r;
}

/* gm_ctx_step's feed on a virtual stack. */
static int ctx_vfeed(void *ud, const gm_spanner *sp, uint32_t elem, uint32_t *top)
{
    gm_vstack *vs = ud;
    int r = gm_layer_vfeed(sp, vs, elem, 0);
    if (r == GM_VFEED_OVERFLOW)
        return -1;
    if (r != GM_VFEED_SHIFTED)
        return 0;
    *top = gm_vstack_top(vs);
    return 1;
}

/* Token t from (w->q0, vs0) on overlays of cap states: 1 allowed, 0 not, -1 overflow, -2 error. */
static int ctx_token_try(walker *w, const gm_vstack *vs0, uint32_t t, uint32_t *buf, uint32_t cap,
                         gm_error *err)
{
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(w->sp->vocab, t, &len);
    gm_vstack vs;
    if (vs_copy(&vs, vs0, buf, cap, buf + 2 * (size_t)cap, cap))
        return -1;
    gm_spanner *sp = (gm_spanner *)w->top_sp;
    uint32_t q = w->q0, k = w->top_lexer;
    gm_ctx_window win;
    gm_ctx_window_load(w->top_win, &win);
    for (size_t i = 0; i < len; i++) {
        int r = gm_ctx_step(w->ctx, &sp, &k, &q, &win, bytes[i], ctx_vfeed, &vs, err);
        if (r <= 0)
            return r;
    }
    return ctx_pending(w->ctx, sp, k, q, &win, &vs, buf + cap, cap, err);
}

/* Adds token t when it is allowed from (w->q0, w->top_vs0), lexed contextually byte by byte. */
static gm_status ctx_token(walker *w, uint32_t t, gm_error *err)
{
    const gm_vstack *vs0 = w->top_vs0;
    if ((w->mask[t >> 5] >> (t & 31)) & 1)
        return GM_OK;
    if (w->filter && !((w->filter[t >> 5] >> (t & 31)) & 1))
        return GM_OK;
    uint32_t small[3 * WALK_REGION];
    for (uint32_t cap = WALK_REGION; cap <= BIG_OVERLAY; cap *= 2) {
        uint32_t *buf = cap == WALK_REGION ? small : gm_mem_alloc(w->sp->mem, (size_t)cap * 3 * 4);
        if (!buf)
            return gm_mem_fail(w->sp->mem, err, "a parser overlay");
        int r = ctx_token_try(w, vs0, t, buf, cap, err);
        if (buf != small)
            gm_mem_free(w->sp->mem, buf);
        if (r == -2)
            return err->code;
        if (r >= 0) {
            if (r)
                w->mask[t >> 5] |= 1u << (t & 31);
            return GM_OK;
        }
    }
    return gm_error_set(err, GM_ERR_LIMIT,
                        "a token needs more than %u parser states of reductions", BIG_OVERLAY);
}

typedef struct ctx_each {
    walker *w;
    gm_error *err;
    gm_status st;
} ctx_each;

static int ctx_each_token(void *ud, uint32_t t)
{
    ctx_each *e = ud;
    e->st = ctx_token(e->w, t, e->err);
    return e->st != GM_OK;
}

/* One depth of ctx_trie_walk: the state after the path's bytes. */
typedef struct trie_level {
    gm_spanner *sp;
    uint32_t k, q;
    uint32_t win;             /* the window: the last win bytes of the text */
    gm_vstack vs;
} trie_level;

/*
 * Every token run from (w->q0, w->top_vs0) with window w->top_win, along
 * the vocabulary trie so that tokens share the steps of their common
 * prefix and a rejected prefix drops its subtree. The window is always the
 * text's last bytes since a fallback point (note [contextual fallbacks]),
 * so one buffer holds the window before the token and the path.
 */
static gm_status ctx_trie_walk(walker *w, gm_error *err)
{
    gm_mem *m = w->sp->mem;
    const gm_trie *tr = w->sp->trie;
    uint32_t levels = (uint32_t)tr->max_depth + 1, w0 = w->top_win ? w->top_win->n : 0;
    size_t per = WALK_REGION + WALK_INDENTS;
    trie_level *lev = gm_mem_alloc(m, levels * sizeof *lev);
    uint32_t *bufs = gm_mem_alloc(m, (size_t)levels * per * sizeof *bufs);
    uint8_t *text = gm_mem_alloc(m, (size_t)w0 + levels);
    gm_ctx_window *work = gm_mem_alloc(m, sizeof *work);
    uint32_t scratch[WALK_REGION];
    gm_status st = GM_OK;
    if (!lev || !bufs || !text || !work) {
        st = gm_mem_fail(m, err, "the contextual lexer's token walk");
        goto done;
    }
    if (w0)
        memcpy(text, w->top_win->b, w0);
    lev[0].sp = (gm_spanner *)w->top_sp;
    lev[0].k = w->top_lexer;
    lev[0].q = w->q0;
    lev[0].win = w0;
    if (vs_copy(&lev[0].vs, w->top_vs0, bufs, WALK_REGION, bufs + WALK_REGION, WALK_INDENTS)) {
        /* A deep stack already: token by token on the heap path. */
        for (uint32_t t = 0; t < tr->ntokens && st == GM_OK; t++)
            st = ctx_token(w, tr->tokens[t], err);
        goto done;
    }
    for (uint32_t i = 1; i < tr->nnodes && st == GM_OK;) {
        const gm_trie_node *nd = &tr->nodes[i];
        trie_level *up = &lev[nd->depth - 1], *at = &lev[nd->depth];
        uint32_t *b = bufs + (size_t)nd->depth * per;
        size_t len = (size_t)w0 + nd->depth - 1; /* text before this byte */
        work->n = up->win;
        memcpy(work->b, text + len - up->win, up->win);
        text[len] = nd->byte;
        *at = *up;
        int r = vs_copy(&at->vs, &up->vs, b, WALK_REGION, b + WALK_REGION, WALK_INDENTS) ? -1
                : gm_ctx_step(w->ctx, &at->sp, &at->k, &at->q, work, nd->byte, ctx_vfeed,
                              &at->vs, err);
        at->win = work->n;
        int ok = r > 0 && nd->tok_end > nd->tok_begin
                     ? ctx_pending(w->ctx, at->sp, at->k, at->q, work, &at->vs, scratch,
                                   WALK_REGION, err)
                     : 0;
        if (ok == -2)
            r = -2;
        for (uint32_t j = nd->tok_begin; r > 0 && ok != 0 && j < nd->tok_end && st == GM_OK; j++) {
            if (ok < 0)
                st = ctx_token(w, tr->tokens[j], err); /* a deep stack: the heap path */
            else
                w->mask[tr->tokens[j] >> 5] |= 1u << (tr->tokens[j] & 31);
        }
        if (r == -2) {
            st = err->code;
        } else if (r == -1) {
            /* The overlay filled up: this subtree token by token on the heap path. */
            for (uint32_t n = i; n < nd->skip && st == GM_OK; n++)
                for (uint32_t j = tr->nodes[n].tok_begin; j < tr->nodes[n].tok_end && st == GM_OK; j++)
                    st = ctx_token(w, tr->tokens[j], err);
        }
        i = r > 0 ? i + 1 : nd->skip;
    }
done:
    gm_mem_free(m, lev);
    gm_mem_free(m, bufs);
    gm_mem_free(m, text);
    gm_mem_free(m, work);
    return st;
}

/* ctx_token for every token of class c. */
static gm_status ctx_class(walker *w, const gm_class *c, gm_error *err)
{
    ctx_each e = {w, err, GM_OK};
    gm_tokset_foreach(c->tokens, w->sp->nbits, ctx_each_token, &e);
    return e.st;
}

static gm_status walk_classes(walker *w, const gm_profile *p, const uint32_t *idx,
                              const uint32_t *shared, uint32_t n, const gm_vstack *vs0,
                              gm_error *err);

static gm_status walk_profile(walker *w, const gm_profile *p, const gm_vstack *vs0, gm_error *err);

/* ctx_class for class c of p and the classes after it sharing its elements 0..d. */
static gm_status ctx_group(walker *w, const gm_profile *p, const gm_class *c, uint32_t d,
                           gm_error *err)
{
    gm_status st = ctx_class(w, c, err);
    for (const gm_class *x = c + 1; st == GM_OK && x < p->classes + p->nclasses && x->shared > d;
         x++)
        st = ctx_class(w, x, err);
    return st;
}

/*
 * Class c of p diverged after its element d into lexer k, vs holding the
 * stack after that element: walks the classes of the rests of its tokens
 * and of those of the classes after it sharing that prefix, in k's spanner
 * (note [contextual masks]). The walker's snapshots and memo are left stale.
 */
static gm_status walk_suffixes(walker *w, const gm_profile *p, const gm_class *c, uint32_t d,
                               uint32_t k, const gm_vstack *vs, gm_error *err)
{
    const gm_profile *sub = NULL;
    if (w->depth < GM_SUFFIX_DEPTH) {
        gm_status st = gm_ctx_suffixes(w->ctx, w->sp, p, (uint32_t)(c - p->classes), d, k, &sub,
                                       err);
        if (st != GM_OK)
            return st;
    }
    if (!sub)
        return ctx_group(w, p, c, d, err);
    const gm_spanner *sp = w->sp;
    uint32_t lexer = w->lexer, rel = w->rel_width;
    w->sp = gm_ctx_spanner(w->ctx, k, err); /* built by gm_ctx_suffixes */
    w->lexer = k;
    w->rel_width = 0;
    w->depth++;
    /* A small suffix profile is walked as it is: an entry would hold more than it saves. */
    gm_status st = sub->nclasses >= SUFFIX_ENTRY_CLASSES
                       ? walk_profile(w, sub, vs, err)
                       : walk_classes(w, sub, NULL, NULL, sub->nclasses, vs, err);
    w->depth--;
    w->sp = sp;
    w->lexer = lexer;
    w->rel_width = rel;
    return st;
}

/* The lexer the walk's snapshot s lexes the next lexeme with changed (never without ctx). */
static bool ctx_diverges(const walker *w, const gm_vstack *s)
{
    return w->ctx && gm_ctx_lexer_of(w->ctx, gm_vstack_top(s)) != w->lexer;
}

/*
 * Adds the classes of profile p viable on vs0 (note [class walk]): those
 * listed in idx[0..n) (with their shared prefixes in shared[]), or all of
 * them when idx is NULL.
 */
/* After a walk of suffixes (which used the snapshots and the memo): the walk restarts at vs0. */
static void restart(walker *w, const gm_vstack *vs0, uint32_t *valid, repeat *rp)
{
    /* vs0 fitted in snapshot 0 before, so it fits again. */
    vs_copy(&w->snap[0], vs0, w->regions[0], WALK_REGION, w->iregions[0], WALK_INDENTS);
    memset(w->known, 0, sizeof w->known);
    memset(w->viable, 0, sizeof w->viable);
    *valid = 0;
    rp->depth = UINT32_MAX;
}

static gm_status walk_classes(walker *w, const gm_profile *p, const uint32_t *idx,
                              const uint32_t *shared, uint32_t n, const gm_vstack *vs0,
                              gm_error *err)
{
    memset(w->known, 0, sizeof w->known);
    memset(w->viable, 0, sizeof w->viable);
    if (vs0->n >= WALK_REGION / 2 ||
        vs_copy(&w->snap[0], vs0, w->regions[0], WALK_REGION, w->iregions[0], WALK_INDENTS)) {
        /* A pathologically deep overlay already: answer every class on the heap path. */
        for (uint32_t k = 0; k < n; k++) {
            const gm_class *c = &p->classes[idx ? idx[k] : k];
            bool ok;
            w->diverged = 0;
            gm_status st = class_big(w, vs0, p, c, &ok, err);
            if (st == GM_OK && w->diverged)
                st = ctx_class(w, c, err);
            if (st != GM_OK)
                return st;
            if (ok)
                add_tokens(w, c->tokens);
        }
        return GM_OK;
    }
    uint32_t div_lexer = 0;
    uint32_t valid = 0;                 /* snapshots 0..valid hold the current prefix */
    uint32_t failed = UINT32_MAX;       /* position whose element was rejected, if any */
    uint32_t diverged = UINT32_MAX;     /* position after whose element the lexer changed */
    repeat rp = {UINT32_MAX, 0, 0, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        const gm_class *c = &p->classes[idx ? idx[k] : k];
        uint32_t c_shared = idx ? shared[k] : c->shared;
        if (failed != UINT32_MAX && c_shared > failed && !(w->sp->variant & GM_VARIANT_NO_SHARING))
            continue;                   /* same rejected prefix */
        if (diverged != UINT32_MAX && c_shared > diverged)
            continue; /* the same prefix, the same lexer change: walked with the first */
        failed = UINT32_MAX;
        diverged = UINT32_MAX;
        uint32_t d = c_shared < valid ? c_shared : valid;
        if (w->sp->variant & GM_VARIANT_NO_SHARING)
            d = 0;
        w->overflow = 0;
        bool alive = true;
        for (; d < c->len; d++) {
            uint32_t from = d < WALK_DEPTH ? d : WALK_DEPTH;
            uint32_t to = d + 1 < WALK_DEPTH ? d + 1 : WALK_DEPTH;
            if (from != to && vs_copy(&w->snap[to], &w->snap[from], w->regions[to], WALK_REGION,
                                      w->iregions[to], WALK_INDENTS)) {
                w->overflow = 1;
                break;
            }
            uint32_t e = p->seqs[c->seq + d];
            bool again = d + 1 < c->len && p->seqs[c->seq + d + 1] == e;
            int r = walk_feed(w, &w->snap[to], e, d, again, &rp);
            if (r == GM_VFEED_OVERFLOW) {
                w->overflow = 1;
                break;
            }
            if (r != GM_VFEED_SHIFTED) {
                failed = d;
                alive = false;
                break;
            }
            if (ctx_diverges(w, &w->snap[to])) {
                diverged = d;
                div_lexer = gm_ctx_lexer_of(w->ctx, gm_vstack_top(&w->snap[to]));
                alive = false;
                break;
            }
        }
        bool ok = false;
        if (!w->overflow && diverged != UINT32_MAX) {
            uint32_t to = diverged + 1 < WALK_DEPTH ? diverged + 1 : WALK_DEPTH;
            /* The stack after the diverging element, kept apart from the snapshots. */
            uint32_t dbuf[WALK_REGION], dibuf[WALK_INDENTS];
            gm_vstack div_vs;
            gm_status st = GM_OK;
            if (vs_copy(&div_vs, &w->snap[to], dbuf, WALK_REGION, dibuf, WALK_INDENTS))
                st = ctx_group(w, p, c, diverged, err); /* cannot happen: the same room */
            else
                st = walk_suffixes(w, p, c, diverged, div_lexer, &div_vs, err);
            if (st != GM_OK)
                return st;
            restart(w, vs0, &valid, &rp);
            continue;
        }
        if (!w->overflow && !alive) {
            valid = failed < WALK_DEPTH ? failed : WALK_DEPTH - 1;
            continue;
        }
        if (!w->overflow) {
            /* Snapshots beyond WALK_DEPTH were overwritten in place: only 0..WALK_DEPTH-1 stay. */
            valid = c->len < WALK_DEPTH ? c->len : WALK_DEPTH - 1;
            const gm_vstack *end = &w->snap[c->len < WALK_DEPTH ? c->len : WALK_DEPTH];
            /* A switch class the lexer did not switch for fails (note [contextual masks]). */
            w->need_tokens = 0;
            ok = c->prod != GM_PROD_SWITCH && prod_viable(w, end, c->prod, c->len == 0);
            if (!ok && !w->overflow && w->need_tokens) {
                gm_status st = ctx_class(w, c, err);
                if (st != GM_OK)
                    return st;
            }
        }
        if (w->overflow) {
            /* Rare: the exact heap path for this class; the snapshots are stale. */
            w->overflow = 0;
            valid = 0;
            failed = UINT32_MAX;
            rp.depth = UINT32_MAX;
            diverged = UINT32_MAX;
            w->diverged = 0;
            gm_status st = class_big(w, vs0, p, c, &ok, err);
            if (st == GM_OK && w->diverged)
                st = ctx_class(w, c, err);
            if (st != GM_OK)
                return st;
        }
        if (ok)
            add_tokens(w, c->tokens);
    }
    return GM_OK;
}

/* A virtual stack over the matcher's real stacks. */
/*
 * Adds the viable classes of p on vs0: the always-accepted entry of p at
 * the top state, then a walk over its context-dependent classes only; the
 * walk over every class when there is no entry.
 */
static gm_status walk_profile(walker *w, const gm_profile *p, const gm_vstack *vs0, gm_error *err)
{
    gm_spanner *sp = (gm_spanner *)w->sp;
    const gm_accept_entry *e = NULL;
    if (!(sp->variant & GM_VARIANT_NO_ACCEPT_CACHE)) {
        /* The top states, bottom first: the overlay's, then the real stack's. */
        uint32_t top[GM_ANCHOR_DEEP], n = 0;
        const gm_lr_node *node = vs0->base;
        for (uint32_t i = vs0->n; i > 0 && n < GM_ANCHOR_DEEP; i--)
            top[n++] = vs0->ov[i - 1];
        for (; node && n < GM_ANCHOR_DEEP; node = node->parent)
            top[n++] = node->state;
        for (uint32_t i = 0; i < n / 2; i++) {
            uint32_t x = top[i];
            top[i] = top[n - 1 - i];
            top[n - 1 - i] = x;
        }
        uint32_t n4 = n < GM_ANCHOR_STATES ? n : GM_ANCHOR_STATES;
        e = gm_accept_entry_get(sp, p, top + (n - n4), n4, vs0->parens);
        /* note [deeper anchors] in spanner/accept.h */
        if (e && n > n4 && e->ndep >= GM_ANCHOR_DEEPEN && e->ndep > e->nacc) {
            const gm_accept_entry *deep = gm_accept_entry_get(sp, p, top, n, vs0->parens);
            if (deep)
                e = deep;
        }
    }
    if (!e)
        return walk_classes(w, p, NULL, NULL, p->nclasses, vs0, err);
    add_tokens(w, e->accepted);
    return walk_classes(w, p, e->dep, e->dep_shared, e->ndep, vs0, err);
}

static void vs_init(gm_vstack *vs, const gm_mask_state *s, uint32_t *buf, uint32_t cap,
                    uint32_t *ibuf, uint32_t icap)
{
    memset(vs, 0, sizeof *vs);
    vs->base = s->stack;
    vs->ov = buf;
    vs->cap = cap;
    vs->ibase = s->layer ? s->layer->indents : NULL;
    vs->iov = ibuf;
    vs->icap = icap;
    vs->parens = s->layer ? s->layer->parens : 0;
}

static uint32_t pending_width(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex ? gm_spanner_width(sp, q) : 0;
}

/* gm_mask_fill, under the contextual lexer when ctx is not NULL (sp is then lexer's). */
static gm_status fill(gm_spanner *sp, gm_ctx_spanners *ctx, uint32_t lexer, const gm_mask_state *s,
                      uint32_t *mask, gm_error *err)
{
    memset(mask, 0, GM_MASK_WORDS(sp->nbits) * sizeof(uint32_t));
    bool window = ctx && s->win && gm_ctx_backtracking(sp, s->q);
    const gm_profile *p = window ? NULL : gm_spanner_profile(sp, s->q, err);
    if (!p && !window)
        return err->code;
    walker w;
    w.sp = sp;
    w.mask = mask;
    w.filter = NULL;
    w.overflow = 0;
    w.rel_width = pending_width(sp, s->q);
    w.ctx = ctx;
    w.lexer = lexer;
    w.depth = 0;
    w.top_sp = sp;
    w.top_lexer = lexer;
    w.q0 = s->q;
    w.top_win = window ? s->win : NULL;
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack real;
    vs_init(&real, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    w.top_vs0 = &real;
    if (window)
        return ctx_trie_walk(&w, err); /* a window before the token: every token is run */
    gm_status st = walk_profile(&w, p, &real, err);
    if (st != GM_OK || p->split0 == GM_SPANNER_NONE)
        return st;
    /* Tokens whose first byte ends the pending lexeme: the next state's classes after it. */
    gm_vstack after = real;
    if (p->split0_emit != GM_SPANNER_NONE) {
        int r = gm_layer_vfeed(sp, &after, p->split0_emit, w.rel_width);
        if (r == GM_VFEED_REJECTED)
            return GM_OK;
        if (r != GM_VFEED_SHIFTED)
            return gm_error_set(err, GM_ERR_LIMIT, "a terminal needs too many parser reductions");
    }
    const uint32_t *filter = gm_spanner_split0(sp, p->split0, err);
    uint32_t next = p->split0_next;
    if (ctx && (w.lexer = gm_ctx_lexer_of(ctx, gm_vstack_top(&after))) != lexer) {
        /* The rest is lexed by the lexer of the state after the terminal. */
        uint32_t flag = next < sp->nlex ? gm_spanner_flag(sp, next) : 0;
        if (!(w.sp = gm_ctx_spanner(ctx, w.lexer, err)))
            return err->code;
        next = gm_spanner_id(w.sp, 0, flag, 0);
    }
    const gm_profile *p0 = gm_spanner_profile((gm_spanner *)w.sp, next, err);
    if (!p0 || !filter)
        return err->code;
    w.filter = filter;
    w.rel_width = 0;
    w.top_sp = w.sp;
    w.top_lexer = w.lexer;
    w.q0 = next;
    w.top_vs0 = &after;
    w.top_win = NULL;
    return walk_profile(&w, p0, &after, err);
}

gm_status gm_mask_fill(gm_spanner *sp, const gm_mask_state *s, uint32_t *mask, gm_error *err)
{
    return fill(sp, NULL, 0, s, mask, err);
}

gm_status gm_mask_fill_ctx(gm_ctx_spanners *ctx, const gm_mask_state *s, uint32_t *mask,
                           gm_error *err)
{
    uint32_t k = gm_ctx_lexer_of(ctx, s->stack->state);
    gm_spanner *sp = gm_ctx_spanner(ctx, k, err);
    return sp ? fill(sp, ctx, k, s, mask, err) : err->code;
}

bool gm_mask_can_end(const gm_spanner *sp, const gm_mask_state *s)
{
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack vs;
    vs_init(&vs, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    uint32_t emit[GM_SPANNER_MAX_EMIT], nemit, after;
    if (!gm_spanner_finish(sp, s->q, emit, &nemit, &after))
        return false;
    for (uint32_t k = 0; k < nemit; k++)
        if (gm_layer_vfeed(sp, &vs, emit[k], pending_width(sp, s->q)) != GM_VFEED_SHIFTED)
            return false;
    uint32_t end = gm_spanner_end(sp, after);
    if (end != GM_LEX_NONE && gm_vstack_feed(sp->lr, &vs, end) != GM_VFEED_SHIFTED)
        return false;
    if (gm_layer_vend(sp, &vs) != GM_VFEED_SHIFTED)
        return false;
    return gm_vstack_feed(sp->lr, &vs, sp->lr->eof) == GM_VFEED_ACCEPTED;
}

bool gm_mask_pending_viable(const gm_spanner *sp, const gm_mask_state *s)
{
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS], scratch[WALK_REGION];
    gm_vstack vs;
    vs_init(&vs, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    return set_viable(sp, &vs, gm_spanner_prod(sp, s->q), scratch, WALK_REGION) > 0;
}

int gm_mask_can_end_after(const gm_spanner *sp, const gm_mask_state *s, const uint8_t *bytes,
                          size_t n)
{
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack vs;
    vs_init(&vs, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    uint32_t q = s->q, emit[GM_SPANNER_MAX_EMIT], nemit, after;
    for (size_t i = 0; i < n; i++) {
        if (!gm_spanner_step(sp, q, bytes[i], &q, emit, &nemit))
            return 0;
        for (uint32_t k = 0; k < nemit; k++) {
            int r = gm_layer_vfeed(sp, &vs, emit[k], 0);
            if (r != GM_VFEED_SHIFTED)
                return r == GM_VFEED_OVERFLOW ? -1 : 0;
        }
    }
    uint32_t width = pending_width(sp, q);
    if (!gm_spanner_finish(sp, q, emit, &nemit, &after))
        return 0;
    for (uint32_t k = 0; k < nemit; k++) {
        int r = gm_layer_vfeed(sp, &vs, emit[k], width);
        if (r != GM_VFEED_SHIFTED)
            return r == GM_VFEED_OVERFLOW ? -1 : 0;
    }
    uint32_t end = gm_spanner_end(sp, after);
    int r = end == GM_LEX_NONE ? GM_VFEED_SHIFTED : gm_vstack_feed(sp->lr, &vs, end);
    if (r == GM_VFEED_SHIFTED)
        r = gm_layer_vend(sp, &vs);
    if (r == GM_VFEED_SHIFTED)
        r = gm_vstack_feed(sp->lr, &vs, sp->lr->eof);
    return r == GM_VFEED_ACCEPTED ? 1 : r == GM_VFEED_OVERFLOW ? -1 : 0;
}

/* ---- the matcher's checks under the contextual lexer (note [contextual fallbacks]) ---- */

bool gm_mask_pending_viable_ctx(gm_ctx_spanners *ctx, const gm_mask_state *s)
{
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS], scratch[WALK_REGION];
    gm_vstack vs;
    vs_init(&vs, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    gm_error err;
    uint32_t k = gm_ctx_lexer_of(ctx, s->stack->state);
    gm_spanner *sp = gm_ctx_spanner(ctx, k, &err);
    gm_ctx_window win;
    gm_ctx_window_load(s->win, &win);
    return sp && ctx_pending(ctx, sp, k, s->q, &win, &vs, scratch, WALK_REGION, &err) > 0;
}

bool gm_mask_can_end_ctx(gm_ctx_spanners *ctx, const gm_mask_state *s)
{
    uint32_t buf[WALK_REGION], ibuf[WALK_INDENTS];
    gm_vstack vs;
    vs_init(&vs, s, buf, WALK_REGION, ibuf, WALK_INDENTS);
    gm_error err;
    uint32_t k = gm_ctx_lexer_of(ctx, s->stack->state), q = s->q;
    gm_spanner *sp = gm_ctx_spanner(ctx, k, &err);
    gm_ctx_window win;
    gm_ctx_window_load(s->win, &win);
    if (!sp || gm_ctx_finish(ctx, &sp, &k, &q, &win, ctx_vfeed, &vs, &err) <= 0)
        return false;
    uint32_t end = gm_spanner_end(sp, q);
    if (end != GM_LEX_NONE && gm_vstack_feed(sp->lr, &vs, end) != GM_VFEED_SHIFTED)
        return false;
    if (gm_layer_vend(sp, &vs) != GM_VFEED_SHIFTED)
        return false;
    return gm_vstack_feed(sp->lr, &vs, sp->lr->eof) == GM_VFEED_ACCEPTED;
}
