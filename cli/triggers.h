/*
 * The trigger words of the structural tag that --tools or --structural-tag
 * names (cli/triggers.c says what generate does with them).
 */
#ifndef GM_CLI_TRIGGERS_H
#define GM_CLI_TRIGGERS_H

#include <stddef.h>

#include "gramask.h"
#include "cli/session.h"

typedef struct gm_cli_words {
    char **words; /* NUL-terminated, owned */
    size_t *lens;
    size_t n, cap;
} gm_cli_words;

/* The distinct strings of every "triggers" array of the structural tag lo
   names, and the end strings (two bytes or more) of its free-text regions
   (none for other grammars). */
gm_status gm_cli_triggers(const gm_cli_load_options *lo, gm_cli_words *out, gm_error *err);
void gm_cli_words_free(gm_cli_words *w);

#endif
