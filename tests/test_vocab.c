/*
 * Tests of vocab/vocab and vocab/trie on the four real tokenizers:
 * decoding the reference tokenizations gives the files back byte for byte;
 * the gpt-oss vocabulary's size, specials, EOS and a few bytes; the trie's
 * layout invariants for every token and node; the plain format round trip.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/ids_file.h"
#include "vocab/vocab.h"
#include "vocab/vocab_hf.h"
#include "base/strbuf.h"

static const char *const tokenizers[] = {"sp32k", "llama3", "qwen3", "gptoss"};

typedef struct loaded {
    gm_mem mem;
    gm_vocab_data *v[4];
    gm_trie *t[4];
} loaded;

static loaded *L;

static int load_all(void **state)
{
    (void)state;
    L = calloc(1, sizeof *L);
    gm_mem_init(&L->mem, NULL, 0);
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "tokenizers/%s", tokenizers[i]);
        gm_error err;
        gm_status st = gm_vocab_load(&L->mem, gm_test_shared_path(rel), NULL, &L->v[i], &err);
        if (st != GM_OK) {
            fprintf(stderr, "%s\n", err.message);
            return -1;
        }
        if (gm_trie_build(&L->mem, L->v[i], &L->t[i], &err) != GM_OK) {
            fprintf(stderr, "%s\n", err.message);
            return -1;
        }
    }
    return 0;
}

static int free_all(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        gm_trie_destroy(L->t[i]);
        gm_vocab_data_destroy(L->v[i]);
    }
    size_t used = atomic_load(&L->mem.used);
    free(L);
    return used == 0 ? 0 : -1;
}

/* Decodes every entry of dir/ids.<tok>.json and compares with dir/NAME. */
static void decode_dir(const gm_vocab_data *v, const char *tok, const char *dir)
{
    char rel[256], path[4096];
    snprintf(rel, sizeof rel, "%s/ids.%s.json", dir, tok);
    gm_error err;
    gm_ids_file *f;
    if (gm_ids_file_load(&L->mem, gm_test_shared_path(rel), &f, &err) != GM_OK)
        fail_msg("%s", err.message);
    assert_true(f->n >= 5);
    for (size_t i = 0; i < f->n; i++) {
        const gm_ids_entry *e = &f->entries[i];
        snprintf(rel, sizeof rel, "%s/%s", dir, e->file);
        snprintf(path, sizeof path, "%s", gm_test_shared_path(rel));
        size_t wlen;
        char *want = gm_test_read_file(path, &wlen);
        gm_strbuf sb;
        gm_strbuf_init(&sb, &L->mem);
        assert_int_equal(gm_vocab_decode(v, e->ids, e->nids, &sb, &err), GM_OK);
        if (sb.n != wlen || memcmp(gm_strbuf_str(&sb), want, wlen))
            fail_msg("%s with %s: decoded text differs from the file (%zu vs %zu bytes)", path,
                     tok, sb.n, wlen);
        gm_strbuf_free(&sb);
        free(want);
    }
    gm_ids_file_destroy(f);
}

static void decode_reference_ids(void **state)
{
    (void)state;
    static const char *const dirs[] = {"corpus/go", "corpus/java", "corpus/python", "corpus/json",
                                       "benchmarks/syncode-grammars/programs"};
    for (int t = 0; t < 3; t++)
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
            decode_dir(L->v[t], tokenizers[t], dirs[d]);
}

static void expect_token(const gm_vocab_data *v, uint32_t id, const char *hex, uint8_t flags)
{
    size_t len;
    const uint8_t *b = gm_vocab_data_token(v, id, &len);
    char got[1024] = "";
    for (size_t i = 0; i < len && 2 * i + 2 < sizeof got; i++)
        snprintf(got + 2 * i, 3, "%02x", b[i]);
    if (strcmp(got, hex))
        fail_msg("token %u: bytes %s, expected %s", id, got, hex);
    assert_int_equal(v->flags[id], flags);
}

/* Hex of a string, for expected specials. */
static const char *hexstr(const char *s)
{
    static char buf[256];
    for (size_t i = 0; s[i]; i++)
        snprintf(buf + 2 * i, 3, "%02x", (unsigned char)s[i]);
    buf[2 * strlen(s)] = '\0';
    return buf;
}

static void gptoss_facts(void **state)
{
    (void)state;
    const gm_vocab_data *v = L->v[3];
    assert_int_equal(v->size, 200019); /* 199,998 model + 21 added; python3 json agrees */
    assert_int_equal(v->ntokenizer, 200019);
    assert_int_equal(v->kind, GM_VOCAB_BYTE_LEVEL);
    assert_int_equal(v->strip_leading, 0);
    static const struct { uint32_t id; const char *text; } specials[] = {
        {199998, "<|startoftext|>"}, {199999, "<|endoftext|>"}, {200003, "<|constrain|>"},
        {200005, "<|channel|>"},     {200006, "<|start|>"},     {200007, "<|end|>"},
        {200008, "<|message|>"},     {200012, "<|call|>"},      {200018, "<|endofprompt|>"}};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++)
        expect_token(v, specials[i].id, hexstr(specials[i].text), GM_TOK_SPECIAL | GM_TOK_ADDED);
    expect_token(v, 200002, hexstr("<|return|>"), GM_TOK_SPECIAL | GM_TOK_ADDED | GM_TOK_EOS);
    assert_int_equal(v->neos, 1);
    assert_int_equal(v->eos[0], 200002);
    uint32_t nspecial = 0;
    for (uint32_t i = 0; i < v->size; i++)
        nspecial += !!(v->flags[i] & GM_TOK_SPECIAL);
    assert_int_equal(nspecial, 21);
    /* bytes computed by tests/vocab_ref.py's own byte map */
    expect_token(v, 198, "0a", 0);
    expect_token(v, 220, "20", 0);
    expect_token(v, 4066, "20200a", 0);
    expect_token(v, 12663, "2075706461746573", 0);
    expect_token(v, 199997, "20636f636f73", 0);
    expect_token(v, 318, "e280", 0);
    expect_token(v, 2969, "20e2", 0);
    expect_token(v, 197, "09", 0);
    expect_token(v, 188, "00", 0);
    expect_token(v, 156344, "0000", 0);
    expect_token(v, 187, "ff", 0);
    expect_token(v, 76271, "20d0b2d0bbd0b0d0b4", 0);
}

static void other_tokenizer_facts(void **state)
{
    (void)state;
    const gm_vocab_data *sp = L->v[0], *l3 = L->v[1], *q3 = L->v[2];
    assert_int_equal(sp->size, 32000);
    assert_int_equal(sp->kind, GM_VOCAB_SENTENCEPIECE);
    assert_int_equal(sp->strip_leading, 1);
    expect_token(sp, 2, hexstr("</s>"), GM_TOK_SPECIAL | GM_TOK_ADDED | GM_TOK_EOS);
    expect_token(sp, 13, "0a", 0);     /* <0x0A> */
    expect_token(sp, 272, "20746865", 0); /* ▁the */
    expect_token(sp, 28705, "20", 0);  /* ▁ */
    assert_int_equal(l3->size, 128256);
    expect_token(l3, 128001, hexstr("<|end_of_text|>"),
                 GM_TOK_SPECIAL | GM_TOK_ADDED | GM_TOK_EOS);
    expect_token(l3, 128009, hexstr("<|eot_id|>"), GM_TOK_SPECIAL | GM_TOK_ADDED);
    assert_int_equal(q3->size, 151669);
    expect_token(q3, 151645, hexstr("<|im_end|>"), GM_TOK_SPECIAL | GM_TOK_ADDED | GM_TOK_EOS);
    expect_token(q3, 151657, hexstr("<tool_call>"), GM_TOK_ADDED); /* added, not special */
    expect_token(q3, 151667, hexstr("<think>"), GM_TOK_ADDED);
}

/* ------------------------------------------------------------------------
 * Trie invariants
 * ------------------------------------------------------------------------ */

static bool in_trie(const gm_vocab_data *v, uint32_t id)
{
    return !(v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING)) &&
           v->offsets[id + 1] > v->offsets[id];
}

/* Checks node i and its subtree; path[0, depth) is its string. Returns tokens seen. */
static uint32_t check_node(const gm_vocab_data *v, const gm_trie *t, uint32_t i, uint8_t *path,
                           uint32_t *next_tok)
{
    const gm_trie_node *nd = &t->nodes[i];
    assert_true(nd->skip > i && nd->skip <= t->nnodes);
    assert_int_equal(nd->tok_begin, *next_tok);
    assert_true(nd->tok_end >= nd->tok_begin);
    for (uint32_t k = nd->tok_begin; k < nd->tok_end; k++) {
        uint32_t id = t->tokens[k];
        if (k > nd->tok_begin)
            assert_true(t->tokens[k - 1] < id);
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, id, &len);
        assert_true(in_trie(v, id));
        assert_int_equal(len, nd->depth);
        assert_memory_equal(b, path, len);
    }
    *next_tok = nd->tok_end;
    uint32_t seen = nd->tok_end - nd->tok_begin;
    assert_true(seen > 0 || nd->skip > i + 1 || i == 0); /* no dead leaves */
    int last = -1;
    uint32_t c = i + 1;
    while (c < nd->skip) {
        const gm_trie_node *ch = &t->nodes[c];
        assert_int_equal(ch->depth, nd->depth + 1);
        assert_true((int)ch->byte > last);
        last = ch->byte;
        path[nd->depth] = ch->byte;
        seen += check_node(v, t, c, path, next_tok);
        c = ch->skip;
    }
    assert_int_equal(c, nd->skip);
    return seen;
}

static void trie_invariants(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        const gm_vocab_data *v = L->v[k];
        const gm_trie *t = L->t[k];
        uint8_t path[70000];
        uint32_t next_tok = 0;
        assert_int_equal(t->nodes[0].depth, 0);
        assert_int_equal(t->nodes[0].skip, t->nnodes);
        uint32_t seen = check_node(v, t, 0, path, &next_tok);
        uint32_t want = 0;
        size_t maxlen = 0;
        for (uint32_t id = 0; id < v->size; id++) {
            if (!in_trie(v, id))
                continue;
            want++;
            size_t len;
            const uint8_t *b = gm_vocab_data_token(v, id, &len);
            maxlen = len > maxlen ? len : maxlen;
            uint32_t node = gm_trie_find(t, b, len);
            assert_int_not_equal(node, UINT32_MAX);
            bool found = false;
            for (uint32_t j = t->nodes[node].tok_begin; j < t->nodes[node].tok_end; j++)
                found |= t->tokens[j] == id;
            if (!found)
                fail_msg("%s: token %u is not in its node %u", tokenizers[k], id, node);
        }
        assert_int_equal(seen, want);
        assert_int_equal(t->ntokens, want);
        assert_int_equal(t->max_depth, maxlen);
        /* specials are left out: their text is not in the trie unless a text token has it */
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, v->eos[0], &len);
        uint32_t node = gm_trie_find(t, b, len);
        if (node != UINT32_MAX)
            for (uint32_t j = t->nodes[node].tok_begin; j < t->nodes[node].tok_end; j++)
                assert_int_not_equal(t->tokens[j], v->eos[0]);
    }
}

/* ------------------------------------------------------------------------
 * Plain format
 * ------------------------------------------------------------------------ */

static void plain_round_trip(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        const gm_vocab_data *v = L->v[k];
        gm_strbuf sb;
        gm_strbuf_init(&sb, &L->mem);
        gm_vocab_write_plain(v, &sb);
        assert_false(sb.failed);
        gm_vocab_data *w;
        gm_error err;
        /* through the file path, as users do */
        char path[] = "/tmp/gm_test_vocab_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "wb");
        fwrite(sb.s, 1, sb.n, f);
        fclose(f);
        gm_status st = gm_vocab_load(&L->mem, path, NULL, &w, &err);
        remove(path);
        if (st != GM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(w->size, v->size);
        assert_int_equal(w->strip_leading, v->strip_leading);
        assert_int_equal(w->kind, GM_VOCAB_PLAIN);
        assert_memory_equal(w->offsets, v->offsets, ((size_t)v->size + 1) * sizeof *v->offsets);
        assert_memory_equal(w->bytes, v->bytes, v->offsets[v->size]);
        for (uint32_t i = 0; i < v->size; i++) {
            uint8_t mask = GM_TOK_SPECIAL | GM_TOK_PADDING | GM_TOK_EOS;
            assert_int_equal(w->flags[i] & mask, v->flags[i] & mask);
        }
        assert_int_equal(w->neos, v->neos);
        assert_memory_equal(w->eos, v->eos, v->neos * sizeof *v->eos);
        gm_vocab_data_destroy(w);
        gm_strbuf_free(&sb);
    }
}

static void model_size_and_extra_eos(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v;
    uint32_t extra[] = {128009, 128008};
    gm_vocab_load_options o = {128256 + 64, extra, 2, 0, 0, 0, NULL};
    assert_int_equal(gm_vocab_load(&m, gm_test_shared_path("tokenizers/llama3/tokenizer.json"),
                                   &o, &v, &err),
                     GM_OK);
    assert_int_equal(v->size, 128320);
    assert_int_equal(v->ntokenizer, 128256);
    for (uint32_t i = 128256; i < v->size; i++) {
        size_t len;
        gm_vocab_data_token(v, i, &len);
        assert_int_equal(len, 0);
        assert_int_equal(v->flags[i], GM_TOK_PADDING);
    }
    assert_int_equal(v->neos, 3);
    assert_int_equal(v->eos[0], 128001);
    assert_int_equal(v->eos[1], 128008);
    assert_int_equal(v->eos[2], 128009);
    assert_true(v->flags[128009] & GM_TOK_EOS);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &m);
    uint32_t pad = 128300;
    assert_int_equal(gm_vocab_decode(v, &pad, 1, &sb, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "padding"));
    gm_strbuf_free(&sb);
    gm_vocab_data_destroy(v);

    o.model_size = 1000;
    assert_int_equal(gm_vocab_load(&m, gm_test_shared_path("tokenizers/llama3"), &o, &v, &err),
                     GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "smaller"));
    o.model_size = 0;
    extra[0] = 200000;
    assert_int_equal(gm_vocab_load(&m, gm_test_shared_path("tokenizers/llama3"), &o, &v, &err),
                     GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "200000"));
    /* An empty token that is not special cannot be EOS, like padding (the plain format
       could not write it back). */
    static const char empty[] = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"\": 1}, "
                                "\"merges\": []}, \"decoder\": {\"type\": \"ByteLevel\"}}";
    gm_vocab_load_options e = {0, extra, 1, 0, 0, 0, NULL};
    extra[0] = 1;
    assert_int_equal(gm_vocab_load_json_(&m, "empty.json", empty, strlen(empty), NULL, 0, &e, 0, &v,
                                         &err),
                     GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "extra EOS id 1 is an empty token"));
    extra[0] = 0;
    assert_int_equal(gm_vocab_load_json_(&m, "empty.json", empty, strlen(empty), NULL, 0, &e, 0, &v,
                                         &err),
                     GM_OK);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_reference_ids),
        cmocka_unit_test(gptoss_facts),
        cmocka_unit_test(other_tokenizer_facts),
        cmocka_unit_test(trie_invariants),
        cmocka_unit_test(plain_round_trip),
        cmocka_unit_test(model_size_and_extra_eos),
    };
    return cmocka_run_group_tests(tests, load_all, free_all);
}
