/*
 * Differential test, step by step: llama.cpp's own grammar sampler
 * (llama_sampler_init_grammar) against gramask's (gm_llama_sampler_init_gbnf)
 * on the GBNF grammars of GM_SHARED_DIR/grammars/gbnf and llama.cpp's
 * grammars/, over the vocabulary-only GGUF files: the same random logits over
 * the whole vocabulary go to both, and the tokens left with a finite logit
 * must be the same at every step (the end-of-generation tokens included, so
 * the same steps may end). The continuation is sampled among the tokens both
 * allow. Differences are counted by kind; the one known kind is
 *   control: a control/unknown/unused token whose text the grammar matches
 *            (llama.cpp treats "<s>" as the text "<s>"; gramask never lets a
 *            special token stand for text, see gramask-llama.h)
 *   never-utf8: llama.cpp allows a token holding a byte that never occurs in
 *            UTF-8 (C0, C1, F5-FF): its decoder reads F5-FF as the lead of a
 *            4-byte sequence and its partial-character check finds the code
 *            points above U+10FFFF it would stand for "not excluded" by a
 *            negated class ([^"\\...] in json.gbnf). grammars/README.md: a
 *            grammar matches characters (UTF-8); no text holds such a byte,
 *            so gramask, which rejects it, is right;
 *   partial-negated: llama.cpp rejects a token that ends inside a UTF-8
 *            character ("\xc2", " \xe2\x80") where a negated class comes
 *            next: llama_grammar_match_partial_char returns "no" as soon as
 *            one excluded character (list.gbnf excludes U+0085 and U+2028)
 *            lies in the range the partial character may complete to, though
 *            others in that range (U+00A0, U+2022 '•') are allowed; gramask
 *            allows the token and is right ("- \xc2\xa0x\n" is a list item);
 * and any other difference fails the test, printed with the token's piece.
 * Size: GM_LLAMA_DIFF_STEPS steps per grammar and vocabulary [8],
 * GM_LLAMA_DIFF_VOCABS a comma list [all five], GM_LLAMA_DIFF_SEED [1].
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gramask-llama.h"
#include "llama_util.h"

typedef struct totals {
    unsigned runs, steps, ended, eog_steps, control, never_utf8, partial_negated, other;
    double llama_ms, gramask_ms;
} totals;

#include <time.h>
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void piece_of(const struct llama_vocab *vocab, llama_token t, char *buf, size_t cap)
{
    char raw[64];
    int32_t n = llama_token_to_piece(vocab, t, raw, sizeof raw, 0, true);
    size_t o = 0;
    for (int32_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)raw[i];
        o += (size_t)snprintf(buf + o, cap - o, c >= 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x", c);
    }
    buf[o] = 0;
}

/* Whether the piece holds a byte that never occurs in UTF-8. */
static bool never_utf8(const char *p, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == 0xC0 || c == 0xC1 || c >= 0xF5)
            return true;
    }
    return false;
}

/* Whether the piece ends inside a UTF-8 character (a lead byte, too few continuations). */
static bool ends_partial(const char *p, int32_t n)
{
    int32_t i = n - 1, cont = 0;
    while (i >= 0 && ((unsigned char)p[i] & 0xC0) == 0x80)
        i--, cont++;
    if (i < 0)
        return false;
    unsigned char lead = (unsigned char)p[i];
    int need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
    return cont < need;
}

static bool run_one(const struct llama_vocab *vocab, const char *vname, const char *gname,
                    const char *text, unsigned steps, uint64_t seed, totals *tot)
{
    gm_error err;
    gm_error_clear(&err);
    struct llama_sampler *ls = llama_sampler_init_grammar(vocab, text, "root");
    struct llama_sampler *gs = gm_llama_sampler_init_gbnf(vocab, text, "root", &err);
    if (!ls || !gs) {
        fprintf(stderr, "FAIL %s/%s: sampler not created (llama %p, gramask %p: %s)\n", vname,
                gname, (void *)ls, (void *)gs, err.message);
        if (ls)
            llama_sampler_free(ls);
        if (gs)
            llama_sampler_free(gs);
        return false;
    }
    int32_t n = llama_vocab_n_tokens(vocab);
    llama_token_data *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    llama_token *both = malloc((size_t)n * sizeof *both);
    uint64_t rng = seed;
    bool ok = true;
    char out[4096] = "";
    size_t out_len = 0;
    tot->runs++;
    for (unsigned step = 0; step < steps && ok; step++) {
        llama_token_data_array ca = lu_random_candidates(a, n, &rng);
        memcpy(b, a, (size_t)n * sizeof *a);
        llama_token_data_array cb = {b, (size_t)n, -1, false};
        double t0 = now_ms();
        llama_sampler_apply(ls, &ca);
        double t1 = now_ms();
        llama_sampler_apply(gs, &cb);
        tot->llama_ms += t1 - t0;
        tot->gramask_ms += now_ms() - t1;
        tot->steps++;
        size_t nboth = 0, neog = 0;
        unsigned shown = 0;
        for (int32_t t = 0; t < n; t++) {
            bool la = isfinite(a[t].logit), ga = isfinite(b[t].logit);
            if (la && ga) {
                if (llama_vocab_is_eog(vocab, t))
                    neog++;
                else
                    both[nboth++] = t;
                continue;
            }
            if (la == ga)
                continue;
            enum llama_token_attr attr = llama_vocab_get_attr(vocab, t);
            if (la && (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                               LLAMA_TOKEN_ATTR_UNUSED))) {
                tot->control++;
                continue;
            }
            char raw[256];
            int32_t rl = llama_token_to_piece(vocab, t, raw, sizeof raw, 0, true);
            if (la && rl > 0 && never_utf8(raw, rl)) {
                tot->never_utf8++;
                continue;
            }
            if (ga && rl > 0 && ends_partial(raw, rl)) {
                tot->partial_negated++;
                continue;
            }
            tot->other++;
            ok = false;
            if (shown++ < 8) {
                char p[256];
                piece_of(vocab, t, p, sizeof p);
                fprintf(stderr, "DIFF %s/%s step %u after \"%s\": token %d \"%s\" (attr 0x%x): "
                        "llama.cpp %s, gramask %s\n", vname, gname, step, out, t, p, attr,
                        la ? "allows" : "rejects", ga ? "allows" : "rejects");
            }
        }
        if (neog)
            tot->eog_steps++;
        if (!nboth) { /* only EOG (or nothing) left: the sequence ends here in both */
            tot->ended++;
            break;
        }
        llama_token pick = both[lu_rand(&rng) % nboth];
        llama_sampler_accept(ls, pick);
        llama_sampler_accept(gs, pick);
        if (gm_llama_sampler_rejected(gs)) {
            fprintf(stderr, "FAIL %s/%s: gramask rejected token %d it allowed\n", vname, gname, pick);
            ok = false;
        }
        char p[256];
        piece_of(vocab, pick, p, sizeof p);
        size_t pl = strlen(p);
        if (out_len + pl + 1 < sizeof out) {
            memcpy(out + out_len, p, pl + 1);
            out_len += pl;
        }
    }
    free(a);
    free(b);
    free(both);
    llama_sampler_free(ls);
    llama_sampler_free(gs);
    return ok;
}

/* The .gbnf files of dir, skipping any whose text is already in seen[]. */
static size_t collect(const char *dir, char **names, char **texts, size_t n, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return n;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".gbnf"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = lu_read_file(path, NULL);
        if (!text)
            continue;
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = !strcmp(texts[i], text);
        if (dup) {
            free(text);
            continue;
        }
        names[n] = strdup(path);
        texts[n++] = text;
    }
    closedir(d);
    return n;
}

int main(void)
{
    lu_quiet_logs();
    llama_backend_init();
    const char *shared = lu_shared_dir();
    const char *env = getenv("GM_LLAMA_DIFF_STEPS");
    unsigned steps = env ? (unsigned)atoi(env) : 8;
    env = getenv("GM_LLAMA_DIFF_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 1;
    env = getenv("GM_LLAMA_DIFF_VOCABS");
    char vocabs[512];
    snprintf(vocabs, sizeof vocabs, "%s", env ? env : "llama-spm,gpt-2,phi-3,starcoder,deepseek-llm");

    char *names[64], *texts[64];
    char dir[4096];
    size_t ng = 0;
    snprintf(dir, sizeof dir, "%s/grammars/gbnf", shared);
    ng = collect(dir, names, texts, ng, 64);
    snprintf(dir, sizeof dir, "%s/llama.cpp/grammars", shared);
    ng = collect(dir, names, texts, ng, 64);
    if (!ng) {
        printf("SKIP: no grammars under %s\n", shared);
        return 77;
    }
    totals tot = {0};
    bool ok = true;
    unsigned nv = 0;
    for (char *save = NULL, *v = strtok_r(vocabs, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        struct llama_model *model = lu_load_vocab(v);
        if (!model) {
            fprintf(stderr, "FAIL: vocabulary %s not loaded\n", v);
            ok = false;
            continue;
        }
        nv++;
        const struct llama_vocab *vocab = llama_model_get_vocab(model);
        for (size_t g = 0; g < ng; g++) {
            const char *base = strrchr(names[g], '/');
            ok &= run_one(vocab, v, base ? base + 1 : names[g], texts[g], steps,
                          seed * 1000003u + g * 7919u + nv, &tot);
        }
        llama_model_free(model);
    }
    printf("%u vocabularies x %zu grammars: %u runs, %u steps (%u with EOG allowed, %u ended), "
           "differences (token x step): %u control-token, %u never-utf8, %u partial-negated "
           "(known, explained above), %u other; apply on the full vocabulary: "
           "llama.cpp %.2f ms, gramask %.3f ms per step\n",
           nv, ng, tot.runs, tot.steps, tot.eog_steps, tot.ended, tot.control, tot.never_utf8,
           tot.partial_negated, tot.other,
           tot.steps ? tot.llama_ms / tot.steps : 0, tot.steps ? tot.gramask_ms / tot.steps : 0);
    for (size_t g = 0; g < ng; g++) {
        free(names[g]);
        free(texts[g]);
    }
    llama_backend_free();
    return ok ? 0 : 1;
}
