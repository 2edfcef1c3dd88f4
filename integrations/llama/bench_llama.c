/*
 * Per token, llama.cpp's grammar sampler against gramask's, both applied to
 * the whole vocabulary (as common_sampler_sample's resampling path and
 * llama-server with grammar_first do) and then given the token: json.gbnf
 * over JSON files of GM_SHARED_DIR/corpus/json that json.gbnf accepts, and
 * c.gbnf over a C text within its subset, each text as the tokens that spell it
 * (lu_spell: longest token first; llama_tokenize would add SentencePiece's
 * space prefix, which the grammars reject). Reports the mean time per token of
 * each, the ratio, and the heap each sampler holds (glibc mallinfo2: what
 * creating it and running the text left allocated, vocabulary included).
 * Vocabularies: GM_LLAMA_BENCH_VOCABS [llama-spm,deepseek-llm]; tokens per
 * grammar: GM_LLAMA_BENCH_TOKENS [400].
 * Lazy: llama.cpp's lazy-pattern sampler against gramask's, with the Hermes 2
 * Pro trigger pattern llama.cpp's chat code emits when thinking is forced
 * open (test_llama_trigger.c), on reasoning of about GM_LLAMA_BENCH_TOKENS
 * tokens and then </think> and a tool call: per
 * token while awaiting the trigger (llama.cpp runs its regex over the whole
 * text after each token; gramask's mask drops the tokens that would start
 * the grammar wrongly) and overall.
 */
#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gramask-llama.h"
#include "llama_util.h"

static const char C_TEXT[] =
    "int add(int a){return a+1;}"
    "int square(int x){int y = x*x;return y;}"
    "float mean(float total){float n = 4;return total/n;}"
    "int main(){int i = 0;int sum = 0;"
    "for(i = 0; i<10; i = i+1){sum = sum+square(i);}"
    "while(sum>100){sum = sum-add(sum);}"
    "if(sum==42){print (sum);}else{print (0);}"
    "// done\n"
    "return sum;}";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t heap(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

typedef struct result {
    unsigned tokens;
    double ms;
    size_t bytes;
} result;

/* Runs ids[0..n) through smpl (already created; heap0 the heap before it). */
static bool run(struct llama_sampler *smpl, const llama_token *ids, int32_t n, int32_t nv,
                llama_token_data *data, llama_token_data *fresh, size_t heap0, result *r)
{
    for (int32_t i = 0; i < n; i++) {
        memcpy(data, fresh, (size_t)nv * sizeof *data);
        llama_token_data_array a = {data, (size_t)nv, -1, false};
        double t0 = now_ms();
        llama_sampler_apply(smpl, &a);
        bool ok = isfinite(data[ids[i]].logit);
        if (ok)
            llama_sampler_accept(smpl, ids[i]);
        r->ms += now_ms() - t0;
        if (!ok)
            return false;
        r->tokens++;
    }
    size_t h = heap();
    r->bytes = h > heap0 ? h - heap0 : 0;
    return true;
}

static void bench(const struct llama_vocab *vocab, const char *vname, const char *gname,
                  const char *grammar, char **texts, size_t ntexts, int32_t max_tokens)
{
    int32_t nv = llama_vocab_n_tokens(vocab);
    llama_token_data *data = malloc((size_t)nv * sizeof *data);
    llama_token_data *fresh = malloc((size_t)nv * sizeof *fresh);
    llama_token *ids = malloc(65536 * sizeof *ids);
    uint64_t rng = 3;
    lu_random_candidates(fresh, nv, &rng);
    result lr = {0}, gr = {0};
    double gm_create = 0;
    int32_t done = 0;
    unsigned used = 0;
    for (size_t t = 0; t < ntexts && done < max_tokens; t++) {
        int32_t n = lu_spell(vocab, texts[t], ids, max_tokens - done);
        if (n <= 0)
            continue;
        gm_error err;
        size_t h0 = heap();
        double c0 = now_ms();
        struct llama_sampler *gs = gm_llama_sampler_init_gbnf(vocab, grammar, "root", &err);
        gm_create += now_ms() - c0;
        result g1 = {0}, l1 = {0};
        if (!gs || !run(gs, ids, n, nv, data, fresh, h0, &g1)) {
            if (gs)
                llama_sampler_free(gs);
            continue; /* a text the grammar does not accept (or whose tokens it splits) */
        }
        size_t h1 = heap();
        struct llama_sampler *ls = llama_sampler_init_grammar(vocab, grammar, "root");
        bool lok = ls && run(ls, ids, n, nv, data, fresh, h1, &l1);
        if (ls)
            llama_sampler_free(ls);
        llama_sampler_free(gs);
        if (!lok) {
            printf("  %s/%s: llama.cpp rejected text %zu that gramask accepted\n", vname, gname, t);
            continue;
        }
        used++;
        done += n;
        lr.tokens += l1.tokens, lr.ms += l1.ms;
        gr.tokens += g1.tokens, gr.ms += g1.ms;
        if (l1.bytes > lr.bytes)
            lr.bytes = l1.bytes;
        if (g1.bytes > gr.bytes)
            gr.bytes = g1.bytes;
    }
    if (lr.tokens && gr.tokens) {
        double l = lr.ms / lr.tokens, g = gr.ms / gr.tokens;
        printf("| %s | %s | %u texts, %u tokens | %.2f ms | %.3f ms | %.0fx | %.1f MiB | %.1f MiB "
               "(creation %.0f ms per sampler) |\n",
               vname, gname, used, lr.tokens, l, g, g > 0 ? l / g : 0, lr.bytes / 1048576.0,
               gr.bytes / 1048576.0, gm_create / (used ? used : 1));
    } else {
        printf("| %s | %s | no text accepted by both | | | | | |\n", vname, gname);
    }
    free(data);
    free(fresh);
    free(ids);
}

static const char LAZY_PATTERN[] =
    "^[\\s\\S]*?(</think>\\s*)\\s*((?:<tool_call>|<function|(?:```(?:json|xml)?\n\\s*)?"
    "(?:<function_call>|<tools>|<xml><json>|<response>)?\\s*\\{\\s*\"name\"\\s*:\\s*\"(?:get_weather)\"))"
    "[\\s\\S]*$";
static const char LAZY_GRAMMAR[] =
    "root ::= \"</think>\" [ \\n]* (\"<tool_call>\" [ \\n]*)? \"{\" [ \\n]* \"\\\"name\\\"\" [ \\n]* \":\" [ \\n]* "
    "\"\\\"get_weather\\\"\" [ -~\\n]*\n";

static void bench_lazy(const struct llama_vocab *vocab, const char *vname, int32_t max_tokens)
{
    int32_t nv = llama_vocab_n_tokens(vocab);
    size_t cap = 64 * (size_t)max_tokens + 256;
    char *text = malloc(cap);
    llama_token *ids = malloc((4 * (size_t)max_tokens + 256) * sizeof *ids);
    llama_token_data *data = malloc((size_t)nv * sizeof *data);
    llama_token_data *fresh = malloc((size_t)nv * sizeof *fresh);
    uint64_t rng = 5;
    lu_random_candidates(fresh, nv, &rng);
    /* Reasoning (thinking forced open), then </think> and the call. */
    size_t len = 0;
    const char *words[] = {"Let me ", "look that up ", "for you; ", "the city is ", "Paris. "};
    for (unsigned i = 0; i < (unsigned)max_tokens / 3 && len + 32 < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s", words[i % 5]);
    size_t free_len = len;
    (void)snprintf(text + len, cap - len, "%s",
                   "</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}");
    int32_t n = lu_spell(vocab, text, ids, 4 * max_tokens + 256), n_free = 0;
    for (size_t at = 0; n_free < n; n_free++) { /* the tokens that end within the reasoning */
        char piece[256];
        int32_t pl = llama_token_to_piece(vocab, ids[n_free], piece, sizeof piece, 0, true);
        if (at + (size_t)(pl > 0 ? pl : 0) > free_len)
            break;
        at += (size_t)(pl > 0 ? pl : 0);
    }
    const char *pat = LAZY_PATTERN;
    gm_error err;
    size_t h0 = heap();
    double c0 = now_ms();
    struct llama_sampler *gs =
        gm_llama_sampler_init_lazy_patterns(vocab, LAZY_GRAMMAR, "root", &pat, 1, NULL, 0, &err);
    double created = now_ms() - c0;
    result gf = {0}, ga = {0}, lf = {0}, la = {0};
    bool gok = gs && run(gs, ids, n_free, nv, data, fresh, h0, &gf) &&
               run(gs, ids + n_free, n - n_free, nv, data, fresh, h0, &ga);
    if (!gs)
        printf("  %s: lazy: %s\n", vname, err.message);
    size_t h1 = heap();
    struct llama_sampler *ls =
        llama_sampler_init_grammar_lazy_patterns(vocab, LAZY_GRAMMAR, "root", &pat, 1, NULL, 0);
    bool lok = ls && run(ls, ids, n_free, nv, data, fresh, h1, &lf) &&
               run(ls, ids + n_free, n - n_free, nv, data, fresh, h1, &la);
    if (gok && lok && gf.tokens && lf.tokens)
        printf("| %s | lazy Hermes (thinking) | %u free tokens, then %u of the call | %.3f ms free, "
               "%.2f ms call | %.3f ms free, %.3f ms call | | %.1f MiB | %.1f MiB (creation %.0f ms) |\n",
               vname, gf.tokens, ga.tokens, lf.ms / lf.tokens, la.ms / (la.tokens ? la.tokens : 1),
               gf.ms / gf.tokens, ga.ms / (ga.tokens ? ga.tokens : 1), la.bytes / 1048576.0,
               ga.bytes / 1048576.0, created);
    else
        printf("| %s | lazy Hermes (thinking) | not accepted by both (gramask %d, llama.cpp %d) | | | | | |\n",
               vname, gok, lok);
    if (gs)
        llama_sampler_free(gs);
    if (ls)
        llama_sampler_free(ls);
    free(text);
    free(ids);
    free(data);
    free(fresh);
}

int main(void)
{
    lu_quiet_logs();
    llama_backend_init();
    const char *shared = lu_shared_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s/llama.cpp/grammars/json.gbnf", shared);
    char *json_g = lu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/llama.cpp/grammars/c.gbnf", shared);
    char *c_g = lu_read_file(path, NULL);
    if (!json_g || !c_g) {
        printf("bench_llama: no grammars under %s/llama.cpp/grammars\n", shared);
        return 0;
    }
    char *json_texts[64];
    size_t nj = 0;
    snprintf(path, sizeof path, "%s/corpus/json", shared);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) && nj < 64;) {
        if (e->d_name[0] == '.')
            continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        size_t len;
        char *t = lu_read_file(p, &len);
        if (t && len < 20000)
            json_texts[nj++] = t;
        else
            free(t);
    }
    if (d)
        closedir(d);
    const char *env = getenv("GM_LLAMA_BENCH_TOKENS");
    int32_t max_tokens = env ? atoi(env) : 400;
    env = getenv("GM_LLAMA_BENCH_VOCABS");
    char vocabs[256];
    snprintf(vocabs, sizeof vocabs, "%s", env ? env : "llama-spm,deepseek-llm");
    printf("| vocabulary | grammar | text | llama.cpp per token | gramask per token | ratio | "
           "llama.cpp heap | gramask heap |\n|---|---|---|---|---|---|---|---|\n");
    char *c_texts[] = {(char *)C_TEXT};
    for (char *save = NULL, *v = strtok_r(vocabs, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        struct llama_model *m = lu_load_vocab(v);
        if (!m)
            continue;
        const struct llama_vocab *vocab = llama_model_get_vocab(m);
        bench(vocab, v, "json.gbnf", json_g, json_texts, nj, max_tokens);
        bench(vocab, v, "c.gbnf", c_g, c_texts, 1, max_tokens);
        bench_lazy(vocab, v, max_tokens);
        llama_model_free(m);
    }
    for (size_t i = 0; i < nj; i++)
        free(json_texts[i]);
    free(json_g);
    free(c_g);
    llama_backend_free();
    return 0;
}
