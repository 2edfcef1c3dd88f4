/*
 * The stable text report of LALR(1) tables (`gramask grammar G --report`,
 * golden tests): symbols, rules, then every state with its kernel items,
 * actions and gotos, laid out like Bison's .output file so that the two
 * read side by side. Deterministic: everything is listed by number.
 */
#include <string.h>

#include "parser/lalr_internal.h"

static void put_state_actions(gm_strbuf *b, const gm_cfg *g, const gm_lr_table *t, uint32_t s)
{
    bool any = false;
    for (uint32_t term = 0; term < t->nterms; term++) {
        gm_lr_action a = gm_lr_action_of(t, s, term);
        if (a == GM_LR_ERROR)
            continue;
        gm_strbuf_puts(b, any ? "    " : "\n    ");
        any = true;
        gm_lalr_put_term(b, g, term);
        switch (GM_LR_KIND(a)) {
        case GM_LR_SHIFT:
            gm_strbuf_printf(b, "  shift, and go to state %u\n", GM_LR_ARG(a));
            break;
        case GM_LR_ACCEPT:
            gm_strbuf_puts(b, "  accept\n");
            break;
        default:
            gm_strbuf_printf(b, "  reduce using rule %u (", GM_LR_ARG(a));
            gm_lalr_put_symbol(b, g, g->prods[GM_LR_ARG(a)].lhs);
            gm_strbuf_puts(b, ")\n");
        }
    }
    /* Resolved conflicts: the dropped actions, bracketed as Bison does. */
    for (uint32_t i = 0; i < t->nconflicts; i++) {
        const gm_lr_conflict *c = &t->conflicts[i];
        if (c->state != s)
            continue;
        gm_strbuf_puts(b, "    ");
        gm_lalr_put_term(b, g, c->term);
        gm_lr_action a = c->dropped;
        if (GM_LR_KIND(a) == GM_LR_REDUCE) {
            gm_strbuf_printf(b, "  [reduce using rule %u (", GM_LR_ARG(a));
            gm_lalr_put_symbol(b, g, g->prods[GM_LR_ARG(a)].lhs);
            gm_strbuf_puts(b, ")]\n");
        } else if (GM_LR_KIND(a) == GM_LR_SHIFT) {
            gm_strbuf_printf(b, "  [shift, and go to state %u]\n", GM_LR_ARG(a));
        } else {
            gm_strbuf_puts(b, "  [accept]\n");
        }
    }
    any = false;
    for (uint32_t a = 0; a < t->nnonterms; a++) {
        uint32_t to = gm_lr_goto_of(t, s, a);
        if (to == UINT32_MAX)
            continue;
        gm_strbuf_puts(b, any ? "    " : "\n    ");
        any = true;
        gm_lalr_put_symbol(b, g, g->nterminals + a);
        gm_strbuf_printf(b, "  go to state %u\n", to);
    }
}

gm_status gm_lr_report(const gm_cfg *g, const gm_lr_table *t, gm_strbuf *out, gm_error *err)
{
    if (!g || !t || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lr_report: NULL argument");
    if (t->nterms != g->nterminals + 1 || t->nnonterms != g->nnonterminals || t->nprods != g->nprods)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lr_report: the tables were not built from this grammar");
    gm_strbuf *b = out;
    uint32_t nsr = 0, nrr = 0;
    for (uint32_t i = 0; i < t->nconflicts; i++) {
        gm_lr_action k = t->conflicts[i].kept, d = t->conflicts[i].dropped;
        if (GM_LR_KIND(k) == GM_LR_REDUCE && GM_LR_KIND(d) == GM_LR_REDUCE)
            nrr++;
        else
            nsr++;
    }
    gm_strbuf_printf(b, "LALR(1) tables of %s\n", g->file ? g->file : "<grammar>");
    gm_strbuf_printf(b, "terminals: %u (with $end), nonterminals: %u, rules: %u, states: %u\n", t->nterms,
                     t->nnonterms, t->nprods, t->nstates);
    gm_strbuf_printf(b, "conflicts resolved: %u shift/reduce, %u reduce/reduce\n", nsr, nrr);

    gm_strbuf_puts(b, "\nTerminals\n\n");
    for (uint32_t term = 0; term < t->nterms; term++) {
        gm_strbuf_printf(b, "    %u ", term);
        gm_lalr_put_term(b, g, term);
        if (term < g->nterminals && g->terminals && g->terminals[term].ignored)
            gm_strbuf_puts(b, " (ignored)");
        else if (term < g->nterminals && g->terminals && !g->terminals[term].pattern)
            gm_strbuf_puts(b, " (declared)");
        gm_strbuf_putc(b, '\n');
    }
    gm_strbuf_puts(b, "\nNonterminals\n\n");
    for (uint32_t a = 0; a < t->nnonterms; a++) {
        gm_strbuf_printf(b, "    %u ", a);
        gm_lalr_put_symbol(b, g, g->nterminals + a);
        gm_strbuf_putc(b, '\n');
    }
    gm_strbuf_puts(b, "\nGrammar\n\n    $accept: ");
    gm_lalr_put_symbol(b, g, g->start);
    gm_strbuf_puts(b, " $end\n");
    for (uint32_t p = 0; p < g->nprods; p++) {
        gm_strbuf_printf(b, "    %u ", p);
        gm_lalr_put_rule(b, g, p);
        gm_strbuf_putc(b, '\n');
    }
    if (t->nconflicts) {
        gm_strbuf_puts(b, "\nConflicts\n\n");
        for (uint32_t i = 0; i < t->nconflicts; i++) {
            const gm_lr_conflict *c = &t->conflicts[i];
            bool rr = GM_LR_KIND(c->kept) == GM_LR_REDUCE && GM_LR_KIND(c->dropped) == GM_LR_REDUCE;
            gm_strbuf_printf(b, "    state %u on ", c->state);
            gm_lalr_put_term(b, g, c->term);
            gm_strbuf_printf(b, ": %s, kept %s %u over reduce %u\n", rr ? "reduce/reduce" : "shift/reduce",
                             GM_LR_KIND(c->kept) == GM_LR_REDUCE ? "reduce"
                             : GM_LR_KIND(c->kept) == GM_LR_ACCEPT ? "accept"
                                                                   : "shift",
                             GM_LR_ARG(c->kept), GM_LR_ARG(c->dropped));
        }
    }
    for (uint32_t s = 0; s < t->nstates; s++) {
        gm_strbuf_printf(b, "\n\nState %u\n\n", s);
        for (uint32_t k = t->kernel_off[s]; k < t->kernel_off[s + 1]; k++) {
            gm_strbuf_puts(b, "    ");
            gm_lalr_put_item(b, g, t->kernel[k].prod, t->kernel[k].dot);
            gm_strbuf_putc(b, '\n');
        }
        put_state_actions(b, g, t, s);
    }
    if (b->failed)
        return gm_mem_fail(b->mem, err, "the LALR(1) report");
    return GM_OK;
}
