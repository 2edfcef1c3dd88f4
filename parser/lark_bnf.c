/*
 * EBNF -> BNF: the validated definitions of a Lark grammar become a gm_cfg.
 * Owns anonymous terminals, template instances, the helper nonterminals of
 * repetition, and the checks on the result (unreachable and unused
 * definitions, rules deriving no terminal string, ignored terminals in
 * rules).
 *
 * note [desugaring]
 * We desugar the way Lark does, so that the BNF (and so the LALR automaton)
 * is the one Lark builds. Each alternative expands into a list of symbol
 * sequences: x? and [x] into "x" and "", a group (a|b) into its
 * alternatives (inline: `a: b c? d` gives `a: b c d | b d`), x~n..m into
 * each count from n to m when m < 50. x+ becomes a helper H: x | H x (left
 * recursive), and x* becomes H | "" with the same helper; helpers are
 * shared by every use of the same expanded x, in any rule, and are named
 * __<rule>_plus_<k> or __<rule>_star_<k> after the first user. x~n..m with
 * m >= 50 is split into helpers as Lark's _generate_repeats does. Identical
 * productions of a rule are kept once. A template use t{a,b} becomes the
 * rule "t{a,b}", instantiated once from t's body with its parameters bound.
 *
 * note [anonymous terminals]
 * A literal or regex in a rule is a terminal. When a named terminal has
 * exactly that pattern (same text, kind and flags; the last such definition
 * wins), the rule uses the named terminal, as in Lark; otherwise one
 * anonymous terminal per distinct pattern is made, named by its pattern
 * as written ("(" or /[0-9]+/i; a pattern longer than 64 bytes by its
 * start and the terminal's number). Terminals are numbered named ones first
 * (definition order, imports before local ones), then anonymous ones in
 * order of first use; only terminals used by a reachable rule, %ignore'd
 * or named by %insert reach the cfg.
 *
 * note [insert directive]
 * `%insert X at A... after B...` (parser/postlex.h) is resolved here, after
 * the rules: X and the `after` items are terminal names or literals, a
 * literal mapping to the terminal a rule would use (made when no rule
 * uses it); the `at` items are named terminals with a pattern. An `at`
 * terminal never reaches the parser, so it may not be %ignore'd (the
 * layer must see it), used in a rule, inserted or an `after` item; X must
 * be used by some rule (else inserting it could never parse). The
 * result is gm_cfg.postlex, with per-terminal flags over the cfg's ids.
 * An optional `offending C...` list (terminal names or literals that reach
 * the parser) turns on note [offending-token insertion]; with it, an
 * optional `nolex D...` list names terminals that the rule never adds to a
 * parser state's contextual lexer (parser/contextual.c). An optional
 * `glued E...` list names terminals that nothing %ignore'd (and no line
 * end) may precede: a parser state whose contextual lexer would take only
 * glued terminals lexes no %ignore'd or line-end terminal (JavaScript's
 * template text after a substitution's "}", which a comment must not eat).
 * An optional `rename F1 T1 F2 T2 ...` list: after a line end the parser
 * gets Ti in place of Fi (JavaScript's "no line terminator here" before
 * postfix ++/-- and =>: the grammar takes the renamed terminal only where
 * a line end may precede it).
 *
 * note [indent directive]
 * `%indent NL INDENT DEDENT OPEN CLOSE ...` turns on the indentation layer
 * of parser/postlex.h (note [indentation]) and is resolved here, after the
 * rules. NL is a named terminal with a pattern (the line end with the next
 * line's indentation), INDENT and DEDENT are %declare'd (the layer makes
 * them); the three must be used by some rule, since the layer feeds them
 * to the parser, and NL may not be %ignore'd. The rest are bracket pairs,
 * each a terminal name or a literal; a literal is the terminal rules use
 * for it (a named terminal with that pattern, or the anonymous one). A
 * bracket that no rule uses is not a terminal of the cfg and is skipped
 * with a warning. A grammar written for Lark's PythonIndenter has no
 * directive but %declares _INDENT and _DEDENT: it gets the layer with
 * Lark's defaults, `%indent _NEWLINE _INDENT _DEDENT "(" ")" "[" "]" "{" "}"`
 * (_NL when the grammar has no _NEWLINE terminal), without the warnings.
 * Tabs count 8 columns, as in Lark.
 */
#include "parser/lark_load.h"

#include <stdio.h>
#include <string.h>

#include "lexer/lexer.h"

enum {
    MAX_ALTS = 4096,            /* sequences one expression may expand to (real grammars:
                                   under 100) */
    MAX_SYMS = 250000,          /* symbols in those sequences together */
    MAX_TOTAL_SYMS = 2000000,   /* right-hand-side symbols of all productions */
    MAX_INSTANCES = 10000,      /* template instances */
    MAX_ANON_NAME = 64,         /* longest name of an anonymous terminal */
    REPEAT_BREAK = 50,          /* Lark's REPEAT_BREAK_THRESHOLD */
    SMALL_FACTOR = 5            /* Lark's SMALL_FACTOR_THRESHOLD */
};

/* Symbols while building: nonterminal flag in the low bit. */
#define NT(i) (((i) << 1) | 1u)
#define T(i) ((i) << 1)
#define IS_NT(s) ((s) & 1u)
#define IDX(s) ((s) >> 1)

typedef struct tinfo {
    const char *name;
    gm_lpattern pat;         /* pat.bytes NULL: %declare'd */
    int32_t priority;
    bool ignored;
    bool referenced;         /* named in some rule, terminal or %ignore */
    gm_srcloc loc;
    const gm_ldef *def;      /* NULL for anonymous terminals */
    uint8_t origin;
    gm_srcloc import_loc;
} tinfo;

typedef struct ninfo {
    const char *name;
    const gm_ldef *def;      /* the rule, or the template of an instance; NULL for helpers */
    const uint32_t *env;     /* instance: symbols bound to the template's parameters */
    uint8_t flags;           /* GM_CFG_RULE_* */
    uint8_t origin;
    int32_t priority;
    gm_srcloc loc;
    gm_srcloc import_loc;
    uint32_t *prods;         /* production indices */
    size_t nprods, prods_cap;
} ninfo;

typedef struct prod {
    uint32_t lhs;            /* ninfo index */
    uint32_t rhs, len;       /* in syms */
    int32_t priority;
    gm_srcloc loc;
    const char *alias;
} prod;

typedef struct seq {
    uint32_t len;
    const uint32_t *s;
} seq;

typedef struct elist {
    uint32_t n;
    seq *v;
} elist;

typedef struct bnf {
    gm_lload *L;
    gm_lbuilder *b;
    gm_arena *a;
    gm_lterms terms;
    tinfo *t;                /* terminals */
    size_t nt, tcap;
    ninfo *n;                /* nonterminals */
    size_t nn, ncap;
    prod *p;
    size_t np, pcap;
    uint32_t *syms;          /* right-hand sides */
    size_t nsyms, scap;
    uint32_t *sym_of_def;    /* [b->cap] symbol of a definition id (UINT32_MAX: none) */
    gm_intern patterns;      /* pattern key -> pattern id */
    uint32_t *pattern_term;  /* [patterns.count] terminal index */
    size_t pattern_cap;
    gm_intern keys;          /* helper / instance / production keys */
    uint32_t *key_sym;       /* [keys.count] nonterminal symbol (or 1 = production seen) */
    size_t key_cap;
    uint32_t helper_count;   /* Lark's EBNF_to_BNF.i */
    uint32_t instances;
    uint32_t *work;          /* nonterminals whose body is still to expand */
    size_t nwork, wcap;
    const gm_lstmt *insert;  /* %insert, or NULL (note [insert directive]) */
    uint32_t ins_term;       /* the inserted terminal */
    uint32_t *at_terms;      /* [insert->at->n] */
    uint32_t *after_terms;   /* [insert->after->n] */
    uint32_t *off_terms;     /* [insert->offending->n] (note [offending-token insertion]) */
    uint32_t *nolex_terms;   /* [insert->nolex->n] */
    uint32_t *glued_terms;   /* [insert->glued->n] */
    uint32_t *rename_terms;  /* [insert->rename->n] pairs */
    const gm_lx *indent;     /* %indent items (LX_SEQ), or NULL (note [indent directive]) */
    bool indent_auto;        /* the items were made for a Lark PythonIndenter grammar */
    uint32_t *indent_terms;  /* [indent->n] terminal indices; UINT32_MAX: a skipped bracket */
} bnf;

/* ------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------ */

#define GROW(B, arr, n, cap, want) \
    gm_arena_grow((B)->a, (void **)&(arr), &(cap), (want), sizeof *(arr), (n))

static gm_status nomem(bnf *B) { return gm_lload_nomem(B->L); }

static int add_terminal(bnf *B, const tinfo *ti, uint32_t *idx)
{
    if (GROW(B, B->t, B->nt, B->tcap, B->nt + 1))
        return -1;
    *idx = (uint32_t)B->nt;
    B->t[B->nt++] = *ti;
    return 0;
}

static int add_nonterminal(bnf *B, const ninfo *ni, uint32_t *idx)
{
    if (GROW(B, B->n, B->nn, B->ncap, B->nn + 1))
        return -1;
    *idx = (uint32_t)B->nn;
    B->n[B->nn++] = *ni;
    return 0;
}

/* Interns a key in B->keys; *sym is its stored value (UINT32_MAX when new). */
static int key_lookup(bnf *B, const void *key, size_t len, uint32_t **slot)
{
    uint32_t id;
    int added;
    if (gm_intern_put(&B->keys, key, len, &id, &added))
        return -1;
    if (added) {
        if (GROW(B, B->key_sym, id, B->key_cap, (size_t)id + 1))
            return -1;
        B->key_sym[id] = UINT32_MAX;
    }
    *slot = &B->key_sym[id];
    return 0;
}

/* Adds lhs -> s unless the rule already has that production. */
static gm_status add_prod(bnf *B, uint32_t lhs, const seq *s, int32_t priority, gm_srcloc loc,
                          const char *alias)
{
    size_t klen = ((size_t)s->len + 2) * sizeof(uint32_t);
    uint32_t *key = gm_arena_alloc(B->a, klen);
    if (!key)
        return nomem(B);
    key[0] = 0xFFFFFFFEu; /* production keys never clash with helper keys */
    key[1] = lhs;
    if (s->len)
        memcpy(key + 2, s->s, (size_t)s->len * sizeof(uint32_t));
    uint32_t *slot;
    if (key_lookup(B, key, klen, &slot))
        return nomem(B);
    if (*slot != UINT32_MAX)
        return GM_OK;
    *slot = 1;
    if (B->nsyms + s->len > MAX_TOTAL_SYMS)
        return gm_lload_error(B->L, GM_ERR_LIMIT, loc,
                              "the grammar desugars to more than %d symbols in its productions",
                              MAX_TOTAL_SYMS);
    if (GROW(B, B->syms, B->nsyms, B->scap, B->nsyms + s->len) ||
        GROW(B, B->p, B->np, B->pcap, B->np + 1))
        return nomem(B);
    ninfo *n = &B->n[lhs];
    if (GROW(B, n->prods, n->nprods, n->prods_cap, n->nprods + 1))
        return nomem(B);
    n->prods[n->nprods++] = (uint32_t)B->np;
    prod *p = &B->p[B->np++];
    p->lhs = lhs;
    p->rhs = (uint32_t)B->nsyms;
    p->len = s->len;
    p->priority = priority;
    p->loc = loc;
    p->alias = alias;
    if (s->len)
        memcpy(B->syms + B->nsyms, s->s, (size_t)s->len * sizeof(uint32_t));
    B->nsyms += s->len;
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * Expansion lists
 * ------------------------------------------------------------------------ */

static gm_status single(bnf *B, uint32_t sym, elist *out)
{
    uint32_t *s = gm_arena_alloc(B->a, sizeof *s);
    out->v = gm_arena_alloc(B->a, sizeof *out->v);
    if (!s || !out->v)
        return nomem(B);
    *s = sym;
    out->n = 1;
    out->v[0].len = 1;
    out->v[0].s = s;
    return GM_OK;
}

static gm_status empty(bnf *B, elist *out)
{
    out->v = gm_arena_alloc(B->a, sizeof *out->v);
    if (!out->v)
        return nomem(B);
    out->n = 1;
    out->v[0].len = 0;
    out->v[0].s = NULL;
    return GM_OK;
}

static bool seq_eq(const seq *x, const seq *y)
{
    return x->len == y->len && (!x->len || !memcmp(x->s, y->s, x->len * sizeof *x->s));
}

/* Removes repeated sequences, keeping first occurrences in order. */
static gm_status dedup(bnf *B, elist *e)
{
    if (e->n < 2)
        return GM_OK;
    uint32_t k = 0;
    if (e->n <= 16) {
        for (uint32_t i = 0; i < e->n; i++) {
            bool seen = false;
            for (uint32_t j = 0; j < k && !seen; j++)
                seen = seq_eq(&e->v[j], &e->v[i]);
            if (!seen)
                e->v[k++] = e->v[i];
        }
        e->n = k;
        return GM_OK;
    }
    /* open addressing over the kept sequences: slot = index + 1, 0 = empty */
    size_t cap = 32;
    while (cap < (size_t)e->n * 2)
        cap *= 2;
    uint32_t *slots = gm_arena_array(B->a, cap, sizeof *slots);
    if (!slots)
        return nomem(B);
    for (uint32_t i = 0; i < e->n; i++) {
        const seq *x = &e->v[i];
        const void *bytes = x->len ? (const void *)x->s : (const void *)"";
        size_t h = (size_t)gm_hash_bytes(bytes, (size_t)x->len * sizeof *x->s, x->len) & (cap - 1);
        bool seen = false;
        while (slots[h] && !seen) {
            seen = seq_eq(&e->v[slots[h] - 1], x);
            h = (h + 1) & (cap - 1);
        }
        if (seen)
            continue;
        e->v[k] = *x;
        slots[h] = ++k;
    }
    e->n = k;
    return GM_OK;
}

static gm_status too_many(bnf *B, gm_srcloc loc)
{
    return gm_lload_error(B->L, GM_ERR_LIMIT, loc,
                          "this expands to more than %d alternatives (or %d symbols); move "
                          "optional parts into rules of their own", MAX_ALTS, MAX_SYMS);
}

static uint64_t symbols_of(const elist *e)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < e->n; i++)
        n += e->v[i].len;
    return n;
}

/* Every x + y for x in a, y in b, in order (a's order first). */
static gm_status product(bnf *B, const elist *a, const elist *b, gm_srcloc loc, elist *out)
{
    uint64_t nsyms = symbols_of(a) * b->n + symbols_of(b) * a->n;
    if ((uint64_t)a->n * b->n > MAX_ALTS || nsyms > MAX_SYMS)
        return too_many(B, loc);
    size_t total = (size_t)a->n * b->n;
    elist r = {(uint32_t)total, gm_arena_array(B->a, total ? total : 1, sizeof(seq))};
    /* one block for all the sequences */
    uint32_t *block = gm_arena_array(B->a, nsyms ? (size_t)nsyms : 1, sizeof *block);
    if (!r.v || !block)
        return nomem(B);
    uint32_t k = 0;
    for (uint32_t i = 0; i < a->n; i++)
        for (uint32_t j = 0; j < b->n; j++) {
            uint32_t la = a->v[i].len, lb = b->v[j].len;
            if (la)
                memcpy(block, a->v[i].s, la * sizeof *block);
            if (lb)
                memcpy(block + la, b->v[j].s, lb * sizeof *block);
            r.v[k].len = la + lb;
            r.v[k].s = block;
            block += la + lb;
            k++;
        }
    *out = r;
    return dedup(B, out);
}

/* a's sequences then b's. */
static gm_status join(bnf *B, const elist *a, const elist *b, gm_srcloc loc, elist *out)
{
    if ((uint64_t)a->n + b->n > MAX_ALTS || symbols_of(a) + symbols_of(b) > MAX_SYMS)
        return too_many(B, loc);
    elist r = {a->n + b->n, gm_arena_array(B->a, (size_t)a->n + b->n, sizeof(seq))};
    if (!r.v)
        return nomem(B);
    if (a->n)
        memcpy(r.v, a->v, a->n * sizeof *r.v);
    if (b->n)
        memcpy(r.v + a->n, b->v, b->n * sizeof *r.v);
    *out = r;
    return dedup(B, out);
}

/* x repeated k times. */
static gm_status power(bnf *B, const elist *x, uint32_t k, gm_srcloc loc, elist *out)
{
    gm_status st = empty(B, out);
    for (uint32_t i = 0; st == GM_OK && i < k; i++)
        st = product(B, out, x, loc, out);
    return st;
}

/* A key identifying an expansion list (plus a tag), for sharing helpers. */
static gm_status elist_key(bnf *B, uint32_t tag, const uint32_t *extra, uint32_t nextra,
                           const elist *const *parts, uint32_t nparts, uint32_t **key,
                           size_t *klen)
{
    size_t n = 2 + nextra;
    for (uint32_t p = 0; p < nparts; p++) {
        n += 1;
        for (uint32_t i = 0; i < parts[p]->n; i++)
            n += 1 + parts[p]->v[i].len;
    }
    uint32_t *k = gm_arena_array(B->a, n, sizeof *k);
    if (!k)
        return nomem(B);
    size_t w = 0;
    k[w++] = 0xFFFFFFFFu;
    k[w++] = tag;
    for (uint32_t i = 0; i < nextra; i++)
        k[w++] = extra[i];
    for (uint32_t p = 0; p < nparts; p++) {
        k[w++] = 0xFFFFFFFDu - parts[p]->n;
        for (uint32_t i = 0; i < parts[p]->n; i++) {
            k[w++] = 0x80000000u | parts[p]->v[i].len;
            for (uint32_t j = 0; j < parts[p]->v[i].len; j++)
                k[w++] = parts[p]->v[i].s[j];
        }
    }
    *key = k;
    *klen = n * sizeof *k;
    return GM_OK;
}

/* A new helper nonterminal named __<prefix>_<what>_<k>. */
static gm_status new_helper(bnf *B, const ninfo *owner, const char *what, gm_srcloc loc,
                            uint32_t *idx)
{
    size_t cap = strlen(owner->name) + strlen(what) + 32;
    char *name = gm_arena_alloc(B->a, cap);
    if (!name)
        return nomem(B);
    snprintf(name, cap, "__%s_%s_%u", owner->name, what, B->helper_count++);
    ninfo ni;
    memset(&ni, 0, sizeof ni);
    ni.name = name;
    ni.flags = GM_CFG_RULE_GENERATED;
    ni.loc = loc;
    ni.origin = GM_LORIGIN_DEPENDENCY;
    if (add_nonterminal(B, &ni, idx))
        return nomem(B);
    return GM_OK;
}

/* x+ as a shared left-recursive helper: H -> x | H x. */
static gm_status repeat_helper(bnf *B, uint32_t owner, const char *what, const elist *x,
                               gm_srcloc loc, uint32_t *sym)
{
    uint32_t *key, *slot;
    size_t klen;
    const elist *parts[1] = {x};
    gm_status st = elist_key(B, 1, NULL, 0, parts, 1, &key, &klen);
    if (st != GM_OK)
        return st;
    if (key_lookup(B, key, klen, &slot))
        return nomem(B);
    if (*slot != UINT32_MAX) {
        *sym = *slot;
        return GM_OK;
    }
    uint32_t h;
    st = new_helper(B, &B->n[owner], what, loc, &h);
    if (st != GM_OK)
        return st;
    /* the slot may have moved while the helper was added */
    key_lookup(B, key, klen, &slot);
    *slot = *sym = NT(h);
    elist hs, rec;
    st = single(B, NT(h), &hs);
    if (st == GM_OK)
        st = product(B, &hs, x, loc, &rec);
    for (uint32_t i = 0; st == GM_OK && i < x->n; i++)
        st = add_prod(B, h, &x->v[i], 0, loc, NULL);
    for (uint32_t i = 0; st == GM_OK && i < rec.n; i++)
        st = add_prod(B, h, &rec.v[i], 0, loc, NULL);
    return st;
}

/* A helper made of the given alternatives, shared per key (Lark's repeat rules). */
static gm_status alts_helper(bnf *B, uint32_t owner, const char *what, const uint32_t *extra,
                             uint32_t nextra, const elist *const *parts, uint32_t nparts,
                             const elist *alts, gm_srcloc loc, elist *out)
{
    uint32_t *key, *slot;
    size_t klen;
    gm_status st = elist_key(B, 2, extra, nextra, parts, nparts, &key, &klen);
    if (st != GM_OK)
        return st;
    if (key_lookup(B, key, klen, &slot))
        return nomem(B);
    if (*slot != UINT32_MAX)
        return single(B, *slot, out);
    uint32_t h;
    st = new_helper(B, &B->n[owner], what, loc, &h);
    if (st != GM_OK)
        return st;
    key_lookup(B, key, klen, &slot);
    *slot = NT(h);
    for (uint32_t i = 0; st == GM_OK && i < alts->n; i++)
        st = add_prod(B, h, &alts->v[i], 0, loc, NULL);
    if (st == GM_OK)
        st = single(B, NT(h), out);
    return st;
}

/* Lark's small_factors: n = (...((1*a1+b1)*a2+b2)...), each a+b <= SMALL_FACTOR. */
static uint32_t small_factors(uint32_t n, uint32_t (*ab)[2])
{
    uint32_t k = 0;
    uint32_t tmp[64][2];
    while (n > SMALL_FACTOR) {
        uint32_t a = SMALL_FACTOR;
        for (; a > 1; a--)
            if (a + n % a <= SMALL_FACTOR)
                break;
        tmp[k][0] = a;
        tmp[k][1] = n % a;
        k++;
        n /= a;
    }
    ab[0][0] = n;
    ab[0][1] = 0;
    for (uint32_t i = 0; i < k; i++) {
        ab[i + 1][0] = tmp[k - 1 - i][0];
        ab[i + 1][1] = tmp[k - 1 - i][1];
    }
    return k + 1;
}

/* target*a atom*b as one helper (Lark's _add_repeat_rule). */
static gm_status repeat_rule(bnf *B, uint32_t owner, uint32_t a, uint32_t b, const elist *target,
                             const elist *atom, gm_srcloc loc, elist *out)
{
    elist x, y, alts;
    gm_status st = power(B, target, a, loc, &x);
    if (st == GM_OK)
        st = power(B, atom, b, loc, &y);
    if (st == GM_OK)
        st = product(B, &x, &y, loc, &alts);
    if (st != GM_OK)
        return st;
    char what[48];
    snprintf(what, sizeof what, "repeat_a%u_b%u", a, b);
    uint32_t extra[2] = {a, b};
    const elist *parts[2] = {target, atom};
    return alts_helper(B, owner, what, extra, 2, parts, 2, &alts, loc, out);
}

/* 0 .. a*n+b-1 copies (Lark's _add_repeat_opt_rule). */
static gm_status repeat_opt_rule(bnf *B, uint32_t owner, uint32_t a, uint32_t b,
                                 const elist *target, const elist *target_opt, const elist *atom,
                                 gm_srcloc loc, elist *out)
{
    elist alts = {0, NULL}, x, y, z;
    gm_status st = GM_OK;
    for (uint32_t i = 0; st == GM_OK && i < a; i++) {
        st = power(B, target, i, loc, &x);
        if (st == GM_OK)
            st = product(B, &x, target_opt, loc, &y);
        if (st == GM_OK)
            st = join(B, &alts, &y, loc, &alts);
    }
    if (st == GM_OK)
        st = power(B, target, a, loc, &z);
    for (uint32_t i = 0; st == GM_OK && i < b; i++) {
        st = power(B, atom, i, loc, &x);
        if (st == GM_OK)
            st = product(B, &z, &x, loc, &y);
        if (st == GM_OK)
            st = join(B, &alts, &y, loc, &alts);
    }
    if (st != GM_OK)
        return st;
    char what[48];
    snprintf(what, sizeof what, "repeat_a%u_b%u_opt", a, b);
    uint32_t extra[3] = {a, b, 1};
    const elist *parts[3] = {target, atom, target_opt};
    return alts_helper(B, owner, what, extra, 3, parts, 3, &alts, loc, out);
}

/* x ~ mn..mx (Lark's _generate_repeats). */
static gm_status repeats(bnf *B, uint32_t owner, const elist *x, uint32_t mn, uint32_t mx,
                         gm_srcloc loc, elist *out)
{
    gm_status st;
    if (mx < REPEAT_BREAK) {
        elist r = {0, NULL}, p;
        st = power(B, x, mn, loc, &p);
        for (uint32_t k = mn; st == GM_OK; k++) {
            st = join(B, &r, &p, loc, &r);
            if (st != GM_OK || k == mx)
                break;
            st = product(B, &p, x, loc, &p);
        }
        *out = r;
        return st;
    }
    uint32_t f[64][2], nf;
    elist mn_target = *x;
    nf = small_factors(mn, f);
    for (uint32_t i = 0; i < nf; i++) {
        st = repeat_rule(B, owner, f[i][0], f[i][1], &mn_target, x, loc, &mn_target);
        if (st != GM_OK)
            return st;
    }
    if (mx == mn) {
        *out = mn_target;
        return GM_OK;
    }
    nf = small_factors(mx - mn + 1, f);
    elist diff_target = *x, diff_opt;
    st = empty(B, &diff_opt);
    for (uint32_t i = 0; st == GM_OK && i + 1 < nf; i++) {
        st = repeat_opt_rule(B, owner, f[i][0], f[i][1], &diff_target, &diff_opt, x, loc,
                             &diff_opt);
        if (st == GM_OK)
            st = repeat_rule(B, owner, f[i][0], f[i][1], &diff_target, x, loc, &diff_target);
    }
    if (st == GM_OK)
        st = repeat_opt_rule(B, owner, f[nf - 1][0], f[nf - 1][1], &diff_target, &diff_opt, x,
                             loc, &diff_opt);
    if (st == GM_OK)
        st = product(B, &mn_target, &diff_opt, loc, out);
    return st;
}

/* ------------------------------------------------------------------------
 * Symbols of leaves
 * ------------------------------------------------------------------------ */

static gm_status pattern_key(bnf *B, const gm_lpattern *p, char **key, size_t *klen)
{
    size_t n = p->len + 5;
    char *k = gm_arena_alloc(B->a, n);
    if (!k)
        return nomem(B);
    k[0] = p->is_literal ? 'L' : 'R';
    memcpy(k + 1, &p->flags, 4);
    if (p->len)
        memcpy(k + 5, p->bytes, p->len);
    *key = k;
    *klen = n;
    return GM_OK;
}

/* Records that terminal idx has pattern p (later definitions win). */
static gm_status map_pattern(bnf *B, const gm_lpattern *p, uint32_t idx)
{
    char *key;
    size_t klen;
    gm_status st = pattern_key(B, p, &key, &klen);
    if (st != GM_OK)
        return st;
    uint32_t id;
    int added;
    if (gm_intern_put(&B->patterns, key, klen, &id, &added) ||
        GROW(B, B->pattern_term, id, B->pattern_cap, (size_t)id + 1))
        return nomem(B);
    B->pattern_term[id] = idx;
    return GM_OK;
}

/* note [anonymous terminals] */
static gm_status anonymous(bnf *B, const gm_lx *x, uint32_t *sym)
{
    gm_lpattern p;
    gm_status st = gm_lterms_leaf(&B->terms, x, &p);
    char *key;
    size_t klen;
    if (st == GM_OK)
        st = pattern_key(B, &p, &key, &klen);
    if (st != GM_OK)
        return st;
    uint32_t id = gm_intern_find(&B->patterns, key, klen);
    if (id != UINT32_MAX) {
        *sym = T(B->pattern_term[id]);
        B->t[B->pattern_term[id]].referenced = true;
        return GM_OK;
    }
    gm_strbuf nb;
    gm_strbuf_init(&nb, B->L->mem);
    gm_lpattern_write(&nb, &p);
    if (nb.n > MAX_ANON_NAME) {
        /* a long pattern is named by its start and its number, to keep reports readable */
        nb.n = MAX_ANON_NAME - 16;
        gm_strbuf_printf(&nb, "...#%zu", B->nt);
    }
    char *name = nb.failed ? NULL : gm_arena_strndup(B->a, gm_strbuf_str(&nb), nb.n);
    gm_strbuf_free(&nb);
    if (!name)
        return nomem(B);
    tinfo ti;
    memset(&ti, 0, sizeof ti);
    ti.name = name;
    ti.pat = p;
    ti.loc = x->loc;
    ti.referenced = true;
    ti.origin = GM_LORIGIN_DEPENDENCY;
    uint32_t idx;
    if (add_terminal(B, &ti, &idx))
        return nomem(B);
    *sym = T(idx);
    return map_pattern(B, &p, idx);
}

static gm_status expand(bnf *B, uint32_t owner, const gm_lx *x, elist *out);

/* The rule t{args}: an instance of template t, made once. */
static gm_status instance(bnf *B, uint32_t owner, const gm_lx *x, uint32_t *sym)
{
    const gm_ldef *t = gm_lbuilder_find(B->b, x->name);
    uint32_t *args = gm_arena_array(B->a, x->n, sizeof *args);
    if (!args)
        return nomem(B);
    gm_strbuf nb;
    gm_strbuf_init(&nb, B->L->mem);
    gm_strbuf_printf(&nb, "%s{", x->name);
    for (uint32_t i = 0; i < x->n; i++) {
        elist e;
        gm_status st = expand(B, owner, x->kids[i], &e);
        if (st != GM_OK) {
            gm_strbuf_free(&nb);
            return st;
        }
        /* an argument is one value, so it expands to one symbol */
        args[i] = e.v[0].s[0];
        const char *an = IS_NT(args[i]) ? B->n[IDX(args[i])].name : B->t[IDX(args[i])].name;
        gm_strbuf_printf(&nb, "%s%s", i ? "," : "", an);
    }
    gm_strbuf_putc(&nb, '}');
    if (nb.failed) {
        gm_strbuf_free(&nb);
        return nomem(B);
    }
    uint32_t *slot;
    if (key_lookup(B, gm_strbuf_str(&nb), nb.n, &slot)) {
        gm_strbuf_free(&nb);
        return nomem(B);
    }
    if (*slot != UINT32_MAX) {
        gm_strbuf_free(&nb);
        *sym = *slot;
        return GM_OK;
    }
    if (++B->instances > MAX_INSTANCES) {
        gm_strbuf_free(&nb);
        return gm_lload_error(B->L, GM_ERR_LIMIT, x->loc,
                              "more than %d template instances: does template '%s' instantiate "
                              "itself with ever larger arguments?", MAX_INSTANCES, x->name);
    }
    ninfo ni;
    memset(&ni, 0, sizeof ni);
    ni.name = gm_arena_strndup(B->a, gm_strbuf_str(&nb), nb.n);
    gm_strbuf_free(&nb);
    if (!ni.name)
        return nomem(B);
    ni.def = t;
    ni.env = args;
    ni.flags = GM_CFG_RULE_TEMPLATE | (t->name[0] == '_' ? GM_CFG_RULE_INLINE : 0) |
               (t->mods & GM_LMOD_EXPAND1 ? GM_CFG_RULE_EXPAND1 : 0) |
               (t->mods & GM_LMOD_KEEP ? GM_CFG_RULE_KEEP : 0);
    ni.priority = t->priority;
    ni.loc = x->loc;
    ni.origin = GM_LORIGIN_DEPENDENCY;
    uint32_t idx;
    if (add_nonterminal(B, &ni, &idx))
        return nomem(B);
    key_lookup(B, B->n[idx].name, strlen(B->n[idx].name), &slot);
    *slot = *sym = NT(idx);
    if (GROW(B, B->work, B->nwork, B->wcap, B->nwork + 1))
        return nomem(B);
    B->work[B->nwork++] = idx;
    return GM_OK;
}

static gm_status name_symbol(bnf *B, uint32_t owner, const gm_lx *x, uint32_t *sym)
{
    const ninfo *o = &B->n[owner];
    if (o->env && !x->is_term)
        for (uint32_t i = 0; i < o->def->nparams; i++)
            if (!strcmp(o->def->params[i], x->name)) {
                *sym = o->env[i];
                return GM_OK;
            }
    uint32_t id = gm_intern_find(&B->b->names, x->name, strlen(x->name));
    *sym = B->sym_of_def[id];
    if (!IS_NT(*sym))
        B->t[IDX(*sym)].referenced = true;
    return GM_OK;
}

/* note [desugaring] */
static gm_status expand(bnf *B, uint32_t owner, const gm_lx *x, elist *out)
{
    gm_status st = GM_OK;
    uint32_t sym = 0;
    elist e, f;
    switch ((gm_lx_kind)x->kind) {
    case LX_NAME:
        st = name_symbol(B, owner, x, &sym);
        return st == GM_OK ? single(B, sym, out) : st;
    case LX_LITERAL:
    case LX_REGEX:
    case LX_RANGE:
        st = anonymous(B, x, &sym);
        return st == GM_OK ? single(B, sym, out) : st;
    case LX_TEMPLATE:
        st = instance(B, owner, x, &sym);
        return st == GM_OK ? single(B, sym, out) : st;
    case LX_SYM:
        return single(B, x->sym, out);
    case LX_SEQ:
        st = empty(B, out);
        for (uint32_t i = 0; st == GM_OK && i < x->n; i++) {
            st = expand(B, owner, x->kids[i], &e);
            if (st == GM_OK)
                st = product(B, out, &e, x->loc, out);
        }
        return st;
    case LX_ALT:
        *out = (elist){0, NULL};
        for (uint32_t i = 0; st == GM_OK && i < x->n; i++) {
            st = expand(B, owner, x->kids[i], &e);
            if (st == GM_OK)
                st = join(B, out, &e, x->loc, out);
        }
        return st;
    case LX_OPT:
    case LX_MAYBE:
        st = expand(B, owner, x->kids[0], &e);
        if (st == GM_OK)
            st = empty(B, &f);
        return st == GM_OK ? join(B, &e, &f, x->loc, out) : st;
    case LX_PLUS:
    case LX_STAR:
        st = expand(B, owner, x->kids[0], &e);
        if (st == GM_OK)
            st = repeat_helper(B, owner, x->kind == LX_PLUS ? "plus" : "star", &e, x->loc, &sym);
        if (st == GM_OK)
            st = single(B, sym, out);
        if (st == GM_OK && x->kind == LX_STAR && (st = empty(B, &f)) == GM_OK)
            st = join(B, out, &f, x->loc, out);
        return st;
    case LX_REPEAT:
        st = expand(B, owner, x->kids[0], &e);
        return st == GM_OK ? repeats(B, owner, &e, x->min, x->max, x->loc, out) : st;
    }
    return st;
}

/* Expands the body of a rule or template instance into its productions. */
static gm_status expand_rule(bnf *B, uint32_t idx)
{
    const gm_ldef *d = B->n[idx].def;
    const gm_lx *body = d->body;
    for (uint32_t a = 0; a < body->n; a++) {
        const gm_lx *alt = body->kids[a];
        elist e;
        gm_status st = expand(B, idx, alt, &e);
        for (uint32_t i = 0; st == GM_OK && i < e.n; i++)
            st = add_prod(B, idx, &e.v[i], B->n[idx].priority, alt->loc, alt->alias);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * Checks and the cfg
 * ------------------------------------------------------------------------ */

static bool sym_is_ignored(const bnf *B, uint32_t s)
{
    return !IS_NT(s) && B->t[IDX(s)].ignored;
}

/* Marks referenced terminals used inside other terminals (for the unused warning). */
static void mark_term_refs(bnf *B, const gm_lx *x)
{
    if (x->kind == LX_NAME && x->is_term) {
        uint32_t id = gm_intern_find(&B->b->names, x->name, strlen(x->name));
        if (id != UINT32_MAX && B->sym_of_def[id] != UINT32_MAX && !IS_NT(B->sym_of_def[id]))
            B->t[IDX(B->sym_of_def[id])].referenced = true;
    }
    for (uint32_t i = 0; i < x->n; i++)
        mark_term_refs(B, x->kids[i]);
}

/* The first reference to a terminal name in a rule body (for error locations). */
static const gm_lx *find_use(const gm_lx *x, const char *name)
{
    if (x->kind == LX_NAME && !strcmp(x->name, name))
        return x;
    for (uint32_t i = 0; i < x->n; i++) {
        const gm_lx *u = find_use(x->kids[i], name);
        if (u)
            return u;
    }
    return NULL;
}

/* A non-deriving rule that its first alternative reaches again: the root of the problem. */
static uint32_t culprit_of(const bnf *B, const uint8_t *ok, uint32_t r, uint8_t *seen)
{
    while (!seen[r]) {
        seen[r] = 1;
        const ninfo *n = &B->n[r];
        if (!n->nprods)
            return r;
        const prod *p = &B->p[n->prods[0]];
        uint32_t next = r;
        for (uint32_t k = 0; k < p->len; k++) {
            uint32_t s = B->syms[p->rhs + k];
            if (IS_NT(s) && !ok[IDX(s)]) {
                next = IDX(s);
                break;
            }
        }
        if (next == r)
            return r;
        r = next;
    }
    return r;
}

static gm_status checks(bnf *B, uint32_t start, uint8_t *reach)
{
    gm_lload *L = B->L;
    /* reachability from the start rule */
    uint32_t *stack = gm_arena_array(B->a, B->nn ? B->nn : 1, sizeof *stack);
    if (!stack)
        return nomem(B);
    size_t top = 0;
    reach[start] = 1;
    stack[top++] = start;
    while (top) {
        const ninfo *n = &B->n[stack[--top]];
        for (size_t k = 0; k < n->nprods; k++) {
            const prod *p = &B->p[n->prods[k]];
            for (uint32_t i = 0; i < p->len; i++) {
                uint32_t s = B->syms[p->rhs + i];
                if (IS_NT(s) && !reach[IDX(s)]) {
                    reach[IDX(s)] = 1;
                    stack[top++] = IDX(s);
                }
            }
        }
    }
    /* unused definitions (warnings) */
    for (size_t i = 0; i < B->nn; i++) {
        const ninfo *n = &B->n[i];
        if (!reach[i] && n->def && !n->env && n->origin != GM_LORIGIN_DEPENDENCY)
            gm_lload_warn(L, GM_OK, n->origin == GM_LORIGIN_IMPORTED ? n->import_loc : n->loc,
                          "rule '%s' is unused (not reachable from '%s')", n->name,
                          B->n[start].name);
    }
    for (size_t k = 0; k < B->b->norder; k++) {
        const gm_ldef *d = B->b->defs[B->b->order[k]];
        if (!d->nparams)
            continue;
        bool used = false;
        for (size_t i = 0; i < B->nn && !used; i++)
            used = B->n[i].def == d && reach[i];
        uint8_t origin = B->b->origin[B->b->order[k]];
        if (!used && origin != GM_LORIGIN_DEPENDENCY)
            gm_lload_warn(L, GM_OK,
                          origin == GM_LORIGIN_IMPORTED ? B->b->import_loc[B->b->order[k]] : d->loc,
                          "template '%s' is unused (no instance reachable from '%s')", d->name,
                          B->n[start].name);
    }
    for (size_t i = 0; i < B->nt; i++) {
        const tinfo *t = &B->t[i];
        if (!t->referenced && !t->ignored && t->def && t->origin != GM_LORIGIN_DEPENDENCY)
            gm_lload_warn(L, GM_OK, t->origin == GM_LORIGIN_IMPORTED ? t->import_loc : t->loc,
                          "terminal '%s' is unused", t->name);
    }
    /* ignored terminals cannot appear in rules */
    for (size_t k = 0; k < B->np; k++) {
        const prod *p = &B->p[k];
        if (!reach[p->lhs])
            continue;
        for (uint32_t i = 0; i < p->len; i++) {
            uint32_t s = B->syms[p->rhs + i];
            if (!sym_is_ignored(B, s))
                continue;
            const tinfo *t = &B->t[IDX(s)];
            const ninfo *n = &B->n[p->lhs];
            const gm_lx *use = n->def ? find_use(n->def->body, t->name) : NULL;
            return gm_lload_error(L, GM_ERR_GRAMMAR, use ? use->loc : p->loc,
                                  "terminal '%s' is %%ignore'd, so rule '%s' can never use it",
                                  t->name, n->name);
        }
    }
    /* every reachable rule must derive some terminal string */
    uint8_t *ok = gm_arena_alloc(B->a, B->nn ? B->nn : 1);
    if (!ok)
        return nomem(B);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t k = 0; k < B->np; k++) {
            const prod *p = &B->p[k];
            if (ok[p->lhs] || !reach[p->lhs])
                continue;
            bool all = true;
            for (uint32_t i = 0; i < p->len && all; i++) {
                uint32_t s = B->syms[p->rhs + i];
                all = !IS_NT(s) || ok[IDX(s)];
            }
            if (all) {
                ok[p->lhs] = 1;
                changed = true;
            }
        }
    }
    for (size_t i = 0; i < B->nn; i++) {
        if (!reach[i] || ok[i])
            continue;
        uint8_t *seen = gm_arena_alloc(B->a, B->nn);
        if (!seen)
            return nomem(B);
        const ninfo *n = &B->n[culprit_of(B, ok, (uint32_t)i, seen)];
        gm_srcloc at = n->def && !n->env ? n->def->loc : n->loc;
        if (!n->nprods)
            return gm_lload_error(L, GM_ERR_GRAMMAR, at, "rule '%s' has no alternatives",
                                  n->name);
        const prod *p = &B->p[n->prods[0]];
        const char *next = n->name;
        for (uint32_t k = 0; k < p->len; k++) {
            uint32_t s = B->syms[p->rhs + k];
            if (IS_NT(s) && !ok[IDX(s)]) {
                next = B->n[IDX(s)].name;
                break;
            }
        }
        return gm_lload_error(L, GM_ERR_GRAMMAR, at,
                              "rule '%s' derives no terminal string: every alternative needs a "
                              "rule that derives none (the first needs '%s'%s)", n->name, next,
                              next == n->name ? " itself" : "");
    }
    return GM_OK;
}

/* The terminal an %insert item names; a literal becomes a terminal as in a rule. */
static gm_status insert_term(bnf *B, const gm_lx *x, uint32_t *idx)
{
    uint32_t sym;
    if (x->kind == LX_LITERAL) {
        gm_status st = anonymous(B, x, &sym);
        if (st != GM_OK)
            return st;
    } else {
        sym = B->sym_of_def[gm_intern_find(&B->b->names, x->name, strlen(x->name))];
    }
    *idx = IDX(sym);
    return GM_OK;
}

/* note [insert directive] */
static gm_status resolve_insert(bnf *B)
{
    const gm_lstmt *st = B->insert;
    B->at_terms = gm_arena_array(B->a, st->at->n, sizeof *B->at_terms);
    B->after_terms = gm_arena_array(B->a, st->after->n, sizeof *B->after_terms);
    if (!B->at_terms || !B->after_terms)
        return nomem(B);
    gm_status s = insert_term(B, st->insert, &B->ins_term);
    for (uint32_t i = 0; s == GM_OK && i < st->at->n; i++) {
        s = insert_term(B, st->at->kids[i], &B->at_terms[i]);
        if (s == GM_OK)
            B->t[B->at_terms[i]].referenced = true;
    }
    for (uint32_t i = 0; s == GM_OK && i < st->after->n; i++)
        s = insert_term(B, st->after->kids[i], &B->after_terms[i]);
    if (s == GM_OK && st->offending) {
        B->off_terms = gm_arena_array(B->a, st->offending->n, sizeof *B->off_terms);
        if (!B->off_terms)
            return nomem(B);
        for (uint32_t i = 0; s == GM_OK && i < st->offending->n; i++)
            s = insert_term(B, st->offending->kids[i], &B->off_terms[i]);
    }
    if (s == GM_OK && st->nolex) {
        B->nolex_terms = gm_arena_array(B->a, st->nolex->n, sizeof *B->nolex_terms);
        if (!B->nolex_terms)
            return nomem(B);
        for (uint32_t i = 0; s == GM_OK && i < st->nolex->n; i++)
            s = insert_term(B, st->nolex->kids[i], &B->nolex_terms[i]);
    }
    if (s == GM_OK && st->glued) {
        B->glued_terms = gm_arena_array(B->a, st->glued->n, sizeof *B->glued_terms);
        if (!B->glued_terms)
            return nomem(B);
        for (uint32_t i = 0; s == GM_OK && i < st->glued->n; i++)
            s = insert_term(B, st->glued->kids[i], &B->glued_terms[i]);
    }
    if (s == GM_OK && st->rename) {
        B->rename_terms = gm_arena_array(B->a, st->rename->n, sizeof *B->rename_terms);
        if (!B->rename_terms)
            return nomem(B);
        for (uint32_t i = 0; s == GM_OK && i < st->rename->n; i++) {
            s = insert_term(B, st->rename->kids[i], &B->rename_terms[i]);
            if (s == GM_OK && i % 2) /* a rename target may be in no rule: that rejects it */
                B->t[B->rename_terms[i]].referenced = true;
        }
    }
    return s;
}

static gm_status check_insert(bnf *B, const uint8_t *reach)
{
    gm_lload *L = B->L;
    const gm_lstmt *st = B->insert;
    /* terminals used by reachable rules, with one user each */
    uint32_t *user = gm_arena_array(B->a, B->nt ? B->nt : 1, sizeof *user);
    uint8_t *is_at = gm_arena_alloc(B->a, B->nt ? B->nt : 1);
    if (!user || !is_at)
        return nomem(B);
    for (size_t i = 0; i < B->nt; i++)
        user[i] = UINT32_MAX;
    for (size_t k = 0; k < B->np; k++) {
        const prod *p = &B->p[k];
        if (!reach[p->lhs])
            continue;
        for (uint32_t i = 0; i < p->len; i++)
            if (!IS_NT(B->syms[p->rhs + i]) && user[IDX(B->syms[p->rhs + i])] == UINT32_MAX)
                user[IDX(B->syms[p->rhs + i])] = (uint32_t)k;
    }
    for (uint32_t i = 0; i < st->at->n; i++) {
        const tinfo *t = &B->t[B->at_terms[i]];
        gm_srcloc at = st->at->kids[i]->loc;
        if (t->ignored)
            return gm_lload_error(L, GM_ERR_GRAMMAR, at,
                                  "%%insert ... at %s: it is %%ignore'd, but a line end must "
                                  "reach the insertion layer (do not %%ignore it)", t->name);
        uint32_t k = user[B->at_terms[i]];
        if (k != UINT32_MAX) {
            const prod *p = &B->p[k];
            const ninfo *n = &B->n[p->lhs];
            const gm_lx *use = n->def ? find_use(n->def->body, t->name) : NULL;
            return gm_lload_error(L, GM_ERR_GRAMMAR, use ? use->loc : p->loc,
                                  "terminal '%s' is a line end of %%insert (the parser never "
                                  "sees it), so rule '%s' cannot use it", t->name, n->name);
        }
        is_at[B->at_terms[i]] = 1;
    }
    const tinfo *ins = &B->t[B->ins_term];
    if (is_at[B->ins_term])
        return gm_lload_error(L, GM_ERR_GRAMMAR, st->insert->loc,
                              "%%insert %s: the inserted terminal is also a line end ('at')",
                              ins->name);
    if (ins->ignored)
        return gm_lload_error(L, GM_ERR_GRAMMAR, st->insert->loc,
                              "%%insert %s: the inserted terminal is %%ignore'd", ins->name);
    if (user[B->ins_term] == UINT32_MAX)
        return gm_lload_error(L, GM_ERR_GRAMMAR, st->insert->loc,
                              "%%insert %s: no rule uses the inserted terminal, so an insertion "
                              "could never parse", ins->name);
    for (uint32_t i = 0; i < st->after->n; i++) {
        const tinfo *t = &B->t[B->after_terms[i]];
        if (is_at[B->after_terms[i]])
            return gm_lload_error(L, GM_ERR_GRAMMAR, st->after->kids[i]->loc,
                                  "%%insert ... after %s: it is also a line end ('at'), and "
                                  "line ends never reach the parser", t->name);
        if (t->ignored)
            return gm_lload_error(L, GM_ERR_GRAMMAR, st->after->kids[i]->loc,
                                  "%%insert ... after %s: it is %%ignore'd, so it never reaches "
                                  "the insertion layer", t->name);
    }
    if (st->nolex && !st->offending)
        return gm_lload_error(L, GM_ERR_GRAMMAR, st->nolex->loc,
                              "%%insert ... nolex needs an 'offending' list");
    if (st->rename && (!st->offending || st->rename->n % 2))
        return gm_lload_error(L, GM_ERR_GRAMMAR, st->rename->loc,
                              "%%insert ... rename takes pairs FROM TO and needs an 'offending' "
                              "list");
    for (uint32_t i = 0; st->rename && i < st->rename->n; i++) {
        const tinfo *t = &B->t[B->rename_terms[i]];
        if (is_at[B->rename_terms[i]] || t->ignored || B->rename_terms[i] == B->ins_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, st->rename->kids[i]->loc,
                                  "%%insert ... rename %s: it never reaches the parser as "
                                  "itself (a line end, %%ignore'd or the inserted terminal)",
                                  t->name);
    }
    for (uint32_t i = 0; st->offending && i < st->offending->n; i++) {
        const tinfo *t = &B->t[B->off_terms[i]];
        if (is_at[B->off_terms[i]] || t->ignored || B->off_terms[i] == B->ins_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, st->offending->kids[i]->loc,
                                  "%%insert ... offending %s: it never reaches the parser as "
                                  "itself (a line end, %%ignore'd or the inserted terminal)",
                                  t->name);
    }
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * The indentation layer (note [indent directive])
 * ------------------------------------------------------------------------ */

static const char *const INDENT_ROLE[3] = {"line-end", "indent", "dedent"};

/* Why the layer is on, for messages about Lark's PythonIndenter defaults. */
static const char *indent_why(const bnf *B)
{
    return B->indent_auto ? " (the grammar %declares _INDENT and _DEDENT, so it gets the "
                            "indentation layer of Lark's PythonIndenter)"
                          : "";
}

/* A defined terminal with a pattern, as an %indent item of Lark's defaults. */
static bool has_pattern(const bnf *B, const char *name)
{
    const gm_ldef *d = gm_lbuilder_find(B->b, name);
    return d && d->is_term && d->body;
}

/* The items of Lark's PythonIndenter for a grammar that %declares _INDENT and _DEDENT. */
static gm_status indent_defaults(bnf *B, const gm_ldef *ind, const gm_lx **out)
{
    static const char *const brackets[] = {"(", ")", "[", "]", "{", "}"};
    gm_lx *list = gm_lx_new(B->a, LX_SEQ, ind->loc);
    if (!list)
        return nomem(B);
    const char *nl = has_pattern(B, "_NEWLINE") ? "_NEWLINE" : has_pattern(B, "_NL") ? "_NL" : NULL;
    if (!nl)
        return gm_lload_error(B->L, GM_ERR_GRAMMAR, ind->loc,
                              "the grammar %%declares _INDENT and _DEDENT, so it gets the "
                              "indentation layer of Lark's PythonIndenter, which needs a line-end "
                              "terminal _NEWLINE or _NL; define one, or say which with "
                              "%%indent NL _INDENT _DEDENT \"(\" \")\" ...");
    const char *names[3] = {nl, "_INDENT", "_DEDENT"};
    for (int i = 0; i < 9; i++) {
        gm_lx *x = gm_lx_new(B->a, i < 3 ? LX_NAME : LX_LITERAL, ind->loc);
        if (!x || gm_lx_push(B->a, list, x))
            return nomem(B);
        if (i < 3) {
            x->name = names[i];
            x->is_term = true;
        } else {
            x->bytes = brackets[i - 3];
            x->len = 1;
        }
    }
    *out = list;
    return GM_OK;
}

/* Terminal of an %indent item: a named one, or the one rules use for a literal
   (UINT32_MAX when no rule made it). */
static gm_status indent_item(bnf *B, const gm_lx *x, uint32_t *idx)
{
    if (x->kind == LX_NAME) {
        uint32_t id = gm_intern_find(&B->b->names, x->name, strlen(x->name));
        *idx = IDX(B->sym_of_def[id]);
        return GM_OK;
    }
    gm_lpattern p;
    char *key;
    size_t klen;
    gm_status st = gm_lterms_leaf(&B->terms, x, &p);
    if (st == GM_OK)
        st = pattern_key(B, &p, &key, &klen);
    if (st != GM_OK)
        return st;
    uint32_t id = gm_intern_find(&B->patterns, key, klen);
    *idx = id == UINT32_MAX ? UINT32_MAX : B->pattern_term[id];
    return GM_OK;
}

/* The %indent items: the directive's, Lark's defaults, or none. */
static gm_status find_indent(bnf *B)
{
    if (B->b->indent) {
        B->indent = B->b->indent->expr;
        return GM_OK;
    }
    const gm_ldef *ind = gm_lbuilder_find(B->b, "_INDENT");
    const gm_ldef *ded = gm_lbuilder_find(B->b, "_DEDENT");
    if (!ind || !ded || ind->body || ded->body)
        return GM_OK;
    B->indent_auto = true;
    return indent_defaults(B, ind, &B->indent);
}

/* note [indent directive]: the items' kinds and names, before reachability is known. */
static gm_status resolve_indent(bnf *B)
{
    gm_lload *L = B->L;
    const gm_lx *items = B->indent;
    const char *why = indent_why(B);
    if (items->n < 3)
        return gm_lload_error(L, GM_ERR_GRAMMAR, B->b->indent->loc,
                              "%%indent names the line-end, indent and dedent terminals, then "
                              "bracket pairs: %%indent _NEWLINE _INDENT _DEDENT \"(\" \")\" ...");
    if ((items->n - 3) % 2)
        return gm_lload_error(L, GM_ERR_GRAMMAR, items->kids[items->n - 1]->loc,
                              "%%indent brackets come in pairs (opening, closing): this one "
                              "has no closing bracket");
    B->indent_terms = gm_arena_array(B->a, items->n, sizeof *B->indent_terms);
    if (!B->indent_terms)
        return nomem(B);
    for (uint32_t i = 0; i < items->n; i++) {
        const gm_lx *x = items->kids[i];
        if (x->kind == LX_NAME) {
            const gm_ldef *d = gm_lbuilder_find(B->b, x->name);
            if (!d)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "undefined terminal '%s' in %%indent%s", x->name, why);
            if (i == 0 && !d->body)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "%%indent %s: the line-end terminal is %%declare'd, but the "
                                      "lexer must produce it (give it a pattern, as "
                                      "_NEWLINE: /(\\r?\\n[\\t ]*)+/)", x->name);
            if ((i == 1 || i == 2) && d->body)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "%%indent ... %s: the %s terminal is made by the layer, "
                                      "never by the lexer, so it must be %%declare'd without a "
                                      "pattern", x->name, INDENT_ROLE[i]);
            if (i >= 3 && !d->body)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "%%indent bracket %s is %%declare'd: the lexer never "
                                      "produces it", x->name);
        } else if (i < 3) {
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "%%indent: the %s terminal is a terminal name, not a literal",
                                  INDENT_ROLE[i]);
        }
        gm_status st = indent_item(B, x, &B->indent_terms[i]);
        if (st != GM_OK)
            return st;
        if (B->indent_terms[i] != UINT32_MAX)
            B->t[B->indent_terms[i]].referenced = true; /* no "unused" warning: see below */
        for (uint32_t j = 0; j < i; j++)
            if (B->indent_terms[j] == B->indent_terms[i] && B->indent_terms[i] != UINT32_MAX)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "%%indent names terminal '%s' twice (items %u and %u)",
                                      B->t[B->indent_terms[i]].name, j + 1, i + 1);
    }
    return GM_OK;
}

/* note [indent directive]: what the layer feeds must be usable by the parser. */
static gm_status check_indent(bnf *B, const uint8_t *reach)
{
    gm_lload *L = B->L;
    const gm_lx *items = B->indent;
    const char *why = indent_why(B);
    uint8_t *used = gm_arena_alloc(B->a, B->nt ? B->nt : 1);
    if (!used)
        return nomem(B);
    for (size_t k = 0; k < B->np; k++) {
        const prod *p = &B->p[k];
        for (uint32_t i = 0; reach[p->lhs] && i < p->len; i++)
            if (!IS_NT(B->syms[p->rhs + i]))
                used[IDX(B->syms[p->rhs + i])] = 1;
    }
    for (uint32_t i = 0; i < items->n; i++) {
        const gm_lx *x = items->kids[i];
        uint32_t t = B->indent_terms[i];
        if (t != UINT32_MAX && B->t[t].ignored)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "%%indent %s: terminal '%s' is %%ignore'd, but the layer must "
                                  "see it%s", i < 3 ? INDENT_ROLE[i] : "bracket", B->t[t].name,
                                  why);
        if (i < 3 && !used[t])
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "no rule uses the %s terminal '%s', but the indentation layer "
                                  "feeds it to the parser%s", INDENT_ROLE[i], B->t[t].name, why);
        if (i >= 3 && (t == UINT32_MAX || !used[t])) {
            if (!B->indent_auto)
                gm_lload_warn(L, GM_OK, x->loc,
                              "%%indent bracket %s%.*s%s is not used by any rule; it has no "
                              "effect", x->kind == LX_NAME ? "" : "\"",
                              (int)(x->kind == LX_NAME ? strlen(x->name) : x->len),
                              x->kind == LX_NAME ? x->name : x->bytes,
                              x->kind == LX_NAME ? "" : "\"");
            B->indent_terms[i] = UINT32_MAX;
        }
    }
    return GM_OK;
}

/* Fills g->postlex over the cfg's terminal ids (tmap). */
static gm_status make_postlex(bnf *B, const uint32_t *tmap, gm_cfg *g)
{
    const gm_lstmt *st = B->insert;
    gm_postlex *pl = &g->postlex;
    pl->at = gm_mem_calloc(g->mem, g->nterminals, 1);
    pl->after = gm_mem_calloc(g->mem, g->nterminals, 1);
    if (!pl->at || !pl->after)
        return GM_ERR_NOMEM;
    pl->insertion = true;
    pl->nterminals = g->nterminals;
    pl->insert = tmap[B->ins_term];
    if (st->glued) {
        pl->glued = gm_mem_calloc(g->mem, g->nterminals, 1);
        if (!pl->glued)
            return GM_ERR_NOMEM;
        for (uint32_t i = 0; i < st->glued->n; i++)
            if (tmap[B->glued_terms[i]] != UINT32_MAX)
                pl->glued[tmap[B->glued_terms[i]]] = 1;
    }
    for (uint32_t i = 0; i < st->at->n; i++)
        pl->at[tmap[B->at_terms[i]]] = 1;
    for (uint32_t i = 0; i < st->after->n; i++)
        pl->after[tmap[B->after_terms[i]]] = 1;
    if (st->offending) {
        pl->offending = true;
        pl->try_before = gm_mem_calloc(g->mem, g->nterminals, 1);
        if (!pl->try_before)
            return GM_ERR_NOMEM;
        for (uint32_t i = 0; i < st->offending->n; i++)
            pl->try_before[tmap[B->off_terms[i]]] = 1;
        pl->nolex = gm_mem_calloc(g->mem, g->nterminals, 1);
        if (!pl->nolex)
            return GM_ERR_NOMEM;
        for (uint32_t i = 0; st->nolex && i < st->nolex->n; i++)
            if (tmap[B->nolex_terms[i]] != UINT32_MAX)
                pl->nolex[tmap[B->nolex_terms[i]]] = 1;
        pl->renamed = gm_mem_calloc(g->mem, g->nterminals, sizeof *pl->renamed);
        if (!pl->renamed)
            return GM_ERR_NOMEM;
        for (uint32_t i = 0; i < g->nterminals; i++)
            pl->renamed[i] = GM_POSTLEX_NONE;
        for (uint32_t i = 0; st->rename && i + 1 < st->rename->n; i += 2)
            pl->renamed[tmap[B->rename_terms[i]]] = tmap[B->rename_terms[i + 1]];
    }
    return GM_OK;
}

/* Fills g->postlex's indentation fields over the cfg's terminal ids (tmap). */
static gm_status make_indent(bnf *B, const uint32_t *tmap, gm_cfg *g)
{
    gm_postlex *pl = &g->postlex;
    pl->bracket = gm_mem_calloc(g->mem, g->nterminals ? g->nterminals : 1, sizeof *pl->bracket);
    if (!pl->bracket)
        return GM_ERR_NOMEM;
    pl->indentation = true;
    pl->nterminals = g->nterminals;
    pl->newline = tmap[B->indent_terms[0]];
    g->terminals[pl->newline].line_end = true;
    pl->indent = tmap[B->indent_terms[1]];
    pl->dedent = tmap[B->indent_terms[2]];
    pl->tab_width = 8;
    pl->line_start = !B->indent_auto; /* Python's rule for %indent; Lark's for its defaults */
    for (uint32_t i = 3; i < B->indent->n; i++)
        if (B->indent_terms[i] != UINT32_MAX)
            pl->bracket[tmap[B->indent_terms[i]]] = (i - 3) % 2 ? -1 : 1;
    return GM_OK;
}

static char *cfg_strdup(gm_mem *m, const char *s)
{
    return s ? gm_mem_strndup(m, s, strlen(s)) : NULL;
}

static gm_srcloc cfg_loc(const gm_lload *L, const gm_cfg *g, gm_srcloc l)
{
    for (uint32_t i = 0; i < L->nsources; i++)
        if (L->sources[i].name == l.file) {
            l.file = g->files[i];
            return l;
        }
    l.file = NULL;
    return l;
}

static gm_status make_cfg(bnf *B, uint32_t start, const uint8_t *reach, gm_cfg **out)
{
    gm_lload *L = B->L;
    gm_mem *m = L->mem;
    gm_cfg *g = gm_mem_calloc(m, 1, sizeof *g);
    if (!g)
        return nomem(B);
    g->mem = m;
    uint32_t *tmap = gm_arena_array(B->a, B->nt ? B->nt : 1, sizeof *tmap);
    uint32_t *nmap = gm_arena_array(B->a, B->nn ? B->nn : 1, sizeof *nmap);
    uint8_t *tused = gm_arena_alloc(B->a, B->nt ? B->nt : 1);
    if (!tmap || !nmap || !tused)
        goto fail;
    size_t nprods = 0, nrhs = 0;
    for (size_t k = 0; k < B->np; k++) {
        const prod *p = &B->p[k];
        if (!reach[p->lhs])
            continue;
        nprods++;
        nrhs += p->len;
        for (uint32_t i = 0; i < p->len; i++)
            if (!IS_NT(B->syms[p->rhs + i]))
                tused[IDX(B->syms[p->rhs + i])] = 1;
    }
    if (B->insert) {
        tused[B->ins_term] = 1;
        for (uint32_t i = 0; i < B->insert->at->n; i++)
            tused[B->at_terms[i]] = 1;
        for (uint32_t i = 0; i < B->insert->after->n; i++)
            tused[B->after_terms[i]] = 1;
        for (uint32_t i = 0; B->insert->offending && i < B->insert->offending->n; i++)
            tused[B->off_terms[i]] = 1;
        for (uint32_t i = 0; B->insert->rename && i < B->insert->rename->n; i++)
            tused[B->rename_terms[i]] = 1;
    }
    uint32_t nt = 0, nn = 0;
    for (size_t i = 0; i < B->nt; i++)
        tmap[i] = tused[i] || B->t[i].ignored ? nt++ : UINT32_MAX;
    /* rules and instances first, then helpers (Lark's order) */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < B->nn; i++)
            if (reach[i] && ((B->n[i].flags & GM_CFG_RULE_GENERATED) != 0) == pass)
                nmap[i] = nt + nn++;
    g->nterminals = nt;
    g->nnonterminals = nn;
    g->names = gm_mem_calloc(m, (size_t)nt + nn, sizeof *g->names);
    g->terminals = gm_mem_calloc(m, nt ? nt : 1, sizeof *g->terminals);
    g->prods = gm_mem_calloc(m, nprods ? nprods : 1, sizeof *g->prods);
    g->rhs = gm_mem_calloc(m, nrhs ? nrhs : 1, sizeof *g->rhs);
    g->rule_flags = gm_mem_calloc(m, nn ? nn : 1, sizeof *g->rule_flags);
    g->files = gm_mem_calloc(m, L->nsources, sizeof *g->files);
    if (!g->names || !g->terminals || !g->prods || !g->rhs || !g->rule_flags || !g->files)
        goto fail;
    g->nfiles = L->nsources;
    g->nprods = (uint32_t)nprods; /* so that gm_cfg_destroy frees what a failure leaves */
    for (uint32_t i = 0; i < L->nsources; i++)
        if (L->sources[i].name && !(g->files[i] = cfg_strdup(m, L->sources[i].name)))
            goto fail;
    g->file = cfg_strdup(m, L->sources[0].name);
    if (L->sources[0].name && !g->file)
        goto fail;
    for (size_t i = 0; i < B->nt; i++) {
        if (tmap[i] == UINT32_MAX)
            continue;
        const tinfo *t = &B->t[i];
        gm_terminal_spec *s = &g->terminals[tmap[i]];
        if (!(g->names[tmap[i]] = cfg_strdup(m, t->name)))
            goto fail;
        s->name = g->names[tmap[i]];
        if (t->pat.bytes) {
            char *pat = gm_mem_alloc(m, t->pat.len + 1);
            if (!pat)
                goto fail;
            memcpy(pat, t->pat.bytes, t->pat.len);
            pat[t->pat.len] = '\0';
            s->pattern = pat;
            s->pattern_len = t->pat.len;
            s->flags = t->pat.flags;
            s->is_literal = t->pat.is_literal;
        }
        s->priority = t->priority;
        s->ignored = t->ignored;
        s->loc = cfg_loc(L, g, t->loc);
    }
    for (size_t i = 0; i < B->nn; i++) {
        if (!reach[i])
            continue;
        if (!(g->names[nmap[i]] = cfg_strdup(m, B->n[i].name)))
            goto fail;
        g->rule_flags[nmap[i] - nt] = B->n[i].flags;
    }
    /* productions grouped by nonterminal, in the cfg's nonterminal order */
    uint32_t *order = gm_arena_array(B->a, nn ? nn : 1, sizeof *order);
    if (!order)
        goto fail;
    for (size_t i = 0; i < B->nn; i++)
        if (reach[i])
            order[nmap[i] - nt] = (uint32_t)i;
    uint32_t w = 0, r = 0;
    for (uint32_t k = 0; k < nn; k++) {
        const ninfo *n = &B->n[order[k]];
        for (size_t j = 0; j < n->nprods; j++) {
            const prod *p = &B->p[n->prods[j]];
            gm_production *q = &g->prods[w++];
            q->lhs = nt + k;
            q->rhs = r;
            q->len = p->len;
            q->priority = p->priority;
            q->loc = cfg_loc(L, g, p->loc);
            if (p->alias && !(q->alias = cfg_strdup(m, p->alias)))
                goto fail;
            for (uint32_t i = 0; i < p->len; i++) {
                uint32_t s = B->syms[p->rhs + i];
                g->rhs[r++] = IS_NT(s) ? nmap[IDX(s)] : tmap[IDX(s)];
            }
        }
    }
    g->nprods = w;
    g->nrhs = r;
    g->start = nmap[start];
    if (B->insert && make_postlex(B, tmap, g) != GM_OK)
        goto fail;
    if (B->indent && make_indent(B, tmap, g) != GM_OK)
        goto fail;
    *out = g;
    return GM_OK;
fail:
    gm_cfg_destroy(g);
    return nomem(B);
}

gm_status gm_lbnf_build(gm_lload *L, gm_lbuilder *b, const char *start_name, gm_cfg **out)
{
    bnf B;
    memset(&B, 0, sizeof B);
    B.L = L;
    B.b = b;
    B.a = &L->arena;
    B.terms.L = L;
    B.terms.b = b;
    gm_intern_init(&B.patterns, L->mem);
    gm_intern_init(&B.keys, L->mem);
    gm_status st = GM_OK;
    size_t cap = b->cap ? b->cap : 1;
    B.terms.pat = gm_arena_array(B.a, cap, sizeof *B.terms.pat);
    B.terms.state = gm_arena_alloc(B.a, cap);
    B.sym_of_def = gm_arena_array(B.a, cap, sizeof *B.sym_of_def);
    if (!B.terms.pat || !B.terms.state || !B.sym_of_def) {
        st = nomem(&B);
        goto done;
    }
    for (size_t i = 0; i < cap; i++)
        B.sym_of_def[i] = UINT32_MAX;

    /* named terminals and rules, in definition order */
    for (size_t k = 0; k < b->norder && st == GM_OK; k++) {
        uint32_t id = b->order[k];
        const gm_ldef *d = b->defs[id];
        uint32_t idx;
        if (d->is_term) {
            tinfo ti;
            memset(&ti, 0, sizeof ti);
            ti.name = d->name;
            ti.priority = d->priority;
            ti.loc = d->loc;
            ti.def = d;
            ti.origin = b->origin[id];
            ti.import_loc = b->import_loc[id];
            if (d->body) {
                st = gm_lterms_pattern(&B.terms, d, &ti.pat);
                if (st != GM_OK)
                    break;
            }
            if (add_terminal(&B, &ti, &idx)) {
                st = nomem(&B);
                break;
            }
            B.sym_of_def[id] = T(idx);
            if (d->body)
                st = map_pattern(&B, &ti.pat, idx);
        } else if (!d->nparams) {
            ninfo ni;
            memset(&ni, 0, sizeof ni);
            ni.name = d->name;
            ni.def = d;
            ni.flags = (d->name[0] == '_' ? GM_CFG_RULE_INLINE : 0) |
                       (d->mods & GM_LMOD_EXPAND1 ? GM_CFG_RULE_EXPAND1 : 0) |
                       (d->mods & GM_LMOD_KEEP ? GM_CFG_RULE_KEEP : 0);
            ni.priority = d->priority;
            ni.loc = d->loc;
            ni.origin = b->origin[id];
            ni.import_loc = b->import_loc[id];
            if (add_nonterminal(&B, &ni, &idx) ||
                GROW(&B, B.work, B.nwork, B.wcap, B.nwork + 1)) {
                st = nomem(&B);
                break;
            }
            B.work[B.nwork++] = idx;
            B.sym_of_def[id] = NT(idx);
        }
    }
    for (size_t i = 0; st == GM_OK && i < b->nignores; i++) {
        uint32_t id = gm_intern_find(&b->names, b->ignores[i]->name, strlen(b->ignores[i]->name));
        B.t[IDX(B.sym_of_def[id])].ignored = true;
    }
    for (size_t k = 0; st == GM_OK && k < b->norder; k++) {
        const gm_ldef *d = b->defs[b->order[k]];
        if (d->is_term && d->body)
            mark_term_refs(&B, d->body);
    }
    /* rules in order; template instances join the work list as they appear */
    for (size_t w = 0; st == GM_OK && w < B.nwork; w++)
        st = expand_rule(&B, B.work[w]);
    B.insert = b->insert;
    if (st == GM_OK && B.insert)
        st = resolve_insert(&B);
    if (st == GM_OK)
        st = find_indent(&B);
    if (st == GM_OK && B.insert && B.indent) {
        const gm_ldef *ind = gm_lbuilder_find(b, "_INDENT");
        st = gm_lload_error(L, GM_ERR_UNSUPPORTED, b->indent ? b->indent->loc : ind->loc,
                            "%%indent%s cannot be combined with %%insert: a grammar has one "
                            "post-lexing layer", indent_why(&B));
    }
    if (st == GM_OK && B.indent)
        st = resolve_indent(&B);
    if (st != GM_OK)
        goto done;

    const gm_ldef *sd = gm_lbuilder_find(b, start_name);
    if (!sd || sd->is_term || sd->nparams) {
        gm_srcloc at = {L->sources[0].name, 0, 0};
        st = gm_lload_error(L, GM_ERR_GRAMMAR, at,
                            sd ? "the start symbol '%s' must be a rule without parameters"
                               : "no start rule: '%s' is not defined", start_name);
        goto done;
    }
    uint32_t start = IDX(B.sym_of_def[gm_intern_find(&b->names, start_name, strlen(start_name))]);
    uint8_t *reach = gm_arena_alloc(B.a, B.nn);
    if (!reach) {
        st = nomem(&B);
        goto done;
    }
    st = checks(&B, start, reach);
    if (st == GM_OK && B.insert)
        st = check_insert(&B, reach);
    if (st == GM_OK && B.indent)
        st = check_indent(&B, reach);
    if (st == GM_OK)
        st = make_cfg(&B, start, reach, out);
done:
    gm_intern_free(&B.patterns);
    gm_intern_free(&B.keys);
    return st;
}
