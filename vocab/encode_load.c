/*
 * Building an encoder from tokenizer.json: the BPE model (vocabulary,
 * merges, flags), the normalizer and pre-tokenizer steps, the added tokens
 * (note [encoder pipeline] in encoder.h).
 *
 * model.vocab and model.merges are most of the file; they are read by the
 * fast readers (json_vocab.c) and cut out before jansson parses the rest,
 * as the vocabulary loader does (note [fast vocab]); when a fast reader
 * declines, jansson reads the whole file.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vocab/encoder.h"
#include "vocab/hf_keys.h"
#include "vocab/json_keys.h"
#include "vocab/json_skip.h"
#include "base/file.h"
#include "base/utf8.h"

typedef struct loader {
    gm_mem *m;
    const char *name;
    gm_error *err;
    gm_encoder *e;
    json_t *root;
    bool slow;                /* jansson parsed the whole file */
} loader;

static gm_status bad(loader *L, gm_status code, const char *path, const char *what)
{
    return gm_error_set_file(L->err, code, L->name, "%s: %s", path, what);
}

static gm_status nomem(loader *L) { return gm_mem_fail(L->m, L->err, "the encoder"); }

/* GM_ERR_FORMAT naming path.key when obj has a key not in keys (json_keys.h);
   `what` says which object ("a BPE model"). */
static gm_status only_keys(loader *L, json_t *obj, const char *path, const char *what,
                           const char *const *keys)
{
    const char *key = gm_json_unknown_key(obj, keys);
    if (!key)
        return GM_OK;
    return gm_error_set_file(L->err, GM_ERR_FORMAT, L->name, "%s.%s: unknown key \"%s\" in %s",
                             path, key, key, what);
}

static char *dup_str(loader *L, const char *s, size_t n)
{
    char *d = gm_mem_alloc(L->m, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* ------------------------------------------------------------------------
 * model.vocab and model.merges
 * ------------------------------------------------------------------------ */

/* A merge as read: the two token texts. */
typedef struct merge_text {
    const char *a, *b;
    size_t na, nb;
} merge_text;

typedef struct merges_read {
    char *buf;                /* decoded strings (fast reader) */
    merge_text *v;
    size_t n;
} merges_read;

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

/*
 * The fast reader of model.merges: an array of "a b" strings or of
 * ["a", "b"] pairs. 1 when declined (jansson then reads the file), -1 on
 * allocation failure.
 */
static int read_merges_fast(loader *L, const char *s, size_t n, merges_read *out)
{
    size_t cap = 1024;
    out->buf = gm_mem_alloc(L->m, n + 1);
    out->v = gm_mem_reallocarray(L->m, NULL, cap, sizeof *out->v);
    if (!out->buf || !out->v)
        return -1;
    size_t i = skip_ws(s, 0, n), o = 0;
    if (i >= n || s[i] != '[')
        return 1;
    i = skip_ws(s, i + 1, n);
    if (i < n && s[i] == ']')
        return skip_ws(s, i + 1, n) == n ? 0 : 1;
    for (;;) {
        if (out->n == cap) {
            merge_text *nv = gm_mem_reallocarray(L->m, out->v, cap * 2, sizeof *nv);
            if (!nv)
                return -1;
            out->v = nv;
            cap *= 2;
        }
        merge_text *t = &out->v[out->n];
        if (i < n && s[i] == '"') {
            long k = gm_json_read_string(s, n, &i, out->buf + o);
            if (k < 0)
                return 1;
            char *sp = memchr(out->buf + o, ' ', (size_t)k);
            if (!sp)
                return 1;
            t->a = out->buf + o;
            t->na = (size_t)(sp - t->a);
            t->b = sp + 1;
            t->nb = (size_t)k - t->na - 1;
            o += (size_t)k;
        } else if (i < n && s[i] == '[') {
            i = skip_ws(s, i + 1, n);
            if (i >= n || s[i] != '"')
                return 1;
            long k = gm_json_read_string(s, n, &i, out->buf + o);
            if (k < 0)
                return 1;
            t->a = out->buf + o;
            t->na = (size_t)k;
            o += (size_t)k;
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ',')
                return 1;
            i = skip_ws(s, i + 1, n);
            if (i >= n || s[i] != '"')
                return 1;
            k = gm_json_read_string(s, n, &i, out->buf + o);
            if (k < 0)
                return 1;
            t->b = out->buf + o;
            t->nb = (size_t)k;
            o += (size_t)k;
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ']')
                return 1;
            i++;
        } else {
            return 1;
        }
        out->n++;
        i = skip_ws(s, i, n);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, i + 1, n);
            continue;
        }
        if (i < n && s[i] == ']')
            return skip_ws(s, i + 1, n) == n ? 0 : 1;
        return 1;
    }
}

/* model.merges from the jansson tree. */
static gm_status read_merges_tree(loader *L, json_t *jm, merges_read *out)
{
    char path[64];
    if (!json_is_array(jm))
        return bad(L, GM_ERR_FORMAT, "model.merges", "missing or not an array");
    size_t n = json_array_size(jm);
    out->v = gm_mem_reallocarray(L->m, NULL, n ? n : 1, sizeof *out->v);
    if (!out->v)
        return nomem(L);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(jm, i);
        merge_text *t = &out->v[i];
        snprintf(path, sizeof path, "model.merges[%zu]", i);
        if (json_is_string(x)) {
            const char *s = json_string_value(x);
            size_t len = json_string_length(x);
            const char *sp = memchr(s, ' ', len);
            if (!sp)
                return bad(L, GM_ERR_FORMAT, path, "not two tokens separated by a space");
            t->a = s;
            t->na = (size_t)(sp - s);
            t->b = sp + 1;
            t->nb = len - t->na - 1;
        } else if (json_is_array(x) && json_array_size(x) == 2 &&
                   json_is_string(json_array_get(x, 0)) && json_is_string(json_array_get(x, 1))) {
            t->a = json_string_value(json_array_get(x, 0));
            t->na = json_string_length(json_array_get(x, 0));
            t->b = json_string_value(json_array_get(x, 1));
            t->nb = json_string_length(json_array_get(x, 1));
        } else {
            return bad(L, GM_ERR_FORMAT, path, "not a string \"a b\" or a pair [\"a\", \"b\"]");
        }
    }
    out->n = n;
    return GM_OK;
}

/* model.vocab from the jansson tree into e->vocab. */
static gm_status read_vocab_tree(loader *L, json_t *jv)
{
    gm_json_vocab *v = &L->e->vocab;
    if (!json_is_object(jv))
        return bad(L, GM_ERR_FORMAT, "model.vocab", "missing or not an object of token: id");
    size_t n = json_object_size(jv), total = 0;
    const char *key;
    json_t *val;
    json_object_foreach(jv, key, val)
        total += strlen(key) + 1;
    v->keys = gm_mem_alloc(L->m, total ? total : 1);
    v->off = gm_mem_reallocarray(L->m, NULL, n + 1, sizeof *v->off);
    v->ids = gm_mem_reallocarray(L->m, NULL, n ? n : 1, sizeof *v->ids);
    if (!v->keys || !v->off || !v->ids)
        return nomem(L);
    size_t o = 0;
    v->off[0] = 0;
    json_object_foreach(jv, key, val) {
        if (!json_is_integer(val)) {
            char path[200];
            snprintf(path, sizeof path, "model.vocab[\"%.80s\"]", key);
            return bad(L, GM_ERR_FORMAT, path, "the id is not an integer");
        }
        size_t k = strlen(key) + 1;
        memcpy(v->keys + o, key, k);
        o += k;
        v->ids[v->n] = json_integer_value(val);
        v->off[++v->n] = o;
    }
    gm_status st = gm_json_vocab_index(v);
    return st == GM_ERR_NOMEM ? nomem(L) : st;
}

/*
 * Parses the file: model.vocab and model.merges by the fast readers when
 * they accept them (cut out of what jansson sees), else by jansson.
 */
static gm_status parse_file(loader *L, const char *text, size_t len, merges_read *mr)
{
    static const char *const vpath[] = {"model", "vocab"};
    static const char *const mpath[] = {"model", "merges"};
    size_t vb, ve, mb, me;
    bool fast = gm_json_member_span(text, len, vpath, 2, &vb, &ve) && text[vb] == '{' &&
                gm_json_member_span(text, len, mpath, 2, &mb, &me) && text[mb] == '[';
    if (fast) {
        gm_status st = gm_json_vocab_parse(L->m, text + vb, ve - vb, &L->e->vocab);
        if (st == GM_ERR_NOMEM || st == GM_ERR_LIMIT)
            return nomem(L);
        fast = st == GM_OK;
    }
    if (fast) {
        int r = read_merges_fast(L, text + mb, me - mb, mr);
        if (r < 0)
            return nomem(L);
        fast = r == 0;
    }
    if (fast) {
        /* the rest, with both values replaced by empty ones */
        size_t b1 = vb < mb ? vb : mb, e1 = vb < mb ? ve : me;
        size_t b2 = vb < mb ? mb : vb, e2 = vb < mb ? me : ve;
        size_t n = len - (e1 - b1) - (e2 - b2) + 4;
        char *copy = gm_mem_alloc(L->m, n);
        if (!copy)
            return nomem(L);
        size_t at = 0;
        memcpy(copy + at, text, b1);
        at += b1;
        memcpy(copy + at, text[b1] == '{' ? "{}" : "[]", 2);
        at += 2;
        memcpy(copy + at, text + e1, b2 - e1);
        at += b2 - e1;
        memcpy(copy + at, text[b2] == '{' ? "{}" : "[]", 2);
        at += 2;
        memcpy(copy + at, text + e2, len - e2);
        L->root = json_loadb(copy, n, JSON_REJECT_DUPLICATES, NULL);
        gm_mem_free(L->m, copy);
        if (json_is_object(L->root))
            return GM_OK;
        json_decref(L->root);
        L->root = NULL;
    }
    /* the slow path: jansson reads everything */
    gm_json_vocab_free(&L->e->vocab);
    gm_mem_free(L->m, mr->buf);
    gm_mem_free(L->m, mr->v);
    memset(mr, 0, sizeof *mr);
    json_error_t je;
    L->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(L->root))
        return gm_error_set_file(L->err, GM_ERR_FORMAT, L->name,
                                 "not a JSON object (%s at line %d)", je.text, je.line);
    L->slow = true; /* model.vocab and model.merges are read from the tree */
    return GM_OK;
}

/* The id of token text s[0..n) in model.vocab, or UINT32_MAX. */
static uint32_t vocab_id(const gm_encoder *e, const char *s, size_t n)
{
    size_t k = gm_json_vocab_find(&e->vocab, s, n);
    return k == SIZE_MAX ? UINT32_MAX : (uint32_t)e->vocab.ids[k];
}

static const char *show(char *buf, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
    return buf;
}

static gm_status build_merges(loader *L, const merges_read *mr)
{
    gm_encoder *e = L->e;
    size_t slots = 64;
    while (slots < 2 * mr->n)
        slots *= 2;
    e->merges = gm_mem_reallocarray(L->m, NULL, slots, sizeof *e->merges);
    if (!e->merges)
        return nomem(L);
    memset(e->merges, 0xff, slots * sizeof *e->merges);
    e->rank_id = gm_mem_reallocarray(L->m, NULL, mr->n ? mr->n : 1, sizeof *e->rank_id);
    if (!e->rank_id)
        return nomem(L);
    e->merge_slots = slots;
    char *joined = NULL;
    size_t jcap = 0;
    gm_status st = GM_OK;
    for (size_t i = 0; i < mr->n && st == GM_OK; i++) {
        const merge_text *t = &mr->v[i];
        uint32_t a = vocab_id(e, t->a, t->na), b = vocab_id(e, t->b, t->nb);
        /* tokenizers joins a with b minus the length of continuing_subword_prefix */
        size_t skip = t->nb >= e->prefix_len ? e->prefix_len : t->nb;
        size_t nj = t->na + t->nb - skip;
        if (nj > jcap) {
            char *nb = gm_mem_realloc(L->m, joined, nj * 2);
            if (!nb) {
                st = nomem(L);
                break;
            }
            joined = nb;
            jcap = nj * 2;
        }
        memcpy(joined, t->a, t->na);
        memcpy(joined + t->na, t->b + skip, t->nb - skip);
        uint32_t id = vocab_id(e, joined, nj);
        const char *missing = a == UINT32_MAX ? t->a : b == UINT32_MAX ? t->b : joined;
        size_t nmissing = a == UINT32_MAX ? t->na : b == UINT32_MAX ? t->nb : nj;
        if (a == UINT32_MAX || b == UINT32_MAX || id == UINT32_MAX) {
            char path[64], tb[160], what[256];
            snprintf(path, sizeof path, "model.merges[%zu]", i);
            snprintf(what, sizeof what, "\"%s\" is not in model.vocab",
                     show(tb, sizeof tb, missing, nmissing));
            st = bad(L, GM_ERR_FORMAT, path, what);
            break;
        }
        size_t mask = slots - 1;
        uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
        for (size_t s = (size_t)(h ^ (h >> 29)) & mask;; s = (s + 1) & mask) {
            gm_enc_merge *g = &e->merges[s];
            if (g->a == UINT32_MAX || (g->a == a && g->b == b)) {
                /* a repeated pair: the later one wins, as in tokenizers' HashMap */
                *g = (gm_enc_merge){a, b, (uint32_t)i, id};
                e->rank_id[i] = id;
                break;
            }
        }
    }
    gm_mem_free(L->m, joined);
    return st;
}

/* ------------------------------------------------------------------------
 * model
 * ------------------------------------------------------------------------ */

static gm_status opt_bool(loader *L, json_t *obj, const char *key, const char *path, bool def,
                          bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return GM_OK;
    }
    if (!json_is_boolean(v)) {
        char p[128];
        snprintf(p, sizeof p, "%s.%s", path, key);
        return bad(L, GM_ERR_FORMAT, p, "not true or false");
    }
    *out = json_is_true(v);
    return GM_OK;
}

/* An optional string member: *out NULL when absent, null or empty. */
static gm_status opt_string(loader *L, json_t *obj, const char *key, const char *path,
                            char **out, size_t *len)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    *len = 0;
    if (!v || json_is_null(v))
        return GM_OK;
    if (!json_is_string(v)) {
        char p[128];
        snprintf(p, sizeof p, "%s.%s", path, key);
        return bad(L, GM_ERR_FORMAT, p, "not a string");
    }
    if (json_string_length(v) == 0)
        return GM_OK;
    *out = dup_str(L, json_string_value(v), json_string_length(v));
    *len = json_string_length(v);
    return *out ? GM_OK : nomem(L);
}

static gm_status read_model(loader *L, json_t *model)
{
    gm_encoder *e = L->e;
    if (!json_is_object(model))
        return bad(L, GM_ERR_FORMAT, "model", "missing or not an object");
    json_t *jt = json_object_get(model, "type");
    const char *type = json_is_string(jt) ? json_string_value(jt) : NULL;
    if (!type && json_object_get(model, "merges"))
        type = "BPE";
    if (!type || strcmp(type, "BPE")) {
        char what[200];
        snprintf(what, sizeof what,
                 "\"%.40s\": only BPE models can encode text (Unigram, WordPiece and WordLevel "
                 "cannot yet)",
                 type ? type : "(missing)");
        return bad(L, GM_ERR_UNSUPPORTED, "model.type", what);
    }
    static const char *const bpe_keys[] = {"type", "vocab", "merges", "dropout", "unk_token",
                                           "continuing_subword_prefix", "end_of_word_suffix",
                                           "fuse_unk", "byte_fallback", "ignore_merges", NULL};
    gm_status kst = only_keys(L, model, "model", "a BPE model", bpe_keys);
    if (kst != GM_OK)
        return kst;
    json_t *drop = json_object_get(model, "dropout");
    if (drop && !json_is_null(drop) && !(json_is_number(drop) && json_number_value(drop) == 0))
        return bad(L, GM_ERR_UNSUPPORTED, "model.dropout",
                   "BPE dropout is random: set it to null to encode");
    gm_status st = opt_bool(L, model, "byte_fallback", "model", false, &e->byte_fallback);
    if (st == GM_OK)
        st = opt_bool(L, model, "fuse_unk", "model", false, &e->fuse_unk);
    if (st == GM_OK)
        st = opt_bool(L, model, "ignore_merges", "model", false, &e->ignore_merges);
    if (st == GM_OK)
        st = opt_string(L, model, "continuing_subword_prefix", "model", &e->prefix,
                        &e->prefix_len);
    if (st == GM_OK)
        st = opt_string(L, model, "end_of_word_suffix", "model", &e->suffix, &e->suffix_len);
    if (st != GM_OK)
        return st;
    json_t *unk = json_object_get(model, "unk_token");
    if (unk && !json_is_null(unk) && !json_is_string(unk))
        return bad(L, GM_ERR_FORMAT, "model.unk_token", "not a string");
    return GM_OK;
}

/* model.unk_token's id (once model.vocab is read). */
static gm_status read_unk(loader *L, json_t *model)
{
    gm_encoder *e = L->e;
    e->unk = UINT32_MAX;
    json_t *unk = json_object_get(model, "unk_token");
    if (json_is_string(unk)) {
        e->unk = vocab_id(e, json_string_value(unk), json_string_length(unk));
        if (e->unk == UINT32_MAX)
            return bad(L, GM_ERR_FORMAT, "model.unk_token", "not in model.vocab");
    }
    return GM_OK;
}

/* The key of vocabulary entry k (and its length). */
static const char *vocab_key(const gm_encoder *e, size_t k, size_t *len)
{
    *len = e->vocab.off[k + 1] - e->vocab.off[k] - 1;
    return e->vocab.keys + e->vocab.off[k];
}

static gm_status fill_tables(loader *L)
{
    gm_encoder *e = L->e;
    for (uint32_t cp = 0; cp < 0x800; cp++) {
        uint8_t b[4];
        size_t k = gm_utf8_encode(b, cp);
        e->char_id[cp] = vocab_id(e, (const char *)b, k);
    }
    for (unsigned b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        e->byte_id[b] = e->byte_fallback ? vocab_id(e, name, 6) : UINT32_MAX;
    }
    /* one-character tokens of code points >= 0x800 (CJK, U+2581 ...) */
    size_t nwide = 0;
    for (size_t k = 0; k < e->vocab.n; k++) {
        size_t len;
        const char *key = vocab_key(e, k, &len);
        uint32_t cp;
        if (len >= 3 && gm_utf8_decode((const uint8_t *)key, len, &cp) == len)
            nwide++;
    }
    if (!nwide)
        return GM_OK;
    size_t slots = 16;
    while (slots < 2 * nwide)
        slots *= 2;
    e->wide_cp = gm_mem_calloc(L->m, slots, sizeof *e->wide_cp);
    e->wide_id = gm_mem_calloc(L->m, slots, sizeof *e->wide_id);
    if (!e->wide_cp || !e->wide_id)
        return nomem(L);
    e->wide_slots = slots;
    for (size_t k = 0; k < e->vocab.n; k++) {
        size_t len;
        const char *key = vocab_key(e, k, &len);
        uint32_t cp;
        if (len < 3 || gm_utf8_decode((const uint8_t *)key, len, &cp) != len)
            continue;
        size_t i = (size_t)(cp * 0x9e3779b1u) & (slots - 1);
        while (e->wide_cp[i])
            i = (i + 1) & (slots - 1);
        e->wide_cp[i] = cp;
        e->wide_id[i] = (uint32_t)e->vocab.ids[k];
    }
    return GM_OK;
}

/*
 * note [chunks]
 * A tokenizer without pre-tokenizer (SentencePiece style: sp32k) hands the
 * model a whole segment of text as one word, and the merges of a long word
 * cost a deep heap and no cache. But no merge can join two characters
 * that no token has side by side: a merged symbol is a token whose text is
 * the concatenation of the texts of the symbols it covers, so a symbol
 * spanning the boundary between characters c1 and c2 of the word (both
 * one-character tokens: their symbols' texts are themselves) is a token
 * with c1 c2 in it. Where no token has the pair, no pair of symbols across
 * the boundary ever merges, and the two sides evolve alone, each in the
 * same (rank, position) order: the word's ids are the concatenation of the
 * chunks' ids. So such a word is cut at every such boundary and each chunk
 * merged alone (and cached, note [word cache]); ignore_merges still looks
 * at the whole word first. The pair set holds every pair of adjacent
 * characters of every vocabulary text. It needs the texts to be well-formed
 * UTF-8 (so that a concatenation splits into characters as its parts do),
 * one text per id (with "a" and "b" both id 0, the merge "a b" also joins
 * "b a") and no continuing_subword_prefix or end_of_word_suffix (symbols
 * would not be the characters' own texts); otherwise words are merged
 * whole.
 */
/* Rehashes the pair set into ns slots (a power of two). */
static int pairs_resize(gm_mem *m, gm_encoder *e, size_t ns)
{
    uint64_t *np = gm_mem_reallocarray(m, NULL, ns, sizeof *np);
    if (!np)
        return -1;
    memset(np, 0xff, ns * sizeof *np);
    for (size_t i = 0; i < e->pair_slots; i++) {
        if (e->pairs[i] == UINT64_MAX)
            continue;
        uint64_t h = e->pairs[i] * 0x9e3779b97f4a7c15ull;
        size_t j = (size_t)(h >> 32) & (ns - 1);
        while (np[j] != UINT64_MAX)
            j = (j + 1) & (ns - 1);
        np[j] = e->pairs[i];
    }
    gm_mem_free(m, e->pairs);
    e->pairs = np;
    e->pair_slots = ns;
    return 0;
}

/* Adds (c1 << 32 | c2) to the pair set (*count: its size). */
static int pairs_add(gm_mem *m, gm_encoder *e, size_t *count, uint64_t k)
{
    if (2 * (*count + 1) > e->pair_slots && pairs_resize(m, e, 2 * e->pair_slots))
        return -1;
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    size_t mask = e->pair_slots - 1;
    for (size_t i = (size_t)(h >> 32) & mask;; i = (i + 1) & mask) {
        if (e->pairs[i] == k)
            return 0;
        if (e->pairs[i] == UINT64_MAX) {
            e->pairs[i] = k;
            ++*count;
            return 0;
        }
    }
}

static gm_status build_chunks(loader *L)
{
    gm_encoder *e = L->e;
    if (e->npre || e->prefix || e->suffix)
        return GM_OK;
    /* two texts of one id: a merge's text is not its symbols' (no chunks) */
    uint64_t *seen = gm_mem_calloc(L->m, e->ntokens / 64 + 1, sizeof *seen);
    if (!seen)
        return nomem(L);
    bool twice = false;
    for (size_t k = 0; k < e->vocab.n && !twice; k++) {
        uint32_t id = (uint32_t)e->vocab.ids[k]; /* < ntokens: checked at load */
        twice = (seen[id / 64] >> (id % 64)) & 1;
        seen[id / 64] |= 1ull << (id % 64);
    }
    gm_mem_free(L->m, seen);
    if (twice)
        return GM_OK;
    if (pairs_resize(L->m, e, 1024))
        return nomem(L);
    size_t count = 0;
    for (size_t k = 0; k < e->vocab.n; k++) {
        size_t len;
        const uint8_t *key = (const uint8_t *)vocab_key(e, k, &len);
        uint32_t prev = UINT32_MAX, cp;
        for (size_t i = 0; i < len;) {
            size_t c = gm_utf8_decode(key + i, len - i, &cp);
            if (c == 0) { /* not UTF-8: no chunks */
                gm_mem_free(L->m, e->pairs);
                e->pairs = NULL;
                e->pair_slots = 0;
                return GM_OK;
            }
            if (prev != UINT32_MAX && pairs_add(L->m, e, &count, (uint64_t)prev << 32 | cp))
                return nomem(L);
            prev = cp;
            i += c;
        }
    }
    e->chunk = true;
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * normalizer and pre_tokenizer
 * ------------------------------------------------------------------------ */

static gm_status compile_regex(loader *L, const char *path, json_t *jre, gm_pre_regex **out)
{
    char why[200], what[300];
    gm_status st = gm_pre_regex_compile(L->m, json_string_value(jre), json_string_length(jre),
                                        out, why, sizeof why);
    if (st == GM_ERR_NOMEM || st == GM_ERR_LIMIT)
        return why[0] ? bad(L, st, path, why) : nomem(L);
    if (st != GM_OK) {
        snprintf(what, sizeof what, "%s: %s",
                 st == GM_ERR_UNSUPPORTED ? "the encoder cannot run this regex"
                                          : "not a valid regex",
                 why);
        return bad(L, st, path, what);
    }
    return GM_OK;
}

/* A {"String": s} or {"Regex": r} pattern at path. */
static gm_status read_pattern(loader *L, json_t *pat, const char *path, char **lit,
                              size_t *litlen, gm_pre_regex **re)
{
    char p[160];
    json_t *s = json_is_object(pat) ? json_object_get(pat, "String") : NULL;
    json_t *r = json_is_object(pat) ? json_object_get(pat, "Regex") : NULL;
    static const char *const pattern_keys[] = {"String", "Regex", NULL};
    if (json_is_object(pat)) {
        gm_status st = json_object_size(pat) > 1
                           ? bad(L, GM_ERR_FORMAT, path, "expected one of String, Regex")
                           : only_keys(L, pat, path, "a pattern", pattern_keys);
        if (st != GM_OK)
            return st;
    }
    if (json_is_string(s)) {
        if (json_string_length(s) == 0) {
            snprintf(p, sizeof p, "%s.String", path);
            return bad(L, GM_ERR_UNSUPPORTED, p, "an empty pattern");
        }
        *lit = dup_str(L, json_string_value(s), json_string_length(s));
        *litlen = json_string_length(s);
        return *lit ? GM_OK : nomem(L);
    }
    if (json_is_string(r)) {
        snprintf(p, sizeof p, "%s.Regex", path);
        return compile_regex(L, p, r, re);
    }
    return bad(L, GM_ERR_FORMAT, path, "expected {\"String\": ...} or {\"Regex\": ...}");
}

/* The steps of a Sequence (members[key]) or the one object itself. */
static gm_status steps_of(loader *L, json_t *obj, const char *path, const char *key,
                          json_t **arr, size_t *n)
{
    json_t *t = json_object_get(obj, "type");
    if (!json_is_object(obj) || !json_is_string(t))
        return bad(L, GM_ERR_FORMAT, path, "not an object with a \"type\"");
    if (!strcmp(json_string_value(t), "Sequence")) {
        const char *const keys[] = {"type", key, NULL};
        gm_status st = only_keys(L, obj, path, "a Sequence", keys);
        if (st != GM_OK)
            return st;
        *arr = json_object_get(obj, key);
        if (!json_is_array(*arr)) {
            char p[128];
            snprintf(p, sizeof p, "%s.%s", path, key);
            return bad(L, GM_ERR_FORMAT, p, "missing or not an array");
        }
        *n = json_array_size(*arr);
        return GM_OK;
    }
    *arr = NULL;
    *n = 1;
    return GM_OK;
}

/*
 * Step i of a Sequence's array (arr, named `where`), or `one` itself when
 * arr is NULL: the object, its type, and its JSON path in path.
 */
static gm_status step_at(loader *L, json_t *one, json_t *arr, size_t i, const char *where,
                         char *path, size_t cap, json_t **s, const char **type)
{
    *s = arr ? json_array_get(arr, i) : one;
    if (arr)
        snprintf(path, cap, "%s[%zu]", where, i);
    else
        snprintf(path, cap, "%.*s", (int)strcspn(where, "."), where);
    json_t *jt = json_object_get(*s, "type");
    if (!json_is_object(*s) || !json_is_string(jt))
        return bad(L, GM_ERR_FORMAT, path, "not an object with a \"type\"");
    *type = json_string_value(jt);
    return GM_OK;
}

static gm_status read_normalizer(loader *L, json_t *jn)
{
    gm_encoder *e = L->e;
    if (!jn || json_is_null(jn))
        return GM_OK;
    json_t *arr;
    size_t n;
    gm_status st = steps_of(L, jn, "normalizer", "normalizers", &arr, &n);
    if (st != GM_OK)
        return st;
    e->norm = gm_mem_calloc(L->m, n ? n : 1, sizeof *e->norm);
    if (!e->norm)
        return nomem(L);
    for (size_t i = 0; i < n; i++) {
        json_t *s;
        const char *type;
        char path[96];
        st = step_at(L, jn, arr, i, "normalizer.normalizers", path, sizeof path, &s, &type);
        if (st != GM_OK)
            return st;
        gm_enc_norm *k = &e->norm[e->nnorm++]; /* counted now: destroy frees a half-read one */
        static const char *const prepend_keys[] = {"type", "prepend", NULL};
        static const char *const replace_keys[] = {"type", "pattern", "content", NULL};
        static const char *const type_only[] = {"type", NULL};
        const char *const *keys = !strcmp(type, "Prepend") ? prepend_keys
                                  : !strcmp(type, "Replace") ? replace_keys : type_only;
        char kind[80];
        snprintf(kind, sizeof kind, "a %.40s normalizer", type);
        bool known = keys != type_only || !strcmp(type, "NFC") || !strcmp(type, "NFD") ||
                     !strcmp(type, "NFKC") || !strcmp(type, "NFKD");
        if (known && (st = only_keys(L, s, path, kind, keys)) != GM_OK)
            return st;
        if (!strcmp(type, "Prepend")) {
            json_t *p = json_object_get(s, "prepend");
            if (!json_is_string(p))
                return bad(L, GM_ERR_FORMAT, path, "\"prepend\" is missing or not a string");
            k->kind = GM_NORM_PREPEND;
            k->a = dup_str(L, json_string_value(p), json_string_length(p));
            k->alen = json_string_length(p);
            if (!k->a)
                return nomem(L);
        } else if (!strcmp(type, "Replace")) {
            json_t *c = json_object_get(s, "content");
            if (!json_is_string(c))
                return bad(L, GM_ERR_FORMAT, path, "\"content\" is missing or not a string");
            char p[128];
            snprintf(p, sizeof p, "%s.pattern", path);
            k->kind = GM_NORM_REPLACE;
            st = read_pattern(L, json_object_get(s, "pattern"), p, &k->a, &k->alen, &k->re);
            if (st != GM_OK)
                return st;
            k->b = dup_str(L, json_string_value(c), json_string_length(c));
            k->blen = json_string_length(c);
            if (!k->b)
                return nomem(L);
        } else if (!strcmp(type, "NFC") || !strcmp(type, "NFD") || !strcmp(type, "NFKC") ||
                   !strcmp(type, "NFKD")) {
            k->kind = !strcmp(type, "NFC")    ? GM_NORM_NFC
                    : !strcmp(type, "NFD")    ? GM_NORM_NFD
                    : !strcmp(type, "NFKC")   ? GM_NORM_NFKC : GM_NORM_NFKD;
        } else {
            char what[160], p[128];
            snprintf(p, sizeof p, "%s.type", path);
            snprintf(what, sizeof what,
                     "the normalizer \"%.40s\" is not supported for encoding (Prepend, Replace, "
                     "NFC, NFD, NFKC, NFKD are)",
                     type);
            return bad(L, GM_ERR_UNSUPPORTED, p, what);
        }
    }
    return GM_OK;
}

static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static gm_status read_pre_tokenizer(loader *L, json_t *jp)
{
    gm_encoder *e = L->e;
    if (!jp || json_is_null(jp))
        return GM_OK;
    json_t *arr;
    size_t n;
    gm_status st = steps_of(L, jp, "pre_tokenizer", "pretokenizers", &arr, &n);
    if (st != GM_OK)
        return st;
    e->pre = gm_mem_calloc(L->m, n ? n : 1, sizeof *e->pre);
    if (!e->pre)
        return nomem(L);
    for (size_t i = 0; i < n; i++) {
        json_t *s;
        const char *type;
        char path[96], p[128];
        st = step_at(L, jp, arr, i, "pre_tokenizer.pretokenizers", path, sizeof path, &s, &type);
        if (st != GM_OK)
            return st;
        gm_enc_pre *k = &e->pre[e->npre++]; /* counted now: destroy frees a half-read one */
        static const char *const split_keys[] = {"type", "pattern", "behavior", "invert", NULL};
        static const char *const byte_level_keys[] = {"type", "add_prefix_space", "trim_offsets",
                                                      "use_regex", NULL};
        char kind[80];
        snprintf(kind, sizeof kind, "a %.40s pre-tokenizer", type);
        if (!strcmp(type, "Split") || !strcmp(type, "ByteLevel")) {
            st = only_keys(L, s, path, kind, type[0] == 'S' ? split_keys : byte_level_keys);
            if (st != GM_OK)
                return st;
        }
        if (!strcmp(type, "Split")) {
            k->kind = GM_PRE_SPLIT;
            snprintf(p, sizeof p, "%s.pattern", path);
            st = read_pattern(L, json_object_get(s, "pattern"), p, &k->lit, &k->litlen, &k->re);
            if (st != GM_OK)
                return st;
            json_t *b = json_object_get(s, "behavior");
            const char *bs = json_is_string(b) ? json_string_value(b) : "";
            static const char *const names[] = {"Isolated", "Removed", "MergedWithPrevious",
                                                "MergedWithNext", "Contiguous"};
            k->behavior = 255;
            for (uint8_t j = 0; j < 5; j++)
                if (!strcmp(bs, names[j]))
                    k->behavior = j;
            if (k->behavior == 255) {
                snprintf(p, sizeof p, "%s.behavior", path);
                return bad(L, GM_ERR_FORMAT, p,
                           "expected Isolated, Removed, MergedWithPrevious, MergedWithNext or "
                           "Contiguous");
            }
            bool inv;
            st = opt_bool(L, s, "invert", path, false, &inv);
            if (st != GM_OK)
                return st;
            k->invert = inv;
        } else if (!strcmp(type, "ByteLevel")) {
            bool aps, use_regex;
            k->kind = GM_PRE_BYTE_LEVEL;
            st = opt_bool(L, s, "add_prefix_space", path, true, &aps);
            if (st == GM_OK)
                st = opt_bool(L, s, "use_regex", path, true, &use_regex);
            if (st != GM_OK)
                return st;
            k->add_prefix_space = aps;
            if (use_regex) {
                char why[200];
                st = gm_pre_regex_compile(L->m, gpt2_pattern, sizeof gpt2_pattern - 1, &k->re,
                                          why, sizeof why);
                if (st != GM_OK)
                    return nomem(L);
            }
        } else {
            char what[200];
            snprintf(p, sizeof p, "%s.type", path);
            snprintf(what, sizeof what,
                     "the pre-tokenizer \"%.40s\" is not supported for encoding (Split and "
                     "ByteLevel are)",
                     type);
            return bad(L, GM_ERR_UNSUPPORTED, p, what);
        }
    }
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * added tokens
 * ------------------------------------------------------------------------ */

static int trie_add(gm_mem *m, gm_enc_trie *t, const uint8_t *s, size_t n, int32_t token)
{
    if (!t->nodes) {
        t->nodes = gm_mem_calloc(m, 1, sizeof *t->nodes);
        if (!t->nodes)
            return -1;
        t->nodes[0].token = -1;
        t->n = 1;
    }
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = t->nodes[at].child;
        while (c && t->nodes[c].byte != s[i])
            c = t->nodes[c].sibling;
        if (!c) {
            gm_enc_trie_node *nn = gm_mem_reallocarray(m, t->nodes, t->n + 1, sizeof *nn);
            if (!nn)
                return -1;
            t->nodes = nn;
            c = (uint32_t)t->n++;
            t->nodes[c] = (gm_enc_trie_node){0, t->nodes[at].child, -1, s[i]};
            t->nodes[at].child = c;
        }
        at = c;
    }
    t->nodes[at].token = token;
    t->first[s[0] >> 5] |= 1u << (s[0] & 31);
    return 0;
}

/* Sets t->only_first (special tokens mostly start with '<': a memchr finds them). */
static void trie_finish(gm_enc_trie *t)
{
    t->only_first = -1;
    int count = 0;
    for (int b = 0; b < 256; b++)
        if ((t->first[b >> 5] >> (b & 31)) & 1) {
            count++;
            t->only_first = (int16_t)b;
        }
    if (count != 1)
        t->only_first = -1;
}

static gm_status read_added(loader *L)
{
    gm_encoder *e = L->e;
    json_t *arr = json_object_get(L->root, "added_tokens");
    if (!arr || json_is_null(arr))
        return GM_OK;
    if (!json_is_array(arr))
        return bad(L, GM_ERR_FORMAT, "added_tokens", "not an array");
    size_t n = json_array_size(arr);
    e->added = gm_mem_calloc(L->m, n ? n : 1, sizeof *e->added);
    if (!e->added)
        return nomem(L);
    gm_bytevec text = {0};
    gm_u32vec norm_ids = {0};
    gm_status st = GM_OK;
    uint32_t *first_id = gm_mem_reallocarray(L->m, NULL, n ? n : 1, sizeof *first_id);
    if (!first_id)
        return nomem(L);
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        json_t *a = json_array_get(arr, i);
        char path[64];
        snprintf(path, sizeof path, "added_tokens[%zu]", i);
        json_t *content = json_object_get(a, "content"), *id = json_object_get(a, "id");
        if (!json_is_object(a) || !json_is_string(content) || !json_is_integer(id) ||
            json_integer_value(id) < 0 || json_integer_value(id) >= GM_VOCAB_MAX_TOKENS) {
            st = bad(L, GM_ERR_FORMAT, path, "expected {\"id\": id, \"content\": string, ...}");
            break;
        }
        gm_enc_added *t = &e->added[e->nadded];
        bool special, lstrip, rstrip, single, normalized;
        st = opt_bool(L, a, "special", path, false, &special);
        if (st == GM_OK)
            st = opt_bool(L, a, "lstrip", path, false, &lstrip);
        if (st == GM_OK)
            st = opt_bool(L, a, "rstrip", path, false, &rstrip);
        if (st == GM_OK)
            st = opt_bool(L, a, "single_word", path, false, &single);
        if (st == GM_OK)
            st = opt_bool(L, a, "normalized", path, !special, &normalized);
        if (st != GM_OK)
            break;
        uint32_t fid = (uint32_t)json_integer_value(id);
        *t = (gm_enc_added){fid, fid, 0, 0, special, lstrip, rstrip, single, normalized};
        /*
         * note [added ids]
         * tokenizers gives an added token whose text the model already has the model's
         * id (the file's id is then ignored, with a warning), and repeated text its
         * first id. Otherwise it numbers new tokens from the model's size on, which is
         * what the files say; we take the file's id there.
         */
        const char *cs = json_string_value(content);
        size_t cn = json_string_length(content);
        uint32_t known = vocab_id(e, cs, cn);
        for (size_t k = 0; k < i && known == UINT32_MAX; k++) {
            json_t *ck = json_object_get(json_array_get(arr, k), "content");
            if (json_string_length(ck) == cn && !memcmp(json_string_value(ck), cs, cn))
                known = first_id[k];
        }
        if (known != UINT32_MAX)
            t->id = known;
        first_id[i] = t->id;
        if (fid + 1 > e->ntokens)
            e->ntokens = fid + 1;
        if (json_string_length(content) == 0)
            continue; /* never matches */
        /* the pattern: the content, normalized for "normalized": true */
        size_t off = text.n;
        if (normalized) {
            st = gm_encoder_normalize(e, (const uint8_t *)json_string_value(content),
                                      json_string_length(content), &text);
            if (st != GM_OK) {
                st = gm_mem_fail(L->m, L->err, "an added token's normalized form");
                break;
            }
        } else {
            if (gm_vec_reserve(L->m, &text, text.n + json_string_length(content))) {
                st = nomem(L);
                break;
            }
            memcpy(text.v + text.n, json_string_value(content), json_string_length(content));
            text.n += json_string_length(content);
        }
        t->off = (uint32_t)off;
        t->len = (uint32_t)(text.n - off);
        if (t->len && gm_vec_push(L->m, &norm_ids, (uint32_t)e->nadded)) {
            st = nomem(L);
            break;
        }
        e->nadded++;
    }
    if (st == GM_OK) {
        e->pattern_text = (char *)text.v;
        text.v = NULL;
        for (size_t k = 0; k < norm_ids.n && st == GM_OK; k++) {
            gm_enc_added *t = &e->added[norm_ids.v[k]];
            if (trie_add(L->m, t->normalized ? &e->norm_trie : &e->raw_trie,
                         (const uint8_t *)e->pattern_text + t->off, t->len,
                         (int32_t)norm_ids.v[k]))
                st = nomem(L);
        }
    }
    gm_vec_free(L->m, &text);
    gm_vec_free(L->m, &norm_ids);
    gm_mem_free(L->m, first_id);
    return st;
}

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------ */

void gm_encoder_destroy(gm_encoder *e)
{
    if (!e)
        return;
    gm_mem *m = e->mem;
    gm_json_vocab_free(&e->vocab);
    if (e->pool) {
        for (size_t i = 0; i < GM_ENC_POOL; i++)
            gm_enc_work_destroy(atomic_load(&e->pool->slot[i]));
        gm_mem_free(m, e->pool);
    }
    gm_mem_free(m, e->merges);
    gm_mem_free(m, e->rank_id);
    gm_mem_free(m, e->wide_cp);
    gm_mem_free(m, e->wide_id);
    gm_mem_free(m, e->pairs);
    gm_mem_free(m, e->prefix);
    gm_mem_free(m, e->suffix);
    for (size_t i = 0; i < e->nnorm; i++) {
        gm_mem_free(m, e->norm[i].a);
        gm_mem_free(m, e->norm[i].b);
        gm_pre_regex_destroy(e->norm[i].re);
    }
    gm_mem_free(m, e->norm);
    for (size_t i = 0; i < e->npre; i++) {
        gm_mem_free(m, e->pre[i].lit);
        gm_pre_regex_destroy(e->pre[i].re);
    }
    gm_mem_free(m, e->pre);
    gm_mem_free(m, e->added);
    gm_mem_free(m, e->pattern_text);
    gm_mem_free(m, e->raw_trie.nodes);
    gm_mem_free(m, e->norm_trie.nodes);
    gm_mem_free(m, e);
}

gm_status gm_encoder_load_json(gm_mem *m, const char *name, const char *text, size_t len,
                               gm_encoder **out, gm_error *err)
{
    *out = NULL;
    loader L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.name = name ? name : "tokenizer.json";
    L.err = err;
    L.e = gm_mem_calloc(m, 1, sizeof *L.e);
    if (!L.e)
        return nomem(&L);
    L.e->mem = m;
    L.e->vocab.mem = m;
    merges_read mr;
    memset(&mr, 0, sizeof mr);
    gm_status st = parse_file(&L, text, len, &mr);
    if (st == GM_OK) /* note [tokenizer.json keys] in hf_keys.c */
        st = gm_hf_check_keys(L.root, L.name, err);
    json_t *model = json_object_get(L.root, "model");
    if (st == GM_OK)
        st = read_model(&L, model);
    if (st == GM_OK && L.slow) {
        st = read_vocab_tree(&L, json_object_get(model, "vocab"));
        if (st == GM_OK)
            st = read_merges_tree(&L, json_object_get(model, "merges"), &mr);
    }
    if (st == GM_OK) {
        for (size_t k = 0; k < L.e->vocab.n && st == GM_OK; k++) {
            int64_t id = L.e->vocab.ids[k];
            if (id < 0 || id >= GM_VOCAB_MAX_TOKENS) {
                char path[200], tb[128];
                snprintf(path, sizeof path, "model.vocab[\"%s\"]",
                         show(tb, sizeof tb, L.e->vocab.keys + L.e->vocab.off[k],
                              L.e->vocab.off[k + 1] - L.e->vocab.off[k] - 1));
                st = bad(&L, GM_ERR_FORMAT, path, "the id is out of range");
            } else if ((uint32_t)id + 1 > L.e->ntokens) {
                L.e->ntokens = (uint32_t)id + 1;
            }
        }
    }
    if (st == GM_OK)
        st = read_unk(&L, model);
    if (st == GM_OK)
        st = build_merges(&L, &mr);
    if (st == GM_OK)
        st = fill_tables(&L);
    if (st == GM_OK)
        st = read_normalizer(&L, json_object_get(L.root, "normalizer"));
    if (st == GM_OK)
        st = read_pre_tokenizer(&L, json_object_get(L.root, "pre_tokenizer"));
    if (st == GM_OK)
        st = build_chunks(&L);
    if (st == GM_OK)
        st = read_added(&L);
    trie_finish(&L.e->raw_trie);
    trie_finish(&L.e->norm_trie);
    if (st == GM_OK) {
        L.e->pool = gm_mem_calloc(m, 1, sizeof *L.e->pool);
        if (!L.e->pool)
            st = nomem(&L);
    }
    gm_mem_free(m, mr.buf);
    gm_mem_free(m, mr.v);
    json_decref(L.root);
    if (st != GM_OK) {
        gm_encoder_destroy(L.e);
        return st;
    }
    *out = L.e;
    return GM_OK;
}

gm_status gm_encoder_load(gm_mem *m, const char *path, gm_encoder **out, gm_error *err)
{
    *out = NULL;
    struct stat sb;
    char file[4096];
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(file, sizeof file, "%s/tokenizer.json", path);
    else
        snprintf(file, sizeof file, "%s", path);
    char *text;
    size_t len;
    gm_status st = gm_file_read(m, file, (size_t)1 << 30, &text, &len, err);
    if (st != GM_OK)
        return st;
    st = gm_encoder_load_json(m, file, text, len, out, err);
    gm_mem_free(m, text);
    return st;
}

gm_status gm_encoder_check(const gm_encoder *e, const gm_vocab_data *v, const char *name,
                           gm_error *err)
{
    bool same = e->ntokens == v->ntokenizer;
    for (size_t i = 0; i < e->nadded && same; i++) {
        const gm_enc_added *t = &e->added[i];
        size_t n;
        const uint8_t *b = gm_vocab_data_token(v, t->file_id, &n);
        same = (v->flags[t->file_id] & GM_TOK_ADDED) &&
               (t->normalized || (n == t->len && !memcmp(b, e->pattern_text + t->off, n)));
    }
    if (!same)
        return gm_error_set_file(err, GM_ERR_STATE, name,
                                 "the file changed since the vocabulary was loaded (its tokens "
                                 "differ): load the vocabulary again to encode");
    return GM_OK;
}
