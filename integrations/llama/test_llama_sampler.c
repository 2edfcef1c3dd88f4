/*
 * The gramask llama_sampler inside llama.cpp's machinery, on real
 * vocabularies (GGUF, vocabulary only):
 *   vocab     the gramask vocabulary of a llama_vocab: byte tokens are their
 *             byte, SentencePiece's U+2581 a space, EOG tokens stop tokens;
 *   cache     one mask per step however many times apply runs;
 *   chain     top-k + temperature + dist chains on truncated sorted lists,
 *             and common_sampler_sample's single-token check then resample:
 *             every sampled token is one llama.cpp's grammar sampler allows;
 *   clone     a clone continues independently; reset starts over;
 *   lazy      trigger words and tokens: the masks at each state against a
 *             brute-force reference of the lazy language, boundary tokens
 *             (end of free text + start of the call) included.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gramask-llama.h"
#include "llama_util.h"

static int failures;
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            failures++;                                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

static int32_t piece(const struct llama_vocab *v, llama_token t, char *buf, int32_t cap)
{
    int32_t n = llama_token_to_piece(v, t, buf, cap - 1, 0, true);
    buf[n > 0 ? n : 0] = 0;
    return n;
}

static int32_t tokenize(const struct llama_vocab *v, const char *text, llama_token *out, int32_t cap)
{
    return lu_spell(v, text, out, cap);
}

static void test_vocab(const struct llama_vocab *v, const char *name)
{
    gm_vocab *gv = NULL;
    gm_error err;
    CHECK(gm_llama_vocab_create(v, &gv, &err) == GM_OK, "%s: %s", name, err.message);
    if (!gv)
        return;
    int32_t n = llama_vocab_n_tokens(v);
    CHECK(gm_vocab_size(gv) == (uint32_t)n, "%s: size %u, llama %d", name, gm_vocab_size(gv), n);
    char buf[512];
    unsigned bytes = 0;
    for (int32_t t = 0; t < n; t++) {
        size_t len;
        const uint8_t *b = gm_vocab_token(gv, (uint32_t)t, &len);
        int32_t pl = piece(v, t, buf, sizeof buf);
        CHECK(pl >= 0 && (size_t)pl == len && (len == 0 || !memcmp(b, buf, len)),
              "%s: token %d bytes differ from its piece", name, t);
        if (llama_vocab_get_attr(v, t) & LLAMA_TOKEN_ATTR_BYTE) {
            bytes++;
            CHECK(len == 1, "%s: byte token %d is %zu bytes", name, t, len);
        }
    }
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(gv, &eos);
    size_t neog = 0;
    for (int32_t t = 0; t < n; t++)
        neog += llama_vocab_is_eog(v, t);
    CHECK(neos == neog && neog > 0, "%s: %zu stop tokens, %zu EOG", name, neos, neog);
    if (!strcmp(name, "llama-spm")) {
        CHECK(bytes == 256, "llama-spm: %u byte tokens", bytes);
        llama_token ids[8];
        CHECK(tokenize(v, " hello", ids, 8) == 1, "llama-spm: ' hello' is one token");
        size_t len;
        const uint8_t *b = gm_vocab_token(gv, (uint32_t)ids[0], &len);
        CHECK(len == 6 && !memcmp(b, " hello", 6), "llama-spm: U+2581 is a space");
    }
    gm_vocab_destroy(gv);
}

/* Whether token t survives llama.cpp's grammar sampler ls as a single candidate. */
static bool llama_allows(struct llama_sampler *ls, llama_token t)
{
    llama_token_data d = {t, 1.0f, 0.0f};
    llama_token_data_array a = {&d, 1, -1, false};
    llama_sampler_apply(ls, &a);
    return isfinite(d.logit);
}

static const char JSON_ARR[] = "root ::= \"[\" ws (num (\",\" ws num)*)? \"]\"\n"
                               "num ::= [0-9]+\nws ::= [ ]?\n";

static void test_cache_and_chain(const struct llama_vocab *v, const char *name)
{
    gm_error err;
    int32_t n = llama_vocab_n_tokens(v);
    llama_token_data *data = malloc((size_t)n * sizeof *data);
    uint64_t rng = 42;

    /* The chain: gramask, then top-k, temperature and dist on the truncated list. */
    struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    struct llama_sampler *gs = gm_llama_sampler_init_gbnf(v, JSON_ARR, "root", &err);
    CHECK(gs != NULL, "%s: %s", name, err.message);
    if (!gs) {
        free(data);
        llama_sampler_free(chain);
        return;
    }
    llama_sampler_chain_add(chain, gs);
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(7));
    struct llama_sampler *ref = llama_sampler_init_grammar(v, JSON_ARR, "root");
    unsigned steps = 0;
    for (; steps < 30; steps++) {
        llama_token_data_array a = lu_random_candidates(data, n, &rng);
        uint64_t before = gm_llama_sampler_masks_computed(gs);
        llama_sampler_apply(chain, &a);
        llama_sampler_apply(gs, &a); /* a second apply in the same step, on the truncated list */
        CHECK(gm_llama_sampler_masks_computed(gs) == before + 1, "%s: one mask per step", name);
        CHECK(a.selected >= 0 && (size_t)a.selected < a.size, "%s: nothing selected", name);
        llama_token t = a.data[a.selected].id;
        CHECK(isfinite(a.data[a.selected].logit), "%s: a masked token was selected", name);
        CHECK(llama_allows(ref, t), "%s: step %u: chain chose token %d llama.cpp rejects", name,
              steps, t);
        llama_sampler_accept(chain, t);
        llama_sampler_accept(ref, t);
        if (llama_vocab_is_eog(v, t))
            break;
    }
    CHECK(gm_llama_sampler_rejected(gs) == 0, "%s: rejected tokens in the chain", name);
    llama_sampler_free(chain);
    llama_sampler_reset(ref);

    /* common_sampler_sample: sample without the grammar, check the one token,
       and when it is rejected apply the grammar to the whole vocabulary and
       sample again. */
    struct llama_sampler *plain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(plain, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(plain, llama_sampler_init_dist(11));
    gs = gm_llama_sampler_init_gbnf(v, JSON_ARR, "root", &err);
    unsigned resampled = 0, single_ok = 0;
    for (steps = 0; gs && steps < 30; steps++) {
        llama_token_data_array a = lu_random_candidates(data, n, &rng);
        llama_sampler_apply(plain, &a);
        llama_token t = a.data[a.selected].id;
        uint64_t before = gm_llama_sampler_masks_computed(gs);
        llama_token_data one = {t, 1.0f, 0.0f};
        llama_token_data_array single = {&one, 1, -1, false};
        llama_sampler_apply(gs, &single);
        CHECK(isfinite(one.logit) == llama_allows(ref, t), "%s: single-token check of %d differs",
              name, t);
        if (isfinite(one.logit)) {
            single_ok++;
        } else {
            resampled++;
            a = lu_random_candidates(data, n, &rng);
            llama_sampler_apply(gs, &a);
            llama_sampler_apply(plain, &a);
            t = a.data[a.selected].id;
            CHECK(llama_allows(ref, t), "%s: resampled token %d rejected by llama.cpp", name, t);
        }
        CHECK(gm_llama_sampler_masks_computed(gs) == before + 1, "%s: one mask per step", name);
        llama_sampler_accept(gs, t);
        llama_sampler_accept(plain, t);
        llama_sampler_accept(ref, t);
        if (llama_vocab_is_eog(v, t))
            break;
    }
    CHECK(resampled > 0, "%s: the single-token check never rejected", name);
    printf("%s: chain %s; single-token checks: %u passed, %u resampled\n", name, "ok", single_ok,
           resampled);

    /* Clone and reset: "[1" in the original, the clone goes on alone. */
    if (gs) {
        llama_sampler_reset(gs);
        llama_token ids[8];
        int32_t k = tokenize(v, "[1", ids, 8);
        for (int32_t i = 0; i < k; i++)
            llama_sampler_accept(gs, ids[i]);
        struct llama_sampler *c = llama_sampler_clone(gs);
        CHECK(c && gm_llama_sampler_is_gramask(c), "%s: clone", name);
        llama_token close[4];
        CHECK(tokenize(v, "]", close, 4) == 1, "%s: ']' is one token", name);
        llama_token_data d = {close[0], 1.0f, 0.0f};
        llama_token_data_array a = {&d, 1, -1, false};
        llama_sampler_accept(c, close[0]);
        llama_sampler_apply(gs, &a);
        CHECK(isfinite(d.logit), "%s: the original still allows ']'", name);
        d.logit = 1.0f;
        llama_sampler_apply(c, &a);
        CHECK(!isfinite(d.logit), "%s: the clone, after ']', does not", name);
        llama_sampler_reset(gs);
        d.logit = 1.0f;
        llama_sampler_apply(gs, &a);
        CHECK(!isfinite(d.logit), "%s: after reset ']' is not allowed", name);
        llama_sampler_free(c);
        llama_sampler_free(gs);
    }
    llama_sampler_free(plain);
    llama_sampler_free(ref);
    free(data);
}

/*
 * The lazy language of the test: free text in which no word of words (NULL
 * ended) occurs, optionally followed by the word at the first occurrence,
 * "{" [a-z]+ "}". Whether s is a prefix of a sentence (complete: a whole
 * sentence).
 */
static const char TRIGGER[] = "<tool_call>";
static bool lazy_ref_words(const char *s, size_t len, bool complete, const char *const *words)
{
    const char *at = NULL;
    size_t tl = 0;
    for (size_t i = 0; i < len && !at; i++)
        for (size_t w = 0; words[w] && !at; w++) {
            tl = strlen(words[w]);
            if (i + tl <= len && !memcmp(s + i, words[w], tl))
                at = s + i;
        }
    if (!at) /* free text, which may end anywhere */
        return true;
    const char *r = at + tl, *end = s + len;
    if (r == end)
        return !complete;
    if (*r++ != '{')
        return false;
    size_t letters = 0;
    while (r < end && *r >= 'a' && *r <= 'z')
        r++, letters++;
    if (r == end)
        return !complete;
    if (*r++ != '}' || !letters)
        return false;
    return r == end;
}

static bool lazy_ref(const char *s, size_t len, bool complete)
{
    const char *const words[] = {TRIGGER, NULL};
    return lazy_ref_words(s, len, complete, words);
}

/* The lazy sampler of the test: trigger word TRIGGER, or pattern when not NULL. */
static struct llama_sampler *lazy_sampler(const struct llama_vocab *v, const char *grammar,
                                          const char *pattern, gm_error *err)
{
    const char *words[] = {TRIGGER};
    if (pattern)
        return gm_llama_sampler_init_lazy_patterns(v, grammar, "root", &pattern, 1, NULL, 0, err);
    return gm_llama_sampler_init_lazy(v, grammar, "root", words, 1, NULL, 0, err);
}

static void test_lazy(const struct llama_vocab *v, const char *name, const char *pattern)
{
    gm_error err;
    const char *grammar = "root ::= \"<tool_call>\" \"{\" [a-z]+ \"}\"\n";
    struct llama_sampler *gs = lazy_sampler(v, grammar, pattern, &err);
    CHECK(gs != NULL, "%s: lazy: %s", name, err.message);
    if (!gs)
        return;
    int32_t n = llama_vocab_n_tokens(v);
    llama_token_data *data = malloc((size_t)n * sizeof *data);
    uint64_t rng = 5;
    /* States reached by accepting the tokens of these texts, one after another. */
    const char *texts[] = {"Sure, calling it", " <tool", "_call", ">{", "ab", "}"};
    char prefix[256] = "";
    size_t plen = 0;
    unsigned checked = 0, allowed_total = 0;
    for (size_t s = 0; s <= sizeof texts / sizeof *texts; s++) {
        llama_token_data_array a = lu_random_candidates(data, n, &rng);
        llama_sampler_apply(gs, &a);
        unsigned wrong = 0, allowed = 0, boundary = 0;
        for (int32_t t = 0; t < n; t++) {
            char p[256];
            bool got = isfinite(data[t].logit), want;
            if (llama_vocab_is_eog(v, t)) {
                want = lazy_ref(prefix, plen, true);
            } else if (llama_vocab_get_attr(v, t) &
                       (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_UNUSED)) {
                want = false;
            } else {
                int32_t pl = piece(v, t, p, sizeof p);
                if (pl <= 0 || plen + (size_t)pl >= sizeof prefix || p[0] == 0) {
                    want = false;
                } else {
                    char both[512];
                    memcpy(both, prefix, plen);
                    memcpy(both + plen, p, (size_t)pl);
                    want = lazy_ref(both, plen + (size_t)pl, false);
                    /* a token holding the end of the free text and the start of the call */
                    if (want && !strstr(prefix, TRIGGER) && strchr(p, '<') && p[0] != '<')
                        boundary++;
                }
            }
            allowed += got;
            if (got != want && wrong++ < 5) {
                piece(v, t, p, sizeof p);
                fprintf(stderr, "lazy %s after \"%s\": token %d \"%s\": gramask %s, reference %s\n",
                        name, prefix, t, p, got ? "allows" : "rejects", want ? "allows" : "rejects");
            }
            checked++;
        }
        CHECK(wrong == 0, "%s: lazy masks after \"%s\": %u tokens differ from the reference", name,
              prefix, wrong);
        allowed_total += allowed;
        if (s == 0)
            printf("%s: lazy: %u tokens allowed at the start, %u of them boundary tokens\n", name,
                   allowed, boundary);
        if (s == sizeof texts / sizeof *texts)
            break;
        llama_token ids[64];
        int32_t k = tokenize(v, texts[s], ids, 64);
        for (int32_t i = 0; i < k; i++)
            llama_sampler_accept(gs, ids[i]);
        size_t tl = strlen(texts[s]);
        memcpy(prefix + plen, texts[s], tl + 1);
        plen += tl;
    }
    CHECK(gm_llama_sampler_rejected(gs) == 0, "%s: lazy: accepted tokens rejected", name);
    printf("%s: lazy trigger %s: %u masks checked token by token (%u allowed)\n", name,
           pattern ? pattern : "word", checked, allowed_total);
    llama_sampler_free(gs);

    /* A boundary token: "x<tool" as one step must be allowed at the start. */
    gs = lazy_sampler(v, grammar, pattern, &err);
    llama_token ids[64];
    int32_t k = tokenize(v, "Hi <tool_call>{x}", ids, 64);
    for (int32_t i = 0; gs && i < k; i++) {
        llama_token_data d = {ids[i], 1.0f, 0.0f};
        llama_token_data_array a = {&d, 1, -1, false};
        llama_sampler_apply(gs, &a);
        CHECK(isfinite(d.logit), "%s: lazy: token %d of the call rejected", name, i);
        llama_sampler_accept(gs, ids[i]);
    }
    /* After "}" only EOG: the call is complete and nothing may follow. */
    if (gs) {
        llama_token_data_array a = lu_random_candidates(data, n, &rng);
        llama_sampler_apply(gs, &a);
        for (int32_t t = 0; t < n; t++)
            CHECK(isfinite(data[t].logit) == llama_vocab_is_eog(v, t),
                  "%s: lazy: after the call token %d", name, t);
        llama_sampler_free(gs);
    }
    free(data);
}

static bool allows_text(const struct llama_vocab *v, struct llama_sampler *smpl, const char *text);

/* Trigger patterns whose language is the trigger word TRIGGER (lazy_ref). */
static const char *const LAZY_PATTERNS[] = {
    "[\\s\\S]*?(<tool_call>)[\\s\\S]*",   /* llama.cpp's form of a trigger word */
    "^[\\s\\S]*?(<tool_call>)[\\s\\S]*$", /* PATTERN_FULL, anchored */
    "[\\s\\S]*?(<tool_call>)",
    "<tool_call>",                         /* search, the grammar at the match start */
    "^[\\s\\S]*?(<tool_call>)",           /* ^ without $: regex_search from the start */
};

/* Whether a token's piece is free text for llama.cpp's and gramask's samplers alike. */
static bool text_token(const struct llama_vocab *v, llama_token t)
{
    return !llama_vocab_is_eog(v, t) &&
           !(llama_vocab_get_attr(v, t) &
             (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_UNUSED));
}

/* Counts the tokens on which gs and ls (applied to full candidate lists) differ. */
static unsigned mask_diff(const struct llama_vocab *v, struct llama_sampler *gs,
                          struct llama_sampler *ls, llama_token_data *d1, llama_token_data *d2,
                          const char *what, const char *name)
{
    int32_t n = llama_vocab_n_tokens(v);
    uint64_t r1 = 3, r2 = 3;
    llama_token_data_array a1 = lu_random_candidates(d1, n, &r1);
    llama_token_data_array a2 = lu_random_candidates(d2, n, &r2);
    llama_sampler_apply(gs, &a1);
    llama_sampler_apply(ls, &a2);
    unsigned wrong = 0;
    for (int32_t i = 0; i < n; i++) {
        llama_token t = d1[i].id;
        if (d2[i].id != t || (!text_token(v, t) && !llama_vocab_is_eog(v, t)))
            continue; /* control tokens: see test_llama_diff.c's "control" */
        bool g = isfinite(d1[i].logit), l = isfinite(d2[i].logit);
        if (g != l && wrong++ < 3) {
            char p[256];
            piece(v, t, p, sizeof p);
            fprintf(stderr, "lazy pattern %s %s: token %d \"%s\": gramask %s, llama.cpp %s\n",
                    name, what, t, p, g ? "allows" : "rejects", l ? "allows" : "rejects");
        }
    }
    return wrong;
}

/*
 * Differential against llama.cpp's llama_sampler_init_grammar_lazy_patterns:
 * at free-text states before and inside the trigger ("... it", "... <", "... <tool",
 * "... <tool_", "... <tool_call"),
 * every token whose piece completes the trigger is accepted by a clone of
 * both samplers when gramask allows it (llama.cpp replays the text from the
 * trigger into its grammar and would abort on a rejected piece), and their
 * masks on the next step must be the same; gramask rejects it exactly when
 * the text after the trigger is no prefix of the grammar (lazy_ref). Then the
 * call goes on token by token, masks compared at every step.
 */
static void lazy_pattern_diff(const struct llama_vocab *v, const char *name,
                              const char *pattern, const char *grammar,
                              const char *const *words, const char *const *texts,
                              size_t n_texts)
{
    gm_error err;
    struct llama_sampler *gs = lazy_sampler(v, grammar, pattern, &err);
    struct llama_sampler *ls =
        llama_sampler_init_grammar_lazy_patterns(v, grammar, "root", &pattern, 1, NULL, 0);
    CHECK(gs && ls, "%s: lazy pattern diff: %s", name, gs ? "llama.cpp refused" : err.message);
    int32_t n = llama_vocab_n_tokens(v);
    llama_token_data *d1 = malloc((size_t)n * sizeof *d1), *d2 = malloc((size_t)n * sizeof *d2);
    char prefix[256] = "";
    size_t plen = 0;
    unsigned boundary = 0, rejected = 0, steps = 0, wrong = 0;
    for (size_t s = 0; gs && ls && s < n_texts; s++) {
        llama_token ids[64];
        int32_t k = tokenize(v, texts[s], ids, 64);
        for (int32_t i = 0; i < k; i++) {
            llama_sampler_accept(gs, ids[i]);
            llama_sampler_accept(ls, ids[i]);
        }
        size_t tl = strlen(texts[s]);
        memcpy(prefix + plen, texts[s], tl + 1);
        plen += tl;
        uint64_t rng = 11;
        llama_token_data_array a = lu_random_candidates(d1, n, &rng);
        llama_sampler_apply(gs, &a);
        bool *allowed = calloc((size_t)n, sizeof *allowed);
        for (int32_t i = 0; i < n; i++)
            allowed[d1[i].id] = isfinite(d1[i].logit);
        for (llama_token t = 0; t < n; t++) {
            char p[256], both[512];
            int32_t pl = piece(v, t, p, sizeof p);
            if (!text_token(v, t) || pl <= 0 || p[0] == 0 || plen + (size_t)pl >= sizeof both)
                continue;
            memcpy(both, prefix, plen);
            memcpy(both + plen, p, (size_t)pl);
            both[plen + (size_t)pl] = 0;
            bool triggered = false;
            for (size_t w = 0; words[w]; w++)
                triggered = triggered || strstr(both, words[w]);
            if (!triggered) /* free text still: llama.cpp allows anything */
                continue;
            bool want = lazy_ref_words(both, plen + (size_t)pl, false, words);
            CHECK(allowed[t] == want, "%s: lazy pattern after \"%s\": token \"%s\": gramask %s",
                  name, prefix, p, allowed[t] ? "allows" : "rejects");
            if (!allowed[t]) {
                rejected++;
                continue;
            }
            boundary++;
            struct llama_sampler *gc = llama_sampler_clone(gs), *lc = llama_sampler_clone(ls);
            llama_sampler_accept(gc, t);
            llama_sampler_accept(lc, t);
            wrong += mask_diff(v, gc, lc, d1, d2, both, name);
            llama_sampler_free(gc);
            llama_sampler_free(lc);
        }
        free(allowed);
    }
    /* The call itself, step by step after the trigger. */
    const char *call[] = {">{", "ab", "c", "}"};
    for (size_t s = 0; gs && ls && s < sizeof call / sizeof *call; s++) {
        llama_token ids[64];
        int32_t k = tokenize(v, call[s], ids, 64);
        for (int32_t i = 0; i < k; i++) {
            llama_sampler_accept(gs, ids[i]);
            llama_sampler_accept(ls, ids[i]);
        }
        wrong += mask_diff(v, gs, ls, d1, d2, call[s], name);
        steps++;
    }
    CHECK(wrong == 0, "%s: lazy pattern: %u tokens differ from llama.cpp", name, wrong);
    CHECK(boundary > 0, "%s: lazy pattern: no token completed the trigger", name);
    printf("%s: lazy pattern %s vs llama.cpp: %u trigger-completing tokens allowed and compared "
           "after, %u rejected (no prefix of the call), %u steps of the call, %u differences\n",
           name, pattern, boundary, rejected, steps, wrong);
    free(d1);
    free(d2);
    if (gs)
        llama_sampler_free(gs);
    if (ls)
        llama_sampler_free(ls);
}

static void test_lazy_pattern_diff(const struct llama_vocab *v, const char *name)
{
    const char *const one[] = {TRIGGER, NULL};
    const char *const texts1[] = {"Sure, calling it", " <", "tool", "_", "call"};
    lazy_pattern_diff(v, name, LAZY_PATTERNS[0], "root ::= \"<tool_call>\" \"{\" [a-z]+ \"}\"\n",
                      one, texts1, sizeof texts1 / sizeof *texts1);
    const char *const two[] = {TRIGGER, "<fn>", NULL};
    const char *const texts2[] = {"Sure: <", "f", "n"};
    lazy_pattern_diff(v, name, "[\\s\\S]*?(<tool_call>|<fn>)[\\s\\S]*",
                      "root ::= (\"<tool_call>\" | \"<fn>\") \"{\" [a-z]+ \"}\"\n", two, texts2,
                      sizeof texts2 / sizeof *texts2);
}

/*
 * Only what is not regular or not implemented is refused (note [ecma dialect]
 * in ecma_regex.c), with the pattern, the offset and the construct named;
 * general forms are taken (test_llama_trigger.c checks them against
 * llama.cpp).
 */
static void test_lazy_pattern_refused(const struct llama_vocab *v, const char *name)
{
    const char *grammar = "root ::= \"<tool_call>\" \"{\" [a-z]+ \"}\"\n";
    const struct {
        const char *pattern;
        gm_status code;
    } refused[] = {
        {"[\\s\\S]*?(<tool_call>)\\1", GM_ERR_UNSUPPORTED}, /* backreference */
        {"(?=<tool_call>)<tool_call>", GM_ERR_UNSUPPORTED},    /* lookahead */
        {"(?!x)<tool_call>", GM_ERR_UNSUPPORTED},
        {"\\b<tool_call>", GM_ERR_UNSUPPORTED},                 /* word boundary */
        {"(\\s*)*<tool_call>", GM_ERR_UNSUPPORTED},              /* a loop that can run empty */
        {"[[:alpha:]]<tool_call>", GM_ERR_UNSUPPORTED},          /* POSIX class */
        {"\\q<tool_call>", GM_ERR_UNSUPPORTED},                 /* an escape of a letter */
        {"[\\s\\S]*?(<tool_call>", GM_ERR_SYNTAX},             /* unclosed */
        {"<tool_call>)", GM_ERR_SYNTAX},
        {"*<tool_call>", GM_ERR_SYNTAX},
        {"<tool_call>[a-", GM_ERR_SYNTAX},
        {"<tool_call>x{1001}", GM_ERR_LIMIT},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        gm_error err;
        gm_error_clear(&err);
        const char *p = refused[i].pattern;
        struct llama_sampler *s =
            gm_llama_sampler_init_lazy_patterns(v, grammar, "root", &p, 1, NULL, 0, &err);
        CHECK(s == NULL && err.code == refused[i].code && strstr(err.message, p) &&
                  strstr(err.message, "offset"),
              "%s: trigger pattern \"%s\" is not refused as expected (%s)", name, p, err.message);
        if (s)
            llama_sampler_free(s);
        else if (i == 0)
            printf("%s: refused pattern: %s\n", name, err.message);
    }
    /* Forms the literal-word reading refused are taken now. */
    const char *taken[] = {
        ".*?(<tool_call>).*", "[\\s\\S]*(<tool_call>)[\\s\\S]*", "[\\s\\S]*?(<tool_call>\\s*\\{)",
        "[\\s\\S]*?(<tool_call>)x", "^(<tool_call>)[\\s\\S]*", "[\\s\\S]*?(<tool_call>)$",
        "[\\s\\S]*?((?:<tool_call>))", "[\\s\\S]*?(<tool_call>|)", "<tool_call>+", "",
        "[\\s\\S]*?(abab)[\\s\\S]*",
    };
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
        gm_error err;
        gm_error_clear(&err);
        struct llama_sampler *s =
            gm_llama_sampler_init_lazy_patterns(v, grammar, "root", &taken[i], 1, NULL, 0, &err);
        CHECK(s != NULL, "%s: trigger pattern \"%s\" refused: %s", name, taken[i], err.message);
        if (s)
            llama_sampler_free(s);
    }
    /* Pattern order decides, as in llama.cpp: with "b" first, "ab" starts the grammar at "b". */
    const char *ba[] = {"b", "a"}, *ab[] = {"a", "b"};
    const char *g2 = "root ::= (\"b\" | \"ax\") [a-z]*\n";
    gm_error err;
    struct llama_sampler *s1 = gm_llama_sampler_init_lazy_patterns(v, g2, "root", ba, 2, NULL, 0, &err);
    struct llama_sampler *s2 = gm_llama_sampler_init_lazy_patterns(v, g2, "root", ab, 2, NULL, 0, &err);
    CHECK(s1 && s2, "%s: patterns b, a: %s", name, err.message);
    llama_token ids2[4];
    if (s1 && s2 && lu_spell(v, "ab", ids2, 4) == 1) {
        CHECK(allows_text(v, s1, "ab"), "%s: patterns b, a: \"ab\" starts the grammar at b", name);
        CHECK(!allows_text(v, s2, "ab"), "%s: patterns a, b: \"ab\" starts it at a: rejected", name);
    }
    if (s1)
        llama_sampler_free(s1);
    if (s2)
        llama_sampler_free(s2);
}

/* Trigger tokens: a control token starts the call (phi-3's <|user|>-like tokens). */
static void test_lazy_token(const struct llama_vocab *v, const char *name)
{
    int32_t n = llama_vocab_n_tokens(v);
    llama_token trig = -1;
    char p[256];
    for (int32_t t = 0; t < n && trig < 0; t++)
        if ((llama_vocab_get_attr(v, t) & LLAMA_TOKEN_ATTR_CONTROL) && !llama_vocab_is_eog(v, t) &&
            piece(v, t, p, sizeof p) > 2 && p[0] == '<' && !strchr(p, '"') && !strchr(p, '\\'))
            trig = t;
    if (trig < 0) {
        printf("%s: no control token for the trigger-token test\n", name);
        return;
    }
    piece(v, trig, p, sizeof p);
    char grammar[512];
    snprintf(grammar, sizeof grammar, "root ::= <\"%s\"> \"{\" [a-z]+ \"}\"\n", p);
    /* Both constructors: trigger words/tokens, and llama.cpp's patterns (with
       one pattern that never matches here, so the token alone triggers). */
    const char *never = "<never>";
    for (int form = 0; form < 2; form++) {
        gm_error err;
        struct llama_sampler *gs =
            form == 0 ? gm_llama_sampler_init_lazy(v, grammar, "root", NULL, 0, &trig, 1, &err)
                      : gm_llama_sampler_init_lazy_patterns(v, grammar, "root", &never, 1, &trig, 1, &err);
        CHECK(gs != NULL, "%s: lazy token (%s): %s", name, form ? "patterns" : "words", err.message);
        if (!gs)
            return;
        llama_token_data *data = malloc((size_t)n * sizeof *data);
        uint64_t rng = 9;
        llama_token ids[64];
        int32_t k = tokenize(v, "Free text, no trigger: <tool>", ids, 64);
        for (int32_t i = 0; i < k; i++)
            llama_sampler_accept(gs, ids[i]);
        llama_token_data_array a = lu_random_candidates(data, n, &rng);
        llama_sampler_apply(gs, &a);
        CHECK(isfinite(data[trig].logit), "%s: the trigger token is allowed in free text", name);
        unsigned free_allowed = 0;
        for (int32_t t = 0; t < n; t++)
            free_allowed += isfinite(data[t].logit);
        llama_sampler_accept(gs, trig);
        a = lu_random_candidates(data, n, &rng);
        llama_sampler_apply(gs, &a);
        unsigned after = 0, wrong = 0;
        for (int32_t t = 0; t < n; t++) {
            bool got = isfinite(data[t].logit);
            int32_t pl = piece(v, t, p, sizeof p);
            bool special = llama_vocab_get_attr(v, t) &
                           (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_UNUSED);
            bool want = !special && !llama_vocab_is_eog(v, t) && pl >= 1 && p[0] == '{';
            for (int32_t i = 1; want && i < pl; i++)
                want = (p[i] >= 'a' && p[i] <= 'z') || (i == pl - 1 && p[i] == '}' && i > 1);
            after += got;
            wrong += got != want;
        }
        CHECK(wrong == 0 && after > 0, "%s: after the trigger token %u masks differ (%u allowed)", name,
              wrong, after);
        printf("%s: lazy trigger token %d (%s): %u tokens allowed before it, %u after\n", name, trig,
               form ? "patterns" : "words", free_allowed, after);
        free(data);
        llama_sampler_free(gs);
    }
}

/* Whether the one token spelling text (lu_spell) survives smpl's apply. */
static bool allows_text(const struct llama_vocab *v, struct llama_sampler *smpl, const char *text)
{
    llama_token id;
    if (lu_spell(v, text, &id, 1) != 1)
        return false;
    llama_token_data d = {id, 1.0f, 0.0f};
    llama_token_data_array a = {&d, 1, -1, false};
    llama_sampler_apply(smpl, &a);
    return isfinite(d.logit);
}

/* Other grammar kinds through gm_llama_sampler_init_grammar: JSON Schema (Earley) and Lark (LALR). */
static void test_other_grammars(const struct llama_vocab *v, const char *name)
{
    gm_error err;
    gm_grammar *g = NULL;
    const char schema[] = "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}}, "
                          "\"required\": [\"n\"], \"additionalProperties\": false}";
    CHECK(gm_grammar_from_json_schema(schema, strlen(schema), NULL, &g, &err) == GM_OK, "%s: %s",
          name, err.message);
    struct llama_sampler *s = g ? gm_llama_sampler_init_grammar(v, g, &err) : NULL;
    gm_grammar_destroy(g);
    CHECK(s != NULL, "%s: schema sampler: %s", name, err.message);
    if (s) {
        CHECK(allows_text(v, s, "{"), "%s: schema: '{' first", name);
        CHECK(!allows_text(v, s, "["), "%s: schema: '[' rejected", name);
        llama_sampler_free(s);
    }
    g = NULL;
    CHECK(gm_grammar_create_bundled("json", NULL, &g, &err) == GM_OK, "%s: %s", name, err.message);
    s = g ? gm_llama_sampler_init_grammar(v, g, &err) : NULL;
    gm_grammar_destroy(g);
    CHECK(s != NULL, "%s: Lark json sampler: %s", name, err.message);
    if (s) {
        CHECK(allows_text(v, s, "["), "%s: lark json: '[' allowed", name);
        CHECK(!allows_text(v, s, "}"), "%s: lark json: '}' rejected", name);
        llama_sampler_free(s);
    }
    /* Errors are reported, not crashes. */
    s = gm_llama_sampler_init_gbnf(v, "root ::= undefined-rule", "root", &err);
    CHECK(s == NULL && err.code != GM_OK && err.message[0], "%s: a bad grammar is an error", name);
    if (s)
        llama_sampler_free(s);
}

int main(void)
{
    lu_quiet_logs();
    llama_backend_init();
    const char *names[] = {"llama-spm", "gpt-2", "phi-3"};
    unsigned loaded = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        struct llama_model *m = lu_load_vocab(names[i]);
        if (!m) {
            fprintf(stderr, "FAIL: %s not loaded (GM_SHARED_DIR=%s)\n", names[i], lu_shared_dir());
            failures++;
            continue;
        }
        loaded++;
        const struct llama_vocab *v = llama_model_get_vocab(m);
        test_vocab(v, names[i]);
        test_cache_and_chain(v, names[i]);
        test_lazy(v, names[i], NULL);
        for (size_t p = 0; p < sizeof LAZY_PATTERNS / sizeof *LAZY_PATTERNS; p++)
            test_lazy(v, names[i], LAZY_PATTERNS[p]);
        test_lazy_pattern_diff(v, names[i]);
        test_lazy_pattern_refused(v, names[i]);
        test_lazy_token(v, names[i]);
        test_other_grammars(v, names[i]);
        llama_model_free(m);
    }
    llama_backend_free();
    printf("%u vocabularies, %d failures\n", loaded, failures);
    return failures ? 1 : 0;
}
