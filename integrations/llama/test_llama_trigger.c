/*
 * Lazy grammars with trigger patterns, differential against llama.cpp's own
 * lazy grammar sampler (llama_sampler_init_grammar_lazy_patterns), on the
 * patterns llama.cpp's chat code emits (CASES: each with its source) and on
 * generated texts, each spelled into tokens in two ways (longest pieces and
 * random pieces), so that tokens holding the end of the free text and the
 * start of the trigger, or the end of the trigger and more, come up.
 *
 * At every step both samplers see the same tokens. While llama.cpp awaits
 * its trigger it lets every token through; the gramask sampler must then
 * allow every text token except those on which llama.cpp's grammar would
 * fail right away (llama.cpp replays the text from the trigger into its
 * grammar and throws: the token is a dead end). The oracle for that is
 * llama.cpp itself, in a child process: fork, accept the token in a clone of
 * llama.cpp's sampler, and see whether the child dies. Once llama.cpp's
 * grammar has started, both masks must agree on every text token and the
 * end-of-generation tokens (control tokens aside: gramask-llama.h). So a
 * trigger at a different token, or a grammar started at a different offset,
 * shows up as a difference in the masks that follow. At free steps the
 * other tokens spelling the text's next bytes are tried too (clones of both
 * samplers accept them, then the masks are compared).
 *
 * Size: GM_LLAMA_TRIGGER_TEXTS texts per case [2], GM_LLAMA_TRIGGER_SEED [1],
 * GM_LLAMA_TRIGGER_VOCABS a comma list [llama-spm,gpt-2,phi-3].
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gramask-llama.h"
#include "lazy_patterns.h"
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

/*
 * The cases: patterns as common_sampler_init passes them to
 * llama_sampler_init_grammar_lazy_patterns (a WORD is regex_escape'd, a
 * PATTERN_FULL wrapped in ^...$), from llama.cpp's common/chat.cpp (the
 * shared snapshot holds no common/: read at ggml-org/llama.cpp's stored
 * versions of common/chat.cpp and common/sampling.cpp), a grammar that
 * begins where the trigger starts it, and text fragments to build outputs.
 */
typedef struct trig_case {
    const char *name;
    const char *source;
    const char *patterns[4];
    const char *grammar;
    const char *frags[16];
} trig_case;

#define ANY "[ -~\\n]*"
static const trig_case CASES[] = {
    {"hermes-2-pro",
     "chat.cpp common_chat_params_init_hermes_2_pro: {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "
     "\"(?:<think>[\\\\s\\\\S]*?</think>\\\\s*)?\" + \"\\\\s*((?:<tool_call>|<function|(?:```(?:json|xml)?"
     "\\n\\\\s*)?(?:<function_call>|<tools>|<xml><json>|<response>)?\\\\s*\\\\{\\\\s*\\\"name\\\"\\\\s*:"
     "\\\\s*\\\"(?:\" + string_join(escaped_names, \"|\") + \")\\\"))[\\\\s\\\\S]*\"}",
     {"^(?:<think>[\\s\\S]*?</think>\\s*)?\\s*((?:<tool_call>|<function|(?:```(?:json|xml)?\n\\s*)?"
      "(?:<function_call>|<tools>|<xml><json>|<response>)?\\s*\\{\\s*\"name\"\\s*:\\s*\"(?:get_weather|"
      "get_time)\"))[\\s\\S]*$"},
     "root ::= (\"<tool_call>\" [ \\n]*)? \"{\" [ \\n]* \"\\\"name\\\"\" [ \\n]* \":\" [ \\n]* "
     "\"\\\"get_\" [a-z]+ \"\\\"\" " ANY "\n",
     {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}", "<think>", "</think>", "\n", " ", "<tool_call>", "{\"name\": \"get_weather\"}",
      "{ \"name\" :\"get_time\"", "<function", "Sure.", "{\"name\": \"other\"}", "```json\n", NULL}},
    {"hermes-2-pro-thinking",
     "chat.cpp common_chat_params_init_hermes_2_pro, data.thinking_forced_open: "
     "\"[\\\\s\\\\S]*?(</think>\\\\s*)\" + the same tail",
     {"^[\\s\\S]*?(</think>\\s*)\\s*((?:<tool_call>|<function|(?:```(?:json|xml)?\n\\s*)?"
      "(?:<function_call>|<tools>|<xml><json>|<response>)?\\s*\\{\\s*\"name\"\\s*:\\s*\"(?:get_weather)\"))"
      "[\\s\\S]*$"},
     "root ::= \"</think>\" [ \\n]* (\"<tool_call>\" [ \\n]*)? \"{\" [ \\n]* \"\\\"name\\\"\" [ \\n]* \":\" "
     "[ \\n]* \"\\\"get_weather\\\"\" " ANY "\n",
     {"</think>\n<tool_call>{\"name\": \"get_weather\"}", "I think", "</think>", "\n\n", " ", "<tool_call>", "{\"name\": \"get_weather\"}", "</think",
      ">", "{\"name\": \"x\"}", NULL}},
    {"deepseek-r1",
     "chat.cpp common_chat_params_init_deepseek_r1: {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "
     "\"(?:<think>[\\\\s\\\\S]*?</think>\\\\s*)?\" + \"(<｜tool▁calls▁begin｜>|<｜tool_calls_begin｜>|"
     "<｜tool calls begin｜>|<｜tool\\\\\\\\_calls\\\\\\\\_begin｜>|<｜tool▁calls｜>)[\\\\s\\\\S]*\"}",
     {"^(?:<think>[\\s\\S]*?</think>\\s*)?(<｜tool▁calls▁begin｜>|<｜tool_calls_begin｜>|"
      "<｜tool calls begin｜>|<｜tool\\\\_calls\\\\_begin｜>|<｜tool▁calls｜>)[\\s\\S]*$"},
     "root ::= (\"<｜tool▁calls▁begin｜>\" | \"<｜tool_calls_begin｜>\" | \"<｜tool▁calls｜>\") "
     "\"<｜tool▁call▁begin｜>function\" " ANY "\n",
     {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f", "<think>", "ok", "</think>", "\n", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>function",
      "<｜tool calls begin｜>", "<｜tool▁calls｜>", "<｜", "x", NULL}},
    {"deepseek-r1-thinking",
     "chat.cpp common_chat_params_init_deepseek_r1, data.thinking_forced_open: "
     "\"[\\\\s\\\\S]*?(</think>\\\\s*)\" + the same group",
     {"^[\\s\\S]*?(</think>\\s*)(<｜tool▁calls▁begin｜>|<｜tool_calls_begin｜>|<｜tool calls begin｜>|"
      "<｜tool\\\\_calls\\\\_begin｜>|<｜tool▁calls｜>)[\\s\\S]*$"},
     "root ::= \"</think>\" [ \\n]* \"<｜tool▁calls▁begin｜>\" " ANY "\n",
     {"</think>\n\n<｜tool▁calls▁begin｜>{}", "thinking", "</think>", "\n", "<｜tool▁calls▁begin｜>", "<｜tool▁calls｜>", "</think>\n\n", "a",
      NULL}},
    {"nemotron-v2",
     "chat.cpp common_chat_params_init_nemotron_v2: {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "
     "\"(?:<think>[\\\\s\\\\S]*?</think>\\\\s*)?\" + \"(<TOOLCALL>)[\\\\s\\\\S]*\"}",
     {"^(?:<think>[\\s\\S]*?</think>\\s*)?(<TOOLCALL>)[\\s\\S]*$"},
     "root ::= \"<TOOLCALL>\" \"[\" " ANY "\n",
     {"<TOOLCALL>[{\"name\": \"f\"}]", "<think>", "hm", "</think>", " ", "<TOOLCALL>", "[{\"name\":1}]", "<TOOL", "CALL>", "x", NULL}},
    {"gpt-oss",
     "chat.cpp common_chat_params_init_gpt_oss: {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN, "
     "\"<\\\\|channel\\\\|>(commentary|analysis) to\"}, {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "
     "\"^ to\"}, {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN, \"<\\\\|start\\\\|>assistant to\"}",
     {"<\\|channel\\|>(commentary|analysis) to", "^ to$", "<\\|start\\|>assistant to"},
     "root ::= (\"commentary\" | \"analysis\" | \"<|start|>assistant\")? \" to=functions.\" [a-z_]+ "
     ANY "\n",
     {"<|channel|>commentary to=functions.get_weather <|constrain|>json", "<|channel|>", "commentary", "analysis", " to", "=functions.get", " to=functions.f",
      "<|start|>assistant", "final", "<|message|>", "hi", NULL}},
    {"lfm2",
     "chat.cpp common_chat_params_init_lfm2: {COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "
     "\"\\\\s*<\\\\|tool_call_start\\\\|>\\\\s*\\\\[\"}",
     {"^\\s*<\\|tool_call_start\\|>\\s*\\[$"},
     "root ::= [ \\n]* \"<|tool_call_start|>\" [ \\n]* \"[\" [a-z(),= \"]* \"]<|tool_call_end|>\"\n",
     {"<|tool_call_start|>[get(a=1)]<|tool_call_end|>", "<|tool_call_start|>", "[", " ", "\n", "get(a=1)", "]<|tool_call_end|>", "[f()", "text", NULL}},
    {"function-name",
     "chat.cpp (function tags): {COMMON_GRAMMAR_TRIGGER_TYPE_WORD, \"<function=\" + name + \">\"}, "
     "{COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN, \"<function\\\\s+name\\\\s*=\\\\s*\\\"\" + "
     "regex_escape(name) + \"\\\"\"}",
     {"<function=get_weather>", "<function\\s+name\\s*=\\s*\"get_weather\""},
     "root ::= \"<function\" ([ \\n]+ \"name\" [ \\n]* \"=\" [ \\n]* \"\\\"get_weather\\\"\" | "
     "\"=get_weather>\") \"{\" " ANY "\n",
     {"<function=get_weather>{\"city\": \"Paris\"}", "<function", "=get_weather>", " name = \"get_weather\"", "{\"a\": 1}", "Let me see. ", "<func",
      "tion", " ", NULL}},
    {"order-and-boundaries",
     "not from a template: the first pattern wins even when a later one matches earlier "
     "(llama_grammar_accept_impl tries them in order), and a trigger seen only at a token's end",
     {"b", "a", "^x[\\s\\S]*y$"},
     "root ::= (\"a\" | \"b\" | \"x\") [a-z]*\n",
     {"xaby", "a", "b", "ab", "x", "y", "xy", "c", NULL}},
};
#define N_CASES (sizeof CASES / sizeof *CASES)

/* ---- token pieces ---------------------------------------------------------- */

typedef struct pieces {
    int32_t n;
    char **p;
    int32_t *len;
    bool *text; /* not EOG, control, unknown or unused */
    int32_t *order; /* text tokens by first byte, longest first */
    int32_t first[257];
} pieces;

static const pieces *sort_ps;
static int by_first_then_longest(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    unsigned char fx = (unsigned char)sort_ps->p[x][0], fy = (unsigned char)sort_ps->p[y][0];
    if (fx != fy)
        return fx < fy ? -1 : 1;
    if (sort_ps->len[x] != sort_ps->len[y])
        return sort_ps->len[x] > sort_ps->len[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void pieces_load(pieces *ps, const struct llama_vocab *v)
{
    ps->n = llama_vocab_n_tokens(v);
    ps->p = calloc((size_t)ps->n, sizeof *ps->p);
    ps->len = calloc((size_t)ps->n, sizeof *ps->len);
    ps->text = calloc((size_t)ps->n, sizeof *ps->text);
    char buf[256];
    for (int32_t t = 0; t < ps->n; t++) {
        int32_t pl = llama_token_to_piece(v, t, buf, sizeof buf, 0, true);
        ps->text[t] = pl > 0 && buf[0] != 0 && !llama_vocab_is_eog(v, t) &&
                      !(llama_vocab_get_attr(v, t) & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                                                      LLAMA_TOKEN_ATTR_UNUSED));
        if (pl > 0 && (ps->p[t] = malloc((size_t)pl))) {
            memcpy(ps->p[t], buf, (size_t)pl);
            ps->len[t] = pl;
        } else {
            ps->text[t] = false;
        }
    }
    ps->order = malloc((size_t)ps->n * sizeof *ps->order);
    int32_t k = 0;
    for (int32_t t = 0; t < ps->n; t++)
        if (ps->text[t])
            ps->order[k++] = t;
    sort_ps = ps;
    qsort(ps->order, (size_t)k, sizeof *ps->order, by_first_then_longest);
    int32_t i = 0;
    for (int c = 0; c < 256; c++) {
        ps->first[c] = i;
        while (i < k && (unsigned char)ps->p[ps->order[i]][0] == c)
            i++;
    }
    ps->first[256] = k;
}

static void pieces_free(pieces *ps)
{
    for (int32_t t = 0; t < ps->n; t++)
        free(ps->p[t]);
    free(ps->p);
    free(ps->len);
    free(ps->text);
    free(ps->order);
}

/* Text tokens whose piece starts text[0..len): up to cap of them, the longest first. */
static int32_t prefixes(const pieces *ps, const char *text, size_t len, llama_token *out, int32_t cap)
{
    int32_t k = 0;
    if (len == 0)
        return 0;
    unsigned char c = (unsigned char)text[0];
    for (int32_t i = ps->first[c]; i < ps->first[c + 1] && k < cap; i++) {
        int32_t t = ps->order[i];
        if ((size_t)ps->len[t] <= len && !memcmp(ps->p[t], text, (size_t)ps->len[t]))
            out[k++] = t;
    }
    return k;
}

/* ---- the oracle ------------------------------------------------------------ */

/* Whether llama.cpp's sampler survives accepting token t (in a child process). */
static bool llama_takes(struct llama_sampler *ls, llama_token t)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return true;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        llama_sampler_accept(ls, t);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Whether llama.cpp survives token t, asked only when gramask's sampler
 * would start its grammar on t (otherwise llama.cpp has no grammar to fail
 * in, and a trigger gramask missed shows in the masks that follow).
 */
static bool llama_takes_if_trigger(struct llama_sampler *gs, struct llama_sampler *ls, llama_token t)
{
    struct llama_sampler *c = llama_sampler_clone(gs);
    bool was = gm_llama_lazy_patterns_triggered(gs);
    llama_sampler_accept(c, t);
    bool now = gm_llama_lazy_patterns_triggered(c);
    llama_sampler_free(c);
    return was || !now || llama_takes(ls, t);
}

typedef struct totals {
    unsigned texts, steps, free_steps, grammar_steps, triggered, boundary, dead_checked, alt_checked;
    unsigned wrong;
} totals;

/*
 * Compares the samplers' masks now (see the top). Returns the number of
 * differences; *llama_free tells whether llama.cpp still awaits its trigger.
 */
static unsigned compare_masks(const struct llama_vocab *v, const pieces *ps,
                              struct llama_sampler *gs, struct llama_sampler *ls,
                              llama_token_data *d1, llama_token_data *d2, uint64_t *rng,
                              const char *what, totals *tot, bool *llama_free)
{
    int32_t n = ps->n;
    uint64_t r = *rng;
    llama_token_data_array a1 = lu_random_candidates(d1, n, rng);
    llama_token_data_array a2 = lu_random_candidates(d2, n, &r);
    llama_sampler_apply(gs, &a1);
    llama_sampler_apply(ls, &a2);
    bool lfree = true;
    for (int32_t t = 0; t < n && lfree; t++)
        if (ps->text[t] && !isfinite(d2[t].logit))
            lfree = false;
    *llama_free = lfree;
    unsigned wrong = 0, dead = 0;
    for (int32_t t = 0; t < n; t++) {
        bool eog = llama_vocab_is_eog(v, t);
        if (!ps->text[t] && !eog)
            continue; /* control tokens: gramask-llama.h */
        bool g = isfinite(d1[t].logit), l = isfinite(d2[t].logit);
        if (g == l)
            continue;
        if (lfree && !g && !eog) {
            /* gramask calls t a dead end: llama.cpp's grammar must fail on it */
            if (dead++ < 2) {
                tot->dead_checked++;
                if (!llama_takes(ls, t))
                    continue;
            } else {
                continue;
            }
        }
        if (wrong++ < 4)
            fprintf(stderr, "  %s: token %d \"%.*s\": gramask %s, llama.cpp %s (llama.cpp %s)\n", what,
                    t, ps->len[t], ps->p[t] ? ps->p[t] : "", g ? "allows" : "rejects",
                    l ? "allows" : "rejects", lfree ? "awaits its trigger" : "in its grammar");
    }
    return wrong;
}

/* Spells text into ids: longest pieces (random = false) or a random prefix piece each time. */
static int32_t spell(const pieces *ps, const char *text, bool random, uint64_t *rng,
                     llama_token *out, int32_t cap)
{
    size_t pos = 0, len = strlen(text);
    int32_t k = 0;
    while (pos < len && k < cap) {
        llama_token c[8];
        int32_t m = prefixes(ps, text + pos, len - pos, c, random ? 8 : 1);
        if (m == 0)
            return -1;
        llama_token t = c[random ? lu_rand(rng) % (uint64_t)m : 0];
        out[k++] = t;
        pos += (size_t)ps->len[t];
    }
    return k;
}

static void run_text(const struct llama_vocab *v, const pieces *ps, const trig_case *c,
                     const char *vname, const char *text, bool random, uint64_t *rng, totals *tot)
{
    size_t np = 0;
    while (np < 4 && c->patterns[np])
        np++;
    gm_error err;
    gm_error_clear(&err);
    struct llama_sampler *gs =
        gm_llama_sampler_init_lazy_patterns(v, c->grammar, "root", c->patterns, np, NULL, 0, &err);
    const char *pats[4] = {c->patterns[0], c->patterns[1], c->patterns[2], c->patterns[3]};
    struct llama_sampler *ls =
        llama_sampler_init_grammar_lazy_patterns(v, c->grammar, "root", pats, np, NULL, 0);
    CHECK(gs && ls, "%s/%s: samplers not created (gramask: %s; llama.cpp %p)", vname, c->name,
          gs ? "ok" : err.message, (void *)ls);
    if (!gs || !ls) {
        if (gs)
            llama_sampler_free(gs);
        if (ls)
            llama_sampler_free(ls);
        return;
    }
    llama_token ids[256];
    int32_t k = spell(ps, text, random, rng, ids, 256);
    int32_t n = ps->n;
    llama_token_data *d1 = malloc((size_t)n * sizeof *d1), *d2 = malloc((size_t)n * sizeof *d2);
    tot->texts++;
    size_t pos = 0, len = strlen(text);
    unsigned after = 0;
    char what[160];
    for (int32_t i = 0; i < k && after < 3; i++) {
        bool lfree;
        snprintf(what, sizeof what, "%s/%s after \"%.*s\"", vname, c->name, (int)pos, text);
        unsigned w = compare_masks(v, ps, gs, ls, d1, d2, rng, what, tot, &lfree);
        tot->steps++;
        tot->wrong += w;
        CHECK(w == 0, "%s: %u differences", what, w);
        if (lfree) {
            tot->free_steps++;
            /* The other tokens spelling the next bytes: boundary tokens among them. */
            llama_token alt[2];
            bool alt_ok[2];
            int32_t na = prefixes(ps, text + pos, len - pos, alt, 2);
            for (int32_t j = 0; j < na; j++)
                alt_ok[j] = isfinite(d1[alt[j]].logit);
            for (int32_t j = 0; j < na; j++) {
                llama_token t = alt[j];
                if (t == ids[i])
                    continue;
                bool g = alt_ok[j];
                tot->alt_checked++;
                if (!g) {
                    CHECK(!llama_takes(ls, t), "%s: gramask rejects \"%.*s\", llama.cpp takes it",
                          what, ps->len[t], ps->p[t]);
                    continue;
                }
                if (!llama_takes_if_trigger(gs, ls, t)) {
                    CHECK(false, "%s: gramask allows \"%.*s\", llama.cpp's grammar fails on it",
                          what, ps->len[t], ps->p[t]);
                    continue;
                }
                struct llama_sampler *gc = llama_sampler_clone(gs), *lc = llama_sampler_clone(ls);
                llama_sampler_accept(gc, t);
                llama_sampler_accept(lc, t);
                char w2[200];
                snprintf(w2, sizeof w2, "%s + \"%.*s\"", what, ps->len[t], ps->p[t]);
                bool lf2;
                unsigned ww = compare_masks(v, ps, gc, lc, d1, d2, rng, w2, tot, &lf2);
                tot->wrong += ww;
                CHECK(ww == 0, "%s: %u differences", w2, ww);
                if (!lf2)
                    tot->boundary++;
                llama_sampler_free(gc);
                llama_sampler_free(lc);
            }
        } else {
            tot->grammar_steps++;
            after++;
        }
        llama_token t = ids[i];
        /* (the masks were recomputed for the alternatives: ask gramask again) */
        llama_token_data one = {t, 0.0f, 0.0f};
        llama_token_data_array a = {&one, 1, -1, false};
        llama_sampler_apply(gs, &a);
        bool g = isfinite(one.logit);
        bool l = g ? llama_takes_if_trigger(gs, ls, t) : llama_takes(ls, t);
        CHECK(g == l || !lfree, "%s: next token \"%.*s\": gramask %s, llama.cpp %s", what,
              ps->len[t], ps->p[t], g ? "allows" : "rejects", l ? "takes" : "fails on");
        if (!g || !l)
            break;
        llama_sampler_accept(gs, t);
        llama_sampler_accept(ls, t);
        pos += (size_t)ps->len[t];
    }
    if (after)
        tot->triggered++;
    CHECK(gm_llama_sampler_rejected(gs) == 0, "%s/%s: gramask rejected an accepted token", vname,
          c->name);
    free(d1);
    free(d2);
    llama_sampler_free(gs);
    llama_sampler_free(ls);
}

/*
 * Text i from the case's fragments: random ones, with the first fragment (a
 * whole call) first (i % 3 == 0), second (i % 3 == 1) or anywhere.
 */
static void make_text(const trig_case *c, unsigned i_text, uint64_t *rng, char *out, size_t cap)
{
    size_t nf = 0;
    while (nf < 16 && c->frags[nf])
        nf++;
    size_t len = 0, parts = 2 + lu_rand(rng) % 5;
    bool call = i_text % 3 != 2, lead = i_text % 3 == 1;
    out[0] = 0;
    for (size_t i = 0; i < parts; i++) {
        const char *f = c->frags[lu_rand(rng) % nf];
        if (call && i == (lead ? 1u : 0u))
            f = c->frags[0];
        size_t fl = strlen(f);
        if (len + fl + 1 >= cap)
            break;
        memcpy(out + len, f, fl + 1);
        len += fl;
    }
}

static unsigned env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s && *s ? (unsigned)strtoul(s, NULL, 10) : dflt;
}

int main(void)
{
    /* llama.cpp's grammar throws on a dead end; in the oracle's child that
       ends the process, and ggml would print a backtrace with gdb first. */
    setenv("GGML_NO_BACKTRACE", "1", 1);
    lu_quiet_logs();
    llama_backend_init();
    unsigned n_texts = env_uint("GM_LLAMA_TRIGGER_TEXTS", 2);
    uint64_t seed = env_uint("GM_LLAMA_TRIGGER_SEED", 1);
    const char *vl = getenv("GM_LLAMA_TRIGGER_VOCABS");
    char vocabs[256];
    snprintf(vocabs, sizeof vocabs, "%s", vl && *vl ? vl : "llama-spm,gpt-2,phi-3");
    unsigned loaded = 0;
    for (char *name = strtok(vocabs, ","); name; name = strtok(NULL, ",")) {
        struct llama_model *m = lu_load_vocab(name);
        if (!m) {
            fprintf(stderr, "FAIL: %s not loaded (GM_SHARED_DIR=%s)\n", name, lu_shared_dir());
            failures++;
            continue;
        }
        loaded++;
        const struct llama_vocab *v = llama_model_get_vocab(m);
        pieces ps;
        pieces_load(&ps, v);
        for (size_t ci = 0; ci < N_CASES; ci++) {
            const trig_case *c = &CASES[ci];
            totals tot = {0};
            uint64_t rng = seed * 7919 + ci;
            for (unsigned i = 0; i < n_texts; i++) {
                char text[512];
                make_text(c, i, &rng, text, sizeof text);
                run_text(v, &ps, c, name, text, false, &rng, &tot);
                run_text(v, &ps, c, name, text, true, &rng, &tot);
            }
            printf("%s %-22s %2u texts, %4u steps (%u free, %u in the grammar), %u texts triggered, "
                   "%u boundary tokens compared after, %u alternatives, %u dead ends confirmed by "
                   "llama.cpp, %u differences\n",
                   name, c->name, tot.texts, tot.steps, tot.free_steps, tot.grammar_steps,
                   tot.triggered, tot.boundary, tot.alt_checked, tot.dead_checked, tot.wrong);
        }
        pieces_free(&ps);
        llama_model_free(m);
    }
    llama_backend_free();
    printf("%u vocabularies, %d failures\n", loaded, failures);
    return failures ? 1 : 0;
}
