/*
 * A llama_sampler backed by a gramask matcher (gramask-llama.h).
 *
 * note [one mask per step]
 * llama.cpp may call apply several times for one step: common_sampler_sample
 * checks the single sampled token first and, when the grammar rejects it,
 * applies the grammar again to the whole vocabulary. The mask is filled once
 * per step (mask_valid, cleared by accept and reset) and each apply is then a
 * pass over the candidates it is given, whatever their order, number or
 * sortedness: a full vocabulary, a truncated sorted list, or one token.
 *
 * note [lazy grammar]
 * llama.cpp's lazy sampler lets everything through until a trigger, then
 * replays the text from the trigger's start into the grammar; the token that
 * completes the trigger is not checked, so the grammar can fail right there.
 * Here the whole output is one grammar:
 *     gm_lazy_root ::= gm_lazy_free | gm_lazy_free ROOT
 *     gm_lazy_free ::= Until("w1", ..., "wn")     (text holding no trigger word)
 * where ROOT (the caller's root) starts with a trigger word or token. The
 * Earley engine sees the boundary as a position inside one parse, so a token
 * that ends the free text and begins the call ("ok <tool" + "_call>{") is
 * allowed exactly when the call can go on. The first trigger decides, as in
 * llama.cpp, as long as no trigger word can overlap an occurrence of another
 * (or of itself) across the boundary. Special tokens are never free text.
 */
#include "gramask-llama.h"

#include "lazy_patterns.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gm_llama_sampler {
    gm_compiled *compiled;
    gm_matcher *matcher;
    uint32_t *mask;
    size_t words;
    uint32_t n_vocab;
    bool mask_valid;      /* note [one mask per step] */
    uint64_t masks_computed;
    uint64_t rejected;
} gm_llama_sampler;

static const char SAMPLER_NAME[] = "gramask";

/* Fills err (may be NULL) with code and message; returns code. */
static gm_status set_error(gm_error *err, gm_status code, const char *message)
{
    if (err) {
        gm_error_clear(err);
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s", message);
    }
    return code;
}

/* ---- vocabulary ----------------------------------------------------------- */

gm_status gm_llama_vocab_create(const struct llama_vocab *vocab, gm_vocab **out, gm_error *err)
{
    if (!vocab || !out)
        return set_error(err, GM_ERR_ARGUMENT, "gm_llama_vocab_create: NULL argument");
    *out = NULL;
    int32_t n = llama_vocab_n_tokens(vocab);
    if (n <= 0)
        return set_error(err, GM_ERR_FORMAT, "the llama_vocab has no tokens");
    uint8_t **tokens = calloc((size_t)n, sizeof *tokens);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    bool *special = calloc((size_t)n, sizeof *special);
    uint32_t *eos = calloc((size_t)n, sizeof *eos);
    size_t n_eos = 0;
    gm_status st = GM_OK;
    char buf[256];
    if (!tokens || !lens || !special || !eos) {
        st = GM_ERR_NOMEM;
        goto done;
    }
    for (int32_t t = 0; t < n; t++) {
        int32_t len = llama_token_to_piece(vocab, t, buf, (int32_t)sizeof buf, 0, true);
        const char *src = buf;
        char *big = NULL;
        if (len < 0) { /* longer than buf: -len bytes */
            big = malloc((size_t)-len);
            if (!big) {
                st = GM_ERR_NOMEM;
                goto done;
            }
            len = llama_token_to_piece(vocab, t, big, -len, 0, true);
            src = big;
        }
        enum llama_token_attr attr = llama_vocab_get_attr(vocab, t);
        /* llama.cpp's grammar sampler never allows an empty piece or one whose
           first byte is NUL (it reads pieces as C strings); control, unknown and
           unused tokens are not text a grammar can spell. */
        special[t] = len <= 0 || src[0] == 0 ||
                     (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                              LLAMA_TOKEN_ATTR_UNUSED));
        if (len > 0) {
            tokens[t] = malloc((size_t)len);
            if (!tokens[t]) {
                free(big);
                st = GM_ERR_NOMEM;
                goto done;
            }
            memcpy(tokens[t], src, (size_t)len);
            lens[t] = (size_t)len;
        }
        free(big);
        if (llama_vocab_is_eog(vocab, t))
            eos[n_eos++] = (uint32_t)t;
    }
    st = gm_vocab_create_from_tokens((const uint8_t *const *)tokens, lens, (uint32_t)n, special,
                                     eos, n_eos, NULL, out, err);
done:
    if (st == GM_ERR_NOMEM && !*out)
        set_error(err, GM_ERR_NOMEM, "out of memory reading the llama_vocab");
    if (tokens)
        for (int32_t t = 0; t < n; t++)
            free(tokens[t]);
    free(tokens);
    free(lens);
    free(special);
    free(eos);
    return st;
}

/* ---- the sampler interface ------------------------------------------------ */

static const char *sampler_name(const struct llama_sampler *smpl)
{
    (void)smpl;
    return SAMPLER_NAME;
}

static void sampler_accept(struct llama_sampler *smpl, llama_token token)
{
    gm_llama_sampler *s = smpl->ctx;
    if (token < 0 || gm_matcher_accept_token(s->matcher, (uint32_t)token, NULL) != GM_OK)
        s->rejected++;
    s->mask_valid = false;
}

static void sampler_apply(struct llama_sampler *smpl, llama_token_data_array *cur_p)
{
    gm_llama_sampler *s = smpl->ctx;
    if (!s->mask_valid) {
        /* After EOS (or a failure) the mask is all zero: nothing is allowed. */
        if (gm_matcher_fill_mask(s->matcher, s->mask, s->words, NULL) != GM_OK)
            memset(s->mask, 0, s->words * sizeof *s->mask);
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

static void sampler_reset(struct llama_sampler *smpl)
{
    gm_llama_sampler *s = smpl->ctx;
    gm_matcher_reset(s->matcher);
    s->mask_valid = false;
}

static void sampler_free(struct llama_sampler *smpl)
{
    gm_llama_sampler *s = smpl->ctx;
    if (!s)
        return;
    gm_matcher_destroy(s->matcher);
    gm_compiled_destroy(s->compiled);
    free(s->mask);
    free(s);
}

static struct llama_sampler *sampler_clone(const struct llama_sampler *smpl);

static struct llama_sampler_i sampler_iface = {
    .name = sampler_name,
    .accept = sampler_accept,
    .apply = sampler_apply,
    .reset = sampler_reset,
    .clone = sampler_clone,
    .free = sampler_free,
};

/* A sampler context around compiled (retained) and matcher (taken). */
static struct llama_sampler *sampler_new(gm_compiled *compiled, gm_matcher *matcher,
                                         gm_error *err)
{
    gm_llama_sampler *s = calloc(1, sizeof *s);
    size_t words = gm_compiled_mask_words(compiled);
    uint32_t *mask = calloc(words ? words : 1, sizeof *mask);
    if (!s || !mask) {
        free(s);
        free(mask);
        gm_matcher_destroy(matcher);
        set_error(err, GM_ERR_NOMEM, "out of memory creating a sampler");
        return NULL;
    }
    s->compiled = gm_compiled_retain(compiled);
    s->matcher = matcher;
    s->mask = mask;
    s->words = words;
    s->n_vocab = gm_compiled_vocab_size(compiled);
    return llama_sampler_init(&sampler_iface, s);
}

static struct llama_sampler *sampler_clone(const struct llama_sampler *smpl)
{
    const gm_llama_sampler *s = smpl->ctx;
    gm_matcher *m = NULL;
    if (gm_matcher_clone(s->matcher, &m, NULL) != GM_OK)
        return NULL;
    struct llama_sampler *copy = sampler_new(s->compiled, m, NULL);
    if (copy) {
        gm_llama_sampler *c = copy->ctx;
        c->rejected = s->rejected;
    }
    return copy;
}

/* ---- constructors --------------------------------------------------------- */

struct llama_sampler *gm_llama_sampler_init_compiled(gm_compiled *compiled, gm_error *err)
{
    if (!compiled) {
        set_error(err, GM_ERR_ARGUMENT, "gm_llama_sampler_init_compiled: NULL grammar");
        return NULL;
    }
    gm_matcher *m = NULL;
    if (gm_matcher_create(compiled, NULL, &m, err) != GM_OK)
        return NULL;
    return sampler_new(compiled, m, err);
}

struct llama_sampler *gm_llama_sampler_init_grammar(const struct llama_vocab *vocab,
                                                    gm_grammar *grammar, gm_error *err)
{
    gm_vocab *v = NULL;
    gm_compiled *c = NULL;
    struct llama_sampler *smpl = NULL;
    if (!vocab || !grammar) {
        set_error(err, GM_ERR_ARGUMENT, "gm_llama_sampler_init_grammar: NULL argument");
        return NULL;
    }
    if (gm_llama_vocab_create(vocab, &v, err) == GM_OK &&
        gm_compiled_create(grammar, v, NULL, &c, err) == GM_OK)
        smpl = gm_llama_sampler_init_compiled(c, err);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
    return smpl;
}

static struct llama_sampler *init_text(const struct llama_vocab *vocab, const char *text,
                                       size_t len, gm_grammar_format format, const char *root,
                                       gm_error *err)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = format;
    go.start = root;
    go.no_file_imports = true;
    gm_grammar *g = NULL;
    if (gm_grammar_create(text, len, "grammar", &go, &g, err) != GM_OK)
        return NULL;
    struct llama_sampler *smpl = gm_llama_sampler_init_grammar(vocab, g, err);
    gm_grammar_destroy(g);
    return smpl;
}

struct llama_sampler *gm_llama_sampler_init_gbnf(const struct llama_vocab *vocab,
                                                 const char *grammar_str, const char *root,
                                                 gm_error *err)
{
    if (!vocab || !grammar_str) {
        set_error(err, GM_ERR_ARGUMENT, "gm_llama_sampler_init_gbnf: NULL argument");
        return NULL;
    }
    return init_text(vocab, grammar_str, strlen(grammar_str), GM_FORMAT_GBNF, root, err);
}

/* Appends s as an XGrammar byte string %"..." (every byte escaped). */
static bool put_bytes_literal(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    size_t need = *len + 4 * n + 8;
    if (need > *cap) {
        size_t ncap = need * 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return false;
        *buf = nb;
        *cap = ncap;
    }
    *len += (size_t)sprintf(*buf + *len, "%%\"");
    for (size_t i = 0; i < n; i++)
        *len += (size_t)sprintf(*buf + *len, "\\x%02x", (unsigned char)s[i]);
    *len += (size_t)sprintf(*buf + *len, "\"");
    return true;
}

/* Checks that every trigger token is a control token of vocab. */
static bool check_trigger_tokens(const struct llama_vocab *vocab, const llama_token *tokens,
                                 size_t n, gm_error *err)
{
    /* Trigger tokens need no rule of their own: special tokens are never free
       text, so the grammar's root, which starts with one, is where one appears. */
    for (size_t i = 0; i < n; i++) {
        llama_token t = tokens[i];
        if (t < 0 || t >= llama_vocab_n_tokens(vocab) ||
            !(llama_vocab_get_attr(vocab, t) &
              (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED))) {
            char msg[128];
            snprintf(msg, sizeof msg, "trigger token %d is not a control token of the vocabulary",
                     (int)t);
            set_error(err, GM_ERR_ARGUMENT, msg);
            return false;
        }
    }
    return true;
}

/* The lazy grammar (note [lazy grammar]) of n trigger words words[i] of lens[i] bytes. */
static struct llama_sampler *init_lazy_words(const struct llama_vocab *vocab,
                                             const char *grammar_str, const char *root,
                                             const char *const *words, const size_t *lens,
                                             size_t n_words, gm_error *err)
{
    const char *start = root ? root : "root";
    size_t glen = strlen(grammar_str);
    size_t cap = glen + 256, len = 0;
    char *text = malloc(cap);
    if (!text) {
        set_error(err, GM_ERR_NOMEM, "out of memory building the lazy grammar");
        return NULL;
    }
    memcpy(text, grammar_str, glen);
    len = glen;
    len += (size_t)sprintf(text + len, "\ngm_lazy_free ::= ");
    bool ok = true;
    if (n_words) {
        len += (size_t)sprintf(text + len, "Until(");
        for (size_t i = 0; ok && i < n_words; i++) {
            if (i) {
                text[len++] = ',';
                text[len] = 0;
            }
            ok = put_bytes_literal(&text, &len, &cap, words[i], lens[i]);
        }
        /* bytes=1: free text is any bytes, as llama.cpp lets anything through
           before the trigger (Until keeps text valid UTF-8 by default). */
        len += (size_t)sprintf(text + len, ", bytes=1)");
    } else {
        len += (size_t)sprintf(text + len, "%%[\\x00-\\xff]*");
    }
    size_t need = len + strlen(start) + 64;
    if (ok && need > cap) {
        char *nb = realloc(text, need);
        ok = nb != NULL;
        if (ok) {
            text = nb;
            cap = need;
        }
    }
    if (!ok) {
        free(text);
        set_error(err, GM_ERR_NOMEM, "out of memory building the lazy grammar");
        return NULL;
    }
    len += (size_t)sprintf(text + len, "\ngm_lazy_root ::= gm_lazy_free | gm_lazy_free %s\n",
                           start);
    struct llama_sampler *smpl =
        init_text(vocab, text, len, GM_FORMAT_EBNF, "gm_lazy_root", err);
    free(text);
    return smpl;
}

struct llama_sampler *gm_llama_sampler_init_lazy(const struct llama_vocab *vocab,
                                                 const char *grammar_str, const char *root,
                                                 const char *const *trigger_words,
                                                 size_t n_trigger_words,
                                                 const llama_token *trigger_tokens,
                                                 size_t n_trigger_tokens, gm_error *err)
{
    if (!vocab || !grammar_str || (n_trigger_words && !trigger_words) ||
        (n_trigger_tokens && !trigger_tokens)) {
        set_error(err, GM_ERR_ARGUMENT, "gm_llama_sampler_init_lazy: NULL argument");
        return NULL;
    }
    if (!check_trigger_tokens(vocab, trigger_tokens, n_trigger_tokens, err))
        return NULL;
    size_t *lens = calloc(n_trigger_words ? n_trigger_words : 1, sizeof *lens);
    if (!lens) {
        set_error(err, GM_ERR_NOMEM, "out of memory building the lazy grammar");
        return NULL;
    }
    for (size_t i = 0; i < n_trigger_words; i++)
        lens[i] = strlen(trigger_words[i]);
    struct llama_sampler *smpl =
        init_lazy_words(vocab, grammar_str, root, trigger_words, lens, n_trigger_words, err);
    free(lens);
    return smpl;
}

/* ---- trigger patterns ----------------------------------------------------- */

/*
 * note [trigger patterns]
 * llama.cpp's trigger patterns are followed exactly, whatever their form:
 * lazy_patterns.c (note [lazy patterns]) keeps llama.cpp's own state (the
 * text so far, matched at token ends) and ecma_regex.c reads the patterns
 * as std::regex does (note [ecma dialect]: what is taken and refused).
 */
struct llama_sampler *gm_llama_sampler_init_lazy_patterns(
    const struct llama_vocab *vocab, const char *grammar_str, const char *root,
    const char *const *trigger_patterns, size_t n_trigger_patterns,
    const llama_token *trigger_tokens, size_t n_trigger_tokens, gm_error *err)
{
    if (!vocab || !grammar_str || (n_trigger_patterns && !trigger_patterns) ||
        (n_trigger_tokens && !trigger_tokens)) {
        set_error(err, GM_ERR_ARGUMENT, "gm_llama_sampler_init_lazy_patterns: NULL argument");
        return NULL;
    }
    if (!check_trigger_tokens(vocab, trigger_tokens, n_trigger_tokens, err))
        return NULL;
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = GM_FORMAT_EBNF;
    go.start = root ? root : "root";
    go.no_file_imports = true;
    gm_grammar *g = NULL;
    gm_vocab *v = NULL;
    gm_compiled *c = NULL;
    struct llama_sampler *smpl = NULL;
    if (gm_grammar_create(grammar_str, strlen(grammar_str), "grammar", &go, &g, err) == GM_OK &&
        gm_llama_vocab_create(vocab, &v, err) == GM_OK &&
        gm_compiled_create(g, v, NULL, &c, err) == GM_OK)
        smpl = gm_llama_lazy_patterns_create(vocab, c, trigger_patterns, n_trigger_patterns,
                                             trigger_tokens, n_trigger_tokens, err);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
    gm_grammar_destroy(g);
    return smpl;
}

/* ---- inspection ----------------------------------------------------------- */

int gm_llama_sampler_is_gramask(const struct llama_sampler *smpl)
{
    return smpl && (smpl->iface == &sampler_iface || gm_llama_lazy_patterns_is(smpl));
}

uint64_t gm_llama_sampler_rejected(const struct llama_sampler *smpl)
{
    if (gm_llama_lazy_patterns_is(smpl))
        return gm_llama_lazy_patterns_rejected(smpl);
    return gm_llama_sampler_is_gramask(smpl) ? ((const gm_llama_sampler *)smpl->ctx)->rejected
                                             : 0;
}

uint64_t gm_llama_sampler_masks_computed(const struct llama_sampler *smpl)
{
    if (gm_llama_lazy_patterns_is(smpl))
        return gm_llama_lazy_patterns_masks(smpl);
    return gm_llama_sampler_is_gramask(smpl)
               ? ((const gm_llama_sampler *)smpl->ctx)->masks_computed
               : 0;
}
