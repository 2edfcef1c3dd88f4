/* gm_cfg: destruction and the stable text dump. */
#include "parser/cfg.h"

#include <string.h>

#include "parser/lark_pattern.h"

void gm_cfg_destroy(gm_cfg *g)
{
    if (!g)
        return;
    gm_mem *m = g->mem;
    gm_mem_free(m, g->postlex.at);
    gm_mem_free(m, g->postlex.after);
    gm_mem_free(m, g->postlex.try_before);
    gm_mem_free(m, g->postlex.nolex);
    gm_mem_free(m, g->postlex.glued);
    gm_mem_free(m, g->postlex.renamed);
    gm_mem_free(m, g->postlex.bracket);
    if (g->names)
        for (uint32_t i = 0; i < g->nterminals + g->nnonterminals; i++)
            gm_mem_free(m, g->names[i]);
    if (g->terminals)
        for (uint32_t i = 0; i < g->nterminals; i++)
            gm_mem_free(m, (void *)g->terminals[i].pattern);
    if (g->prods)
        for (uint32_t i = 0; i < g->nprods; i++)
            gm_mem_free(m, (void *)g->prods[i].alias);
    if (g->files)
        for (uint32_t i = 0; i < g->nfiles; i++)
            gm_mem_free(m, g->files[i]);
    gm_mem_free(m, g->names);
    gm_mem_free(m, g->terminals);
    gm_mem_free(m, g->prods);
    gm_mem_free(m, g->rhs);
    gm_mem_free(m, g->rule_flags);
    gm_mem_free(m, g->files);
    gm_mem_free(m, g->file);
    gm_mem_free(m, g);
}

void gm_cfg_dump(const gm_cfg *g, gm_strbuf *out)
{
    gm_strbuf_printf(out, "%%start %s\n", g->names[g->start]);
    gm_strbuf_printf(out, "%%terminals %u\n", g->nterminals);
    for (uint32_t i = 0; i < g->nterminals; i++) {
        const gm_terminal_spec *t = &g->terminals[i];
        gm_strbuf_printf(out, "%s: ", g->names[i]);
        if (t->pattern) {
            gm_lpattern p = {t->pattern, t->pattern_len, t->flags, t->is_literal};
            gm_lpattern_write(out, &p);
        } else {
            gm_strbuf_puts(out, "%declare");
        }
        if (t->priority)
            gm_strbuf_printf(out, " %%priority %d", (int)t->priority);
        if (t->ignored)
            gm_strbuf_puts(out, " %ignore");
        gm_strbuf_putc(out, '\n');
    }
    if (g->postlex.insertion) {
        const gm_postlex *pl = &g->postlex;
        gm_strbuf_printf(out, "%%insert %s at", g->names[pl->insert]);
        for (uint32_t i = 0; i < pl->nterminals; i++)
            if (pl->at[i])
                gm_strbuf_printf(out, " %s", g->names[i]);
        gm_strbuf_puts(out, " after");
        for (uint32_t i = 0; i < pl->nterminals; i++)
            if (pl->after[i])
                gm_strbuf_printf(out, " %s", g->names[i]);
        if (pl->glued) {
            gm_strbuf_puts(out, " glued");
            for (uint32_t i = 0; i < pl->nterminals; i++)
                if (pl->glued[i])
                    gm_strbuf_printf(out, " %s", g->names[i]);
        }
        if (pl->offending) {
            gm_strbuf_puts(out, " offending");
            for (uint32_t i = 0; i < pl->nterminals; i++)
                if (pl->try_before[i])
                    gm_strbuf_printf(out, " %s", g->names[i]);
            gm_strbuf_puts(out, " rename");
            for (uint32_t i = 0; i < pl->nterminals; i++)
                if (pl->renamed[i] != GM_POSTLEX_NONE)
                    gm_strbuf_printf(out, " %s %s", g->names[i], g->names[pl->renamed[i]]);
            gm_strbuf_puts(out, " nolex");
            for (uint32_t i = 0; i < pl->nterminals; i++)
                if (pl->nolex[i])
                    gm_strbuf_printf(out, " %s", g->names[i]);
        }
        gm_strbuf_putc(out, '\n');
    }
    gm_strbuf_printf(out, "%%rules %u\n", g->nprods);
    for (uint32_t k = 0; k < g->nprods; k++) {
        const gm_production *p = &g->prods[k];
        uint8_t f = g->rule_flags[p->lhs - g->nterminals];
        if (f & GM_CFG_RULE_KEEP)
            gm_strbuf_putc(out, '!');
        if (f & GM_CFG_RULE_EXPAND1)
            gm_strbuf_putc(out, '?');
        gm_strbuf_printf(out, "%s:", g->names[p->lhs]);
        for (uint32_t i = 0; i < p->len; i++)
            gm_strbuf_printf(out, " %s", g->names[g->rhs[p->rhs + i]]);
        if (p->alias)
            gm_strbuf_printf(out, " -> %s", p->alias);
        if (p->priority)
            gm_strbuf_printf(out, " %%priority %d", (int)p->priority);
        gm_strbuf_putc(out, '\n');
    }
    const gm_postlex *pl = &g->postlex;
    if (pl->indentation) {
        gm_strbuf_printf(out, "%%indent %s %s %s", g->names[pl->newline], g->names[pl->indent],
                         g->names[pl->dedent]);
        for (int sign = 1; sign >= -1; sign -= 2) {
            gm_strbuf_puts(out, sign > 0 ? " open" : " close");
            for (uint32_t i = 0; i < g->nterminals; i++)
                if (pl->bracket[i] == sign)
                    gm_strbuf_printf(out, " %s", g->names[i]);
        }
        gm_strbuf_printf(out, " tab %u\n", pl->tab_width);
    }
}
