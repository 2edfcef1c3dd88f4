/*
 * Loading a Hugging Face tokenizer.json (plus tokenizer_config.json) into a
 * gm_vocab_data: which ids exist, each token's bytes, which are added or
 * special, the EOS ids.
 *
 * note [ids]
 * Model ids and added-token ids together must cover 0..N-1 exactly, with
 * no hole; an added token may take a model id (its content wins, as in
 * tokenizers). Any id >= (number of model entries + added entries) cannot
 * be part of a dense range and is reported as out of range before anything
 * is allocated for it, so huge ids cost nothing.
 *
 * What each token's bytes are: note [token bytes] in hf_decoder.c. How
 * big files are read faster than jansson alone would: notes [skipping
 * merges] in json_skip.c and [fast vocab] in json_vocab.c.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/hf_decoder.h"
#include "vocab/hf_keys.h"
#include "vocab/json_keys.h"
#include "vocab/json_skip.h"
#include "vocab/json_vocab.h"
#include "vocab/vocab_hf.h"

/* What the loader reports errors with. */
typedef struct loader {
    gm_mem *mem;
    const char *name;       /* tokenizer file name, for messages */
    const char *cname;      /* config file name */
    gm_error *err;
} loader;

static gm_status bad(loader *L, const char *path, const char *what)
{
    return gm_error_set_file(L->err, GM_ERR_FORMAT, L->name, "%s: %s", path, what);
}

/* ------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------ */

/* The token text s[0..n) escaped into buf for messages (cut at ~60 chars). */
static const char *show(char *buf, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (o > 60) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------ */

/* Parses text (whole) into *out, a JSON object; errors name `name` with line:column. */
static gm_status parse_json(loader *L, const char *name, const char *text, size_t len,
                            size_t flags, json_t **out)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, flags, &je);
    if (!root) {
        size_t pos = je.position > 0 ? (size_t)je.position : 0;
        if (pos > len)
            pos = len;
        gm_srcloc loc = gm_srcloc_of_offset(name, text, len, pos);
        if (json_error_code(&je) == json_error_out_of_memory)
            return gm_error_set(L->err, GM_ERR_NOMEM, "%s: out of memory while parsing JSON",
                                name);
        return gm_error_set_at(L->err, GM_ERR_FORMAT, loc, text, len,
                               "not valid JSON: %s", je.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return gm_error_set_file(L->err, GM_ERR_FORMAT, name, "the top level is not a JSON object");
    }
    *out = root;
    return GM_OK;
}

/* A value of the text replaced by an empty one. */
typedef struct span_cut {
    size_t b, e;
    const char *with;
} span_cut;

/*
 * Parses the tokenizer text. With `fast`, model.merges is cut out (note
 * [skipping merges]) and model.vocab is read by gm_json_vocab_parse into fv
 * (note [fast vocab]) and cut out too; jansson reads the rest. If any of
 * that declines or the rest does not parse, the whole text is parsed by
 * jansson as it is (so errors are jansson's, at their real positions) and
 * fv stays empty.
 */
static gm_status parse_tokenizer(loader *L, const char *text, size_t len, bool fast,
                                 json_t **out, gm_json_vocab *fv)
{
    *out = NULL;
    static const char *const merges_path[] = {"model", "merges"};
    static const char *const vocab_path[] = {"model", "vocab"};
    size_t flags = JSON_REJECT_DUPLICATES;
    span_cut cut[2];
    int ncut = 0;
    size_t b, e;
    if (fast && gm_json_member_span(text, len, merges_path, 2, &b, &e) && text[b] == '[' &&
        e - b > 2)
        cut[ncut++] = (span_cut){b, e, "[]"};
    if (fast && gm_json_member_span(text, len, vocab_path, 2, &b, &e) && text[b] == '{') {
        gm_status st = gm_json_vocab_parse(L->mem, text + b, e - b, fv);
        if (st == GM_ERR_NOMEM || st == GM_ERR_LIMIT)
            return gm_mem_fail(L->mem, L->err, "the vocabulary");
        if (st == GM_OK)
            cut[ncut++] = (span_cut){b, e, "{}"};
    }
    if (ncut == 2 && cut[0].b > cut[1].b) {
        span_cut t = cut[0];
        cut[0] = cut[1];
        cut[1] = t;
    }
    if (ncut) {
        size_t n = len;
        for (int i = 0; i < ncut; i++)
            n = n - (cut[i].e - cut[i].b) + 2;
        char *copy = gm_mem_alloc(L->mem, n ? n : 1);
        if (!copy) {
            gm_json_vocab_free(fv);
            return gm_mem_fail(L->mem, L->err, "the vocabulary");
        }
        size_t at = 0, from = 0;
        for (int i = 0; i < ncut; i++) {
            memcpy(copy + at, text + from, cut[i].b - from);
            at += cut[i].b - from;
            memcpy(copy + at, cut[i].with, 2);
            at += 2;
            from = cut[i].e;
        }
        memcpy(copy + at, text + from, len - from);
        json_t *root = json_loadb(copy, n, flags, NULL);
        gm_mem_free(L->mem, copy);
        if (json_is_object(root)) {
            *out = root;
            return GM_OK;
        }
        json_decref(root);
        gm_json_vocab_free(fv);
    }
    return parse_json(L, L->name, text, len, flags, out);
}

/* Where token id's text comes from. */
typedef struct tok_src {
    const char *s;    /* NULL: no source yet */
    size_t n;
    int32_t vocab_index; /* Unigram index or -1; for messages */
    uint8_t added;    /* 1 = added token (content is the bytes) */
    uint8_t special;
    uint8_t normalized; /* added token matched on normalized text (note [token bytes]) */
} tok_src;

typedef struct hf_state {
    loader *L;
    json_t *root, *croot;
    json_t *vocab;          /* model.vocab */
    gm_json_vocab *fast;    /* model.vocab as read by the fast reader, or NULL */
    json_t *added;          /* added_tokens or NULL */
    bool unigram;
    tok_src *src;
    uint32_t bound;         /* ids must be below this (note [ids]) */
} hf_state;

static gm_status id_of(hf_state *H, json_t *jid, const char *path, uint32_t *id)
{
    if (!json_is_integer(jid))
        return bad(H->L, path, "the id is not an integer");
    json_int_t v = json_integer_value(jid);
    if (v < 0 || (uint64_t)v >= H->bound) {
        char what[160];
        snprintf(what, sizeof what,
                 "id %lld is out of range (the file defines %u tokens, so ids must be 0..%u)",
                 (long long)v, H->bound, H->bound - 1);
        return bad(H->L, path, what);
    }
    *id = (uint32_t)v;
    return GM_OK;
}

static gm_status read_model(hf_state *H)
{
    loader *L = H->L;
    char tb[128];
    json_t *model = json_object_get(H->root, "model");
    if (!json_is_object(model))
        return bad(L, "model", "missing or not an object");
    json_t *jt = json_object_get(model, "type");
    const char *type = json_is_string(jt) ? json_string_value(jt) : NULL;
    if (!type && json_object_get(model, "merges"))
        type = "BPE";
    if (!type)
        return bad(L, "model.type", "missing");
    if (!strcmp(type, "WordPiece"))
        return gm_error_set_file(
            L->err, GM_ERR_UNSUPPORTED, L->name,
            "model.type: WordPiece is not supported: its decoder puts a space between words "
            "and cleans up spaces around punctuation, so a token has no fixed bytes");
    if (!strcmp(type, "WordLevel"))
        return gm_error_set_file(L->err, GM_ERR_UNSUPPORTED, L->name,
                               "model.type: WordLevel is not supported: its tokens are whole "
                               "words joined with spaces, so a token has no fixed bytes");
    if (strcmp(type, "BPE") && strcmp(type, "Unigram")) {
        char what[160];
        snprintf(what, sizeof what, "unknown model type \"%s\"", show(tb, sizeof tb, type, strlen(type)));
        return gm_error_set_file(L->err, GM_ERR_UNSUPPORTED, L->name, "model.type: %s", what);
    }
    H->unigram = !strcmp(type, "Unigram");
    static const char *const bpe_keys[] = {"type", "vocab", "merges", "dropout", "unk_token",
                                           "continuing_subword_prefix", "end_of_word_suffix",
                                           "fuse_unk", "byte_fallback", "ignore_merges", NULL};
    static const char *const unigram_keys[] = {"type", "vocab", "unk_id", "byte_fallback", NULL};
    const char *unknown = gm_json_unknown_key(model, H->unigram ? unigram_keys : bpe_keys);
    if (unknown)
        return gm_error_set_file(L->err, GM_ERR_FORMAT, L->name,
                                 "model.%s: unknown key \"%s\" in a %s model", unknown, unknown,
                                 type);
    H->vocab = json_object_get(model, "vocab");
    if (H->unigram && H->fast && H->fast->n) /* "{}" was cut in: it was an object */
        return bad(L, "model.vocab", "missing or not an array of [piece, score]");
    if (H->unigram || !H->fast || !json_is_object(H->vocab) || json_object_size(H->vocab))
        H->fast = NULL; /* the fast reader's result stands only for the "{}" cut in */
    if (H->unigram ? !json_is_array(H->vocab) : !json_is_object(H->vocab))
        return bad(L, "model.vocab",
                   H->unigram ? "missing or not an array of [piece, score]"
                              : "missing or not an object of token: id");
    H->added = json_object_get(H->root, "added_tokens");
    if (H->added && json_is_null(H->added))
        H->added = NULL;
    if (H->added && !json_is_array(H->added))
        return bad(L, "added_tokens", "not an array");
    size_t nv = H->unigram ? json_array_size(H->vocab)
              : H->fast    ? H->fast->n : json_object_size(H->vocab);
    size_t na = H->added ? json_array_size(H->added) : 0;
    json_t *atd = H->croot ? json_object_get(H->croot, "added_tokens_decoder") : NULL;
    size_t total = nv + na + (json_is_object(atd) ? json_object_size(atd) : 0);
    if (total > gm_vocab_max_tokens_(NULL) || total > UINT32_MAX - 1)
        total = (size_t)GM_VOCAB_MAX_TOKENS + 1; /* reported by the caller */
    H->bound = (uint32_t)total;
    return GM_OK;
}

/* One member of a BPE model.vocab: key[0..klen) has id `v` (when is_int). */
static gm_status model_entry(hf_state *H, const char *key, size_t klen, bool is_int, int64_t v)
{
    char path[200], tb[128], what[200];
    if (is_int && v >= 0 && (uint64_t)v < H->bound && !H->src[v].s) {
        H->src[v].s = key;
        H->src[v].n = klen;
        H->src[v].vocab_index = -1;
        return GM_OK;
    }
    snprintf(path, sizeof path, "model.vocab[\"%s\"]", show(tb, sizeof tb, key, klen));
    if (!is_int)
        return bad(H->L, path, "the id is not an integer");
    if (v < 0 || (uint64_t)v >= H->bound) {
        snprintf(what, sizeof what,
                 "id %lld is out of range (the file defines %u tokens, so ids must be 0..%u)",
                 (long long)v, H->bound, H->bound - 1);
        return bad(H->L, path, what);
    }
    char tb2[128];
    snprintf(what, sizeof what, "id %lld is also the id of \"%s\"", (long long)v,
             show(tb2, sizeof tb2, H->src[v].s, H->src[v].n));
    return bad(H->L, path, what);
}

static gm_status fill_sources(hf_state *H, uint32_t max_tokens)
{
    loader *L = H->L;
    char path[200];
    if (H->bound > max_tokens)
        return gm_error_set_file(L->err, GM_ERR_LIMIT, L->name,
                               "model.vocab and added_tokens define more than %u tokens (the "
                               "limit)",
                               max_tokens);
    H->src = gm_mem_calloc(L->mem, H->bound ? H->bound : 1, sizeof *H->src);
    if (!H->src)
        return gm_mem_fail(L->mem, L->err, "the vocabulary");
    if (H->unigram) {
        for (size_t i = 0; i < json_array_size(H->vocab); i++) {
            json_t *e = json_array_get(H->vocab, i);
            json_t *piece = json_is_array(e) ? json_array_get(e, 0) : NULL;
            if (!json_is_string(piece) || json_array_size(e) != 2 ||
                !json_is_number(json_array_get(e, 1))) {
                snprintf(path, sizeof path, "model.vocab[%zu]", i);
                return bad(L, path, "not a [piece, score] pair");
            }
            H->src[i].s = json_string_value(piece);
            H->src[i].n = json_string_length(piece);
            H->src[i].vocab_index = (int32_t)i;
        }
    } else if (H->fast) {
        for (size_t i = 0; i < H->fast->n; i++) {
            const gm_json_vocab *f = H->fast;
            gm_status st = model_entry(H, f->keys + f->off[i], f->off[i + 1] - f->off[i] - 1,
                                       true, f->ids[i]);
            if (st != GM_OK)
                return st;
        }
    } else {
        const char *key;
        json_t *val;
        json_object_foreach(H->vocab, key, val) {
            gm_status st = model_entry(H, key, strlen(key), json_is_integer(val),
                                       json_is_integer(val) ? json_integer_value(val) : 0);
            if (st != GM_OK)
                return st;
        }
    }
    size_t na = H->added ? json_array_size(H->added) : 0;
    for (size_t i = 0; i < na; i++) {
        json_t *a = json_array_get(H->added, i);
        snprintf(path, sizeof path, "added_tokens[%zu]", i);
        if (!json_is_object(a))
            return bad(L, path, "not an object");
        json_t *content = json_object_get(a, "content");
        json_t *special = json_object_get(a, "special");
        if (!json_is_string(content))
            return bad(L, path, "\"content\" is missing or not a string");
        if (special && !json_is_boolean(special))
            return bad(L, path, "\"special\" is not true or false");
        uint32_t id = 0;
        char ipath[220];
        snprintf(ipath, sizeof ipath, "%s.id", path);
        gm_status st = id_of(H, json_object_get(a, "id"), ipath, &id);
        if (st != GM_OK)
            return st;
        if (H->src[id].added) {
            char what[200];
            snprintf(what, sizeof what, "id %u is already the id of another added token", id);
            return bad(L, ipath, what);
        }
        json_t *normalized = json_object_get(a, "normalized");
        if (normalized && !json_is_boolean(normalized))
            return bad(L, path, "\"normalized\" is not true or false");
        H->src[id].s = json_string_value(content);
        H->src[id].n = json_string_length(content);
        H->src[id].added = 1;
        H->src[id].special = json_is_true(special);
        H->src[id].normalized = json_is_true(normalized);
    }
    return GM_OK;
}

/* tokenizer_config.json added_tokens_decoder: {"id": {"content", "special"}} (note [ids]). */
static gm_status merge_config_added(hf_state *H)
{
    loader *L = H->L;
    json_t *atd = json_object_get(H->croot, "added_tokens_decoder");
    if (!atd || json_is_null(atd))
        return GM_OK;
    if (!json_is_object(atd))
        return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                               "added_tokens_decoder: not an object");
    const char *key;
    json_t *val;
    json_object_foreach(atd, key, val) {
        char tb[128];
        const char *k = show(tb, sizeof tb, key, strlen(key));
        char *endp;
        unsigned long long id = strtoull(key, &endp, 10);
        json_t *content = json_is_object(val) ? json_object_get(val, "content") : NULL;
        json_t *special = json_is_object(val) ? json_object_get(val, "special") : NULL;
        if (!*key || *endp || key[0] == '-' || key[0] == '+' || key[0] == ' ')
            return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                                   "added_tokens_decoder[\"%s\"]: the key is not an id", k);
        if (!json_is_string(content) || (special && !json_is_boolean(special)))
            return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                                   "added_tokens_decoder[\"%s\"]: expected {\"content\": string, "
                                   "\"special\": true/false}",
                                   k);
        if (id >= H->bound)
            return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                                   "added_tokens_decoder[\"%s\"]: id out of range (%s defines "
                                   "%u tokens)",
                                   k, L->name, H->bound);
        tok_src *t = &H->src[id];
        const char *cs = json_string_value(content);
        size_t cn = json_string_length(content);
        if (t->added && (t->n != cn || memcmp(t->s, cs, cn)))
            return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                                   "added_tokens_decoder[\"%s\"]: its content differs from "
                                   "added_tokens in %s",
                                   k, L->name);
        t->s = cs;
        t->n = cn;
        t->added = 1;
        t->special |= json_is_true(special);
    }
    return GM_OK;
}

/* The id of token text s (added tokens first, then the model's), or UINT32_MAX. */
static uint32_t find_token(hf_state *H, uint32_t ntok, const char *s, size_t n)
{
    for (uint32_t i = 0; i < ntok; i++)
        if (H->src[i].added && H->src[i].n == n && !memcmp(H->src[i].s, s, n))
            return i;
    if (!H->unigram) {
        if (memchr(s, 0, n))
            return UINT32_MAX;
        if (H->fast) {
            size_t k = gm_json_vocab_find(H->fast, s, n);
            return k != SIZE_MAX && H->fast->ids[k] >= 0 && H->fast->ids[k] < ntok
                       ? (uint32_t)H->fast->ids[k]
                       : UINT32_MAX;
        }
        json_t *v = json_object_get(H->vocab, s);
        if (json_is_integer(v) && json_integer_value(v) >= 0 &&
            (uint64_t)json_integer_value(v) < ntok)
            return (uint32_t)json_integer_value(v);
        return UINT32_MAX;
    }
    for (uint32_t i = 0; i < ntok; i++)
        if (!H->src[i].added && H->src[i].n == n && !memcmp(H->src[i].s, s, n))
            return i;
    return UINT32_MAX;
}

static gm_status config_eos(hf_state *H, uint32_t ntok, uint32_t *eos, size_t *neos)
{
    loader *L = H->L;
    *neos = 0;
    json_t *e = json_object_get(H->croot, "eos_token");
    if (!e || json_is_null(e))
        return GM_OK;
    if (json_is_object(e))
        e = json_object_get(e, "content");
    if (!json_is_string(e))
        return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                               "eos_token: expected a string or {\"content\": string}");
    const char *s = json_string_value(e);
    size_t n = json_string_length(e);
    uint32_t id = find_token(H, ntok, s, n);
    char tb[128];
    if (id == UINT32_MAX)
        return gm_error_set_file(L->err, GM_ERR_FORMAT, L->cname,
                               "eos_token \"%s\" is not a token of %s", show(tb, sizeof tb, s, n),
                               L->name);
    eos[0] = id;
    *neos = 1;
    return GM_OK;
}

/* Appends the bytes of every id to v (note [token bytes]). */
static gm_status build_bytes(hf_state *H, gm_hf_decoder *D, gm_vocab_data *v, size_t *cap)
{
    loader *L = H->L;
    size_t nb = 0;
    for (uint32_t id = 0; id < v->ntokenizer; id++) {
        const tok_src *t = &H->src[id];
        const uint8_t *b = (const uint8_t *)t->s;
        size_t n = t->n;
        if (!t->added) {
            uint32_t bad_cp = 0;
            gm_status st = gm_hf_decoder_run(D, b, n, &b, &n, &bad_cp);
            if (st == GM_ERR_NOMEM)
                return gm_mem_fail(L->mem, L->err, "the vocabulary");
            if (st == GM_ERR_LIMIT)
                n = (size_t)GM_VOCAB_MAX_TOKEN_BYTES + 1; /* reported below */
            else if (st != GM_OK) {
                char path[200], tb[128], what[160];
                if (t->vocab_index >= 0)
                    snprintf(path, sizeof path, "model.vocab[%d]", t->vocab_index);
                else
                    snprintf(path, sizeof path, "model.vocab[\"%s\"]",
                             show(tb, sizeof tb, t->s, t->n));
                if (bad_cp == UINT32_MAX)
                    snprintf(what, sizeof what,
                             "token id %u: the ByteLevel decoder sees bytes that are not UTF-8",
                             id);
                else
                    snprintf(what, sizeof what,
                             "token id %u: U+%04X is not one of the 256 characters of the "
                             "byte-level alphabet (GPT-2 byte map)",
                             id, bad_cp);
                return bad(L, path, what);
            }
        } else {
            v->flags[id] |= GM_TOK_ADDED | (t->special ? GM_TOK_SPECIAL : 0);
            gm_status st = t->normalized ? gm_hf_decoder_run_replace(D, b, n, &b, &n) : GM_OK;
            if (st == GM_ERR_NOMEM)
                return gm_mem_fail(L->mem, L->err, "the vocabulary");
            if (st == GM_ERR_LIMIT)
                n = (size_t)GM_VOCAB_MAX_TOKEN_BYTES + 1; /* reported below */
        }
        if (n > GM_VOCAB_MAX_TOKEN_BYTES)
            return gm_error_set_file(L->err, GM_ERR_LIMIT, L->name,
                                   "token id %u is %zu bytes long (the limit is %u)", id, n,
                                   (unsigned)GM_VOCAB_MAX_TOKEN_BYTES);
        if (nb + n > *cap) {
            size_t nc = *cap * 2 > nb + n ? *cap * 2 : nb + n;
            if (nc > UINT32_MAX)
                return gm_error_set_file(L->err, GM_ERR_LIMIT, L->name,
                                       "the tokens hold more than 4 GiB of bytes");
            uint8_t *nbuf = gm_mem_realloc(L->mem, v->bytes, nc);
            if (!nbuf)
                return gm_mem_fail(L->mem, L->err, "the vocabulary");
            v->bytes = nbuf;
            *cap = nc;
        }
        memcpy(v->bytes + nb, b, n);
        nb += n;
        v->offsets[id + 1] = (uint32_t)nb;
    }
    return GM_OK;
}

gm_status gm_vocab_load_json(gm_mem *m, const char *name, const char *text, size_t len,
                             const char *config_text, size_t config_len,
                             const gm_vocab_load_options *opts, gm_vocab_data **out,
                             gm_error *err)
{
    return gm_vocab_load_json_(m, name, text, len, config_text, config_len, opts, 0, out, err);
}

gm_status gm_vocab_load_json_(gm_mem *m, const char *name, const char *text, size_t len,
                              const char *config_text, size_t config_len,
                              const gm_vocab_load_options *opts, int fast, gm_vocab_data **out,
                              gm_error *err)
{
    *out = NULL;
    if (!name)
        name = "tokenizer.json";
    char cname[GM_ERROR_FILE_MAX];
    const char *slash = strrchr(name, '/');
    snprintf(cname, sizeof cname, "%.*stokenizer_config.json",
             slash ? (int)(slash - name + 1) : 0, name);
    if (!text)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_load_json: no text");
    size_t max = gm_vocab_max_file_(opts);
    if (len > max)
        return gm_error_set_file(err, GM_ERR_LIMIT, name, "larger than the limit of %zu bytes", max);
    if (config_text && config_len > max)
        return gm_error_set_file(err, GM_ERR_LIMIT, cname, "larger than the limit of %zu bytes",
                               max);
    loader L;
    memset(&L, 0, sizeof L);
    L.mem = m;
    L.name = name;
    L.cname = cname;
    L.err = err;
    hf_state H;
    memset(&H, 0, sizeof H);
    H.L = &L;
    gm_vocab_data *v = NULL;
    gm_hf_decoder D;
    gm_hf_decoder_init(&D, m);
    uint32_t eos[1];
    size_t neos = 0;

    gm_json_vocab fv;
    memset(&fv, 0, sizeof fv);
    fv.mem = m;
    /* small files are parsed whole: the cuts would not pay (note [fast vocab]) */
    bool cut = fast > 0 || (fast == 0 && len > (1u << 16));
    gm_status st = parse_tokenizer(&L, text, len, cut, &H.root, &fv);
    if (fv.keys)
        H.fast = &fv;
    /* tokenizer_config.json holds integers past 64 bits (model_max_length 1e30) and
       nothing we read there is a number */
    if (st == GM_OK && config_text)
        st = parse_json(&L, cname, config_text, config_len,
                        JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &H.croot);
    if (st == GM_OK) /* every object's keys, also those only the encoder reads */
        st = gm_hf_check_keys(H.root, name, err);
    if (st == GM_OK)
        st = read_model(&H);
    if (st == GM_OK) {
        st = gm_hf_decoder_plan(&D, json_object_get(H.root, "decoder"), name, err);
    }
    if (st == GM_OK)
        st = fill_sources(&H, gm_vocab_max_tokens_(opts));
    if (st == GM_OK && H.croot)
        st = merge_config_added(&H);
    uint32_t ntok = 0;
    if (st == GM_OK) {
        for (uint32_t i = 0; i < H.bound; i++)
            if (H.src[i].s)
                ntok = i + 1;
        for (uint32_t i = 0; i < ntok; i++)
            if (!H.src[i].s) {
                st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                                     "no token has id %u, but ids go up to %u (model.vocab and "
                                     "added_tokens must cover 0..N-1 without holes)",
                                     i, ntok - 1);
                break;
            }
        if (st == GM_OK && ntok == 0)
            st = bad(&L, "model.vocab", "no tokens");
    }
    if (st == GM_OK && H.croot)
        st = config_eos(&H, ntok, eos, &neos);
    if (st == GM_OK) {
        size_t cap = 0;
        for (uint32_t i = 0; i < ntok; i++)
            cap += H.src[i].n;
        cap = cap ? cap : 1; /* decoded bytes are fewer, but for a growing Replace */
        v = gm_vocab_new_(m, ntok, cap);
        if (!v)
            st = gm_mem_fail(m, err, "the vocabulary");
        if (st == GM_OK) {
            v->strip_leading = D.strip_leading;
            v->kind = D.byte_level ? GM_VOCAB_BYTE_LEVEL
                    : D.space_char ? GM_VOCAB_SENTENCEPIECE : GM_VOCAB_LITERAL;
            st = build_bytes(&H, &D, v, &cap);
        }
    }
    if (st == GM_OK)
        st = gm_vocab_finish_(v, eos, neos, opts, name, err);
    gm_mem_free(m, H.src);
    gm_json_vocab_free(&fv);
    gm_hf_decoder_free(&D);
    json_decref(H.root);
    json_decref(H.croot);
    if (st != GM_OK) {
        gm_vocab_data_destroy(v);
        return st;
    }
    *out = v;
    return GM_OK;
}
