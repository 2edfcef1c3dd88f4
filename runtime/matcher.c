/*
 * The matcher: (lexer state, persistent LR stack) plus a history for
 * rollback. Accepting a token runs the lexing transducer over its bytes and
 * feeds the emitted terminals to the stack; the token is allowed exactly
 * when that succeeds and the pending lexeme can still become a terminal the
 * stack accepts — the same condition the mask encodes (spanner.h, note
 * [token classes]), checked directly.
 */
#include <string.h>

#include "runtime/mask.h"
#include "runtime/objects.h"
#include "base/error.h"
#include "base/vec.h"

typedef struct history {
    uint32_t q;
    uint8_t terminated;
    gm_lr_node *stack;        /* one reference */
    gm_layer_state layer;     /* one reference to its indents */
} history;

struct gm_matcher {
    gm_compiled *compiled;    /* retained */
    uint32_t q;               /* lexer state of the pending lexeme (spanner->start: nothing output) */
    gm_lr_node *stack;        /* one reference */
    gm_layer_state layer;     /* the post-lexing layers' state (one reference to indents) */
    bool terminated;          /* EOS accepted */
    bool failed;              /* an internal failure; cleared by reset */
    gm_status failure;
    uint32_t max_rollback;
    GM_VEC(history) hist;
};

static gm_mem *mem_of(const gm_matcher *m) { return &m->compiled->mem; }

static void release_history(gm_matcher *m, size_t from)
{
    for (size_t i = from; i < m->hist.n; i++) {
        gm_lr_node_release(mem_of(m), m->hist.v[i].stack);
        gm_indent_release(mem_of(m), m->hist.v[i].layer.indents);
    }
    m->hist.n = from;
}

static gm_mask_state mask_state(const gm_matcher *m)
{
    gm_mask_state s = {m->q, m->stack, &m->layer};
    return s;
}

gm_status gm_matcher_create(gm_compiled *c, const gm_matcher_options *opts, gm_matcher **out,
                            gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_create: out is NULL");
    *out = NULL;
    if (!c)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_create: compiled grammar is NULL");
    gm_matcher *m = gm_mem_calloc(&c->mem, 1, sizeof *m);
    if (!m)
        return gm_mem_fail(&c->mem, err, "a matcher");
    m->compiled = gm_compiled_retain(c);
    m->q = c->spanner->start;
    m->max_rollback = opts ? opts->max_rollback : 0;
    m->stack = gm_lr_stack_new(&c->mem);
    if (!m->stack) {
        gm_matcher_destroy(m);
        return gm_mem_fail(&c->mem, err, "a matcher");
    }
    *out = m;
    return GM_OK;
}

void gm_matcher_destroy(gm_matcher *m)
{
    if (!m)
        return;
    gm_compiled *c = m->compiled;
    release_history(m, 0);
    gm_vec_free(&c->mem, &m->hist);
    gm_lr_node_release(&c->mem, m->stack);
    gm_indent_release(&c->mem, m->layer.indents);
    gm_mem_free(&c->mem, m);
    gm_compiled_destroy(c);
}

void gm_matcher_reset(gm_matcher *m)
{
    if (!m)
        return;
    release_history(m, 0);
    gm_lr_node *bottom = m->stack;
    while (bottom->parent)
        bottom = bottom->parent;
    gm_lr_node_retain(bottom);
    gm_lr_node_release(mem_of(m), m->stack);
    m->stack = bottom;
    gm_indent_release(mem_of(m), m->layer.indents);
    m->layer.indents = NULL;
    m->layer.parens = 0;
    m->q = m->compiled->spanner->start;
    m->terminated = false;
    m->failed = false;
}

static gm_status check_usable(const gm_matcher *m, const char *fn, gm_error *err)
{
    if (!m)
        return gm_error_set(err, GM_ERR_ARGUMENT, "%s: matcher is NULL", fn);
    if (m->failed)
        return gm_error_set(err, GM_ERR_STATE,
                            "%s: the matcher failed earlier (%s); reset it", fn,
                            gm_status_name(m->failure));
    return GM_OK;
}

static gm_status fail(gm_matcher *m, gm_error *err)
{
    m->failed = true;
    m->failure = err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
    return m->failure;
}

/*
 * Runs bytes through the transducer from (q, stack, layer). On success
 * *q_out, *stack_out and *layer_out (new references) hold the state after
 * them; GM_ERR_REJECTED when they are not allowed; GM_ERR_NOMEM when a node
 * could not be allocated.
 */
static gm_status advance(const gm_compiled *c, uint32_t q, gm_lr_node *stack,
                         const gm_layer_state *layer, const uint8_t *bytes, size_t len,
                         uint32_t *q_out, gm_lr_node **stack_out, gm_layer_state *layer_out)
{
    gm_mem *mem = (gm_mem *)&c->mem;
    gm_layer_state ls = *layer;
    gm_indent_retain(ls.indents);
    gm_lr_node_retain(stack);
    gm_status st = GM_OK;
    for (size_t i = 0; i < len && st == GM_OK; i++) {
        uint32_t next, emitted[GM_SPANNER_MAX_EMIT], nemitted;
        if (!gm_spanner_step(c->spanner, q, bytes[i], &next, emitted, &nemitted))
            st = GM_ERR_REJECTED;
        for (uint32_t k = 0; st == GM_OK && k < nemitted; k++)
            st = gm_layer_feed(c->spanner, mem, &stack, &ls, emitted[k], 0);
        q = next;
    }
    if (st == GM_OK) {
        gm_mask_state ms = {q, stack, &ls};
        if (!gm_mask_pending_viable(c->spanner, &ms))
            st = GM_ERR_REJECTED;
    }
    if (st != GM_OK) {
        gm_lr_node_release(mem, stack);
        gm_indent_release(mem, ls.indents);
        return st;
    }
    *q_out = q;
    *stack_out = stack;
    *layer_out = ls;
    return GM_OK;
}

static bool is_eos(const gm_vocab_data *v, uint32_t token)
{
    return token < v->size && (v->flags[token] & GM_TOK_EOS);
}

static gm_status push_history(gm_matcher *m, gm_error *err)
{
    if (m->max_rollback && m->hist.n == m->max_rollback) {
        gm_lr_node_release(mem_of(m), m->hist.v[0].stack);
        gm_indent_release(mem_of(m), m->hist.v[0].layer.indents);
        memmove(m->hist.v, m->hist.v + 1, (m->hist.n - 1) * sizeof *m->hist.v);
        m->hist.n--;
    }
    history h = {m->q, m->terminated, m->stack, m->layer};
    if (gm_vec_push(mem_of(m), &m->hist, h))
        return gm_mem_fail(mem_of(m), err, "the rollback history");
    gm_lr_node_retain(m->stack);
    gm_indent_retain(m->layer.indents);
    return GM_OK;
}

/* Moves to (q, stack, layer) — new references — recording the old state. */
static gm_status commit(gm_matcher *m, uint32_t q, gm_lr_node *stack, gm_layer_state layer,
                        bool terminated, gm_error *err)
{
    gm_status st = push_history(m, err);
    if (st != GM_OK) {
        gm_lr_node_release(mem_of(m), stack);
        gm_indent_release(mem_of(m), layer.indents);
        return fail(m, err);
    }
    gm_lr_node_release(mem_of(m), m->stack);
    gm_indent_release(mem_of(m), m->layer.indents);
    m->stack = stack;
    m->layer = layer;
    m->q = q;
    m->terminated = terminated;
    return GM_OK;
}

/* A matcher state being advanced token by token (references owned). */
typedef struct step_state {
    uint32_t q;
    gm_lr_node *stack;
    gm_layer_state layer;
    bool terminated;
} step_state;

static gm_status try_token(const gm_compiled *c, const step_state *from, uint32_t token,
                           step_state *to)
{
    const gm_vocab_data *v = c->vocab->data;
    if (from->terminated)
        return GM_ERR_STATE;
    if (is_eos(v, token)) {
        gm_mask_state ms = {from->q, from->stack, &from->layer};
        if (!gm_mask_can_end(c->spanner, &ms))
            return GM_ERR_REJECTED;
        *to = *from;
        gm_lr_node_retain(to->stack);
        gm_indent_retain(to->layer.indents);
        to->terminated = true;
        return GM_OK;
    }
    if (v->flags[token] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
        return GM_ERR_REJECTED;
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(v, token, &len);
    if (len == 0)
        return GM_ERR_REJECTED;
    to->terminated = false;
    return advance(c, from->q, from->stack, &from->layer, bytes, len, &to->q, &to->stack,
                   &to->layer);
}

static void step_release(const gm_compiled *c, step_state *s)
{
    gm_lr_node_release((gm_mem *)&c->mem, s->stack);
    gm_indent_release((gm_mem *)&c->mem, s->layer.indents);
    s->stack = NULL;
    s->layer.indents = NULL;
}

static gm_status explain(gm_status st, gm_error *err, const char *what, uint32_t token)
{
    switch (st) {
    case GM_ERR_REJECTED:
        return gm_error_set(err, st, "token %u is not allowed here by the grammar", token);
    case GM_ERR_STATE:
        return gm_error_set(err, st, "%s: the sequence already ended with EOS", what);
    default:
        return gm_error_set(err, st, "%s: out of memory for the parser stack", what);
    }
}

gm_status gm_matcher_accept_token(gm_matcher *m, uint32_t token, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_accept_token", err);
    if (st != GM_OK)
        return st;
    const gm_vocab_data *v = m->compiled->vocab->data;
    if (token >= v->size)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_accept_token: token %u is out of range (vocabulary size %u)",
                            token, v->size);
    step_state from = {m->q, m->stack, m->layer, m->terminated}, to;
    st = try_token(m->compiled, &from, token, &to);
    if (st != GM_OK) {
        explain(st, err, "gm_matcher_accept_token", token);
        return st == GM_ERR_NOMEM ? fail(m, err) : st;
    }
    return commit(m, to.q, to.stack, to.layer, to.terminated, err);
}

gm_status gm_matcher_accept_bytes(gm_matcher *m, const uint8_t *bytes, size_t len, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_accept_bytes", err);
    if (st != GM_OK)
        return st;
    if (!bytes && len)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_accept_bytes: bytes is NULL");
    if (m->terminated)
        return gm_error_set(err, GM_ERR_STATE,
                            "gm_matcher_accept_bytes: the sequence already ended with EOS");
    step_state to;
    st = advance(m->compiled, m->q, m->stack, &m->layer, bytes, len, &to.q, &to.stack, &to.layer);
    if (st == GM_ERR_REJECTED)
        return gm_error_set(err, st, "these %zu bytes are not allowed here by the grammar", len);
    if (st != GM_OK) {
        gm_error_set(err, st, "gm_matcher_accept_bytes: out of memory for the parser stack");
        return fail(m, err);
    }
    return commit(m, to.q, to.stack, to.layer, false, err);
}

gm_status gm_matcher_validate_tokens(gm_matcher *m, const uint32_t *tokens, size_t n,
                                     size_t *accepted, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_validate_tokens", err);
    if (st != GM_OK)
        return st;
    if (!accepted || (!tokens && n))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_validate_tokens: NULL argument");
    *accepted = 0;
    const gm_compiled *c = m->compiled;
    const gm_vocab_data *v = c->vocab->data;
    step_state cur = {m->q, m->stack, m->layer, m->terminated};
    gm_lr_node_retain(cur.stack);
    gm_indent_retain(cur.layer.indents);
    for (size_t i = 0; i < n; i++) {
        if (tokens[i] >= v->size) {
            step_release(c, &cur);
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "gm_matcher_validate_tokens: token %u (at %zu) is out of range",
                                tokens[i], i);
        }
        step_state next;
        st = try_token(c, &cur, tokens[i], &next);
        if (st == GM_ERR_REJECTED || st == GM_ERR_STATE)
            break;
        if (st != GM_OK) {
            step_release(c, &cur);
            gm_error_set(err, st, "gm_matcher_validate_tokens: out of memory");
            return st;
        }
        step_release(c, &cur);
        cur = next;
        ++*accepted;
    }
    step_release(c, &cur);
    return GM_OK;
}

gm_status gm_matcher_rollback(gm_matcher *m, size_t n, gm_error *err)
{
    if (!m)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_rollback: matcher is NULL");
    if (n > m->hist.n)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_rollback: cannot roll back %zu steps, only %zu are kept", n,
                            m->hist.n);
    if (n == 0)
        return GM_OK;
    history *h = &m->hist.v[m->hist.n - n];
    gm_lr_node_release(mem_of(m), m->stack);
    gm_indent_release(mem_of(m), m->layer.indents);
    m->stack = h->stack;
    m->layer = h->layer;
    gm_lr_node_retain(m->stack);
    gm_indent_retain(m->layer.indents);
    m->q = h->q;
    m->terminated = h->terminated;
    m->failed = false;
    release_history(m, m->hist.n - n);
    return GM_OK;
}

gm_status gm_matcher_clone(const gm_matcher *m, gm_matcher **out, gm_error *err)
{
    if (!m || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_clone: NULL argument");
    *out = NULL;
    gm_matcher *c = gm_mem_calloc(mem_of(m), 1, sizeof *c);
    if (!c)
        return gm_mem_fail(mem_of(m), err, "a matcher");
    c->compiled = gm_compiled_retain(m->compiled);
    c->q = m->q;
    c->stack = m->stack;
    gm_lr_node_retain(c->stack);
    c->layer = m->layer;
    gm_indent_retain(c->layer.indents);
    c->terminated = m->terminated;
    c->failed = m->failed;
    c->failure = m->failure;
    c->max_rollback = m->max_rollback;
    if (gm_vec_reserve(mem_of(m), &c->hist, m->hist.n)) {
        gm_matcher_destroy(c);
        return gm_mem_fail(mem_of(m), err, "a matcher");
    }
    for (size_t i = 0; i < m->hist.n; i++) {
        c->hist.v[i] = m->hist.v[i];
        gm_lr_node_retain(c->hist.v[i].stack);
        gm_indent_retain(c->hist.v[i].layer.indents);
    }
    c->hist.n = m->hist.n;
    *out = c;
    return GM_OK;
}

bool gm_matcher_is_accepting(const gm_matcher *m)
{
    if (!m || m->failed || m->terminated)
        return false;
    gm_mask_state ms = mask_state(m);
    return gm_mask_can_end(m->compiled->spanner, &ms);
}

bool gm_matcher_is_terminated(const gm_matcher *m) { return m && m->terminated; }

gm_status gm_matcher_fill_mask(gm_matcher *m, uint32_t *mask, size_t words, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_fill_mask", err);
    if (st != GM_OK)
        return st;
    const gm_compiled *c = m->compiled;
    size_t need = GM_MASK_WORDS(c->spanner->nbits);
    if (!mask)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_fill_mask: mask is NULL");
    if (words != need)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_mask: mask has %zu words, the vocabulary needs %zu",
                            words, need);
    if (m->terminated) {
        memset(mask, 0, words * sizeof *mask);
        return gm_error_set(err, GM_ERR_STATE,
                            "gm_matcher_fill_mask: the sequence already ended with EOS");
    }
    gm_error local;
    gm_mask_state ms = mask_state(m);
    st = gm_mask_fill(c->spanner, &ms, mask, err ? err : &local);
    if (st != GM_OK)
        return fail(m, err ? err : &local);
    if (gm_mask_can_end(c->spanner, &ms)) {
        const gm_vocab_data *v = c->vocab->data;
        for (uint32_t i = 0; i < v->neos; i++)
            mask[v->eos[i] >> 5] |= (uint32_t)1 << (v->eos[i] & 31);
    }
    return GM_OK;
}

/*
 * note [forced bytes]
 * A byte is possible when running it through the transducer from the
 * current state succeeds and leaves a viable pending lexeme (advance()).
 * While exactly one byte is possible and the output cannot end here, every
 * continuation starts with it: append it and move on.
 */
gm_status gm_matcher_forced_bytes(gm_matcher *m, uint8_t *buf, size_t cap, size_t *len,
                                  gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_forced_bytes", err);
    if (st != GM_OK)
        return st;
    if (!len || (!buf && cap))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_forced_bytes: NULL argument");
    *len = 0;
    if (m->terminated)
        return GM_OK;
    const gm_compiled *c = m->compiled;
    step_state cur = {m->q, m->stack, m->layer, false};
    gm_lr_node_retain(cur.stack);
    gm_indent_retain(cur.layer.indents);
    for (;;) {
        gm_mask_state ms = {cur.q, cur.stack, &cur.layer};
        if (*len >= cap || gm_mask_can_end(c->spanner, &ms))
            break;
        int found = 0;
        step_state only = {0};
        for (unsigned b = 0; b < 256 && found < 2; b++) {
            uint8_t byte = (uint8_t)b;
            step_state next;
            st = advance(c, cur.q, cur.stack, &cur.layer, &byte, 1, &next.q, &next.stack,
                         &next.layer);
            if (st == GM_ERR_REJECTED)
                continue;
            if (st != GM_OK) {
                step_release(c, &only);
                step_release(c, &cur);
                return gm_error_set(err, st, "gm_matcher_forced_bytes: out of memory");
            }
            if (++found == 1) {
                only = next;
                buf[*len] = byte;
            } else {
                step_release(c, &next);
            }
        }
        if (found != 1) {
            step_release(c, &only);
            break;
        }
        ++*len;
        step_release(c, &cur);
        cur = only;
    }
    step_release(c, &cur);
    return GM_OK;
}
