/*
 * The trigger words of a structural tag or a tool preset: the texts after
 * which free text turns into a tag (`<function=`, `{"name":`). generate's
 * readable sampling writes one out, token by token, to leave free text on
 * purpose: a trigger of plain text spans several tokens, and no single
 * token of it narrows the mask (free text may hold `<function` as well as
 * anything else), so trying tokens one at a time never finds it.
 *
 * The same holds for every other way out of free text: the end strings of
 * the grammar's free-text regions (UNTIL nodes, note [until] in ir/ebnf.h),
 * such as a tag's end (`</think>`) or the end of an XML-style argument
 * (`\n</parameter>` of qwen_xml, `</arg_value>` of glm_xml). They are
 * collected from the compiled structural tag too, so readable sampling can
 * finish those turns.
 */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "cli/session.h"
#include "cli/triggers.h"
#include "dispatch/stag.h"
#include "dispatch/tools.h"
#include "ir/ebnf.h"
#include "schema/json.h"

static int push_word(gm_cli_words *w, const char *s, size_t n)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->lens[i] == n && !memcmp(w->words[i], s, n))
            return 0;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        char **nw = realloc(w->words, cap * sizeof *nw);
        if (!nw)
            return -1;
        w->words = nw;
        size_t *nl = realloc(w->lens, cap * sizeof *nl);
        if (!nl)
            return -1;
        w->lens = nl;
        w->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return -1;
    memcpy(c, s, n);
    c[n] = 0;
    w->words[w->n] = c;
    w->lens[w->n++] = n;
    return 0;
}

/* Every string of every "triggers" array under v, at any depth. */
static int collect(const gm_jv *v, gm_cli_words *w, unsigned depth)
{
    if (depth > 256)
        return 0;
    if (v->kind == GM_JV_ARRAY) {
        for (uint32_t i = 0; i < v->n; i++)
            if (collect(v->u.items[i], w, depth + 1))
                return -1;
    } else if (v->kind == GM_JV_OBJECT) {
        for (uint32_t i = 0; i < v->n; i++) {
            const gm_jmember *mb = &v->u.members[i];
            const gm_jv *x = mb->value;
            if (!strcmp(mb->key, "triggers") && x->kind == GM_JV_ARRAY) {
                for (uint32_t k = 0; k < x->n; k++)
                    if (x->u.items[k]->kind == GM_JV_STRING && x->u.items[k]->n &&
                        push_word(w, x->u.items[k]->u.s, x->u.items[k]->n))
                        return -1;
            } else if (collect(x, w, depth + 1)) {
                return -1;
            }
        }
    }
    return 0;
}

/* The end strings of every UNTIL node of g (its ways out of free text). */
static int collect_until_ends(const gm_ebnf *g, gm_cli_words *w)
{
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const gm_ex *x = &g->nodes[i];
        if (x->kind != GM_EX_UNTIL)
            continue;
        for (uint32_t k = 0; k < x->count; k++) {
            const gm_ex *e = &g->nodes[g->kids[x->first + k]];
            /* one byte (a JSON string's closing quote) is one token: the closers of
               readable sampling find it, and write it where it ends most */
            if (e->kind == GM_EX_BYTES && e->count > 1 &&
                push_word(w, (const char *)g->bytes + e->first, e->count))
                return -1;
        }
    }
    return 0;
}

void gm_cli_words_free(gm_cli_words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->words[i]);
    free(w->words);
    free(w->lens);
    memset(w, 0, sizeof *w);
}

gm_status gm_cli_triggers(const gm_cli_load_options *lo, gm_cli_words *out, gm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *path = lo->tools ? lo->tools : lo->structural_tag;
    if (!path)
        return GM_OK;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    char *text = NULL;
    size_t len = 0;
    gm_strbuf stag;
    gm_strbuf_init(&stag, &m);
    gm_jdoc doc;
    memset(&doc, 0, sizeof doc);
    gm_status st = gm_file_read(&m, path, lim.max_input_bytes, &text, &len, err);
    if (st == GM_OK && lo->tools) {
        gm_tools_options to;
        gm_cli_tools_options(lo, &to);
        st = gm_tools_structural_tag(&m, path, text, len, &to, &stag, err);
    }
    if (st == GM_OK) {
        const char *json = lo->tools ? gm_strbuf_str(&stag) : text;
        size_t jlen = lo->tools ? strlen(json) : len;
        st = gm_jdoc_parse(&doc, &m, path, json, jlen, 0, &lim, err);
    }
    if (st == GM_OK && collect(doc.root, out, 0)) {
        gm_cli_words_free(out);
        st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory collecting trigger words", path);
    }
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    if (st == GM_OK) {
        const char *json = lo->tools ? gm_strbuf_str(&stag) : text;
        size_t jlen = lo->tools ? strlen(json) : len;
        gm_tools_options to; /* the schema options the session compiled with */
        gm_cli_tools_options(lo, &to);
        gm_stag_options so = {NULL, 0, to.schema, lo->tools ? to.limits : lim, false, NULL, false};
        st = gm_stag_compile(&m, path, json, jlen, &so, &g, err);
    }
    if (st == GM_OK && collect_until_ends(&g, out)) {
        gm_cli_words_free(out);
        st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory collecting end strings", path);
    }
    gm_ebnf_free(&g);
    gm_jdoc_free(&doc);
    gm_strbuf_free(&stag);
    if (text)
        gm_mem_free(&m, text);
    return st;
}
