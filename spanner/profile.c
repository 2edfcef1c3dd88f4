/*
 * Profile construction: one pre-order walk of the vocabulary trie from
 * lexer state q, pruned where the transducer rejects.
 *
 * note [profile walk]
 * While a token's bytes keep extending the pending lexeme, the walk follows
 * the DFA (one state per trie depth, shared by every token below). The first
 * byte without a transition splits the token: at depth 1 the whole subtree
 * goes to the first-byte split filter (note [first-byte split]); deeper, the
 * lexeme ends there with terminal accept(r), and each token of the subtree
 * is finished by lexing its remaining bytes from the start state. Those
 * deep-split tokens are few in practice (BPE pre-tokenization keeps words
 * and punctuation apart), so finishing them one by one costs little.
 */
#include "spanner/profile.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"
#include "spanner/tokpool.h"
#include "spanner/walkshare.h"

typedef GM_VEC(uint32_t) u32vec;

typedef struct builder {
    const gm_spanner *sp;
    gm_mem *mem;
    gm_intern keys;          /* class key [prod, E...] -> class id */
    uint32_t *class_of;      /* [slots] class of each token, read only where touched */
    uint64_t *touched;       /* [slots bits] the tokens added: a profile holds a few of a
                                vocabulary's tokens, and a scan of every slot per profile was
                                half an eager compile's instructions */
    const uint32_t *ids;     /* suffix profiles: the tokens (sorted), whose positions are the
                                slots; NULL: every token id is its own slot */
    uint32_t nslots;         /* vocabulary size, or the number of ids */
    uint32_t *stay_class;    /* [nprods] class of (empty E, prod), or UINT32_MAX */
    uint32_t ntokens;
    u32vec key;              /* scratch key */
    u32vec seq;              /* scratch sequence of finish_token */
    gm_walk_breaks *record;  /* set: the walk records its deep breaks here instead of
                                finishing them (note [shared walks]) */
    GM_VEC(const gm_tokset *) premade; /* [class id] pooled tokens of a class that a shared
                                          walk brought whole (not in touched), or NULL */
    uint32_t npremade;       /* their tokens */
} builder;

/* The slot of a token in class_of. */
static uint32_t slot_of(const builder *b, uint32_t token)
{
    if (!b->ids)
        return token;
    uint32_t lo = 0, hi = b->nslots;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->ids[mid] < token)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The token of a slot. */
static uint32_t token_of(const builder *b, uint32_t slot)
{
    return b->ids ? b->ids[slot] : slot;
}

/* Tokens with identical bytes share a trie node: each token is added once. */
static int add_token(builder *b, uint32_t token, uint32_t prod, const uint32_t *seq, uint32_t len)
{
    token = slot_of(b, token);
    b->touched[token >> 6] |= 1ull << (token & 63);
    if (len == 0 && b->stay_class[prod] != UINT32_MAX) {
        b->class_of[token] = b->stay_class[prod];
        b->ntokens++;
        return 0;
    }
    b->key.n = 0;
    if (gm_vec_reserve(b->mem, &b->key, (size_t)len + 1))
        return -1;
    b->key.v[0] = prod;
    if (len)
        memcpy(b->key.v + 1, seq, (size_t)len * sizeof(uint32_t));
    uint32_t id;
    if (gm_intern_put(&b->keys, b->key.v, ((size_t)len + 1) * sizeof(uint32_t), &id, NULL))
        return -1;
    if (len == 0)
        b->stay_class[prod] = id;
    b->class_of[token] = id;
    b->ntokens++;
    return 0;
}

/* Appends v[0..n) to the builder's scratch sequence. */
static int seq_append(builder *b, const uint32_t *v, uint32_t n)
{
    if (gm_vec_reserve(b->mem, &b->seq, b->seq.n + n))
        return -1;
    for (uint32_t k = 0; k < n; k++)
        b->seq.v[b->seq.n++] = v[k];
    return 0;
}

/* add_token for every token of the trie subtree at node i. */
static int add_subtree(builder *b, uint32_t i, uint32_t prod, const uint32_t *seq, uint32_t len)
{
    const gm_trie *tr = b->sp->trie;
    for (uint32_t j = i; j < tr->nodes[i].skip; j++)
        for (uint32_t k = tr->nodes[j].tok_begin; k < tr->nodes[j].tok_end; k++)
            if (add_token(b, tr->tokens[k], prod, seq, len))
                return -1;
    return 0;
}

/*
 * Finishes a token the walk could not share: its lexeme ended (or a
 * virtual start state emitted) with elements pre[0..npre), leaving state q
 * before byte `from`; lex the rest one by one. Returns 1 when the token is
 * lexically possible (class recorded), 0 when it is not, -1 on no memory.
 */
static int finish_token(builder *b, uint32_t token, size_t from, const uint32_t *pre,
                        uint32_t npre, uint32_t q)
{
    const gm_spanner *sp = b->sp;
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(sp->vocab, token, &len);
    u32vec *seq = &b->seq;
    seq->n = 0;
    if (seq_append(b, pre, npre))
        return -1;
    for (size_t i = from; i < len; i++) {
        uint32_t next, emit[GM_SPANNER_MAX_EMIT], nemit;
        if (!gm_spanner_step(sp, q, bytes[i], &next, emit, &nemit)) {
            /* A contextual spanner keeps it when another lexer may take over. */
            if (!sp->contextual || seq->n + nemit == 0)
                return 0;
            if (seq_append(b, emit, nemit))
                return -1;
            return add_token(b, token, GM_PROD_SWITCH, seq->v, (uint32_t)seq->n) ? -1 : 1;
        }
        if (seq_append(b, emit, nemit))
            return -1;
        q = next;
    }
    return add_token(b, token, gm_spanner_prod(sp, q), seq->v, (uint32_t)seq->n) ? -1 : 1;
}

/*
 * finish_token for every token of the trie subtree at node i, as a walk of
 * the subtree: a rest's bytes shared by many tokens (the subtree's paths)
 * are stepped once, not once per token. `from` is node i's depth (its own
 * tokens end there; the rest starts with its children) or one less (the
 * rest starts with node i's byte). fin_state and fin_len (max depth + 1
 * entries) hold, along the walk's path, the state after each depth and the
 * length of the sequence so far.
 */
static int finish_subtree(builder *b, uint32_t i, size_t from, const uint32_t *pre, uint32_t npre,
                          uint32_t q, uint32_t *fin_state, uint32_t *fin_len)
{
    const gm_spanner *sp = b->sp;
    const gm_trie *tr = sp->trie;
    u32vec *seq = &b->seq;
    seq->n = 0;
    if (seq_append(b, pre, npre))
        return -1;
    fin_state[from] = q;
    fin_len[from] = npre;
    uint32_t j = i, end = tr->nodes[i].skip;
    if (tr->nodes[i].depth == from) {
        for (uint32_t k = tr->nodes[i].tok_begin; k < tr->nodes[i].tok_end; k++)
            if (add_token(b, tr->tokens[k], gm_spanner_prod(sp, q), seq->v, (uint32_t)seq->n))
                return -1;
        j++;
    }
    while (j < end) {
        const gm_trie_node *nd = &tr->nodes[j];
        uint32_t next, emit[GM_SPANNER_MAX_EMIT], nemit;
        bool ok = gm_spanner_step(sp, fin_state[nd->depth - 1], nd->byte, &next, emit, &nemit);
        seq->n = fin_len[nd->depth - 1];
        /* A contextual spanner keeps the tokens a lexer may take over after an element. */
        if (!ok && (!sp->contextual || seq->n + nemit == 0)) {
            j = nd->skip;
            continue;
        }
        if (seq_append(b, emit, nemit))
            return -1;
        if (!ok) {
            if (add_subtree(b, j, GM_PROD_SWITCH, seq->v, (uint32_t)seq->n))
                return -1;
            j = nd->skip;
            continue;
        }
        fin_state[nd->depth] = next;
        fin_len[nd->depth] = (uint32_t)seq->n;
        for (uint32_t k = nd->tok_begin; k < nd->tok_end; k++)
            if (add_token(b, tr->tokens[k], gm_spanner_prod(sp, next), seq->v, (uint32_t)seq->n))
                return -1;
        j++;
    }
    return 0;
}

/*
 * note [relative line widths]
 * A profile serves every width of its lexer state (gm_spanner_profile_state),
 * so the walk starts at width 0 and tracks widths relative to the state's
 * real pending width until the token's own bytes hold a line break inside
 * that lexeme (then they are absolute). A line end the token completes is
 * recorded as GM_SEQ_LINE_REL | k or GM_SEQ_LINE | w accordingly; widths
 * only matter for lexer states that can still become the layer's _NEWLINE.
 */
GM_SPANNER_HOT int walk_moving(builder *b, uint32_t q0, bool patched)
{
    const gm_spanner *sp = b->sp;
    /* A copy the compiler can keep in registers: the byte stores below may alias the lexer. */
    const gm_lexer lexer = *sp->lexer, *lx = &lexer;
    const gm_trie *tr = sp->trie;
    /* state, then finish_subtree's fin_state and fin_len: max depth + 1 entries each */
    uint32_t *state = gm_mem_alloc(b->mem, 3 * ((size_t)tr->max_depth + 1) * sizeof(uint32_t));
    uint8_t *absolute = gm_mem_alloc(b->mem, (size_t)tr->max_depth + 1);
    if (!state || !absolute)
        goto nomem;
    uint32_t *fin_state = state + tr->max_depth + 1, *fin_len = fin_state + tr->max_depth + 1;
    state[0] = q0;
    absolute[0] = 0;
    uint32_t i = 1;
    while (i < tr->nnodes) {
        const gm_trie_node *nd = &tr->nodes[i];
        uint32_t r = state[nd->depth - 1];
        uint32_t next = GM_LEX_DEAD, emit[GM_SPANNER_MAX_EMIT], nemit = 0;
        if (r < sp->nlex) {
            /* Inside one lexeme the layers' state rides along (widths grow). */
            uint32_t slot = gm_spanner_lex_slot(sp, r);
            uint32_t dfa = slot >> sp->flag_bits, cls = lx->byte_class[nd->byte];
            uint32_t n = patched ? gm_lexer_move_patched(lx, dfa, cls) : gm_lexer_move_plain(lx, dfa, cls);
            if (n != GM_LEX_DEAD)
                gm_spanner_enter(sp, n, slot, r, nd->byte, &next);
            absolute[nd->depth] = absolute[nd->depth - 1] || nd->byte == '\n';
        } else {
            /* A virtual start state: a space is stripped, else lexing starts (widths absolute). */
            if (!gm_spanner_step(sp, r, nd->byte, &next, emit, &nemit)) {
                next = GM_LEX_DEAD;
                if (sp->contextual && nemit && add_subtree(b, i, GM_PROD_SWITCH, emit, nemit))
                    goto nomem;
            }
            absolute[nd->depth] = 1;
        }
        if (next != GM_LEX_DEAD && nemit) {
            /* Lexing started with a lexeme ended: the tokens below part ways. */
            if (finish_subtree(b, i, nd->depth, emit, nemit, next, fin_state, fin_len))
                goto nomem;
            i = nd->skip;
            continue;
        }
        if (next != GM_LEX_DEAD) {
            state[nd->depth] = next;
            for (uint32_t k = nd->tok_begin; k < nd->tok_end; k++)
                if (add_token(b, tr->tokens[k], gm_spanner_prod(sp, next), NULL, 0))
                    goto nomem;
            i++;
            continue;
        }
        /* The lexeme ends before this byte; deeper than the first byte, finish each token
         * (at the first byte too when the first-byte filters are switched off, or for a
         * backtracking state, which has none: its lexeme resumes in the re-lexed window). */
        uint32_t after;
        bool deep = nd->depth > 1 || (sp->variant & GM_VARIANT_NO_SPLIT0) ||
                    (r < sp->nlex && gm_spanner_dfa(sp, r) >= lx->ndfa);
        if (deep && r < sp->nlex && gm_spanner_pending(sp, r) &&
            gm_spanner_break(sp, r, lx->byte_class[nd->byte], &emit[0], &after)) {
            nemit = emit[0] != GM_LEX_NONE;
            if (nemit && (emit[0] & GM_SEQ_LINE) && !absolute[nd->depth - 1])
                emit[0] = GM_SEQ_LINE_REL | GM_SEQ_WIDTH(emit[0]);
            if (b->record) {
                gm_walk_break br = {i, nemit ? emit[0] : GM_LEX_NONE, gm_spanner_flag(sp, after)};
                if (gm_vec_push(b->mem, b->record, br))
                    goto nomem;
            } else if (finish_subtree(b, i, (size_t)nd->depth - 1, emit, nemit, after, fin_state,
                                      fin_len)) {
                goto nomem;
            }
        }
        i = nd->skip;
    }
    gm_mem_free(b->mem, state);
    gm_mem_free(b->mem, absolute);
    return 0;
nomem:
    gm_mem_free(b->mem, state);
    gm_mem_free(b->mem, absolute);
    return -1;
}

/* The walk, compiled apart for lexers with patch cells and without (gm_lexer_move). */
static int walk(builder *b, uint32_t q0)
{
    return b->sp->lexer->patch ? walk_moving(b, q0, true) : walk_moving(b, q0, false);
}

/*
 * The builder's tokens bucketed by class (by rank[class] when rank is not
 * NULL): bucket r is sorted[start[r], start[r + 1]). start holds nclasses + 1
 * zeros on entry. Scanning ids upwards leaves each bucket sorted.
 */
static void bucket_tokens(const builder *b, const uint32_t *rank, uint32_t nclasses,
                          uint32_t *start, uint32_t *sorted)
{
    size_t words = ((size_t)b->nslots + 63) / 64;
    for (size_t w = 0; w < words; w++)
        for (uint64_t x = b->touched[w]; x; x &= x - 1) {
            uint32_t c = b->class_of[w * 64 + (size_t)__builtin_ctzll(x)];
            start[(rank ? rank[c] : c) + 1]++;
        }
    for (uint32_t r = 0; r < nclasses; r++)
        start[r + 1] += start[r];
    for (size_t w = 0; w < words; w++)
        for (uint64_t x = b->touched[w]; x; x &= x - 1) {
            uint32_t t = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x)), c = b->class_of[t];
            sorted[start[rank ? rank[c] : c]++] = token_of(b, t);
        }
    for (uint32_t r = nclasses; r > 0; r--)
        start[r] = start[r - 1];
    start[0] = 0;
}

/* The pooled set of sorted tokens toks[0..n), in the form the spanner's variant asks for. */
static const gm_tokset *pooled_set(const gm_spanner *sp, gm_mem *m, const uint32_t *toks,
                                   uint32_t n)
{
    gm_tokset set;
    int rc = sp->variant & GM_VARIANT_LISTS_ONLY ? gm_tokset_list_from_sorted(m, &set, toks, n)
                                                 : gm_tokset_from_sorted(m, &set, toks, n, sp->nbits);
    /* Profiles of other states and lexers mostly hold the same sets: pooled (note
     * [shared token sets]), and counted with the pool. */
    return rc ? NULL : gm_tokpool_adopt(sp->pool, &set);
}

/* gm_tokset_foreach into an array. */
typedef struct collect {
    uint32_t *ids;
    uint32_t n;
} collect;

static int collect_id(void *ud, uint32_t id)
{
    collect *c = ud;
    c->ids[c->n++] = id;
    return 0;
}

/* The pooled union of set and sorted toks[0..n) (disjoint). */
static const gm_tokset *merged_set(const gm_spanner *sp, gm_mem *m, const gm_tokset *set,
                                   const uint32_t *toks, uint32_t n)
{
    uint32_t total = set->count + n;
    uint32_t *ids = gm_mem_alloc(m, 2 * (size_t)total * sizeof *ids);
    if (!ids)
        return NULL;
    collect c = {ids + total, 0};
    gm_tokset_foreach(set, sp->nbits, collect_id, &c);
    uint32_t i = 0, j = 0, k = 0;
    while (i < c.n || j < n)
        ids[k++] = j == n || (i < c.n && c.ids[i] < toks[j]) ? c.ids[i++] : toks[j++];
    const gm_tokset *out = pooled_set(sp, m, ids, total);
    gm_mem_free(m, ids);
    return out;
}

/* ---- walks shared between contextual spanners (spanner/walkshare.h, note [shared walks]) ---- */

/* The template of a walk just recorded: the builder holds only the staying tokens. */
static gm_walk_template *make_template(builder *b, const gm_walk_break *breaks, size_t nbreaks)
{
    const gm_spanner *sp = b->sp;
    gm_mem *m = b->mem;
    uint32_t nclasses = b->keys.count;
    size_t nprods = 0;
    for (uint32_t c = 0; c < nclasses; c++) {
        size_t len;
        uint32_t p = *(const uint32_t *)gm_intern_key(&b->keys, c, &len);
        nprods += 2 + sp->prod_off[p + 1] - sp->prod_off[p];
    }
    gm_walk_template *t = gm_mem_calloc(m, 1, sizeof *t);
    uint32_t *start = gm_mem_calloc(m, (size_t)nclasses + 1, sizeof *start);
    uint32_t *sorted = gm_mem_alloc(m, (size_t)(b->ntokens ? b->ntokens : 1) * sizeof *sorted);
    if (t) {
        t->stays = gm_mem_calloc(m, nclasses ? nclasses : 1, sizeof *t->stays);
        t->breaks = gm_mem_alloc(m, (nbreaks ? nbreaks : 1) * sizeof *t->breaks);
        t->prods = gm_mem_alloc(m, (nprods ? nprods : 1) * sizeof *t->prods);
    }
    if (!t || !start || !sorted || !t->stays || !t->breaks || !t->prods)
        goto nomem;
    bucket_tokens(b, NULL, nclasses, start, sorted);
    uint32_t off = 0;
    for (uint32_t c = 0; c < nclasses; c++) {
        size_t len;
        uint32_t p = *(const uint32_t *)gm_intern_key(&b->keys, c, &len);
        uint32_t from = sp->prod_off[p], n = sp->prod_off[p + 1] - from;
        /* By content: the Prod sets of another spanner are numbered its own way. */
        t->stays[c].prod = off;
        t->prods[off++] = sp->prod_ignored[p];
        t->prods[off++] = n;
        memcpy(t->prods + off, sp->prod_terms + from, n * sizeof *t->prods);
        off += n;
        if (!(t->stays[c].tokens = pooled_set(sp, m, sorted + start[c], start[c + 1] - start[c])))
            goto nomem;
        t->nstays++;
    }
    if (nbreaks)
        memcpy(t->breaks, breaks, nbreaks * sizeof *breaks);
    t->nbreaks = (uint32_t)nbreaks;
    t->nprods = off;
    gm_mem_free(m, start);
    gm_mem_free(m, sorted);
    return t;
nomem:
    gm_mem_free(m, start);
    gm_mem_free(m, sorted);
    if (t) {
        gm_mem_free(m, t->stays);
        gm_mem_free(m, t->breaks);
        gm_mem_free(m, t->prods);
        gm_mem_free(m, t);
    }
    return NULL;
}

/* Empties the builder. */
static void builder_reset(builder *b)
{
    memset(b->touched, 0, ((size_t)b->nslots + 63) / 64 * sizeof *b->touched);
    memset(b->stay_class, 0xff, (size_t)(b->sp->nprods ? b->sp->nprods : 1) * sizeof *b->stay_class);
    gm_intern_clear(&b->keys);
    b->premade.n = 0;
    b->ntokens = b->npremade = 0;
}

/* Adds the staying tokens of t as whole classes, then finishes its deep breaks. 0, 1 when a
 * Prod set of t is not sp's (cannot be: equal descriptions), -1 on no memory. */
static int replay(builder *b, const gm_walk_template *t)
{
    const gm_spanner *sp = b->sp;
    const gm_trie *tr = sp->trie;
    for (uint32_t i = 0; i < t->nstays; i++) {
        uint32_t prod = gm_walkshare_prod(sp, t, t->stays[i].prod), id;
        if (prod == GM_WALK_NONE)
            return 1;
        if (gm_intern_put(&b->keys, &prod, sizeof prod, &id, NULL) ||
            gm_vec_reserve(b->mem, &b->premade, (size_t)id + 1))
            return -1;
        while (b->premade.n <= id)
            b->premade.v[b->premade.n++] = NULL;
        b->premade.v[id] = t->stays[i].tokens;
        b->stay_class[prod] = id;
        b->npremade += t->stays[i].tokens->count;
    }
    uint32_t *fin = gm_mem_alloc(b->mem, 2 * ((size_t)tr->max_depth + 1) * sizeof *fin);
    if (!fin)
        return -1;
    for (uint32_t i = 0; i < t->nbreaks; i++) {
        const gm_walk_break *br = &t->breaks[i];
        uint32_t emit = br->emit, after = gm_spanner_id(sp, 0, br->flag, 0);
        if (finish_subtree(b, br->node, (size_t)tr->nodes[br->node].depth - 1, &emit,
                           emit != GM_LEX_NONE, after, fin, fin + tr->max_depth + 1)) {
            gm_mem_free(b->mem, fin);
            return -1;
        }
    }
    gm_mem_free(b->mem, fin);
    return 0;
}

/* The walk from q, through a template shared with other spanners where q's sub-automaton
 * can be described (note [shared walks]). */
static int walk_shared(builder *b, uint32_t q)
{
    uint32_t id;
    if (gm_walkshare_describe(b->sp, q, &id))
        return -1;
    if (id == GM_WALK_NONE)
        return walk(b, q);
    const gm_walk_template *t = gm_walkshare_find(b->sp->walks, id);
    if (!t) {
        gm_walk_breaks breaks = {0};
        b->record = &breaks;
        int rc = walk(b, q);
        b->record = NULL;
        gm_walk_template *own = rc ? NULL : make_template(b, breaks.v, breaks.n);
        gm_vec_free(b->mem, &breaks);
        /* An equal template a concurrent build kept first serves as well. */
        if (!own || !(t = gm_walkshare_add(b->sp->walks, id, own)))
            return -1;
        builder_reset(b);
    }
    int rc = replay(b, t);
    if (rc > 0) {
        builder_reset(b); /* start over with a walk of its own */
        rc = walk(b, q);
    }
    return rc;
}

/* Lexicographic order of class keys by E, then prod (qsort context via a static-free array). */
typedef struct sort_item {
    const uint32_t *key;     /* [prod, E...] */
    uint32_t len;            /* |E| */
    uint32_t id;
} sort_item;

static int compare_items(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    uint32_t n = a->len < b->len ? a->len : b->len;
    for (uint32_t i = 0; i < n; i++)
        if (a->key[1 + i] != b->key[1 + i])
            return a->key[1 + i] < b->key[1 + i] ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return a->key[0] < b->key[0] ? -1 : a->key[0] > b->key[0];
}

static int assemble(builder *b, uint32_t q, gm_profile **out)
{
    const gm_spanner *sp = b->sp;
    gm_mem *m = b->mem;
    uint32_t nclasses = b->keys.count;
    gm_profile *p = gm_mem_calloc(m, 1, sizeof *p);
    sort_item *items = gm_mem_calloc(m, nclasses ? nclasses : 1, sizeof *items);
    uint32_t *rank = gm_mem_calloc(m, nclasses ? nclasses : 1, sizeof *rank);
    uint32_t *start = gm_mem_calloc(m, (size_t)nclasses + 1, sizeof *start);
    uint32_t *sorted = gm_mem_calloc(m, b->ntokens ? b->ntokens : 1, sizeof *sorted);
    if (!p || !items || !rank || !start || !sorted)
        goto nomem;
    p->state = q;
    p->nclasses = nclasses;
    p->ntokens = b->ntokens + b->npremade;
    size_t seq_total = 0;
    for (uint32_t id = 0; id < nclasses; id++) {
        size_t len;
        items[id].key = gm_intern_key(&b->keys, id, &len);
        items[id].len = (uint32_t)(len / sizeof(uint32_t) - 1);
        items[id].id = id;
        seq_total += items[id].len;
    }
    qsort(items, nclasses, sizeof *items, compare_items);
    for (uint32_t r = 0; r < nclasses; r++)
        rank[items[r].id] = r;
    bucket_tokens(b, rank, nclasses, start, sorted);

    p->classes = gm_mem_calloc(m, nclasses ? nclasses : 1, sizeof *p->classes);
    p->seqs = gm_mem_calloc(m, seq_total ? seq_total : 1, sizeof *p->seqs);
    if (!p->classes || !p->seqs)
        goto nomem;
    p->bytes = sizeof *p + (size_t)nclasses * sizeof *p->classes + seq_total * sizeof *p->seqs;
    uint32_t off = 0;
    for (uint32_t r = 0; r < nclasses; r++) {
        gm_class *c = &p->classes[r];
        atomic_init(&c->suffixes, NULL);
        c->seq = off;
        c->len = items[r].len;
        c->prod = items[r].key[0];
        memcpy(p->seqs + off, items[r].key + 1, (size_t)c->len * sizeof(uint32_t));
        off += c->len;
        if (c->len > p->max_len)
            p->max_len = c->len;
        if (r > 0) {
            const gm_class *prev = &p->classes[r - 1];
            uint32_t n = prev->len < c->len ? prev->len : c->len, s = 0;
            while (s < n && p->seqs[prev->seq + s] == p->seqs[c->seq + s])
                s++;
            c->shared = s;
        }
        uint32_t *toks = sorted + start[r];
        uint32_t ntok = start[r + 1] - start[r];
        const gm_tokset *whole = items[r].id < b->premade.n ? b->premade.v[items[r].id] : NULL;
        /* Tokens with identical bytes share a trie node, never a class twice. */
        if (whole && ntok == 0)
            c->tokens = whole;
        else if (whole)
            c->tokens = merged_set(sp, m, whole, toks, ntok);
        else
            c->tokens = pooled_set(sp, m, toks, ntok);
        if (!c->tokens)
            goto nomem;
    }
    gm_profile_set_split0(sp, p);
    gm_mem_free(m, items);
    gm_mem_free(m, rank);
    gm_mem_free(m, start);
    gm_mem_free(m, sorted);
    *out = p;
    return 0;
nomem:
    gm_mem_free(m, items);
    gm_mem_free(m, rank);
    gm_mem_free(m, start);
    gm_mem_free(m, sorted);
    gm_profile_destroy(m, p);
    return -1;
}

void gm_profile_set_split0(const gm_spanner *sp, gm_profile *p)
{
    uint32_t emit, after;
    p->split0 = sp->variant & GM_VARIANT_NO_SPLIT0 ? GM_SPANNER_NONE
                                                   : sp->state_split0[gm_spanner_slot(sp, p->state)];
    p->split0_emit = GM_SPANNER_NONE;
    p->split0_next = 0;
    if (p->split0 != GM_SPANNER_NONE && gm_spanner_break(sp, p->state, GM_LEX_STOP, &emit, &after)) {
        /* The profile state has width 0: a line end it completes is relative. */
        if (emit != GM_LEX_NONE && (emit & GM_SEQ_LINE))
            emit = GM_SEQ_LINE_REL | GM_SEQ_WIDTH(emit);
        p->split0_emit = emit == GM_LEX_NONE ? GM_SPANNER_NONE : emit;
        p->split0_next = after;
    }
}

gm_status gm_profile_build(const gm_spanner *sp, uint32_t q, gm_profile **out, gm_error *err)
{
    *out = NULL;
    builder b = {.sp = sp, .mem = sp->mem, .nslots = sp->nbits};
    gm_intern_init(&b.keys, sp->mem);
    b.class_of = gm_mem_alloc(sp->mem, (size_t)sp->nbits * sizeof *b.class_of);
    b.touched = gm_mem_calloc(sp->mem, ((size_t)sp->nbits + 63) / 64, sizeof *b.touched);
    b.stay_class = gm_mem_alloc(sp->mem, (size_t)(sp->nprods ? sp->nprods : 1) * sizeof *b.stay_class);
    int rc = !b.class_of || !b.touched || !b.stay_class;
    if (!rc) {
        memset(b.stay_class, 0xff, (size_t)(sp->nprods ? sp->nprods : 1) * sizeof *b.stay_class);
        rc = sp->walks ? walk_shared(&b, q) : walk(&b, q);
    }
    if (!rc)
        rc = assemble(&b, q, out);
    gm_intern_free(&b.keys);
    gm_mem_free(sp->mem, b.class_of);
    gm_mem_free(sp->mem, b.touched);
    gm_mem_free(sp->mem, b.stay_class);
    gm_vec_free(sp->mem, &b.key);
    gm_vec_free(sp->mem, &b.seq);
    gm_vec_free(sp->mem, &b.premade);
    if (rc)
        return gm_mem_fail(sp->mem, err, "a lexer-state profile");
    return GM_OK;
}

void gm_profile_destroy(gm_mem *m, gm_profile *p)
{
    if (!p)
        return;
    if (p->classes)
        for (uint32_t i = 0; i < p->nclasses; i++) {
            for (gm_suffixes *s = atomic_load(&p->classes[i].suffixes), *next; s; s = next) {
                next = s->next;
                gm_profile_destroy(m, s->p);
                gm_mem_free(m, s);
            }
        }
    gm_mem_free(m, p->item_tok);
    gm_mem_free(m, p->item_off);
    gm_mem_free(m, p->classes);
    gm_mem_free(m, p->seqs);
    gm_mem_free(m, p);
}

/* ---- suffix profiles (runtime/ctx_spanners.h, note [contextual masks]) ---- */

typedef struct suffix_walk {
    builder *b;
    const gm_spanner *from;
    const gm_profile *p;
    uint32_t depth;
    uint32_t start;          /* the no-lexeme state of `to` the rests start in (UINT32_MAX: unset) */
    uint16_t *off;           /* [slots] where each token's rest starts */
    int failed;              /* no memory */
    int mixed;               /* the rests do not share one start state (or are too far in) */
} suffix_walk;

/* Where token t starts in profile p: its item's offset, or 0 in a lexer state's profile. */
static size_t item_offset(const gm_profile *p, uint32_t t)
{
    uint32_t lo = 0, hi = p->nitems;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->item_tok[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nitems && p->item_tok[lo] == t ? p->item_off[lo] : 0;
}

/* One token: find the byte after which its element `depth` was emitted, lex the rest in to. */
static bool backtracking(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex && gm_spanner_dfa(sp, q) >= sp->lexer->ndfa;
}

/*
 * One token: find where the rest after its element `depth` starts — the
 * byte that ended that element's lexeme, or, when it ended by a fallback,
 * the first byte of the window (runtime/ctx_spanners.h, note [contextual
 * fallbacks]) — and lex the rest in `to`. Mixed when that is not known.
 */
static int suffix_token(void *ud, uint32_t t)
{
    suffix_walk *sw = ud;
    const gm_spanner *from = sw->from, *to = sw->b->sp;
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(from->vocab, t, &len);
    uint32_t q = sw->p->state, seen = 0;
    size_t i = sw->p->item_tok ? item_offset(sw->p, t) : 0, wstart = 0;
    bool wknown = !backtracking(from, q); /* a window that began before the token: not here */
    for (; i < len; i++) {
        uint32_t next, emit[GM_SPANNER_MAX_EMIT], nemit;
        bool ok = gm_spanner_step(from, q, bytes[i], &next, emit, &nemit);
        if (seen + nemit > sw->depth) {
            /* The element's lexeme ended before byte i: it must be the step's first. */
            uint32_t qb = q < from->nlex ? q : from->lex_start, e, r;
            if (seen != sw->depth || !gm_spanner_pending(from, qb) ||
                !gm_spanner_break(from, qb, from->lexer->byte_class[bytes[i]], &e, &r))
                return sw->mixed = 1;
            size_t at = i;
            if (backtracking(from, qb)) {
                if (!wknown)
                    return sw->mixed = 1;
                at = wstart; /* the window is lexed again */
            }
            uint32_t s = gm_spanner_id(to, 0, gm_spanner_flag(from, r), 0);
            if (sw->start == UINT32_MAX)
                sw->start = s;
            if (s != sw->start || at > UINT16_MAX)
                return sw->mixed = 1; /* one start state per profile */
            sw->off[slot_of(sw->b, t)] = (uint16_t)at;
            int rc = finish_token(sw->b, t, at, NULL, 0, s);
            if (rc < 0)
                sw->failed = 1;
            return rc < 0;
        }
        if (!ok)
            break; /* not this class's token after all: cannot happen */
        seen += nemit;
        if (backtracking(from, next)) {
            if (!backtracking(from, q) && nemit == 0) {
                wstart = i;
                wknown = true;
            } else if (nemit) {
                wknown = false; /* a window inside a window that fell back */
            }
        }
        q = next;
    }
    return sw->mixed = 1;
}

static int compare_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

gm_status gm_profile_build_suffixes(const gm_spanner *from, const gm_profile *p, uint32_t first,
                                    uint32_t count, uint32_t depth, const gm_spanner *to,
                                    gm_profile **out, gm_error *err)
{
    *out = NULL;
    gm_mem *m = to->mem;
    builder b = {.sp = to, .mem = m};
    gm_intern_init(&b.keys, m);
    /* Slots for the classes' tokens only: a suffix profile costs what its classes hold. */
    size_t ntok = 1;
    for (uint32_t i = first; i < first + count; i++)
        ntok += p->classes[i].tokens->count;
    uint32_t *ids = gm_mem_alloc(m, ntok * sizeof *ids);
    b.class_of = gm_mem_alloc(m, ntok * sizeof *b.class_of);
    b.touched = gm_mem_calloc(m, (ntok + 63) / 64, sizeof *b.touched);
    b.stay_class = gm_mem_alloc(m, (size_t)(to->nprods ? to->nprods : 1) * sizeof *b.stay_class);
    suffix_walk sw = {&b, from, p, depth, UINT32_MAX, NULL, 0, 0};
    sw.off = gm_mem_alloc(m, ntok * sizeof *sw.off);
    int rc = !ids || !b.class_of || !b.touched || !b.stay_class || !sw.off;
    if (!rc) {
        collect ids_of = {ids, 0};
        for (uint32_t i = first; i < first + count; i++)
            gm_tokset_foreach(p->classes[i].tokens, from->nbits, collect_id, &ids_of);
        qsort(ids, ids_of.n, sizeof *ids, compare_ids);
        b.ids = ids;
        b.nslots = ids_of.n;
        memset(b.class_of, 0xff, (size_t)b.nslots * sizeof *b.class_of);
        memset(b.stay_class, 0xff, (size_t)(to->nprods ? to->nprods : 1) * sizeof *b.stay_class);
        for (uint32_t i = 0; i < b.nslots && !sw.failed && !sw.mixed; i++)
            suffix_token(&sw, ids[i]);
        rc = sw.failed;
    }
    if (!rc && !sw.mixed)
        rc = assemble(&b, sw.start == UINT32_MAX ? gm_spanner_id(to, 0, 0, 0) : sw.start, out);
    if (!rc && !sw.mixed) {
        gm_profile *np = *out;
        np->split0 = GM_SPANNER_NONE; /* the rests start with no lexeme pending */
        np->nitems = b.ntokens;
        np->item_tok = gm_mem_alloc(m, (size_t)(b.ntokens ? b.ntokens : 1) * sizeof *np->item_tok);
        np->item_off = gm_mem_alloc(m, (size_t)(b.ntokens ? b.ntokens : 1) * sizeof *np->item_off);
        rc = !np->item_tok || !np->item_off;
        for (uint32_t t = 0, n = 0; !rc && t < b.nslots; t++)
            if ((b.touched[t >> 6] >> (t & 63)) & 1) {
                np->item_tok[n] = ids[t];
                np->item_off[n++] = sw.off[t];
            }
        if (!rc)
            np->bytes += (size_t)b.ntokens * (sizeof *np->item_tok + sizeof *np->item_off);
        if (rc) {
            gm_profile_destroy(m, np);
            *out = NULL;
        }
    }
    gm_intern_free(&b.keys);
    gm_mem_free(m, ids);
    gm_mem_free(m, b.class_of);
    gm_mem_free(m, b.touched);
    gm_mem_free(m, b.stay_class);
    gm_mem_free(m, sw.off);
    gm_vec_free(m, &b.key);
    gm_vec_free(m, &b.seq);
    if (rc)
        return gm_mem_fail(m, err, "a contextual suffix profile");
    return GM_OK;
}
