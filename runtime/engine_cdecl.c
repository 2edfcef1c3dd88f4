/* The LALR engine's steps with C's typedef-name layer (runtime/cdecl.h, note [typedef-name masks]). */
#include "runtime/cdecl.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/cdecl_index.h"
#include "runtime/layer.h"
#include "runtime/mask.h"
#include "runtime/objects.h"
#include "runtime/vstack.h"
#include "base/error.h"

#define REGION 256

static gm_mem *cmem(const gm_compiled *c) { return (gm_mem *)&c->mem; }

static bool ident_byte(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' ||
           b == '$';
}

/* The text of a pending lexeme while it is all identifier bytes. */
typedef struct ctext {
    uint8_t buf[GM_CSCOPE_MAX_NAME];
    size_t len;
    bool ident;              /* every byte so far is an identifier byte */
} ctext;

/*
 * note [typedef-layer overlays]
 * The layer's viability checks feed terminals on a virtual stack
 * (runtime/vstack.h) whose overlay starts in a REGION-state buffer on the C
 * stack. When it fills up the answer is unknown, never "viable" nor "not
 * viable": the feeds are redone on heap overlays of twice the states until
 * they fit, as runtime/mask.c does (rare: nesting deeper than REGION).
 * c->cdecl_overlay, when set below REGION, starts smaller: tests use it to
 * run every check through the retries.
 */
#define BIG_OVERLAY (1u << 20)

static void vs_init(gm_vstack *vs, const gm_lr_node *stack, uint32_t *buf, uint32_t cap)
{
    memset(vs, 0, sizeof *vs);
    vs->base = stack;
    vs->ov = buf;
    vs->cap = cap;
}

/*
 * Feeds terms[0..n) on stack, stopping after the first that is not
 * shifted: *last is the result of the last feed made, *fed how many were
 * made. GM_ERR_NOMEM or GM_ERR_LIMIT (err set) when no overlay holds them.
 */
static gm_status vfeed_terms(const gm_compiled *c, const gm_lr_node *stack, const uint32_t *terms,
                             uint32_t n, gm_vfeed *last, uint32_t *fed, gm_error *err)
{
    const gm_lr_table *lr = c->spanner->lr;
    uint32_t buf[REGION];
    uint32_t cap = c->cdecl_overlay && c->cdecl_overlay < REGION ? c->cdecl_overlay : REGION;
    for (; cap <= BIG_OVERLAY; cap *= 2) {
        uint32_t *ov = cap <= REGION ? buf : gm_mem_alloc(cmem(c), (size_t)cap * sizeof *ov);
        if (!ov)
            return gm_mem_fail(cmem(c), err, "a parser overlay");
        gm_vstack vs;
        vs_init(&vs, stack, ov, cap);
        gm_vfeed r = GM_VFEED_SHIFTED;
        uint32_t k = 0;
        while (k < n && r == GM_VFEED_SHIFTED)
            r = gm_vstack_feed(lr, &vs, terms[k++]);
        if (ov != buf)
            gm_mem_free(cmem(c), ov);
        if (r != GM_VFEED_OVERFLOW) {
            *last = r;
            *fed = k;
            return GM_OK;
        }
    }
    return gm_error_set(err, GM_ERR_LIMIT, "a terminal needs more than %u parser states of reductions",
                        BIG_OVERLAY);
}

/* Whether terminal term can come next on stack: 1 yes, 0 no, -1 error (err set). */
static int term_viable(const gm_compiled *c, const gm_lr_node *stack, uint32_t term, gm_error *err)
{
    gm_vfeed r;
    uint32_t fed;
    if (vfeed_terms(c, stack, &term, 1, &r, &fed, err) != GM_OK)
        return -1;
    return r == GM_VFEED_SHIFTED;
}

/* Whether the pending lexeme of q (with text t, NULL when not identifier bytes) can still
   become something the stack takes (note [typedef-name masks]): 1 yes, 0 no, -1 error. */
static int pending_viable(const gm_compiled *c, uint32_t q, const gm_lr_node *stack,
                          const gm_cscope *scope, const uint8_t *text, size_t len, bool ident,
                          gm_error *err)
{
    const gm_spanner *sp = c->spanner;
    const gm_ctypedef *td = c->ctd;
    uint32_t prod = gm_spanner_prod(sp, q);
    if (sp->prod_ignored[prod])
        return 1;
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        uint32_t e = sp->prod_terms[k];
        int r = term_viable(c, stack, e, err);
        if (r != 0)
            return r;
        if (e == td->identifier && ident && gm_cscope_type_prefix(scope, text, len) &&
            (r = term_viable(c, stack, td->typedef_name, err)) != 0)
            return r;
    }
    return 0;
}

/* Whether the output can end in (q, stack, cs): 1 yes, 0 no, -1 error (err set). */
static int can_end(const gm_compiled *c, uint32_t q, const gm_lr_node *stack, const gm_cstate *cs,
                   gm_error *err)
{
    const gm_spanner *sp = c->spanner;
    uint32_t terms[GM_SPANNER_MAX_EMIT + 1], nemit, after;
    if (!gm_spanner_finish(sp, q, terms, &nemit, &after))
        return 0;
    const uint8_t *text = cs->text ? cs->text->text : NULL;
    size_t len = cs->text ? cs->text->len : 0;
    for (uint32_t k = 0; k < nemit; k++)
        if (terms[k] == c->ctd->identifier && cs->text)
            terms[k] = gm_cscope_classify(c->ctd, cs->scope, terms[k], text, len);
    terms[nemit] = sp->lr->eof;
    gm_vfeed r;
    uint32_t fed;
    if (vfeed_terms(c, stack, terms, nemit + 1, &r, &fed, err) != GM_OK)
        return -1;
    return fed == nemit + 1 && r == GM_VFEED_ACCEPTED;
}

bool gm_cdecl_can_end(const gm_compiled *c, const gm_mstate *s)
{
    gm_error err; /* an overlay the check cannot get (no memory, past BIG_OVERLAY): not seen */
    return can_end(c, s->lalr.q, s->lalr.stack, &s->lalr.layer.c, &err) > 0;
}

/* Feeds one element with the lexeme text t on the real stack and scopes. */
static gm_status feed(const gm_compiled *c, gm_lr_node **stack, gm_layer_state *ls, uint32_t term,
                      const ctext *t, gm_error *err)
{
    const gm_ctypedef *td = c->ctd;
    if (term == td->identifier) {
        if (!t->ident)
            return gm_error_set(err, GM_ERR_STATE, "typedef-name layer: an identifier whose text was not kept");
        term = gm_cscope_classify(td, ls->c.scope, term, t->buf, t->len);
    }
    gm_status st = gm_layer_feed(c->spanner, cmem(c), stack, ls, term, 0);
    if (st != GM_OK)
        return st;
    return gm_cscope_shifted(td, cmem(c), &ls->c, *stack, term, t->buf, t->ident ? t->len : 0, err);
}

gm_status gm_cdecl_advance(const gm_compiled *c, const gm_mstate *from, const uint8_t *bytes,
                           size_t len, gm_mstate *to, gm_error *err)
{
    gm_mem *mem = cmem(c);
    const gm_spanner *sp = c->spanner;
    uint32_t q = from->lalr.q;
    gm_lr_node *stack = from->lalr.stack;
    gm_layer_state ls = from->lalr.layer;
    gm_lr_node_retain(stack);
    gm_indent_retain(ls.indents);
    gm_cstate_retain(&ls.c);
    ctext t;
    t.len = 0;
    t.ident = ls.c.text != NULL || !gm_spanner_pending(sp, q);
    if (ls.c.text) {
        memcpy(t.buf, ls.c.text->text, ls.c.text->len);
        t.len = ls.c.text->len;
    }
    gm_status st = GM_OK;
    for (size_t i = 0; i < len && st == GM_OK; i++) {
        uint8_t b = bytes[i];
        uint32_t next = q, emitted[GM_SPANNER_MAX_EMIT], nemitted = 0;
        /* A lexeme starts at b when none is pending or b ends the pending one (an ignored
           lexeme ends without an element: the lexer's move says it). */
        bool fresh = !gm_spanner_pending(sp, q) ||
                     gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, q), sp->lexer->byte_class[b]) ==
                         GM_LEX_DEAD;
        if (!gm_spanner_step(sp, q, b, &next, emitted, &nemitted)) {
            st = GM_ERR_REJECTED;
            break;
        }
        for (uint32_t k = 0; st == GM_OK && k < nemitted; k++)
            st = feed(c, &stack, &ls, emitted[k], &t, err);
        if (nemitted || fresh) {
            t.len = 0;
            t.ident = true;
        }
        if (t.ident && ident_byte(b) && gm_spanner_pending(sp, next)) {
            if (t.len == sizeof t.buf)
                st = gm_error_set(err, GM_ERR_LIMIT, "an identifier longer than %d bytes",
                                  GM_CSCOPE_MAX_NAME);
            else
                t.buf[t.len++] = b;
        } else {
            t.ident = false;
        }
        q = next;
    }
    if (st == GM_OK) {
        gm_cscope *text = NULL;
        if (t.ident && gm_spanner_pending(sp, q) && !(text = gm_cscope_text(mem, t.buf, t.len)))
            st = gm_mem_fail(mem, err, "the typedef-name layer of a matcher");
        gm_cscope_release(mem, ls.c.text);
        ls.c.text = text;
    }
    if (st == GM_OK) {
        bool ident = ls.c.text != NULL || !gm_spanner_pending(sp, q);
        int r = pending_viable(c, q, stack, ls.c.scope, t.buf, ident ? t.len : 0, ident, err);
        if (r == 0)
            r = can_end(c, q, stack, &ls.c, err);
        st = r > 0 ? GM_OK : r == 0 ? GM_ERR_REJECTED : err->code;
    }
    if (st != GM_OK) {
        gm_lr_node_release(mem, stack);
        gm_indent_release(mem, ls.indents);
        gm_cstate_release(mem, &ls.c);
        if (st == GM_ERR_NOMEM)
            gm_error_set(err, st, "out of memory for the parser stack");
        return st;
    }
    to->lalr.q = q;
    to->lalr.stack = stack;
    to->lalr.layer = ls;
    memset(&to->lalr.win, 0, sizeof to->lalr.win);
    return GM_OK;
}

/* Every token stepped with the layer (the reference path, and the fallback). */
static gm_status fill_all(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, gm_error *err)
{
    const gm_vocab_data *v = c->vocab->data;
    uint32_t n = c->spanner->nbits;
    memset(mask, 0, ((size_t)n + 31) / 32 * sizeof *mask);
    for (uint32_t id = 0; id < n; id++) {
        if (v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
            continue;
        size_t len;
        const uint8_t *bytes = gm_vocab_data_token(v, id, &len);
        if (!len)
            continue;
        gm_mstate next;
        gm_status st = gm_cdecl_advance(c, s, bytes, len, &next, err);
        if (st == GM_ERR_REJECTED)
            continue;
        if (st != GM_OK)
            return st;
        mask[id / 32] |= 1u << (id % 32);
        c->ops->release(c, &next);
    }
    return GM_OK;
}

/* The exceptions of note [typedef-name exceptions], at most EXC_MAX (else the fallback). */
#define EXC_MAX 32768

typedef struct exceptions {
    uint32_t ids[EXC_MAX];
    uint32_t n;
    bool full;
    uint32_t *seen;          /* a bit per token: already in ids */
    uint32_t *must;          /* a bit per token: not only an open occurrence relates it */
    uint32_t *tailq;         /* a bit per token: its bytes after the first emit nothing when
                                the first starts a lexeme (from the scope's memo) */
} exceptions;

/*
 * Token id is an exception; must: other than by its open occurrence (a
 * token related only by the identifier it leaves open reads its other
 * identifiers as the walk did, so where the walk allowed it, IDENTIFIER
 * fits the open one and it stays allowed: only a masked one is stepped).
 */
static void exc_add(exceptions *x, uint32_t id, bool must)
{
    uint32_t bit = 1u << (id % 32);
    if (must)
        x->must[id / 32] |= bit;
    if (x->seen[id / 32] & bit)
        return;
    x->seen[id / 32] |= bit;
    if (x->n == EXC_MAX)
        x->full = true;
    else
        x->ids[x->n++] = id;
}

/*
 * A pending number (number_pending): an occurrence inside a token's leading
 * run (GM_CIDX_SUF) starts an identifier only when the number's lexeme can
 * take the run's bytes before it.
 */
typedef struct suf_ctx {
    const gm_lexer *lx;
    uint32_t dfa;            /* the number's lexer state */
    const gm_vocab_data *v;
} suf_ctx;

/* Whether occurrence text[0..len) inside token t's leading run (open: at its end) may start
   where the pending number ends. */
static bool suf_possible(const suf_ctx *sc, uint32_t t, size_t len, bool open)
{
    size_t n;
    const uint8_t *b = gm_vocab_data_token(sc->v, t, &n);
    size_t lead = 0;
    while (lead < n && ident_byte(b[lead]))
        lead++;
    if (lead < len)
        return false;
    size_t start = lead - len; /* complete and open occurrences both run to the run's end */
    (void)open;
    uint32_t q = sc->dfa;
    for (size_t i = 0; i < start; i++)
        if ((q = gm_lexer_move(sc->lx, q, sc->lx->byte_class[b[i]])) == GM_LEX_DEAD)
            return false;
    return true;
}

/* Tokens with an occurrence (of a kind in kinds) equal to text, or open and a prefix of it. */
static void exc_text(const gm_cindex *ix, exceptions *x, const uint8_t *text, size_t len,
                     uint32_t kinds, const suf_ctx *sc)
{
    for (size_t k = 1; k <= len && !x->full; k++) {
        uint32_t n;
        const uint32_t *e = gm_cindex_find(ix, text, k, &n);
        for (uint32_t i = 0; i < n; i++) {
            if (!(e[i] & kinds) || (k != len && !(e[i] & GM_CIDX_OPEN)))
                continue;
            if (!(e[i] & (kinds & ~GM_CIDX_SUF)) &&
                !suf_possible(sc, e[i] & GM_CIDX_TOKEN, k, e[i] & GM_CIDX_OPEN))
                continue;
            exc_add(x, e[i] & GM_CIDX_TOKEN, !(e[i] & GM_CIDX_OPEN));
        }
    }
}

/*
 * Whether token t, whose leading run completes the pending identifier p as
 * p + run, has a later occurrence that is a prefix of (or equal to) p + run:
 * only then can binding the completed name as a typedef name change how
 * the token reads on.
 */
static bool leadlater_related(const gm_vocab_data *v, uint32_t t, const gm_cscope *p)
{
    size_t len, lead = 0;
    const uint8_t *b = gm_vocab_data_token(v, t, &len);
    while (lead < len && ident_byte(b[lead]))
        lead++;
    for (size_t i = lead; i < len; i++) {
        if (!ident_byte(b[i]) || ident_byte(b[i - 1]))
            continue;
        /* every start inside this run (a digit-led run may hold one anywhere) */
        size_t end = i;
        while (end < len && ident_byte(b[end]))
            end++;
        for (size_t j = i; j < end; j++) {
            size_t n = end - j, k = 0;
            if (n > p->len + lead)
                continue;
            while (k < n && b[j + k] == (k < p->len ? p->text[k] : b[k - p->len]))
                k++;
            if (k == n)
                return true;
        }
    }
    return false;
}

/* Whether the lexeme pending in q is a number that a letter may continue (and that may then
   end inside the letters: a suffix, note [typedef-name exceptions]). */
static bool number_pending(const gm_compiled *c, uint32_t q)
{
    const gm_spanner *sp = c->spanner;
    const gm_lexer *lx = sp->lexer;
    if (!gm_spanner_pending(sp, q))
        return false;
    uint32_t dfa = gm_spanner_dfa(sp, q);
    bool number = false;
    for (int i = 0; i < 2; i++)
        number |= c->cidx->numbers[i] != UINT32_MAX &&
                  gm_lexer_can_produce(lx, dfa, c->cidx->numbers[i]);
    if (!number)
        return false;
    for (unsigned b = 0; b < 256; b++)
        if (((b | 0x20) >= 'a' && (b | 0x20) <= 'z') || b == '_' || b == '$')
            if (gm_lexer_move(lx, dfa, lx->byte_class[b]) != GM_LEX_DEAD)
                return true;
    return false;
}

/*
 * note [exceptions of a scope]
 * collect's work for the scope list alone (the tokens of every typedef
 * name on it, kinds GM_CIDX_ANY: no number pending) depends on the list
 * only, which changes at typedef declarations, shadowing declarations and
 * block ends, not at each token. So it is done once per list head and kept
 * in the head (gm_cscope.memo: [count, entries...], an entry a token id
 * with MEMO_MUST when not only an open occurrence relates it; count
 * MEMO_FULL when the exceptions overflowed). Published by compare-and-swap:
 * a list shared by matchers on two threads is summarized twice at worst.
 * A summary that cannot be allocated is not kept (it only saves time).
 */
#define MEMO_MUST 0x80000000u
#define MEMO_FULL UINT32_MAX
/* An entry's token id, the terminal its second byte emits (kind MEMO_QUIET1) and its kind. */
#define MEMO_ID(e) ((e) & 0x3ffffu)
#define MEMO_T1(e) (((e) >> 18) & 0xffu)
#define MEMO_KIND(e) (((e) >> 26) & 3u)
#define MEMO_MAX_IDS (1u << 18)  /* larger vocabularies keep kind 0 (and ids in full) */
enum {
    MEMO_OTHER = 0,          /* none of these */
    MEMO_QUIET0 = 1,         /* when its first byte starts a lexeme, it emits at that byte only */
    MEMO_QUIET1 = 2,         /* ... at that byte and, T1 (no identifier), at the second only */
    MEMO_DEAD = 3            /* ... it cannot be lexed */
};

static uint8_t first_byte(const gm_compiled *c, uint32_t id)
{
    size_t len;
    const uint8_t *b = gm_vocab_data_token(c->vocab->data, id, &len);
    return len ? b[0] : 0;
}

/* The kind of token id (MEMO_*) and its T1, lexed from where no lexeme is pending. */
static uint32_t tail_kind(const gm_compiled *c, uint32_t id, uint32_t *t1)
{
    const gm_spanner *sp = c->spanner;
    size_t len;
    const uint8_t *b = gm_vocab_data_token(c->vocab->data, id, &len);
    uint32_t q = sp->lex_start, emitted[GM_SPANNER_MAX_EMIT], n, kind = MEMO_QUIET0;
    *t1 = 0;
    if (!len)
        return MEMO_OTHER;
    for (size_t i = 0; i < len; i++) {
        if (!gm_spanner_step(sp, q, b[i], &q, emitted, &n))
            return MEMO_DEAD;
        if (i == 0 || !n)
            continue;
        if (i > 1 || n > 1 || emitted[0] >= 0xff || emitted[0] == c->ctd->identifier ||
            emitted[0] == c->ctd->typedef_name)
            return MEMO_OTHER;
        kind = MEMO_QUIET1;
        *t1 = emitted[0];
    }
    return kind;
}

/* The memo entry of token id (flags: MEMO_MUST or 0). */
static uint32_t memo_entry(const gm_compiled *c, uint32_t id, uint32_t flags)
{
    if (c->spanner->nbits > MEMO_MAX_IDS)
        return id | flags;
    uint32_t t1, kind = tail_kind(c, id, &t1);
    return id | t1 << 18 | kind << 26 | flags;
}

static uint32_t entry_id(const gm_compiled *c, uint32_t e)
{
    return c->spanner->nbits > MEMO_MAX_IDS ? e & GM_CIDX_TOKEN : MEMO_ID(e);
}

static uint32_t entry_kind(const gm_compiled *c, uint32_t e)
{
    return c->spanner->nbits > MEMO_MAX_IDS ? MEMO_OTHER : MEMO_KIND(e);
}

static int cmp_t1(const void *a, const void *b)
{
    uint32_t x = MEMO_T1(*(const uint32_t *)a), y = MEMO_T1(*(const uint32_t *)b);
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * note [typed tokens]
 * The memo's second list: every token with an open occurrence (GM_CIDX_ANY
 * and GM_CIDX_OPEN) whose text is a prefix of (or equal to) a name bound as
 * a typedef name in the list, its first binding (not shadowed). A token
 * whose last lexeme is that occurrence and nothing else can be an open
 * occurrence (letters, `_` and `$` only from where the lexeme starts) reads
 * TYPEDEF_NAME-viable exactly when it is on the list (note [quiet
 * exceptions]).
 */
static bool memo_typed(const uint32_t *memo, uint32_t id, bool *known)
{
    *known = memo && memo[0] != MEMO_FULL && memo[memo[0] + 1] != MEMO_FULL;
    if (!*known)
        return false;
    const uint32_t *t = memo + memo[0] + 2;
    uint32_t lo = 0, hi = memo[memo[0] + 1];
    if (!*known)
        return false;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < memo[memo[0] + 1] && t[lo] == id;
}

static void scope_part(const gm_compiled *c, const gm_cscope *scope, exceptions *x, uint32_t kinds,
                       const suf_ctx *sc)
{
    for (const gm_cscope *n = scope; n && !x->full; n = n->parent)
        if (n->is_type)
            exc_text(c->cidx, x, n->text, n->len, kinds, sc);
}

typedef struct quiet_memo quiet_memo;
static int first_verdict(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b);
static int second_verdict(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b,
                          uint32_t t1);

/*
 * The scope's part of x (x empty), from the head's summary, made here when
 * missing. A group of tokens whose first byte b ends the pending lexeme and
 * whose first terminals TYPEDEF_NAME cannot follow (note [quiet
 * exceptions]) leaves out its tail-quiet tokens that only an open
 * occurrence relates: fill would take them out of the loop unstepped, as
 * they are, without reading their bytes (most of a mask's time was those
 * reads).
 */
static void scope_memo(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, gm_cscope *scope,
                       exceptions *x, const suf_ctx *sc)
{
    const gm_spanner *sp = c->spanner;
    uint32_t *memo = atomic_load_explicit(&scope->memo, memory_order_acquire);
    if (memo) {
        if (memo[0] == MEMO_FULL) {
            x->full = true;
            return;
        }
        uint32_t n = memo[0];
        const uint32_t *off = memo + n + memo[n + 1] + 2;
        if (memo[n + 1] == MEMO_FULL)
            off = NULL; /* no typed list, no groups: a summary that had no memory for them */
        uint32_t q = s->lalr.q;
        bool pending = gm_spanner_pending(sp, q);
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t from = off ? off[b] : b ? n : 0, to = off ? off[b + 1] : n;
            if (from == to)
                continue;
            bool ends = !pending || gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, q),
                                                  sp->lexer->byte_class[b]) == GM_LEX_DEAD;
            uint32_t t1 = UINT32_MAX;
            int v1 = 0;
            for (uint32_t i = from + 1; i <= to; i++) {
                uint32_t e = memo[i], id = entry_id(c, e), kind = entry_kind(c, e);
                if (ends && !(e & MEMO_MUST) && kind != MEMO_OTHER) {
                    bool skip = kind == MEMO_DEAD; /* a lexing error: rejected */
                    if (kind == MEMO_QUIET0)
                        skip = first_verdict(c, s, qm, (uint8_t)b) == 1;
                    if (kind == MEMO_QUIET1) {
                        if (MEMO_T1(e) != t1) {
                            t1 = MEMO_T1(e);
                            v1 = second_verdict(c, s, qm, (uint8_t)b, t1);
                        }
                        skip = v1 == 1;
                    }
                    if (skip)
                        continue; /* the loop would leave it as the walk has it */
                }
                exc_add(x, id, e & MEMO_MUST);
                if (kind == MEMO_QUIET0)
                    x->tailq[id / 32] |= 1u << (id % 32);
            }
        }
        return;
    }
    scope_part(c, scope, x, GM_CIDX_ANY, sc);
    uint32_t n = x->full ? 0 : x->n, ntyped = 0;
    /* typed: the tokens with an open identifier occurrence that is a prefix of a name the
       list binds as a typedef name (its first binding): note [typed tokens] */
    size_t words = ((size_t)c->spanner->nbits + 31) / 32;
    uint32_t *typed = NULL, *had = x->full ? NULL : gm_mem_calloc(cmem(c), words, sizeof *had);
    if (had && !(typed = gm_mem_alloc(cmem(c), ((size_t)n + 1) * sizeof *typed)))
        gm_mem_free(cmem(c), had);
    if (typed)
        for (const gm_cscope *a = scope; a; a = a->parent) {
            if (!a->is_type)
                continue;
            const gm_cscope *b = scope;
            while (b != a && !(b->len == a->len && !memcmp(b->text, a->text, a->len)))
                b = b->parent;
            if (b != a)
                continue; /* shadowed */
            for (uint32_t k = 1; k <= a->len; k++) {
                uint32_t ne;
                const uint32_t *e = gm_cindex_find(c->cidx, a->text, k, &ne);
                for (uint32_t i = 0; i < ne; i++) {
                    uint32_t id = e[i] & GM_CIDX_TOKEN;
                    if (!(e[i] & GM_CIDX_ANY) || !(e[i] & GM_CIDX_OPEN) || (had[id / 32] >> (id % 32)) & 1)
                        continue;
                    had[id / 32] |= 1u << (id % 32);
                    if (ntyped < n) /* a subset of x's tokens: always */
                        typed[ntyped++] = id;
                }
            }
        }
    if (typed)
        gm_mem_free(cmem(c), had);
    memo = gm_mem_alloc(cmem(c), ((size_t)n + ntyped + 2 + 257) * sizeof *memo);
    if (!memo) {
        gm_mem_free(cmem(c), typed);
        return;
    }
    memo[0] = x->full ? MEMO_FULL : n;
    /* the entries grouped by their token's first byte: group b at memo[1 + off[b] ..
       1 + off[b + 1]) with off the 257 words after the typed list */
    uint32_t *off = memo + n + ntyped + 2, fill_at[256];
    memset(off, 0, 257 * sizeof *off);
    for (uint32_t i = 0; i < n; i++)
        off[first_byte(c, x->ids[i]) + 1]++;
    for (uint32_t b = 0; b < 256; b++) {
        off[b + 1] += off[b];
        fill_at[b] = off[b];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = x->ids[i];
        memo[1 + fill_at[first_byte(c, id)]++] =
            memo_entry(c, id, (x->must[id / 32] >> (id % 32)) & 1 ? MEMO_MUST : 0);
    }
    if (c->spanner->nbits <= MEMO_MAX_IDS) /* each group in runs of one T1 */
        for (uint32_t b = 0; b < 256; b++)
            qsort(memo + 1 + off[b], off[b + 1] - off[b], sizeof *memo, cmp_t1);
    /* typed, sorted; MEMO_FULL when it could not be made */
    if (typed)
        qsort(typed, ntyped, sizeof *typed, cmp_u32);
    if (ntyped)
        memcpy(memo + n + 2, typed, (size_t)ntyped * sizeof *typed);
    memo[n + 1] = typed ? ntyped : MEMO_FULL;
    gm_mem_free(cmem(c), typed);
    uint32_t *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&scope->memo, &none, memo, memory_order_acq_rel,
                                                 memory_order_acquire))
        gm_mem_free(cmem(c), memo);
}

static void collect(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, exceptions *x)
{
    const gm_cindex *ix = c->cidx;
    const gm_cstate *cs = &s->lalr.layer.c;
    const gm_cscope *p = cs->text;
    bool other = number_pending(c, s->lalr.q);
    uint32_t kinds = GM_CIDX_ANY | (other ? GM_CIDX_SUF : 0);
    suf_ctx sc = {c->spanner->lexer, other ? gm_spanner_dfa(c->spanner, s->lalr.q) : 0,
                  c->vocab->data};
    x->n = 0;
    x->full = false;
    /* The scope's names first, while x is empty (note [exceptions of a scope]). */
    if (other)
        scope_part(c, cs->scope, x, kinds, &sc);
    else if (cs->scope)
        scope_memo(c, s, qm, cs->scope, x, &sc);
    /* A name bound as a typedef name inside the token needs a typedef declaration: one
       under way on the stack, or the keyword in the token (or completing p). */
    bool td = p && p->len <= 7 && !memcmp(p->text, "typedef", p->len);
    for (const gm_lr_node *n = s->lalr.stack; n && !td; n = n->parent)
        td = c->spanner->lr->accessing[n->state] == c->ctd->td_specifiers;
    const uint32_t *self = td ? ix->self : ix->self_td;
    for (uint32_t i = 0, nself = td ? ix->nself : ix->nself_td; i < nself; i++)
        exc_add(x, self[i], true);
    for (uint32_t i = 0; p && td && i < ix->nleadlater; i++)
        if (leadlater_related(c->vocab->data, ix->leadlater[i], p))
            exc_add(x, ix->leadlater[i], true);
    if (p)
        exc_text(ix, x, p->text, p->len, kinds, &sc);
    /* the pending identifier's leading run continuing it into a typedef name */
    for (const gm_cscope *n = p ? cs->scope : NULL; n && !x->full; n = n->parent)
        if (n->is_type && n->len > p->len && !memcmp(n->text, p->text, p->len))
            exc_text(ix, x, n->text + p->len, n->len - p->len, GM_CIDX_LEAD, &sc);
}

static gm_status fill(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, const uint32_t *only,
                      gm_error *err);

/*
 * The pending identifier completes as a typedef name for the tokens whose
 * first byte ends it (note [first-byte split]): their bits are the mask
 * after it, lexed from the state after the break, on the stack and scopes
 * after TYPEDEF_NAME.
 */
static gm_status split_typedef(const gm_compiled *c, const gm_mstate *s, uint32_t *mask,
                               gm_error *err)
{
    gm_spanner *sp = c->spanner;
    const gm_profile *prof = gm_spanner_profile(sp, s->lalr.q, err);
    if (!prof)
        return err->code;
    if (prof->split0 == GM_SPANNER_NONE)
        return GM_OK;
    const uint32_t *f = gm_spanner_split0(sp, prof->split0, err);
    if (!f)
        return err->code;
    size_t words = ((size_t)sp->nbits + 31) / 32;
    gm_mem *mem = cmem(c);
    gm_lr_node *fed = NULL;
    gm_status st = gm_lr_feed(sp->lr, mem, s->lalr.stack, c->ctd->typedef_name, &fed);
    if (st == GM_ERR_REJECTED) {
        for (size_t w = 0; w < words; w++)
            mask[w] &= ~f[w];
        return GM_OK;
    }
    if (st != GM_OK)
        return gm_error_set(err, st, "out of memory for the parser stack");
    gm_mstate s2;
    memset(&s2, 0, sizeof s2);
    s2.lalr.q = prof->split0_next;
    s2.lalr.stack = fed;
    s2.lalr.layer.c = s->lalr.layer.c;
    gm_cstate_retain(&s2.lalr.layer.c);
    gm_cscope_release(mem, s2.lalr.layer.c.text);
    s2.lalr.layer.c.text = NULL;
    const gm_cscope *p = s->lalr.layer.c.text;
    st = gm_cscope_shifted(c->ctd, mem, &s2.lalr.layer.c, fed, c->ctd->typedef_name, p->text, p->len,
                           err);
    uint32_t *m2 = st == GM_OK ? gm_mem_calloc(mem, words, sizeof *m2) : NULL;
    if (st == GM_OK && !m2)
        st = gm_mem_fail(mem, err, "a mask");
    if (st == GM_OK)
        st = fill(c, &s2, m2, f, err); /* only the tokens of the filter are kept */
    if (st == GM_OK)
        for (size_t w = 0; w < words; w++)
            mask[w] = (mask[w] & ~f[w]) | (m2[w] & f[w]);
    gm_mem_free(mem, m2);
    c->ops->release(c, &s2);
    return st;
}

/*
 * note [quiet exceptions]
 * Most exceptions are tokens that only an open occurrence relates and that
 * the walk masked (" s" while "size_t" is a typedef name in scope, after an
 * identifier). Such a token reads as the walk read it up to its last lexeme,
 * which the layer may take for the prefix of a typedef name: that can only
 * make it viable where TYPEDEF_NAME can be shifted. When TYPEDEF_NAME
 * cannot follow the terminals E the token emits before its last lexeme (the
 * pending lexeme its first byte ends, classified as the step classifies it,
 * then the token's own, no identifier among them), the layer's step masks
 * it too (can_end ends with TYPEDEF_NAME or with what the walk read), so it
 * is not stepped. When E emits at the first byte only, the answer depends
 * on that byte alone (quiet_first, once per byte value and mask), and the
 * scope memo leaves such tokens out in groups (note [exceptions of a
 * scope]). Where TYPEDEF_NAME can follow E and E changes no scope, note
 * [typed tokens] decides a token whose last lexeme is letters.
 */
struct quiet_memo {
    int8_t first[256];       /* per first byte: QUIET_* or -1 unknown */
    uint32_t pterm;          /* the pending identifier classified (UINT32_MAX: not yet) */
    const uint32_t *memo;    /* the scope head's summary (note [exceptions of a scope]) or NULL */
};

enum {
    QUIET_STEP = 0,          /* TYPEDEF_NAME can follow E: step the token */
    QUIET_MASKED = 1,        /* it cannot (or the byte is refused): the token stays masked */
    QUIET_TYPED = 2          /* it can, E changes no scope and cannot end the output after a
                                TYPEDEF_NAME: note [typed tokens] decides */
};

static bool scope_term(const gm_ctypedef *td, uint32_t t)
{
    return t == td->identifier || t == td->typedef_name || t == td->lbrace || t == td->rbrace ||
           t == td->semi;
}

/*
 * What TYPEDEF_NAME after the terminals terms[0..n) allows (QUIET_*), -1 on
 * error: the identifiers among them classified as the step classifies them,
 * the last `later` of them emitted after the token's first byte (an
 * identifier there is not known yet: the token is stepped). terms has room
 * for n + 2.
 */
static int quiet_verdict(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm,
                         uint32_t *terms, uint32_t n, uint32_t later, gm_error *err)
{
    const gm_cscope *p = s->lalr.layer.c.text;
    bool neutral = true;
    for (uint32_t k = 0; k < n; k++) {
        neutral &= !scope_term(c->ctd, terms[k]);
        if (terms[k] != c->ctd->identifier)
            continue;
        if (k >= n - later || !p)
            return QUIET_STEP; /* an identifier whose text is not known here */
        if (qm->pterm == UINT32_MAX)
            qm->pterm = gm_cscope_classify(c->ctd, s->lalr.layer.c.scope, terms[k], p->text, p->len);
        terms[k] = qm->pterm;
    }
    terms[n] = c->ctd->typedef_name;
    terms[n + 1] = c->spanner->lr->eof;
    gm_vfeed r;
    uint32_t fed;
    if (vfeed_terms(c, s->lalr.stack, terms, n + 1, &r, &fed, err) != GM_OK)
        return -1;
    if (!(fed == n + 1 && r == GM_VFEED_SHIFTED))
        return QUIET_MASKED;
    if (!neutral)
        return QUIET_STEP;
    if (vfeed_terms(c, s->lalr.stack, terms, n + 2, &r, &fed, err) != GM_OK)
        return -1;
    return fed == n + 2 && r == GM_VFEED_ACCEPTED ? QUIET_STEP : QUIET_TYPED;
}

/* What first byte b allows (QUIET_*), -1 on error. */
static int quiet_first(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b,
                       gm_error *err)
{
    const gm_spanner *sp = c->spanner;
    uint32_t next, terms[GM_SPANNER_MAX_EMIT + 2], n = 0;
    if (!gm_spanner_step(sp, s->lalr.q, b, &next, terms, &n))
        return QUIET_MASKED; /* a lexing error: the token is rejected */
    return quiet_verdict(c, s, qm, terms, n, 0, err);
}

/* quiet_first for b, once per mask; -1 on error (not kept: the loop meets it again). */
static int first_verdict(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b)
{
    if (qm->first[b] < 0) {
        gm_error err;
        int r = quiet_first(c, s, qm, b, &err);
        if (r < 0)
            return -1;
        qm->first[b] = (int8_t)r;
    }
    return qm->first[b];
}

/*
 * Whether TYPEDEF_NAME cannot follow what first byte b emits from s and
 * then terminal t1 (1: a token of kind MEMO_QUIET1 reads as the walk read
 * it), can (0), or unknown (-1, an error).
 */
static int second_verdict(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b,
                          uint32_t t1)
{
    const gm_spanner *sp = c->spanner;
    uint32_t next, terms[GM_SPANNER_MAX_EMIT + 2], n = 0;
    if (!gm_spanner_step(sp, s->lalr.q, b, &next, terms, &n))
        return 1; /* a lexing error: rejected */
    const gm_cscope *p = s->lalr.layer.c.text;
    for (uint32_t k = 0; k < n; k++) {
        if (terms[k] != c->ctd->identifier)
            continue;
        if (!p)
            return 0;
        if (qm->pterm == UINT32_MAX)
            qm->pterm = gm_cscope_classify(c->ctd, s->lalr.layer.c.scope, terms[k], p->text, p->len);
        terms[k] = qm->pterm;
    }
    terms[n] = t1;
    terms[n + 1] = c->ctd->typedef_name;
    gm_vfeed r;
    uint32_t fed;
    gm_error err;
    if (vfeed_terms(c, s->lalr.stack, terms, n + 2, &r, &fed, &err) != GM_OK)
        return -1;
    return !(fed == n + 2 && r == GM_VFEED_SHIFTED);
}

static bool letter(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_' || b == '$';
}

/* Most terminals quiet() follows through one token. */
#define QUIET_TERMS 16

/*
 * What TYPEDEF_NAME after the terminals E' a token emits before its last
 * lexeme allows (QUIET_*), -1 on error; E' = the first byte's terminals
 * (classified as the step classifies them), then later ones: `later` of
 * them in terms[0..n), no identifier among them.
 */
static int quiet_terms(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint8_t b0,
                       uint32_t *terms, uint32_t n, uint32_t later, gm_error *err)
{
    if (later == 0) {
        if (qm->first[b0] < 0) {
            int r = quiet_first(c, s, qm, b0, err);
            if (r < 0)
                return -1;
            qm->first[b0] = (int8_t)r;
        }
        return qm->first[b0];
    }
    return quiet_verdict(c, s, qm, terms, n, later, err);
}

/*
 * Token id (bytes b[0..len), masked by the walk, only an open occurrence
 * relating it): whether it needs no step by note [quiet exceptions]: 1 it
 * stays masked, 2 it is allowed, 0 step it, -1 error.
 */
static int quiet(const gm_compiled *c, const gm_mstate *s, quiet_memo *qm, uint32_t id,
                 bool tailq, const uint8_t *b, size_t len, gm_error *err)
{
    const gm_spanner *sp = c->spanner;
    uint32_t q = s->lalr.q, next, emitted[GM_SPANNER_MAX_EMIT], n;
    uint32_t terms[QUIET_TERMS + 2], nterms = 0, later = 0;
    if (tailq && qm->first[b[0]] == QUIET_MASKED &&
        (!gm_spanner_pending(sp, q) ||
         gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, q), sp->lexer->byte_class[b[0]]) == GM_LEX_DEAD))
        return 1; /* what the first byte emits is all the token emits */
    size_t start = 0; /* where the last lexeme starts */
    for (size_t i = 0; i < len; i++) {
        bool fresh = !gm_spanner_pending(sp, q) ||
                     gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, q), sp->lexer->byte_class[b[i]]) ==
                         GM_LEX_DEAD;
        if (!gm_spanner_step(sp, q, b[i], &next, emitted, &n))
            return 1;
        if (nterms + n > QUIET_TERMS)
            return 0;
        for (uint32_t k = 0; k < n; k++)
            terms[nterms++] = emitted[k];
        if (i > 0)
            later += n;
        if (n || fresh)
            start = i;
        q = next;
    }
    int r = quiet_terms(c, s, qm, b[0], terms, nterms, later, err);
    if (r != QUIET_TYPED)
        return r < 0 ? -1 : r == QUIET_MASKED;
    /* the last lexeme: letters, `_` and `$` only, pending (its text the open occurrence) */
    if (!gm_spanner_pending(sp, q) || (start == 0 && gm_spanner_pending(sp, s->lalr.q) &&
                                       gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, s->lalr.q),
                                                     sp->lexer->byte_class[b[0]]) != GM_LEX_DEAD))
        return 0;
    if (start > 0 && ident_byte(b[start - 1]))
        return 0; /* an occurrence may start before the lexeme */
    for (size_t i = start; i < len; i++)
        if (!letter(b[i]))
            return 0;
    bool known;
    bool typed = memo_typed(qm->memo, id, &known);
    return !known ? 0 : typed ? 2 : 1;
}

gm_status gm_cdecl_fill(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, gm_error *err)
{
    return fill(c, s, mask, NULL, err);
}

/* The mask of s; only: when not NULL, the bits outside it may be wrong (not stepped). */
static gm_status fill(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, const uint32_t *only,
                      gm_error *err)
{
    if (!c->cidx)
        return fill_all(c, s, mask, err);
    gm_mask_state ms = {s->lalr.q, s->lalr.stack, &s->lalr.layer, NULL};
    gm_status st = gm_mask_fill(c->spanner, &ms, mask, err);
    if (st != GM_OK)
        return st;
    const gm_cscope *p = s->lalr.layer.c.text;
    if (p && gm_cscope_classify(c->ctd, s->lalr.layer.c.scope, c->ctd->identifier, p->text, p->len) ==
                 c->ctd->typedef_name &&
        (st = split_typedef(c, s, mask, err)) != GM_OK)
        return st;
    exceptions *x = gm_mem_alloc(cmem(c), sizeof *x);
    size_t words = ((size_t)c->spanner->nbits + 31) / 32;
    if (x && !(x->seen = gm_mem_calloc(cmem(c), 3 * words, sizeof *x->seen))) {
        gm_mem_free(cmem(c), x);
        x = NULL;
    }
    if (x) {
        x->must = x->seen + words;
        x->tailq = x->seen + 2 * words;
    }
    if (!x)
        return gm_mem_fail(cmem(c), err, "a mask");
    quiet_memo qm;
    memset(qm.first, -1, sizeof qm.first);
    qm.pterm = UINT32_MAX;
    qm.memo = NULL;
    collect(c, s, &qm, x);
    if (x->full) {
        gm_mem_free(cmem(c), x->seen);
        gm_mem_free(cmem(c), x);
        return fill_all(c, s, mask, err);
    }
    const gm_vocab_data *v = c->vocab->data;
    if (s->lalr.layer.c.scope && !number_pending(c, s->lalr.q))
        qm.memo = atomic_load_explicit(&s->lalr.layer.c.scope->memo, memory_order_acquire);
    for (uint32_t i = 0; i < x->n && st == GM_OK; i++) {
        uint32_t id = x->ids[i], bit = 1u << (id % 32);
        bool must = x->must[id / 32] & bit;
        if ((!must && (mask[id / 32] & bit)) || (only && !(only[id / 32] & bit)))
            continue;
        size_t len;
        const uint8_t *bytes = gm_vocab_data_token(v, id, &len);
        if (!must && len && !(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING))) {
            int r = quiet(c, s, &qm, id, (x->tailq[id / 32] >> (id % 32)) & 1, bytes, len, err);
            if (r < 0)
                st = err->code;
            if (r == 2)
                mask[id / 32] |= bit;
            if (r != 0)
                continue; /* decided without a step (note [quiet exceptions]) */
        }
        mask[id / 32] &= ~bit;
        if (!len || (v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)))
            continue;
        gm_mstate next;
        st = gm_cdecl_advance(c, s, bytes, len, &next, err);
        if (st == GM_OK) {
            mask[id / 32] |= 1u << (id % 32);
            c->ops->release(c, &next);
        } else if (st == GM_ERR_REJECTED) {
            st = GM_OK;
        }
    }
    gm_mem_free(cmem(c), x->seen);
    gm_mem_free(cmem(c), x);
    return st;
}
