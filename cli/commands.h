/* The subcommand table. Add a command: its cmd_<name>.c, a line here, a line in local.mk. */
#ifndef GM_CLI_COMMANDS_H
#define GM_CLI_COMMANDS_H

#include "cli/cli.h"

int gm_cmd_vocab(int argc, char **argv);
int gm_cmd_regex(int argc, char **argv);
int gm_cmd_lex(int argc, char **argv);
int gm_cmd_demo(int argc, char **argv);
int gm_cmd_grammar(int argc, char **argv);
int gm_cmd_parse(int argc, char **argv);
int gm_cmd_trace(int argc, char **argv);
int gm_cmd_generate(int argc, char **argv);
int gm_cmd_compile(int argc, char **argv);
int gm_cmd_info(int argc, char **argv);
int gm_cmd_schema(int argc, char **argv);
int gm_cmd_maskbench(int argc, char **argv);
int gm_cmd_encode(int argc, char **argv);
int gm_cmd_tools(int argc, char **argv);

static const gm_cli_command gm_cli_commands[] = {
    {"demo", gm_cmd_demo, "the main job on bundled data: compile JSON for a tokenizer, decode a sample"},
    {"trace", gm_cmd_trace, "decode reference tokenizations token by token: exactness and latency"},
    {"generate", gm_cmd_generate, "random constrained generation; reports any dead end"},
    {"compile", gm_cmd_compile, "compile a grammar for a tokenizer into a .gmc file"},
    {"info", gm_cmd_info, "what a compiled .gmc file holds"},
    {"vocab", gm_cmd_vocab, "facts about a tokenizer vocabulary; decode reference ids"},
    {"regex", gm_cmd_regex, "compile a terminal regex and show its automata (state counts, DFA)"},
    {"lex", gm_cmd_lex, "lex a file with a set of terminals and print the terminal stream"},
    {"grammar", gm_cmd_grammar, "load a grammar, build its LALR(1) tables: summary or --report"},
    {"parse", gm_cmd_parse, "lex and parse a file with a grammar: OK or the first error"},
    {"encode", gm_cmd_encode, "encode text files into token ids (an ids file), as the tokenizer does"},
    {"schema", gm_cmd_schema, "compile a JSON Schema to a grammar and print it"},
    {"maskbench", gm_cmd_maskbench, "score JSON Schema grammars on MaskBench: verdicts, TTFM, TBM"},
    {"tools", gm_cmd_tools, "the structural tag of a tool-call format (llama, qwen, harmony) for a list of tools"},
    {NULL, NULL, NULL}, /* end of table */
};

#endif
