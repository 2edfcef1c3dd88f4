/* gramask vocab: facts about a tokenizer vocabulary, decoding checks, token bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vocab/ids_file.h"
#include "vocab/vocab.h"
#include "base/error.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "TOKENIZER [--model-size N] [--eos ID|TEXT]... [--decode IDS.json] [--dump] [--token ID...]";

static void help(void)
{
    printf("usage: gramask vocab %s\n\n"
           "Loads a tokenizer vocabulary (a tokenizer.json, a directory holding one, or a\n"
           "plain 'gramask-vocab 1' file) and prints what gramask sees in it: ids, padding,\n"
           "added and special tokens, EOS ids, the trie, load times.\n\n"
           "  --model-size N    the model's vocabulary size (ids past the tokenizer are padding)\n"
           "  --eos ID|TEXT     one more stop token, by id or exact text (repeatable)\n"
           "  --decode IDS.json decode each entry of a reference ids file and compare it with\n"
           "                    the file of that name beside IDS.json (OK / MISMATCH per file)\n"
           "  --dump            write the vocabulary in the plain format to standard output\n"
           "  --token ID...     print these tokens' bytes, escaped (the rest of the arguments)\n",
           usage);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || v > UINT32_MAX || s[0] == '-')
        return false;
    *out = (uint32_t)v;
    return true;
}

static const char *kind_name(uint8_t kind)
{
    switch (kind) {
    case GM_VOCAB_BYTE_LEVEL: return "byte-level (GPT-2 byte map)";
    case GM_VOCAB_SENTENCEPIECE: return "SentencePiece style (U+2581 for space)";
    case GM_VOCAB_LITERAL: return "literal token text";
    default: return "plain hex format";
    }
}

static void print_token(const gm_vocab_data *v, uint32_t id, gm_mem *m)
{
    size_t len;
    const uint8_t *b = gm_vocab_data_token(v, id, &len);
    gm_strbuf sb;
    gm_strbuf_init(&sb, m);
    gm_strbuf_escaped(&sb, b, len);
    printf("%u: \"%s\" (%zu bytes)", id, gm_strbuf_str(&sb), len);
    uint8_t f = v->flags[id];
    if (f & GM_TOK_SPECIAL)
        printf(" special");
    else if (f & GM_TOK_ADDED)
        printf(" added");
    if (f & GM_TOK_PADDING)
        printf(" padding");
    if (f & GM_TOK_EOS)
        printf(" eos");
    printf("\n");
    gm_strbuf_free(&sb);
}

/* Decodes every entry of an ids file and compares it with the named file. */
static int check_decode(const gm_vocab_data *v, const char *ids_path, gm_mem *m)
{
    gm_error err;
    gm_ids_file *f;
    if (gm_ids_file_load(m, ids_path, &f, &err) != GM_OK)
        return gm_cli_fail("vocab", &err);
    const char *slash = strrchr(ids_path, '/');
    int dlen = slash ? (int)(slash - ids_path + 1) : 0;
    size_t ok = 0, bad = 0;
    for (size_t i = 0; i < f->n; i++) {
        const gm_ids_entry *e = &f->entries[i];
        char path[4096];
        snprintf(path, sizeof path, "%.*s%s", dlen, ids_path, e->file);
        gm_strbuf sb;
        gm_strbuf_init(&sb, m);
        char *want = NULL;
        size_t wlen = 0;
        if (gm_vocab_decode(v, e->ids, e->nids, &sb, &err) != GM_OK) {
            printf("MISMATCH %s: %s\n", e->file, err.message);
            bad++;
        } else if (gm_file_read(m, path, (size_t)1 << 30, &want, &wlen, &err) != GM_OK) {
            printf("MISSING  %s: %s\n", e->file, err.message);
            bad++;
        } else if (wlen != sb.n || memcmp(want, gm_strbuf_str(&sb), wlen)) {
            size_t at = 0;
            while (at < wlen && at < sb.n && want[at] == sb.s[at])
                at++;
            printf("MISMATCH %s: decoded %zu bytes, the file has %zu; first difference at byte "
                   "%zu\n",
                   e->file, sb.n, wlen, at);
            bad++;
        } else {
            printf("OK       %s (%zu tokens, %zu bytes)\n", e->file, e->nids, wlen);
            ok++;
        }
        gm_mem_free(m, want);
        gm_strbuf_free(&sb);
    }
    printf("%zu OK, %zu mismatched\n", ok, bad);
    gm_ids_file_destroy(f);
    return bad ? 1 : 0;
}

int gm_cmd_vocab(int argc, char **argv)
{
    const char *path = NULL, *decode = NULL;
    gm_vocab_load_options opts;
    memset(&opts, 0, sizeof opts);
    const char *eos_names[64];
    uint32_t eos[64];
    size_t neos = 0;
    bool dump = false;
    const char **tokens = calloc((size_t)argc, sizeof *tokens);
    size_t ntokens = 0;
    bool token_list = false;
    if (!tokens) {
        fprintf(stderr, "gramask vocab: out of memory\n");
        return 1;
    }
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"--model-size", GM_CLI_ARG},
        {"--model-vocab-size", GM_CLI_ARG}, {"--eos", GM_CLI_ARG}, {"--decode", GM_CLI_ARG},
        {"--dump", GM_CLI_NO_ARG}, {"--token", GM_CLI_NO_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "vocab", usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        int bad = 0;
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            help();
            free(tokens);
            return 0;
        } else if (gm_cli_is(&p, "--model-size") || gm_cli_is(&p, "--model-vocab-size")) {
            if (!parse_u32(p.value, &opts.model_size))
                bad = gm_cli_args_bad_value(&p, NULL);
        } else if (gm_cli_is(&p, "--eos")) {
            if (neos == sizeof eos_names / sizeof *eos_names)
                bad = gm_cli_bad_arg("vocab", usage, "more than 64 --eos tokens");
            else
                eos_names[neos++] = p.value;
        } else if (gm_cli_is(&p, "--decode")) {
            decode = p.value;
        } else if (gm_cli_is(&p, "--dump")) {
            dump = true;
        } else if (gm_cli_is(&p, "--token")) {
            token_list = true;
        } else if (token_list) {
            tokens[ntokens++] = p.value;
        } else if (!path) {
            path = p.value;
        } else {
            bad = gm_cli_args_unexpected(&p);
        }
        if (bad) {
            free(tokens);
            return bad;
        }
    }
    if (!r && token_list && !ntokens)
        r = gm_cli_bad_arg("vocab", usage, "--token needs at least one ID");
    if (r) {
        free(tokens);
        return r;
    }
    if (!path) {
        free(tokens);
        return gm_cli_bad_arg("vocab", usage, "missing PATH (a tokenizer)");
    }
    char pbuf[4096];
    if (!(path = gm_cli_tokenizer_resolve("vocab", path, pbuf, sizeof pbuf))) {
        free(tokens);
        return 1;
    }

    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v;
    double t0 = now_ms();
    if (gm_vocab_load(&m, path, &opts, &v, &err) != GM_OK) {
        free(tokens);
        return gm_cli_fail("vocab", &err);
    }
    if (neos) {
        /* --eos ID|TEXT: the ids (a text needs the tokens), then the vocabulary again */
        for (size_t i = 0; i < neos; i++) {
            size_t len = strlen(eos_names[i]), k;
            uint32_t id = UINT32_MAX;
            if (!parse_u32(eos_names[i], &id))
                for (id = 0; id < v->size; id++) {
                    const uint8_t *b = gm_vocab_data_token(v, id, &k);
                    if (k == len && !memcmp(b, eos_names[i], len))
                        break;
                }
            if (id >= v->size) {
                fprintf(stderr, "gramask vocab: --eos '%s': not a token id (0..%u) nor the text "
                                "of a token\n", eos_names[i], v->size - 1);
                gm_vocab_data_destroy(v);
                free(tokens);
                return 1;
            }
            eos[i] = id;
        }
        gm_vocab_data_destroy(v);
        opts.extra_eos = eos;
        opts.nextra_eos = neos;
        if (gm_vocab_load(&m, path, &opts, &v, &err) != GM_OK) {
            free(tokens);
            return gm_cli_fail("vocab", &err);
        }
    }
    double t1 = now_ms();
    gm_trie *t;
    if (gm_trie_build(&m, v, &t, &err) != GM_OK) {
        gm_vocab_data_destroy(v);
        free(tokens);
        return gm_cli_fail("vocab", &err);
    }
    double t2 = now_ms();
    int rc = 0;
    if (dump) {
        gm_strbuf sb;
        gm_strbuf_init(&sb, &m);
        gm_vocab_write_plain(v, &sb);
        if (sb.failed) {
            gm_mem_fail(&m, &err, "the dump");
            rc = gm_cli_fail("vocab", &err);
        } else {
            fwrite(gm_strbuf_str(&sb), 1, sb.n, stdout);
        }
        gm_strbuf_free(&sb);
    } else if (ntokens) {
        for (size_t i = 0; i < ntokens; i++) {
            uint32_t id;
            if (!parse_u32(tokens[i], &id) || id >= v->size) {
                fprintf(stderr, "gramask vocab: '%s' is not a token id (0..%u)\n", tokens[i],
                        v->size - 1);
                rc = 1;
                continue;
            }
            print_token(v, id, &m);
        }
    } else if (decode) {
        rc = check_decode(v, decode, &m);
    } else {
        uint32_t nadded = 0, nspecial = 0, npad = 0;
        for (uint32_t i = 0; i < v->size; i++) {
            nadded += !!(v->flags[i] & GM_TOK_ADDED);
            nspecial += !!(v->flags[i] & GM_TOK_SPECIAL);
            npad += !!(v->flags[i] & GM_TOK_PADDING);
        }
        printf("vocabulary:      %s\n", path);
        printf("kind:            %s\n", kind_name(v->kind));
        printf("size:            %u ids (tokenizer %u, padding %u)\n", v->size, v->ntokenizer,
               npad);
        printf("added tokens:    %u (special %u)\n", nadded, nspecial);
        printf("EOS ids:         %u\n", v->neos);
        for (uint32_t i = 0; i < v->neos; i++) {
            printf("  ");
            print_token(v, v->eos[i], &m);
        }
        if (v->strip_leading)
            printf("decoding:        strips up to %u leading space(s) from the whole text\n",
                   v->strip_leading);
        printf("trie:            %u nodes, %u tokens, max token length %u bytes\n", t->nnodes,
               t->ntokens, t->max_depth);
        printf("memory:          vocabulary %zu bytes, trie %zu bytes\n",
               (size_t)v->size * 5 + 4 + v->offsets[v->size],
               (size_t)t->nnodes * sizeof *t->nodes + (size_t)t->ntokens * 4);
        printf("load time:       %.1f ms (trie %.1f ms)\n", t1 - t0, t2 - t1);
    }
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    free(tokens);
    return rc;
}
