/*
 * gramask demo: the main job on bundled data. Compiles the bundled JSON
 * grammar for a tokenizer (the bundled SentencePiece 32K one unless
 * --tokenizer says otherwise), tokenizes a bundled sample by greedy longest
 * match over the vocabulary (any tokenization is a valid input to the
 * matcher; real tokenizers produce others), then decodes it token by token
 * as an inference engine would: mask, check, accept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parser/bundled.h"
#include "base/file.h"
#include "base/mem.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"

#ifndef GM_SRCDATA
#define GM_SRCDATA "tests/data"
#endif
#ifndef GM_PKGDATA
#define GM_PKGDATA "/usr/local/share/gramask"
#endif

static const char usage[] =
    "[--tokenizer T] [--grammar NAME] [--sample FILE] [--steps N] [--quiet]\n"
    "  Defaults: the bundled sp32k tokenizer, the bundled json grammar and sample.\n"
    "  The bundled sample is JSON: other grammars (bundled: go, java, python, ...; or a\n"
    "  .lark / .gbnf file) need a --sample FILE of their language.";

/* The first existing path among the source tree's data and the installed data. */
static const char *data_path(char *buf, size_t cap, const char *rel)
{
    snprintf(buf, cap, "%s/%s", GM_SRCDATA, rel);
    if (access(buf, R_OK) == 0)
        return buf;
    snprintf(buf, cap, "%s/%s", GM_PKGDATA, rel);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Greedy longest-match tokenization over the vocabulary's non-special tokens. */
static size_t tokenize(const gm_vocab *v, const uint8_t *text, size_t len, uint32_t *ids)
{
    uint32_t size = gm_vocab_size(v);
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    size_t n = 0, pos = 0;
    while (pos < len) {
        uint32_t best = UINT32_MAX;
        size_t best_len = 0;
        for (uint32_t t = 0; t < size; t++) {
            size_t tl;
            const uint8_t *b = gm_vocab_token(v, t, &tl);
            if (!b || tl <= best_len || tl > len - pos || memcmp(b, text + pos, tl))
                continue;
            int special = 0;
            for (size_t k = 0; k < neos; k++)
                special |= eos[k] == t;
            /* Skip control-looking tokens such as <s>, </s>, <unk>. */
            if (special || (tl > 2 && b[0] == '<' && b[tl - 1] == '>' && text[pos] != '<'))
                continue;
            best = t;
            best_len = tl;
        }
        if (best == UINT32_MAX)
            return 0;
        ids[n++] = best;
        pos += best_len;
    }
    return n;
}

/* The bundled grammars a user can run ("common" is a library for %import). */
static void list_bundled(FILE *f)
{
    const char *name;
    int k = 0;
    for (size_t i = 0; (name = gm_bundled_grammar_name(i)); i++)
        if (strcmp(name, "common"))
            fprintf(f, "%s%s", k++ ? ", " : "", name);
}

/*
 * Whether the demo can run `grammar` on the bundled JSON sample; when it
 * cannot, says why and how to run it, and returns 2.
 */
static int check_grammar(const char *grammar, bool own_sample)
{
    bool bundled = gm_cli_is_bundled(grammar);
    if (bundled && !gm_bundled_grammar(grammar, NULL)) {
        fprintf(stderr, "gramask demo: no bundled grammar '%s'; the bundled grammars are ", grammar);
        list_bundled(stderr);
        fprintf(stderr, " (or give a .lark or .gbnf file)\nusage: gramask demo %s\n", usage);
        return 2;
    }
    if (own_sample || !strcmp(grammar, "json") || !strcmp(grammar, "json_bounded"))
        return 0;
    fprintf(stderr,
            "gramask demo: the bundled sample is JSON, so '%s' needs a sample of its own\n"
            "  gramask demo --grammar %s --sample FILE             decode FILE as the demo does\n"
            "  gramask trace %s --tokenizer T --text FILE          as the tokenizer encodes FILE\n"
            "  gramask generate %s --tokenizer T                   random constrained output\n",
            grammar, grammar, grammar, grammar);
    return 2;
}

static void print_token(const gm_vocab *v, uint32_t t)
{
    size_t len;
    const uint8_t *b = gm_vocab_token(v, t, &len);
    putchar('"');
    for (size_t i = 0; i < len && i < 16; i++) {
        if (b[i] == '\n')
            fputs("\\n", stdout);
        else if (b[i] == '"')
            fputs("\\\"", stdout);
        else if (b[i] < 0x20)
            printf("\\x%02x", b[i]);
        else
            putchar(b[i]);
    }
    putchar('"');
    for (size_t i = len < 16 ? len : 16; i < 14; i++)
        putchar(' ');
}

int gm_cmd_demo(int argc, char **argv)
{
    gm_cli_load_options lo;
    gm_cli_load_options_init(&lo);
    const char *sample = NULL;
    uint64_t show = 12;
    lo.grammar = "json";
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG},    {"--tokenizer", GM_CLI_ARG},
        {"--grammar", GM_CLI_ARG}, {"--sample", GM_CLI_ARG}, {"--steps", GM_CLI_ARG},
        {"--quiet", GM_CLI_NO_ARG}, {"-q", GM_CLI_NO_ARG},   {"--eos", GM_CLI_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "demo", usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask demo %s\n", usage);
            return 0;
        } else if (gm_cli_is(&p, "--grammar")) {
            lo.grammar = p.value;
        } else if (gm_cli_is(&p, "--sample")) {
            sample = p.value;
        } else if (gm_cli_is(&p, "--steps")) {
            if (gm_cli_parse_u64(p.value, &show))
                return gm_cli_args_bad_value(&p, NULL);
        } else if (p.opt && (r = gm_cli_grammar_arg(&lo, &p)) != 1) {
            return r ? r : gm_cli_args_unexpected(&p);
        } else if (!p.opt) {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    int bad = check_grammar(lo.grammar, sample != NULL);
    if (bad)
        return bad;
    char tokbuf[4096], samplebuf[4096];
    if (!lo.tokenizer && !(lo.tokenizer = data_path(tokbuf, sizeof tokbuf, "sp32k/tokenizer.json"))) {
        fprintf(stderr, "gramask demo: the bundled tokenizer is missing (looked in %s and %s); "
                        "give one with --tokenizer\n", GM_SRCDATA, GM_PKGDATA);
        return 1;
    }
    if (!sample && !(sample = data_path(samplebuf, sizeof samplebuf, "demo/sample.json"))) {
        fprintf(stderr, "gramask demo: the bundled sample is missing; give one with --sample\n");
        return 1;
    }
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    char *raw;
    size_t rawlen;
    gm_error err;
    if (gm_file_read(&mem, sample, 1 << 20, &raw, &rawlen, &err) != GM_OK)
        return gm_cli_fail("demo", &err);

    printf("gramask %s demo: grammar '%s', tokenizer %s\n\n", gm_version(), lo.grammar, lo.tokenizer);
    gm_cli_session s;
    if (gm_cli_session_open("demo", &lo, &s)) {
        gm_mem_free(&mem, raw);
        return 1;
    }
    gm_compiled_stats st;
    gm_compiled_get_stats(s.compiled, &st);
    uint32_t nbits = gm_compiled_vocab_size(s.compiled);
    printf("  tokenizer loaded         %8.1f ms  (%u token ids)\n", s.load_vocab_ms, nbits);
    printf("  grammar built            %8.1f ms  (%u terminals, %u lexer states, %u LALR states)\n",
           s.load_grammar_ms, st.terminals, st.lexer_states, st.lr_states);
    printf("  compiled (lazy tables)   %8.1f ms\n", s.compile_ms);

    /*
     * The grammar sees the decoded text. A SentencePiece decoder drops the
     * first space of it, so such vocabularies tokenize the sample with one
     * in front (their dummy prefix); keep whichever tokenization the
     * grammar accepts in full.
     */
    uint8_t *text = malloc(rawlen + 1);
    uint32_t *ids = calloc(rawlen + 2, sizeof *ids);
    text[0] = ' ';
    memcpy(text + 1, raw, rawlen);
    size_t nids = 0;
    for (int prefixed = 1; prefixed >= 0 && !nids; prefixed--) {
        nids = tokenize(s.vocab, text + 1 - prefixed, rawlen + (size_t)prefixed, ids);
        gm_matcher *probe;
        size_t accepted = 0;
        if (nids && gm_matcher_create(s.compiled, NULL, &probe, &err) == GM_OK) {
            gm_matcher_validate_tokens(probe, ids, nids, &accepted, &err);
            gm_matcher_destroy(probe);
        }
        if (accepted != nids)
            nids = 0;
    }
    if (!nids) {
        fprintf(stderr, "gramask demo: the sample cannot be tokenized into tokens the grammar "
                        "accepts with this vocabulary\n");
        free(ids);
        free(text);
        gm_mem_free(&mem, raw);
        gm_cli_session_close(&s);
        return 1;
    }
    gm_matcher *m = NULL;
    printf("  sample                   %zu bytes, %zu tokens (greedy longest match)\n\n", rawlen, nids);

    size_t words = gm_compiled_mask_words(s.compiled);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint64_t *ns = calloc(nids + 1, sizeof *ns);
    if (gm_matcher_create(s.compiled, NULL, &m, &err) != GM_OK)
        return gm_cli_fail("demo", &err);
    printf("  step  next token        allowed tokens   mask time\n");
    int all_ok = 1, eos_ok = 0;
    size_t steps = 0;
    for (size_t i = 0; i <= nids; i++) {
        uint64_t t0 = gm_clock_ns();
        if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK) {
            all_ok = 0;
            gm_cli_fail("demo", &err);
            break;
        }
        ns[i] = gm_clock_ns() - t0;
        steps = i + 1;
        size_t allowed = gm_cli_mask_count(mask, nbits);
        if (i == nids) {
            const uint32_t *eos;
            size_t neos = gm_vocab_eos_ids(s.vocab, &eos);
            for (size_t k = 0; k < neos; k++)
                eos_ok |= (mask[eos[k] >> 5] >> (eos[k] & 31)) & 1;
            printf("  %4zu  %-16s %8zu / %u  %7.1f us   EOS %s\n", i, "<end>", allowed, nbits,
                   (double)ns[i] / 1e3, eos_ok ? "allowed" : "NOT allowed");
            break;
        }
        if (i < show) {
            printf("  %4zu  ", i);
            print_token(s.vocab, ids[i]);
            printf(" %8zu / %u  %7.1f us\n", allowed, nbits, (double)ns[i] / 1e3);
        } else if (i == show) {
            printf("   ...\n");
        }
        if (!((mask[ids[i] >> 5] >> (ids[i] & 31)) & 1) ||
            gm_matcher_accept_token(m, ids[i], &err) != GM_OK) {
            all_ok = 0;
            printf("  step %zu: token %u was not allowed\n", i, ids[i]);
            break;
        }
    }
    gm_latency lazy = gm_latency_of(ns, steps);
    printf("\n  every sample token allowed: %s; EOS allowed at the end: %s\n", all_ok ? "yes" : "NO",
           eos_ok ? "yes" : "NO");
    printf("  mask time, lazy tables (first uses build them):  mean %.2f us, p50 %.2f us, p99 %.2f "
           "us, max %.2f us\n", lazy.mean, lazy.p50, lazy.p99, lazy.max);
    gm_matcher_destroy(m);
    m = NULL;

    /* Eager compilation, then the same decoding: steady-state figures. */
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = true;
    gm_compiled *eager = NULL;
    uint64_t t0 = gm_clock_ns();
    if (s.grammar && gm_compiled_create(s.grammar, s.vocab, &co, &eager, &err) == GM_OK) {
        double eager_ms = (double)(gm_clock_ns() - t0) / 1e6;
        gm_compiled_get_stats(eager, &st);
        if (gm_matcher_create(eager, NULL, &m, &err) == GM_OK) {
            for (size_t i = 0; i <= nids; i++) {
                t0 = gm_clock_ns();
                gm_matcher_fill_mask(m, mask, words, &err);
                ns[i] = gm_clock_ns() - t0;
                if (i < nids)
                    gm_matcher_accept_token(m, ids[i], &err);
            }
            gm_latency hot = gm_latency_of(ns, nids + 1);
            printf("  eager compile: %.1f ms (%u lexer-state tables, %llu token classes, %.1f MB)\n",
                   eager_ms, st.profiles_built, (unsigned long long)st.classes,
                   (double)st.table_bytes / 1e6);
            printf("  mask time, eager tables:                         mean %.2f us, p50 %.2f us, "
                   "p99 %.2f us, max %.2f us\n", hot.mean, hot.p50, hot.p99, hot.max);
            gm_matcher_destroy(m);
        }
        gm_compiled_destroy(eager);
    }
    free(mask);
    free(ns);
    free(ids);
    free(text);
    gm_mem_free(&mem, raw);
    gm_cli_session_close(&s);
    return all_ok && eos_ok ? 0 : 1;
}
