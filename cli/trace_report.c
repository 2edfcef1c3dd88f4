/*
 * gramask trace's report of a true token the grammar rejected: where it is
 * in the text (file:line:column of its first byte; columns count bytes, as
 * in every gramask message), its text, the text before it, and what the
 * grammar expected there.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/objects.h"
#include "base/strbuf.h"
#include "cli/cli.h"

enum { BEFORE_BYTES = 60 };

void gm_cli_report_rejected(const gm_vocab *v, const char *file, const uint32_t *ids,
                            size_t step, const char *expected)
{
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_strbuf before, show;
    gm_strbuf_init(&before, &mem);
    gm_strbuf_init(&show, &mem);
    gm_error err;
    if (gm_vocab_decode(v->data, ids, step, &before, &err) != GM_OK)
        gm_strbuf_puts(&before, "");
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < before.n; i++) {
        if (before.s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    size_t len;
    const uint8_t *tok = gm_vocab_token(v, ids[step], &len);
    gm_strbuf_escaped(&show, tok, tok ? len : 0);
    fprintf(stderr, "gramask trace: %s:%u:%u: true token %u \"%s\" (step %zu) is not allowed\n",
            file, line, col, ids[step], gm_strbuf_str(&show), step);
    show.n = 0;
    size_t from = before.n > BEFORE_BYTES ? before.n - BEFORE_BYTES : 0;
    gm_strbuf_escaped(&show, before.s ? before.s + from : "", before.n - from);
    fprintf(stderr, "  after: %s\"%s\"\n", from ? "..." : "", gm_strbuf_str(&show));
    fprintf(stderr, "  expected: %s\n", expected && *expected ? expected : "(not known)");
    gm_strbuf_free(&before);
    gm_strbuf_free(&show);
}
