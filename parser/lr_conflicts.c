/*
 * LALR(1) conflicts: what to do with a (state, lookahead) cell that has more
 * than one action, and how to tell the user about it.
 *
 * GM_CONFLICTS_ERROR: every such cell is a conflict; the build fails with a
 * Bison-like report (state, items, lookahead, the actions) and an example
 * input reaching the state.
 * GM_CONFLICTS_LARK: what lark/parsers/lalr_analysis.py does. Reduce/reduce
 * goes to the rule of strictly highest priority (rules without a priority
 * count as 0); a tie is an error ("Reduce/Reduce collision" in Lark). Then
 * shift wins over the remaining reduction. Each resolution is a warning.
 * GM_CONFLICTS_BISON: Bison's defaults (no precedence declarations): the
 * earliest production wins reduce/reduce, shift wins shift/reduce.
 *
 * ACCEPT is the shift of $end here, as in Bison and Lark, whose augmented
 * rules are `$accept: start $end`.
 */
#include <stdio.h>
#include <string.h>

#include "parser/lalr_internal.h"

#define INF UINT32_MAX
#define EXAMPLE_MAX_SYMBOLS 60

void gm_lalr_conflicts_init(gm_lalr_conflicts *c, const gm_lalr_grammar *G, const gm_lr0 *A,
                            const gm_lalr_options *opts)
{
    memset(c, 0, sizeof *c);
    c->G = G;
    c->A = A;
    c->opts = opts;
    gm_strbuf_init(&c->text, G->mem);
}

void gm_lalr_conflicts_free(gm_lalr_conflicts *c)
{
    gm_mem *m = c->G->mem;
    gm_vec_free(m, &c->resolved);
    gm_vec_free(m, &c->cells);
    gm_strbuf_free(&c->text);
    gm_mem_free(m, c->dist);
    gm_mem_free(m, c->pred_state);
    gm_mem_free(m, c->pred_sym);
    gm_mem_free(m, c->minlen);
    gm_mem_free(m, c->minprod);
}

/* ---- names ------------------------------------------------------------ */

void gm_lalr_put_symbol(gm_strbuf *b, const gm_cfg *g, uint32_t sym)
{
    if (sym < gm_cfg_nsymbols(g) && g->names && g->names[sym])
        gm_strbuf_puts(b, g->names[sym]);
    else
        gm_strbuf_printf(b, "#%u", sym);
}

void gm_lalr_put_term(gm_strbuf *b, const gm_cfg *g, uint32_t term)
{
    if (term == g->nterminals)
        gm_strbuf_puts(b, "$end");
    else
        gm_lalr_put_symbol(b, g, term);
}

static void put_lhs(gm_strbuf *b, const gm_cfg *g, uint32_t prod)
{
    if (prod == g->nprods)
        gm_strbuf_puts(b, "$accept");
    else
        gm_lalr_put_symbol(b, g, g->prods[prod].lhs);
    gm_strbuf_putc(b, ':');
}

static const gm_sym *rhs_of(const gm_cfg *g, uint32_t prod, uint32_t *len)
{
    if (prod == g->nprods) {
        *len = 1;
        return &g->start;
    }
    *len = g->prods[prod].len;
    return g->rhs + g->prods[prod].rhs;
}

void gm_lalr_put_item(gm_strbuf *b, const gm_cfg *g, uint32_t prod, uint32_t dot)
{
    put_lhs(b, g, prod);
    uint32_t len;
    const gm_sym *rhs = rhs_of(g, prod, &len);
    for (uint32_t i = 0; i <= len; i++) {
        if (i == dot)
            gm_strbuf_puts(b, " .");
        if (i < len) {
            gm_strbuf_putc(b, ' ');
            gm_lalr_put_symbol(b, g, rhs[i]);
        }
    }
}

void gm_lalr_put_rule(gm_strbuf *b, const gm_cfg *g, uint32_t prod)
{
    put_lhs(b, g, prod);
    uint32_t len;
    const gm_sym *rhs = rhs_of(g, prod, &len);
    if (len == 0)
        gm_strbuf_puts(b, " <empty>");
    for (uint32_t i = 0; i < len; i++) {
        gm_strbuf_putc(b, ' ');
        gm_lalr_put_symbol(b, g, rhs[i]);
    }
}

/* ---- example inputs ----------------------------------------------------- */

/* note [conflict examples]
 * The example for a state is the shortest terminal string that drives the
 * LR(0) automaton from state 0 to it: Dijkstra over the transitions, a
 * terminal weighing 1 and a nonterminal the length of its shortest
 * terminal string, which is then spelled out with the production that
 * achieves it. Shortest strings are a fixpoint where a nonterminal changes
 * its production only on a strict improvement, so at the fixpoint every
 * chosen production's symbols were settled before it: the expansion is
 * well-founded. Nonterminals deriving no terminal string weigh INF. */
static int compute_minlen(gm_lalr_conflicts *c)
{
    const gm_lalr_grammar *G = c->G;
    gm_mem *m = G->mem;
    c->minlen = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *c->minlen);
    c->minprod = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *c->minprod);
    if (!c->minlen || !c->minprod)
        return -1;
    for (uint32_t a = 0; a < G->nn; a++)
        c->minlen[a] = c->minprod[a] = INF;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < G->nprods; p++) {
            uint64_t sum = 0;
            for (uint32_t i = 0; i < G->plen[p] && sum < INF; i++) {
                gm_sym s = G->prhs[p][i];
                sum += s < G->nt ? 1 : c->minlen[s - G->nt];
            }
            uint32_t a = G->cfg->prods[p].lhs - G->nt;
            if (sum < c->minlen[a]) {
                c->minlen[a] = (uint32_t)sum;
                c->minprod[a] = p;
                changed = true;
            }
        }
    }
    return 0;
}

static int compute_paths(gm_lalr_conflicts *c)
{
    const gm_lalr_grammar *G = c->G;
    const gm_lr0 *A = c->A;
    gm_mem *m = G->mem;
    uint32_t ns = A->nstates;
    if (compute_minlen(c))
        return -1;
    c->dist = gm_mem_calloc(m, ns, sizeof *c->dist);
    c->pred_state = gm_mem_calloc(m, ns, sizeof *c->pred_state);
    c->pred_sym = gm_mem_calloc(m, ns, sizeof *c->pred_sym);
    uint64_t *heap = gm_mem_calloc(m, (size_t)A->trans_off[ns] + 2, sizeof *heap);
    if (!c->dist || !c->pred_state || !c->pred_sym || !heap) {
        gm_mem_free(m, heap);
        return -1;
    }
    for (uint32_t s = 0; s < ns; s++)
        c->dist[s] = c->pred_state[s] = c->pred_sym[s] = INF;
    /* Binary heap of (distance << 32 | state); lazy deletion. */
    size_t hn = 0;
    c->dist[0] = 0;
    heap[hn++] = 0;
    while (hn) {
        uint64_t top = heap[0];
        heap[0] = heap[--hn];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, s = i;
            if (l < hn && heap[l] < heap[s])
                s = l;
            if (r < hn && heap[r] < heap[s])
                s = r;
            if (s == i)
                break;
            uint64_t t = heap[i];
            heap[i] = heap[s];
            heap[s] = t;
            i = s;
        }
        uint32_t d = (uint32_t)(top >> 32), u = (uint32_t)top;
        if (d != c->dist[u])
            continue;
        for (uint32_t k = A->trans_off[u]; k < A->trans_off[u + 1]; k++) {
            gm_sym x = A->trans_sym[k];
            uint32_t w = x < G->nt ? 1 : c->minlen[x - G->nt];
            if (w == INF || (uint64_t)d + w >= INF)
                continue;
            uint32_t v = A->trans_to[k];
            if (d + w < c->dist[v]) {
                c->dist[v] = d + w;
                c->pred_state[v] = u;
                c->pred_sym[v] = x;
                size_t i = hn++;
                heap[i] = (uint64_t)(d + w) << 32 | v;
                while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
                    uint64_t t = heap[i];
                    heap[i] = heap[(i - 1) / 2];
                    heap[(i - 1) / 2] = t;
                    i = (i - 1) / 2;
                }
            }
        }
    }
    gm_mem_free(m, heap);
    return 0;
}

/* Appends the terminals of symbol x's shortest expansion; *left counts down the symbols shown. */
static void put_expansion(gm_lalr_conflicts *c, gm_strbuf *b, gm_sym x, uint32_t *left)
{
    const gm_lalr_grammar *G = c->G;
    /* Explicit stack of (production, next position); depth is bounded by the
       well-founded choice, at most the number of nonterminals. */
    uint32_t stack_p[64], stack_i[64];
    uint32_t sp = 0;
    if (x < G->nt) {
        if (*left) {
            gm_strbuf_putc(b, ' ');
            gm_lalr_put_symbol(b, G->cfg, x);
            (*left)--;
        }
        return;
    }
    stack_p[sp] = c->minprod[x - G->nt];
    stack_i[sp++] = 0;
    while (sp && *left) {
        uint32_t p = stack_p[sp - 1];
        if (stack_i[sp - 1] >= G->plen[p]) {
            sp--;
            continue;
        }
        gm_sym y = G->prhs[p][stack_i[sp - 1]++];
        if (y < G->nt) {
            gm_strbuf_putc(b, ' ');
            gm_lalr_put_symbol(b, G->cfg, y);
            (*left)--;
        } else if (sp < 64) {
            stack_p[sp] = c->minprod[y - G->nt];
            stack_i[sp++] = 0;
        } else {
            gm_strbuf_puts(b, " ");
            gm_lalr_put_symbol(b, G->cfg, y);
            (*left)--;
        }
    }
}

static void put_example(gm_lalr_conflicts *c, gm_strbuf *b, uint32_t state, uint32_t term)
{
    if (!c->dist && !c->failed && compute_paths(c))
        c->failed = true;
    if (c->failed || c->dist[state] == INF)
        return;
    /* The path, reversed into a small buffer (longer paths are elided at the front). */
    uint32_t path[EXAMPLE_MAX_SYMBOLS];
    uint32_t n = 0;
    bool cut = false;
    for (uint32_t s = state; s != 0; s = c->pred_state[s]) {
        if (n == EXAMPLE_MAX_SYMBOLS) {
            cut = true;
            break;
        }
        path[n++] = c->pred_sym[s];
    }
    gm_strbuf_puts(b, "  example:");
    if (cut)
        gm_strbuf_puts(b, " ...");
    uint32_t left = EXAMPLE_MAX_SYMBOLS;
    for (uint32_t i = n; i-- > 0 && left;)
        put_expansion(c, b, path[i], &left);
    if (!left)
        gm_strbuf_puts(b, " ...");
    if (left == EXAMPLE_MAX_SYMBOLS && !cut)
        gm_strbuf_puts(b, " (empty input)");
    gm_strbuf_puts(b, " . ");
    gm_lalr_put_term(b, c->G->cfg, term);
    gm_strbuf_putc(b, '\n');
}

/* ---- cell reports -------------------------------------------------------- */

static void put_action(gm_strbuf *b, const gm_cfg *g, gm_lr_action a)
{
    switch (GM_LR_KIND(a)) {
    case GM_LR_SHIFT:
        gm_strbuf_printf(b, "shift, and go to state %u", GM_LR_ARG(a));
        break;
    case GM_LR_ACCEPT:
        gm_strbuf_puts(b, "accept");
        break;
    case GM_LR_REDUCE: {
        uint32_t p = GM_LR_ARG(a);
        gm_strbuf_printf(b, "reduce using rule %u (", p);
        gm_lalr_put_rule(b, g, p);
        gm_strbuf_putc(b, ')');
        if (g->prods[p].loc.line)
            gm_strbuf_printf(b, " at %s:%u:%u",
                             g->prods[p].loc.file ? g->prods[p].loc.file : (g->file ? g->file : "<grammar>"),
                             g->prods[p].loc.line, g->prods[p].loc.column);
        break;
    }
    default:
        gm_strbuf_puts(b, "error");
    }
}

/* The state's kernel items, plus the empty productions reduced in the cell. */
static void put_items(gm_lalr_conflicts *c, gm_strbuf *b, const gm_lalr_cell *cell)
{
    const gm_lalr_grammar *G = c->G;
    uint32_t nk;
    const uint32_t *k = gm_lr0_kernel(c->A, cell->state, &nk);
    gm_strbuf_puts(b, "  items:\n");
    for (uint32_t i = 0; i < nk; i++) {
        gm_strbuf_puts(b, "    ");
        gm_lalr_put_item(b, G->cfg, G->item_prod[k[i]], gm_lalr_item_dot(G, k[i]));
        gm_strbuf_putc(b, '\n');
    }
    for (uint32_t r = 0; r < cell->nred; r++)
        if (G->plen[cell->reds[r]] == 0) {
            gm_strbuf_puts(b, "    ");
            gm_lalr_put_item(b, G->cfg, cell->reds[r], 0);
            gm_strbuf_putc(b, '\n');
        }
}

static const char *kind_name(bool shift, uint32_t nred)
{
    if (shift && nred > 1)
        return "shift/reduce and reduce/reduce conflict";
    return shift ? "shift/reduce conflict" : "reduce/reduce conflict";
}

/* Writes one cell: header, items, all its actions (kept first when resolved), example. */
static void put_cell(gm_lalr_conflicts *c, gm_strbuf *b, const gm_lalr_cell *cell, gm_lr_action kept,
                     const char *how)
{
    const gm_cfg *g = c->G->cfg;
    gm_strbuf_printf(b, "state %u: %s on ", cell->state, kind_name(cell->shift != GM_LR_ERROR, cell->nred));
    gm_lalr_put_term(b, g, cell->term);
    if (how)
        gm_strbuf_printf(b, ", %s", how);
    gm_strbuf_putc(b, '\n');
    put_items(c, b, cell);
    gm_strbuf_printf(b, "  actions on ");
    gm_lalr_put_term(b, g, cell->term);
    gm_strbuf_puts(b, ":\n");
    if (kept != GM_LR_ERROR) {
        gm_strbuf_puts(b, "    kept: ");
        put_action(b, g, kept);
        gm_strbuf_putc(b, '\n');
    }
    if (cell->shift != GM_LR_ERROR && cell->shift != kept) {
        gm_strbuf_puts(b, kept != GM_LR_ERROR ? "    dropped: " : "    ");
        put_action(b, g, cell->shift);
        gm_strbuf_putc(b, '\n');
    }
    for (uint32_t r = 0; r < cell->nred; r++) {
        gm_lr_action a = GM_LR_REDUCE | cell->reds[r] << 2;
        if (a == kept)
            continue;
        gm_strbuf_puts(b, kept != GM_LR_ERROR ? "    dropped: " : "    ");
        put_action(b, g, a);
        gm_strbuf_putc(b, '\n');
    }
    put_example(c, b, cell->state, cell->term);
}

static void warn_cell(gm_lalr_conflicts *c, const gm_lalr_cell *cell, gm_lr_action kept, const char *how)
{
    if (!c->opts || !c->opts->warn)
        return;
    const gm_cfg *g = c->G->cfg;
    gm_strbuf b;
    gm_strbuf_init(&b, c->G->mem);
    put_cell(c, &b, cell, kept, how);
    if (b.failed) {
        c->failed = true;
        gm_strbuf_free(&b);
        return;
    }
    /* Locate the warning at the kept reduction, else at the first one. */
    uint32_t p = GM_LR_KIND(kept) == GM_LR_REDUCE ? GM_LR_ARG(kept) : cell->reds[0];
    gm_srcloc loc = g->prods[p].loc;
    if (!loc.file)
        loc.file = g->file;
    gm_error w;
    gm_error_set_at(&w, GM_ERR_GRAMMAR, loc, NULL, 0, "warning: LALR(1) conflict resolved: %s", gm_strbuf_str(&b));
    gm_strbuf_free(&b);
    c->opts->warn(c->opts->warn_ud, &w);
}

static void record(gm_lalr_conflicts *c, const gm_lalr_cell *cell, gm_lr_action kept, gm_lr_action dropped)
{
    gm_lr_conflict rec = {cell->state, cell->term, kept, dropped};
    if (gm_vec_push(c->G->mem, &c->resolved, rec))
        c->failed = true;
}

static void unresolved(gm_lalr_conflicts *c, const gm_lalr_cell *cell, uint32_t sr, uint32_t rr)
{
    c->nerrors_sr += sr;
    c->nerrors_rr += rr;
    if (gm_vec_push(c->G->mem, &c->cells, c->text.n))
        c->failed = true;
    put_cell(c, &c->text, cell, GM_LR_ERROR, NULL);
}

gm_lr_action gm_lalr_conflict_cell(gm_lalr_conflicts *c, const gm_lalr_cell *cell)
{
    const gm_cfg *g = c->G->cfg;
    bool shift = cell->shift != GM_LR_ERROR;
    gm_conflict_mode mode = c->opts ? c->opts->conflicts : GM_CONFLICTS_ERROR;
    if (mode == GM_CONFLICTS_ERROR) {
        unresolved(c, cell, shift ? 1 : 0, cell->nred ? cell->nred - 1 : 0);
        return GM_LR_ERROR;
    }
    uint32_t win = cell->reds[0];
    if (cell->nred > 1 && mode == GM_CONFLICTS_LARK) {
        int32_t best = g->prods[win].priority;
        uint32_t nbest = 1;
        for (uint32_t r = 1; r < cell->nred; r++) {
            int32_t pr = g->prods[cell->reds[r]].priority;
            if (pr > best) {
                best = pr;
                win = cell->reds[r];
                nbest = 1;
            } else if (pr == best) {
                nbest++;
            }
        }
        if (nbest > 1) {
            unresolved(c, cell, 0, cell->nred - 1);
            return GM_LR_ERROR;
        }
    }
    gm_lr_action red = GM_LR_REDUCE | win << 2;
    for (uint32_t r = 0; r < cell->nred; r++)
        if (cell->reds[r] != win)
            record(c, cell, red, GM_LR_REDUCE | cell->reds[r] << 2);
    gm_lr_action kept = red;
    if (shift) {
        record(c, cell, cell->shift, red);
        kept = cell->shift;
    }
    const char *how;
    if (mode == GM_CONFLICTS_LARK)
        how = shift ? "resolved as shift (Lark)" : "resolved by rule priority (Lark)";
    else
        how = shift ? "resolved as shift (Bison default)" : "resolved by rule order (Bison default)";
    warn_cell(c, cell, kept, how);
    return kept;
}

gm_status gm_lalr_conflicts_error(gm_lalr_conflicts *c, gm_error *err)
{
    const gm_cfg *g = c->G->cfg;
    gm_mem *m = c->G->mem;
    if (c->failed || c->text.failed)
        return gm_mem_fail(m, err, "the LALR(1) conflict report");
    uint32_t total = c->nerrors_sr + c->nerrors_rr;
    size_t ncells = c->cells.n;
    char head[256];
    snprintf(head, sizeof head, "%s: the grammar is not LALR(1): %u conflict%s (%u shift/reduce, %u reduce/reduce)%s\n",
             g->file ? g->file : "<grammar>", total, total == 1 ? "" : "s", c->nerrors_sr, c->nerrors_rr,
             c->opts && c->opts->conflicts == GM_CONFLICTS_LARK ? " that Lark does not resolve" : "");
    if (c->opts && c->opts->conflict_report) {
        gm_strbuf_puts(c->opts->conflict_report, head);
        gm_strbuf_append(c->opts->conflict_report, c->text.s ? c->text.s : "", c->text.n);
    }
    if (!err)
        return GM_ERR_GRAMMAR;
    gm_error_clear(err);
    err->code = GM_ERR_GRAMMAR;
    if (g->file)
        snprintf(err->file, sizeof err->file, "%s", g->file);
    size_t cap = sizeof err->message;
    size_t used = (size_t)snprintf(err->message, cap, "%s", head);
    if (used >= cap)
        used = cap - 1;
    /* Whole cells only, leaving room for the trailer. */
    const size_t trailer_room = 96;
    size_t shown = 0;
    for (; shown < ncells; shown++) {
        size_t a = c->cells.v[shown], b = shown + 1 < ncells ? c->cells.v[shown + 1] : c->text.n;
        if (used + (b - a) + trailer_room >= cap)
            break;
        memcpy(err->message + used, c->text.s + a, b - a);
        used += b - a;
        err->message[used] = '\0';
    }
    if (shown < ncells)
        snprintf(err->message + used, cap - used, "(%zu more conflicting cell%s not shown; `gramask grammar FILE` lists all)\n",
                 ncells - shown, ncells - shown == 1 ? "" : "s");
    /* No trailing newline in a gm_error message. */
    size_t len = strlen(err->message);
    while (len && err->message[len - 1] == '\n')
        err->message[--len] = '\0';
    return GM_ERR_GRAMMAR;
}
