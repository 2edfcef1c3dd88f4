/*
 * gramask tools --format F TOOLS.json: the structural tag a tool-call
 * preset builds (dispatch/tools.h), and with --grammar the grammar it
 * compiles to; the decoding commands take the same options (--tools).
 */
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "dispatch/stag.h"
#include "dispatch/tools.h"

static const char usage[] =
    "--format llama|llama-json|qwen|harmony|FAMILY TOOLS.json [--tool-choice auto|required|none|NAME]\n"
    "             [--no-parallel] [--reasoning allowed|forced|forbidden] [--grammar]\n"
    "  Prints the structural tag (XGrammar's JSON shape) that constrains one assistant turn\n"
    "  of the format with the tools of TOOLS.json (an OpenAI `tools` array, or an object with\n"
    "  \"tools\", \"tool_choice\" and \"parallel_tool_calls\"); --grammar prints the grammar it\n"
    "  compiles to. Decode with it: gramask trace|generate|compile --tools TOOLS.json --format F.\n"
    "  Formats:\n"
    "    llama       <function=NAME>{args}</function> in free text (Llama 3.x custom tools)\n"
    "    llama-json  {\"name\": \"NAME\", \"parameters\": {args}} (Llama 3.x JSON calls)\n"
    "    qwen        <tool_call>\\n{\"name\": ..., \"arguments\": {args}}\\n</tool_call>, after\n"
    "                <think>...</think> as --reasoning says (Qwen, Hermes)\n"
    "    harmony     gpt-oss: analysis and commentary messages, then a call ending with\n"
    "                <|call|> or the final answer (then <|return|>)\n"
    "  Model families, under XGrammar's names (its \"llama\" is llama-json here); the turn\n"
    "  starts inside the reasoning block the prompt opened (--reasoning forbidden: closed):\n"
    "    qwen_3 qwen_3_5 qwen_3_coder kimi deepseek_r1 deepseek_v3_1 deepseek_v3_2\n"
    "    deepseek_v4 glm_4_7 minimax cohere exaone kimi_k3 kimi_k3_xml (XML arguments:\n"
    "    qwen_3_5, qwen_3_coder, deepseek_v3_2, deepseek_v4, glm_4_7, minimax, cohere,\n"
    "    kimi_k3 need the json_schema XML styles; kimi_k3 --reasoning forbidden: inside the\n"
    "    response block). harmony also calls builtin tools ({\"type\": \"web_search_preview\",\n"
    "    \"name\": \"browser.search\", \"parameters\": ...}, {\"type\": \"python\"}):\n"
    "    <|channel|>commentary to=NAME code<|message|>ARGS<|call|>";

int gm_cmd_tools(int argc, char **argv)
{
    gm_cli_load_options lo;
    gm_cli_load_options_init(&lo);
    bool print_grammar = false;
    const char *file = NULL;
    static const gm_cli_opt own[] = {
        {"--help", GM_CLI_NO_ARG}, {"-h", GM_CLI_NO_ARG}, {"--grammar", GM_CLI_NO_ARG},
        {"--format", GM_CLI_ARG}, {"--tool-choice", GM_CLI_ARG}, {"--parallel", GM_CLI_NO_ARG},
        {"--no-parallel", GM_CLI_NO_ARG}, {"--reasoning", GM_CLI_ARG}, {NULL, GM_CLI_NO_ARG}};
    static const gm_cli_opt *const tables[] = {own, NULL};
    gm_cli_args p;
    gm_cli_args_init(&p, "tools", usage, argc, argv, tables);
    int r;
    while ((r = gm_cli_args_next(&p)) == 1) {
        if (gm_cli_is(&p, "--help") || gm_cli_is(&p, "-h")) {
            printf("usage: gramask tools %s\n", usage);
            return 0;
        } else if (gm_cli_is(&p, "--grammar")) {
            print_grammar = true;
        } else if (!p.opt && file) {
            return gm_cli_args_unexpected(&p);
        } else {
            int taken = gm_cli_grammar_arg(&lo, &p);
            if (taken != 1)
                return taken ? taken : gm_cli_args_unexpected(&p);
            file = lo.grammar;
        }
    }
    if (r)
        return r;
    if (!file)
        return gm_cli_bad_arg("tools", usage, "missing TOOLS.json");
    if (!lo.tool_format)
        return gm_cli_bad_arg("tools", usage, "missing --format llama|llama-json|qwen|harmony|FAMILY");
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    if (gm_file_read(&m, file, lim.max_input_bytes, &text, &len, &err) != GM_OK)
        return gm_cli_fail("tools", &err);
    gm_tools_options to;
    gm_cli_tools_options(&lo, &to);
    gm_strbuf out;
    gm_strbuf_init(&out, &m);
    int rc = 0;
    if (gm_tools_structural_tag(&m, file, text, len, &to, &out, &err) != GM_OK) {
        rc = gm_cli_fail("tools", &err);
    } else if (!print_grammar) {
        fputs(gm_strbuf_str(&out), stdout);
    } else {
        gm_ebnf g;
        gm_ebnf_init(&g, &m);
        gm_stag_options so = {NULL, 0, to.schema, to.limits, false, NULL, false};
        if (gm_stag_compile(&m, file, out.s, out.n, &so, &g, &err) != GM_OK) {
            rc = gm_cli_fail("tools", &err);
        } else {
            gm_strbuf ebnf;
            gm_strbuf_init(&ebnf, &m);
            gm_ebnf_print(&g, &ebnf);
            fputs(gm_strbuf_str(&ebnf), stdout);
            gm_strbuf_free(&ebnf);
        }
        gm_ebnf_free(&g);
    }
    gm_strbuf_free(&out);
    gm_mem_free(&m, text);
    return rc;
}
