/*
 * gm_lexer_build: terminal specs -> one NFA (a start state with an epsilon
 * edge into each terminal's automaton, whose final state is tagged with the
 * terminal id) -> subset construction -> resolution of each accepting
 * state to one terminal -> Hopcroft minimization -> the gm_lexer tables
 * and Prod.
 *
 * note [terminal resolution]
 * A DFA state is reached by one lexeme, whatever path led there, so every
 * terminal tagged in it matches exactly that lexeme (longest match itself
 * is the transducer's business). Among them the winner is the one with the
 * highest priority, then a string literal over a regex, then the earliest
 * declaration. A terminal that wins in no state can never be produced: it
 * is reported with the terminals that take its lexemes. A terminal whose
 * regex matches the empty string is an error (the transducer could not
 * make progress), as in Lark.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/regex.h"
#include "lexer/uclass.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

/* Records an error about terminal `spec`, with its location when it has one. */
static gm_status spec_error(gm_error *err, gm_status code, const gm_terminal_spec *spec,
                            const char *fmt, ...) GM_PRINTF(4, 5);

static gm_status spec_error(gm_error *err, gm_status code, const gm_terminal_spec *spec,
                            const char *fmt, ...)
{
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (spec->loc.line || spec->loc.file)
        return gm_error_set_at(err, code, spec->loc, NULL, 0, "%s", msg);
    return gm_error_set(err, code, "%s", msg);
}

/*
 * Lark's lexer tries terminals in the order (priority, longest possible
 * match, longest pattern, name) and takes the first that matches; on
 * equal-length matches that is the tie-break of lark_ties terminals.
 */
static int lark_order(const gm_terminal_spec *specs, const uint32_t *maxw, uint32_t a, uint32_t b)
{
    if (!maxw || !specs[a].lark_ties || !specs[b].lark_ties)
        return 0;
    if (maxw[a] != maxw[b])
        return maxw[a] > maxw[b] ? -1 : 1;
    if (specs[a].pattern_len != specs[b].pattern_len)
        return specs[a].pattern_len > specs[b].pattern_len ? -1 : 1;
    return strcmp(specs[a].name, specs[b].name);
}

/* True when terminal a beats terminal b on the same lexeme. maxw may be NULL. */
static bool wins(const gm_terminal_spec *specs, const uint32_t *maxw, uint32_t a, uint32_t b)
{
    if (specs[a].priority != specs[b].priority)
        return specs[a].priority > specs[b].priority;
    if (specs[a].is_literal != specs[b].is_literal)
        return specs[a].is_literal;
    int o = lark_order(specs, maxw, a, b);
    return o ? o < 0 : a < b;
}

static const char *why_wins(const gm_terminal_spec *specs, const uint32_t *maxw, uint32_t a, uint32_t b)
{
    if (specs[a].priority != specs[b].priority)
        return "higher priority";
    if (specs[a].is_literal != specs[b].is_literal)
        return "a string literal wins over a regex";
    if (lark_order(specs, maxw, a, b))
        return "first in Lark's lexer order";
    return "declared earlier";
}

/* Parses one spec into re; errors name the terminal. */
static gm_status parse_spec(const gm_terminal_spec *spec, gm_uclass *uc, const gm_limits *limits,
                            gm_regex *re, gm_error *err)
{
    gm_error e;
    gm_error_clear(&e);
    gm_status st = spec->is_literal
                       ? gm_regex_literal(re, uc, spec->pattern, spec->pattern_len, spec->flags, &e)
                       : gm_regex_parse(re, uc, spec->pattern, spec->pattern_len,
                                        spec->flags | GM_RE_LARK_MATCH, limits, &e);
    if (st == GM_OK)
        return st;
    if (st == GM_ERR_NOMEM) {
        *err = e;
        return st;
    }
    char where[GM_ERROR_MESSAGE_MAX];
    gm_regex_format_error(where, sizeof where, &e, spec->pattern, spec->pattern_len);
    return spec_error(err, st, spec, "terminal %s: %s", spec->name, where);
}

/*
 * A follow condition of a terminal (lexer/regex.h gm_rx_follow, from note
 * [Lark idioms] 4), its lexemes spelled out in a shared buffer.
 */
typedef struct follow {
    uint32_t term;
    uint32_t cp;           /* ASCII */
    uint32_t at;           /* byte offset of the lookahead in the pattern */
    size_t off, nwords;    /* NUL-terminated lexemes at words.s + off */
} follow;

typedef GM_VEC(follow) follows;

enum { MAX_FOLLOW_WORDS = 4096 };

static gm_status collect_follow(const gm_regex *re, uint32_t term, const gm_terminal_spec *sp,
                                follows *fs, gm_strbuf *words, gm_error *err)
{
    for (size_t i = 0; i < re->nfollow; i++) {
        const gm_rx_follow *f = &re->follow[i];
        follow x = {term, f->cp, f->at, words->n, 0};
        gm_status st = f->cp < 0x80 ? gm_regex_words(re, f->node, MAX_FOLLOW_WORDS, words, &x.nwords)
                                    : GM_ERR_LIMIT;
        if (st == GM_ERR_LIMIT)
            return spec_error(err, GM_ERR_UNSUPPORTED, sp,
                              "terminal %s: unsupported construct: negative lookahead (?!...) at column %u "
                              "(the lexemes it rules out are too many to check, or not ASCII-delimited)",
                              sp->name, f->at + 1);
        if (st != GM_OK || gm_vec_push(words->mem, fs, x))
            return gm_mem_fail(words->mem, err, "the lexer");
    }
    return GM_OK;
}

/*
 * A lexeme that Python's re would not match before cp is safe when the
 * transducer never ends it there: its DFA state must go on with cp's byte
 * (another terminal continues the lexeme, note [lexing transducer]).
 */
static gm_status check_follow(const gm_lexer *lx, const gm_terminal_spec *specs, const follows *fs,
                              const gm_strbuf *words, gm_error *err)
{
    for (size_t i = 0; i < fs->n; i++) {
        const follow *f = &fs->v[i];
        const char *w = words->s + f->off;
        for (size_t k = 0; k < f->nwords; k++, w += strlen(w) + 1) {
            uint32_t q = 0;
            for (const uint8_t *b = (const uint8_t *)w; *b && q != GM_LEX_DEAD; b++)
                q = lx->next[(size_t)q * lx->nclasses + lx->byte_class[*b]];
            if (q == GM_LEX_DEAD || lx->next[(size_t)q * lx->nclasses + lx->byte_class[f->cp]] != GM_LEX_DEAD)
                continue;
            gm_strbuf b;
            gm_strbuf_init(&b, lx->mem);
            gm_strbuf_escaped(&b, w, strlen(w));
            char shown[64];
            snprintf(shown, sizeof shown, "%s", b.failed ? "?" : gm_strbuf_str(&b));
            gm_strbuf_free(&b);
            return spec_error(err, GM_ERR_UNSUPPORTED, &specs[f->term],
                              "terminal %s: unsupported construct: negative lookahead (?!...) at column %u "
                              "(Python's re never matches \"%s\" before '%c'; gramask's lexer can only "
                              "honour that when another terminal continues the lexeme with '%c', and none "
                              "does: lexer/regex.h note [Lark idioms])",
                              specs[f->term].name, f->at + 1, shown, (char)f->cp, (char)f->cp);
        }
    }
    return GM_OK;
}

/* Prod(q) by propagating accept labels backwards until nothing changes. */
static gm_status compute_prod(gm_lexer *lx, gm_error *err)
{
    gm_mem *m = lx->mem;
    uint32_t n = lx->nstates, k = lx->nclasses, w = lx->prod_words;
    gm_status st = GM_OK;
    uint32_t *pred_off = gm_mem_calloc(m, (size_t)n + 1, sizeof *pred_off);
    uint32_t *pred = NULL, *queue = NULL;
    uint8_t *queued = gm_mem_calloc(m, n, 1);
    if (!pred_off || !queued)
        goto nomem;
    size_t nedges = 0;
    for (uint32_t q = 0; q < n; q++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = lx->next[(size_t)q * k + c];
            if (t != GM_LEX_DEAD) {
                pred_off[t + 1]++;
                nedges++;
            }
        }
    for (uint32_t q = 0; q < n; q++)
        pred_off[q + 1] += pred_off[q];
    pred = gm_mem_reallocarray(m, NULL, nedges ? nedges : 1, sizeof *pred);
    queue = gm_mem_reallocarray(m, NULL, n, sizeof *queue);
    uint32_t *fill = gm_mem_reallocarray(m, NULL, n, sizeof *fill);
    if (!pred || !queue || !fill) {
        gm_mem_free(m, fill);
        goto nomem;
    }
    memcpy(fill, pred_off, n * sizeof *fill);
    for (uint32_t q = 0; q < n; q++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = lx->next[(size_t)q * k + c];
            if (t != GM_LEX_DEAD)
                pred[fill[t]++] = q;
        }
    gm_mem_free(m, fill);
    /* A circular queue: each state is in it at most once. */
    uint32_t head = 0, count = 0;
    for (uint32_t q = 0; q < n; q++) {
        if (lx->accept[q] != GM_LEX_NONE) {
            uint32_t t = lx->accept[q];
            lx->prod[(size_t)q * w + (t >> 6)] |= (uint64_t)1 << (t & 63);
            queue[(head + count++) % n] = q;
            queued[q] = 1;
        }
    }
    while (count) {
        uint32_t q = queue[head];
        head = (head + 1) % n;
        count--;
        queued[q] = 0;
        const uint64_t *row = lx->prod + (size_t)q * w;
        for (uint32_t i = pred_off[q]; i < pred_off[q + 1]; i++) {
            uint32_t p = pred[i];
            uint64_t *prow = lx->prod + (size_t)p * w;
            bool changed = false;
            for (uint32_t j = 0; j < w; j++) {
                uint64_t v = prow[j] | row[j];
                if (v != prow[j]) {
                    prow[j] = v;
                    changed = true;
                }
            }
            if (changed && !queued[p]) {
                queue[(head + count++) % n] = p;
                queued[p] = 1;
            }
        }
    }
    goto done;
nomem:
    st = gm_mem_fail(m, err, "the lexer");
done:
    gm_mem_free(m, pred_off);
    gm_mem_free(m, pred);
    gm_mem_free(m, queue);
    gm_mem_free(m, queued);
    return st;
}

gm_status gm_lexer_build_grammar(gm_mem *m, gm_terminal_spec *specs, uint32_t n, bool lark,
                                 const gm_limits *limits, gm_warning_fn warn, void *warn_ud,
                                 gm_lexer **out, gm_error *err)
{
    for (uint32_t i = 0; lark && specs && i < n; i++)
        specs[i].lark_ties = true;
    gm_status st = gm_lexer_build(m, specs, n, limits, warn, warn_ud, out, err);
    if (st != GM_OK || !lark)
        return st;
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    st = gm_lexer_add_backtracking(*out, limits && limits->max_dfa_states ? limits->max_dfa_states
                                                                         : lim.max_dfa_states,
                                   err);
    if (st != GM_OK) {
        gm_lexer_destroy(*out);
        *out = NULL;
    }
    return st;
}

void gm_lexer_destroy(gm_lexer *lx)
{
    if (!lx)
        return;
    gm_mem *m = lx->mem;
    if (lx->terminals)
        for (uint32_t i = 0; i < lx->nterminals; i++)
            gm_mem_free(m, lx->terminals[i].name);
    gm_mem_free(m, lx->terminals);
    gm_mem_free(m, lx->next);
    gm_mem_free(m, lx->accept);
    gm_mem_free(m, lx->prod);
    gm_mem_free(m, lx->bt_main);
    gm_mem_free(m, lx->bt_fallback);
    gm_mem_free(m, lx->bt_relex);
    gm_mem_free(m, lx);
}

/* Resolves every DFA state's tags to one terminal and reports terminals that never win. */
typedef struct resolution {
    uint8_t *won;          /* [n] terminal wins somewhere */
    uint32_t (*beaten_by)[3]; /* [n] up to three terminals that took its lexemes */
} resolution;

static void resolve(gm_dfa *d, const gm_terminal_spec *specs, const uint32_t *maxw, resolution *r)
{
    for (uint32_t q = 0; q < d->nstates; q++) {
        uint32_t best = GM_LEX_NONE;
        for (uint32_t i = d->tag_off[q]; i < d->tag_off[q + 1]; i++) {
            uint32_t t = d->tags[i];
            if (best == GM_LEX_NONE || wins(specs, maxw, t, best))
                best = t;
        }
        d->label[q] = best;
        if (best == GM_LEX_NONE)
            continue;
        r->won[best] = 1;
        for (uint32_t i = d->tag_off[q]; i < d->tag_off[q + 1]; i++) {
            uint32_t t = d->tags[i];
            if (t == best || r->won[t])
                continue;
            for (int j = 0; j < 3; j++) {
                if (r->beaten_by[t][j] == best)
                    break;
                if (r->beaten_by[t][j] == GM_LEX_NONE) {
                    r->beaten_by[t][j] = best;
                    break;
                }
            }
        }
    }
}

static void warn_unproduced(const gm_terminal_spec *specs, const uint32_t *maxw, uint32_t n,
                            const resolution *r, gm_warning_fn warn, void *ud)
{
    if (!warn)
        return;
    for (uint32_t t = 0; t < n; t++) {
        if (!specs[t].pattern || r->won[t])
            continue;
        gm_error w;
        gm_error_clear(&w);
        const uint32_t *by = r->beaten_by[t];
        if (by[0] == GM_LEX_NONE) {
            spec_error(&w, GM_ERR_GRAMMAR, &specs[t],
                       "warning: terminal %s can never be produced: its pattern matches no string",
                       specs[t].name);
        } else {
            char list[512];
            size_t used = 0;
            for (int j = 0; j < 3 && by[j] != GM_LEX_NONE; j++) {
                int k = snprintf(list + used, sizeof list - used, "%s%s (%s)", j ? ", " : "",
                                 specs[by[j]].name, why_wins(specs, maxw, by[j], t));
                if (k < 0 || (size_t)k >= sizeof list - used)
                    break;
                used += (size_t)k;
            }
            spec_error(&w, GM_ERR_GRAMMAR, &specs[t],
                       "warning: terminal %s can never be produced: every string it matches is "
                       "taken by %s",
                       specs[t].name, list);
        }
        warn(ud, &w);
    }
}

gm_status gm_lexer_build(gm_mem *m, const gm_terminal_spec *specs, uint32_t n,
                         const gm_limits *limits, gm_warning_fn warn, void *warn_ud,
                         gm_lexer **out, gm_error *err)
{
    if (!m || !out || (n && !specs))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_build: NULL argument");
    *out = NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!specs[i].name || (specs[i].pattern == NULL && specs[i].pattern_len))
            return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_build: terminal %u has no name or pattern", i);
    if (n >= GM_LEX_NONE - 1)
        return gm_error_set(err, GM_ERR_LIMIT, "too many terminals (%u)", n);
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    if (limits) {
        if (limits->max_dfa_states)
            lim.max_dfa_states = limits->max_dfa_states;
        if (limits->max_nfa_states)
            lim.max_nfa_states = limits->max_nfa_states;
        if (limits->max_regex_repeat)
            lim.max_regex_repeat = limits->max_regex_repeat;
        if (limits->max_input_bytes)
            lim.max_input_bytes = limits->max_input_bytes;
    }

    gm_status st = GM_OK;
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    gm_nfa nfa;
    gm_nfa_init(&nfa, m, &lim);
    gm_dfa dfa, min;
    memset(&dfa, 0, sizeof dfa);
    memset(&min, 0, sizeof min);
    dfa.mem = min.mem = m;
    resolution res = {NULL, NULL};
    gm_lexer *lx = NULL;
    follows fs = {0};
    gm_strbuf fwords;
    gm_strbuf_init(&fwords, m);
    uint32_t *maxw = gm_mem_calloc(m, n ? n : 1, sizeof *maxw); /* Lark's max_width */
    if (!maxw) {
        st = gm_mem_fail(m, err, "the lexer");
        goto done;
    }

    uint32_t start = gm_nfa_new_state(&nfa, GM_NFA_NO_TAG);
    if (start == UINT32_MAX) {
        st = gm_nfa_fail(&nfa, err);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        const gm_terminal_spec *sp = &specs[i];
        if (!sp->pattern)
            continue;
        gm_regex re;
        gm_regex_init(&re, m);
        st = parse_spec(sp, &uc, &lim, &re, err);
        if (st == GM_OK && re.nfollow)
            st = collect_follow(&re, i, sp, &fs, &fwords, err);
        if (st == GM_OK)
            maxw[i] = gm_regex_max_width(&re, re.root);
        if (st == GM_OK && gm_regex_nullable(&re, re.root))
            st = spec_error(err, GM_ERR_GRAMMAR, sp,
                            "terminal %s matches the empty string (a lexer cannot make progress on it)",
                            sp->name);
        uint32_t final = GM_LEX_NONE, entry = GM_LEX_NONE;
        if (st == GM_OK) {
            final = gm_nfa_new_state(&nfa, i);
            if (final == UINT32_MAX)
                st = gm_nfa_fail(&nfa, err);
        }
        if (st == GM_OK)
            st = gm_nfa_add_regex(&nfa, &re, final, &entry, err);
        if (st == GM_OK && gm_nfa_add_eps(&nfa, start, entry))
            st = gm_nfa_fail(&nfa, err);
        gm_regex_free(&re);
        if (st != GM_OK) {
            if (st == GM_ERR_LIMIT && err && strncmp(err->message, "terminal ", 9) != 0 &&
                !strstr(err->message, ": terminal ")) {
                char msg[GM_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s", err->message);
                spec_error(err, st, sp, "terminal %s: %s", sp->name, msg);
            }
            goto done;
        }
    }
    gm_uclass_free(&uc);
    st = gm_nfa_finish(&nfa, start, err);
    if (st == GM_OK)
        st = gm_dfa_determinize(&nfa, m, lim.max_dfa_states, true, &dfa, err);
    gm_nfa_free(&nfa);
    if (st != GM_OK)
        goto done;

    res.won = gm_mem_calloc(m, n ? n : 1, 1);
    res.beaten_by = gm_mem_reallocarray(m, NULL, n ? n : 1, sizeof *res.beaten_by);
    if (!res.won || !res.beaten_by) {
        st = gm_mem_fail(m, err, "the lexer");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++)
        res.beaten_by[i][0] = res.beaten_by[i][1] = res.beaten_by[i][2] = GM_LEX_NONE;
    resolve(&dfa, specs, maxw, &res);
    st = gm_dfa_minimize(&dfa, true, &min, err);
    gm_dfa_free(&dfa);
    if (st != GM_OK)
        goto done;

    lx = gm_mem_calloc(m, 1, sizeof *lx);
    if (!lx)
        goto nomem;
    lx->mem = m;
    lx->nstates = lx->ndfa = min.nstates;
    lx->nclasses = min.nclasses;
    lx->nterminals = n;
    memcpy(lx->byte_class, min.byte_class, sizeof lx->byte_class);
    lx->next = min.next;
    lx->accept = min.label;
    min.next = min.label = NULL;
    lx->prod_words = (n + 63) / 64 ? (n + 63) / 64 : 1;
    lx->prod = gm_mem_calloc(m, (size_t)lx->nstates * lx->prod_words, sizeof *lx->prod);
    lx->terminals = gm_mem_calloc(m, n ? n : 1, sizeof *lx->terminals);
    if (!lx->prod || !lx->terminals)
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        lx->terminals[i].name = gm_mem_strndup(m, specs[i].name, strlen(specs[i].name));
        if (!lx->terminals[i].name)
            goto nomem;
        lx->terminals[i].ignored = specs[i].ignored;
        lx->terminals[i].declared_only = specs[i].pattern == NULL;
    }
    st = compute_prod(lx, err);
    if (st == GM_OK)
        st = check_follow(lx, specs, &fs, &fwords, err);
    if (st != GM_OK)
        goto done;
    warn_unproduced(specs, maxw, n, &res, warn, warn_ud);
    *out = lx;
    lx = NULL;
    goto done;
nomem:
    st = gm_mem_fail(m, err, "the lexer");
done:
    gm_lexer_destroy(lx);
    gm_uclass_free(&uc);
    gm_nfa_free(&nfa);
    gm_dfa_free(&dfa);
    gm_dfa_free(&min);
    gm_mem_free(m, res.won);
    gm_mem_free(m, res.beaten_by);
    gm_vec_free(m, &fs);
    gm_strbuf_free(&fwords);
    gm_mem_free(m, maxw);
    return st;
}
