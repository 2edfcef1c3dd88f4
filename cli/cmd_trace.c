/*
 * gramask trace: decode reference tokenizations token by token under a
 * grammar and report, per file, whether every true token was allowed,
 * whether EOS was allowed at the end, and the mask latency.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/diagnose.h"
#include "vocab/ids_file.h"
#include "base/strbuf.h"
#include "base/mem.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"

static const char usage[] =
    "GRAMMAR --tokenizer T (--ids IDS.json | --text FILE...) [--json] [--dump-masks OUT]\n"
    "             [--only FILE] " GM_CLI_GRAMMAR_OPTIONS "\n" GM_CLI_GRAMMAR_HELP
    "  Decodes every file of IDS.json (format of ../shared/corpus/*/ids.*.json) token by\n"
    "  token, or with --text each text FILE encoded as the tokenizer does (gramask encode).\n"
    "  A rejected token is reported with its file:line:column, its text, the text before\n"
    "  it and what the grammar expected there.\n"
    "  --dump-masks OUT: each step's mask as a JSON line: {\"file\", \"step\", \"vocab\": V,\n"
    "  \"count\": N, \"eos\": true|false, \"ranges\": [[A,B], C, ...]} listing the allowed ids\n"
    "  (A..B inclusive, C alone; EOS ids apart), or \"except\": [...] the same way, the ids of\n"
    "  0..V-1 NOT allowed, whichever is shorter (python/tests/conftest.py's dumped_ids reads it).\n"
    "  Exit status 1 when a true token was masked or EOS was not allowed at the end.";

typedef struct file_result {
    const char *name;
    size_t steps, tokens;
    int all_allowed, eos_at_end;
    size_t bad_step;          /* first masked true token (when !all_allowed) */
    size_t bad_byte;          /* its first byte the grammar refuses (SIZE_MAX: not known) */
    uint32_t bad_token;
    gm_latency mask;
    double accept_us;         /* mean accept_token time */
    char *expected;           /* at a rejected token or a refused EOS: what could come (malloc) */
} file_result;

/* Whether t is one of the vocabulary's EOS ids (sorted). */
static bool is_eos_id(const uint32_t *eos, size_t neos, uint32_t t)
{
    for (size_t k = 0; k < neos; k++)
        if (eos[k] == t)
            return true;
    return false;
}

/* Bit t of the mask (flipped when `flip`), EOS ids read as not allowed: they go in "eos"
   only, and an "except" list holds them. */
static bool bit(const uint32_t *mask, uint32_t t, const uint32_t *eos, size_t neos, bool flip)
{
    bool on = (mask[t >> 5] >> (t & 31)) & 1;
    if (is_eos_id(eos, neos, t))
        on = false;
    return on != flip;
}

/* The runs of ids whose bit (as above) is 1, written when out; returns the numbers written
   (1 for a run of one id, 2 for a pair): the length to compare. */
static size_t runs(FILE *out, const uint32_t *mask, uint32_t nbits, const uint32_t *eos,
                   size_t neos, bool flip)
{
    size_t n = 0;
    for (uint32_t t = 0; t < nbits;) {
        if (!bit(mask, t, eos, neos, flip)) {
            t++;
            continue;
        }
        uint32_t a = t;
        while (t < nbits && bit(mask, t, eos, neos, flip))
            t++;
        if (out && a == t - 1)
            fprintf(out, n ? ",%u" : "%u", a);
        else if (out)
            fprintf(out, n ? ",[%u,%u]" : "[%u,%u]", a, t - 1);
        n += a == t - 1 ? 1 : 2;
    }
    return n;
}

/*
 * One step of --dump-masks, a JSON line: {"file", "step", "vocab": V,
 * "count": allowed ids (EOS not counted), "eos": true|false, and either
 * "ranges": [[a, b], ...] (the allowed ids, a..b inclusive) or "except":
 * [[a, b], ...] (every id of 0..V-1 but these is allowed), whichever has
 * fewer numbers; a run of one id is written as the id alone. EOS ids are
 * never in "ranges" (only in "eos"), so "except" lists them.
 */
static void dump_step(FILE *out, const char *file, size_t step, const uint32_t *mask,
                      const gm_vocab *v, uint32_t nbits)
{
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    bool eos_allowed = false;
    for (size_t k = 0; k < neos; k++)
        eos_allowed |= eos[k] < nbits && ((mask[eos[k] >> 5] >> (eos[k] & 31)) & 1);
    size_t count = 0;
    for (uint32_t t = 0; t < nbits; t++)
        count += bit(mask, t, eos, neos, false);
    bool flip = runs(NULL, mask, nbits, eos, neos, true) < runs(NULL, mask, nbits, eos, neos, false);
    fprintf(out, "{\"file\": \"%s\", \"step\": %zu, \"vocab\": %u, \"count\": %zu, \"eos\": %s, "
                 "\"%s\": [", file, step, nbits, count, eos_allowed ? "true" : "false",
            flip ? "except" : "ranges");
    runs(out, mask, nbits, eos, neos, flip);
    fputs("]}\n", out);
}

static int mask_has_eos(const uint32_t *mask, const gm_vocab *v)
{
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    for (size_t k = 0; k < neos; k++)
        if ((mask[eos[k] >> 5] >> (eos[k] & 31)) & 1)
            return 1;
    return 0;
}

/* What m's grammar expected in its current state, as a malloc'ed string (or NULL). */
static char *expected_of(const gm_matcher *m)
{
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_strbuf sb;
    gm_strbuf_init(&sb, &mem);
    char *r = NULL;
    if (gm_matcher_expected_(m, &sb) == GM_OK && !sb.failed)
        r = strdup(gm_strbuf_str(&sb));
    gm_strbuf_free(&sb);
    return r;
}

/*
 * Which byte of the refused token t the grammar refuses, fed byte by byte to
 * a clone of m, and what it expected at that byte: a multi-byte token is
 * refused at its first byte the language cannot take, not necessarily its
 * first.
 */
static void refused_byte(const gm_matcher *m, const gm_vocab *v, uint32_t t, file_result *r)
{
    size_t len;
    const uint8_t *b = gm_vocab_token(v, t, &len);
    gm_matcher *c = NULL;
    gm_error err;
    r->bad_byte = SIZE_MAX;
    if (b && len > 1 && gm_matcher_clone(m, &c, &err) == GM_OK) {
        size_t k = 0;
        while (k < len && gm_matcher_accept_bytes(c, b + k, 1, &err) == GM_OK)
            k++;
        if (k < len) {
            r->bad_byte = k;
            r->expected = expected_of(c);
        }
        gm_matcher_destroy(c);
    }
    if (r->bad_byte == SIZE_MAX) {
        r->bad_byte = b && len ? 0 : SIZE_MAX;
        r->expected = expected_of(m);
    }
}

static int trace_file(gm_cli_session *s, const gm_ids_entry *e, FILE *dump, uint32_t *mask,
                      uint64_t *ns, file_result *r)
{
    gm_error err;
    gm_matcher *m;
    memset(r, 0, sizeof *r);
    r->name = e->file;
    r->tokens = e->nids;
    if (gm_matcher_create(s->compiled, NULL, &m, &err) != GM_OK)
        return gm_cli_fail("trace", &err);
    uint32_t nbits = gm_compiled_vocab_size(s->compiled);
    size_t words = gm_compiled_mask_words(s->compiled);
    r->all_allowed = 1;
    double accept_total = 0;
    for (size_t i = 0; i <= e->nids; i++) {
        uint64_t t0 = gm_clock_ns();
        gm_status st = gm_matcher_fill_mask(m, mask, words, &err);
        ns[i] = gm_clock_ns() - t0;
        if (st != GM_OK) {
            gm_matcher_destroy(m);
            return gm_cli_fail("trace", &err);
        }
        r->steps = i + 1;
        if (dump)
            dump_step(dump, e->file, i, mask, s->vocab, nbits);
        if (i == e->nids) {
            r->eos_at_end = mask_has_eos(mask, s->vocab);
            if (!r->eos_at_end)
                r->expected = expected_of(m);
            break;
        }
        uint32_t t = e->ids[i];
        if (t >= nbits || !((mask[t >> 5] >> (t & 31)) & 1)) {
            r->all_allowed = 0;
            r->bad_step = i;
            r->bad_token = t;
            refused_byte(m, s->vocab, t, r);
            break;
        }
        t0 = gm_clock_ns();
        st = gm_matcher_accept_token(m, t, &err);
        accept_total += (double)(gm_clock_ns() - t0);
        if (st != GM_OK) {
            /* The mask allowed it: the matcher disagreeing with its own mask is a bug. */
            fprintf(stderr, "gramask trace: %s: step %zu: token %u allowed by the mask but "
                            "rejected: %s\n", e->file, i, t, err.message);
            r->all_allowed = 0;
            r->bad_step = i;
            r->bad_token = t;
            break;
        }
    }
    r->mask = gm_latency_of(ns, r->steps);
    r->accept_us = r->steps > 1 ? accept_total / (double)(r->steps - 1) / 1e3 : 0;
    gm_matcher_destroy(m);
    return 0;
}

int gm_cmd_trace(int argc, char **argv)
{
    gm_cli_load_options lo;
    gm_cli_load_options_init(&lo);
    const char *ids_path = NULL, *dump_path = NULL, *only = NULL;
    int json = 0;
    bool text = false;
    const char **texts = calloc((size_t)argc, sizeof *texts);
    size_t ntexts = 0;
    if (!texts) {
        fprintf(stderr, "gramask trace: out of memory\n");
        return 1;
    }
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG},      {"--ids", GM_CLI_ARG},
        {"--dump-masks", GM_CLI_ARG}, {"--only", GM_CLI_ARG},  {"--text", GM_CLI_NO_ARG},
        {"--json", GM_CLI_NO_ARG},    {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, gm_cli_grammar_opts, gm_cli_schema_opts, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "trace", usage, argc, argv, tables);
    int bad = 0, ar = 0;
    while (!bad && (ar = gm_cli_args_next(&p)) == 1) {
        int taken = gm_cli_grammar_arg(&lo, &p);
        if (taken == 1)
            continue;
        if (taken)
            bad = taken;
        else if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask trace %s\n", usage);
            free(texts);
            return 0;
        } else if (gm_cli_is(&p, "--ids")) {
            ids_path = p.value;
        } else if (gm_cli_is(&p, "--only")) {
            only = p.value;
        } else if (gm_cli_is(&p, "--dump-masks")) {
            dump_path = p.value;
        } else if (gm_cli_is(&p, "--text")) {
            text = true;
        } else if (gm_cli_is(&p, "--json")) {
            json = 1;
        } else if (!p.opt) {
            texts[ntexts++] = p.value;
        } else {
            bad = gm_cli_args_unexpected(&p);
        }
    }
    if (!bad && ar)
        bad = ar;
    if (!bad && !lo.grammar && !lo.tools && !lo.structural_tag && !lo.code_blocks)
        bad = gm_cli_bad_arg("trace", usage, "missing GRAMMAR");
    else if (!bad && ntexts && !text)
        bad = gm_cli_bad_arg("trace", usage, "unexpected argument '%s' (text files go after --text)",
                             texts[0]);
    else if (!bad && text && ids_path)
        bad = gm_cli_bad_arg("trace", usage, "--ids and --text exclude each other");
    else if (!bad && text && !ntexts)
        bad = gm_cli_bad_arg("trace", usage, "--text needs at least one FILE");
    else if (!bad && !text && !ids_path)
        bad = gm_cli_bad_arg("trace", usage, "missing --ids IDS.json or --text FILE...");
    if (bad) {
        free(texts);
        return bad;
    }
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ids_file *ids = NULL;
    gm_error err;
    if (!text && gm_ids_file_load(&mem, ids_path, &ids, &err) != GM_OK) {
        free(texts);
        return gm_cli_fail("trace", &err);
    }
    gm_cli_session s;
    int rc = gm_cli_session_open("trace", &lo, &s);
    if (!rc && text && lo.grammar && !s.grammar && !s.encoder) {
        fprintf(stderr, "gramask trace: --text with the compiled file %s needs --tokenizer T, "
                        "the tokenizer it was compiled for, to encode the text (a .gmc holds the "
                        "tokens, not the encoder)\n", lo.grammar);
        gm_cli_session_close(&s);
        rc = 2;
    }
    if (!rc && text &&
        gm_cli_encode_files(s.encoder ? s.encoder : s.vocab, texts, ntexts, &mem, &ids, &err) !=
            GM_OK) {
        gm_cli_session_close(&s);
        rc = gm_cli_fail("trace", &err);
    }
    free(texts);
    if (rc) {
        gm_ids_file_destroy(ids);
        return rc;
    }
    if (text)
        ids_path = "--text";
    FILE *dump = NULL;
    if (dump_path && !(dump = fopen(dump_path, "w"))) {
        fprintf(stderr, "gramask trace: cannot write %s: %s\n", dump_path, strerror(errno));
        gm_cli_session_close(&s);
        gm_ids_file_destroy(ids);
        return 1;
    }
    size_t maxn = 0, nresults = 0, nall;
    for (size_t f = 0; f < ids->n; f++)
        if (ids->entries[f].nids > maxn)
            maxn = ids->entries[f].nids;
    uint32_t *mask = calloc(gm_compiled_mask_words(s.compiled), sizeof *mask);
    uint64_t *ns = calloc(maxn + 1, sizeof *ns);
    size_t total_steps = 0;
    for (size_t f = 0; f < ids->n; f++)
        total_steps += ids->entries[f].nids + 1;
    uint64_t *all_ns = calloc(total_steps ? total_steps : 1, sizeof *all_ns);
    file_result *results = calloc(ids->n ? ids->n : 1, sizeof *results);
    if (!mask || !ns || !all_ns || !results) {
        fprintf(stderr, "gramask trace: out of memory\n");
        rc = 1;
        goto out;
    }
    nall = 0;
    int failures = 0;
    for (size_t f = 0; f < ids->n; f++) {
        const gm_ids_entry *e = &ids->entries[f];
        if (only && strcmp(only, e->file))
            continue;
        file_result *r = &results[nresults++];
        if ((rc = trace_file(&s, e, dump, mask, ns, r)))
            goto out;
        /* trace_file sorted this file's samples; keep them for the overall figures. */
        memcpy(all_ns + nall, ns, r->steps * sizeof *ns);
        nall += r->steps;
        if (!r->all_allowed || !r->eos_at_end) {
            failures++;
            if (!r->all_allowed)
                gm_cli_report_rejected(s.vocab, e->file, e->ids, r->bad_step, r->bad_byte,
                                       r->expected);
            else
                fprintf(stderr, "gramask trace: %s: EOS not allowed at the end\n  expected: %s\n",
                        e->file, r->expected ? r->expected : "(not known)");
        }
    }
    gm_latency all = gm_latency_of(all_ns, nall);
    gm_compiled_stats st;
    gm_compiled_get_stats(s.compiled, &st);
    if (json) {
        printf("{\"grammar\": \"%s\", \"ids\": \"%s\", \"compile_ms\": %.3f, \"files\": [\n",
               lo.grammar ? lo.grammar : lo.tools ? lo.tools : lo.structural_tag ? lo.structural_tag : lo.code_blocks, ids_path,
               s.compile_ms);
        for (size_t i = 0; i < nresults; i++) {
            file_result *r = &results[i];
            printf("  {\"file\": \"%s\", \"steps\": %zu, \"all_allowed\": %s, \"eos_at_end\": %s, "
                   "\"mask_us\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}}%s\n",
                   r->name, r->steps, r->all_allowed ? "true" : "false",
                   r->eos_at_end ? "true" : "false", r->mask.mean, r->mask.p50, r->mask.p99,
                   r->mask.max, i + 1 < nresults ? "," : "");
        }
        printf("], \"summary\": {\"files\": %zu, \"failures\": %d, \"steps\": %zu, \"mask_us\": "
               "{\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
               "\"grammar_ms\": %.3f, \"table_bytes\": %zu, \"memory_bytes\": %zu}}\n",
               nresults, failures, all.n, all.mean, all.p50, all.p99, all.max, s.load_grammar_ms,
               (size_t)st.table_bytes, (size_t)st.memory_bytes);
    } else {
        printf("%-44s %7s %8s %4s %9s %9s %9s %9s\n", "file", "steps", "allowed", "eos", "mean_us",
               "p50_us", "p99_us", "max_us");
        for (size_t i = 0; i < nresults; i++) {
            file_result *r = &results[i];
            size_t nl = strlen(r->name);
            char shown[48]; /* a long path keeps its end, the file's own name */
            snprintf(shown, sizeof shown, nl > 44 ? "...%s" : "%s",
                     nl > 44 ? r->name + nl - 41 : r->name);
            printf("%-44s %7zu %8s %4s %9.2f %9.2f %9.2f %9.2f\n", shown, r->steps,
                   r->all_allowed ? "all" : "NO", r->eos_at_end ? "yes" : "NO", r->mask.mean,
                   r->mask.p50, r->mask.p99, r->mask.max);
        }
        printf("%zu files, %d failing; %zu masks: mean %.2f us, p50 %.2f us, p99 %.2f us, max "
               "%.2f us; grammar %.1f ms, compile %.1f ms\n",
               nresults, failures, all.n, all.mean, all.p50, all.p99, all.max, s.load_grammar_ms,
               s.compile_ms);
        printf("after the trace: tables %.2f MB (%u profiles, %llu classes), memory %.2f MB "
               "(vocabulary included)\n",
               (double)st.table_bytes / 1e6, st.profiles_built, (unsigned long long)st.classes,
               (double)st.memory_bytes / 1e6);
    }
    rc = failures ? 1 : 0;
out:
    if (dump)
        fclose(dump);
    free(mask);
    free(ns);
    free(all_ns);
    for (size_t i = 0; results && i < nresults; i++)
        free(results[i].expected);
    free(results);
    gm_cli_session_close(&s);
    gm_ids_file_destroy(ids);
    return rc;
}
