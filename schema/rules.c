/*
 * The whitespace layouts and the shared rules of the schema compiler
 * (emit.h): the leaves every emitter builds on. Below compile.c and the
 * emitters, it calls none of them.
 */
#include <stdio.h>
#include <string.h>

#include "schema/emit.h"
#include "schema/numrange.h"

/* ---- layout ---- */

static bool indented(const sctx *c)
{
    return c->opts.whitespace == GM_SCHEMA_WS_INDENT;
}

/* A shared rule, built by mk on first use and kept in *slot. */
static uint32_t shared(sctx *c, uint32_t *slot, const char *name, uint32_t (*mk)(sctx *))
{
    if (c->b.st != GM_OK)
        return GM_EX_NONE;
    if (*slot == GM_EX_NONE) {
        /* fresh: a rule named after a schema location may hold the name already */
        uint32_t r = gm_ebnf_fresh_rule(c->g, name);
        if (r == GM_EX_NONE)
            return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory building a grammar");
        *slot = gm_irb_ref(&c->b, r);
        uint32_t body = mk(c); /* may grow c->g->rules: index after the call */
        if (body == GM_EX_NONE)
            return GM_EX_NONE;
        c->g->rules[r].body = body;
    }
    return *slot;
}

static uint32_t mk_ws(sctx *c)
{
    uint32_t bits[8] = {0};
    bits[' ' >> 5] |= 1u << (' ' & 31);
    bits['\t' >> 5] |= 1u << ('\t' & 31);
    bits['\n' >> 5] |= 1u << ('\n' & 31);
    bits['\r' >> 5] |= 1u << ('\r' & 31);
    return gm_irb_repeat(&c->b, gm_irb_byteset(&c->b, bits), 0, c->opts.max_ws_run);
}

uint32_t sc_ws(sctx *c)
{
    if (c->opts.whitespace != GM_SCHEMA_WS_FLEXIBLE)
        return gm_irb_empty(&c->b);
    /* Never inlined: a run of up to max_ws_run characters is that many
       automaton states at each of the many places JSON allows whitespace,
       most of a small schema's states and of its build time (MaskBench,
       every 10th schema: TTFM p50 3.2 -> 1.4 ms, p99 123 -> 55 ms, masks
       no slower: what follows the whitespace is left to the runtime check,
       which the uncertain tokens of a whitespace state need anyway). */
    uint32_t ref = shared(c, &c->sh.ws, "ws", mk_ws);
    if (ref != GM_EX_NONE)
        c->g->rules[c->g->nodes[ref].arg].noinline = 1;
    return ref;
}

/* A newline and the indentation of level depth. */
static uint32_t newline(sctx *c, uint32_t depth)
{
    char buf[1 + 8 * 64 + 1];
    size_t n = (size_t)depth * c->opts.indent;
    if (n > 8 * 64)
        return gm_irb_fail(&c->b, GM_ERR_LIMIT, "indentation past %u columns", 8 * 64);
    buf[0] = '\n';
    memset(buf + 1, ' ', n);
    return gm_irb_bytes(&c->b, buf, n + 1);
}

uint32_t sc_open(sctx *c, char bracket, uint32_t depth)
{
    uint32_t b = gm_irb_bytes(&c->b, &bracket, 1);
    if (indented(c))
        return gm_irb_seq2(&c->b, b, newline(c, depth + 1));
    return gm_irb_seq2(&c->b, b, sc_ws(c));
}

uint32_t sc_close(sctx *c, char bracket, uint32_t depth)
{
    char close = bracket == '{' ? '}' : ']';
    uint32_t b = gm_irb_bytes(&c->b, &close, 1);
    if (indented(c))
        return gm_irb_seq2(&c->b, newline(c, depth), b);
    return gm_irb_seq2(&c->b, sc_ws(c), b);
}

uint32_t sc_empty_pair(sctx *c, char bracket)
{
    char close = bracket == '{' ? '}' : ']';
    return gm_irb_seq3(&c->b, gm_irb_bytes(&c->b, &bracket, 1), sc_ws(c), gm_irb_bytes(&c->b, &close, 1));
}

uint32_t sc_item_sep(sctx *c, uint32_t depth)
{
    const char *sep = c->opts.item_separator ? c->opts.item_separator : ",";
    if (indented(c))
        return gm_irb_seq2(&c->b, gm_irb_lit(&c->b, sep), newline(c, depth + 1));
    if (c->opts.whitespace == GM_SCHEMA_WS_COMPACT)
        return gm_irb_lit(&c->b, sep);
    return gm_irb_seq3(&c->b, sc_ws(c), gm_irb_lit(&c->b, ","), sc_ws(c));
}

uint32_t sc_key_sep(sctx *c)
{
    if (c->opts.whitespace != GM_SCHEMA_WS_FLEXIBLE && c->opts.key_separator)
        return gm_irb_lit(&c->b, c->opts.key_separator);
    if (indented(c))
        return gm_irb_lit(&c->b, ": ");
    return gm_irb_seq3(&c->b, sc_ws(c), gm_irb_lit(&c->b, ":"), sc_ws(c));
}

/* ---- shared rules ---- */

static uint32_t mk_char(sctx *c)
{
    return gm_irb_json_char(&c->b);
}

uint32_t sc_char(sctx *c)
{
    return shared(c, &c->sh.chr, "char", mk_char);
}

uint32_t sc_quoted(sctx *c, uint32_t body)
{
    uint32_t q = gm_irb_lit(&c->b, "\"");
    return gm_irb_seq3(&c->b, q, body, q);
}

uint32_t sc_string_chars(sctx *c)
{
    if (c->raw_exclude)
        return sc_excluding_chars(c);
    return gm_irb_repeat(&c->b, sc_char(c), 0, GM_EX_INF);
}

static uint32_t mk_string(sctx *c)
{
    return sc_quoted(c, sc_string_chars(c));
}

uint32_t sc_string(sctx *c)
{
    return shared(c, &c->sh.string, "string", mk_string);
}

static uint32_t mk_number(sctx *c)
{
    sc_numspec sp = {0};
    sp.max_frac = -1;
    return sc_numrange(&c->b, &sp);
}

uint32_t sc_number(sctx *c)
{
    return shared(c, &c->sh.number, "number", mk_number);
}

static uint32_t mk_integer(sctx *c)
{
    sc_numspec sp = {0};
    sp.integer = true;
    sp.int_frac = true;
    sp.max_frac = -1;
    return sc_numrange(&c->b, &sp);
}

uint32_t sc_integer(sctx *c)
{
    return shared(c, &c->sh.integer, "integer", mk_integer);
}

/* Any value: rule "value" (or "value_N" per indentation depth). */
static uint32_t any_value_body(sctx *c, uint32_t depth)
{
    gm_irb *b = &c->b;
    uint32_t inner = depth < SC_MAX_INDENT_DEPTH ? sc_any_value(c, indented(c) ? depth + 1 : 0)
                                                 : gm_irb_nothing(b);
    uint32_t member = gm_irb_seq3(b, sc_string(c), sc_key_sep(c), inner);
    uint32_t sep = sc_item_sep(c, depth);
    uint32_t members = gm_irb_seq2(b, member, gm_irb_repeat(b, gm_irb_seq2(b, sep, member), 0, GM_EX_INF));
    uint32_t items = gm_irb_seq2(b, inner, gm_irb_repeat(b, gm_irb_seq2(b, sep, inner), 0, GM_EX_INF));
    uint32_t obj = gm_irb_alt2(b, sc_empty_pair(c, '{'),
                               gm_irb_seq3(b, sc_open(c, '{', depth), members, sc_close(c, '{', depth)));
    uint32_t arr = gm_irb_alt2(b, sc_empty_pair(c, '['),
                               gm_irb_seq3(b, sc_open(c, '[', depth), items, sc_close(c, '[', depth)));
    uint32_t alts[] = {obj, arr, sc_string(c), sc_number(c), gm_irb_lit(b, "true"),
                       gm_irb_lit(b, "false"), gm_irb_lit(b, "null")};
    return gm_irb_alt(b, alts, sizeof alts / sizeof *alts);
}

uint32_t sc_any_value(sctx *c, uint32_t depth)
{
    if (c->b.st != GM_OK)
        return GM_EX_NONE;
    if (!indented(c))
        depth = 0;
    if (depth > SC_MAX_INDENT_DEPTH)
        return gm_irb_nothing(&c->b);
    uint32_t *slot = &c->sh.value[depth];
    if (*slot == GM_EX_NONE) {
        char name[32];
        if (depth)
            snprintf(name, sizeof name, "value_%u", depth);
        else
            snprintf(name, sizeof name, "value");
        uint32_t r = gm_ebnf_fresh_rule(c->g, name);
        if (r == GM_EX_NONE)
            return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory building a grammar");
        *slot = gm_irb_ref(&c->b, r);
        uint32_t body = any_value_body(c, depth); /* may grow c->g->rules */
        c->g->rules[r].body = body;
    }
    return *slot;
}
