/*
 * Arrays and objects.
 *
 * note [ordered members]
 * By default the listed properties appear in the order the schema lists
 * them (as XGrammar and LLGuidance generate them), each at most once,
 * required ones exactly once; properties the schema does not list
 * ("extras": additionalProperties, patternProperties) may appear anywhere
 * between them. With slots 1..n, A_i = the nonempty member lists over slots
 * 1..i, Z_i = "slots 1..i may all be absent", X one extra and T = (sep X)*:
 *   A_0 = X T (when extras exist)
 *   A_i = A_{i-1} (sep M_i T)? | [Z_{i-1}] M_i T     (slot i optional)
 *   A_i = A_{i-1}  sep M_i T   | [Z_{i-1}] M_i T     (slot i required)
 * so each A_{i-1} is used once and the expression grows linearly; every 64
 * slots the prefix becomes a rule of its own, so the expression stays
 * shallow. The object is "{" A_n "}", or "{}" when Z_n. An extra's key is
 * any string but the listed names (a trie of the names, note
 * [string encoding] for the spellings), so a listed property never slips
 * in as an extra with the wrong schema or out of order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "schema/ecma_regex.h"
#include "schema/emit.h"
#include "schema/formats.h"
#include "schema/strdfa.h"
#include "schema/validate.h"

#define MAX_SCHEMAS 256   /* schemas applying to one property */
#define MAX_DEP_SPLITS 4  /* dependentRequired entries split into alternatives */
#define CHUNK 64          /* slots per rule of a long property list */
#define MAX_COUNT_PRODUCT 4096

/* ---- arrays ---- */

uint32_t sc_emit_array(sctx *c, sc_shape *sh, uint32_t depth)
{
    gm_irb *b = &c->b;
    uint32_t mn = sh->min_items, mx = sh->max_items;
    if (mx != UINT32_MAX && mn > mx)
        return gm_irb_nothing(b);
    if (sh->unique_items && mx > 1 &&
        !sc_relax(c, sh->unique_node, "uniqueItems", "'uniqueItems' (items must differ)"))
        return GM_EX_NONE;
    uint32_t K = 0;
    for (size_t i = 0; i < sh->arrs.n; i++)
        if (sh->arrs.v[i].prefix && sh->arrs.v[i].prefix->n > K)
            K = sh->arrs.v[i].prefix->n;
    if (mx != UINT32_MAX && K > mx)
        K = mx;
    uint32_t *items = gm_mem_calloc(c->mem, (size_t)K + 1, sizeof *items);
    uint32_t *conj = gm_mem_calloc(c->mem, sh->arrs.n + 1, sizeof *conj);
    if (!items || !conj) {
        gm_mem_free(c->mem, items);
        gm_mem_free(c->mem, conj);
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    for (uint32_t j = 0; j <= K && b->st == GM_OK; j++) {
        size_t n = 0;
        for (size_t i = 0; i < sh->arrs.n; i++) {
            const sc_arrsrc *a = &sh->arrs.v[i];
            if (j < K && a->prefix && j < a->prefix->n)
                conj[n++] = a->prefix->u.items[j]->id;
            else if (a->rest)
                conj[n++] = a->rest->id;
        }
        if (j == K && (mx != UINT32_MAX && K >= mx)) {
            items[j] = gm_irb_nothing(b);
            break;
        }
        items[j] = sc_conj(c, conj, n, depth + 1);
        if (items[j] != GM_EX_NONE && gm_irb_is_nothing(b, items[j]) && (mx == UINT32_MAX || j < mx))
            mx = j; /* no item can stand at position j */
    }
    gm_mem_free(c->mem, conj);
    uint32_t r = GM_EX_NONE;
    if (b->st != GM_OK)
        goto out;
    if (mx != UINT32_MAX && mn > mx) {
        r = gm_irb_nothing(b);
        goto out;
    }
    if (mx == 0) {
        r = sc_empty_pair(c, '[');
        goto out;
    }
    /* right to left: tail(j) = what follows item j-1 */
    uint32_t sep = sc_item_sep(c, depth);
    uint32_t rest = items[K];
    uint32_t tail;
    {
        uint32_t tmin = mn > K + 1 ? mn - K - 1 : 0;
        uint32_t tmax = mx == UINT32_MAX ? GM_EX_INF : mx - K - 1;
        /* the repeated rest after the prefix (item K is the first rest item) */
        tail = mx != UINT32_MAX && mx <= K ? gm_irb_empty(b)
                                            : gm_irb_repeat(b, gm_irb_seq2(b, sep, rest), tmin, tmax);
    }
    /* tail now follows item K; build the prefix items backwards */
    uint32_t after = tail; /* what follows item j */
    uint32_t first_elt = GM_EX_NONE;
    for (uint32_t j = K + 1; j-- > 0 && b->st == GM_OK;) {
        uint32_t elt = items[j];
        if (j == K && mx != UINT32_MAX && mx <= K) {
            after = gm_irb_empty(b);
            continue;
        }
        if (j == 0) {
            first_elt = gm_irb_seq2(b, elt, after);
            break;
        }
        uint32_t piece = gm_irb_seq3(b, sep, elt, after);
        after = j >= mn ? gm_irb_opt(b, piece) : piece;
    }
    uint32_t nonempty = gm_irb_seq3(b, sc_open(c, '[', depth), first_elt, sc_close(c, '[', depth));
    r = mn == 0 ? gm_irb_alt2(b, sc_empty_pair(c, '['), nonempty) : nonempty;
out:
    gm_mem_free(c->mem, items);
    return r;
}

/* ---- objects ---- */

bool sc_prop_schemas(sctx *c, sc_shape *sh, const char *name, uint32_t nlen, uint32_t *out,
                     size_t *n, size_t cap)
{
    *n = 0;
    for (size_t i = 0; i < sh->objs.n; i++) {
        const sc_objsrc *o = &sh->objs.v[i];
        /* properties and every matching pattern apply; additionalProperties when neither does */
        const gm_jv *p = o->props ? gm_jv_getn(o->props, name, nlen) : NULL;
        bool matched = p != NULL;
        if (p && *n < cap)
            out[(*n)++] = p->id;
        for (uint32_t j = 0; o->pprops && j < o->pprops->n; j++) {
            sc_pattern *pat = sc_pattern_get(c, o->node, "patternProperties", o->pprops->u.members[j].key,
                                             o->pprops->u.members[j].klen, 0);
            if (!pat)
                return true;
            int r = sc_pattern_match(c, o->node, "patternProperties", pat, name, nlen);
            if (r < 0)
                return true;
            if (r) {
                matched = true;
                if (*n < cap)
                    out[(*n)++] = o->pprops->u.members[j].value->id;
            }
        }
        if (!matched && o->addl) {
            if (o->addl->kind == GM_JV_FALSE)
                return false;
            if (*n < cap)
                out[(*n)++] = o->addl->id;
        }
    }
    return true;
}

typedef struct slot {
    const char *name;
    uint32_t nlen;
    bool required;
    bool forbidden;
    uint32_t member;     /* "name" sep value */
} slot;

typedef struct objctx {
    sctx *c;
    sc_shape *sh;
    uint32_t depth;
    GM_VEC(slot) slots;
    uint32_t extra;      /* one extra member, or NOTHING */
} objctx;

static bool names_equal(const char *a, uint32_t na, const char *b, uint32_t nb)
{
    return na == nb && !memcmp(a, b, na);
}

static int find_slot(objctx *o, const char *name, uint32_t n)
{
    for (size_t i = 0; i < o->slots.n; i++)
        if (names_equal(o->slots.v[i].name, o->slots.v[i].nlen, name, n))
            return (int)i;
    return -1;
}

static gm_status add_slot(objctx *o, const char *name, uint32_t n)
{
    if (find_slot(o, name, n) >= 0)
        return GM_OK;
    slot s = {name, n, false, false, GM_EX_NONE};
    if (gm_vec_push(o->c->mem, &o->slots, s))
        return gm_irb_fail(&o->c->b, GM_ERR_NOMEM, "out of memory"), GM_ERR_NOMEM;
    return GM_OK;
}

/* The member expression of slot i (or forbidden). */
static void slot_member(objctx *o, slot *s)
{
    sctx *c = o->c;
    uint32_t ids[MAX_SCHEMAS];
    size_t n;
    if (!sc_prop_schemas(c, o->sh, s->name, s->nlen, ids, &n, MAX_SCHEMAS)) {
        s->forbidden = true;
        return;
    }
    if (n == MAX_SCHEMAS) {
        gm_irb_fail(&c->b, GM_ERR_LIMIT, "more than %d schemas apply to one property", MAX_SCHEMAS);
        return;
    }
    /* propertyNames: a listed name must be a valid name */
    gm_jv name = {.kind = GM_JV_STRING, .u.s = s->name, .n = s->nlen};
    for (size_t i = 0; i < o->sh->pnames.n; i++) {
        int r = sc_validate(c, &name, o->sh->pnames.v[i]);
        if (r < 0)
            return;
        if (r == 0) {
            s->forbidden = true;
            return;
        }
    }
    uint32_t v = sc_conj(c, ids, n, o->depth + 1);
    if (v == GM_EX_NONE)
        return;
    if (gm_irb_is_nothing(&c->b, v)) {
        s->forbidden = true;
        return;
    }
    uint32_t key = sc_quoted(c, gm_irb_json_text(&c->b, s->name, s->nlen));
    s->member = gm_irb_seq3(&c->b, key, sc_key_sep(c), v);
}

/* ---- keys that are none of the listed names (a trie) ---- */

typedef struct kname {
    const char *s;
    uint32_t n;
} kname;

static int cmp_kname(const void *a, const void *b)
{
    const kname *x = a, *y = b;
    uint32_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x->s, y->s, n);
    return r ? r : (x->n < y->n ? -1 : x->n > y->n);
}

static uint32_t cp_at(const kname *k, uint32_t pos, uint32_t *len)
{
    uint32_t cp;
    size_t n = gm_utf8_decode((const uint8_t *)k->s + pos, k->n - pos, &cp);
    if (!n) {
        *len = 1;
        return (uint8_t)k->s[pos];
    }
    *len = (uint32_t)n;
    return cp;
}

/* Strings (then the closing quote) that are none of names[i0..i1), which share pos bytes. */
static uint32_t trie_node(sctx *c, const kname *names, size_t i0, size_t i1, uint32_t pos,
                          uint32_t free_rest, unsigned depth)
{
    gm_irb *b = &c->b;
    if (depth > 900)
        return gm_irb_fail(b, GM_ERR_LIMIT, "a property name longer than 900 characters");
    GM_VEC(uint32_t) alts = {0};
    size_t i = i0;
    bool ends = false;
    if (names[i].n == pos) {
        ends = true;
        i++;
    }
    if (!ends && gm_vec_push(c->mem, &alts, gm_irb_lit(b, "\"")))
        goto nomem;
    gm_cpset others = {0};
    if (gm_cpset_add_range(c->mem, &others, 0, GM_CP_MAX))
        goto nomem;
    while (i < i1 && b->st == GM_OK) {
        uint32_t len;
        uint32_t cp = cp_at(&names[i], pos, &len);
        size_t j = i + 1;
        uint32_t l2;
        while (j < i1 && cp_at(&names[j], pos, &l2) == cp)
            j++;
        gm_cpset one = {0};
        if (gm_cpset_add_range(c->mem, &one, cp, cp)) {
            gm_cpset_free(c->mem, &others);
            goto nomem;
        }
        uint32_t e = gm_irb_seq2(b, gm_irb_json_set(b, &one), trie_node(c, names, i, j, pos + len, free_rest, depth + 1));
        gm_cpset_free(c->mem, &one);
        /* others := others minus cp */
        gm_cpset neg = {0};
        if (gm_cpset_copy(c->mem, &neg, &others) || gm_cpset_negate(c->mem, &neg) ||
            gm_cpset_add_range(c->mem, &neg, cp, cp) || gm_cpset_negate(c->mem, &neg)) {
            gm_cpset_free(c->mem, &neg);
            gm_cpset_free(c->mem, &others);
            goto nomem;
        }
        gm_cpset_free(c->mem, &others);
        others = neg;
        if (gm_vec_push(c->mem, &alts, e)) {
            gm_cpset_free(c->mem, &others);
            goto nomem;
        }
        i = j;
    }
    if (others.n && gm_vec_push(c->mem, &alts, gm_irb_seq2(b, gm_irb_json_set(b, &others), free_rest))) {
        gm_cpset_free(c->mem, &others);
        goto nomem;
    }
    gm_cpset_free(c->mem, &others);
    uint32_t r = gm_irb_alt(b, alts.v, alts.n);
    gm_vec_free(c->mem, &alts);
    return r;
nomem:
    gm_vec_free(c->mem, &alts);
    return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
}

/* A quoted key that is none of the slot names. */
static uint32_t keys_except(objctx *o)
{
    sctx *c = o->c;
    if (o->slots.n == 0)
        return sc_string(c);
    kname *names = gm_mem_alloc(c->mem, o->slots.n * sizeof *names);
    if (!names)
        return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < o->slots.n; i++)
        names[i] = (kname){o->slots.v[i].name, o->slots.v[i].nlen};
    qsort(names, o->slots.n, sizeof *names, cmp_kname);
    /* one rule per set of names: objects of one schema distributed over anyOf branches share it */
    gm_strbuf key;
    gm_strbuf_init(&key, c->mem);
    for (size_t i = 0; i < o->slots.n; i++) {
        gm_strbuf_append(&key, names[i].s, names[i].n);
        gm_strbuf_putc(&key, 0);
    }
    uint32_t id = UINT32_MAX;
    int added = 0;
    if (key.failed || gm_intern_put(&c->key_sets, key.s, key.n, &id, &added)) {
        gm_strbuf_free(&key);
        gm_mem_free(c->mem, names);
        return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
    }
    gm_strbuf_free(&key);
    if (!added) {
        gm_mem_free(c->mem, names);
        return c->key_set_rule.v[id];
    }
    uint32_t free_rest = gm_irb_seq2(&c->b, sc_string_chars(c), gm_irb_lit(&c->b, "\""));
    uint32_t body = trie_node(c, names, 0, o->slots.n, 0, free_rest, 0);
    gm_mem_free(c->mem, names);
    uint32_t r = gm_irb_rule(&c->b, "key", gm_irb_seq2(&c->b, gm_irb_lit(&c->b, "\""), body));
    if (r != GM_EX_NONE && gm_vec_push(c->mem, &c->key_set_rule, r))
        return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
    return r;
}

/*
 * The languages a propertyNames schema's strings must all be in, appended
 * to langs (their ASTs in re, or the patterns' own); false when the schema
 * is not a plain string language, or past a limit (then named in why).
 */
static bool pnames_langs(sctx *c, uint32_t id, gm_regex *re, sc_lang *langs, size_t *n, size_t cap,
                         char *why, size_t whycap)
{
    sc_shape sh;
    bool ok = sc_shape_build(c, &id, 1, &sh) == GM_OK;
    for (size_t i = 0; ok && i < sh.unsup.n; i++)
        if (sh.unsup.v[i].types & T_STR)
            ok = false;
    if (ok && (sh.groups.n || sh.mults.n))
        ok = false; /* anyOf in propertyNames: not handled as one string language here */
    if (ok && (sh.impossible || !(sh.types & T_STR) || sh.enums.n)) {
        /* a finite set of names: the enum's strings that are valid names */
        GM_VEC(const char *) words = {0};
        GM_VEC(uint32_t) lens = {0};
        if (!sh.impossible && (sh.types & T_STR)) {
            const sc_enum *e = &sh.enums.v[0];
            uint32_t m = e->single ? 1 : e->list->n;
            for (uint32_t i = 0; i < m && ok; i++) {
                const gm_jv *x = e->single ? e->single : e->list->u.items[i];
                if (x->kind != GM_JV_STRING || sc_validate(c, x, id) != 1)
                    continue;
                if (gm_vec_push(c->mem, &words, x->u.s) || gm_vec_push(c->mem, &lens, x->n)) {
                    ok = false;
                    c->st = gm_mem_fail(c->mem, c->err, "a key automaton");
                }
            }
        }
        uint32_t root = ok ? sc_regex_words(re, words.v, lens.v, words.n) : UINT32_MAX;
        if (root == UINT32_MAX && c->st == GM_OK)
            c->st = gm_mem_fail(c->mem, c->err, "a key automaton");
        if (root != UINT32_MAX && *n >= cap)
            snprintf(why, whycap, "a key automaton of more than %zu languages (a fixed limit)", cap);
        if (root == UINT32_MAX || *n >= cap)
            ok = false;
        else
            langs[(*n)++] = (sc_lang){re, root};
        gm_vec_free(c->mem, &words);
        gm_vec_free(c->mem, &lens);
        sc_shape_free(c, &sh);
        return ok;
    }
    for (size_t i = 0; ok && i < sh.strs.n; i++) {
        const sc_strc *st = &sh.strs.v[i];
        sc_pattern *p;
        if (st->kw[0] == 'p') {
            p = sc_pattern_get(c, st->node, "pattern", st->value->u.s, st->value->n, 0);
        } else {
            const sc_format *f = sc_format_find(st->value->u.s);
            if (!f)
                continue;
            p = f->approximate ? NULL : sc_pattern_get(c, st->node, "format", f->regex, strlen(f->regex),
                                                       GM_ECMA_WHOLE);
        }
        if (p && *n >= cap)
            snprintf(why, whycap, "a key automaton of more than %zu languages (a fixed limit)", cap);
        if (!p || *n >= cap)
            ok = false;
        else
            langs[(*n)++] = (sc_lang){sc_pattern_regex(p), sc_pattern_regex(p)->root};
    }
    if (ok && (sh.min_len > 0 || sh.max_len != UINT32_MAX)) {
        bool too_long = (sh.max_len != UINT32_MAX && sh.max_len > 2000) || sh.min_len > 2000;
        uint32_t root = too_long ? UINT32_MAX : sc_regex_length(re, sh.min_len, sh.max_len);
        if (root == UINT32_MAX && !too_long && c->st == GM_OK)
            c->st = gm_mem_fail(c->mem, c->err, "a key automaton");
        if (too_long)
            snprintf(why, whycap, "a key automaton with a length bound past 2000 (a fixed limit)");
        else if (root != UINT32_MAX && *n >= cap)
            snprintf(why, whycap, "a key automaton of more than %zu languages (a fixed limit)", cap);
        if (root == UINT32_MAX || *n >= cap)
            ok = false;
        else
            langs[(*n)++] = (sc_lang){re, root};
    }
    sc_shape_free(c, &sh);
    return ok;
}

/* A pattern of patternProperties: its source schema and member. */
typedef struct pprop {
    size_t src;
    const gm_jmember *m;
} pprop;

/*
 * Exact extras through string automata (note [string automata]): the
 * product of the patterns, the listed names and the propertyNames
 * languages; one member alternative per reachable set of matching
 * patterns, with the schemas that set brings (and additionalProperties of
 * the sources none of whose patterns match). false: not one string
 * language, or past a limit (named in why[0..cap), else why is ""): the
 * caller falls back.
 */
static bool extras_exact(objctx *o, uint32_t *out, char *why, size_t cap)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    sc_shape *sh = o->sh;
    pprop pps[SC_SDFA_MAX_PARTS];
    sc_lang langs[SC_SDFA_MAX_PARTS];
    size_t np = 0, nl = 0;
    bool ok = true;
    gm_regex re;
    gm_regex_init(&re, c->mem);
    why[0] = 0;
    for (size_t i = 0; i < sh->objs.n && ok; i++)
        for (uint32_t j = 0; sh->objs.v[i].pprops && j < sh->objs.v[i].pprops->n && ok; j++) {
            const gm_jmember *m = &sh->objs.v[i].pprops->u.members[j];
            sc_pattern *p = sc_pattern_get(c, sh->objs.v[i].node, "patternProperties", m->key, m->klen, 0);
            if (p && nl + 2 >= SC_SDFA_MAX_PARTS)
                snprintf(why, cap, "a key automaton of more than %d patterns (a fixed limit)",
                         SC_SDFA_MAX_PARTS - 2);
            if (!p || nl + 2 >= SC_SDFA_MAX_PARTS) {
                ok = false;
                break;
            }
            pps[np++] = (pprop){i, m};
            langs[nl++] = (sc_lang){sc_pattern_regex(p), sc_pattern_regex(p)->root};
        }
    /* the listed names */
    size_t names_bit = nl;
    if (ok) {
        const char **w = gm_mem_alloc(c->mem, (o->slots.n + 1) * sizeof *w);
        uint32_t *l = gm_mem_alloc(c->mem, (o->slots.n + 1) * sizeof *l);
        uint32_t root = UINT32_MAX;
        if (w && l) {
            for (size_t i = 0; i < o->slots.n; i++) {
                w[i] = o->slots.v[i].name;
                l[i] = o->slots.v[i].nlen;
            }
            root = sc_regex_words(&re, w, l, o->slots.n);
        }
        if (root == UINT32_MAX) {
            ok = false;
            c->st = gm_mem_fail(c->mem, c->err, "a key automaton");
        } else {
            langs[nl++] = (sc_lang){&re, root};
        }
        gm_mem_free(c->mem, w);
        gm_mem_free(c->mem, l);
    }
    size_t pn_first = nl;
    for (size_t i = 0; i < sh->pnames.n && ok; i++)
        ok = pnames_langs(c, sh->pnames.v[i], &re, langs, &nl, SC_SDFA_MAX_PARTS, why, cap);
    sc_sdfa a = {0};
    bool tried = ok;
    if (ok)
        ok = sc_sdfa_product(c, langs, nl, &a) == GM_OK;
    if (!ok && c->st == GM_ERR_LIMIT) {
        /* too large: the caller reports the limit or falls back to a superset */
        if (tried)
            snprintf(why, cap, "the keys' automaton (patterns, listed names, property-name languages): "
                     "%.300s", c->err->message);
        c->st = GM_OK;
        gm_error_clear(c->err);
    }
    uint32_t r = GM_EX_NONE;
    if (ok) {
        uint32_t mask = (uint32_t)((1ull << nl) - 1);
        uint32_t pn_bits = (uint32_t)(((1ull << nl) - 1) & ~((1ull << pn_first) - 1));
        GM_VEC(uint32_t) labels = {0};
        GM_VEC(uint32_t) alts = {0};
        for (uint32_t s = 0; s < a.nstates; s++) {
            uint32_t l = a.label[s];
            if ((l >> names_bit & 1) || (l & pn_bits) != pn_bits)
                continue;
            bool seen = false;
            for (size_t k = 0; k < labels.n && !seen; k++)
                seen = labels.v[k] == l;
            if (!seen && gm_vec_push(c->mem, &labels, l))
                gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        }
        for (size_t k = 0; k < labels.n && b->st == GM_OK && c->st == GM_OK; k++) {
            uint32_t l = labels.v[k];
            uint32_t ids[MAX_SCHEMAS];
            size_t n = 0;
            bool forbidden = false;
            for (size_t i = 0; i < sh->objs.n && !forbidden; i++) {
                bool matched = false;
                for (size_t j = 0; j < np; j++)
                    if (pps[j].src == i && (l >> j & 1)) {
                        matched = true;
                        if (n < MAX_SCHEMAS)
                            ids[n++] = pps[j].m->value->id;
                    }
                const gm_jv *ad = sh->objs.v[i].addl;
                if (!matched && ad) {
                    if (ad->kind == GM_JV_FALSE)
                        forbidden = true;
                    else if (n < MAX_SCHEMAS)
                        ids[n++] = ad->id;
                }
            }
            if (forbidden)
                continue;
            uint32_t v = sc_conj(c, ids, n, o->depth + 1);
            if (v == GM_EX_NONE || gm_irb_is_nothing(b, v))
                continue;
            uint32_t key = sc_quoted(c, sc_sdfa_emit(c, &a, mask, l, "key"));
            if (gm_vec_push(c->mem, &alts, gm_irb_seq3(b, key, sc_key_sep(c), v)))
                gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        }
        if (b->st == GM_OK && c->st == GM_OK)
            r = gm_irb_alt(b, alts.v, alts.n);
        gm_vec_free(c->mem, &labels);
        gm_vec_free(c->mem, &alts);
    }
    sc_sdfa_free(c, &a);
    gm_regex_free(&re);
    *out = r;
    return ok;
}

/*
 * The extra members: keys not listed, with the schemas that apply to
 * them. Without patternProperties and propertyNames: any other key (a
 * trie of the names), the conjunction of the additionalProperties. With
 * them: extras_exact. Should that be too large, a superset (each pattern
 * with its own schema, additionalProperties for any other key), relaxed.
 */
static uint32_t extras(objctx *o)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    sc_shape *sh = o->sh;
    size_t with_pp = 0;
    for (size_t i = 0; i < sh->objs.n; i++) {
        const sc_objsrc *s = &sh->objs.v[i];
        if (s->pprops)
            with_pp++;
        else if (s->addl && s->addl->kind == GM_JV_FALSE)
            return gm_irb_nothing(b);
    }
    if (with_pp == 0 && sh->pnames.n == 0) {
        uint32_t ids[MAX_SCHEMAS];
        size_t n = 0;
        for (size_t i = 0; i < sh->objs.n && n < MAX_SCHEMAS; i++)
            if (sh->objs.v[i].addl)
                ids[n++] = sh->objs.v[i].addl->id;
        uint32_t v = sc_conj(c, ids, n, o->depth + 1);
        if (v == GM_EX_NONE || gm_irb_is_nothing(b, v))
            return v;
        return gm_irb_seq3(b, keys_except(o), sc_key_sep(c), v);
    }
    uint32_t r;
    char why[400];
    if (extras_exact(o, &r, why, sizeof why))
        return r;
    if (c->st != GM_OK || b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t where = sh->pnames.n ? c->parent[sh->pnames.v[0]] : sh->objs.v[0].node;
    const char *kw = sh->pnames.n ? "propertyNames" : "patternProperties";
    if (why[0] ? !sc_relax_limit(c, where, kw, why)
               : !sc_relax(c, where, kw, "property-name constraints that are not one string language"))
        return GM_EX_NONE;
    /* superset: every pattern with its schema, any other key with the additionalProperties */
    GM_VEC(uint32_t) alts = {0};
    for (size_t k = 0; k < sh->objs.n && b->st == GM_OK; k++) {
        const sc_objsrc *src = &sh->objs.v[k];
        for (uint32_t j = 0; src->pprops && j < src->pprops->n && b->st == GM_OK; j++) {
            const gm_jmember *m = &src->pprops->u.members[j];
            sc_pattern *p = sc_pattern_get(c, src->node, "patternProperties", m->key, m->klen, 0);
            if (!p)
                break;
            uint32_t id = m->value->id;
            gm_regex *re = sc_pattern_regex(p);
            uint32_t key = sc_quoted(c, gm_irb_json_regex(b, re, re->root));
            if (gm_vec_push(c->mem, &alts, gm_irb_seq3(b, key, sc_key_sep(c), sc_conj(c, &id, 1, o->depth + 1))))
                gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        }
        uint32_t v = src->addl ? sc_conj(c, &src->addl->id, 1, o->depth + 1) : sc_any_value(c, o->depth + 1);
        if (gm_vec_push(c->mem, &alts, gm_irb_seq3(b, keys_except(o), sc_key_sep(c), v)))
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    r = gm_irb_alt(b, alts.v, alts.n);
    gm_vec_free(c->mem, &alts);
    return r;
}

/* The ordered member list of note [ordered members]; *all_optional = Z_n. */
static uint32_t ordered(objctx *o, const bool *req, const bool *forb, bool *all_optional)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    uint32_t sep = sc_item_sep(c, o->depth);
    bool has_x = !gm_irb_is_nothing(b, o->extra);
    uint32_t T = has_x ? gm_irb_repeat(b, gm_irb_seq2(b, sep, o->extra), 0, GM_EX_INF) : gm_irb_empty(b);
    uint32_t A = has_x ? gm_irb_seq2(b, o->extra, T) : gm_irb_nothing(b);
    bool Z = true;
    for (size_t i = 0; i < o->slots.n && b->st == GM_OK; i++) {
        const slot *s = &o->slots.v[i];
        if (forb[i] || s->forbidden) {
            if (req[i])
                return gm_irb_nothing(b);
            continue;
        }
        uint32_t MT = gm_irb_seq2(b, s->member, T);
        uint32_t step = gm_irb_seq2(b, sep, MT);
        uint32_t cont = gm_irb_seq2(b, A, req[i] ? step : gm_irb_opt(b, step));
        A = Z ? gm_irb_alt2(b, cont, MT) : cont;
        Z = Z && !req[i];
        if (i % CHUNK == CHUNK - 1 && !gm_irb_is_nothing(b, A))
            A = gm_irb_rule(b, "members", A);
    }
    *all_optional = Z;
    return A;
}

/*
 * note [any order]
 * With opts.any_order the members may come in any order. The required ones
 * are tracked by the set already seen: one rule per subset S of the
 * required slots,
 *   R_S = (sep O_S)* ( sep r R_{S+r}  for each r not in S  |  "" when S is all )
 * where O_S is any optional member, extra, or required member of S (so a
 * member may repeat: JSON parsers keep one of the values, each valid).
 * That is exact for up to MAX_ANY_ORDER_REQUIRED required properties (2^k
 * rules; no grammar of polynomial size exists for "each of k names at
 * least once" in any order); past it the required properties are relaxed
 * (lenient) or refused. The default ordered layout has each at most once.
 * The members and the optional alternatives are rules that the engine
 * never inlines (note [rule inlining] in earley/fsm_build.c): inlined, each
 * of the 2^k subset rules would hold its own copy of every member, and
 * each copy of a string value its own token-mask cache entries, built
 * anew for every subset the instance goes through (on MaskBench's
 * Github_medium---o27148, 8 required properties: TTFM 2.3 s, 5.4 ms per
 * mask inlined; 0.7 s, 0.2 ms per mask not).
 */
#define MAX_ANY_ORDER_REQUIRED 8

/* A rule of the any-order layout, shared by the subset rules: never inlined. */
static uint32_t shared_rule(sctx *c, const char *hint, uint32_t body)
{
    uint32_t ref = gm_irb_rule(&c->b, hint, body);
    if (ref != GM_EX_NONE)
        c->g->rules[c->g->nodes[ref].arg].noinline = 1;
    return ref;
}

typedef struct subsets {
    objctx *o;
    uint32_t sep;
    uint32_t req[MAX_ANY_ORDER_REQUIRED];
    uint32_t k;
    uint32_t opt;            /* optional members and extras */
    uint32_t *rule;          /* [2^k] rule of subset S, or GM_EX_NONE */
} subsets;

/* O_S: the members that may come any number of times once S was seen. */
static uint32_t seen_members(subsets *p, uint32_t S)
{
    gm_irb *b = &p->o->c->b;
    uint32_t alts[MAX_ANY_ORDER_REQUIRED + 1];
    size_t n = 0;
    alts[n++] = p->opt;
    for (uint32_t i = 0; i < p->k; i++)
        if (S >> i & 1)
            alts[n++] = p->o->slots.v[p->req[i]].member;
    return gm_irb_alt(b, alts, n);
}

static uint32_t subset_ref(subsets *p, uint32_t S)
{
    sctx *c = p->o->c;
    gm_irb *b = &c->b;
    if (p->rule[S] == GM_EX_NONE) {
        uint32_t r = gm_ebnf_fresh_rule(c->g, "members");
        if (r == GM_EX_NONE)
            return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        p->rule[S] = r;
        uint32_t alts[MAX_ANY_ORDER_REQUIRED + 1];
        size_t n = 0;
        if (S == (1u << p->k) - 1)
            alts[n++] = gm_irb_empty(b);
        for (uint32_t i = 0; i < p->k; i++)
            if (!(S >> i & 1))
                alts[n++] = gm_irb_seq3(b, p->sep, p->o->slots.v[p->req[i]].member, subset_ref(p, S | 1u << i));
        uint32_t body = gm_irb_seq2(b, gm_irb_repeat(b, gm_irb_seq2(b, p->sep, seen_members(p, S)), 0, GM_EX_INF),
                                    gm_irb_alt(b, alts, n));
        if (body == GM_EX_NONE)
            return GM_EX_NONE;
        c->g->rules[r].body = body;
    }
    return gm_irb_ref(b, p->rule[S]);
}

static uint32_t any_order(objctx *o, const bool *req, const bool *forb, bool *all_optional)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    subsets p = {o, sc_item_sep(c, o->depth), {0}, 0, gm_irb_nothing(b), NULL};
    bool relaxed = false;
    size_t nreq = 0;
    for (size_t i = 0; i < o->slots.n; i++)
        nreq += req[i] && !forb[i] && !o->slots.v[i].forbidden;
    if (nreq > MAX_ANY_ORDER_REQUIRED) {
        if (!sc_relax(c, o->sh->props_node ? o->sh->props_node : o->sh->nodes.v[0], "required",
                      "more than 8 required properties in any order"))
            return GM_EX_NONE;
        relaxed = true;
    }
    for (size_t i = 0; i < o->slots.n && b->st == GM_OK; i++) {
        const slot *s = &o->slots.v[i];
        if (forb[i] || s->forbidden) {
            if (req[i])
                return gm_irb_nothing(b);
            continue;
        }
        if (req[i] && !relaxed) {
            /* a required member appears in many subset rules: a rule of its own */
            o->slots.v[i].member = shared_rule(c, "member", s->member);
            p.req[p.k++] = (uint32_t)i;
        } else {
            p.opt = gm_irb_alt2(b, p.opt, s->member);
        }
    }
    p.opt = gm_irb_alt2(b, p.opt, o->extra);
    /* the optional members are repeated in every subset rule: one rule of their own */
    if (p.k && !gm_irb_is_nothing(b, p.opt) && c->g->nodes[p.opt].kind != GM_EX_REF)
        p.opt = shared_rule(c, "optional", p.opt);
    *all_optional = p.k == 0;
    if (p.k == 0)
        return gm_irb_seq2(b, p.opt, gm_irb_repeat(b, gm_irb_seq2(b, p.sep, p.opt), 0, GM_EX_INF));
    p.rule = gm_mem_alloc(c->mem, ((size_t)1 << p.k) * sizeof *p.rule);
    if (!p.rule)
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    for (size_t S = 0; S < (size_t)1 << p.k; S++)
        p.rule[S] = GM_EX_NONE;
    /* the first member: an optional one, then R_{}; or a required one, then R_{it} */
    uint32_t alts[MAX_ANY_ORDER_REQUIRED + 1];
    size_t n = 0;
    alts[n++] = gm_irb_seq2(b, p.opt, subset_ref(&p, 0));
    for (uint32_t i = 0; i < p.k; i++)
        alts[n++] = gm_irb_seq2(b, o->slots.v[p.req[i]].member, subset_ref(&p, 1u << i));
    uint32_t r = gm_irb_alt(b, alts, n);
    gm_mem_free(c->mem, p.rule);
    return r;
}

/* Counted members (min/maxProperties) without extras: a product with the count. */
static uint32_t ordered_counted(objctx *o, const bool *req, const bool *forb, uint32_t mn, uint32_t mx)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    uint32_t sep = sc_item_sep(c, o->depth);
    uint32_t cap = mx == UINT32_MAX ? mn : mx; /* counts above cap behave alike */
    size_t width = (size_t)cap + 1;
    uint32_t *A = gm_mem_alloc(c->mem, width * sizeof *A), *next = gm_mem_alloc(c->mem, width * sizeof *A);
    if (!A || !next) {
        gm_mem_free(c->mem, A);
        gm_mem_free(c->mem, next);
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    /* A[k]: nonempty lists with k members (k == cap: at least cap when unbounded above) */
    for (size_t k = 0; k < width; k++)
        A[k] = gm_irb_nothing(b);
    bool Z = true;
    for (size_t i = 0; i < o->slots.n && b->st == GM_OK; i++) {
        const slot *s = &o->slots.v[i];
        if (forb[i] || s->forbidden) {
            if (req[i]) {
                gm_mem_free(c->mem, A);
                gm_mem_free(c->mem, next);
                return gm_irb_nothing(b);
            }
            continue;
        }
        uint32_t step = gm_irb_seq2(b, sep, s->member);
        for (size_t k = 0; k < width; k++) {
            uint32_t alts[4];
            size_t n = 0;
            if (!req[i])
                alts[n++] = A[k];
            if (k >= 1)
                alts[n++] = gm_irb_seq2(b, A[k - 1], step);
            if (k == cap && mx == UINT32_MAX)
                alts[n++] = gm_irb_seq2(b, A[k], step);
            if (k == 1 && Z)
                alts[n++] = s->member;
            next[k] = gm_irb_alt(b, alts, n);
        }
        memcpy(A, next, width * sizeof *A);
        Z = Z && !req[i];
    }
    GM_VEC(uint32_t) ok = {0};
    for (size_t k = mn; k < width && b->st == GM_OK; k++)
        if (k > 0 && gm_vec_push(c->mem, &ok, A[k]))
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    uint32_t body = gm_irb_alt(b, ok.v, ok.n);
    gm_vec_free(c->mem, &ok);
    gm_mem_free(c->mem, A);
    gm_mem_free(c->mem, next);
    uint32_t obj = gm_irb_seq3(b, sc_open(c, '{', o->depth), body, sc_close(c, '{', o->depth));
    if (Z && mn == 0)
        obj = gm_irb_alt2(b, sc_empty_pair(c, '{'), obj);
    return obj;
}

/*
 * Counted members (min/maxProperties) in any order, without extras: one rule
 * per set S of names seen, the count being |S| (a name may repeat, as in
 * note [any order]: a JSON parser keeps one of the values, each valid),
 *   R_S = (sep O_S)* ( "" when S holds the required ones and mn <= |S| <= mx
 *                    | sep m R_{S+m}  for each m not in S that leaves a way to finish )
 * with O_S any member of S; 2^n rules for n allowed members, exact up to
 * MAX_ANY_ORDER_COUNTED.
 */
#define MAX_ANY_ORDER_COUNTED 8

typedef struct counted {
    objctx *o;
    uint32_t sep;
    uint32_t member[MAX_ANY_ORDER_COUNTED];
    uint32_t n, req, mn, mx;
    uint32_t *rule;          /* [2^n] rule of set S, or GM_EX_NONE */
} counted;

static uint32_t popcount32(uint32_t x)
{
    uint32_t k = 0;
    for (; x; x &= x - 1)
        k++;
    return k;
}

/* Whether some completion of S exists: a superset of S and the required, its size in [mn, mx]. */
static bool counted_live(const counted *p, uint32_t S)
{
    uint32_t lo = popcount32(S | p->req), hi = p->n;
    if (lo < p->mn)
        lo = p->mn;
    if (hi > p->mx)
        hi = p->mx;
    return lo <= hi;
}

static uint32_t counted_ref(counted *p, uint32_t S)
{
    sctx *c = p->o->c;
    gm_irb *b = &c->b;
    if (p->rule[S] == GM_EX_NONE) {
        uint32_t r = gm_ebnf_fresh_rule(c->g, "members");
        if (r == GM_EX_NONE)
            return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        p->rule[S] = r;
        uint32_t alts[MAX_ANY_ORDER_COUNTED + 1];
        size_t n = 0;
        uint32_t size = popcount32(S);
        if ((S & p->req) == p->req && size >= p->mn && size <= p->mx)
            alts[n++] = gm_irb_empty(b);
        for (uint32_t i = 0; i < p->n; i++)
            if (!(S >> i & 1) && counted_live(p, S | 1u << i))
                alts[n++] = gm_irb_seq3(b, p->sep, p->member[i], counted_ref(p, S | 1u << i));
        uint32_t seen[MAX_ANY_ORDER_COUNTED];
        size_t k = 0;
        for (uint32_t i = 0; i < p->n; i++)
            if (S >> i & 1)
                seen[k++] = p->member[i];
        uint32_t again = gm_irb_repeat(b, gm_irb_seq2(b, p->sep, gm_irb_alt(b, seen, k)), 0, GM_EX_INF);
        uint32_t body = gm_irb_seq2(b, again, gm_irb_alt(b, alts, n));
        if (body == GM_EX_NONE)
            return GM_EX_NONE;
        c->g->rules[r].body = body;
    }
    return gm_irb_ref(b, p->rule[S]);
}

/* The object of any_order_counted, or GM_EX_NONE with b->st OK when it has too many members. */
static uint32_t any_order_counted(objctx *o, const bool *req, const bool *forb, uint32_t mn, uint32_t mx)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    counted p = {o, sc_item_sep(c, o->depth), {0}, 0, 0, mn, mx, NULL};
    for (size_t i = 0; i < o->slots.n; i++) {
        const slot *s = &o->slots.v[i];
        if (forb[i] || s->forbidden)
            continue;
        if (p.n == MAX_ANY_ORDER_COUNTED)
            return GM_EX_NONE;
        if (req[i])
            p.req |= 1u << p.n;
        p.member[p.n++] = s->member;
    }
    for (uint32_t i = 0; i < p.n; i++) /* each member appears in many set rules */
        p.member[i] = shared_rule(c, "member", p.member[i]);
    p.rule = gm_mem_alloc(c->mem, ((size_t)1 << p.n) * sizeof *p.rule);
    if (!p.rule)
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    for (size_t S = 0; S < (size_t)1 << p.n; S++)
        p.rule[S] = GM_EX_NONE;
    uint32_t alts[MAX_ANY_ORDER_COUNTED];
    size_t n = 0;
    for (uint32_t i = 0; i < p.n; i++)
        if (counted_live(&p, 1u << i))
            alts[n++] = gm_irb_seq2(b, p.member[i], counted_ref(&p, 1u << i));
    uint32_t body = gm_irb_alt(b, alts, n);
    gm_mem_free(c->mem, p.rule);
    uint32_t obj = gm_irb_seq3(b, sc_open(c, '{', o->depth), body, sc_close(c, '{', o->depth));
    if (p.req == 0 && mn == 0)
        obj = gm_irb_alt2(b, sc_empty_pair(c, '{'), obj);
    return obj;
}

/* One object variant: required and forbidden names fixed. */
static uint32_t object_variant(objctx *o, const bool *req, const bool *forb)
{
    sctx *c = o->c;
    gm_irb *b = &c->b;
    sc_shape *sh = o->sh;
    uint32_t mn = sh->min_props, mx = sh->max_props;
    size_t nreq = 0, nallowed = 0;
    for (size_t i = 0; i < o->slots.n; i++) {
        bool gone = forb[i] || o->slots.v[i].forbidden;
        if (req[i] && gone)
            return gm_irb_nothing(b);
        nreq += req[i];
        nallowed += !gone;
    }
    bool has_x = !gm_irb_is_nothing(b, o->extra);
    if (mx != UINT32_MAX && mn > mx)
        return gm_irb_nothing(b);
    bool count_free = mn <= (nreq ? nreq : 1) && (mx == UINT32_MAX || (!has_x && mx >= nallowed));
    if (!count_free) {
        if (has_x && nallowed == 0) {
            /* a map: X (sep X){mn-1, mx-1} */
            uint32_t sep = sc_item_sep(c, o->depth);
            uint32_t lo = mn > 1 ? mn - 1 : 0, hi = mx == UINT32_MAX ? GM_EX_INF : mx - 1;
            uint32_t body = gm_irb_seq2(b, o->extra, gm_irb_repeat(b, gm_irb_seq2(b, sep, o->extra), lo, hi));
            uint32_t obj = mx == 0 ? gm_irb_nothing(b)
                                   : gm_irb_seq3(b, sc_open(c, '{', o->depth), body, sc_close(c, '{', o->depth));
            return mn == 0 ? gm_irb_alt2(b, sc_empty_pair(c, '{'), obj) : obj;
        }
        uint64_t cap = mx == UINT32_MAX ? mn : mx;
        if (!has_x && !c->opts.any_order && cap * o->slots.n <= MAX_COUNT_PRODUCT)
            return ordered_counted(o, req, forb, mn, mx);
        if (!has_x && c->opts.any_order) {
            uint32_t r = any_order_counted(o, req, forb, mn, mx);
            if (r != GM_EX_NONE || b->st != GM_OK)
                return r;
        }
        if (!sc_relax(c, sh->props_node, mx != UINT32_MAX ? "maxProperties" : "minProperties",
                      "a property count bound on an object with many or additional properties"))
            return GM_EX_NONE;
    }
    bool Z = false;
    uint32_t A = c->opts.any_order ? any_order(o, req, forb, &Z) : ordered(o, req, forb, &Z);
    uint32_t obj = gm_irb_seq3(b, sc_open(c, '{', o->depth), A, sc_close(c, '{', o->depth));
    if (Z && mn == 0)
        obj = gm_irb_alt2(b, sc_empty_pair(c, '{'), obj);
    return obj;
}

uint32_t sc_emit_object(sctx *c, sc_shape *sh, uint32_t depth)
{
    gm_irb *b = &c->b;
    objctx o = {c, sh, depth, {0}, GM_EX_NONE};
    uint32_t r = GM_EX_NONE;
    bool *req = NULL, *forb = NULL;
    /* slots: listed properties in order, then required and dependency names */
    for (size_t i = 0; i < sh->objs.n; i++) {
        const gm_jv *p = sh->objs.v[i].props;
        for (uint32_t j = 0; p && j < p->n; j++)
            if (add_slot(&o, p->u.members[j].key, p->u.members[j].klen))
                goto out;
    }
    for (size_t i = 0; i < sh->required.n; i++)
        if (add_slot(&o, sh->required.v[i]->u.s, sh->required.v[i]->n))
            goto out;
    size_t ndeps = 0;
    for (size_t i = 0; i < sh->deps.n; i++) {
        const sc_dep *d = &sh->deps.v[i];
        bool trivial = d->list->n == 0;
        if (trivial)
            continue;
        ndeps++;
        if (add_slot(&o, d->name, d->nlen))
            goto out;
        for (uint32_t j = 0; j < d->list->n; j++)
            if (add_slot(&o, d->list->u.items[j]->u.s, d->list->u.items[j]->n))
                goto out;
    }
    for (size_t i = 0; i < o.slots.n && b->st == GM_OK; i++)
        slot_member(&o, &o.slots.v[i]);
    if (b->st != GM_OK || c->st != GM_OK)
        goto out;
    o.extra = extras(&o);
    if (o.extra == GM_EX_NONE)
        goto out;
    if (!gm_irb_is_nothing(b, o.extra))
        o.extra = gm_irb_rule(b, "extra", o.extra);
    req = gm_mem_calloc(c->mem, o.slots.n + 1, sizeof *req);
    forb = gm_mem_calloc(c->mem, o.slots.n + 1, sizeof *forb);
    if (!req || !forb) {
        gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < sh->required.n; i++)
        req[find_slot(&o, sh->required.v[i]->u.s, sh->required.v[i]->n)] = true;
    if (ndeps == 0) {
        r = object_variant(&o, req, forb);
        goto out;
    }
    if (ndeps > MAX_DEP_SPLITS) {
        if (!sc_relax(c, sh->deps.v[0].node, NULL, "more than 4 property dependencies in one object"))
            goto out;
        r = object_variant(&o, req, forb);
        goto out;
    }
    /* each dependency: its trigger absent, or it and its list present */
    {
        GM_VEC(uint32_t) alts = {0};
        bool *r2 = gm_mem_alloc(c->mem, o.slots.n + 1), *f2 = gm_mem_alloc(c->mem, o.slots.n + 1);
        if (!r2 || !f2) {
            gm_mem_free(c->mem, r2);
            gm_mem_free(c->mem, f2);
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
            goto out;
        }
        for (uint32_t mask = 0; mask < (1u << ndeps) && b->st == GM_OK; mask++) {
            memcpy(r2, req, o.slots.n);
            memcpy(f2, forb, o.slots.n);
            size_t k = 0;
            for (size_t i = 0; i < sh->deps.n; i++) {
                const sc_dep *d = &sh->deps.v[i];
                if (d->list->n == 0)
                    continue;
                int t = find_slot(&o, d->name, d->nlen);
                if (mask >> k++ & 1) {
                    r2[t] = true;
                    for (uint32_t j = 0; j < d->list->n; j++)
                        r2[find_slot(&o, d->list->u.items[j]->u.s, d->list->u.items[j]->n)] = true;
                } else {
                    f2[t] = true;
                }
            }
            uint32_t v = object_variant(&o, r2, f2);
            if (v == GM_EX_NONE || gm_vec_push(c->mem, &alts, v))
                break;
        }
        if (b->st == GM_OK && c->st == GM_OK)
            r = gm_irb_alt(b, alts.v, alts.n);
        gm_vec_free(c->mem, &alts);
        gm_mem_free(c->mem, r2);
        gm_mem_free(c->mem, f2);
    }
out:
    gm_mem_free(c->mem, req);
    gm_mem_free(c->mem, forb);
    gm_vec_free(c->mem, &o.slots);
    return r;
}
