/*
 * gramask maskbench FILE.jsonl[.gz] --tokenizer T [--json] [--threads N] [--timeout S]
 *
 * Scores JSON Schema support on MaskBench (../shared/maskbench/README.md):
 * per schema, compile (TTFM: schema -> grammar -> compiled grammar ->
 * matcher -> first mask); per instance, per token: the mask (TBM), the
 * token must be allowed, then it is committed; at the end EOS must be
 * allowed. A valid instance rejected anywhere is an invalidation error; an
 * invalid instance accepted to the end is a validation error. A schema
 * passes when it compiles and every instance gets the right verdict.
 *
 * note [maskbench isolation]
 * Schemas run in worker processes (one per thread), forked after the file
 * and the tokenizer are loaded, each taking every N-th schema in order and
 * keeping its caches from schema to schema as an inference server would
 * (the vocabulary's cross-grammar mask cache, and a gm_grammar_cache of
 * rule automata).
 * A worker announces each schema before it starts and writes its result
 * after; the parent reads with a deadline. A worker that dies (a crash)
 * or exceeds --timeout on one schema is killed; that schema is recorded
 * as a crash or a time-out, and a new worker resumes after it. So one bad
 * schema never stops the run, and the figures are timed inside the
 * workers, undisturbed by the isolation.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "base/timing.h"
#include "base/vec.h"
#include "runtime/objects.h"
#include "schema/json.h"
#include "schema/schema.h"
#include "cli/cli.h"
#include "cli/commands.h"

enum { MB_RULE_CACHE_BYTES = 64 << 20 };

static const char USAGE[] =
    "FILE.jsonl[.gz] --tokenizer T [--json] [--threads N] [--timeout S] [--details OUT.jsonl]\n"
    "       [--json-out OUT.json]\n"
    "       [--limit N] [--every K] [--split NAME] [--no-fork] [--compact | --indent[=N]] [--max-ws=N]\n"
    "       [--draft=D] [--listed-order] [--lenient]";

static void print_help(void)
{
    printf("usage: gramask maskbench %s\n\n"
           "Scores JSON Schema grammars on MaskBench lines ({\"name\", \"split\", \"schema\",\n"
           "\"tests\": [{\"valid\", \"text\", \"ids\"}]}): per schema the time to first mask\n"
           "(compile included), per token the mask latency, and the verdicts.\n\n"
           "  --tokenizer T      the tokenizer of the ids (a tokenizer.json or its directory)\n"
           "  --json             the summary as JSON on stdout (default: markdown tables)\n"
           "  --threads N        worker processes (default 1; each single-threaded)\n"
           "  --timeout S        seconds one schema may take (default 60): past it, a time-out\n"
           "  --details OUT      one JSON line per schema: verdicts, errors, times\n"
           "  --json-out OUT     the JSON summary to a file too (with the markdown on stdout)\n"
           "  --limit N          the first N schemas only\n"
           "  --every K          every K-th schema only (a deterministic sample)\n"
           "  --split NAME       the schemas of one split only\n"
           "  --no-fork          run in this process (for profilers; no crash or time-out isolation)\n"
           "  --listed-order     properties in the order the schema lists them (default: any\n"
           "                     order, since MaskBench's instances list them in their own order)\n"
           "  layout options     as for gramask schema (default: flexible whitespace)\n\n"
           "Progress goes to stderr. Exit status: 0 when no valid instance was rejected and\n"
           "nothing crashed or timed out, 1 otherwise, 2 usage error.\n",
           USAGE);
}

/* ---- the input ---- */

typedef struct mb_test {
    bool valid;
    uint32_t *ids;
    size_t n;
} mb_test;

typedef struct mb_schema {
    const char *name;
    char split[64];          /* the split, numbered suffix dropped (BFCL_java_12 -> BFCL_java) */
    const char *text;        /* the schema's JSON, inside the line */
    size_t len;
    mb_test *tests;
    size_t ntests;
} mb_schema;

static void schema_free(mb_schema *s)
{
    for (size_t i = 0; i < s->ntests; i++)
        free(s->tests[i].ids);
    free(s->tests);
    free((char *)s->name);
    memset(s, 0, sizeof *s);
}

/* Reads the whole file, through gzip -dc for .gz names. */
static char *read_input(const char *path, size_t *len)
{
    size_t n = strlen(path);
    if (n < 3 || strcmp(path + n - 3, ".gz")) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_error err;
        char *text;
        if (gm_file_read(&m, path, (size_t)1 << 33, &text, len, &err) != GM_OK) {
            gm_cli_fail("maskbench", &err);
            return NULL;
        }
        char *copy = malloc(*len + 1);
        if (copy)
            memcpy(copy, text, *len + 1);
        gm_mem_free(&m, text);
        return copy;
    }
    int fd[2];
    if (pipe(fd))
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execlp("gzip", "gzip", "-dc", "--", path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 24, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (used + 65536 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        ssize_t r = read(fd[0], buf + used, cap - used - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        used += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!buf || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "gramask maskbench: could not decompress %s with gzip -dc\n", path);
        free(buf);
        return NULL;
    }
    buf[used] = 0;
    *len = used;
    return buf;
}

static void split_name(const char *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    size_t n = strlen(out);
    size_t k = n;
    while (k > 0 && out[k - 1] >= '0' && out[k - 1] <= '9')
        k--;
    if (k < n && k > 1 && out[k - 1] == '_')
        out[k - 1] = 0;
}

/* Parses one line; false (with a message) when it is malformed. */
static bool parse_line(gm_mem *m, const char *line, size_t len, size_t lineno, mb_schema *out)
{
    gm_jdoc doc;
    gm_error err;
    char name[64];
    snprintf(name, sizeof name, "line %zu", lineno);
    if (gm_jdoc_parse(&doc, m, name, line, len, 0, NULL, &err) != GM_OK) {
        fprintf(stderr, "gramask maskbench: %s\n", err.message);
        return false;
    }
    const gm_jv *root = doc.root, *v;
    memset(out, 0, sizeof *out);
    v = gm_jv_get(root, "name");
    out->name = v && v->kind == GM_JV_STRING ? strdup(v->u.s) : strdup(name);
    v = gm_jv_get(root, "split");
    split_name(v && v->kind == GM_JV_STRING ? v->u.s : "-", out->split, sizeof out->split);
    v = gm_jv_get(root, "schema");
    if (!v) {
        fprintf(stderr, "gramask maskbench: line %zu has no \"schema\"\n", lineno);
        gm_jdoc_free(&doc);
        schema_free(out);
        return false;
    }
    out->text = line + v->off;
    out->len = v->end - v->off;
    const gm_jv *tests = gm_jv_get(root, "tests");
    if (tests && tests->kind == GM_JV_ARRAY && tests->n) {
        out->tests = calloc(tests->n, sizeof *out->tests);
        for (uint32_t i = 0; i < tests->n && out->tests; i++) {
            const gm_jv *t = tests->u.items[i], *ids = gm_jv_get(t, "ids"), *valid = gm_jv_get(t, "valid");
            if (!ids || ids->kind != GM_JV_ARRAY || !valid) {
                fprintf(stderr, "gramask maskbench: line %zu: a test needs \"valid\" and \"ids\"\n", lineno);
                gm_jdoc_free(&doc);
                schema_free(out);
                return false;
            }
            mb_test *mt = &out->tests[out->ntests++];
            mt->valid = valid->kind == GM_JV_TRUE;
            mt->n = ids->n;
            mt->ids = malloc((ids->n + 1) * sizeof *mt->ids);
            for (uint32_t k = 0; k < ids->n && mt->ids; k++)
                mt->ids[k] = (uint32_t)strtoul(ids->u.items[k]->u.s, NULL, 10);
        }
    }
    gm_jdoc_free(&doc);
    return true;
}

/* ---- one schema, in a worker ---- */

typedef struct mb_result {
    int status;              /* 0 compiled; else gm_status; -1 crash; -2 time-out */
    char error[GM_ERROR_MESSAGE_MAX]; /* compile error (one line) */
    double ttfm_ms;
    double schema_ms, grammar_ms, compile_ms; /* parts of ttfm: schema -> IR, -> grammar, -> compiled */
    double memory_kb;
    uint32_t rules, states;  /* the grammar's rule automata and their states */
    uint32_t entries, cross; /* token-mask cache entries built, of them from the cross-grammar cache */
    size_t invalidation, validation, engine_errors;
    size_t right;
    uint64_t *tbm;           /* ns */
    size_t ntbm;
    char *verdicts;          /* per test: '.' right, 'I' valid rejected, 'V' invalid accepted, 'E' error */
    char where[200];         /* the first rejection of a valid instance: test, step, text around */
} mb_result;

static bool mask_has(const uint32_t *mask, uint32_t t)
{
    return mask[t >> 5] >> (t & 31) & 1;
}

typedef struct u64vec {
    uint64_t *v;
    size_t n, cap;
} u64vec;

static void push_u64(u64vec *v, uint64_t x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        uint64_t *nv = realloc(v->v, cap * sizeof *nv);
        if (!nv)
            return; /* a sample lost to memory shortage: the summary says how many it has */
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

static void run_schema(const mb_schema *s, gm_vocab *vocab, const gm_schema_options *sopts,
                       mb_result *r, u64vec *tbm)
{
    gm_error err;
    gm_error_clear(&err);
    uint64_t t0 = gm_clock_ns();
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    gm_matcher *m = NULL;
    /* gm_grammar_from_json_schema in its two steps, timed apart */
    gm_mem gmem;
    gm_mem_init(&gmem, NULL, 0);
    gm_ebnf ir;
    gm_ebnf_init(&ir, &gmem);
    gm_status st = gm_schema_compile(&gmem, "schema", s->text, s->len, sopts, &ir, &err);
    uint64_t ts = gm_clock_ns();
    if (st == GM_OK) {
        gm_grammar_options go;
        memset(&go, 0, sizeof go);
        go.limits = sopts->limits;
        go.cache = sopts->cache;
        st = gm_grammar_from_ebnf(&ir, &go, &g, &err);
    }
    gm_ebnf_free(&ir);
    uint64_t tg = gm_clock_ns();
    r->schema_ms = (double)(ts - t0) / 1e6;
    if (st == GM_OK)
        st = gm_compiled_create(g, vocab, NULL, &c, &err);
    uint64_t tc = gm_clock_ns();
    r->grammar_ms = (double)(tg - t0) / 1e6;
    r->compile_ms = (double)(tc - tg) / 1e6;
    if (st == GM_OK)
        st = gm_matcher_create(c, NULL, &m, &err);
    size_t words = c ? gm_compiled_mask_words(c) : 0;
    uint32_t *mask = words ? malloc(words * sizeof *mask) : NULL;
    if (st == GM_OK && !mask)
        st = gm_error_set(&err, GM_ERR_NOMEM, "out of memory");
    if (st == GM_OK)
        st = gm_matcher_fill_mask(m, mask, words, &err);
    uint64_t t1 = gm_clock_ns();
    r->status = st;
    if (st != GM_OK) {
        snprintf(r->error, sizeof r->error, "%s", err.message);
        for (char *p = r->error; *p; p++)
            if (*p == '\n' || *p == '\t')
                *p = ' ';
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_grammar_destroy(g);
        free(mask);
        return;
    }
    r->ttfm_ms = (double)(t1 - t0) / 1e6;
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(vocab, &eos);
    r->verdicts = calloc(s->ntests + 1, 1);
    bool first_mask_ready = true; /* the TTFM mask serves the first instance's first step */
    for (size_t ti = 0; ti < s->ntests; ti++) {
        const mb_test *t = &s->tests[ti];
        if (ti > 0)
            gm_matcher_reset(m);
        bool accepted = true, error = false;
        size_t stop = t->n; /* the step that was refused */
        for (size_t k = 0; k <= t->n && accepted && !error; k++) {
            if (!first_mask_ready) {
                uint64_t a = gm_clock_ns();
                gm_status fs = gm_matcher_fill_mask(m, mask, words, &err);
                uint64_t b = gm_clock_ns();
                if (fs != GM_OK) {
                    error = true;
                    break;
                }
                push_u64(tbm, b - a);
            }
            first_mask_ready = false;
            if (k == t->n) {
                bool eos_ok = false;
                for (size_t e = 0; e < neos; e++)
                    eos_ok = eos_ok || mask_has(mask, eos[e]);
                accepted = eos_ok;
                break;
            }
            if (!mask_has(mask, t->ids[k])) {
                accepted = false;
                stop = k;
                break;
            }
            if (gm_matcher_accept_token(m, t->ids[k], &err) != GM_OK)
                error = true; /* the mask allowed a token the matcher refuses */
        }
        char v = '.';
        if (t->valid && !accepted && !error && !r->where[0]) {
            /* where: the text before the rejected token, then the token (or EOS) */
            char text[4096];
            size_t n = 0;
            for (size_t k = 0; k < stop && n < sizeof text - 1; k++) {
                size_t len;
                const uint8_t *tb = gm_vocab_token(vocab, t->ids[k], &len);
                for (size_t j = 0; j < len && n < sizeof text - 1; j++)
                    text[n++] = (char)tb[j];
            }
            text[n] = 0;
            size_t tl = 0;
            const uint8_t *tb = stop < t->n ? gm_vocab_token(vocab, t->ids[stop], &tl) : NULL;
            snprintf(r->where, sizeof r->where, "test %zu: ...%.80s[%.*s]", ti,
                     n > 80 ? text + n - 80 : text, tb ? (int)tl : 3, tb ? (const char *)tb : "EOS");
            for (char *p = r->where; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\')
                    *p = ' ';
        }
        if (error) {
            v = 'E';
            r->engine_errors++;
        } else if (t->valid && !accepted) {
            v = 'I';
            r->invalidation++;
        } else if (!t->valid && accepted) {
            v = 'V';
            r->validation++;
        } else {
            r->right++;
        }
        r->verdicts[ti] = v;
    }
    /* the schema's own memory: its grammar and compiled grammar with their mask caches,
       not the vocabulary and its cross-grammar cache that every schema shares
       (gm_compiled_stats.memory_bytes counts those too) */
    r->memory_kb = (double)(atomic_load(&c->mem.used) + atomic_load(&c->grammar->mem.used)) / 1024.0;
    gm_compiled_stats cs;
    gm_compiled_get_stats(c, &cs);
    r->rules = cs.rules;
    r->states = cs.fsm_states;
    r->entries = cs.cache_entries;
    r->cross = cs.cross_hits;
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    free(mask);
}

/* A worker: runs schemas first, first + stride, ... and reports on fd (note [maskbench isolation]). */
static void worker(const mb_schema *all, size_t nall, size_t first, size_t stride, gm_vocab *vocab,
                   const gm_schema_options *sopts, int fd)
{
    FILE *out = fdopen(fd, "w");
    if (!out)
        _exit(3);
    u64vec tbm = {0};
    /* test hooks (tests/cli_schema.sh): a schema of this name crashes or hangs its worker */
    const char *crash = getenv("GRAMASK_MASKBENCH_TEST_CRASH"), *hang = getenv("GRAMASK_MASKBENCH_TEST_HANG");
    for (size_t i = first; i < nall; i += stride) {
        fprintf(out, "S %zu\n", i);
        fflush(out);
        if (crash && !strcmp(crash, all[i].name))
            raise(SIGSEGV);
        while (hang && !strcmp(hang, all[i].name))
            pause();
        mb_result r;
        memset(&r, 0, sizeof r);
        tbm.n = 0;
        run_schema(&all[i], vocab, sopts, &r, &tbm);
        fprintf(out, "R %zu %d %.4f %.4f %.4f %.4f %.1f %u %u %u %u %zu %zu %zu %zu %s\n", i, r.status,
                r.ttfm_ms, r.schema_ms, r.grammar_ms, r.compile_ms, r.memory_kb, r.rules, r.states,
                r.entries, r.cross,
                r.invalidation, r.validation, r.engine_errors, r.right,
                r.verdicts && r.verdicts[0] ? r.verdicts : "-");
        fprintf(out, "X %s\n", r.status ? r.error : "");
        fprintf(out, "W %s\n", r.where);
        fputc('T', out);
        for (size_t k = 0; k < tbm.n; k++)
            fprintf(out, " %llu", (unsigned long long)tbm.v[k]);
        fputc('\n', out);
        fflush(out);
        free(r.verdicts);
    }
    fprintf(out, "D\n");
    fclose(out);
    free(tbm.v);
    _exit(0);
}

/* ---- the parent ---- */

typedef struct mb_done {
    int status;              /* as mb_result.status */
    char *error;
    double ttfm_ms, schema_ms, grammar_ms, compile_ms, memory_kb;
    uint32_t rules, states, entries, cross;
    size_t invalidation, validation, engine_errors, right;
    char *verdicts;
    char *where;             /* the first rejection of a valid instance */
    uint64_t *tbm;
    size_t ntbm;
    bool have;
} mb_done;

typedef struct wproc {
    pid_t pid;
    int fd;
    size_t next;             /* the next schema index this worker's sequence has not finished */
    long current;            /* schema in progress, -1 none */
    uint64_t started_ns;
    char *buf;
    size_t blen, bcap;
    bool done;
} wproc;

typedef struct bench {
    mb_schema *schemas;
    size_t n;
    gm_vocab *vocab;
    gm_schema_options sopts;
    size_t stride;
    double timeout_s;
    bool no_fork;            /* run in this process (profiling); no isolation */
    mb_done *done;
    size_t finished;
} bench;

static void done_free(mb_done *d)
{
    free(d->error);
    free(d->verdicts);
    free(d->where);
    free(d->tbm);
}

static void start_worker(bench *b, wproc *w, size_t first)
{
    int fd[2];
    if (pipe(fd)) {
        perror("gramask maskbench: pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("gramask maskbench: fork");
        exit(1);
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a worker does not outlive the harness */
#endif
        close(fd[0]);
        worker(b->schemas, b->n, first, b->stride, b->vocab, &b->sopts, fd[1]);
    }
    close(fd[1]);
    w->pid = pid;
    w->fd = fd[0];
    w->next = first;
    w->current = -1;
    w->blen = 0;
    w->done = first >= b->n;
}

static void record_failure(bench *b, size_t i, int status, const char *what)
{
    mb_done *d = &b->done[i];
    done_free(d);
    memset(d, 0, sizeof *d);
    d->status = status;
    d->error = strdup(what);
    d->have = true;
    b->finished++;
}

/* Handles one complete line from worker w; the schema it finishes goes to b->done. */
static void handle_line(bench *b, wproc *w, char *line)
{
    if (line[0] == 'S') {
        w->current = strtol(line + 2, NULL, 10);
        w->started_ns = gm_clock_ns();
    } else if (line[0] == 'R') {
        char *p = line + 2;
        size_t i = strtoul(p, &p, 10);
        mb_done *d = &b->done[i];
        memset(d, 0, sizeof *d);
        d->status = (int)strtol(p, &p, 10);
        d->ttfm_ms = strtod(p, &p);
        d->schema_ms = strtod(p, &p);
        d->grammar_ms = strtod(p, &p);
        d->compile_ms = strtod(p, &p);
        d->memory_kb = strtod(p, &p);
        d->rules = (uint32_t)strtoul(p, &p, 10);
        d->states = (uint32_t)strtoul(p, &p, 10);
        d->entries = (uint32_t)strtoul(p, &p, 10);
        d->cross = (uint32_t)strtoul(p, &p, 10);
        d->invalidation = strtoul(p, &p, 10);
        d->validation = strtoul(p, &p, 10);
        d->engine_errors = strtoul(p, &p, 10);
        d->right = strtoul(p, &p, 10);
        while (*p == ' ')
            p++;
        d->verdicts = strdup(strcmp(p, "-") ? p : "");
    } else if (line[0] == 'X') {
        if (w->current >= 0 && line[1] == ' ' && line[2])
            b->done[w->current].error = strdup(line + 2);
    } else if (line[0] == 'W') {
        if (w->current >= 0 && line[1] == ' ' && line[2])
            b->done[w->current].where = strdup(line + 2);
    } else if (line[0] == 'T') {
        if (w->current < 0)
            return;
        mb_done *d = &b->done[w->current];
        size_t cap = 16;
        d->tbm = malloc(cap * sizeof *d->tbm);
        char *p = line + 1;
        while (d->tbm && *p == ' ') {
            if (d->ntbm == cap) {
                uint64_t *nt = realloc(d->tbm, (cap *= 2) * sizeof *nt);
                if (!nt)
                    break;
                d->tbm = nt;
            }
            d->tbm[d->ntbm++] = strtoull(p, &p, 10);
        }
        d->have = true;
        b->finished++;
        w->next = (size_t)w->current + b->stride;
        w->current = -1;
    } else if (line[0] == 'D') {
        w->done = true;
    }
}

static void reap(wproc *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    int status;
    waitpid(w->pid, &status, 0);
}

static void progress(bench *b, uint64_t t0)
{
    if (b->finished % 100 != 0 && b->finished != b->n)
        return;
    size_t pass = 0, inval = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->done[i].have) {
            inval += b->done[i].invalidation;
            pass += b->done[i].status == 0 && b->done[i].invalidation + b->done[i].validation +
                                                      b->done[i].engine_errors == 0;
        }
    fprintf(stderr, "maskbench: %zu/%zu schemas, %zu passing, %zu invalidation errors, %.0f s\n",
            b->finished, b->n, pass, inval, (double)(gm_clock_ns() - t0) / 1e9);
}

/* --no-fork: every schema in this process, for profilers (a crash ends the run). */
static void run_inline(bench *b)
{
    u64vec tbm = {0};
    uint64_t t0 = gm_clock_ns();
    for (size_t i = 0; i < b->n; i++) {
        mb_result r;
        memset(&r, 0, sizeof r);
        tbm.n = 0;
        run_schema(&b->schemas[i], b->vocab, &b->sopts, &r, &tbm);
        mb_done *d = &b->done[i];
        d->status = r.status;
        d->error = r.status ? strdup(r.error) : NULL;
        d->ttfm_ms = r.ttfm_ms;
        d->schema_ms = r.schema_ms;
        d->grammar_ms = r.grammar_ms;
        d->compile_ms = r.compile_ms;
        d->memory_kb = r.memory_kb;
        d->rules = r.rules;
        d->states = r.states;
        d->entries = r.entries;
        d->cross = r.cross;
        d->invalidation = r.invalidation;
        d->validation = r.validation;
        d->engine_errors = r.engine_errors;
        d->right = r.right;
        d->verdicts = r.verdicts;
        d->where = r.where[0] ? strdup(r.where) : NULL;
        d->tbm = malloc((tbm.n + 1) * sizeof *d->tbm);
        if (d->tbm)
            memcpy(d->tbm, tbm.v, tbm.n * sizeof *d->tbm);
        d->ntbm = d->tbm ? tbm.n : 0;
        d->have = true;
        b->finished++;
        progress(b, t0);
    }
    free(tbm.v);
}

/* Runs every schema in workers; results in b->done. */
static void run_all(bench *b)
{
    if (b->no_fork) {
        run_inline(b);
        return;
    }
    size_t nw = b->stride;
    wproc *ws = calloc(nw, sizeof *ws);
    uint64_t t0 = gm_clock_ns();
    for (size_t k = 0; k < nw; k++)
        start_worker(b, &ws[k], k);
    for (;;) {
        struct pollfd pfd[64];
        size_t live = 0;
        for (size_t k = 0; k < nw; k++)
            if (ws[k].fd >= 0) {
                pfd[live].fd = ws[k].fd;
                pfd[live].events = POLLIN;
                live++;
            }
        if (!live)
            break;
        int r = poll(pfd, live, 1000);
        if (r < 0 && errno != EINTR)
            break;
        size_t j = 0;
        for (size_t k = 0; k < nw; k++) {
            wproc *w = &ws[k];
            if (w->fd < 0)
                continue;
            struct pollfd *pf = &pfd[j++];
            if (pf->revents & (POLLIN | POLLHUP | POLLERR)) {
                if (w->blen + 65536 > w->bcap) {
                    w->bcap = w->bcap ? w->bcap * 2 : 1 << 20;
                    w->buf = realloc(w->buf, w->bcap);
                }
                ssize_t got = read(w->fd, w->buf + w->blen, w->bcap - w->blen - 1);
                if (got > 0) {
                    w->blen += (size_t)got;
                    char *start = w->buf, *nl;
                    while ((nl = memchr(start, '\n', (size_t)(w->buf + w->blen - start)))) {
                        *nl = 0;
                        size_t before = b->finished;
                        handle_line(b, w, start);
                        if (b->finished != before)
                            progress(b, t0);
                        start = nl + 1;
                    }
                    w->blen = (size_t)(w->buf + w->blen - start);
                    memmove(w->buf, start, w->blen);
                    continue;
                }
                /* end of the pipe: finished, or died */
                long cur = w->current;
                reap(w);
                if (!w->done) {
                    size_t resume = w->next;
                    if (cur >= 0) {
                        record_failure(b, (size_t)cur, -1, "the worker crashed on this schema");
                        fprintf(stderr, "maskbench: %s crashed\n", b->schemas[cur].name);
                        progress(b, t0);
                        resume = (size_t)cur + b->stride;
                    }
                    if (resume < b->n)
                        start_worker(b, w, resume);
                }
                continue;
            }
            if (w->current >= 0 &&
                (double)(gm_clock_ns() - w->started_ns) / 1e9 > b->timeout_s) {
                long cur = w->current;
                kill(w->pid, SIGKILL);
                reap(w);
                record_failure(b, (size_t)cur, -2, "time-out");
                fprintf(stderr, "maskbench: %s timed out\n", b->schemas[cur].name);
                progress(b, t0);
                if ((size_t)cur + b->stride < b->n)
                    start_worker(b, w, (size_t)cur + b->stride);
            }
        }
    }
    for (size_t k = 0; k < nw; k++)
        free(ws[k].buf);
    free(ws);
}

/* ---- the summary ---- */

typedef struct kwcount {
    char kw[48];
    size_t n;
} kwcount;

typedef struct agg {
    char name[64];
    size_t schemas, passing, compile_errors, invalidation, validation, crashes, timeouts, engine_errors;
    u64vec tbm, ttfm, mem;
    kwcount kws[64];
    size_t nkws;
} agg;

/* The keyword a refusal names ("keyword 'uniqueItems' at ..."), else the error's kind. */
static void refusal_key(const mb_done *d, char *out, size_t cap)
{
    const char *e = d->error ? d->error : "";
    const char *k = strstr(e, "keyword '");
    if (k) {
        k += 9;
        const char *q = strchr(k, '\'');
        snprintf(out, cap, "%.*s", (int)(q ? q - k : 0), k);
        return;
    }
    if (strstr(e, "admits no instance"))
        snprintf(out, cap, "(no instance)");
    else
        snprintf(out, cap, "(%s)", gm_status_name((gm_status)d->status));
}

static void add_to(agg *a, const mb_done *d)
{
    a->schemas++;
    if (d->status == -1) {
        a->crashes++;
        return;
    }
    if (d->status == -2) {
        a->timeouts++;
        return;
    }
    if (d->status != 0) {
        a->compile_errors++;
        char kw[48];
        refusal_key(d, kw, sizeof kw);
        size_t i = 0;
        while (i < a->nkws && strcmp(a->kws[i].kw, kw))
            i++;
        if (i == a->nkws && a->nkws < 64)
            snprintf(a->kws[a->nkws++].kw, sizeof a->kws[0].kw, "%s", kw);
        if (i < a->nkws)
            a->kws[i].n++;
        return;
    }
    a->invalidation += d->invalidation;
    a->validation += d->validation;
    a->engine_errors += d->engine_errors;
    if (!d->invalidation && !d->validation && !d->engine_errors)
        a->passing++;
    push_u64(&a->ttfm, (uint64_t)(d->ttfm_ms * 1e6));
    push_u64(&a->mem, (uint64_t)(d->memory_kb * 1e3));
    for (size_t k = 0; k < d->ntbm; k++)
        push_u64(&a->tbm, d->tbm[k]);
}

static void json_latency(FILE *f, const char *key, u64vec *v, double scale)
{
    gm_latency l = gm_latency_of(v->v, v->n); /* microseconds from ns */
    fprintf(f, "\"%s\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}", key,
            l.mean * scale, l.p50 * scale, l.p99 * scale, l.max * scale);
}

/* The fields of one summary (without braces). */
static void json_agg(FILE *f, agg *a)
{
    fprintf(f, "\"schemas\": %zu, \"passing\": %zu, \"compile_errors\": %zu, "
            "\"invalidation_errors\": %zu, \"validation_errors\": %zu, \"crashes\": %zu, "
            "\"timeouts\": %zu, \"engine_errors\": %zu, ",
            a->schemas, a->passing, a->compile_errors, a->invalidation, a->validation, a->crashes,
            a->timeouts, a->engine_errors);
    json_latency(f, "tbm_us", &a->tbm, 1.0);
    fputs(", ", f);
    json_latency(f, "ttfm_ms", &a->ttfm, 1e-3);
    fputs(", ", f);
    json_latency(f, "memory_kb", &a->mem, 1.0); /* stored as bytes: us scale = kB */
    fputs(", \"compile_errors_by_keyword\": {", f);
    for (size_t i = 0; i < a->nkws; i++)
        fprintf(f, "%s\"%s\": %zu", i ? ", " : "", a->kws[i].kw, a->kws[i].n);
    fputs("}", f);
}

static void md_row(FILE *f, agg *a)
{
    gm_latency t = gm_latency_of(a->tbm.v, a->tbm.n), c = gm_latency_of(a->ttfm.v, a->ttfm.n);
    fprintf(f, "| %s | %zu | %zu (%.1f%%) | %zu | %zu | %zu | %zu | %zu | %.1f | %.1f | %.1f | %.0f | %.2f | %.2f |\n",
            a->name, a->schemas, a->passing, a->schemas ? 100.0 * (double)a->passing / (double)a->schemas : 0,
            a->compile_errors, a->invalidation, a->validation, a->crashes, a->timeouts, t.mean, t.p50,
            t.p99, t.max, c.p50 / 1e3, c.p99 / 1e3);
}

static int cmp_kw(const void *x, const void *y)
{
    const kwcount *a = x, *b = y;
    return a->n < b->n ? 1 : a->n > b->n ? -1 : strcmp(a->kw, b->kw);
}

typedef struct slow {
    size_t i;
    double total_ms;
} slow;

static int cmp_slow(const void *x, const void *y)
{
    const slow *a = x, *b = y;
    return a->total_ms < b->total_ms ? 1 : a->total_ms > b->total_ms ? -1 : 0;
}

static void agg_free(agg *a)
{
    free(a->tbm.v);
    free(a->ttfm.v);
    free(a->mem.v);
}

static void print_json(FILE *f, const char *path, agg *all, agg *splits, size_t nsplits)
{
    fprintf(f, "{\"file\": \"%s\", ", path);
    json_agg(f, all);
    fprintf(f, ", \"splits\": {");
    for (size_t k = 0; k < nsplits; k++) {
        fprintf(f, "%s\"%s\": {", k ? ", " : "", splits[k].name);
        json_agg(f, &splits[k]);
        fprintf(f, "}");
    }
    fprintf(f, "}}\n");
}

int gm_cmd_maskbench(int argc, char **argv)
{
    const char *path = NULL, *tokenizer = NULL, *details = NULL, *only_split = NULL, *json_out = NULL;
    bool json = false, no_fork = false;
    long threads = 1, limit = -1, every = 1;
    double timeout_s = 60;
    gm_schema_options sopts;
    gm_schema_options_init_defaults(&sopts);
    sopts.any_order = true; /* MaskBench's instances list properties in their own order */
    const char *eos_names[16];
    size_t neos_names = 0;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG},    {"-h", GM_CLI_NO_ARG},      {"--json", GM_CLI_NO_ARG},
        {"--no-fork", GM_CLI_NO_ARG}, {"--listed-order", GM_CLI_NO_ARG},
        {"--tokenizer", GM_CLI_ARG},  {"--eos", GM_CLI_ARG},      {"--details", GM_CLI_ARG},
        {"--json-out", GM_CLI_ARG},   {"--split", GM_CLI_ARG},    {"--threads", GM_CLI_ARG},
        {"--limit", GM_CLI_ARG},      {"--every", GM_CLI_ARG},    {"--timeout", GM_CLI_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, gm_cli_schema_opts, NULL};
    gm_cli_args ap;
    gm_cli_args_init(&ap, "maskbench", USAGE, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&ap)) == 1) {
        gm_cli_args *const pp = &ap;
        const char *v = pp->value;
        int t;
        char *end;
        if (gm_cli_is(pp, "--help") || gm_cli_is(pp, "-h")) {
            print_help();
            return 0;
        } else if (gm_cli_is(pp, "--json")) {
            json = true;
        } else if (gm_cli_is(pp, "--no-fork")) {
            no_fork = true;
        } else if (gm_cli_is(pp, "--listed-order")) {
            sopts.any_order = false;
        } else if (gm_cli_is(pp, "--tokenizer")) {
            tokenizer = v;
        } else if (gm_cli_is(pp, "--eos")) {
            if (neos_names == sizeof eos_names / sizeof *eos_names)
                return gm_cli_bad_arg("maskbench", USAGE, "more than 16 --eos tokens");
            eos_names[neos_names++] = v;
        } else if (gm_cli_is(pp, "--details")) {
            details = v;
        } else if (gm_cli_is(pp, "--json-out")) {
            json_out = v;
        } else if (gm_cli_is(pp, "--split")) {
            only_split = v;
        } else if (gm_cli_is(pp, "--threads")) {
            threads = strtol(v, &end, 10);
            if (!*v || *end || threads < 1 || threads > 64)
                return gm_cli_args_bad_value(pp, "1 to 64 threads");
        } else if (gm_cli_is(pp, "--limit")) {
            limit = strtol(v, &end, 10);
            if (!*v || *end || limit < 0)
                return gm_cli_args_bad_value(pp, "a count");
        } else if (gm_cli_is(pp, "--every")) {
            every = strtol(v, &end, 10);
            if (!*v || *end || every < 1)
                return gm_cli_args_bad_value(pp, "a positive count");
        } else if (gm_cli_is(pp, "--timeout")) {
            timeout_s = strtod(v, &end);
            if (!*v || *end || timeout_s <= 0)
                return gm_cli_args_bad_value(pp, "seconds");
        } else if ((t = gm_cli_schema_option(pp, &sopts)) != 0) {
            if (t != 1)
                return t;
        } else if (!path) {
            path = v;
        } else {
            return gm_cli_bad_arg("maskbench", USAGE, "one input file expected (got '%s' after "
                                  "'%s')", v, path);
        }
    }
    if (r)
        return r;
    if (!path || !tokenizer)
        return gm_cli_bad_arg("maskbench", USAGE, "FILE and --tokenizer are needed");
    size_t len;
    char *text = read_input(path, &len);
    if (!text)
        return 1;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    bench b;
    memset(&b, 0, sizeof b);
    b.sopts = sopts;
    b.timeout_s = timeout_s;
    b.no_fork = no_fork;
    size_t cap = 1024, lineno = 0, kept = 0;
    int rc = 1;
    agg all;
    memset(&all, 0, sizeof all);
    agg *splits = NULL;
    size_t nsplits = 0;
    b.schemas = malloc(cap * sizeof *b.schemas);
    for (char *p = text; p < text + len && b.schemas;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        lineno++;
        if (n > 0) {
            if (b.n == cap) {
                mb_schema *ns = realloc(b.schemas, (cap *= 2) * sizeof *b.schemas);
                if (!ns)
                    break;
                b.schemas = ns;
            }
            mb_schema sc;
            if (!parse_line(&m, p, n, lineno, &sc))
                goto out;
            bool take = (kept++ % (size_t)every) == 0 && (!only_split || !strcmp(sc.split, only_split));
            if (take && (limit < 0 || b.n < (size_t)limit))
                b.schemas[b.n++] = sc;
            else
                schema_free(&sc);
        }
        p += n + 1;
    }
    gm_error err;
    if ((rc = gm_cli_vocab_open("maskbench", tokenizer, eos_names, neos_names, NULL, &b.vocab))) {
        goto out;
    }
    rc = 1;
    b.stride = (size_t)threads < b.n ? (size_t)threads : (b.n ? b.n : 1);
    b.done = calloc(b.n + 1, sizeof *b.done);
    splits = calloc(b.n + 1, sizeof *splits);
    if (!b.schemas || !b.done || !splits) {
        fprintf(stderr, "gramask maskbench: out of memory for %zu schemas\n", b.n);
        goto out;
    }
    /* one rule-automata cache a worker, as a server keeps one (each worker
       inherits its own copy, empty, at the fork) */
    if (gm_grammar_cache_create(NULL, MB_RULE_CACHE_BYTES, &b.sopts.cache, &err) != GM_OK) {
        rc = gm_cli_fail("maskbench", &err);
        goto out;
    }
    fprintf(stderr, "maskbench: %zu schemas, %zu worker process%s\n", b.n, b.stride,
            b.stride == 1 ? "" : "es");
    run_all(&b);
    for (size_t i = 0; i < b.n; i++)
        if (!b.done[i].have)
            record_failure(&b, i, -1, "the worker stopped before this schema");
    /* aggregate */
    snprintf(all.name, sizeof all.name, "all");
    for (size_t i = 0; i < b.n; i++) {
        add_to(&all, &b.done[i]);
        size_t k = 0;
        while (k < nsplits && strcmp(splits[k].name, b.schemas[i].split))
            k++;
        if (k == nsplits)
            snprintf(splits[nsplits++].name, sizeof splits[0].name, "%s", b.schemas[i].split);
        add_to(&splits[k], &b.done[i]);
    }
    if (details) {
        FILE *f = fopen(details, "w");
        for (size_t i = 0; f && i < b.n; i++) {
            const mb_done *d = &b.done[i];
            uint64_t mx = 0;
            for (size_t k = 0; k < d->ntbm; k++)
                mx = d->tbm[k] > mx ? d->tbm[k] : mx;
            fprintf(f, "{\"name\": \"%s\", \"split\": \"%s\", \"status\": %d, \"ttfm_ms\": %.3f, "
                    "\"schema_ms\": %.3f, \"grammar_ms\": %.3f, \"compile_ms\": %.3f, "
                    "\"tbm_max_us\": %.1f, \"masks\": %zu, \"memory_kb\": %.1f, \"rules\": %u, "
                    "\"states\": %u, \"entries\": %u, \"cross_hits\": %u, \"verdicts\": \"%s\", "
                    "\"error\": \"", b.schemas[i].name, b.schemas[i].split, d->status, d->ttfm_ms,
                    d->schema_ms, d->grammar_ms, d->compile_ms, (double)mx / 1e3, d->ntbm, d->memory_kb,
                    d->rules, d->states, d->entries, d->cross, d->verdicts ? d->verdicts : "");
            for (const char *e = d->error ? d->error : ""; *e; e++)
                if (*e == '"' || *e == '\\')
                    fprintf(f, "\\%c", *e);
                else if ((unsigned char)*e >= 0x20)
                    fputc(*e, f);
            fprintf(f, "\", \"where\": \"%s", d->where ? d->where : "");
            fputs("\"}\n", f);
        }
        if (f)
            fclose(f);
        else
            fprintf(stderr, "gramask maskbench: cannot write %s: %s\n", details, strerror(errno));
    }
    if (json_out) {
        FILE *f = fopen(json_out, "w");
        if (!f) {
            fprintf(stderr, "gramask maskbench: cannot write %s: %s\n", json_out, strerror(errno));
            goto out;
        }
        print_json(f, path, &all, splits, nsplits);
        fclose(f);
    }
    if (json) {
        print_json(stdout, path, &all, splits, nsplits);
    } else {
        printf("| split | schemas | passing | compile errors | invalidation | validation | crashes | "
               "time-outs | TBM mean µs | p50 | p99 | max | TTFM p50 ms | p99 |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t k = 0; k < nsplits; k++)
            md_row(stdout, &splits[k]);
        md_row(stdout, &all);
        qsort(all.kws, all.nkws, sizeof *all.kws, cmp_kw);
        printf("\n| compile errors by keyword | schemas |\n|---|---|\n");
        for (size_t i = 0; i < all.nkws; i++)
            printf("| %s | %zu |\n", all.kws[i].kw, all.kws[i].n);
        slow *sl = calloc(b.n + 1, sizeof *sl);
        size_t ns = 0;
        for (size_t i = 0; i < b.n && sl; i++) {
            const mb_done *d = &b.done[i];
            if (d->status != 0)
                continue;
            double t = d->ttfm_ms;
            for (size_t k = 0; k < d->ntbm; k++)
                t += (double)d->tbm[k] / 1e6;
            sl[ns++] = (slow){i, t};
        }
        qsort(sl, ns, sizeof *sl, cmp_slow);
        printf("\n| slowest schemas | TTFM ms | grammar ms | masks | TBM mean µs | TBM max µs | "
               "memory kB | rules | states | mask entries (cross) |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t k = 0; k < ns && k < 20; k++) {
            const mb_done *d = &b.done[sl[k].i];
            uint64_t mx = 0, sum = 0;
            for (size_t j = 0; j < d->ntbm; j++) {
                mx = d->tbm[j] > mx ? d->tbm[j] : mx;
                sum += d->tbm[j];
            }
            printf("| %s | %.2f | %.2f | %zu | %.1f | %.1f | %.0f | %u | %u | %u (%u) |\n",
                   b.schemas[sl[k].i].name, d->ttfm_ms, d->grammar_ms, d->ntbm,
                   d->ntbm ? (double)sum / (double)d->ntbm / 1e3 : 0, (double)mx / 1e3, d->memory_kb,
                   d->rules, d->states, d->entries, d->cross);
        }
        free(sl);
    }
    rc = all.invalidation || all.crashes || all.timeouts || all.engine_errors ? 1 : 0;
out:
    for (size_t i = 0; i < b.n; i++) {
        schema_free(&b.schemas[i]);
        if (b.done)
            done_free(&b.done[i]);
    }
    for (size_t k = 0; k < nsplits; k++)
        agg_free(&splits[k]);
    agg_free(&all);
    free(splits);
    free(b.done);
    free(b.schemas);
    free(text);
    gm_grammar_cache_destroy(b.sopts.cache);
    gm_vocab_destroy(b.vocab);
    return rc;
}
