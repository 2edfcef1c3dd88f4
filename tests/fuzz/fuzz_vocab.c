/*
 * libFuzzer target for the vocabulary loaders. The input is a tokenizer.json
 * text, optionally followed by "\n@@config@@\n" and a tokenizer_config.json
 * text; an input starting with "gramask-vocab " goes to the plain-format
 * loader. A vocabulary that loads is pushed through the trie, decoding and
 * the plain writer, and the plain text must load back to the same bytes.
 * Every JSON input is loaded with and without the cuts of note [fast vocab]
 * (the fast model.vocab reader, the skipped merges): status, message and
 * vocabulary must be the same, unless the merges value is not valid JSON
 * (it is not parsed when cut out: note [skipping merges]). The merges skipper is also checked against jansson:
 * when it finds model.merges in a document jansson accepts, its span must
 * parse to the same value.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/json_skip.h"
#include "vocab/vocab.h"
#include "vocab/vocab.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(gm_mem *m, gm_vocab_data *v)
{
    gm_error err;
    gm_trie *t;
    if (gm_trie_build(m, v, &t, &err) == GM_OK) {
        for (uint32_t id = 0; id < v->size; id++) {
            size_t len;
            const uint8_t *b = gm_vocab_data_token(v, id, &len);
            bool in = !(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) && len;
            if (in && gm_trie_find(t, b, len) == UINT32_MAX)
                abort();
        }
        gm_trie_destroy(t);
    }
    gm_strbuf sb;
    gm_strbuf_init(&sb, m);
    uint32_t ids[4] = {0, v->size - 1, v->size / 2, 0};
    gm_vocab_decode(v, ids, 4, &sb, &err);
    gm_strbuf_free(&sb);
    gm_strbuf_init(&sb, m);
    gm_vocab_write_plain(v, &sb);
    if (!sb.failed) {
        gm_vocab_data *w;
        if (gm_vocab_load_plain_(m, "dump", sb.s, sb.n, NULL, &w, &err) != GM_OK)
            abort();
        if (w->size != v->size || memcmp(w->offsets, v->offsets, (v->size + 1) * 4ul) ||
            memcmp(w->bytes, v->bytes, v->offsets[v->size]))
            abort();
        gm_vocab_data_destroy(w);
    }
    gm_strbuf_free(&sb);
}

static bool same_vocab(const gm_vocab_data *a, const gm_vocab_data *b)
{
    return a->size == b->size && a->ntokenizer == b->ntokenizer && a->neos == b->neos &&
           a->strip_leading == b->strip_leading && a->kind == b->kind &&
           !memcmp(a->offsets, b->offsets, ((size_t)a->size + 1) * sizeof *a->offsets) &&
           !memcmp(a->bytes, b->bytes, a->offsets[a->size]) &&
           !memcmp(a->flags, b->flags, a->size) &&
           (!a->neos || !memcmp(a->eos, b->eos, a->neos * sizeof *a->eos));
}

/* Is the value of model.merges, as the skipper finds it, not JSON on its own? */
static bool bad_merges(const char *text, size_t len)
{
    static const char *const path[] = {"model", "merges"};
    size_t b, e;
    if (!gm_json_member_span(text, len, path, 2, &b, &e))
        return false;
    json_t *j = json_loadb(text + b, e - b, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    json_decref(j);
    return j == NULL;
}

static void check_skipper(const char *text, size_t len)
{
    static const char *const path[] = {"model", "merges"};
    size_t b, e;
    if (!gm_json_member_span(text, len, path, 2, &b, &e))
        return;
    if (b > e || e > len)
        abort();
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *want = json_object_get(json_object_get(root, "model"), "merges");
    if (want) {
        json_t *got = json_loadb(text + b, e - b, JSON_DECODE_ANY, NULL);
        if (!got || !json_equal(got, want))
            abort();
        json_decref(got);
    }
    json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n@@config@@\n";
    const char *text = (const char *)data;
    size_t len = size;
    const char *config = NULL;
    size_t clen = 0;
    const char *s = NULL;
    for (size_t i = 0; !s && i + sizeof sep - 1 <= size; i++)
        if (!memcmp(text + i, sep, sizeof sep - 1))
            s = text + i;
    if (s) {
        len = (size_t)(s - text);
        config = s + sizeof sep - 1;
        clen = size - len - (sizeof sep - 1);
    }
    gm_mem m;
    gm_mem_init(&m, NULL, (size_t)256 << 20);
    gm_error err;
    gm_vocab_data *v = NULL;
    gm_vocab_load_options o = {0, NULL, 0, 100000, 0, 0, NULL};
    uint32_t extra = 1;
    if (len && (data[0] & 1)) { /* sometimes padding and an extra EOS */
        o.model_size = 3000;
        o.extra_eos = &extra;
        o.nextra_eos = 1;
    }
    check_skipper(text, len);
    gm_status st;
    if (len >= 14 && !memcmp(text, "gramask-vocab ", 14))
        st = gm_vocab_load_plain_(&m, "fuzz", text, len, &o, &v, &err);
    else {
        /* with and without note [fast vocab] (the cuts for jansson): the same result */
        st = gm_vocab_load_json_(&m, "fuzz.json", text, len, config, clen, &o, 1, &v, &err);
        gm_vocab_data *w = NULL;
        gm_error err2;
        gm_status st2 =
            gm_vocab_load_json_(&m, "fuzz.json", text, len, config, clen, &o, -1, &w, &err2);
        bool differ = st != st2 || (st != GM_OK && strcmp(err.message, err2.message)) ||
                      (st == GM_OK && !same_vocab(v, w));
        if (differ && !bad_merges(text, len)) /* unparsed merges may only hide their own errors */
            abort();
        gm_vocab_data_destroy(w);
    }
    if (st == GM_OK) {
        exercise(&m, v);
        gm_vocab_data_destroy(v);
    } else if (!err.message[0] || v) {
        abort();
    }
    if (atomic_load(&m.used) != 0)
        abort();
    return 0;
}
