/*
 * grammar_dump: loads a grammar file and prints its cfg dump (or the
 * error), with warnings on stderr. A helper for writing the golden files
 * of the grammar tests: tests/grammar_dump FILE [START].
 */
#include <stdio.h>

#include "parser/grammar.h"
#include "base/strbuf.h"

static void on_warning(void *ud, const gm_error *w)
{
    (void)ud;
    fprintf(stderr, "%s\n", w->message);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: grammar_dump FILE [START]\n");
        return 2;
    }
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_grammar_options opts = {0};
    opts.start = argc == 3 ? argv[2] : NULL;
    opts.warn = on_warning;
    gm_cfg *g;
    gm_error err;
    if (gm_grammar_load_file(&m, argv[1], &opts, &g, &err) != GM_OK) {
        printf("%s\n", err.message);
        return 1;
    }
    gm_strbuf out;
    gm_strbuf_init(&out, &m);
    gm_cfg_dump(g, &out);
    fputs(gm_strbuf_str(&out), stdout);
    gm_strbuf_free(&out);
    gm_cfg_destroy(g);
    return 0;
}
