/*
 * TagDispatch masks against brute force (issue 17): for each tool-call
 * preset with its model's real tokenizer (llama and llama-json with llama3,
 * qwen with qwen3, harmony with gptoss) and three real tools (BFCL schemas
 * of MaskBench), valid assistant turns are decoded through the public API
 * (gm_grammar_from_tools, gm_matcher_fill_mask) and, at sampled steps, the
 * mask is compared token by token with the independent reference
 * recognizer (tests/earley_ref.h) run on the same structural tag's grammar
 * IR: a text token is allowed iff the prefix followed by its bytes is
 * viable; a special token iff the grammar names it there (or it is EOS and
 * the prefix is a sentence); padding never.
 *
 * Each turn is decoded twice: as the tokenizer encodes it (gm_vocab_encode,
 * special tokens parsed), and tokenized greedily by longest match, which
 * picks the vocabulary's tokens that straddle tag boundaries (".<" before
 * `<function=`, `>{"` between a begin and its arguments, `}</` between the
 * arguments and the end, `>\n\n` after it). Every step whose token crosses
 * or starts at a boundary is checked, other steps are sampled; the test
 * asserts that each text format saw tokens straddling each kind of boundary.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/stag.h"
#include "dispatch/tools.h"
#include "runtime/objects.h"
#include "tests/earley_ref.h"

/*
 * Three tools of MaskBench's BFCL split (BFCL_multiple_157, BFCL_parallel_
 * multiple_9, BFCL_multiple_171), with the parameter schemas as given.
 */
static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_earliest_reference\", "
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, "
    "\"source\": {\"type\": \"string\", \"enum\": [\"scriptures\", \"historical records\"]}}, "
    "\"required\": [\"name\"], \"additionalProperties\": false}}},\n"
    " {\"type\": \"function\", \"function\": {\"name\": \"hotel_book\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}, \"nights\": "
    "{\"type\": \"integer\"}}, \"required\": [\"location\", \"nights\"], "
    "\"additionalProperties\": false}}},\n"
    " {\"type\": \"function\", \"function\": {\"name\": \"game_result.get_winner\", "
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"teams\": {\"type\": \"array\", "
    "\"items\": {\"type\": \"string\"}}, \"date\": {\"type\": \"string\"}, \"venue\": {\"type\": "
    "\"string\"}}, \"required\": [\"teams\", \"date\"], \"additionalProperties\": false}}}]";

/* Arguments: MaskBench's valid instances (and one written here for hotel_book). */
#define ARGS_REF "{\"name\": \"Jesus Christ\", \"source\": \"historical records\"}"
#define ARGS_HOTEL "{\"location\": \"Chicago\", \"nights\": 3}"
#define ARGS_GAME "{\"teams\": [\"Lakers\", \"Clippers\"], \"date\": \"2021-01-28\", \"venue\": \"\"}"

static const char *const harmony_specials[] = {"<|start|>", "<|end|>", "<|message|>",
                                               "<|channel|>", "<|constrain|>", "<|return|>",
                                               "<|call|>", NULL};

/*
 * A turn as pieces: T free text (or a tag's text content), B a tag's begin
 * (its trigger first), A the tag's content (arguments), E its end. A
 * boundary lies between two pieces of different kinds.
 */
typedef struct piece {
    char kind;
    const char *text;
} piece;

enum { MAX_PIECES = 24 };

typedef struct turn {
    const char *name;
    piece p[MAX_PIECES];
} turn;

static const turn llama_turns[] = {
    {"llama two calls", {{'T', "Sure."}, {'B', "<function=hotel_book>"}, {'A', ARGS_HOTEL},
                         {'E', "</function>"}, {'T', "\n\nThen:"},
                         {'B', "<function=game_result.get_winner>"}, {'A', ARGS_GAME},
                         {'E', "</function>"}, {'T', " done."}}},
    {"llama call first", {{'B', "<function=get_earliest_reference>"}, {'A', ARGS_REF},
                          {'E', "</function>"}, {'T', "\nVoilà — c'est fait <b>ok</b> </fun"}}},
};

static const turn llama_json_turns[] = {
    {"llama-json call", {{'T', "Let me check."}, {'B', "{\"name\": \"hotel_book\", \"parameters\": "},
                         {'A', ARGS_HOTEL}, {'E', "}"}, {'T', "\n{\"other\": 1}. "},
                         {'B', "{\"name\": \"get_earliest_reference\", \"parameters\": "},
                         {'A', ARGS_REF}, {'E', "}"}}},
};

static const turn qwen_turns[] = {
    {"qwen think and calls",
     {{'B', "<think>"}, {'T', "\nThe user wants a hotel; then the game.\n"}, {'E', "</think>"},
      {'T', "\n\nI will use the tools."}, {'B', "<tool_call>\n{\"name\": \"hotel_book\", "
                                                 "\"arguments\": "},
      {'A', ARGS_HOTEL}, {'E', "}\n</tool_call>"}, {'T', "\n"},
      {'B', "<tool_call>\n{\"name\": \"game_result.get_winner\", \"arguments\": "},
      {'A', ARGS_GAME}, {'E', "}\n</tool_call>"}}},
    {"qwen no think", {{'T', "Checking.<tool_"}, {'T', "call "},
                       {'B', "<tool_call>\n{\"name\": \"get_earliest_reference\", \"arguments\": "},
                       {'A', ARGS_REF}, {'E', "}\n</tool_call>"}, {'T', " (tool_call)"}}},
};

static const turn harmony_turns[] = {
    {"harmony call", {{'B', "<|channel|>analysis<|message|>"}, {'T', "Need the hotel: <|end| no."},
                      {'E', "<|end|>"}, {'B', "<|start|>assistant<|channel|>commentary<|message|>"},
                      {'T', "Booking now."}, {'E', "<|end|>"},
                      {'B', "<|start|>assistant<|channel|>commentary to=functions.hotel_book"},
                      {'A', " <|constrain|>json<|message|>"ARGS_HOTEL}, {'E', "<|call|>"}}},
    {"harmony answer", {{'B', "<|channel|>analysis<|message|>"}, {'T', "Easy."}, {'E', "<|end|>"},
                        {'B', "<|start|>assistant<|channel|>final<|message|>"},
                        {'T', "The answer is 4 (<|call| is not a token)."}, {'E', "<|return|>"}}},
};

typedef struct preset_case {
    const char *format_name;
    gm_tool_format format;
    const char *tokenizer;
    const turn *turns;
    size_t nturns;
    bool straddles;           /* text tags: tokens must straddle each kind of boundary */
} preset_case;

/* Boundary kinds, by the pieces on either side. */
enum { BD_TRIGGER, BD_CONTENT, BD_END, BD_AFTER, BD_KINDS };
static const char *const bd_names[BD_KINDS] = {"text|begin", "begin|content", "content|end",
                                               "end|text"};

static int boundary_kind(char before, char after)
{
    if (after == 'B')
        return BD_TRIGGER;
    if (before == 'B')
        return BD_CONTENT;
    if (after == 'E')
        return BD_END;
    return BD_AFTER;
}

typedef struct ctx {
    const preset_case *pc;
    gm_vocab *vocab;
    const gm_vocab_data *vd;
    gm_compiled *compiled;
    gm_matcher *m;
    gm_mem mem;
    gm_ebnf ir;
    gm_eref *ref;
    const uint8_t **ext;      /* [size] token bytes */
    uint32_t *len;
    uint32_t *order;          /* [size] ids by their bytes (gm_eref_try_all sorts less) */
    const uint8_t **sext;     /* ext and len in that order */
    uint32_t *slen;
    uint8_t *sviable;
    uint8_t *viable;          /* [size] by id */
    uint32_t *mask;
    size_t words;
    int every;                /* check one step in `every` besides boundary steps */
    int checked;              /* masks compared */
    int straddled[BD_KINDS];  /* steps whose token crossed a boundary, per kind */
} ctx;

static const ctx *sort_ctx;

static int by_bytes(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = sort_ctx->len[x], ly = sort_ctx->len[y];
    int d = memcmp(sort_ctx->ext[x], sort_ctx->ext[y], lx < ly ? lx : ly);
    return d ? d : (lx > ly) - (lx < ly);
}

static void ctx_open(ctx *c, const preset_case *pc)
{
    memset(c, 0, sizeof *c);
    c->pc = pc;
    gm_error err;
    char path[256];
    snprintf(path, sizeof path, "tokenizers/%s", pc->tokenizer);
    if (gm_vocab_create_from_file(gm_test_shared_path(path), NULL, &c->vocab, &err))
        fail_msg("%s: %s", path, err.message);
    c->vd = c->vocab->data;
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = pc->format;
    gm_grammar *g;
    if (gm_grammar_from_tools(tools_json, strlen(tools_json), &o, &g, &err))
        fail_msg("%s: %s", pc->format_name, err.message);
    if (gm_compiled_create(g, c->vocab, NULL, &c->compiled, &err))
        fail_msg("%s: compile: %s", pc->format_name, err.message);
    gm_grammar_destroy(g);
    if (gm_matcher_create(c->compiled, NULL, &c->m, &err))
        fail_msg("%s: matcher: %s", pc->format_name, err.message);
    c->words = gm_compiled_mask_words(c->compiled);
    c->mask = malloc(c->words * sizeof *c->mask);

    /* The reference: the same structural tag, compiled to the IR by dispatch/. */
    gm_mem_init(&c->mem, NULL, 0);
    gm_strbuf st;
    gm_strbuf_init(&st, &c->mem);
    if (gm_tools_structural_tag(&c->mem, "tools", tools_json, strlen(tools_json), &o, &st, &err))
        fail_msg("%s: %s", pc->format_name, err.message);
    gm_ebnf_init(&c->ir, &c->mem);
    if (gm_stag_compile(&c->mem, "tools", gm_strbuf_str(&st), st.n, NULL, &c->ir, &err))
        fail_msg("%s: %s", pc->format_name, err.message);
    gm_strbuf_free(&st);
    if (gm_eref_create(&c->ir, &c->ref, &err))
        fail_msg("%s: reference: %s", pc->format_name, err.message);

    uint32_t n = c->vd->size;
    c->ext = malloc(n * sizeof *c->ext);
    c->len = malloc(n * sizeof *c->len);
    c->viable = malloc(n);
    for (uint32_t i = 0; i < n; i++) {
        size_t l;
        c->ext[i] = gm_vocab_data_token(c->vd, i, &l);
        c->len[i] = (uint32_t)l;
    }
    c->order = malloc(n * sizeof *c->order);
    c->sext = malloc(n * sizeof *c->sext);
    c->slen = malloc(n * sizeof *c->slen);
    c->sviable = malloc(n);
    for (uint32_t i = 0; i < n; i++)
        c->order[i] = i;
    sort_ctx = c;
    qsort(c->order, n, sizeof *c->order, by_bytes);
    for (uint32_t k = 0; k < n; k++) {
        c->sext[k] = c->ext[c->order[k]];
        c->slen[k] = c->len[c->order[k]];
    }
#if defined(__SANITIZE_ADDRESS__)
    c->every = 40;
#else
    c->every = 9;
#endif
}

static void ctx_close(ctx *c)
{
    free(c->ext);
    free(c->len);
    free(c->viable);
    free(c->order);
    free(c->sext);
    free(c->slen);
    free(c->sviable);
    free(c->mask);
    gm_eref_destroy(c->ref);
    gm_ebnf_free(&c->ir);
    assert_int_equal(atomic_load(&c->mem.used), 0);
    gm_matcher_destroy(c->m);
    gm_compiled_destroy(c->compiled);
    gm_vocab_destroy(c->vocab);
}

/* The matcher's mask now equals the reference's at its committed prefix. */
static void compare(ctx *c, const char *what, size_t step)
{
    gm_error err;
    if (gm_matcher_fill_mask(c->m, c->mask, c->words, &err))
        fail_msg("%s step %zu: fill_mask: %s", what, step, err.message);
    const gm_vocab_data *v = c->vd;
    gm_eref_try_all(c->ref, c->sext, c->slen, v->size, c->sviable, NULL);
    for (uint32_t k = 0; k < v->size; k++)
        c->viable[c->order[k]] = c->sviable[k];
    bool acc = gm_eref_accepting(c->ref);
    if (acc != gm_matcher_is_accepting(c->m))
        fail_msg("%s step %zu: accepting: matcher %d, reference %d", what, step,
                 gm_matcher_is_accepting(c->m), acc);
    for (uint32_t t = 0; t < v->size; t++) {
        bool got = (c->mask[t / 32] >> (t % 32)) & 1, want;
        if (v->flags[t] & GM_TOK_PADDING)
            want = false;
        else if (v->flags[t] & GM_TOK_SPECIAL)
            want = gm_eref_try_special(c->ref, c->ext[t], c->len[t], NULL) ||
                   ((v->flags[t] & GM_TOK_EOS) && acc);
        else
            want = c->len[t] > 0 && c->viable[t];
        if (got != want) {
            fprintf(stderr, "token %u ", t);
            gm_test_show_bytes(stderr, c->ext[t], c->len[t]);
            fail_msg("%s step %zu: token %u: matcher %d, reference %d", what, step, t, got, want);
        }
    }
    c->checked++;
}

/* The special token spelled at s[0..n) (longest), or UINT32_MAX; *l its length. */
static uint32_t special_at(const ctx *c, const char *s, size_t n, size_t *l)
{
    uint32_t best = UINT32_MAX;
    *l = 0;
    for (uint32_t t = 0; t < c->vd->size; t++)
        if ((c->vd->flags[t] & GM_TOK_SPECIAL) && c->len[t] > *l && c->len[t] <= n &&
            !memcmp(s, c->ext[t], c->len[t])) {
            best = t;
            *l = c->len[t];
        }
    return best;
}

/*
 * text tokenized greedily: special tokens where the format has them (given
 * by their text), elsewhere the longest token of the trie at each position
 * (of the text tokens only, or also of the added ones: `added`).
 */
static uint32_t *greedy_ids(ctx *c, const char *text, size_t n, bool added, size_t *nids)
{
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    size_t k = 0;
    const gm_trie *tr = c->vocab->trie;
    const char *const *sp = c->pc->format == GM_TOOLS_HARMONY ? harmony_specials : NULL;
    for (size_t i = 0; i < n;) {
        /* the next special token's spelling: no text token runs into it */
        size_t stop = n, l = 0;
        uint32_t sid = UINT32_MAX;
        for (size_t j = i; sp && j < n && stop == n; j++)
            for (size_t s = 0; sp[s]; s++)
                if (!strncmp(text + j, sp[s], strlen(sp[s]))) {
                    stop = j;
                    sid = special_at(c, text + j, strlen(sp[s]), &l);
                    assert_true(sid != UINT32_MAX && l == strlen(sp[s]));
                    break;
                }
        if (stop == i) {
            ids[k++] = sid;
            i += l;
            continue;
        }
        uint32_t best = UINT32_MAX;
        for (size_t len = 1; i + len <= stop && len <= tr->max_depth; len++) {
            uint32_t node = gm_trie_find(tr, (const uint8_t *)text + i, len);
            if (node == UINT32_MAX)
                break;
            for (uint32_t k2 = tr->nodes[node].tok_begin; k2 < tr->nodes[node].tok_end; k2++)
                if (added || !(c->vd->flags[tr->tokens[k2]] & GM_TOK_ADDED)) {
                    best = tr->tokens[k2];
                    l = len;
                    break;
                }
        }
        assert_true(best != UINT32_MAX);
        ids[k++] = best;
        i += l;
    }
    *nids = k;
    return ids;
}

/* Decodes ids[0..n) (the turn text, boundaries at bd[0..nbd) of kinds bk) and checks masks. */
static void decode(ctx *c, const char *what, const char *text, size_t tlen, const uint32_t *ids,
                   size_t n, const size_t *bd, const int *bk, size_t nbd)
{
    gm_error err;
    gm_matcher_reset(c->m);
    gm_eref_rollback(c->ref, 0);
    size_t off = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = ids[i];
        size_t end = off + c->len[t];
        if (end > tlen || memcmp(text + off, c->ext[t], c->len[t]))
            fail_msg("%s: token %zu (%u) is not the text at byte %zu", what, i, t, off);
        while (b < nbd && bd[b] < off)
            b++;
        bool at_boundary = b < nbd && bd[b] < end; /* starts at or crosses one */
        for (size_t k = b; k < nbd && bd[k] < end; k++)
            if (bd[k] > off)
                c->straddled[bk[k]]++;
        if (at_boundary || i % (size_t)c->every == 0)
            compare(c, what, i);
        if (gm_matcher_accept_token(c->m, t, &err))
            fail_msg("%s step %zu: token %u rejected: %s", what, i, t, err.message);
        bool ok = (c->vd->flags[t] & GM_TOK_SPECIAL)
                      ? gm_eref_feed_special(c->ref, c->ext[t], c->len[t])
                      : gm_eref_feed(c->ref, c->ext[t], c->len[t]);
        if (!ok)
            fail_msg("%s step %zu: the reference rejects token %u", what, i, t);
        off = end;
    }
    assert_int_equal(off, tlen);
    if (n && (c->vd->flags[ids[n - 1]] & GM_TOK_EOS)) {
        /* the turn ended with an EOS the format names (Harmony's <|return|>) */
        assert_true(gm_matcher_is_terminated(c->m));
        return;
    }
    compare(c, what, n);
    if (!gm_matcher_is_accepting(c->m))
        fail_msg("%s: EOS not allowed at the end", what);
}

static void run_turn(ctx *c, const turn *tu)
{
    char text[2048];
    size_t tlen = 0, bd[MAX_PIECES], nbd = 0;
    int bk[MAX_PIECES];
    for (size_t k = 0; k < MAX_PIECES && tu->p[k].text; k++) {
        if (k > 0 && tu->p[k].kind != tu->p[k - 1].kind) {
            bd[nbd] = tlen;
            bk[nbd++] = boundary_kind(tu->p[k - 1].kind, tu->p[k].kind);
        }
        size_t l = strlen(tu->p[k].text);
        assert_true(tlen + l < sizeof text);
        memcpy(text + tlen, tu->p[k].text, l);
        tlen += l;
    }
    text[tlen] = 0;
    gm_error err;
    uint32_t *ids;
    size_t n;
    if (gm_vocab_encode(c->vocab, text, tlen, NULL, &ids, &n, &err))
        fail_msg("%s: encode: %s", tu->name, err.message);
    char what[128];
    snprintf(what, sizeof what, "%s (encoded)", tu->name);
    decode(c, what, text, tlen, ids, n, bd, bk, nbd);
    gm_vocab_free_ids(c->vocab, ids);
    ids = greedy_ids(c, text, tlen, true, &n);
    snprintf(what, sizeof what, "%s (longest match)", tu->name);
    decode(c, what, text, tlen, ids, n, bd, bk, nbd);
    /* added tokens (qwen's <tool_call>) spelled by text tokens, when that differs */
    size_t n2;
    uint32_t *ids2 = greedy_ids(c, text, tlen, false, &n2);
    if (n2 != n || memcmp(ids, ids2, n * sizeof *ids)) {
        snprintf(what, sizeof what, "%s (longest match, no added tokens)", tu->name);
        decode(c, what, text, tlen, ids2, n2, bd, bk, nbd);
    }
    free(ids2);
    free(ids);
}

static void run_preset(const preset_case *pc)
{
    ctx c;
    ctx_open(&c, pc);
    for (size_t k = 0; k < pc->nturns; k++)
        run_turn(&c, &pc->turns[k]);
    printf("%s (%s): %d masks compared; tokens straddling", pc->format_name, pc->tokenizer,
           c.checked);
    for (int k = 0; k < BD_KINDS; k++)
        printf(" %s: %d", bd_names[k], c.straddled[k]);
    printf("\n");
    for (int k = 0; pc->straddles && k < BD_KINDS; k++)
        if (c.straddled[k] == 0)
            fail_msg("%s: no token straddles a %s boundary: the turns test less than they say",
                     pc->format_name, bd_names[k]);
    ctx_close(&c);
}

#define CASE(f, fmt, tok, turns, s) {f, fmt, tok, turns, sizeof turns / sizeof *turns, s}

static void llama(void **state)
{
    (void)state;
    static const preset_case pc = CASE("llama", GM_TOOLS_LLAMA, "llama3", llama_turns, true);
    run_preset(&pc);
}

static void llama_json(void **state)
{
    (void)state;
    static const preset_case pc =
        CASE("llama-json", GM_TOOLS_LLAMA_JSON, "llama3", llama_json_turns, true);
    run_preset(&pc);
}

static void qwen(void **state)
{
    (void)state;
    static const preset_case pc = CASE("qwen", GM_TOOLS_QWEN, "qwen3", qwen_turns, true);
    run_preset(&pc);
}

static void harmony(void **state)
{
    (void)state;
    static const preset_case pc =
        CASE("harmony", GM_TOOLS_HARMONY, "gptoss", harmony_turns, false);
    run_preset(&pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama),
        cmocka_unit_test(llama_json),
        cmocka_unit_test(qwen),
        cmocka_unit_test(harmony),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
