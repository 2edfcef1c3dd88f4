/*
 * bench_dispatch: TagDispatch and the tool-call presets (issue 17), single
 * thread, through the public API (gm_grammar_from_tools, gm_compiled_create,
 * gm_matcher_fill_mask).
 *
 * Tools are MaskBench's BFCL schemas ($GM_SHARED_DIR/maskbench/dev.jsonl.gz:
 * each {"properties": {NAME: PARAMETERS}} alternative is a tool), their valid
 * instances the calls' arguments.
 *
 *   masks    per format and tokenizer (llama and llama-json with llama3,
 *            qwen with qwen3, harmony with gptoss, the families deepseek_v3_1
 *            with deepseek_v3 and exaone with gemma3), 8 tools, turns of prose
 *            and 1-3 calls encoded with the tokenizer (gm_vocab_encode):
 *            per-step fill_mask time by where the next byte is — free text
 *            (dispatching; also <think> and Harmony message text), inside a
 *            call's arguments, or in a tag's begin/end — in a cold pass
 *            (a fresh vocabulary: every cache built inside the timed masks)
 *            and warm (per-step minimum over R more passes).
 *   compile  the preset for 1, 8, 32 and 128 tools: the grammar
 *            (gm_grammar_from_tools: preset -> structural tag -> JSON Schemas
 *            -> grammar IR -> rule automata), gm_compiled_create and the
 *            first mask; cold (first grammar of a fresh vocabulary, median of
 *            R) and warm (the same vocabulary after other tool sets were
 *            compiled and decoded).
 *   families the model-family presets (qwen_3, deepseek_*, kimi, ...): a
 *            cold compile of 1, 8, 32 and 128 tools each.
 *   one tool changed: a set of 32 tools compiled and decoded, then the set
 *            with one tool replaced, compiled and its turns decoded once:
 *            against the same on a fresh vocabulary (no cross-grammar cache).
 *   laziness: the first mask at the start of a turn and the first inside a
 *            call, for 1 and 128 tools: the start must not pay for the tools.
 *
 * Wall times (CLOCK_MONOTONIC); the machine is shared (2 cores, other
 * sessions), the load average is printed.
 *
 * usage: bench_dispatch [--runs R] [--out FILE] [--only masks|compile|families|one|lazy]
 *                       [--format llama|llama-json|qwen|harmony|FAMILY] [--tools N]
 *                       [--tokenizer llama3|qwen3|gptoss|deepseek_v3|gemma3]
 * (--tools N: the families section measures N tools only; --tokenizer T: every
 * family with T rather than its own)
 */
#define _DEFAULT_SOURCE /* getloadavg */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <time.h>

#include <jansson.h>

#include "gramask.h"
#include "base/timing.h"

static FILE *out_file;
static const char *only_format; /* --format: one format's rows */
static size_t only_tools;        /* --tools N: the families section's column of N tools only */
static const char *any_tokenizer; /* --tokenizer T: the families section's, for every family */

static bool skip_format(const char *name) { return only_format && strcmp(only_format, name); }

/* Figures against the targets, for the summary (NaN: not measured). */
enum { NFORMATS = 6 };
static double target_free[NFORMATS], target_call[NFORMATS], target_c32[NFORMATS];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (out_file) {
        va_start(ap, fmt);
        vfprintf(out_file, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

static void die(const char *what, const gm_error *err)
{
    fprintf(stderr, "bench_dispatch: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
    exit(1);
}

static double ms_since(uint64_t t0) { return (gm_clock_ns() - t0) / 1e6; }

/* This thread's CPU time in ms: what a compile costs when other processes take turns on
   the cores (a shared machine's wall times can be many times longer). */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- BFCL tools ----------------------------------------------------------- */

typedef struct tool {
    char *name;
    json_t *params;
    char **args;              /* valid arguments (JSON texts) */
    size_t nargs;
} tool;

typedef struct pool {
    tool *t;
    size_t n;
} pool;

static tool *pool_find(pool *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->t[i].name, name))
            return &p->t[i];
    return NULL;
}

/*
 * The tools of one BFCL schema: {"properties": {NAME: PARAMS}} or an anyOf of
 * those. BFCL has different tools of one name: the first is kept, and
 * same[i] says whether alternative i is the pool's tool of that name.
 */
static void add_schema(pool *p, json_t *schema, bool *same, size_t cap)
{
    json_t *alts = json_object_get(schema, "anyOf");
    size_t n = alts ? json_array_size(alts) : 1;
    for (size_t i = 0; i < n && i < cap; i++) {
        json_t *alt = alts ? json_array_get(alts, i) : schema;
        json_t *props = json_object_get(alt, "properties");
        same[i] = false;
        if (!json_is_object(props) || json_object_size(props) != 1)
            continue;
        const char *name = json_object_iter_key(json_object_iter(props));
        json_t *params = json_object_get(props, name);
        tool *t = pool_find(p, name);
        if (t) {
            same[i] = json_equal(t->params, params);
            continue;
        }
        p->t = realloc(p->t, (p->n + 1) * sizeof *p->t);
        p->t[p->n++] = (tool){strdup(name), json_incref(params), NULL, 0};
        same[i] = true;
    }
}

/* A valid instance {"NAME": ARGS} (Python's separators): ARGS as written, for the pool's tool. */
static void add_call(pool *p, json_t *schema, const bool *same, size_t cap, const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!json_is_object(v) || json_object_size(v) != 1) {
        json_decref(v);
        return;
    }
    const char *name = json_object_iter_key(json_object_iter(v));
    json_t *alts = json_object_get(schema, "anyOf");
    size_t n = alts ? json_array_size(alts) : 1;
    bool ours = false;
    for (size_t i = 0; i < n && i < cap; i++) {
        json_t *props = json_object_get(alts ? json_array_get(alts, i) : schema, "properties");
        ours |= same[i] && json_object_get(props, name) != NULL;
    }
    tool *t = ours ? pool_find(p, name) : NULL;
    json_decref(v);
    const char *a = strstr(text, "\": ");
    size_t len = strlen(text);
    if (!t || !a || len < 2 || text[len - 1] != '}' || t->nargs >= 8)
        return;
    a += 3;
    t->args = realloc(t->args, (t->nargs + 1) * sizeof *t->args);
    t->args[t->nargs++] = strndup(a, (size_t)(text + len - 1 - a));
}

static pool load_bfcl(const char *path)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        die("cannot run gzip -dc on the MaskBench file", NULL);
    pool p = {0};
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *d = json_loads(line, 0, &je);
        const char *split = json_string_value(json_object_get(d, "split"));
        if (split && !strncmp(split, "BFCL", 4)) {
            bool same[64];
            json_t *schema = json_object_get(d, "schema");
            add_schema(&p, schema, same, 64);
            json_t *tests = json_object_get(d, "tests"), *t;
            size_t i;
            json_array_foreach(tests, i, t)
                if (json_is_true(json_object_get(t, "valid")))
                    add_call(&p, schema, same, 64, json_string_value(json_object_get(t, "text")));
        }
        json_decref(d);
    }
    free(line);
    if (pclose(f) != 0 || p.n == 0)
        die("no BFCL tools read from the MaskBench file", NULL);
    /* a fixed shuffle, tools with calls first */
    uint64_t s = 12345;
    for (size_t i = p.n - 1; i > 0; i--) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)((s >> 33) % (i + 1));
        tool x = p.t[i];
        p.t[i] = p.t[j];
        p.t[j] = x;
    }
    size_t k = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.t[i].nargs) {
            tool x = p.t[i];
            p.t[i] = p.t[k];
            p.t[k++] = x;
        }
    return p;
}

/* The OpenAI tools JSON of tools[0..n). */
static char *tools_json(tool *const *tools, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *fn = json_pack("{s:s, s:O}", "name", tools[i]->name, "parameters",
                               tools[i]->params);
        json_array_append_new(arr, json_pack("{s:s, s:o}", "type", "function", "function", fn));
    }
    char *s = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return s;
}

/* ---- formats and turns ---------------------------------------------------- */

typedef struct fmt {
    const char *name;
    gm_tool_format format;
    const char *tokenizer;
} fmt;

static const fmt formats[] = {{"llama", GM_TOOLS_LLAMA, "llama3"},
                              {"llama-json", GM_TOOLS_LLAMA_JSON, "llama3"},
                              {"qwen", GM_TOOLS_QWEN, "qwen3"},
                              {"harmony", GM_TOOLS_HARMONY, "gptoss"},
                              /* two families, for the free-text steps of the
                                 deepseek_v3 and gemma3 vocabularies */
                              {"deepseek_v3_1", GM_TOOLS_DEEPSEEK_V3_1, "deepseek_v3"},
                              {"exaone", GM_TOOLS_EXAONE, "gemma3"}};

/* Where the next byte of a turn is. */
enum { AT_TEXT, AT_CALL, AT_TAG, AT_KINDS };
static const char *const at_names[AT_KINDS] = {"free text", "in a call", "tag begin/end"};

typedef struct turn {
    char *text;
    size_t len;
    uint8_t *at;              /* [len + 1] AT_* of each byte (the last: the end) */
    uint32_t *ids;
    size_t nids;
} turn;

typedef struct turn_buf {
    char text[16384];
    uint8_t at[16384];
    size_t n;
} turn_buf;

static void put(turn_buf *b, int at, const char *s)
{
    size_t l = strlen(s);
    if (b->n + l >= sizeof b->text)
        die("a turn too long", NULL);
    memcpy(b->text + b->n, s, l);
    memset(b->at + b->n, at, l);
    b->n += l;
}

static const char *const prose[] = {
    "Let me look that up for you.", "I'll call the tool with the values you gave.",
    "Sure - checking now, one moment please.",
    "Here is what I will do: call the function, then summarize what it returns."};

/* A turn of format f calling tools[c[k]] with arguments a[k], k < ncalls. */
static void make_turn(const fmt *f, tool *const *calls, const char *const *args, size_t ncalls,
                      uint64_t r, turn_buf *b)
{
    char buf[512];
    const char *text = prose[r % 4];
    b->n = 0;
    switch (f->format) {
    case GM_TOOLS_LLAMA:
    case GM_TOOLS_LLAMA_JSON:
        put(b, AT_TEXT, text);
        put(b, AT_TEXT, "\n");
        for (size_t k = 0; k < ncalls; k++) {
            if (f->format == GM_TOOLS_LLAMA)
                snprintf(buf, sizeof buf, "<function=%s>", calls[k]->name);
            else
                snprintf(buf, sizeof buf, "{\"name\": \"%s\", \"parameters\": ", calls[k]->name);
            put(b, AT_TAG, buf);
            put(b, AT_CALL, args[k]);
            put(b, AT_TAG, f->format == GM_TOOLS_LLAMA ? "</function>" : "}");
            put(b, AT_TEXT, k + 1 < ncalls ? "\n" : "\nDone.");
        }
        break;
    case GM_TOOLS_QWEN:
        put(b, AT_TAG, "<think>");
        put(b, AT_TEXT, "\nThe user asked for this; ");
        put(b, AT_TEXT, text);
        put(b, AT_TAG, "\n</think>");
        put(b, AT_TEXT, "\n\nI will use the tools.\n");
        for (size_t k = 0; k < ncalls; k++) {
            snprintf(buf, sizeof buf, "<tool_call>\n{\"name\": \"%s\", \"arguments\": ",
                     calls[k]->name);
            put(b, AT_TAG, buf);
            put(b, AT_CALL, args[k]);
            put(b, AT_TAG, "}\n</tool_call>");
            if (k + 1 < ncalls)
                put(b, AT_TEXT, "\n");
        }
        break;
    case GM_TOOLS_HARMONY:
        put(b, AT_TAG, "<|channel|>analysis<|message|>");
        put(b, AT_TEXT, text);
        put(b, AT_TEXT, " Need to use the function.");
        put(b, AT_TAG, "<|end|><|start|>assistant<|channel|>commentary to=functions.");
        put(b, AT_TAG, calls[0]->name);
        put(b, AT_TAG, " <|constrain|>json<|message|>");
        put(b, AT_CALL, args[0]);
        put(b, AT_TAG, "<|call|>");
        break;
    case GM_TOOLS_DEEPSEEK_V3_1: /* inside the reasoning block the prompt opened */
    case GM_TOOLS_EXAONE: {
        bool ds = f->format == GM_TOOLS_DEEPSEEK_V3_1;
        put(b, AT_TEXT, "The user asked for this; ");
        put(b, AT_TEXT, text);
        put(b, AT_TAG, ds ? "</think>" : "</think>\n\n");
        put(b, AT_TEXT, "I will use the tools.\n");
        if (ds)
            put(b, AT_TAG, "<｜tool▁calls▁begin｜>");
        for (size_t k = 0; k < ncalls; k++) {
            if (ds)
                snprintf(buf, sizeof buf, "<｜tool▁call▁begin｜>%s<｜tool▁sep｜>",
                         calls[k]->name);
            else
                snprintf(buf, sizeof buf, "<tool_call>{\"name\": \"%s\", \"arguments\": ",
                         calls[k]->name);
            put(b, AT_TAG, buf);
            put(b, AT_CALL, args[k]);
            put(b, AT_TAG, ds ? "<｜tool▁call▁end｜>" : "}</tool_call>");
        }
        if (ds)
            put(b, AT_TAG, "<｜tool▁calls▁end｜>");
        put(b, AT_TEXT, "\nDone.");
        break;
    }
    default: /* the other model families: compiled only (families_section) */
        break;
    }
    b->at[b->n] = AT_TAG;
}

typedef struct turns {
    turn *t;
    size_t n;
    size_t steps;             /* masks per pass: tokens + 1 per turn */
} turns;

/*
 * nturns turns calling 1-3 (Harmony: 1) of the tools of all[0..nall) that
 * have valid calls, encoded with v; none when no tool has one.
 */
static turns make_turns(const fmt *f, gm_vocab *v, tool *const *all, size_t nall,
                        size_t nturns, uint64_t seed)
{
    tool **tools = malloc((nall ? nall : 1) * sizeof *tools);
    size_t ntools = 0;
    for (size_t i = 0; i < nall; i++)
        if (all[i]->nargs)
            tools[ntools++] = all[i];
    if (ntools == 0)
        nturns = 0;
    turns ts = {calloc(nturns ? nturns : 1, sizeof(turn)), nturns, 0};
    turn_buf *b = malloc(sizeof *b);
    uint64_t r = seed;
    for (size_t i = 0; i < nturns; i++) {
        tool *calls[3];
        const char *args[3];
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        size_t nc = f->format == GM_TOOLS_HARMONY ? 1 : 1 + (r >> 40) % 3;
        for (size_t k = 0; k < nc; k++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            tool *t = tools[(r >> 33) % ntools];
            calls[k] = t;
            args[k] = t->args[(r >> 20) % t->nargs];
        }
        make_turn(f, calls, args, nc, r >> 50, b);
        turn *t = &ts.t[i];
        t->text = malloc(b->n + 1);
        memcpy(t->text, b->text, b->n);
        t->text[b->n] = 0;
        t->len = b->n;
        t->at = malloc(b->n + 1);
        memcpy(t->at, b->at, b->n + 1);
        gm_error err;
        uint32_t *ids;
        if (gm_vocab_encode(v, t->text, t->len, NULL, &ids, &t->nids, &err))
            die("encode", &err);
        t->ids = malloc((t->nids + 1) * sizeof *t->ids);
        memcpy(t->ids, ids, t->nids * sizeof *ids);
        gm_vocab_free_ids(v, ids);
        ts.steps += t->nids + 1;
    }
    free(b);
    free(tools);
    return ts;
}

static void free_turns(turns *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        free(ts->t[i].text);
        free(ts->t[i].at);
        free(ts->t[i].ids);
    }
    free(ts->t);
}

/* ---- decoding ------------------------------------------------------------- */

typedef struct pass {
    uint64_t *ns;             /* [steps] fill_mask time */
    uint8_t *at;              /* [steps] AT_* of the step */
    bool ok;                  /* every true token allowed, EOS allowed at every end */
} pass;

/* One pass over ts with c; per-step times into p (kept as minima when `min`). */
static void run_pass(gm_compiled *c, const turns *ts, pass *p, bool min)
{
    gm_error err;
    gm_matcher *m;
    if (gm_matcher_create(c, NULL, &m, &err))
        die("matcher", &err);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = malloc(words * 4);
    p->ok = true;
    size_t base = 0;
    for (size_t i = 0; i < ts->n; base += ts->t[i++].nids + 1) {
        const turn *t = &ts->t[i];
        gm_matcher_reset(m);
        size_t off = 0;
        for (size_t j = 0; j <= t->nids; j++) {
            size_t k = base + j;
            uint64_t t0 = gm_clock_ns();
            if (gm_matcher_fill_mask(m, mask, words, &err))
                die("fill_mask", &err);
            uint64_t dt = gm_clock_ns() - t0;
            p->ns[k] = min && p->ns[k] < dt ? p->ns[k] : dt;
            p->at[k] = t->at[off < t->len ? off : t->len];
            if (j == t->nids) {
                p->ok &= gm_matcher_is_accepting(m);
                break;
            }
            uint32_t id = t->ids[j];
            size_t len;
            gm_vocab_token(gm_compiled_vocab(c), id, &len);
            off += len;
            if (!((mask[id / 32] >> (id % 32)) & 1) || gm_matcher_accept_token(m, id, &err)) {
                if (p->ok)
                    fprintf(stderr, "bench_dispatch: turn %zu: token %zu (id %u) rejected after "
                                    "'%.*s'\n", i, j, id, (int)(off - len), t->text);
                if (p->ok)
                    fprintf(stderr, "  then '%s'\n", t->text + off - len);
                p->ok = false;
                break;
            }
        }
    }
    free(mask);
    gm_matcher_destroy(m);
}

/* The latency of the steps of p at `at`. */
static gm_latency lat_at(const pass *p, size_t steps, int at)
{
    uint64_t *c = malloc(steps * sizeof *c);
    size_t n = 0;
    for (size_t k = 0; k < steps; k++)
        if (p->at[k] == at)
            c[n++] = p->ns[k];
    gm_latency l = gm_latency_of(c, n);
    free(c);
    return l;
}

static double pass_ms(const pass *p, size_t steps)
{
    uint64_t s = 0;
    for (size_t k = 0; k < steps; k++)
        s += p->ns[k];
    return s / 1e6;
}

/* ---- compiling ------------------------------------------------------------ */

typedef struct times {
    double grammar, compile, first; /* ms: gm_grammar_from_tools, gm_compiled_create, matcher + first mask */
} times;

static gm_vocab *load_vocab(const char *shared, const char *tok)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizers/%s", shared, tok);
    gm_error err;
    gm_vocab *v;
    if (gm_vocab_create_from_file(path, NULL, &v, &err))
        die(path, &err);
    return v;
}

static gm_grammar_cache *new_cache(void)
{
    gm_grammar_cache *gc;
    gm_error err;
    if (gm_grammar_cache_create(NULL, 0, &gc, &err))
        die("gm_grammar_cache_create", &err);
    return gc;
}

/* The preset of tools[0..n) for v, with the grammar cache gc (may be NULL). */
static gm_compiled *compile(gm_vocab *v, gm_grammar_cache *gc, const fmt *f, tool *const *tools,
                            size_t n, times *tm)
{
    char *json = tools_json(tools, n);
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = f->format;
    o.cache = gc;
    gm_error err;
    gm_grammar *g;
    uint64_t t0 = gm_clock_ns();
    if (gm_grammar_from_tools(json, strlen(json), &o, &g, &err))
        die("gm_grammar_from_tools", &err);
    tm->grammar = ms_since(t0);
    free(json);
    gm_compiled *c;
    t0 = gm_clock_ns();
    if (gm_compiled_create(g, v, NULL, &c, &err))
        die("gm_compiled_create", &err);
    tm->compile = ms_since(t0);
    gm_grammar_destroy(g);
    t0 = gm_clock_ns();
    gm_matcher *m;
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = malloc(words * 4);
    if (gm_matcher_create(c, NULL, &m, &err) || gm_matcher_fill_mask(m, mask, words, &err))
        die("first mask", &err);
    tm->first = ms_since(t0);
    gm_matcher_destroy(m);
    free(mask);
    return c;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static times median(times *t, int n)
{
    double a[3][16];
    for (int i = 0; i < n; i++) {
        a[0][i] = t[i].grammar;
        a[1][i] = t[i].compile;
        a[2][i] = t[i].first;
    }
    for (int k = 0; k < 3; k++)
        qsort(a[k], (size_t)n, sizeof(double), cmp_double);
    return (times){a[0][n / 2], a[1][n / 2], a[2][n / 2]};
}

/* A cold decode of ts (one pass, per-step times) with c; its total mask time in ms. */
static double cold_pass(gm_compiled *c, const turns *ts, bool *ok)
{
    pass p = {calloc(ts->steps, 8), calloc(ts->steps, 1), true};
    run_pass(c, ts, &p, false);
    double ms = pass_ms(&p, ts->steps);
    *ok = p.ok;
    free(p.ns);
    free(p.at);
    return ms;
}

/* ---- sections ------------------------------------------------------------- */

static void masks_section(const char *shared, pool *P, int runs)
{
    say("### Masks per step (8 tools)\n\n");
    say("Turns of prose and 1-3 calls (Harmony: an analysis message, then one call) of 8 BFCL "
        "tools with MaskBench's valid arguments, encoded with the tokenizer. A step is "
        "classed by where the next byte of the turn is: *free text* (dispatching, and the "
        "text of `<think>` and Harmony messages), *in a call* (the arguments), *tag* (begins "
        "and ends). *cold*: the first pass on a fresh vocabulary (every cache built inside "
        "the timed masks); *warm*: per-step minimum over %d more passes.\n\n", runs - 1);
    say("| format | tokenizer | class | steps | cold mean µs | warm mean µs | warm p50 µs | "
        "warm p99 µs | warm max µs | exact |\n|---|---|---|---|---|---|---|---|---|---|\n");
    tool *sel[8];
    for (size_t i = 0; i < 8; i++)
        sel[i] = &P->t[i];
    for (size_t fi = 0; fi < sizeof formats / sizeof *formats; fi++) {
        const fmt *f = &formats[fi];
        if (skip_format(f->name))
            continue;
        gm_vocab *v = load_vocab(shared, f->tokenizer);
        times tm;
        gm_compiled *c = compile(v, NULL, f, sel, 8, &tm);
        turns ts = make_turns(f, v, sel, 8, 24, 7 + fi);
        pass cold = {calloc(ts.steps, 8), calloc(ts.steps, 1), true};
        pass warm = {calloc(ts.steps, 8), calloc(ts.steps, 1), true};
        run_pass(c, &ts, &cold, false);
        for (int r = 1; r < runs; r++) {
            run_pass(c, &ts, &warm, r > 1);
            warm.ok &= cold.ok;
        }
        for (int at = 0; at < AT_KINDS; at++) {
            gm_latency lc = lat_at(&cold, ts.steps, at), lw = lat_at(&warm, ts.steps, at);
            if (at == AT_TEXT)
                target_free[fi] = lw.mean;
            if (at == AT_CALL)
                target_call[fi] = lw.mean;
            say("| %s | %s | %s | %zu | %.1f | %.2f | %.2f | %.1f | %.1f | %s |\n", f->name,
                f->tokenizer, at_names[at], lw.n, lc.mean, lw.mean, lw.p50, lw.p99, lw.max,
                warm.ok ? "yes" : "**NO**");
        }
        free(cold.ns);
        free(cold.at);
        free(warm.ns);
        free(warm.at);
        free_turns(&ts);
        gm_compiled_destroy(c);
        gm_vocab_destroy(v);
    }
    say("\n");
}

static void compile_section(const char *shared, pool *P, int runs)
{
    static const size_t sizes[] = {1, 8, 32, 128};
    say("### Compiling a preset\n\n");
    say("*grammar*: `gm_grammar_from_tools` (preset, structural tag, each tool's JSON Schema, "
        "grammar IR, rule automata); *compiled*: `gm_compiled_create`; *first mask*: a "
        "matcher and its first mask. *cold*: the first grammar of a freshly loaded vocabulary "
        "(median of %d), no grammar cache; *warm*: the same vocabulary, with a grammar cache "
        "(`gm_grammar_cache`) kept beside it, after two other tool sets of the same size (no "
        "tool in common) were compiled with both and decoded (median of %d). Tools are the "
        "first N of the shuffled BFCL pool (%zu tools).\n\n", runs, runs, P->n);
    say("| format | tools | cold grammar ms | cold compiled ms | cold first mask ms | cold "
        "total ms | warm grammar ms | warm compiled ms | warm first mask ms | warm total ms "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t fi = 0; fi < sizeof formats / sizeof *formats; fi++) {
        const fmt *f = &formats[fi];
        if (skip_format(f->name))
            continue;
        if (f->format == GM_TOOLS_LLAMA_JSON)
            continue;
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            if (3 * n > P->n)
                break;
            tool **set = malloc(3 * n * sizeof *set);
            for (size_t i = 0; i < 3 * n; i++)
                set[i] = &P->t[i];
            times cold[16], warm[16];
            for (int r = 0; r < runs; r++) {
                gm_vocab *v = load_vocab(shared, f->tokenizer);
                gm_compiled_destroy(compile(v, NULL, f, set, n, &cold[r]));
                gm_vocab_destroy(v);
            }
            for (int r = 0; r < runs; r++) {
                gm_vocab *v = load_vocab(shared, f->tokenizer);
                gm_grammar_cache *gc = new_cache();
                /* two other sets of n tools (their calls decoded), then this one */
                for (int o = 1; o <= 2; o++) {
                    times t;
                    gm_compiled *c = compile(v, gc, f, set + o * n, n, &t);
                    turns ts = make_turns(f, v, set + o * n, n, 6, (uint64_t)o);
                    bool ok;
                    cold_pass(c, &ts, &ok);
                    free_turns(&ts);
                    gm_compiled_destroy(c);
                }
                gm_compiled_destroy(compile(v, gc, f, set, n, &warm[r]));
                gm_grammar_cache_destroy(gc);
                gm_vocab_destroy(v);
            }
            times mc = median(cold, runs), mw = median(warm, runs);
            if (n == 32)
                target_c32[fi] = mc.grammar + mc.compile + mc.first;
            say("| %s (%s) | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                f->name, f->tokenizer, n, mc.grammar, mc.compile, mc.first,
                mc.grammar + mc.compile + mc.first, mw.grammar, mw.compile, mw.first,
                mw.grammar + mw.compile + mw.first);
            free(set);
        }
    }
    say("\n");
}

/*
 * The model-family presets (dispatch/tool_families.h): a cold compile of 1, 8,
 * 32 and 128 tools each, with the tokenizer of the family where one is at hand.
 * A family whose argument style refuses a BFCL schema says so in its row.
 */
static void families_section(const char *shared, pool *P, int runs)
{
    static const size_t sizes[] = {1, 8, 32, 128};
    static const fmt fams[] = {
        {"qwen_3", GM_TOOLS_QWEN_3, "qwen3"},          {"qwen_3_coder", GM_TOOLS_QWEN_3_CODER, "qwen3"},
        {"kimi", GM_TOOLS_KIMI, "llama3"},             {"deepseek_r1", GM_TOOLS_DEEPSEEK_R1, "deepseek_v3"},
        {"deepseek_v3_1", GM_TOOLS_DEEPSEEK_V3_1, "deepseek_v3"},
        {"deepseek_v3_2", GM_TOOLS_DEEPSEEK_V3_2, "deepseek_v3"},
        {"glm_4_7", GM_TOOLS_GLM_4_7, "gemma3"},       {"minimax", GM_TOOLS_MINIMAX, "llama3"},
        {"cohere", GM_TOOLS_COHERE, "llama3"},         {"exaone", GM_TOOLS_EXAONE, "gemma3"},
        {"qwen_3_5", GM_TOOLS_QWEN_3_5, "qwen3"},      {"deepseek_v4", GM_TOOLS_DEEPSEEK_V4, "deepseek_v3"},
        {"kimi_k3", GM_TOOLS_KIMI_K3, "llama3"},       {"kimi_k3_xml", GM_TOOLS_KIMI_K3_XML, "llama3"}};
    say("### Compiling a model-family preset\n\n");
    say("Cold (a freshly loaded vocabulary, no grammar cache), median of %d: "
        "`gm_grammar_from_tools` + `gm_compiled_create` + the first mask, ms. Tokenizers: the "
        "family's own where at hand (qwen3, deepseek_v3), else another of ../shared.\n\n", runs);
    say("| family (tokenizer) | 1 tool | 8 tools | 32 tools | 128 tools |\n|---|---|---|---|---|\n");
    times at32[sizeof fams / sizeof *fams];
    double cpu32[sizeof fams / sizeof *fams];
    bool have32[sizeof fams / sizeof *fams] = {false};
    for (size_t fi = 0; fi < sizeof fams / sizeof *fams; fi++) {
        fmt f1 = fams[fi];
        const fmt *f = &f1;
        if (any_tokenizer)
            f1.tokenizer = any_tokenizer;
        if (skip_format(f->name))
            continue;
        say("| %s (%s) |", f->name, f->tokenizer);
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            if (n > P->n || (only_tools && n != only_tools)) {
                say(" - |");
                continue;
            }
            tool **set = malloc(n * sizeof *set);
            for (size_t i = 0; i < n; i++)
                set[i] = &P->t[i];
            char *json = tools_json(set, n);
            gm_tools_options o;
            gm_tools_options_init_defaults(&o);
            o.format = f->format;
            gm_error err;
            gm_grammar *g;
            if (gm_grammar_from_tools(json, strlen(json), &o, &g, &err)) {
                say(" refused: %s |", err.message);
                free(json);
                free(set);
                continue;
            }
            gm_grammar_destroy(g);
            free(json);
            times cold[16];
            double cpu[16];
            for (int r = 0; r < runs; r++) {
                gm_vocab *v = load_vocab(shared, f->tokenizer);
                double c0 = cpu_ms();
                gm_compiled *c = compile(v, NULL, f, set, n, &cold[r]);
                cpu[r] = cpu_ms() - c0;
                gm_compiled_destroy(c);
                gm_vocab_destroy(v);
            }
            times mc = median(cold, runs);
            say(" %.2f |", mc.grammar + mc.compile + mc.first);
            if (n == 32) {
                qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
                cpu32[fi] = cpu[runs / 2];
                at32[fi] = mc;
                have32[fi] = true;
            }
            free(set);
        }
        say("\n");
    }
    say("\nThe 32 tools' column by part (medians, ms): the grammar (`gm_grammar_from_tools`), "
        "the compiled grammar (`gm_compiled_create`), the matcher and its first mask; and the "
        "thread's CPU time of the whole (what it costs when the cores are shared).\n\n"
        "| family (tokenizer) | grammar | compiled | first mask | CPU ms |\n"
        "|---|---|---|---|---|\n");
    for (size_t fi = 0; fi < sizeof fams / sizeof *fams; fi++)
        if (have32[fi])
            say("| %s (%s) | %.2f | %.2f | %.2f | %.2f |\n", fams[fi].name,
                any_tokenizer ? any_tokenizer : fams[fi].tokenizer, at32[fi].grammar,
                at32[fi].compile, at32[fi].first, cpu32[fi]);
    say("\n");
}

static void one_tool_section(const char *shared, pool *P, int runs)
{
    enum { N = 32 };
    say("### One tool changed (32 tools)\n\n");
    say("A set S of 32 tools is compiled and its turns (12, 1-3 calls each) decoded; then S' "
        "(S with one tool replaced by a tool never seen) is compiled and 12 turns calling "
        "S' decoded once: *same vocabulary* (the cross-grammar cache of token masks holds what "
        "S built), without and with a grammar cache (`gm_grammar_cache`, which holds the rule "
        "automata S built), against *fresh vocabulary* (a cold compile of S'). Median of "
        "%d.\n\n", runs);
    say("| format | run | grammar ms | compiled ms | first mask ms | first pass ms (all masks "
        "of 12 turns) | compile to end of pass ms | exact |\n|---|---|---|---|---|---|---|---|\n");
    tool *s[N], *s2[N];
    for (size_t i = 0; i < N; i++)
        s[i] = s2[i] = &P->t[i];
    s2[N / 2] = &P->t[N]; /* the changed tool: called by the turns below */
    for (size_t fi = 0; fi < sizeof formats / sizeof *formats; fi++) {
        const fmt *f = &formats[fi];
        if (skip_format(f->name))
            continue;
        if (f->format == GM_TOOLS_LLAMA_JSON)
            continue;
        /* run 0: fresh vocabulary; 1: same vocabulary; 2: same vocabulary and grammar cache */
        double res[3][5][16];
        bool ok = true;
        for (int r = 0; r < runs; r++)
            for (int run = 0; run < 3; run++) {
                gm_vocab *v = load_vocab(shared, f->tokenizer);
                gm_grammar_cache *gc = run == 2 ? new_cache() : NULL;
                turns ts1 = make_turns(f, v, s, N, 12, 3), ts2 = make_turns(f, v, s2, N, 12, 5);
                if (run) {
                    times t;
                    gm_compiled *c = compile(v, gc, f, s, N, &t);
                    bool k;
                    cold_pass(c, &ts1, &k);
                    gm_compiled_destroy(c);
                }
                times t;
                gm_compiled *c = compile(v, gc, f, s2, N, &t);
                bool k;
                double pass_total = cold_pass(c, &ts2, &k);
                ok &= k;
                res[run][0][r] = t.grammar;
                res[run][1][r] = t.compile;
                res[run][2][r] = t.first;
                res[run][3][r] = pass_total;
                res[run][4][r] = t.grammar + t.compile + t.first + pass_total;
                gm_compiled_destroy(c);
                gm_grammar_cache_destroy(gc);
                free_turns(&ts1);
                free_turns(&ts2);
                gm_vocab_destroy(v);
            }
        static const char *const names[3] = {"fresh vocabulary (cold)",
                                              "same vocabulary, after S",
                                              "same vocabulary and grammar cache, after S"};
        for (int run = 0; run < 3; run++) {
            for (int k = 0; k < 5; k++)
                qsort(res[run][k], (size_t)runs, sizeof(double), cmp_double);
            say("| %s (%s) | %s | %.2f | %.2f | %.2f | %.1f | %.1f | %s |\n", f->name,
                f->tokenizer, names[run], res[run][0][runs / 2], res[run][1][runs / 2],
                res[run][2][runs / 2], res[run][3][runs / 2], res[run][4][runs / 2],
                ok ? "yes" : "**NO**");
        }
    }
    say("\n");
}

/* The first mask inside a call of tools[k], after its begin, on a fresh matcher. */
static double first_in_call(gm_compiled *c, const fmt *f, tool *t)
{
    turn_buf b;
    const char *args = "{}";
    make_turn(f, &t, &args, 1, 0, &b);
    size_t end = 0;
    while (end < b.n && b.at[end] != AT_CALL)
        end++;
    gm_error err;
    gm_matcher *m;
    if (gm_matcher_create(c, NULL, &m, &err))
        die("matcher", &err);
    uint32_t *ids;
    size_t n;
    const gm_vocab *v = gm_compiled_vocab(c);
    if (gm_vocab_encode(v, b.text, end, NULL, &ids, &n, &err))
        die("encode", &err);
    for (size_t i = 0; i < n; i++)
        if (gm_matcher_accept_token(m, ids[i], &err))
            die("the begin of a call", &err);
    gm_vocab_free_ids(v, ids);
    size_t words = gm_compiled_mask_words(c);
    uint32_t *mask = malloc(words * 4);
    uint64_t t0 = gm_clock_ns();
    if (gm_matcher_fill_mask(m, mask, words, &err))
        die("fill_mask", &err);
    double ms = ms_since(t0);
    free(mask);
    gm_matcher_destroy(m);
    return ms;
}

static void lazy_section(const char *shared, pool *P, int runs)
{
    say("### Laziness\n\n");
    say("Cold (fresh vocabulary, median of %d): the first mask at the start of a turn, and "
        "the first mask inside a call (after its begin) of the first tool, then of the last "
        "tool: a tool's masks are built when it is first called, not before.\n\n", runs);
    say("| format | tools | first mask ms | first mask in a call ms | then in another tool's "
        "call ms |\n|---|---|---|---|---|\n");
    for (size_t fi = 0; fi < sizeof formats / sizeof *formats; fi++) {
        const fmt *f = &formats[fi];
        if (skip_format(f->name))
            continue;
        if (f->format == GM_TOOLS_LLAMA_JSON)
            continue;
        static const size_t sizes[] = {1, 128};
        for (size_t si = 0; si < 2; si++) {
            size_t n = sizes[si];
            if (n > P->n)
                break;
            tool **set = malloc(n * sizeof *set);
            for (size_t i = 0; i < n; i++)
                set[i] = &P->t[i];
            double a[3][16];
            for (int r = 0; r < runs; r++) {
                gm_vocab *v = load_vocab(shared, f->tokenizer);
                times t;
                gm_compiled *c = compile(v, NULL, f, set, n, &t);
                a[0][r] = t.first;
                a[1][r] = first_in_call(c, f, set[0]);
                a[2][r] = n > 1 ? first_in_call(c, f, set[n - 1]) : 0;
                gm_compiled_destroy(c);
                gm_vocab_destroy(v);
            }
            for (int k = 0; k < 3; k++)
                qsort(a[k], (size_t)runs, sizeof(double), cmp_double);
            if (n > 1)
                say("| %s (%s) | %zu | %.2f | %.2f | %.2f |\n", f->name, f->tokenizer, n,
                    a[0][runs / 2], a[1][runs / 2], a[2][runs / 2]);
            else
                say("| %s (%s) | %zu | %.2f | %.2f | - |\n", f->name, f->tokenizer, n,
                    a[0][runs / 2], a[1][runs / 2]);
            free(set);
        }
    }
    say("\n");
}

int main(int argc, char **argv)
{
    const char *outp = NULL, *only = NULL;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            outp = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--format") && i + 1 < argc)
            only_format = argv[++i];
        else if (!strcmp(argv[i], "--tools") && i + 1 < argc)
            only_tools = (size_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc)
            any_tokenizer = argv[++i];
        else {
            fprintf(stderr, "usage: bench_dispatch [--runs R] [--out FILE] "
                            "[--only masks|compile|families|one|lazy] [--format F] [--tools N] "
                            "[--tokenizer T]\n");
            return 2;
        }
    }
    if (runs < 2 || runs > 16)
        runs = runs < 2 ? 2 : 16;
    const char *shared = getenv("GM_SHARED_DIR") ? getenv("GM_SHARED_DIR") : "../shared";
    if (outp && !(out_file = fopen(outp, "w"))) {
        fprintf(stderr, "bench_dispatch: cannot write %s\n", outp);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/maskbench/dev.jsonl.gz", shared);
    pool P = load_bfcl(path);
    for (size_t k = 0; k < NFORMATS; k++)
        target_free[k] = target_call[k] = target_c32[k] = NAN;
    size_t with_args = 0;
    while (with_args < P.n && P.t[with_args].nargs)
        with_args++;
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    say("TagDispatch and tool-call presets (issue 17), bench/bench_dispatch.\n\n");
    say("`bench/bench_dispatch --runs %d` (single thread); load average %.2f %.2f %.2f at the "
        "start (2 cores shared with other sessions: wall times are noisy). %zu BFCL tools "
        "(%zu with valid calls).\n\n", runs, load[0], load[1], load[2], P.n, with_args);
    if (with_args < 33)
        die("fewer than 33 BFCL tools with valid calls", NULL);
    if (!only || !strcmp(only, "masks"))
        masks_section(shared, &P, runs);
    if (!only || !strcmp(only, "compile"))
        compile_section(shared, &P, runs);
    if (!only || !strcmp(only, "families"))
        families_section(shared, &P, runs);
    if (!only || !strcmp(only, "one"))
        one_tool_section(shared, &P, runs);
    if (!only || !strcmp(only, "lazy"))
        lazy_section(shared, &P, runs);
    say("### Against the targets of issue 17\n\n| format | free text mean ≤ 2 µs (warm) | in a "
        "call mean ≤ 30 µs (warm) | compile 32 tools ≤ 10 ms (cold, to the first mask) "
        "|\n|---|---|---|---|\n");
    for (size_t fi = 0; fi < NFORMATS; fi++) {
        const fmt *f = &formats[fi];
        if (skip_format(f->name))
            continue;
        char c[3][48];
        double v[3] = {target_free[fi], target_call[fi], target_c32[fi]}, lim[3] = {2, 30, 10};
        const char *unit[3] = {"µs", "µs", "ms"};
        for (int k = 0; k < 3; k++)
            if (isnan(v[k]))
                snprintf(c[k], sizeof c[k], "-");
            else
                snprintf(c[k], sizeof c[k], "%.2f %s (%s)", v[k], unit[k],
                         v[k] <= lim[k] ? "met" : "**missed**");
        say("| %s (%s) | %s | %s | %s |\n", f->name, f->tokenizer, c[0], c[1], c[2]);
    }
    say("\n");
    for (size_t i = 0; i < P.n; i++) {
        free(P.t[i].name);
        json_decref(P.t[i].params);
        for (size_t k = 0; k < P.t[i].nargs; k++)
            free(P.t[i].args[k]);
        free(P.t[i].args);
    }
    free(P.t);
    if (out_file)
        fclose(out_file);
    return 0;
}
