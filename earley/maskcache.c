/*
 * Token masks of the Earley engine: the adaptive token-mask cache
 * (XGrammar; XGrammar 2 §3.4), the runtime check of uncertain tokens, and
 * masks memoized per Earley set object.
 *
 * note [token-mask cache]
 * Every item the recognizer keeps can be completed (rule automata are
 * trimmed, rules are productive), and so can the items that wait on its
 * rule: an item is viable whatever set it sits in. For an item (state q,
 * counter c) alone, put it in a set whose origin is the outer set (no
 * items) and walk the vocabulary trie from there with the recognizer
 * itself. A token is
 *   accepted   when the walk is still alive after its last byte (an item
 *              still in progress, or the item's rule completed exactly at
 *              the end): then every set holding such an item accepts it;
 *   uncertain  when it is not accepted but the item's rule completed
 *              after some of its bytes, and the next byte may follow the
 *              rule (note [follow sets]): the rest depends on the context;
 *   rejected   otherwise.
 * The rule completing before the first byte is left out: in a real set
 * that completion has already been made, and the items it advanced are
 * seeds of their own.
 *
 * A set's mask is then the union of the accepted tokens of its seeds (the
 * items whose origin is another set: every other item was predicted from
 * them) plus those of the seeds' uncertain tokens the set really accepts,
 * found by walking them through the trie on the set itself (prefixes
 * shared, each step a transition-cache lookup). Plus EOS ids when the set
 * is accepting and the ids of special tokens its items can read.
 * Entries are built on first use (or all at once for eager engines) and
 * stored in the smallest of three forms: a list of accepted ids, a list
 * of the other ids, or a bitset.
 *
 * note [closed subtrees]
 * Under a state that reads any identifier character or any plain string
 * byte, most of the trie leads back to the same set. The bytes below each
 * trie node are precomputed (256 bits a node, per vocabulary); a walk that
 * reaches node n in set X where every byte below n leads from X back to X
 * accepts the whole subtree without visiting it: its tokens are one
 * contiguous run of the trie's token array. Sets that loop over every
 * multi-byte character too (a JSON string) also close subtrees of UTF-8
 * text (closed.c, note [utf-8 loops]). What X does with each byte
 * class is learnt on demand and kept on X (bytes known to loop, bytes
 * known not to): a test first looks for a byte known not to loop, then at
 * the transitions X already has, and only then steps X on the classes
 * still unknown, stopping at the first that does not loop. Stepping X over
 * every class up front would build, for each set the walk meets, Earley
 * sets the walk never visits (half the cost of a cold C entry).
 *
 * note [repetition classes]
 * An item of a repetition rule has a counter; what one token can do with
 * it depends only on whether min and max are within reach. A token of L
 * bytes ends at most L iterations (each reads a byte), so counters are
 * classed by (min - c, max - c) each clamped to T = longest token + 1:
 * counters farther than T from both bounds share one entry, the last T
 * before each bound stay exact. [a-z]{0,65536} needs about 2T entries.
 */
#include <stdlib.h>
#include <string.h>

#include "earley/eengine.h"
#include "base/bitset.h"
#include "base/error.h"
#include "base/hash.h"

enum { FORM_LIST = 0, FORM_NOT = 1, FORM_BITS = 2 };

struct gm_ementry {
    uint64_t key;
    uint8_t form;         /* FORM_* of acc */
    uint8_t borrowed;     /* acc and unc belong to the cross-grammar cache */
    uint32_t nacc;        /* ids in the list (FORM_LIST, FORM_NOT) */
    uint32_t *acc;        /* ids ascending, or the bitset */
    uint32_t nunc;
    uint32_t *unc;        /* trie nodes of the uncertain tokens, ascending */
    uint32_t nraw;        /* with a cross-grammar cache: the raw-uncertain nodes, ascending */
    uint32_t *raw;        /* (note [cross-grammar hashing]); NULL without */
};

/* A memoized mask: same three forms (the set owns it, eset.c frees it). */
typedef gm_ememo memo;

static size_t entry_bytes(const gm_eengine *e, const gm_ementry *x)
{
    if (x->borrowed)
        return sizeof *x;
    size_t acc = x->form == FORM_BITS ? (size_t)e->words * 4 : (size_t)x->nacc * 4;
    return sizeof *x + acc + ((size_t)x->nunc + x->nraw) * 4;
}

static void entry_free(gm_eengine *e, gm_ementry *x)
{
    if (!x)
        return;
    if (!x->borrowed) {
        gm_mem_free(e->mem, x->acc);
        gm_mem_free(e->mem, x->unc);
        gm_mem_free(e->mem, x->raw);
    }
    gm_mem_free(e->mem, x);
}

gm_status gm_emask_init(gm_eengine *e, gm_error *err)
{
    const gm_vocab_data *v = e->v;
    const gm_trie *t = e->t;
    e->words = (v->size + 31) / 32;
    e->T = (uint32_t)t->max_depth + 1;
    e->entry = gm_mem_calloc(e->mem, e->g->nstates ? e->g->nstates : 1, sizeof *e->entry);
    e->class_bytes = gm_mem_calloc(e->mem, (size_t)e->g->nclasses * 4 + 4, sizeof *e->class_bytes);
    if (!e->entry || !e->class_bytes)
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    for (uint32_t b = 0; b < 256; b++)
        e->class_bytes[(size_t)e->g->byte_class[b] * 4 + (b >> 6)] |= (uint64_t)1 << (b & 63);
    return GM_OK;
}

/* What lies below each trie node (note [closed subtrees]), NULL when unavailable. */
static const gm_tbelow *below(gm_eengine *e)
{
    if (!e->below && !(e->variant & GM_EVARIANT_NO_STATE_CACHE)) {
        if (e->x)
            e->below = gm_excache_below(e->x);
        if (!e->below && !e->own_below)
            e->below = e->own_below = gm_tbelow_create(e->mem, e->t);
    }
    return e->below;
}

void gm_emask_fini(gm_eengine *e)
{
    if (e->entry)
        for (uint32_t s = 0; s < e->g->nstates; s++)
            entry_free(e, atomic_load(&e->entry[s]));
    for (size_t i = 0; i < e->rep_slots; i++)
        entry_free(e, e->rep_entries[i]);
    gm_mem_free(e->mem, e->entry);
    gm_mem_free(e->mem, e->rep_entries);
    gm_tbelow_destroy(e->mem, e->own_below);
    gm_mem_free(e->mem, e->class_bytes);
    gm_exkey_fini(e);
    e->class_bytes = NULL;
    e->own_below = NULL;
    e->below = NULL;
    e->entry = NULL;
    e->rep_entries = NULL;
}

/* ---- scratch buffers --------------------------------------------------------- */

static gm_status scratch_ready(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    if (w->stack)
        return GM_OK;
    size_t depth = (size_t)e->t->max_depth + 2;
    w->stack = gm_mem_calloc(e->mem, depth, sizeof *w->stack);
    w->unc = gm_mem_calloc(e->mem, depth, 1);
    w->bits = gm_mem_calloc(e->mem, e->words ? e->words : 1, sizeof *w->bits);
    if (!w->stack || !w->unc || !w->bits)
        return gm_mem_fail(e->mem, err, "mask buffers");
    return GM_OK;
}

static void stack_release(gm_eengine *e, gm_escratch *w, size_t upto)
{
    for (size_t d = 1; d <= upto; d++) {
        gm_estate_release(e, w->stack[d]);
        w->stack[d] = NULL;
    }
}

/* Whether bits[i..i + 8) are all clear (a block of 256 ids). */
static inline bool block_clear(const uint32_t *bits, uint32_t i)
{
    return !(bits[i] | bits[i + 1] | bits[i + 2] | bits[i + 3] | bits[i + 4] | bits[i + 5] |
             bits[i + 6] | bits[i + 7]);
}

static inline bool block_full(const uint32_t *bits, uint32_t i)
{
    return !~(bits[i] & bits[i + 1] & bits[i + 2] & bits[i + 3] & bits[i + 4] & bits[i + 5] &
              bits[i + 6] & bits[i + 7]);
}

static inline void set_bit(uint32_t *bits, uint32_t i)
{
    bits[i >> 5] |= 1u << (i & 31);
}

static inline bool get_bit(const uint32_t *bits, uint32_t i)
{
    return (bits[i >> 5] >> (i & 31)) & 1;
}

static void set_node_tokens(const gm_trie *t, uint32_t node, uint32_t *bits)
{
    for (uint32_t k = t->nodes[node].tok_begin; k < t->nodes[node].tok_end; k++)
        set_bit(bits, t->tokens[k]);
}

/*
 * Walks trie nodes [lo, hi) (whole subtrees, in pre-order), each stepped
 * from the set its parent's depth holds in w->stack, pruned where the
 * recognizer dies. Tokens whose walk is alive go to `acc`; with `follow`
 * (the mask cache's walks from an outer seed), tokens whose walk escaped
 * earlier with a following byte in follow go to w->enodes as uncertain.
 * *maxd: the deepest stack slot written.
 */
static gm_status walk_nodes(gm_eengine *e, gm_escratch *w, uint32_t lo, uint32_t hi,
                            const uint64_t *follow, bool raw, const uint64_t *skip1, uint32_t *acc,
                            size_t *maxd, gm_error *err)
{
    /* (w->nodes may hold the uncertain nodes of the mask being filled: an
       entry's own go to w->enodes.) */
    const gm_trie *t = e->t;
    bool owned = (e->variant & GM_EVARIANT_NO_STATE_CACHE) != 0;
    const gm_tbelow *tb = below(e);
    gm_status st = GM_OK;
    for (uint32_t i = lo; i < hi;) {
        const gm_trie_node *nd = &t->nodes[i];
        uint32_t d = nd->depth;
        /* Walks of thousands of nodes wait on memory: what this node's
           closed test reads and the node after its subtree (the next one
           visited or skipped to) are loaded during the step (7-8% less time
           per node on MaskBench's walks over 4,000 nodes). */
        if (tb) {
            __builtin_prefetch(tb->bytes + (size_t)i * 4);
            __builtin_prefetch(tb->bytes + (size_t)nd->skip * 4);
        }
        __builtin_prefetch(t->nodes + nd->skip);
        if (skip1 && d == 1 && ((skip1[nd->byte >> 6] >> (nd->byte & 63)) & 1)) {
            i = nd->skip; /* a sibling's entry answers for this subtree */
            continue;
        }
        gm_estate *p = w->stack[d - 1];
        gm_estate *s = NULL;
        if (owned)
            st = gm_eset_step(e, w, p, nd->byte, &s, err);
        else if (!gm_eset_cached(e, p, nd->byte, &s))
            st = gm_eset_step_borrowed(e, w, p, nd->byte, &s, err);
        if (st != GM_OK)
            return st;
        /* Bit 0: uncertain; bit 1: raw-uncertain (note [cross-grammar hashing]). */
        uint8_t u = w->unc[d - 1];
        if (follow && (p->flags & GM_ES_ESCAPED))
            u |= (uint8_t)(2 | ((follow[nd->byte >> 6] >> (nd->byte & 63)) & 1));
        if (!s) {
            for (uint32_t k = i; u && k < nd->skip; k++) {
                if (t->nodes[k].tok_end == t->nodes[k].tok_begin)
                    continue;
                if (((u & 1) && gm_vec_push(e->mem, &w->enodes, k)) ||
                    (raw && gm_vec_push(e->mem, &w->rnodes, k)))
                    return gm_mem_fail(e->mem, err, "the token-mask cache");
            }
            i = nd->skip;
            continue;
        }
        if (nd->tok_end > nd->tok_begin)
            set_node_tokens(t, i, acc);
        if (tb && nd->skip > i + 1 && s->interned) {
            bool closed;
            if ((st = gm_eclosed_below(e, w, s, tb, i, &closed, err)) != GM_OK)
                return st;
            if (closed) {
                /* Closed: every token below is accepted. */
                uint32_t k0 = t->nodes[i + 1].tok_begin, k1 = t->nodes[nd->skip - 1].tok_end;
                for (uint32_t k = k0; k < k1; k++)
                    set_bit(acc, t->tokens[k]);
                i = nd->skip;
                continue;
            }
        }
        if (owned)
            gm_estate_release(e, w->stack[d]);
        w->stack[d] = s;
        w->unc[d] = u;
        if (d > *maxd)
            *maxd = d;
        i++;
    }
    return GM_OK;
}

/*
 * The walk from a UTF-8 loop through its interior (note [string interiors]
 * in closed.c): the inside tokens at once, then the subtrees of the
 * frontier's live groups from the sets their steps give.
 */
static gm_status walk_interior(gm_eengine *e, gm_escratch *w, const gm_einterior *in,
                               gm_estate *const sigma[GM_EINT_STATES], const uint64_t *follow,
                               bool raw, uint32_t *acc, size_t *maxd, gm_error *err)
{
    const gm_trie *t = e->t;
    atomic_fetch_add(&e->ninterior, 1);
    for (uint32_t i = 0; i < e->words; i++)
        acc[i] |= in->acc[i];
    for (uint32_t gi = 0; gi < in->ngroups; gi++) {
        const gm_eint_group *gr = &in->groups[gi];
        gm_estate *p = sigma[gr->q], *s = NULL;
        gm_status st = GM_OK;
        if (!gm_eset_cached(e, p, gr->byte, &s))
            st = gm_eset_step_borrowed(e, w, p, gr->byte, &s, err);
        if (st != GM_OK)
            return st;
        if (!s)
            continue; /* (p did not escape: a dead node is nothing to record) */
        for (uint32_t k = gr->first; k < gr->first + gr->n; k++) {
            uint32_t f = in->front[k], d = t->nodes[f].depth;
            w->stack[d - 1] = p;
            w->unc[d - 1] = 0;
            if (d - 1 > *maxd)
                *maxd = d - 1;
            if ((st = walk_nodes(e, w, f, t->nodes[f].skip, follow, raw, NULL, acc, maxd, err)) !=
                GM_OK)
                return st;
        }
    }
    return GM_OK;
}

/*
 * Walks the whole trie from `from` (a set; depth 0): walk_nodes over every
 * node, or through the interior when `from` is a UTF-8 loop.
 */
static gm_status walk_trie(gm_eengine *e, gm_escratch *w, gm_estate *from,
                           const uint64_t *follow, bool raw, const uint64_t *skip1, uint32_t *acc,
                           gm_error *err)
{
    bool owned = (e->variant & GM_EVARIANT_NO_STATE_CACHE) != 0;
    gm_status st = GM_OK;
    size_t maxd = 0;
    w->stack[0] = from;
    w->unc[0] = 0;
    const gm_einterior *in = NULL;
    gm_estate *sigma[GM_EINT_STATES];
    bool interior = false;
    if (!owned && !skip1 && below(e))
        st = gm_einterior_of(e, w, from, &interior, sigma, err);
    if (st == GM_OK && interior)
        in = gm_excache_interior(e->x, from->loops);
    if (st == GM_OK)
        st = in ? walk_interior(e, w, in, sigma, follow, raw, acc, &maxd, err)
                : walk_nodes(e, w, 1, e->t->nnodes, follow, raw, skip1, acc, &maxd, err);
    if (owned)
        stack_release(e, w, maxd);
    else
        memset(w->stack + 1, 0, maxd * sizeof *w->stack);
    w->stack[0] = NULL;
    return st;
}

/* ---- entries ------------------------------------------------------------------ */

static uint64_t entry_key(const gm_eengine *e, uint32_t state, uint32_t count)
{
    const gm_egrammar *g = e->g;
    const gm_frule *fr = &g->rules[g->state_rule[state]];
    if (!fr->repeat)
        return (uint64_t)state << 32;
    uint32_t c = count >> 1, p = count & 1;
    if (e->variant & GM_EVARIANT_NO_REPEAT_COMPRESS)
        return (uint64_t)state << 32 | count;
    uint32_t T = e->T > 0x7fff ? 0x7fff : e->T;
    uint32_t dmin = c >= fr->rep_min ? 0 : fr->rep_min - c;
    uint32_t dmax = fr->rep_max == GM_EX_INF ? T : fr->rep_max - c;
    if (dmin > T)
        dmin = T;
    if (dmax > T)
        dmax = T;
    return (uint64_t)state << 32 | dmin << 16 | dmax << 1 | p;
}

static gm_ementry **rep_find(gm_eengine *e, uint64_t key)
{
    if (!e->rep_slots)
        return NULL;
    size_t j = gm_hash_mix64(key) & (e->rep_slots - 1);
    for (; e->rep_entries[j]; j = (j + 1) & (e->rep_slots - 1))
        if (e->rep_entries[j]->key == key)
            return &e->rep_entries[j];
    return &e->rep_entries[j];
}

static int rep_put(gm_eengine *e, gm_ementry *x)
{
    if ((e->rep_n + 1) * 2 > e->rep_slots) {
        size_t n = e->rep_slots ? e->rep_slots * 2 : 64;
        gm_ementry **t = gm_mem_calloc(e->mem, n, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < e->rep_slots; i++)
            if (e->rep_entries[i]) {
                size_t j = gm_hash_mix64(e->rep_entries[i]->key) & (n - 1);
                while (t[j])
                    j = (j + 1) & (n - 1);
                t[j] = e->rep_entries[i];
            }
        gm_mem_free(e->mem, e->rep_entries);
        e->rep_entries = t;
        e->rep_slots = n;
    }
    *rep_find(e, x->key) = x;
    e->rep_n++;
    return 0;
}

/*
 * *acc = the union of *acc and b[0..nb), both ascending without repeats
 * (entries store their uncertain nodes so; a sort of the concatenation
 * was more than half of a mask's time where a state had tens of
 * thousands). tmp is working space. 0, or -1 when out of memory.
 */
static int merge_into(gm_mem *m, gm_u32vec *acc, gm_u32vec *tmp, const uint32_t *b, uint32_t nb)
{
    if (!acc->n || acc->v[acc->n - 1] < b[0]) {
        if (gm_vec_reserve(m, acc, acc->n + nb))
            return -1;
        memcpy(acc->v + acc->n, b, (size_t)nb * sizeof *b);
        acc->n += nb;
        return 0;
    }
    if (gm_vec_reserve(m, tmp, acc->n + nb))
        return -1;
    const uint32_t *a = acc->v;
    size_t na = acc->n, i = 0, j = 0, k = 0;
    uint32_t *o = tmp->v;
    while (i < na && j < nb) {
        uint32_t x = a[i], y = b[j];
        o[k++] = x < y ? x : y;
        i += x <= y;
        j += y <= x;
    }
    while (i < na)
        o[k++] = a[i++];
    while (j < nb)
        o[k++] = b[j++];
    tmp->n = k;
    gm_u32vec t = *acc;
    *acc = *tmp;
    *tmp = t;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The smallest form of bits[0..words): *form, and in *n the ids it lists
   (FORM_LIST, FORM_NOT); the 32-bit words it takes is the result. */
static uint32_t store_form(const gm_eengine *e, const uint32_t *bits, uint8_t *form, uint32_t *n)
{
    uint32_t V = e->v->size, ones = gm_count_bits32(bits, e->words);
    uint32_t zeros = V - ones;
    if (ones <= zeros && ones < e->words) {
        *form = FORM_LIST;
        *n = ones;
        return ones;
    }
    if (zeros < e->words) {
        *form = FORM_NOT;
        *n = zeros;
        return zeros;
    }
    *form = FORM_BITS;
    *n = 0;
    return e->words;
}

/* Writes bits[0..words) in form `form` to out. */
static void store_into(const gm_eengine *e, const uint32_t *bits, uint8_t form, uint32_t *out)
{
    uint32_t V = e->v->size, words = e->words, k = 0;
    if (form == FORM_BITS) {
        memcpy(out, bits, (size_t)words * sizeof *out);
        return;
    }
    /* the ids of set bits (FORM_LIST) or clear ones (FORM_NOT), two words at a
       time, blocks without any skipped */
    uint64_t flip = form == FORM_NOT ? ~(uint64_t)0 : 0;
    for (uint32_t i = 0; i < words; i += 2) {
        if ((i & 7) == 0 && i + 8 <= words &&
            (form == FORM_NOT ? block_full(bits, i) : block_clear(bits, i))) {
            i += 6;
            continue;
        }
        uint64_t x = (uint64_t)bits[i] | (i + 1 < words ? (uint64_t)bits[i + 1] << 32 : 0);
        x ^= flip;
        if (i + 2 >= words) {
            uint32_t valid = V - i * 32; /* no id past the vocabulary */
            if (valid < 64)
                x &= ((uint64_t)1 << valid) - 1;
        }
        for (; x; x &= x - 1)
            out[k++] = i * 32 + (uint32_t)__builtin_ctzll(x);
    }
}

/* Stores bits[0..words) in the smallest form: *form, *n, a new array in *out. */
static int store_bits(gm_eengine *e, const uint32_t *bits, uint8_t *form, uint32_t *n,
                      uint32_t **out)
{
    uint32_t cnt = store_form(e, bits, form, n);
    uint32_t *a = gm_mem_alloc(e->mem, (cnt ? cnt : 1) * sizeof *a);
    if (!a)
        return -1;
    store_into(e, bits, *form, a);
    *out = a;
    return 0;
}

/* mask |= the set stored as (form, n, a). */
static void or_stored(const gm_eengine *e, uint32_t *mask, uint8_t form, uint32_t n,
                      const uint32_t *a)
{
    uint32_t V = e->v->size;
    if (form == FORM_LIST) {
        for (uint32_t i = 0; i < n; i++)
            set_bit(mask, a[i]);
    } else if (form == FORM_BITS) {
        for (uint32_t i = 0; i < e->words; i++)
            mask[i] |= a[i];
    } else {
        /* Everything but a[0..n) (ascending): whole words up to the next
           excluded id, then its word without the excluded bits. */
        uint32_t words = e->words, w = 0;
        for (uint32_t i = 0; i < n;) {
            uint32_t zw = a[i] >> 5, z = 0;
            for (; w < zw; w++)
                mask[w] = ~0u;
            if ((a[i] & 31) == 0 && i + 31 < n && a[i + 31] == a[i] + 31) {
                /* the whole word excluded (the ids ascend, distinct): a run of special
                   tokens, 800 in DeepSeek V3's vocabulary, skipped a word at a time */
                i += 32;
                w++;
                continue;
            }
            for (; i < n && a[i] >> 5 == zw; i++)
                z |= 1u << (a[i] & 31);
            mask[w++] |= ~z;
        }
        for (; w < words; w++)
            mask[w] = ~0u;
        if (V & 31)
            mask[words - 1] &= (1u << (V & 31)) - 1; /* no id past the vocabulary */
    }
}

static gm_status get_entry(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                           gm_ementry **out, gm_error *err);


enum { SIBLING_MIN_BYTES = 8, SIBLING_MAX_OTHERS = 16 };

/* Appends to w->rnodes (to_raw) or w->enodes the nodes of list[0..n) that
   lie below a one-byte node whose byte is in bytes. */
static int push_below(gm_eengine *e, gm_escratch *w, const gm_tbelow *tb, bool to_raw,
                      const uint32_t *list, uint32_t n, const uint64_t bytes[4])
{
    const gm_trie *t = e->t;
    for (uint32_t i = 0; i < n;) {
        /* the one-byte ancestor of list[i]: the last depth-1 node at or before it */
        uint32_t node = list[i], b = 0, lo = 1;
        for (uint32_t c = 0; c < 256; c++)
            if (tb->node1[c] != UINT32_MAX && tb->node1[c] <= node && tb->node1[c] >= lo) {
                lo = tb->node1[c];
                b = c;
            }
        uint32_t end = t->nodes[lo].skip;
        bool keep = (bytes[b >> 6] >> (b & 63)) & 1;
        for (; i < n && list[i] < end; i++)
            if (keep && (to_raw ? gm_vec_push(e->mem, &w->rnodes, list[i])
                                : gm_vec_push(e->mem, &w->enodes, list[i])))
                return -1;
    }
    return 0;
}

/*
 * note [sibling entries]
 * A state inside a key that must not be one of a few names, or inside an
 * unanchored pattern, goes on most bytes to one set X that loops on them
 * (the free part of the key, the pattern's start). Below every first byte
 * b after which the seed and X are in the same set (X itself, or the same
 * set in the middle of a multi-byte character), the seed's walk visits
 * exactly what X's own walk visits. When X is the seed set of another
 * entry, the entry is derived from X's: X's tokens and uncertain nodes
 * below those first bytes, minus what X takes below the other bytes, plus
 * a walk of the seed below the other bytes only. Exact: below such a b both
 * walks are in one set with the same uncertainty (same follow set, same
 * escape flag), so they find the same.
 */
static gm_status derive_from_sibling(gm_eengine *e, gm_escratch *w, gm_estate *seed,
                                     uint32_t state, bool raw, bool *done, gm_error *err)
{
    const gm_egrammar *g = e->g;
    const gm_trie *t = e->t;
    const gm_tbelow *tb = below(e);
    *done = false;
    /* (one level: the sibling's own entry, built below, is walked) */
    if (!tb || !seed->interned || w->deriving || (e->variant & GM_EVARIANT_NO_STATE_CACHE))
        return GM_OK;
    /* The successor most one-byte nodes lead to. */
    gm_estate *succ[256];
    gm_estate *x = NULL;
    uint32_t best = 0, n1 = 0;
    for (uint32_t b = 0; b < 256; b++) {
        succ[b] = NULL;
        if (tb->node1[b] == UINT32_MAX)
            continue;
        n1++;
        gm_status st = gm_eset_step_borrowed(e, w, seed, (uint8_t)b, &succ[b], err);
        if (st != GM_OK)
            return st;
    }
    /* (a few distinct successors at most matter: count them in a short list) */
    gm_estate *cand[8];
    uint32_t cnt[8], ncand = 0;
    for (uint32_t b = 0; b < 256; b++) {
        if (!succ[b] || succ[b] == seed)
            continue;
        uint32_t k = 0;
        while (k < ncand && cand[k] != succ[b])
            k++;
        if (k == ncand) {
            if (ncand == 8)
                continue;
            cand[ncand] = succ[b];
            cnt[ncand++] = 0;
        }
        if (++cnt[k] > best) {
            best = cnt[k];
            x = cand[k];
        }
    }
    if (best < 2 || !x->interned ||
        ((seed->flags ^ x->flags) & GM_ES_ESCAPED))
        return GM_OK;
    /* x must be the seed set of an entry whose rule has the seed's follow set. */
    const gm_eitem *si = NULL;
    for (uint32_t i = 0; i < x->nitems; i++)
        if (x->items[i].origin == e->outer) {
            if (si)
                return GM_OK;
            si = &x->items[i];
        }
    if (!si)
        return GM_OK;
    uint32_t q2 = si->state, c2 = si->count;
    if (memcmp(g->rules[g->state_rule[q2]].follow, g->rules[g->state_rule[state]].follow,
               sizeof g->rules[0].follow))
        return GM_OK;
    gm_estate *s2 = NULL;
    gm_status st = gm_eset_seed(e, w, q2, c2, e->outer, &s2, err);
    if (st != GM_OK)
        return st;
    bool same = s2 == x;
    gm_estate_release(e, s2);
    if (!same)
        return GM_OK;
    /* B: first bytes after which the seed and x are in the same set (x loops
       on most); Z: the others x lives on. */
    uint64_t in_b[4] = {0, 0, 0, 0};
    uint32_t zs[SIBLING_MAX_OTHERS], nz = 0, nb = 0;
    for (uint32_t b = 0; b < 256; b++) {
        if (tb->node1[b] == UINT32_MAX)
            continue;
        gm_estate *tx;
        if ((st = gm_eset_step_borrowed(e, w, x, (uint8_t)b, &tx, err)) != GM_OK)
            return st;
        if (tx && succ[b] == tx) {
            in_b[b >> 6] |= (uint64_t)1 << (b & 63);
            nb++;
        } else if (tx) {
            if (nz == SIBLING_MAX_OTHERS)
                return GM_OK;
            zs[nz++] = b;
        }
    }
    /* worth it when most first bytes are x's */
    if (nb < SIBLING_MIN_BYTES || nb * 2 < n1)
        return GM_OK;
    /* x's entry (built now when missing: nothing of this walk is under way yet). */
    size_t nkey = w->key.n;
    uint32_t *saved_key = NULL;
    if (nkey && !(saved_key = gm_mem_alloc(e->mem, nkey * sizeof *saved_key)))
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    if (nkey)
        memcpy(saved_key, w->key.v, nkey * sizeof *saved_key);
    gm_ementry *ex;
    w->deriving = true;
    st = get_entry(e, w, q2, c2, &ex, err);
    w->deriving = false;
    if (nkey && gm_vec_reserve(e->mem, &w->key, nkey))
        st = st == GM_OK ? gm_mem_fail(e->mem, err, "the token-mask cache") : st;
    else if (nkey)
        memcpy(w->key.v, saved_key, nkey * sizeof *saved_key);
    w->key.n = st == GM_OK ? nkey : 0;
    gm_mem_free(e->mem, saved_key);
    if (st != GM_OK)
        return st;
    if (raw && !ex->raw)
        return GM_OK;
    memset(w->bits, 0, (size_t)e->words * sizeof *w->bits);
    or_stored(e, w->bits, ex->form, ex->nacc, ex->acc);
    for (uint32_t k = 0; k < nz; k++) {
        uint32_t n = tb->node1[zs[k]];
        for (uint32_t j = t->nodes[n].tok_begin; j < t->nodes[t->nodes[n].skip - 1].tok_end; j++)
            w->bits[t->tokens[j] >> 5] &= ~(1u << (t->tokens[j] & 31));
    }
    w->enodes.n = 0;
    w->rnodes.n = 0;
    if (push_below(e, w, tb, false, ex->unc, ex->nunc, in_b) ||
        (raw && push_below(e, w, tb, true, ex->raw, ex->nraw, in_b)))
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    size_t n_unc = w->enodes.n, n_raw = w->rnodes.n;
    if ((st = walk_trie(e, w, seed, g->rules[g->state_rule[state]].follow, raw, in_b, w->bits,
                        err)) != GM_OK)
        return st;
    if (w->enodes.n > n_unc)
        qsort(w->enodes.v, w->enodes.n, sizeof *w->enodes.v, cmp_u32);
    if (w->rnodes.n > n_raw)
        qsort(w->rnodes.v, w->rnodes.n, sizeof *w->rnodes.v, cmp_u32);
    *done = true;
    atomic_fetch_add(&e->nderived, 1);
    return GM_OK;
}

/* Walks the trie from the seed (state, count): accepted tokens in w->bits,
   uncertain nodes in w->enodes, raw-uncertain ones in w->rnodes when `raw`. */
static gm_status walk_seed(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count, bool raw,
                           gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_estate *seed = NULL;
    gm_status st = gm_eset_seed(e, w, state, count, e->outer, &seed, err);
    if (st != GM_OK)
        return st;
    bool done = false;
    if (seed && (st = derive_from_sibling(e, w, seed, state, raw, &done, err)) != GM_OK) {
        gm_estate_release(e, seed);
        return st;
    }
    if (!done) {
        memset(w->bits, 0, (size_t)e->words * sizeof *w->bits);
        w->enodes.n = 0;
        w->rnodes.n = 0;
        if (seed)
            st = walk_trie(e, w, seed, g->rules[g->state_rule[state]].follow, raw, NULL, w->bits,
                           err);
    }
    gm_estate_release(e, seed);
    return st;
}

/* An entry owning copies of w->bits (stored) and w->enodes. */
static gm_status own_entry(gm_eengine *e, gm_escratch *w, uint64_t key, gm_ementry **out,
                           gm_error *err)
{
    gm_ementry *x = gm_mem_calloc(e->mem, 1, sizeof *x);
    if (!x)
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    x->key = key;
    /* Walk order is pre-order: nodes come out ascending already. */
    x->nunc = (uint32_t)w->enodes.n;
    x->unc = gm_mem_alloc(e->mem, (w->enodes.n ? w->enodes.n : 1) * sizeof *x->unc);
    if (!x->unc || store_bits(e, w->bits, &x->form, &x->nacc, &x->acc)) {
        entry_free(e, x);
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    }
    if (w->enodes.n)
        memcpy(x->unc, w->enodes.v, w->enodes.n * sizeof *x->unc);
    if (e->x) {
        /* kept for entries derived from this one (note [sibling entries]) */
        x->nraw = (uint32_t)w->rnodes.n;
        x->raw = gm_mem_alloc(e->mem, (w->rnodes.n ? w->rnodes.n : 1) * sizeof *x->raw);
        if (!x->raw) {
            entry_free(e, x);
            return gm_mem_fail(e->mem, err, "the token-mask cache");
        }
        if (w->rnodes.n)
            memcpy(x->raw, w->rnodes.v, w->rnodes.n * sizeof *x->raw);
    }
    *out = x;
    return GM_OK;
}

static gm_status borrowed_entry(gm_eengine *e, const gm_xhit *h, uint64_t key, gm_ementry **out,
                                gm_error *err)
{
    gm_ementry *x = gm_mem_calloc(e->mem, 1, sizeof *x);
    if (!x)
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    x->key = key;
    x->borrowed = 1;
    x->form = h->form;
    x->nacc = h->nacc;
    x->acc = (uint32_t *)h->acc;
    x->nunc = h->nunc;
    x->unc = (uint32_t *)h->unc;
    x->nraw = h->nraw;
    x->raw = (uint32_t *)h->raw;
    *out = x;
    return GM_OK;
}

/*
 * Walks the tokens of the trie nodes nodes[0..n) (ascending) from `from`,
 * prefixes shared, each step a transition lookup. Without follow (a real
 * set): sets in mask the tokens that `from` accepts, skipping nodes whose
 * tokens are set already. With follow (an outer seed, a partial hit of the
 * cross-grammar cache): pushes to w->enodes the nodes whose walk completed
 * the seed's rule before a byte in follow (note [cross-grammar hashing]).
 */
static gm_status walk_list(gm_eengine *e, gm_escratch *w, gm_estate *from, const uint32_t *nodes,
                           size_t n, const uint64_t *follow, uint32_t *mask, gm_error *err)
{
    const gm_trie *t = e->t;
    bool owned = (e->variant & GM_EVARIANT_NO_STATE_CACHE) != 0;
    gm_status st = GM_OK;
    const uint8_t *prev = NULL;
    size_t prevlen = 0, valid = 0, maxd = 0;
    w->stack[0] = from;
    w->unc[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const gm_trie_node *nd = &t->nodes[nodes[i]];
        if (!follow && get_bit(mask, t->tokens[nd->tok_begin]))
            continue;
        size_t len;
        const uint8_t *bytes = gm_vocab_data_token(e->v, t->tokens[nd->tok_begin], &len);
        size_t l = 0, lim = valid < len ? valid : len;
        if (lim > prevlen)
            lim = prevlen;
        while (l < lim && prev[l] == bytes[l])
            l++;
        size_t d = l;
        uint8_t unc = w->unc[d];
        while (d < len) {
            gm_estate *p = w->stack[d], *nx = NULL;
            if (!p)
                break;
            if (follow && (p->flags & GM_ES_ESCAPED) &&
                ((follow[bytes[d] >> 6] >> (bytes[d] & 63)) & 1))
                unc = 1;
            if (owned)
                st = gm_eset_step(e, w, p, bytes[d], &nx, err);
            else if (!gm_eset_cached(e, p, bytes[d], &nx))
                st = gm_eset_step_borrowed(e, w, p, bytes[d], &nx, err);
            if (st != GM_OK)
                goto out;
            if (owned)
                gm_estate_release(e, w->stack[d + 1]);
            w->stack[d + 1] = nx;
            w->unc[d + 1] = unc;
            d++;
            if (d > maxd)
                maxd = d;
            if (!nx)
                break;
        }
        valid = d;
        prev = bytes;
        prevlen = len;
        if (!follow) {
            if (d == len && w->stack[len])
                set_node_tokens(t, nodes[i], mask);
        } else if (unc && gm_vec_push(e->mem, &w->enodes, nodes[i])) {
            st = gm_mem_fail(e->mem, err, "the token-mask cache");
            goto out;
        }
    }
out:
    if (owned)
        stack_release(e, w, maxd);
    else
        memset(w->stack + 1, 0, maxd * sizeof *w->stack);
    w->stack[0] = NULL;
    return st;
}

/* A partial hit: the raw-uncertain nodes walked again from the seed with
   this grammar's follow set; the uncertain ones go to w->enodes. */
static gm_status filter_raw(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                            const uint32_t *raw, uint32_t nraw, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_estate *seed = NULL;
    gm_status st = gm_eset_seed(e, w, state, count, e->outer, &seed, err);
    w->enodes.n = 0;
    if (st != GM_OK || !seed)
        return st;
    st = walk_list(e, w, seed, raw, nraw, g->rules[g->state_rule[state]].follow, NULL, err);
    gm_estate_release(e, seed);
    return st;
}

static gm_status build_entry(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                             uint64_t key, gm_ementry **out, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_status st;
    gm_ementry *x = NULL;
    if (e->x) {
        const uint64_t *follow = g->rules[g->state_rule[state]].follow;
        if ((st = gm_exkey(e, w, state, key, err)) != GM_OK)
            return st;
        gm_xhit h;
        if (w->key.n && gm_excache_lookup(e->x, w->key.v, (uint32_t)w->key.n, follow, &h)) {
            if (!h.perfect) {
                if ((st = filter_raw(e, w, state, count, h.raw, h.nraw, err)) != GM_OK)
                    return st;
                const uint32_t *stored;
                if (gm_excache_add_follow(e->x, h.entry, follow, w->enodes.v,
                                          (uint32_t)w->enodes.n, &stored))
                    return gm_mem_fail(e->mem, err, "the cross-grammar cache");
                h.nunc = (uint32_t)w->enodes.n;
                h.unc = stored;
            }
            if ((st = borrowed_entry(e, &h, key, &x, err)) != GM_OK)
                return st;
            atomic_fetch_add(&e->ncross, 1);
        } else {
            if ((st = walk_seed(e, w, state, count, true, err)) != GM_OK)
                return st;
            uint8_t form;
            uint32_t nacc, *acc;
            if (store_bits(e, w->bits, &form, &nacc, &acc))
                return gm_mem_fail(e->mem, err, "the token-mask cache");
            uint32_t nwords = form == FORM_BITS ? e->words : nacc;
            if (w->key.n &&
                !gm_excache_put(e->x, w->key.v, (uint32_t)w->key.n, form, acc, nwords, nacc,
                                w->rnodes.v, (uint32_t)w->rnodes.n, follow, w->enodes.v,
                                (uint32_t)w->enodes.n, &h)) {
                gm_mem_free(e->mem, acc);
                if ((st = borrowed_entry(e, &h, key, &x, err)) != GM_OK)
                    return st;
            } else {
                gm_mem_free(e->mem, acc);
                if ((st = own_entry(e, w, key, &x, err)) != GM_OK)
                    return st;
            }
        }
    } else {
        if ((st = walk_seed(e, w, state, count, false, err)) != GM_OK ||
            (st = own_entry(e, w, key, &x, err)) != GM_OK)
            return st;
    }
    atomic_fetch_add(&e->cache_bytes, entry_bytes(e, x));
    atomic_fetch_add(&e->nentries, 1);
    atomic_fetch_add(&e->nuncertain, x->nunc);
    *out = x;
    return GM_OK;
}

/* The entry of (state, count), built when missing. The lock is held. */
static gm_status get_entry(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                           gm_ementry **out, gm_error *err)
{
    uint64_t key = entry_key(e, state, count);
    bool rep = e->g->rules[e->g->state_rule[state]].repeat;
    if (!rep) {
        gm_ementry *x = atomic_load_explicit(&e->entry[state], memory_order_acquire);
        if (x) {
            *out = x;
            return GM_OK;
        }
    } else {
        gm_ementry **slot = rep_find(e, key);
        if (slot && *slot) {
            *out = *slot;
            return GM_OK;
        }
    }
    gm_ementry *x = NULL;
    gm_status st = build_entry(e, w, state, count, key, &x, err);
    if (st != GM_OK)
        return st;
    if (!rep) {
        atomic_store_explicit(&e->entry[state], x, memory_order_release);
    } else if (rep_put(e, x)) {
        entry_free(e, x);
        return gm_mem_fail(e->mem, err, "the token-mask cache");
    }
    *out = x;
    return GM_OK;
}

/* Whether an item of s seeds its mask (note [token-mask cache]). */
static bool is_seed(const gm_eengine *e, const gm_estate *s, const gm_eitem *it)
{
    const gm_egrammar *g = e->g;
    if (!(g->state_flags[it->state] & (GM_FS_SCANS | GM_FS_WAITS)))
        return false;
    if (it->origin)
        return true;
    return (s->flags & GM_ES_START) && it->state == g->rules[g->root].start;
}

gm_status gm_emask_build_all(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    gm_status st = scratch_ready(e, w, err);
    if (st != GM_OK)
        return st;
    const gm_egrammar *g = e->g;
    for (uint32_t s = 0; s < g->nstates; s++) {
        if (g->rules[g->state_rule[s]].repeat ||
            !(g->state_flags[s] & (GM_FS_SCANS | GM_FS_WAITS)))
            continue;
        gm_ementry *x;
        if ((st = get_entry(e, w, s, 0, &x, err)) != GM_OK)
            return st;
    }
    return GM_OK;
}

static void add_specials(gm_eengine *e, gm_estate *s, uint32_t *mask)
{
    const gm_egrammar *g = e->g;
    if (s->flags & GM_ES_ACCEPTING)
        for (uint32_t i = 0; i < e->v->neos; i++)
            set_bit(mask, e->v->eos[i]);
    for (uint32_t i = 0; i < s->nitems; i++) {
        uint32_t q = s->items[i].state;
        if (!(g->state_flags[q] & GM_FS_TOKENS))
            continue;
        for (uint32_t j = g->tok_off[q]; j < g->tok_off[q + 1]; j++) {
            uint32_t sym = g->toks[j].sym;
            for (uint32_t k = e->sym_off[sym]; k < e->sym_off[sym + 1]; k++)
                set_bit(mask, e->sym_ids[k]);
        }
    }
}

static void expand_memo(const gm_eengine *e, const memo *mo, uint32_t *mask)
{
    memset(mask, 0, (size_t)e->words * sizeof *mask);
    or_stored(e, mask, mo->form, mo->n, mo->v);
}

/*
 * Whether s holds an item of a bounded repetition: its counter makes s
 * unlikely to come back (the next iteration is another set), so its mask
 * is not worth keeping.
 */
static bool counts_up(const gm_eengine *e, const gm_estate *s)
{
    const gm_egrammar *g = e->g;
    for (uint32_t i = 0; i < s->nitems; i++) {
        const gm_frule *fr = &g->rules[g->state_rule[s->items[i].state]];
        if (fr->repeat && fr->rep_max != GM_EX_INF && s->items[i].origin)
            return true;
    }
    return false;
}

/* Memoizes mask on s (under the memory budget; a lost race frees ours). */
static void put_memo(gm_eengine *e, gm_estate *s, const uint32_t *mask)
{
    if (atomic_load(&e->memo_bytes) > e->memo_budget)
        return;
    uint8_t form;
    uint32_t n, cnt = store_form(e, mask, &form, &n);
    memo *mo = gm_mem_alloc(e->mem, sizeof *mo + (size_t)cnt * 4);
    if (!mo)
        return;
    mo->form = form;
    mo->n = cnt;
    store_into(e, mask, form, mo->v);
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&s->memo, &expected, mo))
        atomic_fetch_add(&e->memo_bytes, sizeof *mo + (size_t)cnt * 4);
    else
        gm_mem_free(e->mem, mo);
}

bool gm_emask_memo(gm_eengine *e, gm_estate *s, uint32_t *mask)
{
    const memo *mo = atomic_load_explicit(&s->memo, memory_order_acquire);
    if (!mo)
        return false;
    if (mo->form == FORM_BITS) {
        memcpy(mask, mo->v, (size_t)e->words * sizeof *mask);
        return true;
    }
    expand_memo(e, mo, mask);
    return true;
}

gm_status gm_emask_fill(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t *mask,
                        gm_error *err)
{
    gm_status st = scratch_ready(e, w, err);
    if (st != GM_OK)
        return st;
    memset(mask, 0, (size_t)e->words * sizeof *mask);
    w->nodes.n = 0;
    if (e->variant & GM_EVARIANT_NO_MASK_CACHE) {
        if ((st = walk_trie(e, w, s, NULL, false, NULL, mask, err)) != GM_OK)
            return st;
    } else {
        for (uint32_t i = 0; i < s->nitems; i++) {
            const gm_eitem *it = &s->items[i];
            if (!is_seed(e, s, it))
                continue;
            gm_ementry *x;
            if ((st = get_entry(e, w, it->state, it->count, &x, err)) != GM_OK)
                return st;
            or_stored(e, mask, x->form, x->nacc, x->acc);
            if (x->nunc && merge_into(e->mem, &w->nodes, &w->merged, x->unc, x->nunc))
                return gm_mem_fail(e->mem, err, "mask buffers");
        }
        if (w->nodes.n &&
            (st = walk_list(e, w, s, w->nodes.v, w->nodes.n, NULL, mask, err)) != GM_OK)
            return st;
    }
    add_specials(e, s, mask);
    if (!(e->variant & GM_EVARIANT_NO_STATE_CACHE) && !counts_up(e, s))
        put_memo(e, s, mask);
    return GM_OK;
}
