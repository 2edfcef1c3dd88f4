/*
 * gm_egrammar_build: the grammar IR (ebnf.h) to rule automata (fsm.h).
 *
 * Each rule body becomes an NFA over symbols (bytes 0..255, then one
 * symbol per rule reference, then one per special token), code point sets
 * expanded to UTF-8 byte sequences (lexer/utf8_ranges.h), built from the
 * end with shared fragments (note [fragments]); subset construction over
 * the intervals of that symbol space (fsm_det.c, note [subset
 * construction]); minimization (fsm_minimize.c, note [minimization]).
 * References count as ordinary symbols, so a rule's automaton is minimal
 * for its body read as a regular expression over bytes and references.
 * Rules with equal keys are built once (note [equal rules]).
 *
 * note [rule inlining]
 * A rule that takes part in no recursion and is small is inlined into its
 * users: its body is built in place of each reference. The Earley sets get
 * fewer items, and the token-mask cache, which classifies tokens by one
 * item alone (note [token-mask cache]), sees the inlined rule together
 * with what follows it in its user: a JSON string inlined into an object
 * decides `":` by itself instead of leaving it to the runtime check. The
 * root is never inlined, nor a rule its generator marked noinline: one
 * referenced from very many rules (a JSON Schema object's members in any
 * order, note [any order] in schema/emit_struct.c), where inlined copies
 * would multiply automaton states and give each copy its own token-mask
 * cache entries.
 *
 * note [tail calls]
 * A reference to a recursive rule as the last thing its user reads (its
 * end is the end of the user's rule) is built as the callee's body in
 * place, the callee's own tail references likewise, each callee once per
 * automaton: a right-linear recursion (a string automaton the schema
 * compiler emits as rules, GBNF's `s ::= "a" s | ""`) becomes loops of one
 * automaton. Kept as references, every step through such a recursion adds
 * an item waiting on the callee, so the Earley sets never repeat: no set
 * loops back to itself (note [closed subtrees] in maskcache.c) and no mask
 * memo is ever reused. Rules marked noinline stay references; a rule
 * whose expanded automaton would pass the limits is built again without.
 * A callee's body is a fragment continuing at the rule's accepting state,
 * entered from one state made for the callee first (a recursion reaches
 * it before its body is built), its edge added when the body is.
 *
 * Bounded repetitions with small counts are expanded; larger ones become
 * repetition rules (note [repetition rules] in fsm.h).
 */
#include <stdlib.h>
#include <string.h>

#include "earley/fsm.h"
#include "earley/lookahead.h"
#include "earley/fsm_cache.h"
#include "earley/fsm_det.h"
#include "earley/fsm_minimize.h"
#include "ir/until.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/imap.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "lexer/utf8_ranges.h"

enum {
    INLINE_MAX_NODES = 128,   /* note [rule inlining] */
    EXPAND_MAX_COPIES = 32,   /* x{m,n} expanded when at most this many copies of x... */
    EXPAND_MAX_NODES = 1024,  /* ...and that many IR nodes in all */
    MAX_DEPTH = 4000,         /* nesting of IR nodes (recursion of the builder) */
};

#define SYM_REF 256u           /* symbols SYM_REF + rule */
#define SYM_TOK 0x80000000u    /* symbols SYM_TOK + special-token symbol */

typedef gm_fsm_edge dedge;

/* One rule's DFA, local state numbers, start 0; flags GM_FS_ACCEPT (ITER_END,
   REP_START for repetition rules). */
typedef gm_fsm_dfa rdfa;

typedef struct orule {
    uint32_t src;         /* IR rule, or GM_EX_NONE for a repetition rule */
    uint32_t body;        /* IR node */
    uint32_t rep_min, rep_max;
    uint8_t repeat;
    uint8_t x_nullable;   /* repetition rule whose x accepts "" by bytes alone */
    uint32_t host;        /* repetition rule: the rule it was found in (for its name) */
    rdfa dfa;
} orule;

typedef GM_VEC(uint32_t) u32vec;

/* A rule built without a cache, by key (note [equal rules]). */
typedef struct built_rule {
    uint32_t rule;            /* the output rule built under the key */
    uint32_t at;              /* its key's symbol lists: built_syms[at ..), refs then toks */
    uint32_t nrefs, ntoks;
} built_rule;

typedef struct builder {
    gm_mem *m;
    gm_fcache *cache;     /* may be NULL (note [rule automata cache] in fsm_cache.h) */
    u32vec key;           /* the key of the rule being built */
    u32vec lrefs;         /* its references (output rules), by first occurrence */
    u32vec ltoks;         /* its special-token symbols, by first occurrence */
    uint32_t *bs_at;      /* [src bytesets] its ranges in bs_ranges, or UINT32_MAX */
    u32vec bs_ranges;     /* per byte set: count, then lo, hi of each maximal range */
    uint32_t *bt_off;     /* assemble: byte transitions as (class, target) pairs for */
    u32vec bt;            /* gm_fsm_finish_sparse */
    const gm_ebnf *src;
    gm_limits lim;
    gm_error *err;
    gm_status st;
    uint32_t *out_rule;   /* [src rules] output rule, GM_EX_NONE */
    uint8_t *inl;         /* [src rules] inlined (note [rule inlining]) */
    uint32_t *rep_rule;   /* [src nodes] repetition rule made for a REPEAT node */
    uint32_t *size;       /* [src nodes] IR nodes of its expansion, when size_gen is gen */
    uint32_t *size_gen;
    uint32_t gen;
    GM_VEC(orule) rules;
    gm_intern toks;       /* special-token texts -> symbols */
    uint32_t cur;         /* output rule being built */
    uint8_t *recursive;   /* [src rules] takes part in a cycle of references */
    /* Tail calls (note [tail calls]) of the rule being built. */
    bool no_tail;         /* building it again without them */
    bool used_tail;       /* it has a callee in place */
    bool ktail;           /* key_add: the node ends the rule */
    uint32_t final;       /* its NFA's accepting state: a fragment ending there ends the rule */
    uint32_t *entry;      /* [src rules] the state a callee's body is entered from */
    u32vec tails;         /* callees built in place, in order (a work list) */
    /* The NFA of the rule being built. */
    GM_VEC(gm_nfa_edge) raw;
    uint32_t nnfa;
    gm_imap memo;         /* (node, out) and (range, target) -> state (note [fragments]) */
    gm_fsm_min min;       /* minimize's working memory */
    gm_fsm_det det;       /* determinize's */
    /* Keys of the rules built so far, without a cache (note [equal rules]). */
    gm_intern built;
    GM_VEC(built_rule) built_rules;
    u32vec built_syms;
} builder;

static gm_status fail_mem(builder *b, const char *what)
{
    if (b->st == GM_OK)
        b->st = gm_mem_fail(b->m, b->err, what);
    return b->st;
}

static void rdfa_free(gm_mem *m, rdfa *d)
{
    gm_fsm_dfa_free(m, d);
}

static const char *rule_name(builder *b, uint32_t r)
{
    const orule *o = &b->rules.v[r];
    if (o->src != GM_EX_NONE)
        return b->src->rules[o->src].name;
    return b->rules.v[o->host].src != GM_EX_NONE ? b->src->rules[b->rules.v[o->host].src].name
                                                  : "(repetition)";
}

/* The capture label of r's source rule, or NULL (note [captures] in earley/capture.c). */
static const char *rule_capture(builder *b, uint32_t r)
{
    const orule *o = &b->rules.v[r];
    return o->src != GM_EX_NONE ? b->src->rules[o->src].capture : NULL;
}

/* ---- which rules are inlined --------------------------------------------- */

/* The rules referenced by the body of r (DAG walk with a visit stamp). */
static int collect_refs(builder *b, uint32_t node, uint32_t *stamp, uint32_t mark,
                        uint32_t **out, size_t *n, size_t *cap, uint32_t depth)
{
    const gm_ebnf *g = b->src;
    if (node == GM_EX_NONE || node >= g->nnodes || stamp[node] == mark)
        return 0;
    if (depth > MAX_DEPTH)
        return -2;
    stamp[node] = mark;
    const gm_ex *e = &g->nodes[node];
    if (e->kind == GM_EX_REF) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 8;
            uint32_t *p = gm_mem_reallocarray(b->m, *out, nc, sizeof *p);
            if (!p)
                return -1;
            *out = p;
            *cap = nc;
        }
        (*out)[(*n)++] = e->arg;
    } else if (e->kind == GM_EX_SEQ || e->kind == GM_EX_ALT || e->kind == GM_EX_REPEAT) {
        uint32_t k = e->kind == GM_EX_REPEAT ? 1 : e->count;
        for (uint32_t i = 0; i < k; i++) {
            int r = collect_refs(b, g->kids[e->first + i], stamp, mark, out, n, cap, depth + 1);
            if (r)
                return r;
        }
    }
    return 0;
}

/* IR nodes of node's expansion with inlined references replaced (capped). */
static uint32_t node_size(builder *b, uint32_t node, uint32_t depth)
{
    const gm_ebnf *g = b->src;
    if (b->size_gen[node] == b->gen)
        return b->size[node];
    if (depth > MAX_DEPTH)
        return UINT32_MAX / 4;
    const gm_ex *e = &g->nodes[node];
    uint64_t s = 1;
    switch (e->kind) {
    case GM_EX_BYTES:
        s = e->count ? e->count : 1;
        break;
    case GM_EX_UNTIL:
        for (uint32_t i = 0; i < e->count; i++)
            s += g->nodes[g->kids[e->first + i]].count;
        if (e->max != GM_EX_INF)
            s *= (uint64_t)e->max + 2; /* a count beside each state */
        break;
    case GM_EX_REF:
        if (b->inl[e->arg])
            s += node_size(b, g->rules[e->arg].body, depth + 1);
        break;
    case GM_EX_SEQ:
    case GM_EX_ALT:
        for (uint32_t i = 0; i < e->count; i++)
            s += node_size(b, g->kids[e->first + i], depth + 1);
        break;
    case GM_EX_REPEAT: {
        uint64_t x = node_size(b, g->kids[e->first], depth + 1);
        uint64_t copies = e->max == GM_EX_INF ? (uint64_t)e->min + 1 : e->max;
        s += copies <= EXPAND_MAX_COPIES && copies * x <= EXPAND_MAX_NODES ? copies * x : x;
        break;
    }
    default:
        break;
    }
    if (s > UINT32_MAX / 4)
        s = UINT32_MAX / 4;
    b->size[node] = (uint32_t)s;
    b->size_gen[node] = b->gen;
    return (uint32_t)s;
}

/*
 * Marks the rules to inline: reachable from the root, not the root, in no
 * cycle of references, small (sizes computed bottom-up: a rule's size
 * counts the rules inlined into it).
 */
static gm_status choose_inlining(builder *b)
{
    const gm_ebnf *g = b->src;
    uint32_t n = g->nrules;
    gm_status st = GM_OK;
    uint32_t *stamp = gm_mem_calloc(b->m, g->nnodes ? g->nnodes : 1, sizeof *stamp);
    uint32_t **refs = gm_mem_calloc(b->m, n ? n : 1, sizeof *refs);
    size_t *nrefs = gm_mem_calloc(b->m, n ? n : 1, sizeof *nrefs);
    uint8_t *recursive = b->recursive;
    uint32_t *seen = gm_mem_calloc(b->m, n ? n : 1, sizeof *seen);
    uint32_t *stack = gm_mem_alloc(b->m, (size_t)(n ? n : 1) * sizeof *stack);
    uint32_t *order = gm_mem_alloc(b->m, (size_t)(n ? n : 1) * sizeof *order);
    if (!stamp || !refs || !nrefs || !recursive || !seen || !stack || !order) {
        st = fail_mem(b, "the rule graph");
        goto done;
    }
    for (uint32_t r = 0; r < n; r++) {
        size_t cap = 0;
        int rc = collect_refs(b, g->rules[r].body, stamp, r + 1, &refs[r], &nrefs[r], &cap, 0);
        if (rc == -1) {
            st = fail_mem(b, "the rule graph");
            goto done;
        }
        if (rc == -2) {
            st = b->st = gm_error_set(b->err, GM_ERR_LIMIT,
                                      "rule %s: expressions nested deeper than %d",
                                      g->rules[r].name, MAX_DEPTH);
            goto done;
        }
    }
    /* r is recursive iff r reaches itself: one search per rule (grammars have
       at most a few thousand rules). */
    for (uint32_t r = 0; r < n; r++) {
        size_t sp = 0;
        for (size_t i = 0; i < nrefs[r]; i++)
            if (seen[refs[r][i]] != r + 1) {
                seen[refs[r][i]] = r + 1;
                stack[sp++] = refs[r][i];
            }
        while (sp && !recursive[r]) {
            uint32_t x = stack[--sp];
            if (x == r) {
                recursive[r] = 1;
                break;
            }
            for (size_t i = 0; i < nrefs[x]; i++)
                if (seen[refs[x][i]] != r + 1) {
                    seen[refs[x][i]] = r + 1;
                    stack[sp++] = refs[x][i];
                }
        }
    }
    /* Non-recursive rules in dependency order (a DFS post-order), so that
       sizes see the decisions of the rules they reference. */
    memset(seen, 0, (size_t)n * sizeof *seen);
    size_t norder = 0;
    for (uint32_t r0 = 0; r0 < n; r0++) {
        if (seen[r0])
            continue;
        /* Iterative post-order: stack holds rules, seen = 1 entered, 2 done. */
        size_t sp = 0;
        stack[sp++] = r0;
        seen[r0] = 1;
        while (sp) {
            uint32_t x = stack[sp - 1];
            bool pushed = false;
            for (size_t i = 0; i < nrefs[x]; i++) {
                uint32_t y = refs[x][i];
                if (!seen[y]) {
                    seen[y] = 1;
                    stack[sp++] = y;
                    pushed = true;
                    break;
                }
            }
            if (!pushed) {
                seen[x] = 2;
                order[norder++] = x;
                sp--;
            }
        }
    }
    for (size_t i = 0; i < norder; i++) {
        uint32_t r = order[i];
        if (r == g->root || recursive[r] || g->rules[r].body == GM_EX_NONE ||
            g->rules[r].lookahead != GM_EX_NONE || g->rules[r].noinline ||
            /* a region keeps its items */
            g->rules[r].max_tokens != GM_EX_INF || g->rules[r].has_temperature)
            continue;
        if (node_size(b, g->rules[r].body, 0) <= INLINE_MAX_NODES) {
            b->inl[r] = 1;
            /* Sizes cached for nodes referring to r were computed with r not
               inlined: start over (a new generation of the memo). */
            b->gen++;
        }
    }
done:
    if (refs)
        for (uint32_t r = 0; r < n; r++)
            gm_mem_free(b->m, refs[r]);
    gm_mem_free(b->m, refs);
    gm_mem_free(b->m, nrefs);
    gm_mem_free(b->m, stamp);
    gm_mem_free(b->m, seen);
    gm_mem_free(b->m, stack);
    gm_mem_free(b->m, order);
    return st;
}

/* ---- the NFA of one rule ----------------------------------------------- */

static uint32_t nfa_state(builder *b)
{
    if (b->nnfa >= b->lim.max_nfa_states) {
        if (b->st == GM_OK)
            b->st = gm_error_set(b->err, GM_ERR_LIMIT,
                                 "rule %s: more than %u NFA states (max_nfa_states)",
                                 rule_name(b, b->cur), b->lim.max_nfa_states);
        return GM_FSM_NONE;
    }
    return b->nnfa++;
}

static int nfa_edge(builder *b, uint32_t from, uint32_t lo, uint32_t hi, uint32_t to)
{
    gm_nfa_edge r = {from, lo, hi, to};
    if (gm_vec_push(b->m, &b->raw, r)) {
        fail_mem(b, "a rule automaton");
        return -1;
    }
    return 0;
}

static int nfa_eps(builder *b, uint32_t from, uint32_t to)
{
    return nfa_edge(b, from, 1, 0, to);
}

/*
 * note [fragments]
 * The NFA of a rule is built backwards, in continuation-passing style:
 * frag(node, out) makes the states that read node's language and then go
 * on at `out`, and returns the state they start at. Nothing ever adds an
 * edge out of a state that frag returned (but the entry of a callee built
 * in place, whose language is fixed anyway: note [tail calls]), so a
 * fragment depends on
 * (node, out) alone and is built once per pair: the IR is a DAG, and a
 * node reached twice with the same continuation (the tail `char* "\""` of
 * every branch of a trie of property names, the escape sequence of each
 * string character, the UTF-8 continuation bytes of every code point set:
 * suffixes, keyed by (range, target)) shares its states. The subset
 * construction then meets one copy instead of one per branch, which
 * minimization would only merge again: a trie of 100 names made 40 times
 * its minimal size before. The language of each state is what the forward
 * construction gave it, so the minimal automaton is the same.
 */
static uint32_t frag(builder *b, uint32_t node, uint32_t out, uint32_t depth);
static uint32_t rule_symbol(builder *b, uint32_t src_rule);
static uint32_t repeat_symbol(builder *b, uint32_t node);

/* A state with edges lo..hi to `to` from a fresh state (built once per (lo, hi, to)). */
static uint32_t range_state(builder *b, uint32_t lo, uint32_t hi, uint32_t to)
{
    uint64_t key = (uint64_t)1 << 63 | (uint64_t)lo << 48 | (uint64_t)hi << 40 | to;
    uint32_t s = gm_imap_get(&b->memo, key);
    if (s != GM_IMAP_NONE)
        return s;
    s = nfa_state(b);
    if (s == GM_FSM_NONE || nfa_edge(b, s, lo, hi, to))
        return GM_FSM_NONE;
    if (gm_imap_put(&b->memo, key, s)) {
        fail_mem(b, "a rule automaton");
        return GM_FSM_NONE;
    }
    return s;
}

typedef struct seq_ctx {
    builder *b;
    uint32_t in, out;
} seq_ctx;

/* A UTF-8 sequence from c->in to c->out: its continuation bytes shared (note [fragments]). */
static int add_utf8_seq(void *ud, const gm_utf8_seq *s)
{
    seq_ctx *c = ud;
    uint32_t at = c->out;
    for (uint8_t i = s->len; i-- > 1;)
        if ((at = range_state(c->b, s->lo[i], s->hi[i], at)) == GM_FSM_NONE)
            return -1;
    return nfa_edge(c->b, c->in, s->lo[0], s->hi[0], at);
}

/*
 * UNTIL(L, which) (ebnf.h, note [until]): its Aho-Corasick automaton
 * (until.h) times, in UTF-8 mode, the automaton of valid UTF-8 (base/utf8.h)
 * and, with max_chars, a count of the characters read (capped where no
 * acceptance is left: the text of UNTIL(L, i) excludes the characters of
 * L[i], which are read last). Only the reachable triples become NFA states;
 * the minimization drops those that cannot accept.
 */
/* Whether the end string end[0..len) read from Aho-Corasick state s of u
   first hits at its last byte, a hit for L[which] (GM_UNTIL_BEFORE). */
static bool end_follows(const gm_until *u, uint32_t s, uint32_t which, const uint8_t *end,
                        uint32_t len)
{
    for (uint32_t k = 0; k < len; k++) {
        if (u->hit[s])
            return false;
        s = u->next[(size_t)s * 256 + end[k]];
        if (s == GM_UNTIL_NONE)
            return false;
    }
    return gm_until_accepts(u, s, which);
}

static uint32_t until_frag(builder *b, uint32_t node, uint32_t out)
{
    const gm_ebnf *g = b->src;
    const gm_ex *e = &g->nodes[node];
    bool utf8 = !(e->min & GM_UNTIL_BYTES);
    gm_until u;
    gm_status st = gm_until_build(b->m, g, node, b->lim.max_nfa_states, &u, b->err);
    if (st != GM_OK) {
        if (b->st == GM_OK)
            b->st = st;
        return GM_FSM_NONE;
    }
    /* the characters of the end string, subtracted at its hit */
    uint64_t end_chars = 0;
    if (e->arg != GM_EX_NONE) {
        const gm_ex *l = &g->nodes[g->kids[e->first + e->arg]];
        for (uint32_t k = 0; k < l->count; k++)
            end_chars += (g->bytes[l->first + k] & 0xc0) != 0x80;
    }
    /* GM_UNTIL_BEFORE: the text alone, accepted where the end string read next
       gives the first hit, on it (note [until]); its characters are not read */
    bool before = (e->min & GM_UNTIL_BEFORE) != 0;
    const gm_ex *endl = e->arg != GM_EX_NONE ? &g->nodes[g->kids[e->first + e->arg]] : NULL;
    if (before)
        end_chars = 0;
    bool counted = utf8 && e->max != GM_EX_INF;
    uint64_t cap = counted ? (uint64_t)e->max + end_chars : 0;
    uint64_t nu = utf8 ? GM_UTF8_STATES : 1;
    uint64_t total = (uint64_t)u.nstates * nu * (cap + 1);
    uint32_t in = GM_FSM_NONE;
    uint32_t *ns = NULL, *queue = NULL;
    if (total > (uint64_t)b->lim.max_nfa_states * GM_UTF8_STATES) {
        if (b->st == GM_OK)
            b->st = gm_error_set(b->err, GM_ERR_LIMIT, "rule %s: free text of at most %u "
                                 "characters needs up to %llu automaton states (max_nfa_states "
                                 "%u): lower max_chars or raise the limit", rule_name(b, b->cur),
                                 e->max, (unsigned long long)total, b->lim.max_nfa_states);
        goto out;
    }
    ns = gm_mem_alloc(b->m, (size_t)total * sizeof *ns);
    queue = gm_mem_alloc(b->m, (size_t)total * sizeof *queue);
    if (!ns || !queue) {
        fail_mem(b, "a rule automaton");
        goto out;
    }
    for (size_t k = 0; k < total; k++)
        ns[k] = GM_FSM_NONE;
    /* key = (ac state * nu + utf8 state) * (cap + 1) + count */
    uint32_t head = 0, tail = 0;
    if ((ns[0] = nfa_state(b)) == GM_FSM_NONE)
        goto out;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t key = queue[head++];
        uint32_t cnt = (uint32_t)(key % (cap + 1));
        uint32_t us = (uint32_t)(key / (cap + 1) % nu);
        uint32_t s = (uint32_t)(key / (cap + 1) / nu);
        bool fits = !counted || (e->arg == GM_EX_NONE ? cnt <= e->max : cnt - end_chars <= e->max);
        bool acc = before ? !u.hit[s] && end_follows(&u, s, e->arg, g->bytes + endl->first,
                                                        endl->count)
                          : gm_until_accepts(&u, s, e->arg);
        if (acc && us == GM_UTF8_START && fits && nfa_eps(b, ns[key], out))
            goto out;
        if (u.hit[s])
            continue;
        uint32_t run_lo = 0, run_to = GM_FSM_NONE;
        for (uint32_t c = 0; c <= 256; c++) {
            uint32_t to = GM_FSM_NONE;
            if (c < 256) {
                uint32_t t = u.next[(size_t)s * 256 + c];
                unsigned nus = utf8 ? gm_utf8_step(us, (uint8_t)c) : GM_UTF8_START;
                uint64_t ncnt = cnt + (counted && us == GM_UTF8_START);
                if (t != GM_UNTIL_NONE && nus != GM_UTF8_DEAD && ncnt <= cap) {
                    uint32_t nkey = (uint32_t)(((uint64_t)t * nu + nus) * (cap + 1) + ncnt);
                    if (ns[nkey] == GM_FSM_NONE) {
                        if ((ns[nkey] = nfa_state(b)) == GM_FSM_NONE)
                            goto out;
                        queue[tail++] = nkey;
                    }
                    to = ns[nkey];
                }
            }
            if (c == 256 || to != run_to) {
                if (c > 0 && run_to != GM_FSM_NONE && nfa_edge(b, ns[key], run_lo, c - 1, run_to))
                    goto out;
                run_lo = c;
                run_to = to;
            }
        }
    }
    in = ns[0];
out:
    gm_mem_free(b->m, ns);
    gm_mem_free(b->m, queue);
    gm_until_free(&u);
    return in;
}

/* The maximal byte ranges of byte set `set` (count, then lo, hi each): computed
   once per set (a JSON string's set recurs in every string); NULL when out of memory. */
static const uint32_t *byteset_ranges(builder *b, uint32_t set)
{
    if (b->bs_at[set] == UINT32_MAX) {
        const uint32_t *bits = b->src->bytesets[set];
        size_t at = b->bs_ranges.n;
        if (gm_vec_push(b->m, &b->bs_ranges, 0)) {
            fail_mem(b, "a rule automaton");
            return NULL;
        }
        for (uint32_t c = 0; c < 256;) {
            if (!(bits[c >> 5] >> (c & 31) & 1)) {
                c++;
                continue;
            }
            uint32_t lo = c;
            while (c < 256 && (bits[c >> 5] >> (c & 31) & 1))
                c++;
            if (gm_vec_push(b->m, &b->bs_ranges, lo) || gm_vec_push(b->m, &b->bs_ranges, c - 1)) {
                fail_mem(b, "a rule automaton");
                return NULL;
            }
            b->bs_ranges.v[at]++;
        }
        b->bs_at[set] = (uint32_t)at;
    }
    return b->bs_ranges.v + b->bs_at[set];
}

/* A fresh state with one edge sym..sym to out. */
static uint32_t sym_frag(builder *b, uint32_t sym, uint32_t out)
{
    uint32_t in = nfa_state(b);
    return in == GM_FSM_NONE || nfa_edge(b, in, sym, sym, out) ? GM_FSM_NONE : in;
}

/* Whether a reference to src rule r that ends the rule being built is built
   in place (note [tail calls]). */
static bool tail_call(const builder *b, uint32_t r, bool at_end)
{
    const gm_ebnf_rule *sr = &b->src->rules[r];
    /* a rule with a lookahead keeps its own items: each of its ends is a reference
       edge (note [implied lookaheads] in lookahead.c) */
    return at_end && !b->no_tail && b->recursive[r] && !sr->noinline &&
           sr->lookahead == GM_EX_NONE &&
           sr->max_tokens == GM_EX_INF && !sr->has_temperature && sr->body != GM_EX_NONE &&
           sr->body < b->src->nnodes;
}

/*
 * note [budgets over references]
 * A rule with a token budget is counted as one Earley item (note [counting
 * regions] in budget.c), so its automaton must read bytes alone. A
 * reference in its body to a rule that is not recursive and needs no items
 * of its own (no capture, lazy, temperature or lookahead) is therefore built
 * in place there, whatever its size. A budgeted callee is built in place
 * only where its budget can never bind: it ends the budgeted rule (so the
 * rule can end wherever the callee can) and its budget is at least the
 * rule's (a token overlapping the callee's text overlaps the rule's, so the
 * rule's count reaches its budget first and ends both). XGrammar's nested
 * budgets `a[max_tokens=3] ::= "x" b` with `b[max_tokens=9]` are that case;
 * others stay references, and gm_fsm_check_budgets refuses them.
 */
static bool in_budget(const builder *b, uint32_t r, bool at_end)
{
    uint32_t host = b->rules.v[b->cur].src;
    if (host == GM_EX_NONE || b->src->rules[host].max_tokens == GM_EX_INF)
        return false;
    const gm_ebnf_rule *sr = &b->src->rules[r];
    if (b->recursive[r] || sr->body == GM_EX_NONE || sr->body >= b->src->nnodes ||
        sr->lookahead != GM_EX_NONE || sr->capture || sr->lazy || sr->has_temperature)
        return false;
    return sr->max_tokens == GM_EX_INF ||
           (at_end && sr->max_tokens >= b->src->rules[host].max_tokens);
}

static uint32_t frag_build(builder *b, uint32_t node, uint32_t out, uint32_t depth)
{
    const gm_ebnf *g = b->src;
    const gm_ex *e = &g->nodes[node];
    switch (e->kind) {
    case GM_EX_EMPTY:
        return out;
    case GM_EX_NOTHING:
        return nfa_state(b); /* no edges: trimmed away */
    case GM_EX_BYTES: {
        uint32_t at = out;
        for (uint32_t i = e->count; i-- > 0;) {
            uint8_t c = g->bytes[e->first + i];
            if ((at = sym_frag(b, c, at)) == GM_FSM_NONE)
                return GM_FSM_NONE;
        }
        return at;
    }
    case GM_EX_SET: {
        const gm_cpset *s = &g->sets[e->arg];
        uint32_t in = nfa_state(b);
        if (in == GM_FSM_NONE)
            return GM_FSM_NONE;
        seq_ctx c = {b, in, out};
        for (size_t i = 0; i < s->n; i++) {
            uint32_t hi = s->r[i].hi > GM_CP_MAX ? GM_CP_MAX : s->r[i].hi;
            if (s->r[i].lo <= hi && gm_utf8_sequences(s->r[i].lo, hi, add_utf8_seq, &c))
                return GM_FSM_NONE;
        }
        return in;
    }
    case GM_EX_BYTESET: {
        const uint32_t *r = byteset_ranges(b, e->arg);
        uint32_t in = r ? nfa_state(b) : GM_FSM_NONE;
        if (in == GM_FSM_NONE)
            return GM_FSM_NONE;
        for (uint32_t i = 0; i < r[0]; i++)
            if (nfa_edge(b, in, r[1 + 2 * i], r[2 + 2 * i], out))
                return GM_FSM_NONE;
        return in;
    }
    case GM_EX_REF: {
        uint32_t r = e->arg;
        if (b->inl[r] || in_budget(b, r, out == b->final))
            return frag(b, g->rules[r].body, out, depth + 1);
        if (tail_call(b, r, out == b->final)) {
            b->used_tail = true;
            if (b->entry[r] == GM_FSM_NONE) {
                uint32_t f = nfa_state(b);
                if (f == GM_FSM_NONE)
                    return GM_FSM_NONE;
                if (gm_vec_push(b->m, &b->tails, r)) {
                    fail_mem(b, "a rule automaton");
                    return GM_FSM_NONE;
                }
                b->entry[r] = f;
            }
            return b->entry[r];
        }
        uint32_t sym = rule_symbol(b, r);
        return sym == GM_FSM_NONE ? GM_FSM_NONE : sym_frag(b, sym, out);
    }
    case GM_EX_SEQ: {
        uint32_t at = out;
        for (uint32_t i = e->count; i-- > 0;)
            if ((at = frag(b, g->kids[e->first + i], at, depth + 1)) == GM_FSM_NONE)
                return GM_FSM_NONE;
        return at;
    }
    case GM_EX_ALT: {
        if (e->count == 1)
            return frag(b, g->kids[e->first], out, depth + 1);
        uint32_t in = nfa_state(b);
        if (in == GM_FSM_NONE)
            return GM_FSM_NONE;
        for (uint32_t i = 0; i < e->count; i++) {
            uint32_t k = frag(b, g->kids[e->first + i], out, depth + 1);
            if (k == GM_FSM_NONE || nfa_eps(b, in, k))
                return GM_FSM_NONE;
        }
        return in;
    }
    case GM_EX_REPEAT: {
        uint32_t x = g->kids[e->first], min = e->min, max = e->max;
        if (max == 0)
            return out;
        if (min > max)
            return nfa_state(b);
        uint64_t copies = max == GM_EX_INF ? (uint64_t)min + 1 : max;
        uint64_t xs = node_size(b, x, depth + 1);
        if (copies > EXPAND_MAX_COPIES || copies * xs > EXPAND_MAX_NODES) {
            uint32_t sym = repeat_symbol(b, node);
            return sym == GM_FSM_NONE ? GM_FSM_NONE : sym_frag(b, sym, out);
        }
        uint32_t at = out;
        if (max == GM_EX_INF) {
            /* loop: x back to loop, or on */
            uint32_t loop = nfa_state(b), xin;
            if (loop == GM_FSM_NONE || (xin = frag(b, x, loop, depth + 1)) == GM_FSM_NONE ||
                nfa_eps(b, loop, xin) || nfa_eps(b, loop, out))
                return GM_FSM_NONE;
            at = loop;
        } else {
            /* copies min+1 .. max: each may stop there */
            for (uint32_t i = max; i-- > min;) {
                uint32_t t = nfa_state(b), xin;
                if (t == GM_FSM_NONE || (xin = frag(b, x, at, depth + 1)) == GM_FSM_NONE ||
                    nfa_eps(b, t, out) || nfa_eps(b, t, xin))
                    return GM_FSM_NONE;
                at = t;
            }
        }
        for (uint32_t i = 0; i < min; i++)
            if ((at = frag(b, x, at, depth + 1)) == GM_FSM_NONE)
                return GM_FSM_NONE;
        return at;
    }
    case GM_EX_TOKEN: {
        uint32_t id;
        if (gm_intern_put(&b->toks, g->bytes + e->first, e->count, &id, NULL)) {
            fail_mem(b, "special tokens");
            return GM_FSM_NONE;
        }
        return sym_frag(b, SYM_TOK + id, out);
    }
    case GM_EX_UNTIL:
        return until_frag(b, node, out);
    default:
        if (b->st == GM_OK)
            b->st = gm_error_set(b->err, GM_ERR_ARGUMENT, "grammar IR: node %u has kind %u",
                                 node, e->kind);
        return GM_FSM_NONE;
    }
}

/* The fragment of node continuing at out (note [fragments]), GM_FSM_NONE on error (b->st). */
static uint32_t frag(builder *b, uint32_t node, uint32_t out, uint32_t depth)
{
    if (depth > MAX_DEPTH) {
        if (b->st == GM_OK)
            b->st = gm_error_set(b->err, GM_ERR_LIMIT,
                                 "rule %s: expressions nested deeper than %d",
                                 rule_name(b, b->cur), MAX_DEPTH);
        return GM_FSM_NONE;
    }
    /* byte strings and sets, tokens and references to other rules are built
       anew: cheaper than the memo, and each occurrence has its own
       continuation anyway (a counter of a bounded repetition) */
    gm_ex_kind k = b->src->nodes[node].kind;
    if (k == GM_EX_BYTES || k == GM_EX_BYTESET || k == GM_EX_TOKEN ||
        (k == GM_EX_REF && !b->inl[b->src->nodes[node].arg]))
        return frag_build(b, node, out, depth);
    uint64_t key = (uint64_t)node << 32 | out;
    uint32_t in = gm_imap_get(&b->memo, key);
    if (in != GM_IMAP_NONE)
        return in;
    in = frag_build(b, node, out, depth);
    if (in != GM_FSM_NONE && gm_imap_put(&b->memo, key, in)) {
        fail_mem(b, "a rule automaton");
        return GM_FSM_NONE;
    }
    return in;
}

static uint32_t new_orule(builder *b, uint32_t src, uint32_t body)
{
    orule o;
    memset(&o, 0, sizeof o);
    o.src = src;
    o.body = body;
    o.host = b->cur;
    if (gm_vec_push(b->m, &b->rules, o)) {
        fail_mem(b, "rules");
        return GM_FSM_NONE;
    }
    return (uint32_t)b->rules.n - 1;
}

static uint32_t rule_symbol(builder *b, uint32_t src_rule)
{
    if (b->out_rule[src_rule] == GM_EX_NONE) {
        uint32_t r = new_orule(b, src_rule, b->src->rules[src_rule].body);
        if (r == GM_FSM_NONE)
            return GM_FSM_NONE;
        b->out_rule[src_rule] = r;
    }
    return SYM_REF + b->out_rule[src_rule];
}

static uint32_t repeat_symbol(builder *b, uint32_t node)
{
    if (b->rep_rule[node] == GM_EX_NONE) {
        const gm_ex *e = &b->src->nodes[node];
        uint32_t r = new_orule(b, GM_EX_NONE, b->src->kids[e->first]);
        if (r == GM_FSM_NONE)
            return GM_FSM_NONE;
        b->rules.v[r].repeat = 1;
        b->rules.v[r].rep_min = e->min;
        b->rules.v[r].rep_max = e->max;
        b->rep_rule[node] = r;
    }
    return SYM_REF + b->rep_rule[node];
}

/* ---- NFA -> DFA -> minimal DFA --------------------------------------------- */

/* The subset construction of the rule's NFA (fsm_det.h). */
static gm_status determinize(builder *b, uint32_t start, uint32_t acc, rdfa *out)
{
    int rc = gm_fsm_determinize(&b->det, b->raw.v, b->raw.n, b->nnfa, start, acc,
                                b->lim.max_dfa_states, out);
    if (rc == -2)
        return b->st = gm_error_set(b->err, GM_ERR_LIMIT,
                                    "rule %s: more than %u automaton states (max_dfa_states)",
                                    rule_name(b, b->cur), b->lim.max_dfa_states);
    return rc ? fail_mem(b, "a rule automaton") : GM_OK;
}

/*
 * Keeps the states reachable from `start` that can reach an accepting
 * state, renumbered in breadth-first order from the start (start = 0).
 * `accepting` flags decide co-reachability. An empty result (the start
 * cannot reach acceptance) has 0 states.
 */
static gm_status trim(builder *b, rdfa *d, uint32_t start, uint8_t accepting)
{
    gm_mem *m = b->m;
    uint32_t n = d->nstates;
    size_t ne = d->off[n];
    uint8_t *live = gm_mem_calloc(m, n ? n : 1, 1);
    uint32_t *num = gm_mem_alloc(m, (size_t)(n ? n : 1) * sizeof *num);
    uint32_t *queue = gm_mem_alloc(m, (size_t)(n ? n : 1) * sizeof *queue);
    uint32_t *in_off = gm_mem_calloc(m, (size_t)n + 1, sizeof *in_off);
    uint32_t *in = gm_mem_alloc(m, (ne ? ne : 1) * sizeof *in);
    rdfa o;
    memset(&o, 0, sizeof o);
    if (!live || !num || !queue || !in_off || !in)
        goto nomem;
    /* Co-reachability: backwards from the accepting states over incoming edges. */
    for (size_t j = 0; j < ne; j++)
        in_off[d->edges[j].to]++;
    for (uint32_t s = 0; s < n; s++)
        in_off[s + 1] += in_off[s]; /* in_off[t]: the end of t's run */
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++)
            in[--in_off[d->edges[j].to]] = s; /* ...then its start */
    uint32_t nl = 0;
    for (uint32_t s = 0; s < n; s++)
        if (d->flags[s] & accepting) {
            live[s] = 1;
            queue[nl++] = s;
        }
    for (uint32_t qi = 0; qi < nl; qi++) {
        uint32_t t = queue[qi];
        for (uint32_t j = in_off[t]; j < in_off[t + 1]; j++)
            if (!live[in[j]]) {
                live[in[j]] = 1;
                queue[nl++] = in[j];
            }
    }
    for (uint32_t s = 0; s < n; s++)
        num[s] = GM_FSM_NONE;
    uint32_t nq = 0;
    if (n && live[start]) {
        num[start] = 0;
        queue[nq++] = start;
    }
    size_t nedges = 0;
    for (uint32_t qi = 0; qi < nq; qi++) {
        uint32_t s = queue[qi];
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
            uint32_t t = d->edges[j].to;
            if (!live[t])
                continue;
            nedges++;
            if (num[t] == GM_FSM_NONE) {
                num[t] = nq;
                queue[nq++] = t;
            }
        }
    }
    o.nstates = nq;
    o.off = gm_mem_alloc(m, ((size_t)nq + 1) * sizeof *o.off);
    o.edges = gm_mem_alloc(m, (nedges ? nedges : 1) * sizeof *o.edges);
    o.flags = gm_mem_alloc(m, nq ? nq : 1);
    if (!o.off || !o.edges || !o.flags)
        goto nomem;
    size_t k = 0;
    for (uint32_t qi = 0; qi < nq; qi++) {
        uint32_t s = queue[qi];
        o.off[qi] = (uint32_t)k;
        o.flags[qi] = d->flags[s];
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
            uint32_t t = d->edges[j].to;
            if (live[t]) {
                o.edges[k] = d->edges[j];
                o.edges[k++].to = num[t];
            }
        }
    }
    o.off[nq] = (uint32_t)k;
    rdfa_free(m, d);
    *d = o;
    memset(&o, 0, sizeof o);
    goto out;
nomem:
    fail_mem(b, "a rule automaton");
out:
    rdfa_free(m, &o);
    gm_mem_free(m, live);
    gm_mem_free(m, num);
    gm_mem_free(m, queue);
    gm_mem_free(m, in_off);
    gm_mem_free(m, in);
    return b->st;
}

/* The minimal automaton (fsm_minimize.h, note [minimization]). */
static gm_status minimize(builder *b, rdfa *d)
{
    rdfa o;
    int rc = gm_fsm_minimize(&b->min, d, GM_FS_ACCEPT, &o);
    if (rc < 0)
        return fail_mem(b, "a rule automaton");
    if (rc == 1)
        return GM_OK; /* minimal as it stands */
    rdfa_free(b->m, d);
    *d = o;
    return GM_OK;
}

/*
 * note [lazy rules]
 * XGrammar's `rule[lazy]` on a terminal-like rule (its body reads bytes
 * only once its callees are inlined: no rule references, no special
 * tokens): each occurrence ends at its first possible end, so the rule's
 * language is L' = { w in L : no proper prefix of w is in L } ("ab" |
 * "abc" reads "ab" only; [a-z]+ one letter; [a-z]* only ""). On the
 * rule's DFA that is: accepting states lose their outgoing edges, then
 * what no longer leads anywhere is trimmed. It changes the language, so it
 * is part of the rule's key (rule_key: the rule automata cache, equal
 * rules) and keeps the rule out of inlining (noinline, set by the parser)
 * and merging (ir/ir_merge.c); masks, the mask caches and their keys
 * follow from the automaton itself. A body that reads rules or special
 * tokens is GM_ERR_GRAMMAR naming the rule ("not terminal-like", as
 * XGrammar says).
 */
static gm_status make_lazy(builder *b, orule *o)
{
    rdfa *d = &o->dfa;
    const gm_ebnf_rule *sr = &b->src->rules[o->src];
    bool refs = o->repeat;
    for (size_t j = 0; j < d->off[d->nstates] && !refs; j++)
        refs = d->edges[j].hi >= SYM_REF;
    if (refs)
        return b->st = gm_error_set_at(b->err, GM_ERR_GRAMMAR, sr->loc, NULL, 0,
                                       "rule %s[lazy]: its body is not terminal-like (it reads "
                                       "other rules or special tokens)", sr->name);
    size_t k = 0;
    for (uint32_t s = 0; s < d->nstates; s++) {
        uint32_t from = d->off[s], to = d->off[s + 1];
        d->off[s] = (uint32_t)k;
        if (!(d->flags[s] & GM_FS_ACCEPT))
            for (uint32_t j = from; j < to; j++)
                d->edges[k++] = d->edges[j];
    }
    d->off[d->nstates] = (uint32_t)k;
    return trim(b, d, 0, GM_FS_ACCEPT);
}

/* Repetition rule: a fresh start (a copy of the start's edges, no incoming
   edges), accepting states become iteration ends (note [repetition rules]). */
static gm_status make_repeat(builder *b, orule *o)
{
    gm_mem *m = b->m;
    rdfa *d = &o->dfa;
    uint32_t n = d->nstates;
    if (n == 0)
        return b->st;
    o->x_nullable = (d->flags[0] & GM_FS_ACCEPT) != 0;
    uint32_t ns = d->off[1] - d->off[0];
    size_t ne = d->off[n];
    uint32_t *off = gm_mem_alloc(m, ((size_t)n + 2) * sizeof *off);
    dedge *edges = gm_mem_alloc(m, (ne + ns ? ne + ns : 1) * sizeof *edges);
    uint8_t *flags = gm_mem_alloc(m, (size_t)n + 1);
    if (!off || !edges || !flags) {
        gm_mem_free(m, off);
        gm_mem_free(m, edges);
        gm_mem_free(m, flags);
        return fail_mem(b, "a rule automaton");
    }
    /* New state 0 is the fresh start; old state s becomes s + 1. */
    off[0] = 0;
    flags[0] = GM_FS_REP_START;
    for (uint32_t j = 0; j < ns; j++) {
        edges[j] = d->edges[d->off[0] + j];
        edges[j].to++;
    }
    for (uint32_t s = 0; s < n; s++) {
        off[s + 1] = (uint32_t)(ns + d->off[s]);
        flags[s + 1] = (d->flags[s] & GM_FS_ACCEPT) ? GM_FS_ITER_END : 0;
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
            edges[ns + j] = d->edges[j];
            edges[ns + j].to++;
        }
    }
    off[n + 1] = (uint32_t)(ns + ne);
    rdfa_free(m, d);
    d->nstates = n + 1;
    d->off = off;
    d->edges = edges;
    d->flags = flags;
    /* Drop states unreachable from the fresh start (often the old start). */
    return trim(b, d, 0, GM_FS_ITER_END | GM_FS_REP_START);
}

/* ---- the rule automata cache (note [rule automata cache]) ------------------- */

enum {
    KEY_VERSION = 2,
    K_EMPTY = 1, K_NOTHING, K_BYTES, K_SET, K_BYTESET, K_INLINE, K_REF, K_SEQ, K_ALT,
    K_TAIL, K_TAILBODY, K_TAILCOPY,
    K_REPEAT, K_REPRULE, K_TOKEN, K_UNTIL
};

static int key_push(builder *b, uint32_t w)
{
    if (gm_vec_push(b->m, &b->key, w)) {
        fail_mem(b, "a rule's cache key");
        return -1;
    }
    return 0;
}

/* n, then the bytes p[0..n), four to a word. */
static int key_bytes(builder *b, const uint8_t *p, uint32_t n)
{
    if (key_push(b, n))
        return -1;
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t w = 0;
        for (uint32_t k = 0; k < 4 && i + k < n; k++)
            w |= (uint32_t)p[i + k] << (8 * k);
        if (key_push(b, w))
            return -1;
    }
    return 0;
}

/* The local number of x in list (appended when new). */
static int key_local(builder *b, u32vec *list, uint32_t x)
{
    for (size_t i = 0; i < list->n; i++)
        if (list->v[i] == x)
            return key_push(b, (uint32_t)i);
    if (gm_vec_push(b->m, list, x)) {
        fail_mem(b, "a rule's cache key");
        return -1;
    }
    return key_push(b, (uint32_t)(list->n - 1));
}

/*
 * Appends to b->key what frag builds from node, walking the IR as it
 * does (keep the two in step): the same inlining, the same choice between
 * expanding a repetition and a repetition rule, references and special
 * tokens numbered locally. The walk goes in the order of the text and
 * creates the referenced rules and the special tokens: build_rule runs it
 * before the fragments (built from the end), so rules are numbered in the
 * order of the text, cache or not.
 * -1: out of memory (b->st set); -2: an error (first_error reports it).
 */
static int key_add(builder *b, uint32_t node, uint32_t depth)
{
    const gm_ebnf *g = b->src;
    if (depth > MAX_DEPTH)
        return -2;
    const gm_ex *e = &g->nodes[node];
    switch (e->kind) {
    case GM_EX_EMPTY:
        return key_push(b, K_EMPTY);
    case GM_EX_NOTHING:
        return key_push(b, K_NOTHING);
    case GM_EX_BYTES:
        return key_push(b, K_BYTES) ? -1 : key_bytes(b, g->bytes + e->first, e->count);
    case GM_EX_SET: {
        const gm_cpset *set = &g->sets[e->arg];
        if (key_push(b, K_SET) || key_push(b, (uint32_t)set->n))
            return -1;
        for (size_t i = 0; i < set->n; i++) {
            uint32_t hi = set->r[i].hi > GM_CP_MAX ? GM_CP_MAX : set->r[i].hi;
            if (key_push(b, set->r[i].lo) || key_push(b, hi))
                return -1;
        }
        return 0;
    }
    case GM_EX_BYTESET:
        if (key_push(b, K_BYTESET))
            return -1;
        for (int i = 0; i < 8; i++)
            if (key_push(b, g->bytesets[e->arg][i]))
                return -1;
        return 0;
    case GM_EX_REF: {
        uint32_t r = e->arg;
        if (b->inl[r] || in_budget(b, r, b->ktail))
            return key_push(b, K_INLINE) ? -1 : key_add(b, g->rules[r].body, depth + 1);
        if (tail_call(b, r, b->ktail))
            return key_push(b, K_TAIL) ? -1 : key_local(b, &b->tails, r);
        uint32_t sym = rule_symbol(b, r);
        if (sym == GM_FSM_NONE)
            return -1;
        return key_push(b, K_REF) ? -1 : key_local(b, &b->lrefs, sym - SYM_REF);
    }
    case GM_EX_SEQ:
    case GM_EX_ALT: {
        if (key_push(b, e->kind == GM_EX_SEQ ? K_SEQ : K_ALT) || key_push(b, e->count))
            return -1;
        bool tail = b->ktail;
        for (uint32_t i = 0; i < e->count; i++) {
            /* only a sequence's last member ends where the sequence ends */
            b->ktail = tail && (e->kind == GM_EX_ALT || i + 1 == e->count);
            int rc = key_add(b, g->kids[e->first + i], depth + 1);
            if (rc)
                return rc;
        }
        b->ktail = tail;
        return 0;
    }
    case GM_EX_REPEAT: {
        uint32_t x = g->kids[e->first], min = e->min, max = e->max;
        if (max == 0)
            return key_push(b, K_EMPTY);
        if (min > max)
            return key_push(b, K_NOTHING);
        uint64_t copies = max == GM_EX_INF ? (uint64_t)min + 1 : max;
        uint64_t xs = node_size(b, x, depth + 1);
        if (copies > EXPAND_MAX_COPIES || copies * xs > EXPAND_MAX_NODES) {
            uint32_t sym = repeat_symbol(b, node);
            if (sym == GM_FSM_NONE)
                return -1;
            return key_push(b, K_REPRULE) ? -1 : key_local(b, &b->lrefs, sym - SYM_REF);
        }
        if (key_push(b, K_REPEAT) || key_push(b, min) || key_push(b, max))
            return -1;
        /* Copies are built as frag_build builds them: with a bounded max, one
           copy goes on where the repetition does (at the rule's end, tail
           calls in it are in place); the others, and a loop's, do not. */
        bool tail = b->ktail;
        b->ktail = false;
        int rc = key_add(b, x, depth + 1);
        if (!rc && tail && max != GM_EX_INF) {
            b->ktail = true;
            rc = key_push(b, K_TAILCOPY) ? -1 : key_add(b, x, depth + 1);
        }
        b->ktail = tail;
        return rc;
    }
    case GM_EX_TOKEN: {
        uint32_t id;
        if (gm_intern_put(&b->toks, g->bytes + e->first, e->count, &id, NULL)) {
            fail_mem(b, "special tokens");
            return -1;
        }
        return key_push(b, K_TOKEN) ? -1 : key_local(b, &b->ltoks, id);
    }
    case GM_EX_UNTIL:
        if (key_push(b, K_UNTIL) || key_push(b, e->arg) || key_push(b, e->count) ||
            key_push(b, e->min) || key_push(b, e->max))
            return -1;
        for (uint32_t i = 0; i < e->count; i++) {
            const gm_ex *str = &g->nodes[g->kids[e->first + i]];
            if (str->kind != GM_EX_BYTES)
                return -2;
            if (key_bytes(b, g->bytes + str->first, str->count))
                return -1;
        }
        return 0;
    default:
        return -2;
    }
}

/* The key of output rule r into b->key (0), or -1 / -2 as key_add. */
static int rule_key(builder *b, uint32_t r)
{
    b->key.n = b->lrefs.n = b->ltoks.n = 0;
    uint32_t body = b->rules.v[r].body;
    /* a lazy rule's automaton is not its body's (note [lazy rules]) */
    uint32_t lazy = b->rules.v[r].src != GM_EX_NONE && b->src->rules[b->rules.v[r].src].lazy;
    if (key_push(b, KEY_VERSION) || key_push(b, b->rules.v[r].repeat | lazy << 1) ||
        key_push(b, b->lim.max_nfa_states) || key_push(b, b->lim.max_dfa_states) ||
        key_push(b, b->no_tail))
        return -1;
    b->ktail = true;
    b->tails.n = 0;
    int rc = key_add(b, body, 0);
    /* then the bodies of the callees built in place, as build_rule builds them */
    for (size_t i = 0; i < b->tails.n && !rc; i++) {
        b->ktail = true;
        rc = key_push(b, K_TAILBODY) ? -1 : key_add(b, b->src->rules[b->tails.v[i]].body, 0);
    }
    b->tails.n = 0;
    return rc;
}

/*
 * The references and special tokens of a rule's key, by first occurrence:
 * local symbol i stands for the grammar's rule refs[i] (token toks[i]).
 */
typedef struct symlists {
    const uint32_t *refs, *toks;
    size_t nrefs, ntoks;
} symlists;

/* Symbol s from numbering `from` to numbering `to` (NULL: the local numbering). */
static int map_symbol(uint32_t s, const symlists *from, const symlists *to, uint32_t *out)
{
    if (s < SYM_REF) {
        *out = s;
        return 0;
    }
    bool tok = s >= SYM_TOK;
    uint32_t base = tok ? SYM_TOK : SYM_REF, x = s - base, i = x;
    if (from) {
        const uint32_t *v = tok ? from->toks : from->refs;
        size_t n = tok ? from->ntoks : from->nrefs;
        for (i = 0; i < n && v[i] != x; i++)
            ;
        if (i == n)
            return -1;
    }
    if (to) {
        if (i >= (tok ? to->ntoks : to->nrefs))
            return -1;
        i = (tok ? to->toks : to->refs)[i];
    }
    *out = base + i;
    return 0;
}

static int cmp_edge(const void *a, const void *b)
{
    uint32_t x = ((const dedge *)a)->lo, y = ((const dedge *)b)->lo;
    return x < y ? -1 : x > y;
}

/*
 * Maps the reference and token symbols of d from one numbering to the
 * other, then sorts each state's edges by symbol and merges adjacent
 * ranges into one target, as determinize and minimize leave them. 0, -1
 * when out of memory, -2 when a symbol has no counterpart.
 */
static int remap(builder *b, rdfa *d, const symlists *from, const symlists *to)
{
    gm_mem *m = b->m;
    GM_VEC(dedge) e = {0};
    int rc = -1;
    uint32_t *off = gm_mem_alloc(m, ((size_t)d->nstates + 1) * sizeof *off);
    if (!off)
        goto out;
    for (uint32_t s = 0; s < d->nstates; s++) {
        size_t first = e.n;
        bool moved = false;
        off[s] = (uint32_t)first;
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
            dedge x = d->edges[j];
            if (x.lo < SYM_REF) {
                dedge y = {x.lo, x.hi < SYM_REF ? x.hi : SYM_REF - 1, x.to};
                if (gm_vec_push(m, &e, y))
                    goto out;
                if (x.hi < SYM_REF)
                    continue;
                x.lo = SYM_REF;
            }
            for (uint64_t sym = x.lo; sym <= x.hi; sym++) {
                uint32_t t;
                if (map_symbol((uint32_t)sym, from, to, &t)) {
                    rc = -2;
                    goto out;
                }
                dedge y = {t, t, x.to};
                moved = true;
                if (gm_vec_push(m, &e, y))
                    goto out;
            }
        }
        if (moved && e.n - first > 32) {
            qsort(e.v + first, e.n - first, sizeof *e.v, cmp_edge);
        } else if (moved) {
            for (size_t i = first + 1; i < e.n; i++) {
                dedge x = e.v[i];
                size_t j = i;
                for (; j > first && e.v[j - 1].lo > x.lo; j--)
                    e.v[j] = e.v[j - 1];
                e.v[j] = x;
            }
        }
        size_t k = first;
        for (size_t i = first; i < e.n; i++) {
            if (k > first && e.v[k - 1].to == e.v[i].to && (uint64_t)e.v[k - 1].hi + 1 == e.v[i].lo)
                e.v[k - 1].hi = e.v[i].hi;
            else
                e.v[k++] = e.v[i];
        }
        e.n = k;
    }
    off[d->nstates] = (uint32_t)e.n;
    if (!e.v && !(e.v = gm_mem_alloc(m, sizeof *e.v)))
        goto out;
    gm_mem_free(m, d->off);
    gm_mem_free(m, d->edges);
    d->off = off;
    d->edges = e.v;
    return 0;
out:
    gm_mem_free(m, off);
    gm_vec_free(m, &e);
    return rc;
}

/* The symbol lists of the key just computed (rule_key). */
static symlists key_lists(const builder *b)
{
    return (symlists){b->lrefs.v, b->ltoks.v, b->lrefs.n, b->ltoks.n};
}

static int copy_rdfa(gm_mem *m, const rdfa *d, rdfa *out)
{
    size_t ne = d->off[d->nstates];
    out->nstates = d->nstates;
    out->off = gm_mem_alloc(m, ((size_t)d->nstates + 1) * sizeof *out->off);
    out->edges = gm_mem_alloc(m, (ne ? ne : 1) * sizeof *out->edges);
    out->flags = gm_mem_alloc(m, d->nstates ? d->nstates : 1);
    if (!out->off || !out->edges || !out->flags) {
        rdfa_free(m, out);
        return -1;
    }
    memcpy(out->off, d->off, ((size_t)d->nstates + 1) * sizeof *out->off);
    memcpy(out->edges, d->edges, ne * sizeof *out->edges);
    memcpy(out->flags, d->flags, d->nstates);
    return 0;
}

/*
 * note [equal rules]
 * Rules with equal keys have equal automata up to the names of the rules
 * and tokens they reference (note [rule automata cache]): the 2^k subset
 * rules of a JSON Schema object's members in any order (note [any order]
 * in schema/emit_struct.c) fall into k + 1 shapes, tools share helper
 * rules. Without a rule automata cache, the builder keeps its own table of
 * keys for the grammar at hand: the first rule of each key is built, the
 * others are copies of it, renamed and renumbered as a cache hit is.
 */
/* Rule r's automaton from an equal rule (b->key): 1 found, 0 not, -1 error (b->st). */
static int reuse_rule(builder *b, uint32_t r)
{
    orule *o = &b->rules.v[r];
    symlists cur = key_lists(b);
    rdfa d = {0};
    int rc;
    if (b->cache) {
        gm_fcache_dfa c;
        rc = gm_fcache_get(b->cache, b->key.v, b->key.n, b->m, &c);
        if (rc <= 0) {
            if (rc < 0)
                fail_mem(b, "a rule automaton");
            return rc;
        }
        d = (rdfa){c.nstates, c.off, c.edges, c.flags};
        o->x_nullable = c.x_nullable;
        rc = remap(b, &d, NULL, &cur);
    } else {
        uint32_t id = gm_intern_find(&b->built, b->key.v, b->key.n * sizeof *b->key.v);
        if (id == UINT32_MAX)
            return 0;
        const built_rule *x = &b->built_rules.v[id];
        const uint32_t *syms = b->built_syms.v + x->at;
        symlists from = {syms, syms + x->nrefs, x->nrefs, x->ntoks};
        if (copy_rdfa(b->m, &b->rules.v[x->rule].dfa, &d)) {
            fail_mem(b, "a rule automaton");
            return -1;
        }
        o->x_nullable = b->rules.v[x->rule].x_nullable;
        rc = remap(b, &d, &from, &cur);
    }
    if (rc < 0) {
        rdfa_free(b->m, &d);
        if (rc == -2)
            return 0;
        fail_mem(b, "a rule automaton");
        return -1;
    }
    rdfa_free(b->m, &o->dfa);
    o->dfa = d;
    /* breadth-first numbering over the grammar's symbols, as a fresh build */
    uint8_t acc = o->repeat ? GM_FS_ITER_END | GM_FS_REP_START : GM_FS_ACCEPT;
    return trim(b, &o->dfa, 0, acc) ? -1 : 1;
}

/* Stores rule r's automaton under b->key (best effort). */
static void store_rule(builder *b, uint32_t r)
{
    gm_mem *m = b->m;
    const orule *o = &b->rules.v[r];
    if (!b->cache) {
        uint32_t id;
        int added;
        size_t at = b->built_syms.n;
        if (gm_vec_reserve(m, &b->built_rules, b->built_rules.n + 1) ||
            gm_vec_reserve(m, &b->built_syms, at + b->lrefs.n + b->ltoks.n + 1) ||
            gm_intern_put(&b->built, b->key.v, b->key.n * sizeof *b->key.v, &id, &added) ||
            !added)
            return;
        if (b->lrefs.n)
            memcpy(b->built_syms.v + at, b->lrefs.v, b->lrefs.n * sizeof *b->lrefs.v);
        if (b->ltoks.n)
            memcpy(b->built_syms.v + at + b->lrefs.n, b->ltoks.v, b->ltoks.n * sizeof *b->ltoks.v);
        b->built_syms.n += b->lrefs.n + b->ltoks.n;
        built_rule x = {r, (uint32_t)at, (uint32_t)b->lrefs.n, (uint32_t)b->ltoks.n};
        b->built_rules.v[b->built_rules.n++] = x;
        return;
    }
    rdfa t = {0};
    symlists cur = key_lists(b);
    if (copy_rdfa(m, &o->dfa, &t) == 0 && remap(b, &t, &cur, NULL) == 0) {
        gm_fcache_dfa c = {t.nstates, t.off, t.edges, t.flags, o->x_nullable};
        gm_fcache_put(b->cache, b->key.v, b->key.n, &c);
    }
    rdfa_free(m, &t);
}

/*
 * The first error of node's body in the order of its text, as building it
 * would report it (the fragments are built from the end: note [fragments]).
 * Called when rule_key found something it cannot key, which is an error.
 */
static int first_error(builder *b, uint32_t node, uint32_t depth)
{
    const gm_ebnf *g = b->src;
    if (depth > MAX_DEPTH) {
        if (b->st == GM_OK)
            b->st = gm_error_set(b->err, GM_ERR_LIMIT,
                                 "rule %s: expressions nested deeper than %d",
                                 rule_name(b, b->cur), MAX_DEPTH);
        return -1;
    }
    const gm_ex *e = &g->nodes[node];
    switch (e->kind) {
    case GM_EX_EMPTY: case GM_EX_NOTHING: case GM_EX_BYTES: case GM_EX_SET: case GM_EX_BYTESET:
    case GM_EX_TOKEN:
        return 0;
    case GM_EX_REF:
        if (g->rules[e->arg].lookahead != GM_EX_NONE || !b->inl[e->arg])
            return frag(b, node, 0, depth) == GM_FSM_NONE ? -1 : 0;
        return first_error(b, g->rules[e->arg].body, depth + 1);
    case GM_EX_SEQ:
    case GM_EX_ALT:
        for (uint32_t i = 0; i < e->count; i++)
            if (first_error(b, g->kids[e->first + i], depth + 1))
                return -1;
        return 0;
    case GM_EX_REPEAT: {
        uint64_t copies = e->max == GM_EX_INF ? (uint64_t)e->min + 1 : e->max;
        uint64_t xs = node_size(b, g->kids[e->first], depth + 1);
        if (e->max == 0 || e->min > e->max || copies > EXPAND_MAX_COPIES ||
            copies * xs > EXPAND_MAX_NODES)
            return 0;
        return first_error(b, g->kids[e->first], depth + 1);
    }
    default:
        return frag(b, node, 0, depth) == GM_FSM_NONE ? -1 : 0;
    }
}

static gm_status build_rule_once(builder *b, uint32_t r);

static gm_status build_rule(builder *b, uint32_t r)
{
    b->no_tail = false;
    gm_status st = build_rule_once(b, r);
    if (st == GM_ERR_LIMIT && b->used_tail) {
        /* the expanded automaton is too big: keep the references */
        b->st = GM_OK;
        rdfa_free(b->m, &b->rules.v[r].dfa);
        b->no_tail = true;
        st = build_rule_once(b, r);
        b->no_tail = false;
    }
    return st;
}

/* The NFA of rule r's body ending at out, callees built in place after it
   (note [tail calls]): the state it starts at, GM_FSM_NONE on error. */
static uint32_t rule_frag(builder *b, uint32_t body, uint32_t out)
{
    b->final = out;
    b->tails.n = 0;
    uint32_t in = frag(b, body, out, 0);
    for (size_t i = 0; i < b->tails.n && in != GM_FSM_NONE; i++) {
        uint32_t t = b->tails.v[i];
        uint32_t tin = frag(b, b->src->rules[t].body, out, 0);
        if (tin == GM_FSM_NONE || nfa_eps(b, b->entry[t], tin))
            in = GM_FSM_NONE;
    }
    for (size_t i = 0; i < b->tails.n; i++)
        b->entry[b->tails.v[i]] = GM_FSM_NONE;
    b->tails.n = 0;
    b->final = GM_FSM_NONE;
    return in;
}

static gm_status build_rule_once(builder *b, uint32_t r)
{
    b->used_tail = false;
    b->cur = r;
    b->raw.n = 0;
    b->nnfa = 0;
    gm_imap_clear(&b->memo);
    uint32_t out = nfa_state(b);
    uint32_t body = b->rules.v[r].body;
    if (out == GM_FSM_NONE)
        return b->st;
    if (body == GM_EX_NONE || body >= b->src->nnodes) {
        const gm_ebnf_rule *sr = &b->src->rules[b->rules.v[r].src];
        return b->st = gm_error_set_at(b->err, GM_ERR_GRAMMAR, sr->loc, NULL, 0,
                                       "rule %s is used but not defined", sr->name);
    }
    /* The key walk creates the rules the body references in the order of
       its text (the fragments are built from the end). */
    int keyed = rule_key(b, r);
    if (keyed == -1)
        return b->st;
    if (keyed == -2 && first_error(b, body, 0))
        return b->st;
    if (keyed == 0) {
        int hit = reuse_rule(b, r);
        if (hit)
            return hit < 0 ? b->st : GM_OK;
    }
    uint32_t in = rule_frag(b, body, out);
    if (in == GM_FSM_NONE)
        return b->st;
    orule *o = &b->rules.v[r];
    if (determinize(b, in, out, &o->dfa) || minimize(b, &o->dfa))
        return b->st;
    o = &b->rules.v[r];
    if (o->repeat && make_repeat(b, o))
        return b->st;
    if (o->src != GM_EX_NONE && b->src->rules[o->src].lazy && make_lazy(b, o))
        return b->st;
    if (o->dfa.nstates == 0) {
        gm_srcloc loc = {0};
        if (o->src != GM_EX_NONE)
            loc = b->src->rules[o->src].loc;
        return b->st = gm_error_set_at(b->err, GM_ERR_GRAMMAR, loc, NULL, 0,
                                       "rule %s derives no string", rule_name(b, r));
    }
    if (keyed == 0)
        store_rule(b, r);
    return GM_OK;
}

/* ---- assembling the grammar ---------------------------------------------- */

static gm_status assemble(builder *b, gm_egrammar *g)
{
    gm_mem *m = b->m;
    uint32_t nr = (uint32_t)b->rules.n;
    size_t nstates = 0, nrefs = 0, ntoks = 0, names = 0;
    for (uint32_t r = 0; r < nr; r++) {
        const rdfa *d = &b->rules.v[r].dfa;
        nstates += d->nstates;
        for (size_t j = 0; j < d->off[d->nstates]; j++) {
            const dedge *e = &d->edges[j];
            /* the parts of lo..hi among references and among tokens */
            uint64_t lo = e->lo, hi = e->hi;
            if (hi >= SYM_REF && lo < SYM_TOK)
                nrefs += (hi < SYM_TOK ? hi : SYM_TOK - 1) - (lo > SYM_REF ? lo : SYM_REF) + 1;
            if (hi >= SYM_TOK)
                ntoks += hi - (lo > SYM_TOK ? lo : SYM_TOK) + 1;
        }
        names += strlen(rule_name(b, r)) + 8;
        names += rule_capture(b, r) ? strlen(rule_capture(b, r)) + 1 : 0;
    }
    if (nstates > UINT32_MAX / 2)
        return b->st = gm_error_set(b->err, GM_ERR_LIMIT, "too many automaton states");
    g->nrules = nr;
    g->root = 0;
    g->nstates = (uint32_t)nstates;
    g->rules = gm_mem_calloc(m, nr, sizeof *g->rules);
    g->names = gm_mem_alloc(m, names + 1);
    g->state_rule = gm_mem_alloc(m, (nstates ? nstates : 1) * sizeof *g->state_rule);
    g->state_flags = gm_mem_calloc(m, nstates ? nstates : 1, 1);
    g->ref_off = gm_mem_calloc(m, nstates + 1, sizeof *g->ref_off);
    g->refs = gm_mem_alloc(m, (nrefs ? nrefs : 1) * sizeof *g->refs);
    g->tok_off = gm_mem_calloc(m, nstates + 1, sizeof *g->tok_off);
    g->toks = gm_mem_alloc(m, (ntoks ? ntoks : 1) * sizeof *g->toks);
    g->ntokens = b->toks.count;
    g->tok_text_off = gm_mem_alloc(m, ((size_t)g->ntokens + 1) * sizeof *g->tok_text_off);
    g->tok_text = gm_mem_alloc(m, b->toks.data_len ? b->toks.data_len : 1);
    if (!g->rules || !g->names || !g->state_rule || !g->state_flags || !g->ref_off ||
        !g->refs || !g->tok_off || !g->toks || !g->tok_text_off || !g->tok_text)
        return fail_mem(b, "rule automata");
    g->tok_text_off[0] = 0;
    for (uint32_t i = 0; i < g->ntokens; i++) {
        size_t len;
        const void *k = gm_intern_key(&b->toks, i, &len);
        memcpy(g->tok_text + g->tok_text_off[i], k, len);
        g->tok_text_off[i + 1] = g->tok_text_off[i] + (uint32_t)len;
    }
    /* Byte classes: the boundaries of every byte range of every state. */
    uint8_t cut[257];
    memset(cut, 0, sizeof cut);
    for (uint32_t r = 0; r < nr; r++) {
        const rdfa *d = &b->rules.v[r].dfa;
        for (size_t j = 0; j < d->off[d->nstates]; j++) {
            const dedge *e = &d->edges[j];
            if (e->lo < 256) {
                cut[e->lo] = 1;
                cut[(e->hi < 255 ? e->hi : 255) + 1] = 1;
            }
        }
    }
    uint32_t k = 0;
    for (uint32_t c = 0; c < 256; c++) {
        if (c > 0 && cut[c])
            k++;
        g->byte_class[c] = (uint8_t)k;
    }
    g->nclasses = k + 1;
    g->trans = gm_mem_alloc(m, (nstates ? nstates : 1) * g->nclasses * sizeof *g->trans);
    b->bt_off = gm_mem_alloc(m, (nstates + 1) * sizeof *b->bt_off);
    if (!g->trans || !b->bt_off)
        return fail_mem(b, "rule automata");
    memset(g->trans, 0xff, nstates * g->nclasses * sizeof *g->trans);
    uint32_t base = 0, nm = 0;
    size_t ri = 0, ti = 0;
    for (uint32_t r = 0; r < nr; r++) {
        const orule *o = &b->rules.v[r];
        const rdfa *d = &o->dfa;
        gm_frule *fr = &g->rules[r];
        fr->first = base;
        fr->nstates = d->nstates;
        fr->start = base;
        fr->repeat = o->repeat;
        fr->rep_min = o->rep_min;
        fr->rep_max = o->rep_max;
        fr->max_tokens = o->src != GM_EX_NONE && !o->repeat ? b->src->rules[o->src].max_tokens
                                                            : GM_EX_INF;
        fr->temperature = o->src != GM_EX_NONE && !o->repeat &&
                                  b->src->rules[o->src].has_temperature
                              ? b->src->rules[o->src].temperature
                              : -1.0f;
        /* x nullable by bytes alone: min is 0 (gm_fsm_finish also catches
           x nullable through references). */
        if (o->repeat && o->x_nullable)
            fr->rep_min = 0;
        fr->name = nm;
        const char *name = rule_name(b, r);
        size_t len = strlen(name);
        memcpy(g->names + nm, name, len);
        if (o->src == GM_EX_NONE) {
            memcpy(g->names + nm + len, "{rep}", 5);
            len += 5;
        }
        g->names[nm + len] = 0;
        nm += (uint32_t)len + 1;
        fr->capture = GM_EX_INF;
        if (rule_capture(b, r)) {
            /* its label after its name (note [captures] in earley/capture.c) */
            size_t clen = strlen(rule_capture(b, r));
            memcpy(g->names + nm, rule_capture(b, r), clen + 1);
            fr->capture = nm;
            nm += (uint32_t)clen + 1;
        }
        for (uint32_t s = 0; s < d->nstates; s++) {
            uint32_t gs = base + s;
            g->state_rule[gs] = r;
            g->state_flags[gs] = d->flags[s];
            g->ref_off[gs] = (uint32_t)ri;
            g->tok_off[gs] = (uint32_t)ti;
            b->bt_off[gs] = (uint32_t)(b->bt.n / 2);
            uint32_t *row = g->trans + (size_t)gs * g->nclasses;
            for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
                const dedge *e = &d->edges[j];
                uint32_t to = base + e->to;
                uint64_t sym = e->lo;
                if (sym < 256) {
                    /* classes are runs of bytes: lo..hi covers whole classes */
                    uint32_t c1 = g->byte_class[e->hi < 255 ? e->hi : 255];
                    if (gm_vec_reserve(m, &b->bt, b->bt.n + 2 * (size_t)(c1 + 1)))
                        return fail_mem(b, "rule automata");
                    for (uint32_t c = g->byte_class[e->lo]; c <= c1; c++) {
                        row[c] = to;
                        b->bt.v[b->bt.n++] = c;
                        b->bt.v[b->bt.n++] = to;
                    }
                    sym = 256;
                }
                for (; sym <= e->hi; sym++) {
                    if (sym < SYM_TOK) {
                        g->refs[ri].sym = (uint32_t)(sym - SYM_REF);
                        g->refs[ri++].to = to;
                    } else {
                        g->toks[ti].sym = (uint32_t)(sym - SYM_TOK);
                        g->toks[ti++].to = to;
                    }
                }
            }
        }
        base += d->nstates;
    }
    g->ref_off[nstates] = (uint32_t)ri;
    g->tok_off[nstates] = (uint32_t)ti;
    b->bt_off[nstates] = (uint32_t)(b->bt.n / 2);
    g->names_len = nm;
    return GM_OK;
}

void gm_egrammar_destroy(gm_egrammar *g)
{
    if (!g)
        return;
    gm_mem *m = g->mem;
    gm_mem_free(m, g->rules);
    gm_mem_free(m, g->names);
    gm_mem_free(m, g->state_rule);
    gm_mem_free(m, g->state_flags);
    gm_mem_free(m, g->trans);
    gm_mem_free(m, g->ref_off);
    gm_mem_free(m, g->refs);
    gm_mem_free(m, g->tok_off);
    gm_mem_free(m, g->toks);
    gm_mem_free(m, g->tok_text_off);
    gm_mem_free(m, g->tok_text);
    gm_mem_free(m, g->hash);
    gm_mem_free(m, g->pred_off);
    gm_mem_free(m, g->pred);
    gm_mem_free(m, g);
}

gm_status gm_egrammar_build(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                            gm_egrammar **out, gm_error *err)
{
    return gm_egrammar_build_cached(m, src, limits, NULL, out, err);
}

static gm_status build(gm_mem *m, const gm_ebnf *src, const gm_limits *limits, gm_fcache *cache,
                       bool check, gm_egrammar **out, gm_error *err);

gm_status gm_egrammar_build_cached(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                                   gm_fcache *cache, gm_egrammar **out, gm_error *err)
{
    return build(m, src, limits, cache, true, out, err);
}

gm_status gm_egrammar_build_checked(gm_mem *m, const gm_ebnf *src, const gm_limits *limits,
                                    gm_fcache *cache, gm_egrammar **out, gm_error *err)
{
    return build(m, src, limits, cache, false, out, err);
}

static gm_status build(gm_mem *m, const gm_ebnf *src, const gm_limits *limits, gm_fcache *cache,
                       bool check, gm_egrammar **out, gm_error *err)
{
    *out = NULL;
    builder b;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.cache = cache;
    b.src = src;
    b.err = err;
    gm_limits_resolve(&b.lim, limits);
    gm_intern_init(&b.toks, m);
    gm_imap_init(&b.memo, m);
    gm_fsm_min_init(&b.min, m);
    gm_fsm_det_init(&b.det, m);
    gm_intern_init(&b.built, m);
    gm_egrammar *g = NULL;
    if (check) {
        gm_grammar_options o;
        memset(&o, 0, sizeof o);
        o.limits = b.lim;
        gm_status cs = gm_ebnf_check(src, &o, err);
        if (cs != GM_OK)
            return cs;
    }
    uint32_t nn = src->nnodes ? src->nnodes : 1, nr = src->nrules ? src->nrules : 1;
    b.out_rule = gm_mem_alloc(m, (size_t)nr * sizeof *b.out_rule);
    b.inl = gm_mem_calloc(m, nr, 1);
    b.rep_rule = gm_mem_alloc(m, (size_t)nn * sizeof *b.rep_rule);
    b.size = gm_mem_calloc(m, nn, sizeof *b.size);
    b.size_gen = gm_mem_calloc(m, nn, sizeof *b.size_gen);
    b.recursive = gm_mem_calloc(m, nr, 1);
    b.entry = gm_mem_alloc(m, (size_t)nr * sizeof *b.entry);
    b.final = GM_FSM_NONE;
    b.gen = 1;
    b.bs_at = gm_mem_alloc(m, (size_t)(src->nbytesets ? src->nbytesets : 1) * sizeof *b.bs_at);
    if (!b.out_rule || !b.inl || !b.rep_rule || !b.size || !b.size_gen || !b.bs_at ||
        !b.recursive || !b.entry) {
        fail_mem(&b, "the grammar");
        goto done;
    }
    memset(b.out_rule, 0xff, (size_t)nr * sizeof *b.out_rule);
    memset(b.entry, 0xff, (size_t)nr * sizeof *b.entry);
    memset(b.rep_rule, 0xff, (size_t)nn * sizeof *b.rep_rule);
    memset(b.bs_at, 0xff, (size_t)(src->nbytesets ? src->nbytesets : 1) * sizeof *b.bs_at);
    if (choose_inlining(&b))
        goto done;
    if (src->root >= src->nrules) {
        b.st = gm_error_set(err, GM_ERR_GRAMMAR, "the grammar has no root rule");
        goto done;
    }
    b.cur = 0;
    if (rule_symbol(&b, src->root) == GM_FSM_NONE)
        goto done;
    for (uint32_t r = 0; r < b.rules.n; r++)
        if (build_rule(&b, r))
            goto done;
    g = gm_mem_calloc(m, 1, sizeof *g);
    if (!g) {
        fail_mem(&b, "the grammar");
        goto done;
    }
    g->mem = m;
    if (assemble(&b, g) || gm_fsm_finish_sparse(g, b.bt_off, b.bt.v, err) ||
        gm_fsm_check_budgets(g, err) || gm_lookahead_check(m, src, b.out_rule, g, err)) {
        if (b.st == GM_OK)
            b.st = err ? err->code : GM_ERR_GRAMMAR;
        gm_egrammar_destroy(g);
        g = NULL;
        goto done;
    }
    *out = g;
done:
    for (size_t r = 0; r < b.rules.n; r++)
        rdfa_free(m, &b.rules.v[r].dfa);
    gm_vec_free(m, &b.rules);
    gm_vec_free(m, &b.raw);
    gm_imap_free(&b.memo);
    gm_fsm_min_free(&b.min);
    gm_fsm_det_free(&b.det);
    gm_intern_free(&b.built);
    gm_vec_free(m, &b.built_rules);
    gm_vec_free(m, &b.built_syms);
    gm_vec_free(m, &b.key);
    gm_vec_free(m, &b.lrefs);
    gm_vec_free(m, &b.ltoks);
    gm_mem_free(m, b.bt_off);
    gm_mem_free(m, b.bs_at);
    gm_vec_free(m, &b.bs_ranges);
    gm_vec_free(m, &b.bt);
    gm_intern_free(&b.toks);
    gm_mem_free(m, b.out_rule);
    gm_mem_free(m, b.inl);
    gm_mem_free(m, b.rep_rule);
    gm_mem_free(m, b.size);
    gm_mem_free(m, b.size_gen);
    gm_mem_free(m, b.recursive);
    gm_mem_free(m, b.entry);
    gm_vec_free(m, &b.tails);
    return b.st;
}
