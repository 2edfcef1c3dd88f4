/*
 * gramask trace: decode reference tokenizations token by token under a
 * grammar and report, per file, whether every true token was allowed,
 * whether EOS was allowed at the end, and the mask latency.
 */
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
    "  Exit status 1 when a true token was masked or EOS was not allowed at the end.";

typedef struct file_result {
    const char *name;
    size_t steps, tokens;
    int all_allowed, eos_at_end;
    size_t bad_step;          /* first masked true token (when !all_allowed) */
    uint32_t bad_token;
    gm_latency mask;
    double accept_us;         /* mean accept_token time */
    char *expected;           /* at a rejected token or a refused EOS: what could come (malloc) */
} file_result;

static void dump_step(FILE *out, const char *file, size_t step, const uint32_t *mask,
                      const gm_vocab *v, uint32_t nbits)
{
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    int eos_allowed = 0;
    fprintf(out, "{\"file\": \"%s\", \"step\": %zu, \"allowed\": [", file, step);
    int first = 1;
    for (uint32_t t = 0; t < nbits; t++) {
        if (!((mask[t >> 5] >> (t & 31)) & 1))
            continue;
        int is_eos = 0;
        for (size_t k = 0; k < neos; k++)
            is_eos |= eos[k] == t;
        if (is_eos) {
            eos_allowed = 1;
            continue;
        }
        fprintf(out, first ? "%u" : ", %u", t);
        first = 0;
    }
    fprintf(out, "], \"eos\": %s}\n", eos_allowed ? "true" : "false");
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
            r->expected = expected_of(m);
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
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i];
        int i0 = i, taken = gm_cli_grammar_arg(&lo, argc, argv, &i);
        if (taken < 0)
            bad = gm_cli_grammar_arg_fail("trace", usage, argc, argv, i0);
        if (taken)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: gramask trace %s\n", usage);
            free(texts);
            return 0;
        } else if (!strcmp(a, "--ids") || !strcmp(a, "--dump-masks") || !strcmp(a, "--only")) {
            if (i + 1 >= argc)
                bad = gm_cli_bad_arg("trace", usage, "%s needs a value", a);
            else
                *(!strcmp(a, "--ids") ? &ids_path : !strcmp(a, "--only") ? &only : &dump_path) =
                    argv[++i];
        } else if (!strcmp(a, "--text")) {
            text = true;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-') {
            bad = gm_cli_bad_arg("trace", usage, "unknown option '%s'", a);
        } else {
            texts[ntexts++] = a;
        }
    }
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
    if (!rc && text && gm_cli_encode_files(s.vocab, texts, ntexts, &mem, &ids, &err) != GM_OK) {
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
        fprintf(stderr, "gramask trace: cannot write %s\n", dump_path);
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
                gm_cli_report_rejected(s.vocab, e->file, e->ids, r->bad_step, r->expected);
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
            printf("%-44.44s %7zu %8s %4s %9.2f %9.2f %9.2f %9.2f\n", r->name, r->steps,
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
