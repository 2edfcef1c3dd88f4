/*
 * gramask generate: random constrained generation. At each step a token is
 * drawn among the allowed ones: uniformly (--sampling uniform, the stress
 * test: every allowed token as likely, EOS with a set probability), or
 * weighted towards text a person can read as an example of the language
 * (--sampling readable, the default; see token_class and leave_content).
 * A dead end — no allowed token and no EOS — must never happen; it is
 * reported with the text that led to it. Finished texts are checked again
 * byte by byte with a fresh matcher (special tokens as ids: recheck).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/objects.h"
#include "base/bitset.h"
#include "base/utf8.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cli/triggers.h"

static const char usage[] =
    "GRAMMAR --tokenizer T [--seed S] [-n N] [--max-tokens M] [--eos-prob P] [--out FILE]\n"
    "             [--sampling readable|uniform] [--eos ID|TEXT]...\n"
    "             " GM_CLI_GRAMMAR_OPTIONS "\n" GM_CLI_GRAMMAR_HELP
    "  Writes N random texts of the grammar's language (JSON lines to FILE or stdout) and\n"
    "  reports dead ends (exit status 1). Defaults: seed 1, N 10, M 200, P 0.2.\n"
    "  --sampling readable (default): a class of tokens is drawn, then a token of it: in\n"
    "  free content (free text, a string: most of the vocabulary allowed) words, left after\n"
    "  a few tokens by a tag, a trigger word of the tool format or structural tag written\n"
    "  out whole (<function=), or a closing quote, after which the mask narrows (EOS likelier\n"
    "  with each token of it); in structure, tokens that close (brackets, quotes, tags)\n"
    "  mostly, so outputs finish as readable examples (finished calls, instances).\n"
    "  --sampling uniform: every allowed token equally likely, EOS with probability P: the\n"
    "  stress test for dead ends.\n"
    "  --eos ID|TEXT: a stop token (repeatable), besides the tokenizer's own and those of\n"
    "  a generation_config.json beside its tokenizer.json.";

static uint64_t next_random(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/*
 * A JSON string of the bytes. Well-formed UTF-8 passes through; a byte that
 * is not part of one (a text cut mid-character) is written as \udcXX, the
 * lone surrogate Python's "surrogateescape" uses for it, so the bytes can be
 * recovered exactly and the output stays valid JSON text.
 */
static void json_string(FILE *out, const uint8_t *b, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        uint8_t c = b[i];
        uint32_t cp;
        size_t k = c >= 0x80 ? gm_utf8_decode(b + i, n - i, &cp) : 1;
        if (k == 0) {
            fprintf(out, "\\udc%02x", c);
            i++;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fwrite(b + i, 1, k, out);
        i += k;
    }
    fputc('"', out);
}

/*
 * Readable sampling draws a class of tokens first, then a token of it
 * uniformly: CLOSE (visible ASCII holding a quote, bracket or '>': what ends
 * strings, objects, calls and tags), TEXT (other visible ASCII), SPACE
 * (whitespace only), OTHER (control or non-ASCII bytes, backslashes) and TAG: an allowed
 * added token opens or closes a part of a chat format (<tool_call>, </think>).
 * A vocabulary has thousands of whitespace and byte tokens: drawn per
 * token they would fill the text; drawn per class they are rare. Past half
 * the length budget closing tokens take most of the draws, so outputs end.
 */
enum { TAG, CLOSE, TEXT, SPACE, OTHER, NCLASSES };

static int token_class(const uint8_t *b, size_t n, bool added)
{
    if (added)
        return TAG; /* an allowed added token is a tag (<tool_call>, </think>): structure */
    if (n == 0)
        return OTHER;
    bool space = true, closes = false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = b[i];
        /* a backslash starts an escape (\u0063 for c): valid, but not what a person writes */
        if (c >= 0x80 || c == '\\' || (c < 0x20 && c != '\n' && c != '\t' && c != '\r'))
            return OTHER;
        if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
            space = false;
        if (c && strchr("\"}])>'", c))
            closes = true;
    }
    return space ? SPACE : closes ? CLOSE : TEXT;
}

/*
 * How well a closing token ends things (lower is better): short, holding
 * '}' or ']', opening nothing new ('{', '[', ':' or a second quote).
 */
static int close_score(const uint8_t *b, size_t n)
{
    int score = n && b[0] == '"' ? (int)n : (int)n + 8, quotes = 0; /* a quote first: it ends a string */
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '}' || b[i] == ']')
            score -= 4;
        else if (b[i] == '{' || b[i] == '[' || b[i] == ':')
            score += 4;
        else if (b[i] == '"' && ++quotes > 1)
            score += 4;
    }
    return score;
}

/* Of k random tokens of class c among allowed[lo..hi), the index of the best closer. */
static size_t best_closer(const gm_vocab *v, const uint32_t *allowed, const uint8_t *cls,
                          size_t lo, size_t hi, int c, size_t k, uint64_t *rng)
{
    size_t best = SIZE_MAX;
    int best_score = 0;
    for (size_t i = 0; i < k * 4 && k; i++) {
        size_t j = lo + next_random(rng) % (hi - lo);
        if (cls[j] != c)
            continue;
        size_t len;
        const uint8_t *b = gm_vocab_token(v, allowed[j], &len);
        int sc = close_score(b, len);
        if (best == SIZE_MAX || sc < best_score) {
            best = j;
            best_score = sc;
        }
        k--;
    }
    return best;
}

/* The index of the best closer (close_score) of all the CLOSE tokens of allowed[0..n),
   ties broken by a random starting point; SIZE_MAX when there is none. */
static size_t best_closer_all(const gm_vocab *v, const uint32_t *allowed, const uint8_t *cls,
                              size_t n, uint64_t *rng)
{
    size_t best = SIZE_MAX, start = n ? next_random(rng) % n : 0;
    int best_score = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = (start + i) % n, len;
        if (cls[j] != CLOSE)
            continue;
        const uint8_t *b = gm_vocab_token(v, allowed[j], &len);
        int sc = close_score(b, len);
        if (best == SIZE_MAX || sc < best_score) {
            best = j;
            best_score = sc;
        }
    }
    return best;
}

static void swap_allowed(uint32_t *allowed, uint8_t *cls, size_t a, size_t b)
{
    uint32_t x = allowed[a];
    allowed[a] = allowed[b];
    allowed[b] = x;
    uint8_t c = cls[a];
    cls[a] = cls[b];
    cls[b] = c;
}

/* Whether a mask allows at most half the vocabulary: structure, not free content. */
static bool narrow(const uint32_t *mask, size_t words, uint32_t nbits)
{
    return (size_t)gm_count_bits32(mask, words) * 2 <= nbits;
}

/*
 * Whether the mask after a candidate way out of free content shows it led
 * out: narrow (structure), or the text may now end where it could not
 * before (`</think>` of a reasoning block followed by optional calls: free
 * text again, but the turn can finish).
 */
static bool led_out(const gm_vocab *v, const uint32_t *probe, size_t words, uint32_t nbits,
                    bool eos_before)
{
    if (narrow(probe, words, nbits))
        return true;
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(v, &eos);
    for (size_t e = 0; e < neos && !eos_before; e++)
        if (eos[e] / 32 < words && (probe[eos[e] / 32] >> (eos[e] % 32)) & 1)
            return true;
    return false;
}

/*
 * Writes the plain text word[0..len) out token by token, each the longest
 * allowed token that is a prefix of what remains (special tokens never:
 * the text is plain), and keeps it when the mask after it is narrow: a
 * trigger of a tool format (`<function=`) led into a call. Otherwise every
 * token is undone. The number of tokens accepted (into seq), 0 when the
 * word could not be written or led nowhere, -1 on an error (err).
 */
static int write_word(gm_matcher *m, const gm_vocab *v, const char *word, size_t len,
                      uint32_t *probe, size_t words, uint32_t nbits, bool eos_before,
                      uint32_t *seq, size_t cap, gm_error *err)
{
    size_t k = 0, pos = 0;
    while (pos < len && k < cap) {
        if (gm_matcher_fill_mask(m, probe, words, err) != GM_OK)
            return -1;
        uint32_t best = UINT32_MAX;
        size_t best_len = 0;
        for (uint32_t w = 0; w < words; w++)
            for (uint32_t x = probe[w]; x; x &= x - 1) {
                uint32_t id = w * 32 + (uint32_t)__builtin_ctz(x);
                if (v->data->flags[id] & (GM_TOK_ADDED | GM_TOK_SPECIAL))
                    continue;
                size_t tl;
                const uint8_t *b = gm_vocab_token(v, id, &tl);
                if (tl > best_len && tl <= len - pos && !memcmp(b, word + pos, tl)) {
                    best = id;
                    best_len = tl;
                }
            }
        if (best == UINT32_MAX)
            break;
        if (gm_matcher_accept_token(m, best, err) != GM_OK)
            return -1;
        seq[k++] = best;
        pos += best_len;
    }
    if (pos == len) {
        if (gm_matcher_fill_mask(m, probe, words, err) != GM_OK)
            return -1;
        if (led_out(v, probe, words, nbits, eos_before))
            return (int)k;
    }
    if (k && gm_matcher_rollback(m, (uint32_t)k, err) != GM_OK)
        return -1;
    return 0;
}

/*
 * Readable sampling in free content (a wide mask: free text, a string's
 * content, a reasoning block) leaves it on purpose: it tries the allowed tags
 * in random order, then the closing tokens with a quote that end most
 * (close_score), accepts each and keeps the
 * first after which the mask is narrow (a call's or a tag's structure, the
 * punctuation after a string), undoing the others. A token that leads
 * into more free content (<think>, a quote inside free text) is undone.
 * First the structure's trigger words (write_word), which no single token
 * of plain text completes. At most 32 tries past the tags, each a mask fill:
 * only a few times per text. The number of tokens accepted (into seq, of
 * cap), 0 when none led out, -1 on an error (err).
 */
static int leave_content(gm_matcher *m, const gm_vocab *v, const gm_cli_words *trig,
                         uint32_t *allowed, uint8_t *cls, size_t n, uint32_t *probe, size_t words,
                         uint32_t nbits, bool eos_before, uint64_t *rng, uint32_t *seq,
                         size_t cap, gm_error *err)
{
    /* the trigger words, from a random one on */
    for (size_t i = 0, first = trig->n ? next_random(rng) % trig->n : 0; i < trig->n; i++) {
        size_t w = (first + i) % trig->n;
        int got = write_word(m, v, trig->words[w], trig->lens[w], probe, words, nbits, eos_before,
                             seq, cap, err);
        if (got)
            return got;
    }
    /* the candidates, moved to the front of allowed (cls moves with them): tags
       first (a few, and they open calls), then the closing tokens (thousands) */
    size_t ntag = 0, nc = 0;
    for (size_t j = 0; j < n; j++)
        if (cls[j] == TAG)
            swap_allowed(allowed, cls, ntag++, j);
    nc = ntag;
    for (size_t j = ntag; j < n; j++)
        if (cls[j] == CLOSE)
            swap_allowed(allowed, cls, nc++, j);
    for (size_t tries = 0, tried = 0; tries < 32 + ntag && tried < nc; tries++, tried++) {
        /* draw among the untried tags while there are any, else the untried closers */
        size_t lo = tried, hi = tried < ntag ? ntag : nc;
        size_t j = lo + next_random(rng) % (hi - lo);
        if (tried >= ntag) {
            /* the untried closer with a quote (what leaves a string) that ends most */
            int best = 0;
            j = SIZE_MAX;
            for (size_t i = lo; i < hi; i++) {
                size_t len;
                const uint8_t *b = gm_vocab_token(v, allowed[i], &len);
                if (!memchr(b, '"', len))
                    continue;
                int sc = close_score(b, len);
                if (j == SIZE_MAX || sc < best) {
                    j = i;
                    best = sc;
                }
            }
            if (j == SIZE_MAX)
                break;
        }
        swap_allowed(allowed, cls, tried, j);
        uint32_t t = allowed[tried];
        if (gm_matcher_accept_token(m, t, err) != GM_OK ||
            gm_matcher_fill_mask(m, probe, words, err) != GM_OK)
            return -1;
        if (led_out(v, probe, words, nbits, eos_before)) {
            seq[0] = t;
            return 1;
        }
        if (gm_matcher_rollback(m, 1, err) != GM_OK)
            return -1;
    }
    return 0;
}

/* A special or added token of a text, at bytes[off..off + len). */
typedef struct special {
    size_t off, len;
    uint32_t id;
} special;

typedef struct text {
    uint8_t *bytes;
    size_t len, cap;
    special *sp; /* its special tokens, in order */
    size_t nsp, spcap;
} text;

static int text_mark_special(text *t, size_t off, size_t len, uint32_t id)
{
    if (t->nsp == t->spcap) {
        size_t cap = t->spcap ? t->spcap * 2 : 16;
        special *ns = realloc(t->sp, cap * sizeof *ns);
        if (!ns)
            return -1;
        t->sp = ns;
        t->spcap = cap;
    }
    t->sp[t->nsp++] = (special){off, len, id};
    return 0;
}

/*
 * Whether a fresh matcher accepts the finished text: its bytes as raw bytes,
 * re-lexed across the token boundaries, except its special tokens (a chat
 * format's <|call|>), which only a token id can stand for.
 */
static bool recheck(gm_compiled *c, const text *t, gm_error *err)
{
    gm_matcher *check = NULL;
    bool ok = gm_matcher_create(c, NULL, &check, err) == GM_OK;
    size_t pos = 0;
    for (size_t i = 0; ok && i < t->nsp; i++) {
        const special *sp = &t->sp[i];
        ok = (sp->off == pos ||
              gm_matcher_accept_bytes(check, t->bytes + pos, sp->off - pos, err) == GM_OK) &&
             gm_matcher_accept_token(check, sp->id, err) == GM_OK;
        pos = sp->off + sp->len;
    }
    ok = ok && (pos == t->len || gm_matcher_accept_bytes(check, t->bytes + pos, t->len - pos, err) == GM_OK) &&
         gm_matcher_is_accepting(check);
    if (check)
        gm_matcher_destroy(check);
    return ok;
}

static int text_append(text *t, const uint8_t *b, size_t n)
{
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->len + n)
            cap *= 2;
        uint8_t *nb = realloc(t->bytes, cap);
        if (!nb)
            return -1;
        t->bytes = nb;
        t->cap = cap;
    }
    memcpy(t->bytes + t->len, b, n);
    t->len += n;
    return 0;
}

int gm_cmd_generate(int argc, char **argv)
{
    gm_cli_load_options lo;
    gm_cli_load_options_init(&lo);
    uint64_t seed = 1, count = 10, max_tokens = 200;
    bool readable = true;
    double eos_prob = 0.2;
    const char *out_path = NULL;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG},   {"-h", GM_CLI_NO_ARG},   {"--seed", GM_CLI_ARG},
        {"-n", GM_CLI_ARG},          {"--max-tokens", GM_CLI_ARG}, {"--eos-prob", GM_CLI_ARG},
        {"--out", GM_CLI_ARG},       {"-o", GM_CLI_ARG},      {"--sampling", GM_CLI_ARG},
        {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, gm_cli_grammar_opts, gm_cli_schema_opts, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "generate", usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        int taken = gm_cli_grammar_arg(&lo, &p);
        if (taken == 1)
            continue;
        if (taken)
            return taken;
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask generate %s\n", usage);
            return 0;
        } else if (gm_cli_is(&p, "--seed")) {
            if (gm_cli_parse_u64(p.value, &seed))
                return gm_cli_args_bad_value(&p, NULL);
        } else if (gm_cli_is(&p, "-n")) {
            if (gm_cli_parse_u64(p.value, &count))
                return gm_cli_args_bad_value(&p, NULL);
        } else if (gm_cli_is(&p, "--max-tokens")) {
            if (gm_cli_parse_u64(p.value, &max_tokens))
                return gm_cli_args_bad_value(&p, NULL);
        } else if (gm_cli_is(&p, "--eos-prob")) {
            char *end;
            eos_prob = strtod(p.value, &end);
            if (!*p.value || *end || eos_prob < 0 || eos_prob > 1)
                return gm_cli_args_bad_value(&p, "not a number in 0..1");
        } else if (gm_cli_is(&p, "--out") || gm_cli_is(&p, "-o")) {
            out_path = p.value;
        } else if (gm_cli_is(&p, "--sampling")) {
            if (!strcmp(p.value, "uniform"))
                readable = false;
            else if (!strcmp(p.value, "readable"))
                readable = true;
            else
                return gm_cli_args_bad_value(&p, "readable or uniform");
        } else {
            return gm_cli_args_unexpected(&p);
        }
    }
    if (r)
        return r;
    if (!lo.grammar && !lo.tools && !lo.structural_tag && !lo.code_blocks)
        return gm_cli_bad_arg("generate", usage, "missing GRAMMAR");
    gm_cli_session s;
    int rc = gm_cli_session_open("generate", &lo, &s);
    if (rc)
        return rc;
    gm_cli_words trig = {0};
    gm_error terr;
    if (readable && gm_cli_triggers(&lo, &trig, &terr) != GM_OK) {
        gm_cli_session_close(&s);
        return gm_cli_fail("generate", &terr);
    }
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "gramask generate: cannot write %s: %s\n", out_path, strerror(errno));
        gm_cli_words_free(&trig);
        gm_cli_session_close(&s);
        return 1;
    }
    uint32_t nbits = gm_compiled_vocab_size(s.compiled);
    size_t words = gm_compiled_mask_words(s.compiled);
    uint32_t *mask = calloc(words, sizeof *mask);
    uint32_t *allowed = calloc(nbits, sizeof *allowed);
    uint8_t *cls = readable ? calloc(nbits, 1) : NULL;
    uint32_t *probe = readable ? calloc(words, sizeof *probe) : NULL;
    uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 1;
    size_t finished = 0, truncated = 0, dead = 0, bad_recheck = 0, total_tokens = 0;
    const uint32_t *eos;
    size_t neos = gm_vocab_eos_ids(s.vocab, &eos);
    text t = {0};
    gm_error err;
    rc = 0;
    if (!mask || !allowed || (readable && (!cls || !probe))) {
        fprintf(stderr, "gramask generate: out of memory\n");
        rc = 1;
        goto done;
    }
    for (uint64_t k = 0; k < count && !rc; k++) {
        gm_matcher *m;
        if (gm_matcher_create(s.compiled, NULL, &m, &err) != GM_OK) {
            rc = gm_cli_fail("generate", &err);
            break;
        }
        t.len = t.nsp = 0;
        uint32_t strip = s.vocab->data->strip_leading;
        int ended = 0;
        size_t ntok = 0, run = 0;
        for (; ntok < max_tokens; ntok++) {
            if (gm_matcher_fill_mask(m, mask, words, &err) != GM_OK) {
                rc = gm_cli_fail("generate", &err);
                break;
            }
            size_t n = 0;
            int eos_ok = 0;
            for (uint32_t w = 0; w < words; w++)
                for (uint32_t x = mask[w]; x; x &= x - 1) {
                    uint32_t id = w * 32 + (uint32_t)__builtin_ctz(x);
                    int is_eos = 0;
                    for (size_t e = 0; e < neos; e++)
                        is_eos |= eos[e] == id;
                    if (is_eos)
                        eos_ok = 1;
                    else
                        allowed[n++] = id;
                }
            if (n == 0 && !eos_ok) {
                dead++;
                fprintf(stderr, "gramask generate: DEAD END in text %llu after %zu tokens: ",
                        (unsigned long long)k, ntok);
                json_string(stderr, t.bytes, t.len);
                fputc('\n', stderr);
                break;
            }
            double p_eos = eos_prob;
            size_t ncls[NCLASSES] = {0};
            if (readable) {
                for (size_t j = 0; j < n; j++) {
                    size_t len;
                    const uint8_t *b = gm_vocab_token(s.vocab, allowed[j], &len);
                    bool added = s.vocab->data->flags[allowed[j]] & (GM_TOK_ADDED | GM_TOK_SPECIAL);
                    ncls[cls[j] = (uint8_t)token_class(b, len, added)]++;
                }
                /* likelier as the text grows, and certain when only whitespace or odd
                   bytes could follow: outputs finish, without trailing blanks; in free
                   content (a wide mask) likelier with each token of it, so free text
                   ends early */
                run = n * 2 > nbits ? run + 1 : 0;
                p_eos += (1 - eos_prob) * (double)ntok / (double)max_tokens;
                if (run)
                    p_eos += 0.15 * (double)run;
                if (!ncls[TEXT] && !ncls[CLOSE] && !ncls[TAG])
                    p_eos = 1;
            }
            if (eos_ok && (n == 0 || (double)(next_random(&rng) % 1000000) / 1e6 < p_eos)) {
                if (gm_matcher_accept_token(m, eos[0], &err) != GM_OK) {
                    rc = gm_cli_fail("generate", &err);
                    break;
                }
                ended = 1;
                break;
            }
            uint32_t id = allowed[next_random(&rng) % n];
            uint32_t seq[64];
            size_t nseq = 1;
            bool taken = false;
            if (readable && run && (ntok * 2 >= max_tokens || next_random(&rng) % 100 < 20 * run)) {
                size_t cap = max_tokens - ntok < 64 ? (size_t)(max_tokens - ntok) : 64;
                int got = leave_content(m, s.vocab, &trig, allowed, cls, n, probe, words, nbits,
                                        eos_ok, &rng, seq, cap, &err);
                if (got < 0) {
                    rc = gm_cli_fail("generate", &err);
                    break;
                }
                taken = got > 0;
                if (taken)
                    nseq = (size_t)got;
            }
            if (readable && !taken) {
                /* class weights before and past half the budget (TAG, CLOSE, TEXT, SPACE,
                   OTHER) */
                /* in structure (a narrow mask): mostly what closes, so values stay
                   short, objects small and calls end */
                static const double early[NCLASSES] = {0.2, 0.55, 0.22, 0.02, 0.01};
                static const double late[NCLASSES] = {0.2, 0.7, 0.08, 0.01, 0.01};
                /* in free content: words, and rarely what could leave it (leave_content
                   does, on purpose) */
                static const double content[NCLASSES] = {0.01, 0.02, 0.87, 0.05, 0.05};
                const double *w = run ? content : ntok * 2 >= max_tokens ? late : early;
                double total = 0;
                for (int c = 0; c < NCLASSES; c++)
                    total += ncls[c] ? w[c] : 0;
                double x = (double)(next_random(&rng) >> 11) / 9007199254740992.0 * total;
                int c = 0;
                while (c + 1 < NCLASSES && (!ncls[c] || (x -= w[c]) >= 0))
                    c++;
                while (!ncls[c]) /* rounding at the top end */
                    c--;
                size_t pick = next_random(&rng) % ncls[c], j = 0;
                /* past a third of the budget, the best closer of all (an open schema's
                   object, where most closers open another member, ends at its first
                   chance); before, of a few */
                if (c == CLOSE && !run)
                    j = ntok * 3 >= max_tokens ? best_closer_all(s.vocab, allowed, cls, n, &rng)
                                               : best_closer(s.vocab, allowed, cls, 0, n, CLOSE, 4,
                                                             &rng);
                else
                    j = SIZE_MAX;
                for (size_t i = 0; j == SIZE_MAX; i++)
                    if (cls[i] == c && pick-- == 0)
                        j = i;
                id = allowed[j];
            }
            if (!taken && gm_matcher_accept_token(m, id, &err) != GM_OK) {
                fprintf(stderr, "gramask generate: token %u was in the mask but rejected: %s\n", id,
                        err.message);
                rc = 1;
                break;
            }
            if (!taken)
                seq[0] = id;
            ntok += nseq - 1; /* the loop counts one */
            for (size_t q = 0; q < nseq && !rc; q++) {
                id = seq[q];
                size_t len;
                const uint8_t *b = gm_vocab_token(s.vocab, id, &len);
                /* The decoded text: the tokenizer's decoder drops leading spaces of the whole
                 * text (SentencePiece's dummy prefix), and so does the grammar's view of it. */
                while (t.len == 0 && strip && len && b[0] == ' ') {
                    b++;
                    len--;
                    strip--;
                }
                bool is_special = s.vocab->data->flags[id] & (GM_TOK_ADDED | GM_TOK_SPECIAL);
                if ((is_special && text_mark_special(&t, t.len, len, id)) || text_append(&t, b, len)) {
                    fprintf(stderr, "gramask generate: out of memory\n");
                    rc = 1;
                }
            }
            if (rc)
                break;
        }
        gm_matcher_destroy(m);
        total_tokens += ntok;
        if (rc)
            break;
        if (ended) {
            finished++;
            /* The finished text, fed to a fresh matcher as bytes (recheck), must be a sentence. */
            bool ok = recheck(s.compiled, &t, &err);
            if (!ok) {
                bad_recheck++;
                fprintf(stderr, "gramask generate: finished text %llu is not accepted when re-read\n",
                        (unsigned long long)k);
            }
        } else if (ntok == max_tokens) {
            truncated++;
        }
        fprintf(out, "{\"text\": ");
        json_string(out, t.bytes, t.len);
        fprintf(out, ", \"tokens\": %zu, \"finished\": %s}\n", ntok, ended ? "true" : "false");
    }
    fprintf(stderr, "generate: %llu texts, %zu finished, %zu truncated at %llu tokens, %zu dead "
                    "ends, %zu failed re-check, %zu tokens\n",
            (unsigned long long)count, finished, truncated, (unsigned long long)max_tokens, dead,
            bad_recheck, total_tokens);
    if (dead || bad_recheck)
        rc = 1;
done:
    free(t.bytes);
    free(t.sp);
    free(mask);
    free(allowed);
    free(cls);
    free(probe);
    gm_cli_words_free(&trig);
    if (out != stdout)
        fclose(out);
    gm_cli_session_close(&s);
    return rc;
}
