/*
 * gramask parse for character-level grammars (GBNF, EBNF, regex): each FILE
 * is run byte by byte through a matcher of the Earley engine over a
 * vocabulary of the 256 single bytes, so the first byte the grammar refuses
 * is found exactly, with the bytes it would have taken there.
 */
#include "cli/parse_earley.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "runtime/diagnose.h"
#include "cli/cli.h"

enum { NBYTES = 256, EOS_ID = 256 };

static gm_vocab *byte_vocab(gm_error *err)
{
    static const uint8_t eos_text[] = "<eos>";
    uint8_t bytes[NBYTES];
    const uint8_t *toks[NBYTES + 1];
    size_t lens[NBYTES + 1];
    bool special[NBYTES + 1] = {0};
    for (int b = 0; b < NBYTES; b++) {
        bytes[b] = (uint8_t)b;
        toks[b] = &bytes[b];
        lens[b] = 1;
    }
    toks[EOS_ID] = eos_text;
    lens[EOS_ID] = sizeof eos_text - 1;
    special[EOS_ID] = true;
    uint32_t eos = EOS_ID;
    gm_vocab *v = NULL;
    if (gm_vocab_create_from_tokens(toks, lens, NBYTES + 1, special, &eos, 1, NULL, &v, err))
        return NULL;
    return v;
}

/* 0: the file is a sentence; 1: it is not (reported); -1: an internal failure (reported). */
static int parse_one(gm_compiled *c, const char *path, int nfiles)
{
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    if (gm_file_read(&mem, path, (size_t)1 << 30, &text, &len, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        return -1;
    }
    gm_matcher_options mo = {.max_rollback = 1};
    gm_matcher *m;
    if (gm_matcher_create(c, &mo, &m, &err) != GM_OK) {
        gm_mem_free(&mem, text);
        gm_cli_fail("parse", &err);
        return -1;
    }
    size_t line = 1, col = 1, i = 0;
    int rc = 0;
    for (; i < len; i++) {
        gm_status st = gm_matcher_accept_bytes(m, (const uint8_t *)text + i, 1, &err);
        if (st == GM_ERR_REJECTED)
            break;
        if (st != GM_OK) {
            gm_cli_fail("parse", &err);
            rc = -1;
            goto out;
        }
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    if (i == len && gm_matcher_is_accepting(m)) {
        if (nfiles > 1)
            printf("%s: OK (%zu bytes)\n", path, len);
        else
            printf("OK\n");
        goto out;
    }
    gm_strbuf exp;
    gm_strbuf_init(&exp, &mem);
    gm_matcher_expected_(m, &exp);
    const char *expected = gm_strbuf_str(&exp);
    if (i < len) {
        unsigned char b = (unsigned char)text[i];
        gm_strbuf shown;
        gm_strbuf_init(&shown, &mem);
        gm_strbuf_escaped(&shown, (const uint8_t *)text + i, 1); /* a newline as \n */
        printf("%s:%zu:%zu: unexpected '%s' (byte 0x%02x); expected %s\n", path, line, col,
               gm_strbuf_str(&shown), b, expected[0] ? expected : "nothing");
        gm_strbuf_free(&shown);
    } else {
        printf("%s:%zu:%zu: unexpected end of input; expected %s\n", path, line, col, expected);
    }
    gm_strbuf_free(&exp);
    rc = 1;
out:
    gm_matcher_destroy(m);
    gm_mem_free(&mem, text);
    return rc;
}

int gm_cli_parse_earley(const char *grammar, gm_grammar_format format, const char *start,
                        const char *const *files, int nfiles)
{
    gm_error err;
    gm_vocab *v = byte_vocab(&err);
    if (!v)
        return gm_cli_fail("parse", &err);
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = format;
    go.start = start;
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    int rc = 1;
    if (gm_grammar_create_from_file(grammar, &go, &g, &err) != GM_OK ||
        gm_compiled_create(g, v, NULL, &c, &err) != GM_OK) {
        gm_cli_fail("parse", &err);
        goto out;
    }
    rc = 0;
    for (int k = 0; k < nfiles; k++) {
        int r = parse_one(c, files[k], nfiles);
        if (r)
            rc = 1;
    }
out:
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    return rc;
}
