/* gramask parse for the Earley engine's grammars (GBNF, EBNF, regex). */
#ifndef GM_CLI_PARSE_EARLEY_H
#define GM_CLI_PARSE_EARLEY_H

#include "gramask.h"

/*
 * Checks each of files[0..nfiles) against the grammar file (format, or by
 * its extension when GM_FORMAT_AUTO): prints OK or FILE:line:column with
 * the bytes expected there. Returns the exit status (0 all parse, 1 not).
 */
int gm_cli_parse_earley(const char *grammar, gm_grammar_format format, const char *start,
                        const char *const *files, int nfiles);

#endif
