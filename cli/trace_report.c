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
                            size_t step, size_t bad_byte, const char *expected)
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
    if (!tok) {
        fprintf(stderr, "gramask trace: %s:%u:%u: true token %u (step %zu) is out of range: the "
                        "tokenizer has %u ids (ids made with another tokenizer?)\n",
                file, line, col, ids[step], step, gm_vocab_size(v));
        gm_strbuf_free(&before);
        gm_strbuf_free(&show);
        return;
    }
    gm_strbuf_escaped(&show, tok, len);
    fprintf(stderr, "gramask trace: %s:%u:%u: true token %u \"%s\" (step %zu) is not allowed",
            file, line, col, ids[step], gm_strbuf_str(&show), step);
    if (bad_byte < len && len > 1)
        fprintf(stderr, ": its byte %zu (0x%02x) is refused", bad_byte + 1, tok[bad_byte]);
    fputc('\n', stderr);
    if (step == 0) {
        fprintf(stderr, "  after: nothing (it is the first token)\n");
    } else {
        gm_strbuf after;
        gm_strbuf_init(&after, &mem);
        size_t from = before.n > BEFORE_BYTES ? before.n - BEFORE_BYTES : 0;
        gm_strbuf_escaped(&after, before.s ? before.s + from : "", before.n - from);
        fprintf(stderr, "  after: %s\"%s\"\n", from ? "..." : "", after.n ? gm_strbuf_str(&after) : "");
        gm_strbuf_free(&after);
    }
    fprintf(stderr, "  expected%s: %s\n", bad_byte < len && bad_byte > 0 ? " at that byte" : "",
            expected && *expected ? expected : "(not known)");
    gm_strbuf_free(&before);
    gm_strbuf_free(&show);
}
