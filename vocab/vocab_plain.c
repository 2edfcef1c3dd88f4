/*
 * The plain vocabulary format (defined at the top of vocab.h): reading it
 * into a gm_vocab_data and writing one out.
 */
#include "vocab/vocab_plain.h"

#include <string.h>

#include "base/hex.h"
#include "base/strbuf.h"

/* Does line [p, end) continue with exactly " word" at *p? Advances past it. */
static bool take_word(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *p) < n + 1 || (*p)[0] != ' ' || memcmp(*p + 1, word, n))
        return false;
    if (*p + 1 + n != end && (*p)[1 + n] != ' ')
        return false;
    *p += 1 + n;
    return true;
}

gm_status gm_vocab_load_plain_(gm_mem *m, const char *name, const char *text, size_t len,
                               const gm_vocab_load_options *opts, gm_vocab_data **out,
                               gm_error *err)
{
    *out = NULL;
    const char *p = text, *end = text + len;
    const char *nl = memchr(p, '\n', len);
    const char *hend = nl ? nl : end;
    static const char magic[] = "gramask-vocab 1";
    size_t mlen = sizeof magic - 1;
    uint32_t strip = 0;
    if ((size_t)(hend - p) < mlen || memcmp(p, magic, mlen))
        return gm_error_set_file(err, GM_ERR_FORMAT, name,
                               "line 1: expected \"gramask-vocab 1\" (the plain vocabulary "
                               "format, version 1)");
    if ((size_t)(hend - p) != mlen) {
        static const char opt[] = " strip-leading ";
        size_t olen = sizeof opt - 1;
        if ((size_t)(hend - p) != mlen + olen + 1 || memcmp(p + mlen, opt, olen) ||
            p[mlen + olen] < '0' || p[mlen + olen] > '9')
            return gm_error_set_file(err, GM_ERR_FORMAT, name,
                                   "line 1: expected \"gramask-vocab 1\" or \"gramask-vocab 1 "
                                   "strip-leading N\" (N a digit)");
        strip = (uint32_t)(p[mlen + olen] - '0');
    }
    p = nl ? nl + 1 : end;

    /* count the token lines first: the arrays are sized once */
    uint32_t max = gm_vocab_max_tokens_(opts);
    size_t nlines = 0;
    for (const char *q = p; q < end; nlines++) {
        const char *e = memchr(q, '\n', (size_t)(end - q));
        q = e ? e + 1 : end;
        if (nlines >= max)
            return gm_error_set_file(err, GM_ERR_LIMIT, name,
                                   "more than %u tokens (the limit)", max);
    }
    gm_vocab_data *v = gm_vocab_new_(m, (uint32_t)nlines, (size_t)(end - p) / 2);
    if (!v)
        return gm_mem_fail(m, err, "the vocabulary");
    v->strip_leading = strip;
    v->kind = GM_VOCAB_PLAIN;
    uint32_t *eos = NULL;
    size_t neos = 0;
    gm_status st = GM_OK;
    size_t nb = 0;
    for (uint32_t id = 0; id < nlines; id++) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        const char *le = e ? e : end;
        unsigned line = id + 2;
        const char *q = p;
        bool none = false;
        if (q < le && *q == '-') {
            none = true;
            q++;
        } else {
            const char *h = q;
            while (q < le && *q != ' ')
                q++;
            size_t nh = (size_t)(q - h);
            if (nh == 0 || nh % 2) {
                st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                                     "line %u (token %u): expected an even number of hex digits "
                                     "or \"-\"",
                                     line, id);
                goto fail;
            }
            if (nh / 2 > GM_VOCAB_MAX_TOKEN_BYTES) {
                st = gm_error_set_file(err, GM_ERR_LIMIT, name,
                                     "line %u: token %u is %zu bytes long (the limit is %u)",
                                     line, id, nh / 2, (unsigned)GM_VOCAB_MAX_TOKEN_BYTES);
                goto fail;
            }
            for (size_t i = 0; i < nh; i += 2) {
                int hi = gm_hex_value((unsigned char)h[i]), lo = gm_hex_value((unsigned char)h[i + 1]);
                if (hi < 0 || lo < 0) {
                    st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                                         "line %u (token %u), column %zu: '%c' is not a hex "
                                         "digit",
                                         line, id, (size_t)(h - p) + i + (hi < 0 ? 1 : 2),
                                         hi < 0 ? h[i] : h[i + 1]);
                    goto fail;
                }
                v->bytes[nb++] = (uint8_t)(hi << 4 | lo);
            }
        }
        bool special = take_word(&q, le, "special");
        bool is_eos = take_word(&q, le, "eos");
        if (q != le) {
            st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                                 "line %u (token %u), column %zu: unexpected text (a token line "
                                 "is HEX or \"-\", then optional \" special\" and \" eos\")",
                                 line, id, (size_t)(q - p) + 1);
            goto fail;
        }
        uint8_t fl = 0;
        if (special)
            fl |= GM_TOK_SPECIAL | GM_TOK_ADDED;
        else if (none)
            fl |= GM_TOK_PADDING;
        if (is_eos) {
            if (fl & GM_TOK_PADDING) {
                st = gm_error_set_file(err, GM_ERR_FORMAT, name,
                                     "line %u: token %u is padding (\"-\" without \"special\") "
                                     "and cannot be EOS",
                                     line, id);
                goto fail;
            }
            uint32_t *ne = gm_mem_reallocarray(m, eos, neos + 1, sizeof *ne);
            if (!ne) {
                st = gm_mem_fail(m, err, "the vocabulary");
                goto fail;
            }
            eos = ne;
            eos[neos++] = id;
        }
        v->flags[id] = fl;
        v->offsets[id + 1] = (uint32_t)nb;
        p = e ? e + 1 : end;
    }
    st = gm_vocab_finish_(v, eos, neos, opts, name, err);
    if (st != GM_OK)
        goto fail;
    gm_mem_free(m, eos);
    *out = v;
    return GM_OK;
fail:
    gm_mem_free(m, eos);
    gm_vocab_data_destroy(v);
    return st;
}

void gm_vocab_write_plain(const gm_vocab_data *v, gm_strbuf *out)
{
    static const char hex[] = "0123456789abcdef";
    gm_strbuf_puts(out, "gramask-vocab 1");
    if (v->strip_leading)
        gm_strbuf_printf(out, " strip-leading %u", v->strip_leading);
    gm_strbuf_putc(out, '\n');
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *b = gm_vocab_data_token(v, id, &len);
        uint8_t fl = v->flags[id];
        if (len == 0)
            gm_strbuf_putc(out, '-'); /* an empty text token reloads as padding: neither is text */
        for (size_t i = 0; i < len; i++) {
            char h[2] = {hex[b[i] >> 4], hex[b[i] & 15]};
            gm_strbuf_append(out, h, 2);
        }
        if (fl & GM_TOK_SPECIAL)
            gm_strbuf_puts(out, " special");
        if (fl & GM_TOK_EOS)
            gm_strbuf_puts(out, " eos");
        gm_strbuf_putc(out, '\n');
    }
}
