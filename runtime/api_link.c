/*
 * gm_grammar_link (gramask.h): XGrammar's Lark dialect embeds grammars built
 * on their own (a %json schema's, a named grammar's) inside a grammar; its
 * front end (python/gramask/lark_xgr.py) writes a placeholder rule for each,
 * and this puts a copy of that grammar's IR in the placeholder's place.
 */
#include <stdio.h>
#include <string.h>

#include "dispatch/ir_import.h"
#include "ir/ebnf.h"
#include "runtime/objects.h"

static gm_status check_linkable(const gm_grammar *g, const char *what, size_t i, gm_error *err)
{
    if (!g)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: %s %zu is NULL", what, i);
    if (g->engine != GM_ENGINE_EARLEY || g->blocks || !g->ir)
        return gm_error_set(err, GM_ERR_UNSUPPORTED,
                            "gm_grammar_link: %s %zu is not a grammar of the Earley engine "
                            "with its IR (a Lark grammar, one with code blocks, or one loaded "
                            "from a compiled file)", what, i);
    return GM_OK;
}

gm_status gm_grammar_link(const gm_grammar *main, const char *const *names,
                          gm_grammar *const *parts, size_t n, const gm_grammar_options *opts,
                          gm_grammar **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: out is NULL");
    *out = NULL;
    if (n && (!names || !parts))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: names or parts is NULL");
    gm_status st = check_linkable(main, "main grammar", 0, err);
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        st = check_linkable(parts[i], "part", i, err);
        if (st == GM_OK && !names[i])
            st = gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: name %zu is NULL", i);
    }
    if (st)
        return st;
    gm_allocator al = opts ? opts->allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_mem m;
    gm_mem_init(&m, &al, lim.max_memory);
    gm_ebnf dst;
    gm_ebnf_init(&dst, &m);
    /* main first, into an empty IR: its rules keep their names */
    uint32_t root_ref;
    st = gm_ebnf_import(&dst, main->ir, "", &root_ref, err);
    if (st == GM_OK) {
        const char *rname = main->ir->rules[main->ir->root].name;
        dst.root = gm_ebnf_rule_find(&dst, rname, strlen(rname));
        if (dst.root == GM_EX_NONE)
            st = gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: lost the root rule %s",
                              rname);
    }
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        uint32_t r = gm_ebnf_rule_find(&dst, names[i], strlen(names[i]));
        if (r == GM_EX_NONE) {
            st = gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_link: the main grammar has no "
                              "rule %s", names[i]);
            break;
        }
        char prefix[32];
        snprintf(prefix, sizeof prefix, "part%zu_", i);
        uint32_t node;
        st = gm_ebnf_import(&dst, parts[i]->ir, prefix, &node, err);
        if (st == GM_OK)
            dst.rules[r].body = node;
    }
    if (st == GM_OK)
        st = gm_ebnf_check(&dst, opts, err);
    if (st == GM_OK)
        st = gm_grammar_from_ebnf(&dst, opts, out, err);
    gm_ebnf_free(&dst);
    return st;
}
