/*
 * Masks for every node of a tree of draft tokens in one call (speculative
 * decoding; XGrammar's traverse_draft_tree). The tree comes as engines hold
 * it: first-child and next-sibling links. It is checked whole before the
 * walk, so a malformed tree is an error naming the node, never a loop; the
 * walk then steps each node's token once from its parent's persistent
 * state, where the accept/fill/rollback loop engines run would push and pop
 * the matcher's history for every node.
 */
#include <string.h>

#include "runtime/matcher_walk.h"
#include "base/error.h"
#include "base/timing.h"

typedef struct walk_entry {
    gm_mpos pos;              /* the state after node's token */
    int32_t node;
} walk_entry;

/* The scratch of one call: on the stack up to GM_DRAFT_TREE_SMALL nodes, else allocated. */
typedef struct walk_scratch {
    uint8_t *seen;            /* per node: times linked to, then 0xff when reached */
    int32_t *todo;            /* nodes to visit (the tree check) */
    walk_entry *stack;        /* positions to expand (the walk) */
} walk_scratch;

enum { REACHED = 0xff };

static gm_status check_link(const char *what, int64_t to, size_t from, size_t n, uint8_t *seen,
                            gm_error *err)
{
    if (to == -1)
        return GM_OK;
    if (to < 0 || (uint64_t)to >= n)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: %s[%zu] is %lld, not -1 or a node "
                            "index below %zu", what, from, (long long)to, n);
    if (to == 0)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: %s[%zu] links to the root (node 0), "
                            "which has no parent or sibling", what, from);
    if (seen[to])
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: node %lld is linked from two places "
                            "(the second is %s[%zu]); a tree links each node once", (long long)to,
                            what, from);
    seen[to] = 1;
    return GM_OK;
}

/*
 * Every node linked at most once and the root never: the walk from the root
 * then ends. A node that is not reached from the root or from an unlinked
 * node lies on a cycle: reported, as the tree cannot be what was meant.
 */
static gm_status check_tree(const int64_t *next_token, const int64_t *next_sibling, size_t n,
                            walk_scratch *w, gm_error *err)
{
    memset(w->seen, 0, n);
    if (next_sibling[0] != -1)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: the root (node 0) has a sibling "
                            "(next_sibling[0] = %lld)", (long long)next_sibling[0]);
    for (size_t i = 0; i < n; i++) {
        gm_status st = check_link("next_token", next_token[i], i, n, w->seen, err);
        if (st == GM_OK)
            st = check_link("next_sibling", next_sibling[i], i, n, w->seen, err);
        if (st != GM_OK)
            return st;
    }
    size_t ntodo = 0;
    for (size_t i = 0; i < n; i++)
        if (!w->seen[i])
            w->todo[ntodo++] = (int32_t)i;
    while (ntodo) {
        int32_t i = w->todo[--ntodo];
        w->seen[i] = REACHED;
        if (next_token[i] != -1)
            w->todo[ntodo++] = (int32_t)next_token[i];
        if (next_sibling[i] != -1)
            w->todo[ntodo++] = (int32_t)next_sibling[i];
    }
    for (size_t i = 0; i < n; i++)
        if (w->seen[i] != REACHED)
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "gm_matcher_fill_draft_tree: node %zu lies on a cycle of "
                                "next_token / next_sibling links", i);
    return GM_OK;
}

static void release_stack(gm_matcher *m, walk_entry *stack, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gm_matcher_pos_release_(m, &stack[i].pos);
}

/* The walk proper, over a checked tree; rows start zeroed. */
static gm_status walk(gm_matcher *m, const int64_t *next_token, const int64_t *next_sibling,
                      const int64_t *draft_tokens, uint32_t *masks, size_t words,
                      const gm_draft_tree_options *opts, bool *completed, walk_entry *stack,
                      gm_error *err)
{
    bool end_complete = opts && opts->end_when_complete;
    uint64_t deadline = 0;
    if (opts && opts->time_limit_s > 0)
        deadline = gm_clock_ns() + (uint64_t)(opts->time_limit_s * 1e9);
    uint32_t vocab = gm_matcher_vocab_size_(m);
    size_t depth = 0;
    gm_mpos root;
    gm_status st = gm_matcher_walk_begin_(m, "gm_matcher_fill_draft_tree", &root, err);
    if (st != GM_OK)
        return st;
    if (end_complete && gm_matcher_pos_can_end_(m, &root)) {
        gm_matcher_pos_release_(m, &root);
        return GM_OK;
    }
    st = gm_matcher_pos_fill_(m, &root, masks, err);
    if (st != GM_OK) {
        gm_matcher_pos_release_(m, &root);
        return st;
    }
    stack[depth++] = (walk_entry){root, 0};
    while (depth) {
        walk_entry e = stack[--depth];
        const uint32_t *row = masks + (size_t)e.node * words;
        for (int64_t c = next_token[e.node]; c != -1 && st == GM_OK; c = next_sibling[c]) {
            int64_t tok = draft_tokens[c];
            /* the parent's exact mask decides, as accept_token would */
            if (tok < 0 || tok >= vocab || !(row[tok >> 5] >> (tok & 31) & 1))
                continue;
            if (deadline && gm_clock_ns() > deadline) {
                *completed = false;
                break;
            }
            gm_mpos child;
            st = gm_matcher_pos_step_(m, &e.pos, (uint32_t)tok, &child, err);
            if (st == GM_ERR_REJECTED || st == GM_ERR_STATE) {
                st = GM_OK; /* cannot happen with an exact mask; a zero row all the same */
                continue;
            }
            if (st != GM_OK)
                break;
            if (end_complete && gm_matcher_pos_can_end_(m, &child)) {
                gm_matcher_pos_release_(m, &child);
                continue;
            }
            st = gm_matcher_pos_fill_(m, &child, masks + (size_t)c * words, err);
            if (st == GM_OK && next_token[c] != -1)
                stack[depth++] = (walk_entry){child, (int32_t)c};
            else
                gm_matcher_pos_release_(m, &child);
        }
        gm_matcher_pos_release_(m, &e.pos);
        if (st != GM_OK || !*completed) {
            release_stack(m, stack, depth);
            if (st != GM_OK)
                gm_error_prefix(err, "gm_matcher_fill_draft_tree");
            return st;
        }
    }
    return GM_OK;
}

gm_status gm_matcher_fill_draft_tree(gm_matcher *m, const int64_t *next_token,
                                     const int64_t *next_sibling, const int64_t *draft_tokens,
                                     size_t n, uint32_t *masks, size_t words,
                                     const gm_draft_tree_options *opts, bool *completed,
                                     gm_error *err)
{
    bool done = true;
    if (!completed)
        completed = &done;
    *completed = true;
    if (!m || !next_token || !next_sibling || !draft_tokens || !masks)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_matcher_fill_draft_tree: NULL argument");
    if (n == 0)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: the tree is empty (it needs a root)");
    if (n > GM_DRAFT_TREE_MAX_NODES)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "gm_matcher_fill_draft_tree: the tree has %zu nodes, more than the "
                            "limit of %d", n, GM_DRAFT_TREE_MAX_NODES);
    size_t need = (size_t)gm_matcher_vocab_size_(m) / 32 + (gm_matcher_vocab_size_(m) % 32 != 0);
    if (words != need)
        return gm_error_set(err, GM_ERR_ARGUMENT,
                            "gm_matcher_fill_draft_tree: rows have %zu words, the vocabulary "
                            "needs %zu", words, need);
    uint8_t seen_small[GM_DRAFT_TREE_SMALL];
    int32_t todo_small[GM_DRAFT_TREE_SMALL];
    walk_entry stack_small[GM_DRAFT_TREE_SMALL];
    walk_scratch w = {seen_small, todo_small, stack_small};
    void *block = NULL;
    gm_mem *mem = gm_matcher_mem_(m);
    if (n > GM_DRAFT_TREE_SMALL) {
        block = gm_mem_alloc(mem, n * (sizeof(walk_entry) + sizeof(int32_t) + 1));
        if (!block)
            return gm_mem_fail(mem, err, "the draft tree walk");
        w.stack = block;
        w.todo = (int32_t *)(w.stack + n);
        w.seen = (uint8_t *)(w.todo + n);
    }
    gm_status st = check_tree(next_token, next_sibling, n, &w, err);
    if (st == GM_OK) {
        memset(masks, 0, n * words * sizeof *masks);
        st = walk(m, next_token, next_sibling, draft_tokens, masks, words, opts, completed,
                  w.stack, err);
    }
    gm_mem_free(mem, block);
    return st;
}
