/*
 * Structural-tag grammars and their vocabulary-dependent special tokens
 * (runtime/stag_source.h).
 *
 * note [special token candidates]
 * A model family's delimiters (<｜tool▁calls▁begin｜>, <tool_call>, </think>)
 * are one token in the family's own tokenizer and plain text in any other.
 * gramask's presets (dispatch/tool_families.c, python's builtin_structural_tag)
 * list them as the document's "special_token_candidates". A grammar has no
 * vocabulary, so it is built with the candidates as text, and keeps the
 * document; gm_compiled_create asks gm_stag_source_for_vocab, which takes the
 * candidates that the vocabulary has as a token of exactly that text (an added
 * token, special or not: those the tokenizer reads as one id before anything
 * else) and, when there is one at least, compiles the document again with them
 * as special tokens. There each is produced only as its id (GM_EX_TOKEN), and
 * free text never holds its text (note [special texts in free text] in
 * dispatch/stag.c), so its spelling by ordinary tokens is refused. With a
 * vocabulary that has none, the grammar is used as it is: the delimiters stay
 * text. A candidate that is a token of the vocabulary but not an added one
 * (a plain BPE merge of "<think>") stays text: nothing marks it as a delimiter
 * the tokenizer keeps whole.
 */
#include "runtime/stag_source.h"

#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/objects.h"

enum { MAX_CANDIDATES = 256 };

/* One allocation (the grammar's destructor frees it with one call): the struct, then
   the strings it points to. */
struct gm_stag_source {
    const char *json;            /* the structural tag */
    size_t len;
    const char *strings;         /* the options' special tokens, then the candidates, each
                                    NUL-ended */
    size_t nspecial, ncand;      /* how many of each */
    gm_stag_options so;          /* special_tokens and candidates unset; the schema
                                    separators point into the block */
    gm_allocator allocator;
};

static gm_status attach(gm_grammar *g, const char *json, size_t len, const gm_stag_options *so,
                        const gm_allocator *al, const gm_strbuf *cands, gm_error *err)
{
    size_t nspec = 0;
    for (size_t k = 0; k < so->n_special_tokens; k++)
        nspec += strlen(so->special_tokens[k]) + 1;
    const char *item = so->schema.item_separator, *key = so->schema.key_separator;
    size_t il = item ? strlen(item) + 1 : 0, kl = key ? strlen(key) + 1 : 0;
    size_t size = sizeof(gm_stag_source) + len + 1 + nspec + cands->n + il + kl;
    gm_stag_source *s = gm_mem_alloc(&g->mem, size);
    if (!s)
        return gm_mem_fail(&g->mem, err, "a structural tag's source");
    char *p = (char *)(s + 1);
    memset(s, 0, sizeof *s);
    s->so = *so;
    s->so.special_tokens = NULL;
    s->so.n_special_tokens = 0;
    s->so.candidates = NULL;
    s->allocator = *al;
    s->json = p;
    s->len = len;
    memcpy(p, json, len);
    p[len] = 0;
    p += len + 1;
    s->strings = p;
    for (size_t k = 0; k < so->n_special_tokens; k++) {
        size_t n = strlen(so->special_tokens[k]) + 1;
        memcpy(p, so->special_tokens[k], n);
        p += n;
    }
    s->nspecial = so->n_special_tokens;
    memcpy(p, cands->s, cands->n);
    for (size_t i = 0; i < cands->n; i++)
        s->ncand += cands->s[i] == 0;
    p += cands->n;
    if (item) {
        memcpy(p, item, il);
        s->so.schema.item_separator = p;
        p += il;
    }
    if (key) {
        memcpy(p, key, kl);
        s->so.schema.key_separator = p;
    }
    g->stag_src = s;
    return GM_OK;
}

/* The structural tag as a grammar; with candidates kept (keep) when it has any. */
static gm_status compile(const char *name, const char *json, size_t len,
                         const gm_stag_options *so, const gm_allocator *al,
                         gm_grammar_cache *cache, bool keep, gm_grammar **out, gm_error *err)
{
    gm_mem m;
    gm_mem_init(&m, al, so->limits.max_memory);
    gm_ebnf ir;
    gm_ebnf_init(&ir, &m);
    gm_strbuf cands;
    gm_strbuf_init(&cands, &m);
    gm_stag_options o = *so;
    o.candidates = keep ? &cands : NULL;
    gm_status st = gm_stag_compile(&m, name, json, len, &o, &ir, err);
    if (st == GM_OK && cands.failed)
        st = gm_mem_fail(&m, err, "special token candidates");
    if (st == GM_OK) {
        gm_grammar_options go;
        gm_grammar_options_init_defaults(&go);
        go.allocator = *al;
        go.limits = so->limits;
        go.cache = cache;
        st = gm_grammar_from_ebnf(&ir, &go, out, err);
    }
    if (st == GM_OK && cands.n && (st = attach(*out, json, len, so, al, &cands, err)) != GM_OK) {
        gm_grammar_destroy(*out);
        *out = NULL;
    }
    gm_strbuf_free(&cands);
    gm_ebnf_free(&ir);
    return st;
}

gm_status gm_stag_source_compile(const char *name, const char *json, size_t len,
                                 const gm_stag_options *so, const gm_allocator *al,
                                 gm_grammar_cache *cache, gm_grammar **out, gm_error *err)
{
    return compile(name, json, len, so, al, cache, true, out, err);
}

/* Whether v has an added token whose text is exactly s[0..n). */
static bool added_token(const gm_vocab_data *v, const uint32_t *added, size_t nadded,
                        const char *s, size_t n)
{
    for (size_t k = 0; k < nadded; k++) {
        size_t tl;
        const uint8_t *t = gm_vocab_data_token(v, added[k], &tl);
        if (tl == n && !memcmp(t, s, n))
            return true;
    }
    return false;
}

gm_status gm_stag_source_for_vocab(gm_grammar *g, const gm_vocab *v, gm_grammar **out,
                                   gm_error *err)
{
    *out = gm_grammar_retain(g);
    const gm_stag_source *s = g->stag_src;
    if (!s || !s->ncand)
        return GM_OK;
    const gm_vocab_data *vd = v->data;
    gm_mem mem; /* not the grammar's: compiles for several vocabularies may run at once */
    gm_mem *m = &mem;
    gm_mem_init(m, &s->allocator, 0);
    /* the added tokens, once: a few hundred of a vocabulary of 100K or more */
    size_t nadded = 0;
    for (uint32_t id = 0; id < vd->size; id++)
        nadded += (vd->flags[id] & (GM_TOK_ADDED | GM_TOK_SPECIAL)) != 0;
    uint32_t *added = gm_mem_alloc(m, (nadded ? nadded : 1) * sizeof *added);
    const char **specials = gm_mem_alloc(m, (s->nspecial + s->ncand) * sizeof *specials);
    gm_status st = GM_OK;
    if (!added || !specials) {
        st = gm_mem_fail(m, err, "special token candidates");
        goto out;
    }
    nadded = 0;
    for (uint32_t id = 0; id < vd->size; id++)
        if (vd->flags[id] & (GM_TOK_ADDED | GM_TOK_SPECIAL))
            added[nadded++] = id;
    size_t n = 0, found = 0;
    const char *p = s->strings;
    for (size_t k = 0; k < s->nspecial + s->ncand; k++, p += strlen(p) + 1) {
        bool cand = k >= s->nspecial;
        if (!cand || added_token(vd, added, nadded, p, strlen(p))) {
            specials[n++] = p;
            found += cand;
        }
    }
    if (found) {
        gm_stag_options so = s->so;
        so.special_tokens = specials;
        so.n_special_tokens = n;
        gm_grammar *r = NULL;
        st = compile("structural tag", s->json, s->len, &so, &s->allocator, NULL, false, &r,
                     err);
        if (st == GM_OK) {
            gm_grammar_destroy(*out);
            *out = r;
        } else {
            gm_error_prefix(err, "with the special tokens of this vocabulary");
        }
    }
out:
    gm_mem_free(m, added);
    gm_mem_free(m, specials);
    if (st != GM_OK) {
        gm_grammar_destroy(*out);
        *out = NULL;
    }
    return st;
}
