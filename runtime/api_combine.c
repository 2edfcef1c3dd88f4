/*
 * gm_grammar_combine (gramask.h): XGrammar's Grammar.union and
 * Grammar.concat as one grammar IR. Each grammar keeps the IR it was built
 * from (gm_grammar.ir); the IRs are copied into one under fresh rule names
 * and a new root takes their roots as alternatives or in sequence.
 */
#include <string.h>

#include "dispatch/ir_import.h"
#include "ir/ebnf.h"
#include "runtime/objects.h"

gm_status gm_grammar_combine(gm_grammar *const *grammars, size_t n, gm_combine how,
                             const gm_grammar_options *opts, gm_grammar **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_combine: out is NULL");
    *out = NULL;
    if (!grammars || n == 0)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_combine: no grammars");
    if (how != GM_COMBINE_UNION && how != GM_COMBINE_CONCAT)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_combine: unknown combination %d",
                            (int)how);
    for (size_t i = 0; i < n; i++) {
        const gm_grammar *g = grammars[i];
        if (!g)
            return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_combine: grammar %zu is NULL", i);
        if (g->engine != GM_ENGINE_EARLEY)
            return gm_error_set(err, GM_ERR_UNSUPPORTED,
                                "grammar %zu is a Lark grammar (LALR engine): only grammars of the "
                                "Earley engine (GBNF, EBNF, regex, JSON Schema, structural tags) "
                                "can be combined", i);
        if (g->blocks)
            return gm_error_set(err, GM_ERR_UNSUPPORTED,
                                "grammar %zu has code blocks, which cannot be combined", i);
        if (!g->ir)
            return gm_error_set(err, GM_ERR_UNSUPPORTED,
                                "grammar %zu was loaded from a compiled file, which keeps no "
                                "grammar IR to combine", i);
    }
    gm_allocator al = opts ? opts->allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_mem m;
    gm_mem_init(&m, &al, lim.max_memory);
    gm_ebnf dst;
    gm_ebnf_init(&dst, &m);
    gm_status st = GM_OK;
    uint32_t *roots = gm_mem_alloc(&m, n * sizeof *roots);
    uint32_t root = gm_ebnf_rule_get(&dst, "root", 4);
    const char *file = gm_ebnf_file(&dst, how == GM_COMBINE_UNION ? "<union>" : "<concat>");
    if (!roots || root == GM_EX_NONE || !file)
        st = gm_mem_fail(&m, err, "combining grammars");
    for (size_t i = 0; i < n && st == GM_OK; i++)
        st = gm_ebnf_import(&dst, grammars[i]->ir, "", &roots[i], err);
    if (st == GM_OK) {
        uint32_t body = how == GM_COMBINE_UNION ? gm_ebnf_add_alt(&dst, roots, n)
                                                : gm_ebnf_add_seq(&dst, roots, n);
        if (body == GM_EX_NONE) {
            st = gm_mem_fail(&m, err, "combining grammars");
        } else {
            dst.rules[root].body = body;
            dst.rules[root].loc = (gm_srcloc){file, 1, 1};
            dst.root = root;
            st = gm_ebnf_check(&dst, opts, err);
        }
    }
    if (st == GM_OK)
        st = gm_grammar_from_ebnf(&dst, opts, out, err);
    gm_mem_free(&m, roots);
    gm_ebnf_free(&dst);
    return st;
}
