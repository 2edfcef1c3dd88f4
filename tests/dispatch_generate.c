/*
 * Random agent turns under a tool-call preset, for
 * tests/dispatch_generate_check.py (issue 17: random generation never
 * dead-ends; every generated call parses and validates).
 *
 *   dispatch_generate --tools FILE --format F --tokenizer DIR [--tool-choice
 *       auto|required|none|NAME] [--no-parallel] [--reasoning allowed|forced|
 *       forbidden] [--seed S] [-n N] [--max-tokens M] [--eos-prob P]
 *       [--goal TEXT]... [--free-text-bytes]
 *   dispatch_generate --sanitized      prints 1 when built with ASan, else 0
 *
 * --compare-unshared: the preset is also compiled as it was before the
 * grammar shared its parts (gm_stag_options.unshared: note [schema memo]
 * and note [shared alternatives] in dispatch/stag.c), and at every step of
 * every turn both masks and both accepting flags must be equal (exit 1 and
 * a "mismatch" count otherwise): the sharing changes the rules, never a mask.
 *
 * Each turn is drawn token by token from the public matcher's masks only:
 * every token taken is one the mask allows, and accepting it must succeed.
 * Uniform draws over a 128K-200K vocabulary would almost never write a
 * trigger or close a JSON string, so the draw is biased, never outside the
 * mask:
 *   - goals: now and then the sampler sets out to write one of the --goal
 *     texts (a tag's begin, an end string) and takes, while the mask allows
 *     one, a token that spells the goal's next bytes or runs past its end
 *     (which is how tokens straddling a tag boundary get drawn);
 *   - otherwise, a third of the time a uniform allowed token, else an
 *     allowed one-byte or special token, JSON's punctuation and special
 *     tokens weighted up (and whitespace down), so that strings and objects
 *     close;
 *   - EOS, when allowed, with probability P.
 * A dead end (no allowed token and no EOS) is reported and ends the turn.
 *
 * Output: one JSON line per turn, {"turn", "finished" (EOS or the end of
 * the grammar), "dead_end", "tokens", "parts": [["t", TEXT] | ["s",
 * SPECIAL]...]}; TEXT holds the bytes as UTF-8 where well formed and other
 * bytes as \udcXX (Python's surrogateescape). Then a summary line
 * {"summary": ..., "dead_ends": N, "rejected": N}. Exit status 1 on a dead
 * end or a token the mask allowed but the matcher rejected.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gramask.h"
#include "base/file.h"
#include "base/utf8.h"
#include "dispatch/stag.h"
#include "dispatch/tools.h"
#include "runtime/objects.h"
#include "runtime/stag_source.h"

enum { MAX_GOALS = 256, MAX_CAND = 4096 };

typedef struct gen {
    gm_vocab *vocab;
    const gm_vocab_data *vd;
    gm_matcher *m;
    uint32_t *mask;
    size_t words;
    gm_matcher *m2;           /* --compare-unshared: the unshared grammar's matcher, or NULL */
    uint32_t *mask2;
    uint64_t rng;
    double eos_prob;
    const char *goals[MAX_GOALS];
    size_t ngoals;
    uint32_t *onebyte;        /* one-byte and special tokens (the second draw) */
    size_t nonebyte;
    uint32_t *cand;           /* [MAX_CAND] candidates of a draw */
    double *weight;
} gen;

static uint64_t next_random(gen *g)
{
    uint64_t x = g->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return g->rng = x;
}

static double uniform(gen *g) { return (double)(next_random(g) >> 11) / 9007199254740992.0; }

static bool allowed(const gen *g, uint32_t t) { return (g->mask[t / 32] >> (t % 32)) & 1; }

static bool is_eos(const gen *g, uint32_t t) { return g->vd->flags[t] & GM_TOK_EOS; }

static void die(const char *what, const gm_error *err)
{
    fprintf(stderr, "dispatch_generate: %s%s%s\n", what, err ? ": " : "",
            err ? err->message : "");
    exit(2);
}

/* ---- draws ---------------------------------------------------------------- */

/* A uniform allowed token other than EOS, or UINT32_MAX. */
static uint32_t draw_uniform(gen *g)
{
    uint32_t n = g->vd->size;
    for (int k = 0; k < 64; k++) {
        uint32_t t = (uint32_t)(next_random(g) % n);
        if (allowed(g, t) && !is_eos(g, t))
            return t;
    }
    /* a sparse mask: count, then pick by rank */
    uint32_t count = 0;
    for (uint32_t t = 0; t < n; t++)
        count += allowed(g, t) && !is_eos(g, t);
    if (count == 0)
        return UINT32_MAX;
    uint32_t pick = (uint32_t)(next_random(g) % count);
    for (uint32_t t = 0; t < n; t++)
        if (allowed(g, t) && !is_eos(g, t) && pick-- == 0)
            return t;
    return UINT32_MAX;
}

/* An allowed one-byte or special token, punctuation and specials weighted up. */
static uint32_t draw_short(gen *g)
{
    size_t nc = 0;
    double total = 0;
    for (size_t k = 0; k < g->nonebyte && nc < MAX_CAND; k++) {
        uint32_t t = g->onebyte[k];
        if (!allowed(g, t) || is_eos(g, t))
            continue;
        size_t len;
        const uint8_t *b = gm_vocab_token(g->vocab, t, &len);
        double w = len != 1 || strchr("\"{}[],:", b[0]) ? 30.0 : strchr(" \t\r\n", b[0]) ? 0.3 : 1.0;
        g->cand[nc] = t;
        g->weight[nc++] = w;
        total += w;
    }
    if (nc == 0)
        return UINT32_MAX;
    double r = uniform(g) * total;
    for (size_t k = 0; k < nc; k++) {
        if (r < g->weight[k])
            return g->cand[k];
        r -= g->weight[k];
    }
    return g->cand[nc - 1];
}

/*
 * An allowed token spelling the next bytes of goal[0..n): a prefix of it, or
 * the whole of it and more (a token straddling the goal's end); UINT32_MAX
 * when there is none. *adv gets how many goal bytes the token covers.
 */
static uint32_t draw_goal(gen *g, const char *goal, size_t n, size_t *adv)
{
    const gm_trie *tr = g->vocab->trie;
    size_t nc = 0;
    /* a special token spelled at the start of the goal: that token, or
       nothing (its spelling in text tokens would be plain text) */
    bool special = false;
    for (size_t k = 0; k < g->nonebyte && nc < MAX_CAND; k++) {
        uint32_t t = g->onebyte[k];
        size_t len;
        const uint8_t *b = gm_vocab_token(g->vocab, t, &len);
        if ((g->vd->flags[t] & GM_TOK_SPECIAL) && len <= n && !memcmp(b, goal, len)) {
            special = true;
            if (allowed(g, t))
                g->cand[nc++] = t;
        }
    }
    /* else text tokens that are prefixes of the goal */
    for (size_t len = 1; len <= n && !special; len++) {
        uint32_t node = gm_trie_find(tr, (const uint8_t *)goal, len);
        if (node == UINT32_MAX)
            break;
        for (uint32_t k = tr->nodes[node].tok_begin; k < tr->nodes[node].tok_end; k++)
            if (allowed(g, tr->tokens[k]) && nc < MAX_CAND)
                g->cand[nc++] = tr->tokens[k];
        if (len == n) /* tokens running past the goal: the subtree below it */
            for (uint32_t i = node + 1; i < tr->nodes[node].skip && nc < MAX_CAND; i++)
                for (uint32_t k = tr->nodes[i].tok_begin; k < tr->nodes[i].tok_end; k++)
                    if (allowed(g, tr->tokens[k]) && nc < MAX_CAND)
                        g->cand[nc++] = tr->tokens[k];
    }
    if (nc == 0)
        return UINT32_MAX;
    uint32_t t = g->cand[next_random(g) % nc];
    size_t len;
    gm_vocab_token(g->vocab, t, &len);
    *adv = len < n ? len : n;
    return t;
}

/* ---- output --------------------------------------------------------------- */

static void json_string(const uint8_t *b, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n;) {
        uint8_t c = b[i];
        uint32_t cp;
        size_t k = c >= 0x80 ? gm_utf8_decode(b + i, n - i, &cp) : 1;
        if (k == 0) {
            printf("\\udc%02x", c);
            i++;
            continue;
        }
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            printf("\\u%04x", c);
        else
            fwrite(b + i, 1, k, stdout);
        i += k;
    }
    putchar('"');
}

/* The turn's tokens as text runs and special tokens. */
static void print_parts(const gen *g, const uint32_t *toks, size_t n)
{
    printf("\"parts\": [");
    uint8_t *run = malloc(1 << 16);
    size_t rn = 0;
    bool first = true;
    for (size_t i = 0; i <= n; i++) {
        bool special = i < n && (g->vd->flags[toks[i]] & GM_TOK_SPECIAL);
        size_t len = 0;
        const uint8_t *b = i < n ? gm_vocab_token(g->vocab, toks[i], &len) : NULL;
        if ((i == n || special || rn + len > (1 << 16)) && rn) {
            printf("%s[\"t\", ", first ? "" : ", ");
            json_string(run, rn);
            putchar(']');
            first = false;
            rn = 0;
        }
        if (i == n)
            break;
        if (special) {
            printf("%s[\"s\", ", first ? "" : ", ");
            json_string(b, len);
            putchar(']');
            first = false;
        } else {
            memcpy(run + rn, b, len);
            rn += len;
        }
    }
    putchar(']');
    free(run);
}

/* ---- turns ---------------------------------------------------------------- */

typedef struct stats {
    long turns, finished, dead_ends, rejected, tokens, mismatches;
} stats;

/* Whether the unshared grammar's mask and accepting flag are g->mask's and acc. */
static bool compare_unshared(gen *g, int turn, size_t step, bool acc)
{
    gm_error err;
    if (gm_matcher_fill_mask(g->m2, g->mask2, g->words, &err))
        die("fill_mask (unshared)", &err);
    bool acc2 = gm_matcher_is_accepting(g->m2);
    for (size_t w = 0; w < g->words; w++)
        if (g->mask[w] != g->mask2[w]) {
            uint32_t d = g->mask[w] ^ g->mask2[w], t = (uint32_t)(w * 32) + __builtin_ctz(d);
            fprintf(stderr, "dispatch_generate: turn %d step %zu: token %u is %s with sharing, "
                            "%s without\n", turn, step, t, allowed(g, t) ? "allowed" : "masked",
                    allowed(g, t) ? "masked" : "allowed");
            return false;
        }
    if (acc != acc2)
        fprintf(stderr, "dispatch_generate: turn %d step %zu: accepting %d with sharing, %d "
                        "without\n", turn, step, acc, acc2);
    return acc == acc2;
}

/* The preset of tools[0..len) compiled with gm_stag_options.unshared, for v. */
static gm_compiled *compile_unshared(const char *tools, size_t len, const gm_tools_options *o,
                                     gm_vocab *v)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_strbuf st;
    gm_strbuf_init(&st, &m);
    gm_error err;
    if (gm_tools_structural_tag(&m, "tools", tools, len, o, &st, &err))
        die("structural tag", &err);
    gm_stag_options so = {NULL, 0, o->schema, o->limits, false, NULL, true};
    gm_limits_resolve(&so.limits, &o->limits);
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    gm_grammar *gr;
    gm_compiled *c;
    /* through the special-token resolution, as gm_grammar_from_tools (its kept
       source compiles unshared again for a vocabulary with the candidates) */
    if (gm_stag_source_compile("tools", st.s, st.n, &so, &go.allocator, NULL, &gr, &err) ||
        gm_compiled_create(gr, v, NULL, &c, &err))
        die("unshared grammar", &err);
    gm_grammar_destroy(gr);
    gm_strbuf_free(&st);
    return c;
}

static void one_turn(gen *g, int turn, int max_tokens, stats *st)
{
    gm_error err;
    uint32_t *toks = malloc((size_t)max_tokens * sizeof *toks);
    size_t n = 0;
    bool finished = false, dead = false;
    const char *goal = NULL;
    size_t goal_pos = 0;
    gm_matcher_reset(g->m);
    if (g->m2)
        gm_matcher_reset(g->m2);
    while (n < (size_t)max_tokens) {
        if (gm_matcher_fill_mask(g->m, g->mask, g->words, &err))
            die("fill_mask", &err);
        bool acc = gm_matcher_is_accepting(g->m);
        if (g->m2 && !compare_unshared(g, turn, n, acc)) {
            st->mismatches++;
            dead = true;
            break;
        }
        uint32_t t = UINT32_MAX;
        if (acc && uniform(g) < g->eos_prob) {
            finished = true;
            break;
        }
        if (!goal && g->ngoals && uniform(g) < 0.15) {
            goal = g->goals[next_random(g) % g->ngoals];
            goal_pos = 0;
        }
        if (goal) {
            size_t adv;
            t = draw_goal(g, goal + goal_pos, strlen(goal + goal_pos), &adv);
            if (t == UINT32_MAX || goal[goal_pos += adv] == 0)
                goal = NULL;
        }
        if (t == UINT32_MAX)
            t = uniform(g) < 0.35 ? draw_uniform(g) : draw_short(g);
        if (t == UINT32_MAX)
            t = draw_uniform(g);
        if (t == UINT32_MAX) {
            if (acc) {
                finished = true; /* only EOS is left: the end of the format */
            } else {
                dead = true;
                st->dead_ends++;
                fprintf(stderr, "dispatch_generate: dead end in turn %d after %zu tokens\n", turn,
                        n);
            }
            break;
        }
        if (g->m2 && gm_matcher_accept_token(g->m2, t, &err))
            die("the unshared grammar refuses a token its mask allowed", &err);
        if (gm_matcher_accept_token(g->m, t, &err)) {
            st->rejected++;
            fprintf(stderr, "dispatch_generate: turn %d: the mask allows token %u but accepting "
                            "it fails: %s\n", turn, t, err.message);
            dead = true;
            break;
        }
        toks[n++] = t;
        if (gm_matcher_is_terminated(g->m)) {
            finished = true; /* an EOS the format names (Harmony's <|return|>) */
            break;
        }
    }
    st->turns++;
    st->finished += finished;
    st->tokens += (long)n;
    printf("{\"turn\": %d, \"finished\": %s, \"dead_end\": %s, \"tokens\": %zu, ", turn,
           finished ? "true" : "false", dead ? "true" : "false", n);
    print_parts(g, toks, n);
    printf("}\n");
    free(toks);
}

int main(int argc, char **argv)
{
    const char *tools = NULL, *format = NULL, *tokenizer = NULL, *choice = NULL;
    const char *reasoning = NULL;
    bool no_parallel = false, free_text_bytes = false, unshared = false;
    int nturns = 10, max_tokens = 300;
    gen g;
    memset(&g, 0, sizeof g);
    g.rng = 1;
    g.eos_prob = 0.05;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sanitized")) {
#if defined(__SANITIZE_ADDRESS__)
            puts("1");
#else
            puts("0");
#endif
            return 0;
        }
        if (!strcmp(a, "--no-parallel")) {
            no_parallel = true;
            continue;
        }
        if (!strcmp(a, "--compare-unshared")) {
            unshared = true;
            continue;
        }
        if (!strcmp(a, "--free-text-bytes")) {
            free_text_bytes = true; /* gm_tools_options.free_text_bytes: the check's control */
            continue;
        }
        if (!v)
            die("an option lacks its value", NULL);
        i++;
        if (!strcmp(a, "--tools"))
            tools = v;
        else if (!strcmp(a, "--format"))
            format = v;
        else if (!strcmp(a, "--tokenizer"))
            tokenizer = v;
        else if (!strcmp(a, "--tool-choice"))
            choice = v;
        else if (!strcmp(a, "--reasoning"))
            reasoning = v;
        else if (!strcmp(a, "--seed"))
            g.rng = strtoull(v, NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
        else if (!strcmp(a, "-n"))
            nturns = atoi(v);
        else if (!strcmp(a, "--max-tokens"))
            max_tokens = atoi(v);
        else if (!strcmp(a, "--eos-prob"))
            g.eos_prob = atof(v);
        else if (!strcmp(a, "--goal") && g.ngoals < MAX_GOALS)
            g.goals[g.ngoals++] = v;
        else
            die(a, NULL);
    }
    if (!tools || !format || !tokenizer || max_tokens <= 0)
        die("usage: dispatch_generate --tools FILE --format F --tokenizer DIR ...", NULL);

    gm_error err;
    if (gm_vocab_create_from_file(tokenizer, NULL, &g.vocab, &err))
        die(tokenizer, &err);
    g.vd = g.vocab->data;
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.free_text_bytes = free_text_bytes;
    o.format = gm_tool_format_named(format); /* the four presets and the model families */
    if (!o.format)
        die("unknown --format", NULL);
    if (choice && !strcmp(choice, "auto"))
        o.tool_choice = GM_TOOL_CHOICE_AUTO;
    else if (choice && !strcmp(choice, "required"))
        o.tool_choice = GM_TOOL_CHOICE_REQUIRED;
    else if (choice && !strcmp(choice, "none"))
        o.tool_choice = GM_TOOL_CHOICE_NONE;
    else if (choice) {
        o.tool_choice = GM_TOOL_CHOICE_NAMED;
        o.tool_name = choice;
    }
    if (no_parallel)
        o.parallel = 0;
    if (reasoning && !strcmp(reasoning, "forced"))
        o.reasoning = GM_REASONING_FORCED;
    else if (reasoning && !strcmp(reasoning, "forbidden"))
        o.reasoning = GM_REASONING_FORBIDDEN;
    size_t len;
    char *text;
    gm_mem text_mem;
    gm_mem_init(&text_mem, NULL, SIZE_MAX);
    if (gm_file_read(&text_mem, tools, (size_t)64 << 20, &text, &len, &err) != GM_OK)
        die(tools, &err);
    gm_grammar *grammar;
    gm_compiled *c;
    if (gm_grammar_from_tools(text, len, &o, &grammar, &err))
        die(tools, &err);
    gm_compiled *c2 = unshared ? compile_unshared(text, len, &o, g.vocab) : NULL;
    gm_mem_free(&text_mem, text);
    if (gm_compiled_create(grammar, g.vocab, NULL, &c, &err))
        die("compile", &err);
    gm_grammar_destroy(grammar);
    if (gm_matcher_create(c, NULL, &g.m, &err))
        die("matcher", &err);
    if (c2 && gm_matcher_create(c2, NULL, &g.m2, &err))
        die("matcher", &err);
    g.words = gm_compiled_mask_words(c);
    g.mask = malloc(g.words * sizeof *g.mask);
    g.mask2 = malloc(g.words * sizeof *g.mask2);
    g.cand = malloc(MAX_CAND * sizeof *g.cand);
    g.weight = malloc(MAX_CAND * sizeof *g.weight);
    g.onebyte = malloc(g.vd->size * sizeof *g.onebyte);
    for (uint32_t t = 0; t < g.vd->size; t++) {
        size_t l;
        gm_vocab_token(g.vocab, t, &l);
        if (!(g.vd->flags[t] & GM_TOK_PADDING) && (l == 1 || (g.vd->flags[t] & GM_TOK_SPECIAL)))
            g.onebyte[g.nonebyte++] = t;
    }

    stats st = {0};
    for (int k = 0; k < nturns; k++)
        one_turn(&g, k, max_tokens, &st);
    printf("{\"summary\": true, \"turns\": %ld, \"finished\": %ld, \"dead_ends\": %ld, "
           "\"rejected\": %ld, \"tokens\": %ld, \"mismatches\": %ld}\n",
           st.turns, st.finished, st.dead_ends, st.rejected, st.tokens, st.mismatches);
    free(g.mask);
    free(g.mask2);
    gm_matcher_destroy(g.m2);
    gm_compiled_destroy(c2);
    free(g.cand);
    free(g.weight);
    free(g.onebyte);
    gm_matcher_destroy(g.m);
    gm_compiled_destroy(c);
    gm_vocab_destroy(g.vocab);
    return st.dead_ends || st.rejected || st.mismatches ? 1 : 0;
}
