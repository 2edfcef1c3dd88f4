/*
 * The matcher: the state of one sequence, for either engine (note [engine
 * ops] in runtime/engine.h): the engine's current state, the flags every
 * engine shares (EOS accepted, failed), and a history of earlier states for
 * rollback. States are persistent, so keeping one in the history, cloning a
 * matcher or rolling back only takes references.
 */
#include <string.h>

#include "runtime/diagnose.h"
#include "runtime/engine.h"
#include "runtime/matcher_walk.h"
#include "runtime/objects.h"
#include "earley/capture.h"
#include "base/error.h"
#include "base/vec.h"

typedef struct history {
    gm_mstate s;              /* references owned */
    uint8_t terminated;
} history;

struct gm_matcher {
    gm_compiled *compiled;    /* retained */
    const gm_engine_ops *ops; /* compiled->ops */
    gm_mstate s;              /* current state (references owned) */
    gm_mscratch w;            /* the engine's working memory */
    bool terminated;          /* EOS accepted */
    bool failed;              /* an internal failure; cleared by reset */
    gm_status failure;
    uint32_t max_rollback;
    GM_VEC(history) hist;
    bool eos_after_end;       /* gm_matcher_options.eos_after_end */
    gm_ecapture *cap;         /* captured rules' completions, or NULL when the grammar has
                                 none (note [captures] in earley/capture.c) */
    GM_VEC(gm_capture) caps;  /* gm_matcher_captures' answer */
};

static gm_mem *mem_of(const gm_matcher *m) { return &m->compiled->mem; }

static void release_history(gm_matcher *m, size_t from)
{
    for (size_t i = from; i < m->hist.n; i++)
        m->ops->release(m->compiled, &m->hist.v[i].s);
    m->hist.n = from;
}

/* A matcher of c with no state yet (s is set by the caller). */
static gm_matcher *matcher_new(gm_compiled *c, uint32_t max_rollback)
{
    gm_matcher *m = gm_mem_calloc(&c->mem, 1, sizeof *m);
    if (!m)
        return NULL;
    m->compiled = gm_compiled_retain(c);
    m->ops = c->ops;
    m->max_rollback = max_rollback;
    return m;
}

gm_status gm_matcher_create(gm_compiled *c, const gm_matcher_options *opts, gm_matcher **out,
                            gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_create: out is NULL");
    *out = NULL;
    if (!c)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_create: compiled grammar is NULL");
    /* Without a stop token no mask can ever say "the output may end here": every text would
       run until a dead end or the length cap. Refused, unless asked for. */
    const uint32_t *eos;
    if (gm_vocab_eos_ids(c->vocab, &eos) == 0 && !(opts && opts->terminate_without_stop_token))
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "the vocabulary has no stop token (EOS), so no output could end: "
                            "give its id (--eos ID|TEXT, gm_vocab_options.extra_eos_ids, "
                            "eos_token in tokenizer_config.json or eos_token_id in "
                            "generation_config.json beside tokenizer.json), or set "
                            "gm_matcher_options.terminate_without_stop_token");
    gm_matcher *m = matcher_new(c, opts ? opts->max_rollback : 0);
    if (!m)
        return gm_mem_fail(&c->mem, err, "a matcher");
    m->eos_after_end = opts && opts->eos_after_end;
    gm_status st = m->ops->new_scratch(c, &m->w, err);
    if (st == GM_OK) {
        st = m->ops->start(c, &m->s, err);
        if (st != GM_OK)
            m->ops->free_scratch(c, &m->w);
    }
    if (st != GM_OK) {
        gm_compiled_destroy(c);
        gm_mem_free(&c->mem, m);
        return st;
    }
    if (c->eengine && gm_eengine_has_captures(c->eengine) &&
        (st = gm_ecapture_create(c->eengine, &m->cap, err)) != GM_OK) {
        gm_matcher_destroy(m);
        return st;
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
    gm_ecapture_destroy(m->cap);
    gm_vec_free(&c->mem, &m->caps);
    m->ops->release(c, &m->s);
    m->ops->free_scratch(c, &m->w);
    gm_mem_free(&c->mem, m);
    gm_compiled_destroy(c);
}

void gm_matcher_reset(gm_matcher *m)
{
    if (!m)
        return;
    release_history(m, 0);
    gm_mstate fresh;
    if (m->ops->start(m->compiled, &fresh, NULL) != GM_OK) {
        /* Keep the old state; the matcher stays unusable until a reset succeeds. */
        m->failed = true;
        m->failure = GM_ERR_NOMEM;
        return;
    }
    m->ops->release(m->compiled, &m->s);
    m->s = fresh;
    m->terminated = false;
    m->failed = false;
    if (m->cap)
        gm_ecapture_reset(m->cap);
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

static bool is_eos(const gm_vocab_data *v, uint32_t token)
{
    return token < v->size && (v->flags[token] & GM_TOK_EOS);
}

static gm_status push_history(gm_matcher *m, gm_error *err)
{
    if (m->max_rollback && m->hist.n == m->max_rollback) {
        m->ops->release(m->compiled, &m->hist.v[0].s);
        memmove(m->hist.v, m->hist.v + 1, (m->hist.n - 1) * sizeof *m->hist.v);
        m->hist.n--;
    }
    history h = {m->s, m->terminated};
    if (gm_vec_push(mem_of(m), &m->hist, h))
        return gm_mem_fail(mem_of(m), err, "the rollback history");
    m->ops->retain(&m->s);
    return GM_OK;
}

/* Moves to state `to` (references taken over), recording the old state. */
static gm_status commit(gm_matcher *m, gm_mstate *to, bool terminated, gm_error *err)
{
    gm_status st = push_history(m, err);
    if (st != GM_OK) {
        m->ops->release(m->compiled, to);
        return fail(m, err);
    }
    m->ops->release(m->compiled, &m->s);
    m->s = *to;
    m->terminated = terminated;
    return GM_OK;
}

/*
 * One token from (from, from_terminated): *to is a new state and
 * *terminated whether it ended the sequence. GM_ERR_STATE after EOS,
 * GM_ERR_REJECTED when the token is not allowed.
 */
static gm_status try_token(gm_matcher *m, const gm_mstate *from, bool from_terminated,
                           uint32_t token, gm_mstate *to, bool *terminated, gm_error *err)
{
    const gm_compiled *c = m->compiled;
    if (from_terminated) {
        /* eos_after_end: the EOS-only mask of an ended sequence holds, EOS by EOS */
        if (!m->eos_after_end)
            return GM_ERR_STATE;
        if (!is_eos(c->vocab->data, token))
            return GM_ERR_REJECTED;
        *to = *from;
        m->ops->retain(to);
        *terminated = true;
        return GM_OK;
    }
    if (is_eos(c->vocab->data, token)) {
        /* note [stop tokens] in vocab/vocab_data.h: the output ends here, or the grammar
           names the token and ends right after it */
        *terminated = true;
        if (m->ops->can_end(c, from)) {
            *to = *from;
            m->ops->retain(to);
            return GM_OK;
        }
        gm_status st = m->ops->step_token(c, &m->w, from, token, to, err);
        if (st == GM_OK && !m->ops->can_end(c, to)) {
            m->ops->release(c, to);
            st = GM_ERR_REJECTED;
        }
        return st;
    }
    *terminated = false;
    return m->ops->step_token(c, &m->w, from, token, to, err);
}

static gm_status explain(gm_status st, gm_error *err, const char *what, uint32_t token)
{
    switch (st) {
    case GM_ERR_REJECTED:
        return gm_error_set(err, st, "token %u is not allowed here by the grammar", token);
    case GM_ERR_STATE:
        return gm_error_set(err, st, "%s: the sequence already ended with EOS", what);
    default:
        gm_error_prefix(err, "%s", what);
        return st;
    }
}

static gm_status check_token(const gm_matcher *m, const char *fn, uint32_t token, gm_error *err)
{
    uint32_t size = m->compiled->vocab->data->size;
    if (token >= size)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "%s: token %u is out of range (vocabulary size %u)", fn, token, size);
    return GM_OK;
}

gm_status gm_matcher_accept_token(gm_matcher *m, uint32_t token, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_accept_token", err);
    if (st == GM_OK)
        st = check_token(m, "gm_matcher_accept_token", token, err);
    if (st != GM_OK)
        return st;
    gm_mstate to;
    bool terminated;
    st = try_token(m, &m->s, m->terminated, token, &to, &terminated, err);
    if (st != GM_OK) {
        explain(st, err, "gm_matcher_accept_token", token);
        return st == GM_ERR_REJECTED || st == GM_ERR_STATE ? st : fail(m, err);
    }
    if ((st = commit(m, &to, terminated, err)) != GM_OK || !m->cap)
        return st;
    size_t len = 0;
    const uint8_t *text = NULL;
    if (!is_eos(m->compiled->vocab->data, token))
        text = gm_vocab_data_token(m->compiled->vocab->data, token, &len);
    if (gm_ecapture_step(m->cap, token, text, len, err) != GM_OK)
        return fail(m, err);
    return GM_OK;
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
    gm_mstate to;
    st = m->ops->step_bytes(m->compiled, &m->w, &m->s, bytes, len, &to, err);
    if (st == GM_ERR_REJECTED)
        return gm_error_set(err, st, "these %zu bytes are not allowed here by the grammar", len);
    if (st != GM_OK) {
        gm_error_prefix(err, "gm_matcher_accept_bytes");
        return fail(m, err);
    }
    if ((st = commit(m, &to, false, err)) != GM_OK || !m->cap)
        return st;
    if (gm_ecapture_step(m->cap, UINT32_MAX, bytes, len, err) != GM_OK)
        return fail(m, err);
    return GM_OK;
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
    uint32_t size = c->vocab->data->size;
    gm_mstate cur = m->s;
    bool terminated = m->terminated;
    m->ops->retain(&cur);
    for (size_t i = 0; i < n; i++) {
        if (tokens[i] >= size) {
            m->ops->release(c, &cur);
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "gm_matcher_validate_tokens: token %u (at %zu) is out of range",
                                tokens[i], i);
        }
        gm_mstate next;
        bool next_terminated;
        st = try_token(m, &cur, terminated, tokens[i], &next, &next_terminated, err);
        if (st == GM_ERR_REJECTED || st == GM_ERR_STATE)
            break;
        if (st != GM_OK) {
            m->ops->release(c, &cur);
            gm_error_prefix(err, "gm_matcher_validate_tokens");
            return st;
        }
        m->ops->release(c, &cur);
        cur = next;
        terminated = next_terminated;
        ++*accepted;
    }
    m->ops->release(c, &cur);
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
    m->ops->release(m->compiled, &m->s);
    m->s = h->s;
    m->ops->retain(&m->s);
    m->terminated = h->terminated;
    m->failed = false;
    release_history(m, m->hist.n - n);
    if (m->cap)
        gm_ecapture_rollback(m->cap, n);
    return GM_OK;
}

gm_status gm_matcher_clone(const gm_matcher *m, gm_matcher **out, gm_error *err)
{
    if (!m || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_clone: NULL argument");
    *out = NULL;
    gm_matcher *c = matcher_new(m->compiled, m->max_rollback);
    if (!c)
        return gm_mem_fail(mem_of(m), err, "a matcher");
    gm_status st = c->ops->new_scratch(c->compiled, &c->w, err);
    if (st != GM_OK) {
        gm_compiled_destroy(c->compiled);
        gm_mem_free(mem_of(m), c);
        return st;
    }
    c->s = m->s;
    c->ops->retain(&c->s);
    c->terminated = m->terminated;
    c->eos_after_end = m->eos_after_end;
    c->failed = m->failed;
    c->failure = m->failure;
    if (gm_vec_reserve(mem_of(m), &c->hist, m->hist.n)) {
        gm_matcher_destroy(c);
        return gm_mem_fail(mem_of(m), err, "a matcher");
    }
    for (size_t i = 0; i < m->hist.n; i++) {
        c->hist.v[i] = m->hist.v[i];
        c->ops->retain(&c->hist.v[i].s);
    }
    c->hist.n = m->hist.n;
    if (m->cap) {
        st = gm_ecapture_clone(m->cap, &c->cap, err);
        if (st != GM_OK) {
            gm_matcher_destroy(c);
            return st;
        }
    }
    *out = c;
    return GM_OK;
}

bool gm_matcher_is_accepting(const gm_matcher *m)
{
    if (!m || m->failed || m->terminated)
        return false;
    return m->ops->can_end(m->compiled, &m->s);
}

bool gm_matcher_is_terminated(const gm_matcher *m) { return m && m->terminated; }

/*
 * The stop ids' bits (note [stop tokens] in vocab/vocab_data.h): all set
 * where the output may end; elsewhere a stop token the grammar takes here
 * (the engine set its bit) stays allowed only if the grammar can end right
 * after it. Stepping is rare: only grammars that name a stop token do it.
 */
static gm_status stop_bits(gm_matcher *m, const gm_mstate *s, uint32_t *mask, gm_error *err)
{
    const gm_compiled *c = m->compiled;
    const gm_vocab_data *v = c->vocab->data;
    bool end = m->ops->can_end(c, s);
    for (uint32_t i = 0; i < v->neos; i++) {
        uint32_t id = v->eos[i], bit = (uint32_t)1 << (id & 31);
        if (end) {
            mask[id >> 5] |= bit;
            continue;
        }
        if (!(mask[id >> 5] & bit))
            continue;
        gm_mstate to;
        gm_status st = m->ops->step_token(c, &m->w, s, id, &to, err);
        if (st == GM_OK) {
            if (!m->ops->can_end(c, &to))
                mask[id >> 5] &= ~bit;
            m->ops->release(c, &to);
        } else if (st == GM_ERR_REJECTED) {
            mask[id >> 5] &= ~bit;
        } else {
            return fail(m, err);
        }
    }
    return GM_OK;
}

gm_status gm_matcher_fill_mask(gm_matcher *m, uint32_t *mask, size_t words, gm_error *err)
{
    gm_status st = check_usable(m, "gm_matcher_fill_mask", err);
    if (st != GM_OK)
        return st;
    const gm_compiled *c = m->compiled;
    size_t need = gm_compiled_mask_words(c);
    if (!mask)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_fill_mask: mask is NULL");
    if (words != need)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_mask: mask has %zu words, the vocabulary needs %zu",
                            words, need);
    if (m->terminated && !m->eos_after_end) {
        memset(mask, 0, words * sizeof *mask);
        return gm_error_set(err, GM_ERR_STATE,
                            "gm_matcher_fill_mask: the sequence already ended with EOS");
    }
    gm_mpos here = {m->s, m->terminated};
    return gm_matcher_pos_fill_(m, &here, mask, err);
}

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
    st = m->ops->forced_bytes(m->compiled, &m->w, &m->s, buf, cap, len, err);
    if (st != GM_OK)
        gm_error_prefix(err, "gm_matcher_forced_bytes");
    return st;
}

/* XGrammar's rule temperatures here (note [rule temperatures] in earley/temperature.c). */
gm_status gm_matcher_temperature(const gm_matcher *m, float *hi, float *lo, gm_error *err)
{
    if (!hi || !lo)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_temperature: NULL argument");
    *hi = *lo = -1.0f;
    gm_status st = check_usable(m, "gm_matcher_temperature", err);
    if (st != GM_OK || m->terminated || !m->ops->temperature)
        return st;
    st = m->ops->temperature(m->compiled, &m->s, hi, lo, err);
    if (st != GM_OK)
        gm_error_prefix(err, "gm_matcher_temperature");
    return st;
}

gm_status gm_matcher_expected_(const gm_matcher *m, gm_strbuf *out)
{
    if (!m->ops->expected)
        return GM_ERR_UNSUPPORTED;
    m->ops->expected(m->compiled, &m->s, out);
    return GM_OK;
}

/* ---- positions outside the matcher, for runtime/draft_tree.c (matcher_walk.h) ---- */

gm_status gm_matcher_walk_begin_(gm_matcher *m, const char *fn, gm_mpos *root, gm_error *err)
{
    gm_status st = check_usable(m, fn, err);
    if (st != GM_OK)
        return st;
    root->s = m->s;
    root->terminated = m->terminated;
    m->ops->retain(&root->s);
    return GM_OK;
}

void gm_matcher_pos_release_(gm_matcher *m, gm_mpos *p) { m->ops->release(m->compiled, &p->s); }

gm_status gm_matcher_pos_step_(gm_matcher *m, const gm_mpos *from, uint32_t token, gm_mpos *to,
                               gm_error *err)
{
    bool terminated;
    gm_status st = try_token(m, &from->s, from->terminated, token, &to->s, &terminated, err);
    if (st == GM_OK)
        to->terminated = terminated;
    else if (st != GM_ERR_REJECTED && st != GM_ERR_STATE)
        return fail(m, err);
    return st;
}

bool gm_matcher_pos_can_end_(const gm_matcher *m, const gm_mpos *p)
{
    return !p->terminated && m->ops->can_end(m->compiled, &p->s);
}

gm_status gm_matcher_pos_fill_(gm_matcher *m, const gm_mpos *p, uint32_t *mask, gm_error *err)
{
    const gm_compiled *c = m->compiled;
    size_t words = gm_compiled_mask_words(c);
    if (p->terminated) {
        memset(mask, 0, words * sizeof *mask);
        if (m->eos_after_end) {
            const gm_vocab_data *v = c->vocab->data;
            for (uint32_t i = 0; i < v->neos; i++)
                mask[v->eos[i] >> 5] |= (uint32_t)1 << (v->eos[i] & 31);
        }
        return GM_OK;
    }
    gm_error local;
    gm_status st = m->ops->fill_mask(c, &m->w, &p->s, mask, words, err ? err : &local);
    if (st != GM_OK)
        return fail(m, err ? err : &local);
    return stop_bits(m, &p->s, mask, err ? err : &local);
}

uint32_t gm_matcher_vocab_size_(const gm_matcher *m) { return m->compiled->vocab->data->size; }

gm_mem *gm_matcher_mem_(const gm_matcher *m) { return mem_of(m); }

gm_status gm_matcher_captures(gm_matcher *m, bool deduplicate, const gm_capture **out,
                              size_t *n, gm_error *err)
{
    if (!m || !out || !n)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_captures: NULL argument");
    *out = NULL;
    *n = 0;
    if (!m->cap)
        return GM_OK;
    const gm_ecap_event *ev;
    size_t nev, olen;
    gm_status st = gm_ecapture_events(m->cap, deduplicate, &ev, &nev, err);
    if (st != GM_OK)
        return st;
    const uint8_t *output = gm_ecapture_output(m->cap, &olen);
    if (gm_vec_reserve(mem_of(m), &m->caps, nev + 1))
        return gm_mem_fail(mem_of(m), err, "captures");
    for (size_t i = 0; i < nev; i++)
        m->caps.v[i] = (gm_capture){gm_ecapture_label(m->cap, ev[i].label), output + ev[i].start,
                                    ev[i].start, ev[i].end - ev[i].start};
    m->caps.n = nev;
    *out = m->caps.v;
    *n = nev;
    return GM_OK;
}
