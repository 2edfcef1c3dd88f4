/*
 * The token-level formats of structural tags (note [token formats]): token
 * ids in a token format, exclude_token, any_tokens, token_triggered_tags and
 * token_dispatch, written as the IR's token id sets (ir/ebnf.h note [token
 * id sets]) so that the matcher reads each of them as one whole token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/stag_internal.h"

/*
 * note [token formats]
 * XGrammar's token-level formats name tokens by id. A token id set is one
 * symbol the matcher reads as exactly one token (earley/engine_api.c), so
 * the formats are plain IR:
 *   exclude_token(X)            ExcludeToken(X E)
 *   any_tokens(X, max_tokens n) ExcludeToken(X E){0,n}  (n absent: *)
 *   token_triggered_tags(T, tags, X), free = ExcludeToken(T X E):
 *     loop (the default)        (free | Token(t) group_t)*
 *     stop_after_first          free* (Token(t) group_t)?
 *     at_least_one              first tag in full, then the loop above
 *     both                      one tag in full
 *   with group_t the tags that begin with t, each its content then its end;
 *   token_dispatch(rules, X) as token_triggered_tags with groups the rules'
 *   formats and no E (XGrammar adds the enclosing end to neither).
 * E is the end of the innermost enclosing tag when that end is a token
 * format (XGrammar's end detection): without it, an unlimited token region
 * could swallow its own end token. ExcludeToken never holds the stop ids
 * (the vocabulary's EOS) or padding. Since each symbol is one token,
 * max_tokens is an exact count here, not a budget region (note [token
 * budgets] is for text). A token given by its text in these formats needs
 * the vocabulary to become an id: the Python layer resolves such texts
 * with its tokenizer (as XGrammar does); here they are an error naming the
 * pointer. A token format's text (begin, end, token) stays gramask's
 * special-token reference (resolved when the grammar meets a vocabulary).
 */

enum { MAX_TOKEN_IDS = 1024 };

static const gm_jv *member(const gm_jv *obj, const char *key) { return gm_jv_get(obj, key); }

/* An integer token id at t (XGrammar's range: 0 .. 2^31 - 1). */
bool gm_stag_token_id(stag *c, const gm_jv *t, uint32_t *id)
{
    if (t->kind != GM_JV_NUMBER) {
        gm_stag_fail(c, t, GM_ERR_FORMAT, "a token must be an integer id or a string");
        return false;
    }
    if (t->u.s[0] == '-') {
        gm_stag_fail(c, t, GM_ERR_FORMAT, "Token ID must be non-negative");
        return false;
    }
    bool digits = t->n > 0 && t->n <= 10 && strspn(t->u.s, "0123456789") == t->n;
    unsigned long long x = digits ? strtoull(t->u.s, NULL, 10) : 0;
    if (!digits && strspn(t->u.s, "0123456789") < t->n) {
        /* 1.5, 1e3: XGrammar takes only an exact integer */
        gm_stag_fail(c, t, GM_ERR_FORMAT, "Token ID must be an integer");
        return false;
    }
    if (!digits || x > INT32_MAX) {
        gm_stag_fail(c, t, GM_ERR_LIMIT, "token id %.*s is above 2^31 - 1", (int)t->n, t->u.s);
        return false;
    }
    *id = (uint32_t)x;
    return true;
}

/* The id of a token given by text: not known without the vocabulary. */
static bool text_token(stag *c, const gm_jv *t, const char *what)
{
    gm_stag_fail(c, t, GM_ERR_FORMAT, "Token string resolution requires tokenizer_info: %s names "
                 "the token \"%.*s\" by its text; give its id, or compile the structural tag "
                 "with a tokenizer (GrammarCompiler.compile_structural_tag), which resolves it",
                 what, (int)(t->n > 100 ? 100 : t->n), t->u.s);
    return false;
}

/* The id of the token format v ({"type": "token", "token": ID}); key names v in the pointer. */
static bool token_format_id(stag *c, const gm_jv *v, uint32_t *id, const char *what)
{
    const gm_jv *type = member(v, "type");
    if (v->kind != GM_JV_OBJECT || (type && (type->kind != GM_JV_STRING ||
                                             strcmp(type->u.s, "token")))) {
        gm_stag_fail(c, v, GM_ERR_FORMAT, "%s must be a token format {\"type\": \"token\", "
                     "\"token\": ID}", what);
        return false;
    }
    const gm_jv *t = member(v, "token");
    if (!t) {
        gm_stag_fail(c, v, GM_ERR_FORMAT, "TokenFormat must have a token field");
        return false;
    }
    size_t mark = gm_stag_push_key(c, "token");
    bool ok = t->kind == GM_JV_STRING ? text_token(c, t, what) : gm_stag_token_id(c, t, id);
    gm_stag_pop(c, mark);
    return ok;
}

/* Appends the ids of the array member key of v (absent: none) to ids[*n..]. */
static bool id_list(stag *c, const gm_jv *v, const char *key, bool required, uint32_t *ids,
                    size_t *n)
{
    const gm_jv *arr = member(v, key);
    if (!arr) {
        if (required)
            gm_stag_fail(c, v, GM_ERR_FORMAT, "missing \"%s\" (a list of token ids)", key);
        return !required;
    }
    size_t mark = gm_stag_push_key(c, key);
    if (arr->kind != GM_JV_ARRAY)
        gm_stag_fail(c, arr, GM_ERR_FORMAT, "%s must be an array of token ids", key);
    for (uint32_t i = 0; c->status == GM_OK && i < arr->n; i++) {
        const gm_jv *t = arr->u.items[i];
        size_t m2 = gm_stag_push_index(c, i);
        if (*n == MAX_TOKEN_IDS)
            gm_stag_fail(c, t, GM_ERR_LIMIT, "more than %d token ids", MAX_TOKEN_IDS);
        else if (t->kind == GM_JV_STRING)
            text_token(c, t, key);
        else if (gm_stag_token_id(c, t, &ids[*n]))
            (*n)++;
        gm_stag_pop(c, m2);
    }
    gm_stag_pop(c, mark);
    return c->status == GM_OK;
}

/* Appends the id of the enclosing tag's token end, if any (note [token formats]). */
static bool end_id(stag *c, uint32_t *ids, size_t *n)
{
    if (!c->end_token)
        return true;
    if (*n == MAX_TOKEN_IDS) {
        gm_stag_fail(c, c->end_token, GM_ERR_LIMIT, "more than %d token ids", MAX_TOKEN_IDS);
        return false;
    }
    const gm_jv *t = member(c->end_token, "token");
    if (t && t->kind == GM_JV_STRING)
        return text_token(c, t, "the end of the enclosing tag (which this token region must "
                          "exclude)");
    if (!t || !gm_stag_token_id(c, t, &ids[*n]))
        return false;
    (*n)++;
    return true;
}

static uint32_t id_set(stag *c, bool exclude, const uint32_t *ids, size_t n)
{
    uint32_t node = gm_ebnf_add_token_ids(c->g, exclude, ids, n);
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

/*
 * v's member key as a non-empty array, or NULL after an error in XGrammar's
 * words ("WHO must have a KEY field with a non-empty array"), at the member
 * when it is there, else at v.
 */
static const gm_jv *nonempty_array(stag *c, const gm_jv *v, const char *key, const char *who)
{
    const gm_jv *a = member(v, key);
    if (a && a->kind == GM_JV_ARRAY && a->n > 0)
        return a;
    size_t mark = a ? gm_stag_push_key(c, key) : 0;
    gm_stag_fail(c, a ? a : v, GM_ERR_FORMAT, "%s must have a %s field with a non-empty array",
                 who, key);
    if (a)
        gm_stag_pop(c, mark);
    return NULL;
}

static bool known(stag *c, const gm_jv *v, const char *what, const char *const *keys)
{
    /* the document's root also holds the options of the whole structural tag */
    const char *with_root[12];
    size_t k = 0;
    for (; keys[k]; k++)
        with_root[k] = keys[k];
    if (v == c->doc.root) {
        with_root[k++] = "special_tokens";
        with_root[k++] = "special_token_candidates";
        with_root[k++] = "free_text";
    }
    with_root[k] = NULL;
    const gm_jmember *m = gm_jv_unknown_key(v, with_root);
    if (!m)
        return true;
    size_t mark = gm_stag_push_key(c, m->key);
    gm_stag_fail(c, m->value, GM_ERR_FORMAT, "unknown key \"%s\" in %s", m->key, what);
    gm_stag_pop(c, mark);
    return false;
}

static bool flag(stag *c, const gm_jv *v, const char *key, bool dflt)
{
    const gm_jv *b = member(v, key);
    if (!b)
        return dflt;
    if (b->kind != GM_JV_TRUE && b->kind != GM_JV_FALSE) {
        size_t mark = gm_stag_push_key(c, key);
        gm_stag_fail(c, b, GM_ERR_FORMAT, "%s must be a boolean", key);
        gm_stag_pop(c, mark);
    }
    return b->kind == GM_JV_TRUE;
}

/* max_tokens of any_tokens: GM_EX_INF when absent or null. */
static uint32_t max_tokens(stag *c, const gm_jv *v, bool *ok)
{
    const gm_jv *b = member(v, "max_tokens");
    if (!b || b->kind == GM_JV_NULL)
        return GM_EX_INF;
    bool int32 = b->kind == GM_JV_NUMBER && b->n <= 10 && b->u.s[0] != '-' &&
                 strspn(b->u.s, "0123456789") == b->n && strtoull(b->u.s, NULL, 10) <= INT32_MAX;
    size_t mark = gm_stag_push_key(c, "max_tokens");
    unsigned long long x = int32 ? strtoull(b->u.s, NULL, 10) : 0;
    if (!int32)
        gm_stag_fail(c, b, GM_ERR_FORMAT, "max_tokens must be a non-negative 32-bit integer");
    else if (x > GM_EBNF_MAX_REPEAT)
        gm_stag_fail(c, b, GM_ERR_LIMIT, "max_tokens %llu of any_tokens is above gramask's limit "
                     "of %u (a repetition bound)", x, GM_EBNF_MAX_REPEAT);
    gm_stag_pop(c, mark);
    *ok = c->status == GM_OK;
    return (uint32_t)x;
}

/*
 * The dispatch of note [token formats]: free = ExcludeToken(trig, excl),
 * then (free | Token(t_i) body_i)* when loop, else free* (Token(t_i) body_i)?
 */
static uint32_t dispatch(stag *c, const uint32_t *trig, const uint32_t *bodies, size_t nt,
                         const uint32_t *excl, size_t nx, bool loop)
{
    uint32_t *all = gm_mem_reallocarray(c->mem, NULL, nt + nx + 1, sizeof *all);
    uint32_t *alts = gm_mem_reallocarray(c->mem, NULL, nt + 1, sizeof *alts);
    uint32_t node = GM_EX_NONE;
    if (!all || !alts) {
        gm_stag_nomem(c);
        goto out;
    }
    if (nt)
        memcpy(all, trig, nt * sizeof *all);
    if (nx)
        memcpy(all + nt, excl, nx * sizeof *all);
    uint32_t free_tok = id_set(c, true, all, nt + nx);
    for (size_t i = 0; i < nt && free_tok != GM_EX_NONE; i++) {
        uint32_t seq[2] = {id_set(c, false, &trig[i], 1), bodies[i]};
        if (seq[0] == GM_EX_NONE || (alts[i] = gm_ebnf_add_seq(c->g, seq, 2)) == GM_EX_NONE)
            goto nomem;
    }
    if (free_tok == GM_EX_NONE)
        goto out;
    if (loop) {
        alts[nt] = free_tok;
        uint32_t alt = gm_ebnf_add_alt(c->g, alts, nt + 1);
        if (alt == GM_EX_NONE || (node = gm_ebnf_add_repeat(c->g, alt, 0, GM_EX_INF)) == GM_EX_NONE)
            goto nomem;
    } else {
        uint32_t seq[2] = {gm_ebnf_add_repeat(c->g, free_tok, 0, GM_EX_INF), GM_EX_NONE};
        uint32_t alt = gm_ebnf_add_alt(c->g, alts, nt);
        if (alt != GM_EX_NONE)
            seq[1] = gm_ebnf_add_repeat(c->g, alt, 0, 1);
        if (seq[0] == GM_EX_NONE || seq[1] == GM_EX_NONE ||
            (node = gm_ebnf_add_seq(c->g, seq, 2)) == GM_EX_NONE)
            goto nomem;
    }
    goto out;
nomem:
    node = gm_stag_nomem(c);
out:
    gm_mem_free(c->mem, all);
    gm_mem_free(c->mem, alts);
    return node;
}

static uint32_t exclude_token(stag *c, const gm_jv *v, bool any)
{
    static const char *const keys[] = {"type", "exclude_tokens", NULL};
    static const char *const any_keys[] = {"type", "exclude_tokens", "max_tokens", NULL};
    uint32_t ids[MAX_TOKEN_IDS];
    size_t n = 0;
    bool ok = true;
    uint32_t max = GM_EX_INF;
    if (!known(c, v, any ? "an any_tokens" : "an exclude_token", any ? any_keys : keys) ||
        !id_list(c, v, "exclude_tokens", false, ids, &n) || !end_id(c, ids, &n))
        return GM_EX_NONE;
    if (any && ((max = max_tokens(c, v, &ok)), !ok))
        return GM_EX_NONE;
    uint32_t one = id_set(c, true, ids, n);
    if (one == GM_EX_NONE || !any)
        return one;
    uint32_t node = max == 0 ? gm_ebnf_add_empty(c->g) : gm_ebnf_add_repeat(c->g, one, 0, max);
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

/* A tag of token_triggered_tags: *begin its begin token's id; returns content then end. */
static uint32_t token_tag(stag *c, const gm_jv *t, uint32_t *begin)
{
    const gm_jv *type = member(t, "type");
    if (t->kind != GM_JV_OBJECT || (type && (type->kind != GM_JV_STRING || strcmp(type->u.s, "tag"))))
        return gm_stag_fail(c, t, GM_ERR_FORMAT, "expected a tag object {\"begin\", \"content\", "
                            "\"end\"}");
    const gm_jv *b = member(t, "begin");
    if (!b)
        return gm_stag_fail(c, t, GM_ERR_FORMAT, "Tag format must have a begin field");
    size_t mark = gm_stag_push_key(c, "begin");
    if (b->kind != GM_JV_OBJECT)
        gm_stag_fail(c, b, GM_ERR_FORMAT, "Tags in token_triggered_tags must have a token format "
                     "begin, not a string");
    else
        token_format_id(c, b, begin, "the begin of a tag in token_triggered_tags");
    gm_stag_pop(c, mark);
    if (c->status != GM_OK)
        return GM_EX_NONE;
    uint32_t empty = gm_ebnf_add_empty(c->g);
    return empty == GM_EX_NONE ? gm_stag_nomem(c) : c->tag_after(c, t, empty);
}

static uint32_t token_triggered_tags(stag *c, const gm_jv *v)
{
    static const char *const keys[] = {"type", "trigger_tokens", "tags", "exclude_tokens",
                                       "at_least_one", "stop_after_first", NULL};
    uint32_t trig[MAX_TOKEN_IDS], excl[MAX_TOKEN_IDS];
    size_t nt = 0, nx = 0;
    if (!known(c, v, "a token_triggered_tags", keys) ||
        !id_list(c, v, "trigger_tokens", true, trig, &nt))
        return GM_EX_NONE;
    if (nt == 0) {
        size_t mark = gm_stag_push_key(c, "trigger_tokens");
        gm_stag_fail(c, member(v, "trigger_tokens"), GM_ERR_FORMAT, "trigger_tokens must be "
                     "non-empty");
        gm_stag_pop(c, mark);
        return GM_EX_NONE;
    }
    const gm_jv *tags = nonempty_array(c, v, "tags", "TokenTriggeredTagsFormat");
    if (!tags)
        return GM_EX_NONE;
    bool at_least_one = flag(c, v, "at_least_one", false);
    bool stop_after_first = flag(c, v, "stop_after_first", false);
    if (c->status != GM_OK || !id_list(c, v, "exclude_tokens", false, excl, &nx) ||
        !end_id(c, excl, &nx))
        return GM_EX_NONE;
    /* each tag: its trigger (exactly one) and its content then end */
    uint32_t *which = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *which);
    uint32_t *rest = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *rest);
    uint32_t *full = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *full);
    uint32_t *groups = gm_mem_reallocarray(c->mem, NULL, nt, sizeof *groups);
    uint32_t *alts = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *alts);
    uint32_t node = GM_EX_NONE;
    if (!which || !rest || !full || !groups || !alts) {
        gm_stag_nomem(c);
        goto out;
    }
    size_t mark = gm_stag_push_key(c, "tags");
    for (uint32_t i = 0; i < tags->n && c->status == GM_OK; i++) {
        size_t m2 = gm_stag_push_index(c, i);
        uint32_t begin = 0;
        rest[i] = token_tag(c, tags->u.items[i], &begin);
        which[i] = UINT32_MAX;
        for (size_t j = 0; c->status == GM_OK && j < nt; j++)
            if (trig[j] == begin && which[i] == UINT32_MAX)
                which[i] = (uint32_t)j;
        if (c->status == GM_OK && which[i] == UINT32_MAX)
            gm_stag_fail(c, member(tags->u.items[i], "begin"), GM_ERR_FORMAT, "Tag does not match "
                         "any trigger: its begin token %u is none of trigger_tokens", begin);
        uint32_t seq[2] = {GM_EX_NONE, rest[i]};
        if (c->status == GM_OK && ((seq[0] = id_set(c, false, &begin, 1)) == GM_EX_NONE ||
                                   (full[i] = gm_ebnf_add_seq(c->g, seq, 2)) == GM_EX_NONE))
            gm_stag_nomem(c);
        gm_stag_pop(c, m2);
    }
    gm_stag_pop(c, mark);
    if (c->status != GM_OK)
        goto out;
    uint32_t first = gm_ebnf_add_alt(c->g, full, tags->n);
    if (first == GM_EX_NONE) {
        gm_stag_nomem(c);
        goto out;
    }
    if (at_least_one && stop_after_first) {
        node = first;
        goto out;
    }
    /* a trigger that begins no tag dispatches to nothing: left out of the groups, it
       stays out of free too (XGrammar's TokenTagDispatch has it with no way on) */
    size_t ng = 0;
    uint32_t gtrig[MAX_TOKEN_IDS];
    for (size_t j = 0; j < nt; j++) {
        size_t k = 0;
        for (uint32_t i = 0; i < tags->n; i++)
            if (which[i] == j)
                alts[k++] = rest[i];
        if (k == 0)
            continue;
        if ((groups[ng] = gm_ebnf_add_alt(c->g, alts, k)) == GM_EX_NONE) {
            gm_stag_nomem(c);
            goto out;
        }
        gtrig[ng++] = trig[j];
    }
    /* excluded from free text: every trigger (those of no tag too), the excludes */
    for (size_t j = 0; j < nt && nx < MAX_TOKEN_IDS; j++) {
        bool grouped = false;
        for (size_t g = 0; g < ng; g++)
            grouped = grouped || gtrig[g] == trig[j];
        if (!grouped)
            excl[nx++] = trig[j];
    }
    node = dispatch(c, gtrig, groups, ng, excl, nx, !stop_after_first);
    if (node != GM_EX_NONE && at_least_one) {
        uint32_t seq[2] = {first, node};
        if ((node = gm_ebnf_add_seq(c->g, seq, 2)) == GM_EX_NONE)
            gm_stag_nomem(c);
    }
out:
    gm_mem_free(c->mem, which);
    gm_mem_free(c->mem, rest);
    gm_mem_free(c->mem, full);
    gm_mem_free(c->mem, groups);
    gm_mem_free(c->mem, alts);
    return c->status == GM_OK ? node : GM_EX_NONE;
}

static uint32_t token_dispatch(stag *c, const gm_jv *v)
{
    static const char *const keys[] = {"type", "rules", "loop", "exclude_tokens", NULL};
    uint32_t trig[MAX_TOKEN_IDS], excl[MAX_TOKEN_IDS];
    size_t nx = 0;
    if (!known(c, v, "a token_dispatch", keys))
        return GM_EX_NONE;
    const gm_jv *rules = nonempty_array(c, v, "rules", "TokenTagDispatch format");
    if (!rules)
        return GM_EX_NONE;
    if (rules->n > MAX_TOKEN_IDS)
        return gm_stag_fail(c, rules, GM_ERR_LIMIT, "more than %d rules", MAX_TOKEN_IDS);
    bool loop = flag(c, v, "loop", true);
    if (c->status != GM_OK || !id_list(c, v, "exclude_tokens", false, excl, &nx))
        return GM_EX_NONE;
    uint32_t *bodies = gm_mem_reallocarray(c->mem, NULL, rules->n, sizeof *bodies);
    if (!bodies)
        return gm_stag_nomem(c);
    size_t mark = gm_stag_push_key(c, "rules");
    for (uint32_t i = 0; i < rules->n && c->status == GM_OK; i++) {
        const gm_jv *r = rules->u.items[i];
        size_t m2 = gm_stag_push_index(c, i);
        if (r->kind != GM_JV_ARRAY || r->n != 2) {
            gm_stag_fail(c, r, GM_ERR_FORMAT, "TokenTagDispatch pair must be a 2-element array");
        } else {
            size_t m3 = gm_stag_push_index(c, 0);
            if (r->u.items[0]->kind == GM_JV_STRING)
                text_token(c, r->u.items[0], "a token_dispatch rule");
            else
                gm_stag_token_id(c, r->u.items[0], &trig[i]);
            gm_stag_pop(c, m3);
            for (uint32_t j = 0; c->status == GM_OK && j < i; j++)
                if (trig[j] == trig[i])
                    gm_stag_fail(c, r->u.items[0], GM_ERR_FORMAT, "token %u begins two rules",
                                 trig[i]);
            for (size_t j = 0; c->status == GM_OK && j < nx; j++)
                if (excl[j] == trig[i])
                    gm_stag_fail(c, r->u.items[0], GM_ERR_FORMAT, "token %u is both a rule's "
                                 "trigger and excluded", trig[i]);
            if (c->status == GM_OK) {
                m3 = gm_stag_push_index(c, 1);
                bodies[i] = c->format(c, r->u.items[1]);
                gm_stag_pop(c, m3);
            }
        }
        gm_stag_pop(c, m2);
    }
    gm_stag_pop(c, mark);
    uint32_t node = c->status == GM_OK ? dispatch(c, trig, bodies, rules->n, excl, nx, loop)
                                       : GM_EX_NONE;
    gm_mem_free(c->mem, bodies);
    return node;
}

bool gm_stag_token_level(const char *type)
{
    return !strcmp(type, "exclude_token") || !strcmp(type, "any_tokens") ||
           !strcmp(type, "token_triggered_tags") || !strcmp(type, "token_dispatch");
}

uint32_t gm_stag_token_format(stag *c, const gm_jv *v, const char *type)
{
    if (!strcmp(type, "exclude_token") || !strcmp(type, "any_tokens"))
        return exclude_token(c, v, type[0] == 'a');
    if (!strcmp(type, "token_triggered_tags"))
        return token_triggered_tags(c, v);
    return token_dispatch(c, v);
}
