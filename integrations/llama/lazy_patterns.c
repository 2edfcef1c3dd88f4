/*
 * Lazy grammars with llama.cpp's trigger patterns (lazy_patterns.h).
 *
 * note [lazy patterns]
 * What llama.cpp does (llama_grammar_accept_impl): while awaiting a trigger
 * it lets every token through; after each accepted token it appends the
 * token's piece to a buffer and tries the patterns in order, each on the
 * whole buffer (regex_match then regex_search for ^...$, regex_search
 * otherwise); the first that matches starts the grammar at its first
 * non-empty capture group, else at its match start, and the grammar is fed
 * the buffer from there. A trigger token starts the grammar with itself.
 * Matching happens at token ends only, so the same text may trigger or not,
 * and at different offsets, depending on where the tokens split it (a
 * ^...$ pattern must match the whole buffer right at a token's end).
 *
 * So the state here is llama.cpp's: the buffer, and per pattern a DFA state
 * (does the buffer hold a match: ecma_regex.h) and Pike VMs (where the match
 * is). A token is allowed while awaiting exactly when accepting it keeps the
 * output completable: it leaves no pattern matching (free text can always go
 * on or end), or the first matching pattern starts the grammar at an offset
 * from which the buffer is a prefix of the grammar's language (else
 * llama.cpp's grammar would fail right there: it throws). Per step only the
 * tokens after which some pattern matches need a look: they are listed per
 * DFA state once (a walk of the vocabulary), and for each the Pike VM gives
 * the start and a probe matcher checks the text from there. EOG may end the
 * free text; special tokens other than trigger tokens are never free text
 * (gramask-llama.h). After the trigger the grammar's own mask applies.
 */
#include "lazy_patterns.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecma_regex.h"
#include "gramask-llama.h"

#define MAX_DFA_STATES 20000u

enum { TOK_TEXT, TOK_EOG, TOK_SPECIAL, TOK_TRIGGER };

/* A pattern, compiled (shared by a sampler and its clones). */
typedef struct trig_pattern {
    char *text;
    er_prog *prog;
    er_dfa *dfa;
    bool full; /* ^...$: regex_match is tried first */
} trig_pattern;

/* What never changes after creation: shared by a sampler and its clones. */
typedef struct lazy_shared {
    atomic_int refs;
    const struct llama_vocab *vocab;
    gm_compiled *compiled;
    trig_pattern *pats;
    size_t n_pats;
    uint32_t n_vocab;
    size_t words;
    uint8_t *pieces;     /* all token pieces */
    size_t *off;         /* n_vocab + 1 */
    uint8_t *kind;
    uint32_t *base_mask; /* while awaiting: text, EOG, trigger tokens the grammar starts with */
    uint32_t *grammar_start_mask;
} lazy_shared;

/* A pattern's state at the end of the buffer, and its cache of token lists. */
typedef struct pattern_state {
    er_pike *search, *match;
    er_pike *s_scratch, *m_scratch;
    uint32_t state;       /* DFA state */
    uint32_t **hits;      /* per DFA state: tokens after which a match is found (lazy) */
    uint32_t *nhits;
    bool *hits_done;
} pattern_state;

typedef struct lazy_sampler {
    lazy_shared *sh;
    pattern_state *ps;   /* sh->n_pats */
    gm_matcher *matcher; /* the grammar, once triggered */
    gm_matcher *probe;   /* the grammar on the text a candidate token would start it with */
    size_t probe_start, probe_len;
    int probe_state;     /* 0 unset, 1 holds buf[probe_start..probe_len), -1 that was rejected */
    uint32_t *mask;
    uint32_t *seen, stamp;
    bool mask_valid, triggered, ended;
    uint8_t *buf;
    size_t len, cap;
    uint64_t masks_computed, rejected;
} lazy_sampler;

static const char NAME[] = "gramask";

static void set_error(gm_error *err, gm_status code, const char *message)
{
    if (!err)
        return;
    gm_error_clear(err);
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s", message);
}

/* ---- shared data -------------------------------------------------------- */

static void shared_release(lazy_shared *sh)
{
    if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
        return;
    for (size_t i = 0; i < sh->n_pats; i++) {
        er_dfa_free(sh->pats[i].dfa);
        er_prog_free(sh->pats[i].prog);
        free(sh->pats[i].text);
    }
    free(sh->pats);
    gm_compiled_destroy(sh->compiled);
    free(sh->pieces);
    free(sh->off);
    free(sh->kind);
    free(sh->base_mask);
    free(sh->grammar_start_mask);
    free(sh);
}

static gm_status pattern_init(trig_pattern *p, const char *text, gm_error *err)
{
    size_t n = strlen(text);
    p->text = malloc(n + 1);
    if (!p->text) {
        set_error(err, GM_ERR_NOMEM, "out of memory reading a trigger pattern");
        return GM_ERR_NOMEM;
    }
    memcpy(p->text, text, n + 1);
    p->full = n >= 1 && text[0] == '^' && text[n - 1] == '$';
    gm_status st = er_compile(text, &p->prog, err);
    if (st == GM_OK)
        st = er_dfa_build(p->prog, text, MAX_DFA_STATES, &p->dfa, err);
    return st;
}

/* The pieces as llama.cpp's grammar sees them, and their kinds (gm_llama_vocab_create's rule). */
static gm_status read_pieces(lazy_shared *sh, const llama_token *tokens, size_t n_tokens,
                             gm_error *err)
{
    const struct llama_vocab *vocab = sh->vocab;
    size_t cap = 8 * (size_t)sh->n_vocab + 64, used = 0;
    sh->pieces = malloc(cap);
    char small[256];
    for (uint32_t t = 0; sh->pieces && t < sh->n_vocab; t++) {
        int32_t len = llama_token_to_piece(vocab, (llama_token)t, small, (int32_t)sizeof small, 0,
                                           true);
        char *big = NULL;
        const char *src = small;
        if (len < 0) {
            big = malloc((size_t)-len);
            if (!big) {
                free(sh->pieces);
                sh->pieces = NULL;
                break;
            }
            len = llama_token_to_piece(vocab, (llama_token)t, big, -len, 0, true);
            src = big;
        }
        if (len < 0)
            len = 0;
        if (used + (size_t)len > cap) {
            size_t nc = 2 * (used + (size_t)len);
            uint8_t *np = realloc(sh->pieces, nc);
            if (!np) {
                free(big);
                free(sh->pieces);
                sh->pieces = NULL;
                break;
            }
            sh->pieces = np;
            cap = nc;
        }
        memcpy(sh->pieces + used, src, (size_t)len);
        used += (size_t)len;
        sh->off[t + 1] = used;
        enum llama_token_attr attr = llama_vocab_get_attr(vocab, (llama_token)t);
        if (llama_vocab_is_eog(vocab, (llama_token)t))
            sh->kind[t] = TOK_EOG;
        else if (len <= 0 || src[0] == 0 ||
                 (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                          LLAMA_TOKEN_ATTR_UNUSED)))
            sh->kind[t] = TOK_SPECIAL;
        else
            sh->kind[t] = TOK_TEXT;
        free(big);
    }
    if (!sh->pieces) {
        set_error(err, GM_ERR_NOMEM, "out of memory reading the llama_vocab");
        return GM_ERR_NOMEM;
    }
    for (size_t i = 0; i < n_tokens; i++)
        sh->kind[tokens[i]] = TOK_TRIGGER;
    for (uint32_t t = 0; t < sh->n_vocab; t++) {
        bool on = sh->kind[t] == TOK_TEXT || sh->kind[t] == TOK_EOG ||
                  (sh->kind[t] == TOK_TRIGGER &&
                   (sh->grammar_start_mask[t / 32] >> (t % 32) & 1u));
        if (on)
            sh->base_mask[t / 32] |= 1u << (t % 32);
    }
    return GM_OK;
}

static lazy_shared *shared_create(const struct llama_vocab *vocab, gm_compiled *compiled,
                                  const char *const *patterns, size_t n_patterns,
                                  const llama_token *tokens, size_t n_tokens, gm_error *err)
{
    lazy_shared *sh = calloc(1, sizeof *sh);
    if (!sh) {
        set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        return NULL;
    }
    atomic_init(&sh->refs, 1);
    sh->vocab = vocab;
    sh->compiled = gm_compiled_retain(compiled);
    sh->n_vocab = gm_compiled_vocab_size(compiled);
    sh->words = gm_compiled_mask_words(compiled);
    if (sh->n_vocab != (uint32_t)llama_vocab_n_tokens(vocab)) {
        set_error(err, GM_ERR_ARGUMENT, "the compiled grammar's vocabulary is not the llama_vocab's");
        shared_release(sh);
        return NULL;
    }
    sh->pats = calloc(n_patterns ? n_patterns : 1, sizeof *sh->pats);
    sh->off = calloc((size_t)sh->n_vocab + 1, sizeof *sh->off);
    sh->kind = calloc(sh->n_vocab, sizeof *sh->kind);
    sh->base_mask = calloc(sh->words, sizeof *sh->base_mask);
    sh->grammar_start_mask = calloc(sh->words, sizeof *sh->grammar_start_mask);
    gm_status st = GM_OK;
    if (!sh->pats || !sh->off || !sh->kind || !sh->base_mask || !sh->grammar_start_mask) {
        set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        st = GM_ERR_NOMEM;
    }
    for (size_t i = 0; st == GM_OK && i < n_patterns; i++) {
        if (!patterns[i]) {
            set_error(err, GM_ERR_ARGUMENT, "a NULL trigger pattern");
            st = GM_ERR_ARGUMENT;
            break;
        }
        sh->n_pats = i + 1;
        st = pattern_init(&sh->pats[i], patterns[i], err);
    }
    gm_matcher *m = NULL;
    if (st == GM_OK)
        st = gm_matcher_create(compiled, NULL, &m, err);
    if (st == GM_OK)
        st = gm_matcher_fill_mask(m, sh->grammar_start_mask, sh->words, err);
    gm_matcher_destroy(m);
    if (st == GM_OK)
        st = read_pieces(sh, tokens, n_tokens, err);
    if (st != GM_OK) {
        shared_release(sh);
        return NULL;
    }
    return sh;
}

/* ---- one sampler ---------------------------------------------------------- */

static void lazy_free(lazy_sampler *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->ps && i < s->sh->n_pats; i++) {
        pattern_state *p = &s->ps[i];
        if (p->hits)
            for (uint32_t q = 0; q < er_dfa_states(s->sh->pats[i].dfa); q++)
                free(p->hits[q]);
        free(p->hits);
        free(p->nhits);
        free(p->hits_done);
        er_pike_free(p->search);
        er_pike_free(p->match);
        er_pike_free(p->s_scratch);
        er_pike_free(p->m_scratch);
    }
    free(s->ps);
    gm_matcher_destroy(s->matcher);
    gm_matcher_destroy(s->probe);
    free(s->mask);
    free(s->seen);
    free(s->buf);
    shared_release(s->sh);
    free(s);
}

/* A sampler at the start over sh (its reference taken). */
static lazy_sampler *lazy_new(lazy_shared *sh, gm_error *err)
{
    lazy_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        shared_release(sh);
        set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        return NULL;
    }
    s->sh = sh;
    s->ps = calloc(sh->n_pats ? sh->n_pats : 1, sizeof *s->ps);
    s->mask = calloc(sh->words, sizeof *s->mask);
    s->seen = calloc(sh->n_vocab, sizeof *s->seen);
    bool ok = s->ps && s->mask && s->seen;
    for (size_t i = 0; ok && i < sh->n_pats; i++) {
        const trig_pattern *t = &sh->pats[i];
        pattern_state *p = &s->ps[i];
        uint32_t ns = er_dfa_states(t->dfa);
        p->search = er_pike_create(t->prog, false);
        p->s_scratch = er_pike_create(t->prog, false);
        if (t->full) {
            p->match = er_pike_create(t->prog, true);
            p->m_scratch = er_pike_create(t->prog, true);
        }
        p->hits = calloc(ns, sizeof *p->hits);
        p->nhits = calloc(ns, sizeof *p->nhits);
        p->hits_done = calloc(ns, sizeof *p->hits_done);
        p->state = er_dfa_start(t->dfa);
        ok = p->search && p->s_scratch && (!t->full || (p->match && p->m_scratch)) && p->hits &&
             p->nhits && p->hits_done;
    }
    gm_status st = ok ? GM_OK : GM_ERR_NOMEM;
    if (st == GM_OK)
        st = gm_matcher_create(sh->compiled, NULL, &s->matcher, err);
    if (st == GM_OK)
        st = gm_matcher_create(sh->compiled, NULL, &s->probe, err);
    if (st != GM_OK) {
        if (st == GM_ERR_NOMEM)
            set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        lazy_free(s);
        return NULL;
    }
    return s;
}

static const uint8_t *piece(const lazy_shared *sh, uint32_t t, size_t *len)
{
    *len = sh->off[t + 1] - sh->off[t];
    return sh->pieces + sh->off[t];
}

static uint32_t walk(const er_dfa *d, uint32_t q, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n && q != 0; i++)
        q = er_dfa_next(d, q, b[i]);
    return q;
}

/* The tokens after which pattern i matches from DFA state q (listed once per state). */
static bool pattern_hits(lazy_sampler *s, size_t i, uint32_t q)
{
    const lazy_shared *sh = s->sh;
    pattern_state *p = &s->ps[i];
    const er_dfa *d = sh->pats[i].dfa;
    if (p->hits_done[q])
        return true;
    uint32_t n = 0, cap = 0, *list = NULL;
    for (uint32_t t = 0; t < sh->n_vocab; t++) {
        if (sh->kind[t] != TOK_TEXT)
            continue;
        size_t len;
        const uint8_t *b = piece(sh, t, &len);
        if (!er_dfa_found(d, walk(d, q, b, len)))
            continue;
        if (n == cap) {
            uint32_t nc = cap ? 2 * cap : 64;
            uint32_t *nl = realloc(list, nc * sizeof *nl);
            if (!nl) {
                free(list);
                return false;
            }
            list = nl;
            cap = nc;
        }
        list[n++] = t;
    }
    p->hits[q] = list;
    p->nhits[q] = n;
    p->hits_done[q] = true;
    return true;
}

/* The first pattern that matches the buffer followed by b[0..n), or -1. */
static long first_match(const lazy_sampler *s, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < s->sh->n_pats; i++) {
        const er_dfa *d = s->sh->pats[i].dfa;
        if (er_dfa_found(d, walk(d, s->ps[i].state, b, n)))
            return (long)i;
    }
    return -1;
}

/* Where pattern i, matching the buffer followed by b[0..n), starts the grammar. */
static size_t start_of(lazy_sampler *s, size_t i, const uint8_t *b, size_t n)
{
    pattern_state *p = &s->ps[i];
    size_t start = 0;
    if (s->sh->pats[i].full) {
        er_pike_copy(p->m_scratch, p->match);
        er_pike_feed(p->m_scratch, b, n);
        if (er_pike_result(p->m_scratch, &start))
            return start;
    }
    er_pike_copy(p->s_scratch, p->search);
    er_pike_feed(p->s_scratch, b, n);
    if (!er_pike_result(p->s_scratch, &start)) /* the DFA said it matches: never */
        start = s->len;
    return start;
}

/*
 * Whether the grammar takes the buffer followed by b[0..n) from offset start
 * as a prefix (the probe keeps the buffer's part for the next token).
 */
static bool grammar_takes(lazy_sampler *s, size_t start, const uint8_t *b, size_t n)
{
    if (start >= s->len) { /* the grammar starts inside this token */
        size_t skip = start - s->len;
        gm_matcher_reset(s->probe);
        s->probe_state = 0;
        return skip >= n || gm_matcher_accept_bytes(s->probe, b + skip, n - skip, NULL) == GM_OK;
    }
    if (s->probe_state == 0 || s->probe_start != start || s->probe_len != s->len) {
        gm_matcher_reset(s->probe);
        s->probe_start = start;
        s->probe_len = s->len;
        s->probe_state =
            gm_matcher_accept_bytes(s->probe, s->buf + start, s->len - start, NULL) == GM_OK ? 1
                                                                                              : -1;
    }
    if (s->probe_state < 0)
        return false;
    if (n == 0)
        return true;
    if (gm_matcher_accept_bytes(s->probe, b, n, NULL) != GM_OK)
        return false;
    gm_matcher_rollback(s->probe, 1, NULL);
    return true;
}

/* Whether accepting text token t now keeps the output completable. */
static bool token_ok(lazy_sampler *s, uint32_t t)
{
    size_t n;
    const uint8_t *b = piece(s->sh, t, &n);
    long i = first_match(s, b, n);
    if (i < 0)
        return true;
    size_t start = start_of(s, (size_t)i, b, n);
    if (start == s->len) /* the whole token starts the grammar: its first mask says */
        return s->sh->grammar_start_mask[t / 32] >> (t % 32) & 1u;
    return grammar_takes(s, start, b, n);
}

static void fill_mask(lazy_sampler *s)
{
    const lazy_shared *sh = s->sh;
    if (s->ended) {
        memset(s->mask, 0, sh->words * sizeof *s->mask);
        return;
    }
    if (s->triggered) {
        if (gm_matcher_fill_mask(s->matcher, s->mask, sh->words, NULL) != GM_OK)
            memset(s->mask, 0, sh->words * sizeof *s->mask);
        return;
    }
    memcpy(s->mask, sh->base_mask, sh->words * sizeof *s->mask);
    s->stamp++;
    s->probe_state = 0;
    for (size_t i = 0; i < sh->n_pats; i++) {
        pattern_state *p = &s->ps[i];
        if (!pattern_hits(s, i, p->state)) { /* out of memory: look at every token */
            for (uint32_t t = 0; t < sh->n_vocab; t++)
                if (sh->kind[t] == TOK_TEXT && !token_ok(s, t))
                    s->mask[t / 32] &= ~(1u << (t % 32));
            continue;
        }
        for (uint32_t k = 0; k < p->nhits[p->state]; k++) {
            uint32_t t = p->hits[p->state][k];
            if (s->seen[t] == s->stamp)
                continue;
            s->seen[t] = s->stamp;
            if (!token_ok(s, t))
                s->mask[t / 32] &= ~(1u << (t % 32));
        }
    }
}

/* ---- the sampler interface ------------------------------------------------ */

static const char *lazy_name(const struct llama_sampler *smpl)
{
    (void)smpl;
    return NAME;
}

static void append(lazy_sampler *s, const uint8_t *b, size_t n)
{
    if (s->len + n > s->cap) {
        size_t nc = 2 * (s->len + n) + 64;
        uint8_t *nb = realloc(s->buf, nc);
        if (!nb) { /* cannot track the text any more: stop like a failed grammar */
            s->ended = true;
            return;
        }
        s->buf = nb;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, b, n);
    s->len += n;
}

static void lazy_accept(struct llama_sampler *smpl, llama_token token)
{
    lazy_sampler *s = smpl->ctx;
    const lazy_shared *sh = s->sh;
    s->mask_valid = false;
    if (token < 0 || (uint32_t)token >= sh->n_vocab || s->ended) {
        s->rejected++;
        return;
    }
    uint32_t t = (uint32_t)token;
    if (s->triggered) {
        if (gm_matcher_accept_token(s->matcher, t, NULL) != GM_OK)
            s->rejected++;
        return;
    }
    switch (sh->kind[t]) {
    case TOK_EOG:
        s->ended = true;
        return;
    case TOK_SPECIAL:
        s->rejected++;
        return;
    case TOK_TRIGGER:
        gm_matcher_reset(s->matcher);
        if (gm_matcher_accept_token(s->matcher, t, NULL) == GM_OK) {
            s->triggered = true;
            s->len = 0;
        } else {
            s->rejected++;
        }
        return;
    default:
        break;
    }
    size_t n;
    const uint8_t *b = piece(sh, t, &n);
    long i = first_match(s, b, n);
    if (i >= 0) {
        size_t start = start_of(s, (size_t)i, b, n);
        gm_matcher_reset(s->matcher);
        gm_status st = GM_OK;
        if (start < s->len)
            st = gm_matcher_accept_bytes(s->matcher, s->buf + start, s->len - start, NULL);
        size_t skip = start > s->len ? start - s->len : 0;
        if (st == GM_OK && n > skip)
            st = gm_matcher_accept_bytes(s->matcher, b + skip, n - skip, NULL);
        if (st != GM_OK) {
            gm_matcher_reset(s->matcher);
            s->rejected++;
            return;
        }
        s->triggered = true;
        s->len = 0;
        return;
    }
    for (size_t k = 0; k < sh->n_pats; k++) {
        pattern_state *p = &s->ps[k];
        p->state = walk(sh->pats[k].dfa, p->state, b, n);
        er_pike_feed(p->search, b, n);
        if (p->match)
            er_pike_feed(p->match, b, n);
    }
    append(s, b, n);
}

static void lazy_apply(struct llama_sampler *smpl, llama_token_data_array *cur_p)
{
    lazy_sampler *s = smpl->ctx;
    uint32_t nv = s->sh->n_vocab;
    if (!s->mask_valid) { /* note [one mask per step] in gramask-llama.c */
        fill_mask(s);
        s->mask_valid = true;
        s->masks_computed++;
    }
    for (size_t i = 0; i < cur_p->size; i++) {
        llama_token id = cur_p->data[i].id;
        if (id < 0 || (uint32_t)id >= nv ||
            !(s->mask[(uint32_t)id / 32] >> ((uint32_t)id % 32) & 1u))
            cur_p->data[i].logit = -INFINITY;
    }
}

static void lazy_reset(struct llama_sampler *smpl)
{
    lazy_sampler *s = smpl->ctx;
    gm_matcher_reset(s->matcher);
    s->triggered = s->ended = s->mask_valid = false;
    s->len = 0;
    s->probe_state = 0;
    for (size_t i = 0; i < s->sh->n_pats; i++) {
        pattern_state *p = &s->ps[i];
        p->state = er_dfa_start(s->sh->pats[i].dfa);
        er_pike_reset(p->search);
        if (p->match)
            er_pike_reset(p->match);
    }
}

static void lazy_free_iface(struct llama_sampler *smpl)
{
    lazy_free(smpl->ctx);
}

static struct llama_sampler *lazy_clone(const struct llama_sampler *smpl);

static struct llama_sampler_i lazy_iface = {
    .name = lazy_name,
    .accept = lazy_accept,
    .apply = lazy_apply,
    .reset = lazy_reset,
    .clone = lazy_clone,
    .free = lazy_free_iface,
};

struct llama_sampler *gm_llama_lazy_patterns_create(const struct llama_vocab *vocab,
                                                    gm_compiled *compiled,
                                                    const char *const *patterns, size_t n_patterns,
                                                    const llama_token *tokens, size_t n_tokens,
                                                    gm_error *err)
{
    lazy_shared *sh =
        shared_create(vocab, compiled, patterns, n_patterns, tokens, n_tokens, err);
    lazy_sampler *s = sh ? lazy_new(sh, err) : NULL;
    return s ? llama_sampler_init(&lazy_iface, s) : NULL;
}

static struct llama_sampler *lazy_clone(const struct llama_sampler *smpl)
{
    const lazy_sampler *s = smpl->ctx;
    atomic_fetch_add(&s->sh->refs, 1);
    lazy_sampler *c = lazy_new(s->sh, NULL);
    if (!c)
        return NULL;
    gm_matcher *m = NULL;
    if (gm_matcher_clone(s->matcher, &m, NULL) != GM_OK) {
        lazy_free(c);
        return NULL;
    }
    gm_matcher_destroy(c->matcher);
    c->matcher = m;
    c->triggered = s->triggered;
    c->ended = s->ended;
    c->rejected = s->rejected;
    if (s->len)
        append(c, s->buf, s->len);
    for (size_t i = 0; i < s->sh->n_pats; i++) {
        c->ps[i].state = s->ps[i].state;
        er_pike_copy(c->ps[i].search, s->ps[i].search);
        if (s->ps[i].match)
            er_pike_copy(c->ps[i].match, s->ps[i].match);
    }
    return llama_sampler_init(&lazy_iface, c);
}

/* ---- inspection ----------------------------------------------------------- */

bool gm_llama_lazy_patterns_is(const struct llama_sampler *smpl)
{
    return smpl && smpl->iface == &lazy_iface;
}

uint64_t gm_llama_lazy_patterns_rejected(const struct llama_sampler *smpl)
{
    return gm_llama_lazy_patterns_is(smpl) ? ((const lazy_sampler *)smpl->ctx)->rejected : 0;
}

uint64_t gm_llama_lazy_patterns_masks(const struct llama_sampler *smpl)
{
    return gm_llama_lazy_patterns_is(smpl) ? ((const lazy_sampler *)smpl->ctx)->masks_computed
                                           : 0;
}

bool gm_llama_lazy_patterns_triggered(const struct llama_sampler *smpl)
{
    return gm_llama_lazy_patterns_is(smpl) && ((const lazy_sampler *)smpl->ctx)->triggered;
}
