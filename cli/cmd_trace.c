/*
 * gramask trace: decode reference tokenizations token by token under a
 * grammar and report, per file, whether every true token was allowed,
 * whether EOS was allowed at the end, and the mask latency.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanner/ids_file.h"
#include "base/mem.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"

static const char usage[] =
    "GRAMMAR --tokenizer T --ids IDS.json [--json] [--dump-masks OUT] [--only FILE]\n"
    "             " GM_CLI_GRAMMAR_OPTIONS "\n" GM_CLI_GRAMMAR_HELP
    "  Decodes every file of IDS.json (format of ../shared/corpus/*/ids.*.json) token by\n"
    "  token. Exit status 1 when a true token was masked or EOS was not allowed at the end.";

typedef struct file_result {
    const char *name;
    size_t steps, tokens;
    int all_allowed, eos_at_end;
    size_t bad_step;          /* first masked true token (when !all_allowed) */
    uint32_t bad_token;
    gm_latency mask;
    double accept_us;         /* mean accept_token time */
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
            break;
        }
        uint32_t t = e->ids[i];
        if (t >= nbits || !((mask[t >> 5] >> (t & 31)) & 1)) {
            r->all_allowed = 0;
            r->bad_step = i;
            r->bad_token = t;
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

/* Text of the tokens around step i, escaped, for a failure report. */
static void print_context(const gm_vocab *v, const gm_ids_entry *e, size_t i)
{
    fprintf(stderr, "    ...");
    for (size_t k = i > 12 ? i - 12 : 0; k <= i && k < e->nids; k++) {
        size_t len;
        const uint8_t *b = gm_vocab_token(v, e->ids[k], &len);
        if (k == i)
            fprintf(stderr, " >>>");
        for (size_t j = 0; b && j < len; j++) {
            if (b[j] == '\n')
                fprintf(stderr, "\\n");
            else if (b[j] < 0x20)
                fprintf(stderr, "\\x%02x", b[j]);
            else
                fputc(b[j], stderr);
        }
        if (k == i)
            fprintf(stderr, "<<<");
    }
    fprintf(stderr, "\n");
}

int gm_cmd_trace(int argc, char **argv)
{
    gm_cli_load_options lo = {0};
    const char *ids_path = NULL, *dump_path = NULL, *only = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int taken = gm_cli_grammar_arg(&lo, argc, argv, &i);
        if (taken < 0)
            return gm_cli_usage("trace", usage);
        if (taken)
            continue;
        if (!strcmp(a, "--help")) {
            printf("usage: gramask trace %s\n", usage);
            return 0;
        } else if (!strcmp(a, "--ids") && i + 1 < argc) {
            ids_path = argv[++i];
        } else if (!strcmp(a, "--dump-masks") && i + 1 < argc) {
            dump_path = argv[++i];
        } else if (!strcmp(a, "--only") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else {
            return gm_cli_usage("trace", usage);
        }
    }
    if (!lo.grammar || !ids_path)
        return gm_cli_usage("trace", usage);
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ids_file *ids;
    gm_error err;
    if (gm_ids_file_load(&mem, ids_path, &ids, &err) != GM_OK)
        return gm_cli_fail("trace", &err);
    gm_cli_session s;
    int rc = gm_cli_session_open("trace", &lo, &s);
    if (rc) {
        gm_ids_file_destroy(ids);
        return rc;
    }
    FILE *dump = NULL;
    if (dump_path && !(dump = fopen(dump_path, "w"))) {
        fprintf(stderr, "gramask trace: cannot write %s\n", dump_path);
        gm_cli_session_close(&s);
        gm_ids_file_destroy(ids);
        return 1;
    }
    size_t maxn = 0;
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
    size_t nresults = 0, nall = 0;
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
            if (!r->all_allowed) {
                fprintf(stderr, "gramask trace: %s: true token %u at step %zu was masked\n",
                        e->file, r->bad_token, r->bad_step);
                print_context(s.vocab, e, r->bad_step);
            } else {
                fprintf(stderr, "gramask trace: %s: EOS not allowed at the end\n", e->file);
            }
        }
    }
    gm_latency all = gm_latency_of(all_ns, nall);
    if (json) {
        printf("{\"grammar\": \"%s\", \"ids\": \"%s\", \"compile_ms\": %.3f, \"files\": [\n",
               lo.grammar, ids_path, s.compile_ms);
        for (size_t i = 0; i < nresults; i++) {
            file_result *r = &results[i];
            printf("  {\"file\": \"%s\", \"steps\": %zu, \"all_allowed\": %s, \"eos_at_end\": %s, "
                   "\"mask_us\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}}%s\n",
                   r->name, r->steps, r->all_allowed ? "true" : "false",
                   r->eos_at_end ? "true" : "false", r->mask.mean, r->mask.p50, r->mask.p99,
                   r->mask.max, i + 1 < nresults ? "," : "");
        }
        printf("], \"summary\": {\"files\": %zu, \"failures\": %d, \"steps\": %zu, \"mask_us\": "
               "{\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}}}\n",
               nresults, failures, all.n, all.mean, all.p50, all.p99, all.max);
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
               "%.2f us; compile %.1f ms\n",
               nresults, failures, all.n, all.mean, all.p50, all.p99, all.max, s.compile_ms);
    }
    rc = failures ? 1 : 0;
out:
    if (dump)
        fclose(dump);
    free(mask);
    free(ns);
    free(all_ns);
    free(results);
    gm_cli_session_close(&s);
    gm_ids_file_destroy(ids);
    return rc;
}
