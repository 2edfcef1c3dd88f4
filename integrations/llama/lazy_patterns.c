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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecma_regex.h"
#include "gramask-llama.h"

#define MAX_DFA_STATES 20000u

enum { TOK_TEXT, TOK_EOG, TOK_SPECIAL, TOK_TRIGGER };

typedef struct trig_pattern {
    char *text;
    er_prog *prog;
    er_dfa *dfa;
    bool full;            /* ^...$: regex_match is tried first */
    er_pike *search, *match;
    er_pike *s_scratch, *m_scratch;
    uint32_t state;       /* DFA state at the end of the buffer */
    uint32_t **hits;      /* per DFA state: tokens after which a match is found (lazy) */
    uint32_t *nhits;
    bool *hits_done;
} trig_pattern;

typedef struct lazy_sampler {
    const struct llama_vocab *vocab;
    gm_compiled *compiled;
    gm_matcher *matcher; /* the grammar, once triggered */
    gm_matcher *probe;   /* the grammar on the text a candidate token would start it with */
    size_t probe_start, probe_len;
    int probe_state;     /* 0 unset, 1 holds buf[probe_start..probe_len), -1 that was rejected */
    trig_pattern *pats;
    size_t n_pats;
    llama_token *trig_tokens;
    size_t n_trig;
    uint32_t n_vocab;
    size_t words;
    uint8_t *pieces;     /* all token pieces */
    size_t *off;         /* n_vocab + 1 */
    uint8_t *kind;
    uint32_t *base_mask; /* while awaiting: text, EOG, trigger tokens the grammar starts with */
    uint32_t *grammar_start_mask;
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

static void pattern_free(trig_pattern *p)
{
    if (p->hits)
        for (uint32_t s = 0; s < er_dfa_states(p->dfa); s++)
            free(p->hits[s]);
    free(p->hits);
    free(p->nhits);
    free(p->hits_done);
    er_pike_free(p->search);
    er_pike_free(p->match);
    er_pike_free(p->s_scratch);
    er_pike_free(p->m_scratch);
    er_dfa_free(p->dfa);
    er_prog_free(p->prog);
    free(p->text);
}

static void lazy_free(lazy_sampler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_pats; i++)
        pattern_free(&s->pats[i]);
    free(s->pats);
    gm_matcher_destroy(s->matcher);
    gm_matcher_destroy(s->probe);
    gm_compiled_destroy(s->compiled);
    free(s->trig_tokens);
    free(s->pieces);
    free(s->off);
    free(s->kind);
    free(s->base_mask);
    free(s->grammar_start_mask);
    free(s->mask);
    free(s->seen);
    free(s->buf);
    free(s);
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
    gm_status st = er_compile(text, &p->prog, err);
    if (st == GM_OK)
        st = er_dfa_build(p->prog, text, MAX_DFA_STATES, &p->dfa, err);
    if (st != GM_OK)
        return st;
    p->full = n >= 1 && text[0] == '^' && text[n - 1] == '$';
    uint32_t ns = er_dfa_states(p->dfa);
    p->search = er_pike_create(p->prog, false);
    p->s_scratch = er_pike_create(p->prog, false);
    if (p->full) {
        p->match = er_pike_create(p->prog, true);
        p->m_scratch = er_pike_create(p->prog, true);
    }
    p->hits = calloc(ns, sizeof *p->hits);
    p->nhits = calloc(ns, sizeof *p->nhits);
    p->hits_done = calloc(ns, sizeof *p->hits_done);
    if (!p->search || !p->s_scratch || (p->full && (!p->match || !p->m_scratch)) || !p->hits ||
        !p->nhits || !p->hits_done) {
        set_error(err, GM_ERR_NOMEM, "out of memory reading a trigger pattern");
        return GM_ERR_NOMEM;
    }
    p->state = er_dfa_start(p->dfa);
    return GM_OK;
}

static const uint8_t *piece(const lazy_sampler *s, uint32_t t, size_t *len)
{
    *len = s->off[t + 1] - s->off[t];
    return s->pieces + s->off[t];
}

static uint32_t walk(const er_dfa *d, uint32_t q, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n && q != 0; i++)
        q = er_dfa_next(d, q, b[i]);
    return q;
}

/* The tokens after which p matches, from DFA state q (computed once per state). */
static bool pattern_hits(const lazy_sampler *s, trig_pattern *p, uint32_t q)
{
    if (p->hits_done[q])
        return true;
    uint32_t n = 0, cap = 0, *list = NULL;
    for (uint32_t t = 0; t < s->n_vocab; t++) {
        if (s->kind[t] != TOK_TEXT)
            continue;
        size_t len;
        const uint8_t *b = piece(s, t, &len);
        if (!er_dfa_found(p->dfa, walk(p->dfa, q, b, len)))
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
    for (size_t i = 0; i < s->n_pats; i++) {
        const trig_pattern *p = &s->pats[i];
        if (er_dfa_found(p->dfa, walk(p->dfa, p->state, b, n)))
            return (long)i;
    }
    return -1;
}

/* Where pattern i, matching the buffer followed by b[0..n), starts the grammar. */
static size_t start_of(lazy_sampler *s, size_t i, const uint8_t *b, size_t n)
{
    trig_pattern *p = &s->pats[i];
    size_t start = 0;
    if (p->full) {
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
    const uint8_t *b = piece(s, t, &n);
    long i = first_match(s, b, n);
    if (i < 0)
        return true;
    size_t start = start_of(s, (size_t)i, b, n);
    if (start == s->len)
        return s->grammar_start_mask[t / 32] >> (t % 32) & 1u;
    return grammar_takes(s, start, b, n);
}

static void fill_mask(lazy_sampler *s)
{
    if (s->ended) {
        memset(s->mask, 0, s->words * sizeof *s->mask);
        return;
    }
    if (s->triggered) {
        if (gm_matcher_fill_mask(s->matcher, s->mask, s->words, NULL) != GM_OK)
            memset(s->mask, 0, s->words * sizeof *s->mask);
        return;
    }
    memcpy(s->mask, s->base_mask, s->words * sizeof *s->mask);
    s->stamp++;
    s->probe_state = 0;
    for (size_t i = 0; i < s->n_pats; i++) {
        trig_pattern *p = &s->pats[i];
        if (!pattern_hits(s, p, p->state)) { /* out of memory: look at every token */
            for (uint32_t t = 0; t < s->n_vocab; t++)
                if (s->kind[t] == TOK_TEXT && !token_ok(s, t))
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
    s->mask_valid = false;
    if (token < 0 || (uint32_t)token >= s->n_vocab || s->ended) {
        s->rejected++;
        return;
    }
    uint32_t t = (uint32_t)token;
    if (s->triggered) {
        if (gm_matcher_accept_token(s->matcher, t, NULL) != GM_OK)
            s->rejected++;
        return;
    }
    switch (s->kind[t]) {
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
    const uint8_t *b = piece(s, t, &n);
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
    for (size_t k = 0; k < s->n_pats; k++) {
        trig_pattern *p = &s->pats[k];
        p->state = walk(p->dfa, p->state, b, n);
        er_pike_feed(p->search, b, n);
        if (p->match)
            er_pike_feed(p->match, b, n);
    }
    append(s, b, n);
}

static void lazy_apply(struct llama_sampler *smpl, llama_token_data_array *cur_p)
{
    lazy_sampler *s = smpl->ctx;
    if (!s->mask_valid) { /* note [one mask per step] in gramask-llama.c */
        fill_mask(s);
        s->mask_valid = true;
        s->masks_computed++;
    }
    for (size_t i = 0; i < cur_p->size; i++) {
        llama_token id = cur_p->data[i].id;
        if (id < 0 || (uint32_t)id >= s->n_vocab ||
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
    for (size_t i = 0; i < s->n_pats; i++) {
        trig_pattern *p = &s->pats[i];
        p->state = er_dfa_start(p->dfa);
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

/* ---- creation ------------------------------------------------------------- */

static lazy_sampler *lazy_new(const struct llama_vocab *vocab, gm_compiled *compiled,
                              const char *const *patterns, size_t n_patterns,
                              const llama_token *tokens, size_t n_tokens, gm_error *err)
{
    lazy_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        return NULL;
    }
    s->vocab = vocab;
    s->compiled = gm_compiled_retain(compiled);
    s->n_vocab = gm_compiled_vocab_size(compiled);
    s->words = gm_compiled_mask_words(compiled);
    gm_status st = GM_OK;
    if (s->n_vocab != (uint32_t)llama_vocab_n_tokens(vocab)) {
        set_error(err, GM_ERR_ARGUMENT, "the compiled grammar's vocabulary is not the llama_vocab's");
        lazy_free(s);
        return NULL;
    }
    s->pats = calloc(n_patterns ? n_patterns : 1, sizeof *s->pats);
    s->trig_tokens = malloc((n_tokens ? n_tokens : 1) * sizeof *s->trig_tokens);
    s->off = calloc((size_t)s->n_vocab + 1, sizeof *s->off);
    s->kind = calloc(s->n_vocab, sizeof *s->kind);
    s->base_mask = calloc(s->words, sizeof *s->base_mask);
    s->grammar_start_mask = calloc(s->words, sizeof *s->grammar_start_mask);
    s->mask = calloc(s->words, sizeof *s->mask);
    s->seen = calloc(s->n_vocab, sizeof *s->seen);
    if (!s->pats || !s->trig_tokens || !s->off || !s->kind || !s->base_mask ||
        !s->grammar_start_mask || !s->mask || !s->seen) {
        set_error(err, GM_ERR_NOMEM, "out of memory creating a lazy sampler");
        lazy_free(s);
        return NULL;
    }
    for (size_t i = 0; st == GM_OK && i < n_patterns; i++) {
        if (!patterns[i]) {
            set_error(err, GM_ERR_ARGUMENT, "a NULL trigger pattern");
            st = GM_ERR_ARGUMENT;
            break;
        }
        s->n_pats = i + 1;
        st = pattern_init(&s->pats[i], patterns[i], err);
    }
    if (st == GM_OK)
        st = gm_matcher_create(compiled, NULL, &s->matcher, err);
    if (st == GM_OK)
        st = gm_matcher_create(compiled, NULL, &s->probe, err);
    if (st == GM_OK && gm_matcher_fill_mask(s->matcher, s->grammar_start_mask, s->words, err) != GM_OK)
        st = err ? err->code : GM_ERR_STATE;
    if (st != GM_OK) {
        lazy_free(s);
        return NULL;
    }
    memcpy(s->trig_tokens, tokens, n_tokens * sizeof *tokens);
    s->n_trig = n_tokens;
    /* The pieces as llama.cpp's grammar sees them (gm_llama_vocab_create's rule). */
    size_t cap = 8 * (size_t)s->n_vocab + 64, used = 0;
    s->pieces = malloc(cap);
    char small[256];
    for (uint32_t t = 0; s->pieces && t < s->n_vocab; t++) {
        int32_t len = llama_token_to_piece(vocab, (llama_token)t, small, (int32_t)sizeof small, 0, true);
        char *big = NULL;
        const char *src = small;
        if (len < 0) {
            big = malloc((size_t)-len);
            if (!big)
                break;
            len = llama_token_to_piece(vocab, (llama_token)t, big, -len, 0, true);
            src = big;
        }
        if (len < 0)
            len = 0;
        if (used + (size_t)len > cap) {
            size_t nc = 2 * (used + (size_t)len);
            uint8_t *np = realloc(s->pieces, nc);
            if (!np) {
                free(big);
                free(s->pieces);
                s->pieces = NULL;
                break;
            }
            s->pieces = np;
            cap = nc;
        }
        memcpy(s->pieces + used, src, (size_t)len);
        used += (size_t)len;
        s->off[t + 1] = used;
        free(big);
        enum llama_token_attr attr = llama_vocab_get_attr(vocab, (llama_token)t);
        if (llama_vocab_is_eog(vocab, (llama_token)t))
            s->kind[t] = TOK_EOG;
        else if (len <= 0 || src[0] == 0 ||
                 (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                          LLAMA_TOKEN_ATTR_UNUSED)))
            s->kind[t] = TOK_SPECIAL;
        else
            s->kind[t] = TOK_TEXT;
    }
    if (!s->pieces) {
        set_error(err, GM_ERR_NOMEM, "out of memory reading the llama_vocab");
        lazy_free(s);
        return NULL;
    }
    for (size_t i = 0; i < n_tokens; i++)
        s->kind[tokens[i]] = TOK_TRIGGER;
    for (uint32_t t = 0; t < s->n_vocab; t++) {
        bool on = s->kind[t] == TOK_TEXT || s->kind[t] == TOK_EOG ||
                  (s->kind[t] == TOK_TRIGGER && (s->grammar_start_mask[t / 32] >> (t % 32) & 1u));
        if (on)
            s->base_mask[t / 32] |= 1u << (t % 32);
    }
    return s;
}

struct llama_sampler *gm_llama_lazy_patterns_create(const struct llama_vocab *vocab,
                                                    gm_compiled *compiled,
                                                    const char *const *patterns, size_t n_patterns,
                                                    const llama_token *tokens, size_t n_tokens,
                                                    gm_error *err)
{
    lazy_sampler *s = lazy_new(vocab, compiled, patterns, n_patterns, tokens, n_tokens, err);
    return s ? llama_sampler_init(&lazy_iface, s) : NULL;
}

static struct llama_sampler *lazy_clone(const struct llama_sampler *smpl)
{
    const lazy_sampler *s = smpl->ctx;
    const char **texts = malloc((s->n_pats ? s->n_pats : 1) * sizeof *texts);
    if (!texts)
        return NULL;
    for (size_t i = 0; i < s->n_pats; i++)
        texts[i] = s->pats[i].text;
    lazy_sampler *c = lazy_new(s->vocab, s->compiled, texts, s->n_pats, s->trig_tokens, s->n_trig,
                               NULL);
    free(texts);
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
    c->len = 0;
    append(c, s->buf ? s->buf : (const uint8_t *)"", s->len);
    for (size_t i = 0; i < s->n_pats; i++) {
        c->pats[i].state = s->pats[i].state;
        er_pike_copy(c->pats[i].search, s->pats[i].search);
        if (s->pats[i].match)
            er_pike_copy(c->pats[i].match, s->pats[i].match);
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
