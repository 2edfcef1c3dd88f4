/*
 * gramask encode: text files -> a reference ids file (the format of
 * ../shared/corpus/<lang>/ids.<tokenizer>.json), through gm_vocab_encode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/ids_file.h"
#include "base/file.h"
#include "base/mem.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] = "TOKENIZER FILE... [-o OUT] [--special-as-text]";

static void help(void)
{
    printf("usage: gramask encode %s\n\n"
           "Encodes each FILE into token ids exactly as the Hugging Face tokenizer TOKENIZER\n"
           "(a tokenizer.json or a directory holding one) does, with no BOS/EOS added, and\n"
           "writes them as an ids file: [{\"file\": NAME, \"ids\": [...]}, ...] with NAME the\n"
           "file's base name (the format of ../shared/corpus/*/ids.*.json, which\n"
           "`gramask trace --ids` reads; with -o, byte for byte that format).\n\n"
           "  -o OUT             write to OUT instead of standard output\n"
           "  --special-as-text  the text of special tokens (<|eot_id|>...) is plain text;\n"
           "                     by default it is the special token's one id\n",
           usage);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Writes s as a JSON string (quotes included). */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

gm_status gm_cli_encode_file(const gm_vocab *v, const char *path, bool special_as_text,
                             uint32_t **ids, size_t *n, gm_error *err)
{
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    char *text;
    size_t len;
    gm_status st = gm_file_read(&mem, path, (size_t)1 << 30, &text, &len, err);
    if (st != GM_OK)
        return st;
    gm_encode_options eo = {.special_as_text = special_as_text};
    st = gm_vocab_encode(v, text, len, &eo, ids, n, err);
    gm_mem_free(&mem, text);
    return st;
}

gm_status gm_cli_encode_files(const gm_vocab *v, const char *const *paths, size_t n, gm_mem *m,
                              gm_ids_file **out, gm_error *err)
{
    gm_ids_file *f = gm_mem_calloc(m, 1, sizeof *f);
    if (!f || !(f->entries = gm_mem_calloc(m, n ? n : 1, sizeof *f->entries))) {
        gm_mem_free(m, f);
        return gm_mem_fail(m, err, "the encoded texts");
    }
    f->mem = m;
    gm_status st = GM_OK;
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        uint32_t *ids;
        size_t nids;
        st = gm_cli_encode_file(v, paths[i], false, &ids, &nids, err);
        if (st != GM_OK)
            break;
        gm_ids_entry *e = &f->entries[f->n++];
        e->file = gm_mem_strndup(m, paths[i], strlen(paths[i]));
        e->ids = gm_mem_reallocarray(m, NULL, nids ? nids : 1, sizeof *e->ids);
        e->nids = nids;
        if (e->ids)
            memcpy(e->ids, ids, nids * sizeof *ids);
        gm_vocab_free_ids(v, ids);
        if (!e->file || !e->ids)
            st = gm_mem_fail(m, err, "the encoded texts");
    }
    if (st != GM_OK) {
        gm_ids_file_destroy(f);
        return st;
    }
    *out = f;
    return GM_OK;
}

int gm_cmd_encode(int argc, char **argv)
{
    const char *tokenizer = NULL, *out_path = NULL;
    bool special_as_text = false;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t nfiles = 0;
    if (!files) {
        fprintf(stderr, "gramask encode: out of memory\n");
        return 1;
    }
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"-o", GM_CLI_ARG},
        {"--out", GM_CLI_ARG}, {"--special-as-text", GM_CLI_NO_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "encode", usage, argc, argv, tables);
    int rc = 0, r;
    while (!rc && (r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            help();
            free(files);
            return 0;
        } else if (gm_cli_is(&p, "-o") || gm_cli_is(&p, "--out")) {
            out_path = p.value;
        } else if (gm_cli_is(&p, "--special-as-text")) {
            special_as_text = true;
        } else if (!tokenizer) {
            tokenizer = p.value;
        } else {
            files[nfiles++] = p.value;
        }
    }
    if (!rc && r)
        rc = r;
    if (!rc && !tokenizer)
        rc = gm_cli_bad_arg("encode", usage, "missing TOKENIZER and FILE");
    else if (!rc && !nfiles)
        rc = gm_cli_bad_arg("encode", usage, "missing FILE (the text to encode)");
    if (rc) {
        free(files);
        return rc;
    }
    gm_error err;
    gm_vocab *v;
    gm_vocab_options vo;
    gm_vocab_options_init_defaults(&vo);
    vo.load_encoder = true;
    char tbuf[4096];
    if (!(tokenizer = gm_cli_tokenizer_resolve("encode", tokenizer, tbuf, sizeof tbuf))) {
        free(files);
        return 1;
    }
    if (gm_vocab_create_from_file(tokenizer, &vo, &v, &err) != GM_OK) {
        free(files);
        return gm_cli_fail("encode", &err);
    }
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "gramask encode: cannot write %s: %s\n", out_path, strerror(errno));
        gm_vocab_destroy(v);
        free(files);
        return 1;
    }
    fputc('[', out);
    for (size_t f = 0; f < nfiles && !rc; f++) {
        uint32_t *ids;
        size_t n;
        if (gm_cli_encode_file(v, files[f], special_as_text, &ids, &n, &err) != GM_OK) {
            rc = gm_cli_fail("encode", &err);
            break;
        }
        fputs(f ? ", {\"file\": " : "{\"file\": ", out);
        json_string(out, base_name(files[f]));
        fputs(", \"ids\": [", out);
        for (size_t k = 0; k < n; k++)
            fprintf(out, k ? ", %u" : "%u", ids[k]);
        fputs("]}", out);
        gm_vocab_free_ids(v, ids);
    }
    fputs(out == stdout ? "]\n" : "]", out); /* a file: byte for byte the corpus format */
    if (out != stdout && fclose(out) != 0 && !rc) {
        fprintf(stderr, "gramask encode: cannot write %s: %s\n", out_path, strerror(errno));
        rc = 1;
    }
    if (out == stdout && fflush(stdout) != 0 && !rc)
        rc = 1;
    gm_vocab_destroy(v);
    free(files);
    return rc;
}
