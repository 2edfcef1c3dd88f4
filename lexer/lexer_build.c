/*
 * gm_lexer_build: terminal specs -> one NFA (a start state with an epsilon
 * edge into each terminal's automaton, whose final state is tagged with the
 * terminal id) -> the ordered determinizer (lexer/ordered.h) -> Hopcroft
 * minimization -> the gm_lexer tables and Prod.
 *
 * note [terminal resolution]
 * A terminal with lazy quantifiers or lookarounds means what Python's
 * re.match finds for it (note [ordered matching]); any other its regular
 * language (alternatives and loops are not tried in order, as re.match
 * would). gramask's own lexer takes the longest lexeme of any terminal, and
 * among the terminals that match it the one with the highest priority,
 * then a string literal over a regex, then the earliest declaration. A terminal that wins nowhere can never be produced: it is
 * reported with the terminals that take its lexemes. A terminal whose regex
 * matches the empty string is an error (the transducer could not make
 * progress), as in Lark.
 *
 * note [Lark's lexer]
 * Lark's basic lexer (lark/lexer.py, 1.1.5) is one re.match over the
 * alternation of its terminals sorted by (priority, longest possible match
 * (sre_parse's getwidth), longest pattern text, name), higher first: the
 * first terminal that matches at all wins, even if a later one would match
 * more. Before that, string folding: a string terminal S of the same
 * priority as a regex terminal R such that re.match(R, S) is all of S joins
 * R's "unless" list, and leaves the alternation when its flags are R's or
 * fewer (a case-insensitive string stays when R is case-sensitive). A
 * lexeme of R is then retyped to the first S of its list (in the same
 * order) whose pattern matches it whole, `S$` as Python reads it: S, or S
 * and a final line break. An ignored R is dropped before that callback
 * runs, so `"\n"` in a rule never comes out of an ignored WS /[ \t\n]+/.
 * gramask builds the alternation with the ordered determinizer cutting
 * across terminals in that order, and the folding with markers for the
 * strings S (lexer/ordered.h). Lark's lexer falls back to the longest match
 * when a longer one dies (Python's backtracking): gm_lexer_build_grammar
 * adds the backtracking states of note [lexer backtracking].
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/ordered.h"
#include "lexer/regex.h"
#include "lexer/uclass.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/utf8.h"
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

/* An error inside a terminal's pattern: its message with the pattern and a caret. */
static gm_status pattern_error(gm_error *err, gm_status code, const gm_terminal_spec *spec,
                               const gm_error *e)
{
    char where[GM_ERROR_MESSAGE_MAX];
    gm_regex_format_error(where, sizeof where, e, spec->pattern, spec->pattern_len);
    return spec_error(err, code, spec, "terminal %s: %s", spec->name, where);
}

/* What the builder knows of one terminal. */
typedef struct term {
    gm_regex re;
    bool parsed;
    bool scanned;            /* in the alternation (Lark: not folded into a regex) */
    uint32_t max_width;      /* Python's getwidth, in characters */
    uint32_t value_len;      /* Lark's len(pattern.value), in characters */
    uint32_t nunless;        /* Lark: the strings folded into this regex ... */
    uint32_t *unless;        /* ... in Lark's order */
    uint32_t marker;         /* Lark: this string's marker, or GM_LEX_NONE */
} term;

typedef struct build {
    gm_mem *mem;
    const gm_terminal_spec *specs;
    uint32_t n;
    bool lark;
    term *t;
    uint32_t *order;         /* Lark: terminals in Lark's lexer order */
    uint32_t *marker_term;   /* [nmarkers] the string of each marker */
    uint32_t nmarkers;
    uint8_t *ordered;        /* [n] gramask's lexer: has lazy quantifiers or lookarounds */
    uint8_t *won;            /* [n] produced somewhere */
    uint32_t (*beaten_by)[3];/* [n] up to three terminals that took its lexemes */
} build;

/* ---- tie rules ---- */

/* True when terminal a beats terminal b on the same lexeme (gramask's lexer). */
static bool wins(const gm_terminal_spec *specs, uint32_t a, uint32_t b)
{
    if (specs[a].priority != specs[b].priority)
        return specs[a].priority > specs[b].priority;
    if (specs[a].is_literal != specs[b].is_literal)
        return specs[a].is_literal;
    return a < b;
}

static const char *why_wins(const gm_terminal_spec *specs, uint32_t a, uint32_t b)
{
    if (specs[a].priority != specs[b].priority)
        return "higher priority";
    if (specs[a].is_literal != specs[b].is_literal)
        return "a string literal wins over a regex";
    return "declared earlier";
}

/* Lark's lexer order: priority, max width, pattern length (all descending), then name. */
static int lark_cmp(const build *B, uint32_t a, uint32_t b)
{
    const gm_terminal_spec *x = &B->specs[a], *y = &B->specs[b];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (B->t[a].max_width != B->t[b].max_width)
        return B->t[a].max_width > B->t[b].max_width ? -1 : 1;
    if (B->t[a].value_len != B->t[b].value_len)
        return B->t[a].value_len > B->t[b].value_len ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void note_beaten(build *B, uint32_t t, uint32_t by)
{
    if (B->won[t])
        return;
    for (int j = 0; j < 3; j++) {
        if (B->beaten_by[t][j] == by)
            return;
        if (B->beaten_by[t][j] == GM_LEX_NONE) {
            B->beaten_by[t][j] = by;
            return;
        }
    }
}

/* gm_ord_resolve_fn of the lexer (note [terminal resolution], note [Lark's lexer]). */
static uint32_t resolve(void *ud, const uint32_t *matched, uint32_t n, const uint32_t *markers,
                        uint32_t nm)
{
    build *B = ud;
    if (!n)
        return GM_LEX_NONE;
    uint32_t best = matched[0];
    if (B->lark) {
        const term *r = &B->t[best];
        if (!B->specs[best].ignored)
            for (uint32_t i = 0; i < r->nunless; i++) {
                uint32_t mk = B->t[r->unless[i]].marker;
                for (uint32_t j = 0; j < nm; j++)
                    if (markers[j] == mk) {
                        B->won[r->unless[i]] = 1;
                        return r->unless[i];
                    }
            }
        B->won[best] = 1;
        return best;
    }
    for (uint32_t i = 1; i < n; i++)
        if (wins(B->specs, matched[i], best))
            best = matched[i];
    B->won[best] = 1;
    for (uint32_t i = 0; i < n; i++)
        if (matched[i] != best)
            note_beaten(B, matched[i], best);
    return best;
}

/* ---- terminals ---- */

/* Characters of a UTF-8 string (a byte that is not UTF-8 counts as one). */
static uint32_t char_count(const char *s, size_t n)
{
    uint32_t c = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = gm_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        i += k ? k : 1;
        c++;
    }
    return c;
}

/*
 * Whether re.match's answer differs from the longest match in the regex's
 * language in ways gramask honours (note [terminal resolution]): lazy
 * quantifiers and lookarounds.
 */
static bool re_match_meaning(const gm_regex *re)
{
    for (size_t i = 0; i < re->nnodes; i++)
        if (re->nodes[i].kind == GM_RX_LOOK || (re->nodes[i].kind == GM_RX_REPEAT && re->nodes[i].lazy))
            return true;
    return false;
}

/* Parses one spec into t->re; errors name the terminal. */
static gm_status parse_spec(const gm_terminal_spec *spec, gm_uclass *uc, const gm_limits *limits,
                            term *t, gm_error *err)
{
    gm_error e;
    gm_error_clear(&e);
    gm_status st = spec->is_literal
                       ? gm_regex_literal(&t->re, uc, spec->pattern, spec->pattern_len, spec->flags, &e)
                       : gm_regex_parse(&t->re, uc, spec->pattern, spec->pattern_len,
                                        spec->flags | GM_RE_LARK_MATCH, limits, &e);
    if (st == GM_OK) {
        t->parsed = true;
        uint32_t min_width;
        gm_regex_width(&t->re, t->re.root, false, &min_width, &t->max_width);
        t->value_len = char_count(spec->pattern, spec->pattern_len);
        if (gm_regex_nullable(&t->re, t->re.root))
            return spec_error(err, GM_ERR_GRAMMAR, spec,
                              "terminal %s matches the empty string (a lexer cannot make progress "
                              "on it)", spec->name);
        return GM_OK;
    }
    if (st == GM_ERR_NOMEM) {
        *err = e;
        return st;
    }
    return pattern_error(err, st, spec, &e);
}

/* ---- lookarounds ---- */

typedef GM_VEC(gm_look) lookvec;

static void free_looks(gm_mem *m, lookvec *v)
{
    for (size_t i = 0; i < v->n; i++)
        gm_dfa_free(&v->v[i].body);
    gm_vec_free(m, v);
}

/* ---- the NFA ---- */

typedef struct nfa_build {
    gm_nfa nfa;
    lookvec looks;
    GM_VEC(uint32_t) owner;  /* terminal of each NFA state */
    GM_VEC(uint32_t) marker_entry;
} nfa_build;

static void nfa_build_free(gm_mem *m, nfa_build *nb)
{
    gm_nfa_free(&nb->nfa);
    free_looks(m, &nb->looks);
    gm_vec_free(m, &nb->owner);
    gm_vec_free(m, &nb->marker_entry);
}

/* Marks states [from, nfa.nstates) as owned by t. */
static int own(gm_mem *m, nfa_build *nb, uint32_t t)
{
    while (nb->owner.n < nb->nfa.nstates)
        if (gm_vec_push(m, &nb->owner, t))
            return -1;
    return 0;
}

/* Adds terminal i (parsed) behind an epsilon edge from start, with its lookarounds. */
static gm_status add_terminal(build *B, nfa_build *nb, uint32_t start, uint32_t i,
                              const gm_limits *lim, gm_error *err)
{
    gm_mem *m = B->mem;
    const gm_regex *re = &B->t[i].re;
    if (own(m, nb, GM_LEX_NONE))
        return gm_mem_fail(m, err, "the lexer");
    uint32_t base = nb->nfa.nlooks;
    uint32_t final = gm_nfa_new_state(&nb->nfa, i), entry;
    if (final == UINT32_MAX)
        return gm_nfa_fail(&nb->nfa, err);
    gm_status st = gm_nfa_add_regex(&nb->nfa, re, final, &entry, err);
    if (st == GM_OK && gm_nfa_add_eps(&nb->nfa, start, entry))
        st = gm_nfa_fail(&nb->nfa, err);
    if (st != GM_OK)
        return st;
    if (own(m, nb, i))
        return gm_mem_fail(m, err, "the lexer");
    /* Lookaround bodies under the ids gm_nfa_add_regex handed out (node order). */
    (void)base;
    for (size_t k = 0; k < re->nnodes && st == GM_OK; k++) {
        if (re->nodes[k].kind != GM_RX_LOOK)
            continue;
        gm_look lk;
        gm_error e;
        gm_error_clear(&e);
        st = gm_look_compile(re, (uint32_t)k, m, lim, &lk, &e);
        lk.term = i;
        if (st == GM_ERR_UNSUPPORTED)
            return pattern_error(err, st, &B->specs[i], &e);
        if (st != GM_OK) {
            *err = e;
            return st;
        }
        if (gm_vec_push(m, &nb->looks, lk)) {
            gm_dfa_free(&lk.body);
            return gm_mem_fail(m, err, "the lexer");
        }
    }
    return GM_OK;
}

/* A marker for string s (note [Lark's lexer]): s, or s and a line break, as `s$` matches. */
static gm_status add_marker(build *B, nfa_build *nb, uint32_t s, uint32_t id, gm_error *err)
{
    gm_mem *m = B->mem;
    if (own(m, nb, GM_LEX_NONE))
        return gm_mem_fail(m, err, "the lexer");
    uint32_t final = gm_nfa_new_state(&nb->nfa, B->n + id);
    uint32_t tail = gm_nfa_new_state(&nb->nfa, GM_NFA_NO_TAG), entry;
    if (final == UINT32_MAX || tail == UINT32_MAX || gm_nfa_add_eps(&nb->nfa, tail, final) ||
        gm_nfa_add_range(&nb->nfa, tail, '\n', '\n', final))
        return gm_nfa_fail(&nb->nfa, err);
    gm_status st = gm_nfa_add_regex(&nb->nfa, &B->t[s].re, tail, &entry, err);
    if (st == GM_OK && (gm_vec_push(m, &nb->marker_entry, entry) || own(m, nb, GM_LEX_NONE)))
        st = gm_mem_fail(m, err, "the lexer");
    return st;
}

/*
 * The NFA of terminals list[0..count) in that order, with the markers when
 * with_markers; its start state is a new state with edges to them in order.
 */
static gm_status make_nfa(build *B, const uint32_t *list, uint32_t count, bool with_markers,
                          const gm_limits *lim, nfa_build *nb, gm_error *err)
{
    memset(nb, 0, sizeof *nb);
    gm_nfa_init(&nb->nfa, B->mem, lim);
    uint32_t start = gm_nfa_new_state(&nb->nfa, GM_NFA_NO_TAG);
    if (start == UINT32_MAX)
        return gm_nfa_fail(&nb->nfa, err);
    gm_status st = GM_OK;
    for (uint32_t k = 0; k < count && st == GM_OK; k++)
        st = add_terminal(B, nb, start, list[k], lim, err);
    for (uint32_t k = 0; with_markers && k < B->nmarkers && st == GM_OK; k++)
        st = add_marker(B, nb, B->marker_term[k], k, err);
    if (st == GM_OK && own(B->mem, nb, GM_LEX_NONE))
        st = gm_mem_fail(B->mem, err, "the lexer");
    if (st == GM_OK)
        st = gm_nfa_finish(&nb->nfa, start, err);
    return st;
}

static void ord_input(build *B, const nfa_build *nb, bool global, const gm_limits *lim,
                      gm_ord_input *in)
{
    memset(in, 0, sizeof *in);
    in->nfa = &nb->nfa;
    in->nterminals = B->n;
    in->owner = nb->owner.v;
    in->global_cut = global;
    in->ordered = B->ordered;
    in->looks = nb->looks.v;
    in->marker_entry = nb->marker_entry.v;
    in->nmarkers = (uint32_t)nb->marker_entry.n;
    in->resolve = resolve;
    in->resolve_ud = B;
    in->max_states = lim->max_dfa_states;
}

/* An error of the ordered determinizer about lookaround l, located in its terminal. */
static gm_status look_error(build *B, const nfa_build *nb, uint32_t l, gm_status st, gm_error *err)
{
    if (l == UINT32_MAX || l >= nb->looks.n)
        return st;
    gm_error e = *err;
    return pattern_error(err, st, &B->specs[nb->looks.v[l].term], &e);
}

/*
 * The lexer's DFA went past gm_limits.max_dfa_states: say which terminal is
 * to blame. A terminal whose DFA alone passes the limit is named, at its
 * definition (exact: it needs the states whatever the others are); when
 * none does, the terminals only pass it together, and the error names the
 * three largest alone. One determinization per terminal, on this failure
 * path only.
 */
static gm_status dfa_limit_error(build *B, const uint32_t *list, uint32_t count,
                                 const gm_limits *lim, gm_error *err)
{
    gm_mem *m = B->mem;
    uint32_t top[3] = {GM_LEX_NONE, GM_LEX_NONE, GM_LEX_NONE}, size[3] = {0, 0, 0};
    for (uint32_t k = 0; k < count; k++) {
        uint32_t t = list[k];
        nfa_build nb;
        gm_error e;
        gm_dfa d;
        memset(&d, 0, sizeof d);
        d.mem = m;
        gm_ord_rows rows = {0, NULL};
        gm_status st = make_nfa(B, &t, 1, false, lim, &nb, &e);
        if (st == GM_OK) {
            gm_ord_input in;
            uint32_t bad;
            ord_input(B, &nb, B->lark, lim, &in);
            st = gm_ord_determinize(&in, m, &d, &rows, &bad, &e);
        }
        uint32_t nstates = st == GM_OK ? d.nstates : 0;
        gm_dfa_free(&d);
        gm_mem_free(m, rows.rows);
        nfa_build_free(m, &nb);
        if (st == GM_ERR_LIMIT)
            return spec_error(err, GM_ERR_LIMIT, &B->specs[t],
                              "terminal %s: its lexer DFA alone needs more than %u states "
                              "(gm_limits.max_dfa_states)",
                              B->specs[t].name, lim->max_dfa_states);
        if (st == GM_ERR_NOMEM) {
            *err = e;
            return st;
        }
        for (int j = 0; j < 3 && st == GM_OK; j++)
            if (top[j] == GM_LEX_NONE || nstates > size[j]) {
                for (int i = 2; i > j; i--) {
                    top[i] = top[i - 1];
                    size[i] = size[i - 1];
                }
                top[j] = t;
                size[j] = nstates;
                break;
            }
    }
    char list_text[GM_ERROR_MESSAGE_MAX / 2] = "";
    size_t used = 0;
    for (int j = 0; j < 3 && top[j] != GM_LEX_NONE; j++) {
        int w = snprintf(list_text + used, sizeof list_text - used, "%s%s (%u)", j ? ", " : "",
                         B->specs[top[j]].name, size[j]);
        if (w < 0 || (size_t)w >= sizeof list_text - used)
            break;
        used += (size_t)w;
    }
    return gm_error_set(err, GM_ERR_LIMIT,
                        "the lexer DFA of all %u terminals together needs more than %u states "
                        "(gm_limits.max_dfa_states); no terminal does alone, the largest: %s",
                        count, lim->max_dfa_states, list_text);
}

/* ---- Lark's string folding ---- */

static int cmp_order_ctx(const build *B, const uint32_t *a, const uint32_t *b)
{
    return lark_cmp(B, *a, *b);
}

/* Insertion sort of ids by Lark's order (stable; lists are short or sorted once). */
static void lark_sort(const build *B, uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = ids[i], j = i;
        while (j > 0 && cmp_order_ctx(B, &ids[j - 1], &x) > 0) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = x;
    }
}

/* Whether re.match(R, s) is all of string terminal s (note [Lark's lexer]). */
static gm_status matches_whole(build *B, const nfa_build *nb, uint32_t s, bool *yes,
                               const gm_limits *lim, gm_error *err)
{
    gm_ord_input in;
    ord_input(B, nb, true, lim, &in);
    const gm_terminal_spec *sp = &B->specs[s];
    long len;
    uint32_t label, bad;
    gm_status st = gm_ord_match(&in, B->mem, (const uint8_t *)sp->pattern, sp->pattern_len, &len,
                                &label, &bad, err);
    if (st != GM_OK)
        return look_error(B, nb, bad, st, err);
    *yes = label != GM_LEX_NONE && (size_t)len == sp->pattern_len;
    return GM_OK;
}

/*
 * Lark's order over every terminal with a pattern, the unless lists of the
 * regexes, the folded strings taken out of the alternation, and markers for
 * the strings of unless lists.
 */
static gm_status lark_fold(build *B, const gm_limits *lim, gm_error *err)
{
    gm_mem *m = B->mem;
    uint32_t n = B->n, norder = 0;
    B->order = gm_mem_calloc(m, n ? n : 1, sizeof *B->order);
    B->marker_term = gm_mem_calloc(m, n ? n : 1, sizeof *B->marker_term);
    if (!B->order || !B->marker_term)
        return gm_mem_fail(m, err, "the lexer");
    for (uint32_t i = 0; i < n; i++) {
        B->t[i].scanned = B->t[i].parsed;
        B->t[i].marker = GM_LEX_NONE;
        if (B->t[i].parsed)
            B->order[norder++] = i;
    }
    lark_sort(B, B->order, norder);
    gm_status st = GM_OK;
    for (uint32_t a = 0; a < norder && st == GM_OK; a++) {
        uint32_t r = B->order[a];
        if (B->specs[r].is_literal)
            continue;
        nfa_build nb;
        st = make_nfa(B, &r, 1, false, lim, &nb, err);
        for (uint32_t b = 0; b < norder && st == GM_OK; b++) {
            uint32_t s = B->order[b];
            if (!B->specs[s].is_literal || B->specs[s].priority != B->specs[r].priority)
                continue;
            bool whole = false;
            st = matches_whole(B, &nb, s, &whole, lim, err);
            if (st != GM_OK || !whole)
                continue;
            term *t = &B->t[r];
            uint32_t *u = gm_mem_reallocarray(m, t->unless, t->nunless + 1, sizeof *u);
            if (!u) {
                st = gm_mem_fail(m, err, "the lexer");
                break;
            }
            t->unless = u;
            u[t->nunless++] = s;
            if (!(B->specs[s].flags & GM_RE_IGNORECASE) || (B->specs[r].flags & GM_RE_IGNORECASE))
                B->t[s].scanned = false;
            if (B->t[s].marker == GM_LEX_NONE) {
                B->t[s].marker = B->nmarkers;
                B->marker_term[B->nmarkers++] = s;
            }
        }
        nfa_build_free(m, &nb);
    }
    /* The alternation: what is left, in order. */
    uint32_t k = 0;
    for (uint32_t a = 0; a < norder; a++)
        if (B->t[B->order[a]].scanned)
            B->order[k++] = B->order[a];
    for (uint32_t a = k; a < n; a++)
        B->order[a] = GM_LEX_NONE;
    return st;
}

/* ---- tables ---- */

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
        bool any = false;
        for (uint32_t c = 0; c <= k; c++) {
            uint32_t t = gm_lexer_accept(lx, q, c);
            if (t != GM_LEX_NONE) {
                lx->prod[(size_t)q * w + (t >> 6)] |= (uint64_t)1 << (t & 63);
                any = true;
            }
            if (!lx->cond || lx->cond[q] == GM_LEX_NONE)
                break; /* the same for every class */
        }
        if (any) {
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

/*
 * Labels of the minimal DFA -> accept and cond. A label >= n is a row of
 * rows (per byte, then the end of input): the byte classes are refined so
 * that every row is the same across each class, and the state gets a cond
 * row over them; its accept is the terminal of the bytes that end the
 * lexeme, which must be one (else the grammar is refused: the masks take
 * one terminal per lexer state for them, spanner/tables.h).
 */
static gm_status make_tables(build *B, gm_dfa *min, const gm_ord_rows *rows, gm_lexer *lx,
                             gm_error *err)
{
    gm_mem *m = B->mem;
    uint32_t n = B->n, ns = min->nstates;
    /* Refined classes: (old class, every row's value) per byte. */
    uint32_t newc[256], nk = 0, oldc[256], repb[256];
    for (int b = 0; b < 256; b++) {
        uint32_t c = 0;
        for (; c < nk; c++) {
            uint32_t a = repb[c];
            bool same = min->byte_class[a] == min->byte_class[b];
            for (uint32_t r = 0; r < rows->n && same; r++)
                same = rows->rows[(size_t)r * GM_ORD_ROW + a] == rows->rows[(size_t)r * GM_ORD_ROW + b];
            if (same)
                break;
        }
        if (c == nk) {
            repb[nk] = (uint32_t)b;
            oldc[nk++] = min->byte_class[b];
        }
        newc[b] = c;
    }
    lx->nclasses = nk;
    for (int b = 0; b < 256; b++)
        lx->byte_class[b] = (uint8_t)newc[b];
    lx->next = gm_mem_reallocarray(m, NULL, (size_t)ns * nk + 1, sizeof *lx->next);
    lx->accept = gm_mem_reallocarray(m, NULL, ns ? ns : 1, sizeof *lx->accept);
    if (!lx->next || !lx->accept)
        return gm_mem_fail(m, err, "the lexer");
    for (uint32_t q = 0; q < ns; q++)
        for (uint32_t c = 0; c < nk; c++)
            lx->next[(size_t)q * nk + c] = min->next[(size_t)q * min->nclasses + oldc[c]];
    uint32_t *rowmap = NULL;
    if (rows->n) {
        lx->cond = gm_mem_reallocarray(m, NULL, ns ? ns : 1, sizeof *lx->cond);
        lx->cond_rows = gm_mem_reallocarray(m, NULL, (size_t)rows->n * (nk + 1), sizeof *lx->cond_rows);
        rowmap = gm_mem_reallocarray(m, NULL, rows->n, sizeof *rowmap);
        if (!lx->cond || !lx->cond_rows || !rowmap) {
            gm_mem_free(m, rowmap);
            return gm_mem_fail(m, err, "the lexer");
        }
        for (uint32_t r = 0; r < rows->n; r++)
            rowmap[r] = GM_LEX_NONE;
    }
    gm_status st = GM_OK;
    for (uint32_t q = 0; q < ns && st == GM_OK; q++) {
        uint32_t l = min->label[q];
        if (lx->cond)
            lx->cond[q] = GM_LEX_NONE;
        if (l == GM_LEX_NONE || l < n) {
            lx->accept[q] = l;
            continue;
        }
        uint32_t r = l - n;
        const uint32_t *row = rows->rows + (size_t)r * GM_ORD_ROW;
        if (rowmap[r] == GM_LEX_NONE) {
            rowmap[r] = lx->ncond++;
            uint32_t *out = lx->cond_rows + (size_t)rowmap[r] * (nk + 1);
            for (int b = 0; b < 256; b++)
                out[newc[b]] = row[b];
            out[nk] = row[256];
        }
        lx->cond[q] = rowmap[r];
        /* The terminal of the bytes (and the end of input) that end the lexeme. */
        uint32_t stop = row[256];
        for (int b = 0; b < 256 && st == GM_OK; b++) {
            if (lx->next[(size_t)q * nk + newc[b]] != GM_LEX_DEAD || row[b] == GM_LEX_NONE)
                continue;
            if (stop == GM_LEX_NONE)
                stop = row[b];
            else if (stop != row[b])
                st = spec_error(err, GM_ERR_UNSUPPORTED, &B->specs[row[b]],
                                "terminal %s: unsupported construct: a lookahead past the end of a "
                                "lexeme decides between terminals %s and %s (gramask's masks take "
                                "one terminal for the lexemes a state can end)",
                                B->specs[row[b]].name, B->specs[stop].name, B->specs[row[b]].name);
        }
        lx->accept[q] = stop;
    }
    gm_mem_free(m, rowmap);
    return st;
}

static void warn_unproduced(const build *B, gm_warning_fn warn, void *ud)
{
    if (!warn)
        return;
    const gm_terminal_spec *specs = B->specs;
    for (uint32_t t = 0; t < B->n; t++) {
        if (!specs[t].pattern || B->won[t])
            continue;
        gm_error w;
        gm_error_clear(&w);
        const uint32_t *by = B->beaten_by[t];
        if (B->lark) {
            spec_error(&w, GM_ERR_GRAMMAR, &specs[t],
                       "warning: terminal %s can never be produced: in Lark's lexer order "
                       "(priority, longest possible match, longest pattern, name) the terminals "
                       "before it match every string it matches, or its pattern matches none",
                       specs[t].name);
        } else if (by[0] == GM_LEX_NONE) {
            spec_error(&w, GM_ERR_GRAMMAR, &specs[t],
                       "warning: terminal %s can never be produced: its pattern matches no string",
                       specs[t].name);
        } else {
            char list[512];
            size_t used = 0;
            for (int j = 0; j < 3 && by[j] != GM_LEX_NONE; j++) {
                int k = snprintf(list + used, sizeof list - used, "%s%s (%s)", j ? ", " : "",
                                 specs[by[j]].name, why_wins(specs, by[j], t));
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

gm_status gm_lexer_build_grammar(gm_mem *m, gm_terminal_spec *specs, uint32_t n, bool lark,
                                 const gm_limits *limits, gm_warning_fn warn, void *warn_ud,
                                 gm_lexer **out, gm_error *err)
{
    for (uint32_t i = 0; specs && i < n; i++)
        specs[i].lark = lark;
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
    gm_mem_free(m, lx->next16);
    gm_mem_free(m, lx->row16);
    gm_mem_free(m, lx->patch_at);
    gm_mem_free(m, lx->patch);
    gm_mem_free(m, lx->accept);
    gm_mem_free(m, lx->cond);
    gm_mem_free(m, lx->cond_rows);
    gm_mem_free(m, lx->prod);
    gm_mem_free(m, lx->bt_main);
    gm_mem_free(m, lx->bt_fallback);
    gm_mem_free(m, lx->bt_relex);
    gm_mem_free(m, lx);
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
    if (n >= GM_LEX_NONE / 2)
        return gm_error_set(err, GM_ERR_LIMIT, "too many terminals (%u)", n);
    for (uint32_t i = 1; i < n; i++)
        if (specs[i].lark != specs[0].lark)
            return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lexer_build: `lark` set on some terminals only");
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
    build B;
    memset(&B, 0, sizeof B);
    B.mem = m;
    B.specs = specs;
    B.n = n;
    B.lark = n && specs[0].lark;
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    nfa_build nb;
    memset(&nb, 0, sizeof nb);
    gm_nfa_init(&nb.nfa, m, &lim);
    gm_dfa dfa, min;
    memset(&dfa, 0, sizeof dfa);
    memset(&min, 0, sizeof min);
    dfa.mem = min.mem = m;
    gm_ord_rows rows = {0, NULL};
    gm_lexer *lx = NULL;
    uint32_t *list = NULL;
    B.t = gm_mem_calloc(m, n ? n : 1, sizeof *B.t);
    B.won = gm_mem_calloc(m, n ? n : 1, 1);
    B.ordered = gm_mem_calloc(m, n ? n : 1, 1);
    B.beaten_by = gm_mem_reallocarray(m, NULL, n ? n : 1, sizeof *B.beaten_by);
    if (!B.t || !B.won || !B.ordered || !B.beaten_by)
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        gm_regex_init(&B.t[i].re, m);
        B.beaten_by[i][0] = B.beaten_by[i][1] = B.beaten_by[i][2] = GM_LEX_NONE;
    }
    for (uint32_t i = 0; i < n && st == GM_OK; i++)
        if (specs[i].pattern) {
            st = parse_spec(&specs[i], &uc, &lim, &B.t[i], err);
            B.ordered[i] = st == GM_OK && re_match_meaning(&B.t[i].re);
        }
    if (st == GM_OK && B.lark)
        st = lark_fold(&B, &lim, err);
    if (st != GM_OK)
        goto done;
    memset(B.won, 0, n ? n : 1); /* the folding's matches were no lexemes */
    /* The alternation: Lark's order, or every terminal (the order does not matter). */
    list = gm_mem_calloc(m, n ? n : 1, sizeof *list);
    if (!list)
        goto nomem;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t t = B.lark ? B.order[i] : i;
        if (t != GM_LEX_NONE && B.t[t].parsed)
            list[count++] = t;
    }
    gm_nfa_free(&nb.nfa);
    st = make_nfa(&B, list, count, B.lark, &lim, &nb, err);
    if (st != GM_OK)
        goto done;
    gm_ord_input in;
    ord_input(&B, &nb, B.lark, &lim, &in);
    uint32_t bad;
    st = gm_ord_determinize(&in, m, &dfa, &rows, &bad, err);
    if (st == GM_ERR_LIMIT) {
        st = dfa_limit_error(&B, list, count, &lim, err);
        goto done;
    }
    if (st != GM_OK) {
        st = look_error(&B, &nb, bad, st, err);
        goto done;
    }
    nfa_build_free(m, &nb);
    memset(&nb, 0, sizeof nb);
    gm_nfa_init(&nb.nfa, m, &lim);
    st = gm_dfa_minimize(&dfa, true, &min, err);
    gm_dfa_free(&dfa);
    if (st != GM_OK)
        goto done;

    lx = gm_mem_calloc(m, 1, sizeof *lx);
    if (!lx)
        goto nomem;
    lx->mem = m;
    lx->nstates = lx->ndfa = min.nstates;
    lx->nterminals = n;
    st = make_tables(&B, &min, &rows, lx, err);
    if (st != GM_OK)
        goto done;
    lx->prod_words = (n + 63) / 64 ? (n + 63) / 64 : 1;
    lx->prod = gm_mem_calloc(m, (size_t)lx->nstates * lx->prod_words, sizeof *lx->prod);
    lx->terminals = gm_mem_calloc(m, n ? n : 1, sizeof *lx->terminals);
    if (!lx->prod || !lx->terminals)
        goto nomem;
    lx->line_end = GM_LEX_NONE;
    for (uint32_t i = 0; i < n; i++) {
        if (specs[i].line_end)
            lx->line_end = i;
        lx->terminals[i].name = gm_mem_strndup(m, specs[i].name, strlen(specs[i].name));
        if (!lx->terminals[i].name)
            goto nomem;
        lx->terminals[i].ignored = specs[i].ignored;
        lx->terminals[i].declared_only = specs[i].pattern == NULL;
    }
    st = compute_prod(lx, err);
    if (st != GM_OK)
        goto done;
    st = gm_lexer_compact(lx, err);
    if (st != GM_OK)
        goto done;
    warn_unproduced(&B, warn, warn_ud);
    *out = lx;
    lx = NULL;
    goto done;
nomem:
    st = gm_mem_fail(m, err, "the lexer");
done:
    gm_lexer_destroy(lx);
    gm_uclass_free(&uc);
    nfa_build_free(m, &nb);
    gm_dfa_free(&dfa);
    gm_dfa_free(&min);
    gm_mem_free(m, rows.rows);
    if (B.t)
        for (uint32_t i = 0; i < n; i++) {
            gm_regex_free(&B.t[i].re);
            gm_mem_free(m, B.t[i].unless);
        }
    gm_mem_free(m, B.t);
    gm_mem_free(m, B.order);
    gm_mem_free(m, B.marker_term);
    gm_mem_free(m, B.won);
    gm_mem_free(m, B.ordered);
    gm_mem_free(m, B.beaten_by);
    gm_mem_free(m, list);
    return st;
}
