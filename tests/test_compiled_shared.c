/*
 * What the processes that map one compiled file share (note [mapped
 * compiled files]): after gm_compiled_load, the vocabulary trie, the LR
 * unit chains, the lexers' 16-bit rows (the basic lexer's and every
 * contextual lexer's) and the first-byte filters lie in the mapping, not in memory the process
 * allocated, and the loaded grammar holds a small part of what a copying
 * load holds. Each of those tables, corrupted behind a valid checksum, is
 * refused with GM_ERR_FORMAT naming what is wrong: the loader checks the
 * trie against the vocabulary, the unit chains against the parse tables,
 * every lexer move against the lexer's states and each filter against the
 * trie. (That the masks of a
 * loaded file equal the original's, step by step, is test_compiled_bytes
 * and tests/compiled_trace.sh.)
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/objects.h"
#include "parser/contextual.h"
#include "spanner/tokpool.h"

typedef struct world {
    gm_vocab *vocab;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_src_path("tests/data/sp32k"), NULL, &w->vocab, &err))
        fail_msg("vocab: %s", err.message);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    gm_vocab_destroy(w->vocab);
    free(w);
    return 0;
}

static gm_compiled *bundled(world *w, const char *name, gm_lexer_kind lexer)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.lexer = lexer;
    gm_grammar *g;
    gm_compiled *c;
    gm_error err;
    if (gm_grammar_create_bundled(name, &go, &g, &err) != GM_OK)
        fail_msg("grammar %s: %s", name, err.message);
    if (gm_compiled_create(g, w->vocab, NULL, &c, &err) != GM_OK)
        fail_msg("compile %s: %s", name, err.message);
    gm_grammar_destroy(g);
    return c;
}

/* c saved to a file and loaded from it (mapped); the file is gone when this returns. */
static gm_compiled *through_file(gm_compiled *c)
{
    char path[] = "/tmp/gm_test_compiled_shared_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gm_error err;
    if (gm_compiled_save(c, path, &err) != GM_OK)
        fail_msg("save: %s", err.message);
    gm_compiled *loaded;
    if (gm_compiled_load(path, NULL, &loaded, &err) != GM_OK)
        fail_msg("load: %s", err.message);
    unlink(path);
    return loaded;
}

/* Whether p lies in the mapping m borrows from. */
static bool mapped(const gm_mem *m, const void *p)
{
    return m->borrow_lo && p && (const char *)p >= m->borrow_lo && (const char *)p < m->borrow_hi;
}

/* A lexer's transitions are the mapping's (none of them the process's own). */
static void lexer_in_place(const gm_mem *m, const gm_lexer *lx, const char *what)
{
    if (lx->next || !mapped(m, lx->next16) || (lx->row16 && !mapped(m, lx->row16)) ||
        (lx->patch && (!mapped(m, lx->patch) || !mapped(m, lx->patch_at))))
        fail_msg("%s: the lexer's transitions are not used in place", what);
}

static void tables_in_place(void **state)
{
    world *w = *state;
    gm_compiled *c = bundled(w, "go", GM_LEXER_BASIC);
    gm_compiled *loaded = through_file(c);
    const gm_trie *t = loaded->vocab->trie;
    assert_true(mapped(&loaded->vocab->mem, t->nodes));
    assert_true(mapped(&loaded->vocab->mem, t->tokens));
    const gm_lr_table *lr = loaded->grammar->lr;
    assert_non_null(lr->unit_row);
    assert_true(lr->nunit_rows > 0);
    assert_true(mapped(&loaded->grammar->mem, lr->unit_row));
    assert_true(mapped(&loaded->grammar->mem, lr->unit_go));
    lexer_in_place(&loaded->grammar->mem, loaded->grammar->lexer, "go");
    const gm_spanner *sp = loaded->spanner;
    assert_true(sp->nsplit0 > 0);
    for (uint32_t id = 0; id < sp->nsplit0; id++)
        assert_true(mapped(&loaded->mem, atomic_load(&sp->split0_filter[id]->bits)));
    /* The same tables as the original's, value for value. */
    const gm_trie *t0 = c->vocab->trie;
    assert_int_equal(t->nnodes, t0->nnodes);
    assert_int_equal(t->ntokens, t0->ntokens);
    for (uint32_t i = 0; i < t->nnodes; i++)
        if (t->nodes[i].skip != t0->nodes[i].skip || t->nodes[i].byte != t0->nodes[i].byte ||
            t->nodes[i].tok_end != t0->nodes[i].tok_end)
            fail_msg("trie node %u differs from the original's", i);
    assert_memory_equal(t->tokens, t0->tokens, (size_t)t->ntokens * 4);
    /* What the loaded grammar allocated: under a tenth of what a copying load holds
       (sp32k's Go, lazily compiled: 55 KB against 4.4 MB; the trie, unit chains and lexer
       rows, built at load before format 9, were most of the copy). */
    uint8_t *bytes;
    size_t len;
    gm_error err;
    gm_compiled *copied;
    assert_int_equal(gm_compiled_save_bytes(c, &bytes, &len, &err), GM_OK);
    assert_int_equal(gm_compiled_load_bytes(bytes, len, NULL, &copied, &err), GM_OK);
    gm_compiled_free_bytes(c, bytes);
    gm_compiled_stats sm, sc;
    gm_compiled_get_stats(loaded, &sm);
    gm_compiled_get_stats(copied, &sc);
    if (sm.memory_bytes * 10 > sc.memory_bytes)
        fail_msg("the mapped load holds %zu bytes, the copying one %zu", sm.memory_bytes,
                 sc.memory_bytes);
    gm_compiled_destroy(copied);
    gm_compiled_destroy(loaded);
    gm_compiled_destroy(c);
}

static void contextual_lexers_in_place(void **state)
{
    world *w = *state;
    gm_compiled *c = bundled(w, "json", GM_LEXER_CONTEXTUAL);
    gm_compiled *loaded = through_file(c);
    const gm_ctx_lexers *cl = loaded->grammar->ctx;
    assert_non_null(cl);
    assert_true(cl->nsets > 1);
    for (uint32_t k = 0; k < cl->nsets; k++)
        lexer_in_place(&loaded->grammar->mem, atomic_load(&cl->lexers[k]), "json contextual");
    gm_compiled_destroy(loaded);
    gm_compiled_destroy(c);
}

/*
 * The bundled Go grammar compiled for sp32k, loaded from bytes (a copy it
 * may change), changed by corrupt, saved and loaded again: GM_ERR_FORMAT
 * saying `says`.
 */
static void expect_refused(world *w, void (*corrupt)(gm_compiled *), const char *says)
{
    gm_compiled *c = bundled(w, "go", GM_LEXER_BASIC), *copy, *again;
    uint8_t *bytes;
    size_t len;
    gm_error err;
    assert_int_equal(gm_compiled_save_bytes(c, &bytes, &len, &err), GM_OK);
    assert_int_equal(gm_compiled_load_bytes(bytes, len, NULL, &copy, &err), GM_OK);
    gm_compiled_free_bytes(c, bytes);
    corrupt(copy);
    assert_int_equal(gm_compiled_save_bytes(copy, &bytes, &len, &err), GM_OK);
    assert_int_equal(gm_compiled_load_bytes(bytes, len, NULL, &again, &err), GM_ERR_FORMAT);
    assert_null(again);
    if (!strstr(err.message, says))
        fail_msg("\"%s\" does not say %s", err.message, says);
    gm_compiled_free_bytes(copy, bytes);
    gm_compiled_destroy(copy);
    gm_compiled_destroy(c);
}

/* The first node with two children: *first the first child, *second the next. */
static void two_children(const gm_trie *t, uint32_t *first, uint32_t *second)
{
    for (uint32_t i = 0; i + 1 < t->nnodes; i++) {
        uint32_t j = i + 1;
        if (t->nodes[j].skip < t->nodes[i].skip && t->nodes[j].depth == t->nodes[i].depth + 1) {
            *first = j;
            *second = t->nodes[j].skip;
            return;
        }
    }
    fail_msg("no node with two children");
}

static void trie_byte_order(gm_compiled *c)
{
    gm_trie *t = c->vocab->trie;
    uint32_t a = 0, b = 0;
    two_children(t, &a, &b);
    t->nodes[b].byte = t->nodes[a].byte;
}

static void trie_skip(gm_compiled *c)
{
    c->vocab->trie->nodes[1].skip = c->vocab->trie->nnodes + 1;
}

static void trie_special_token(gm_compiled *c)
{
    const gm_vocab_data *v = c->vocab->data;
    assert_true(v->neos > 0);
    c->vocab->trie->tokens[0] = v->eos[0];
}

/* Two tokens of different bytes trade places (each node still sorted and complete). */
static void trie_tokens_swapped(gm_compiled *c)
{
    gm_trie *t = c->vocab->trie;
    uint32_t a = UINT32_MAX;
    for (uint32_t i = 1; i < t->nnodes; i++) {
        if (t->nodes[i].tok_end - t->nodes[i].tok_begin != 1)
            continue;
        if (a == UINT32_MAX) {
            a = i;
            continue;
        }
        uint32_t x = t->tokens[t->nodes[a].tok_begin];
        t->tokens[t->nodes[a].tok_begin] = t->tokens[t->nodes[i].tok_begin];
        t->tokens[t->nodes[i].tok_begin] = x;
        return;
    }
    fail_msg("no two nodes of one token each");
}

static void trie_token_missing(gm_compiled *c)
{
    gm_trie *t = c->vocab->trie;
    /* The last node is a leaf; it loses its last token to nothing (counts kept). */
    gm_trie_node *n = &t->nodes[t->nnodes - 1];
    assert_true(n->tok_end > n->tok_begin);
    t->tokens[n->tok_end - 1] = t->tokens[n->tok_end - 1] == 0 ? 1 : 0;
}

static void unit_chain_end(gm_compiled *c)
{
    gm_lr_table *t = c->grammar->lr;
    assert_true(t->nunit_rows > 0);
    t->unit_go[0] = (t->unit_go[0] + 1) % t->nstates;
}

static void unit_row_spurious(gm_compiled *c)
{
    gm_lr_table *t = c->grammar->lr;
    for (size_t i = 0; i < (size_t)t->nstates * t->nnonterms; i++)
        if (t->unit_row[i] == UINT32_MAX) {
            t->unit_row[i] = 0;
            return;
        }
    fail_msg("every goto cell has a unit chain");
}

static void lexer_cell_out_of_range(gm_compiled *c)
{
    gm_lexer *lx = c->grammar->lexer;
    assert_non_null(lx->next16);
    uint32_t row = lx->row16 ? lx->row16[0] : 0;
    lx->next16[(size_t)row * lx->nclasses + lx->byte_class['a']] = (uint16_t)lx->nstates;
}

static void lexer_cell_to_start(gm_compiled *c)
{
    gm_lexer *lx = c->grammar->lexer;
    uint32_t row = lx->row16 ? lx->row16[0] : 0;
    lx->next16[(size_t)row * lx->nclasses + lx->byte_class['a']] = 0;
}

static void filter_bit(gm_compiled *c)
{
    gm_spanner *sp = c->spanner;
    uint32_t *bits = atomic_load(&sp->split0_filter[sp->nsplit0 - 1]->bits);
    assert_non_null(bits);
    bits[0] ^= 1u << 5;
}

static void corrupt_tables_refused(void **state)
{
    world *w = *state;
    expect_refused(w, trie_byte_order, "trie children out of byte order");
    expect_refused(w, trie_skip, "trie node out of place");
    expect_refused(w, trie_special_token, "trie token out of range");
    expect_refused(w, trie_tokens_swapped, "trie token under a node that is not its bytes");
    expect_refused(w, trie_token_missing, "trie token");
    expect_refused(w, unit_chain_end, "LR unit chain does not end where the tables say");
    expect_refused(w, unit_row_spurious, "LR unit-chain row");
    expect_refused(w, lexer_cell_out_of_range, "lexer transition to a state that does not exist");
    expect_refused(w, lexer_cell_to_start, "re-enters the start state");
    expect_refused(w, filter_bit, "a first-byte filter is not the tokens of its bytes");
}

/* Every truncation inside the new sections is refused, never read past. */
static void truncated_everywhere(void **state)
{
    world *w = *state;
    gm_compiled *c = bundled(w, "json", GM_LEXER_BASIC), *again;
    uint8_t *bytes;
    size_t len;
    gm_error err;
    assert_int_equal(gm_compiled_save_bytes(c, &bytes, &len, &err), GM_OK);
    uint8_t *cut = malloc(len);
    /* A step that lands in the trie's nodes, its tokens and the tables after it. */
    for (size_t keep = GM_COMPILED_HEADER; keep < len; keep += 1 + keep / 7) {
        memcpy(cut, bytes, keep);
        gm_compiled_header(cut, cut + GM_COMPILED_HEADER, keep - GM_COMPILED_HEADER);
        assert_int_equal(gm_compiled_load_bytes(cut, keep, NULL, &again, &err), GM_ERR_FORMAT);
        assert_null(again);
    }
    free(cut);
    gm_compiled_free_bytes(c, bytes);
    gm_compiled_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables_in_place),
        cmocka_unit_test(contextual_lexers_in_place),
        cmocka_unit_test(corrupt_tables_refused),
        cmocka_unit_test(truncated_everywhere),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
