/*
 * Encoding a text: added tokens, normalizer, pre-tokenizer, BPE, in the
 * order of note [encoder pipeline] (encoder.h).
 */
#include <string.h>
#include <utf8proc.h>

#include "vocab/encoder.h"
#include "base/utf8.h"

typedef struct span {
    size_t off, len;
    uint8_t matched;          /* Split: this span is a match of the pattern */
} span;

typedef GM_VEC(span) span_vec;
typedef GM_VEC(utf8proc_int32_t) ucs_vec;

/*
 * note [encoder workspaces]
 * A call needs scratch buffers (normalized text, pieces, spans, the
 * regex stack, the BPE arrays) and a word cache (note [word cache]) that
 * is only worth having if it outlives the call. They live in a workspace;
 * the encoder keeps up to GM_ENC_POOL idle ones in a lock-free pool of
 * slots: a call takes one with an atomic exchange (or makes a new one when
 * all are taken, as by concurrent calls), and puts it back with a
 * compare-exchange into an empty slot (or frees it when none is). So
 * calls allocate nothing once warm, threads never wait for each other, and
 * memory stays bounded: at most GM_ENC_POOL idle workspaces, each with a
 * fixed cache, a buffer larger than GM_ENC_KEEP bytes (after a long text)
 * being freed when its call ends.
 */
struct gm_enc_work {
    gm_mem *m;
    gm_bytevec norm;          /* the normalized text of one segment */
    gm_bytevec nbuf[2];       /* the normalizer's steps but the last */
    gm_bytevec text0;         /* the first pre-tokenizer step's pieces, when ByteLevel */
    gm_bytevec text[2];       /* piece texts of the later steps */
    gm_bytevec tmp;
    span_vec spans0, spans[2], found;
    ucs_vec ucs;              /* code points of a Unicode normalizer step */
    gm_pre_scratch rx;
    gm_bpe_scratch bpe;
    gm_word_cache cache;
};

enum { GM_ENC_KEEP = 256 << 10 }; /* bytes of a buffer kept from one call to the next */

static void work_init(gm_enc_work *w, gm_mem *m)
{
    memset(w, 0, sizeof *w);
    w->m = m;
    w->rx.mem = m;
    w->bpe.mem = m;
    w->cache.mem = m;
}

/* Frees the buffers larger than `keep` bytes (all of them, and the cache, for keep 0). */
static void work_trim(gm_enc_work *w, size_t keep)
{
    gm_mem *m = w->m;
#define TRIM(vec) \
    if ((vec).cap * sizeof *(vec).v > keep) \
        gm_vec_free(m, &(vec));
    TRIM(w->norm) TRIM(w->nbuf[0]) TRIM(w->nbuf[1]) TRIM(w->text0) TRIM(w->text[0])
    TRIM(w->text[1]) TRIM(w->tmp) TRIM(w->spans0) TRIM(w->spans[0]) TRIM(w->spans[1])
    TRIM(w->found) TRIM(w->ucs) TRIM(w->bpe.heap) TRIM(w->bpe.buf)
#undef TRIM
    if (w->rx.cap * sizeof *w->rx.stack > keep)
        gm_pre_scratch_free(&w->rx);
    if ((size_t)w->bpe.cap * (sizeof *w->bpe.id + 2 * sizeof *w->bpe.prev) > keep)
        gm_bpe_scratch_free(&w->bpe);
    if (!keep)
        gm_word_cache_free(&w->cache);
}

void gm_enc_work_destroy(gm_enc_work *w)
{
    if (!w)
        return;
    work_trim(w, 0);
    gm_mem_free(w->m, w);
}

/* A workspace of e's pool, or a new one (NULL: no memory). */
static gm_enc_work *work_take(const gm_encoder *e)
{
    for (size_t i = 0; i < GM_ENC_POOL; i++) {
        gm_enc_work *w = atomic_exchange(&e->pool->slot[i], NULL);
        if (w)
            return w;
    }
    gm_enc_work *w = gm_mem_alloc(e->mem, sizeof *w);
    if (w)
        work_init(w, e->mem);
    return w;
}

static void work_give_back(const gm_encoder *e, gm_enc_work *w)
{
    work_trim(w, GM_ENC_KEEP);
    for (size_t i = 0; i < GM_ENC_POOL; i++) {
        gm_enc_work *empty = NULL;
        if (atomic_compare_exchange_strong(&e->pool->slot[i], &empty, w))
            return;
    }
    gm_enc_work_destroy(w);
}

/* One call. */
typedef struct enc_ctx {
    const gm_encoder *e;
    gm_mem *m;
    gm_enc_work *w;
    bool parse_special;
    gm_u32vec *out;
    gm_status st;             /* GM_ERR_LIMIT for a regex past its budget */
} enc_ctx;

/* ------------------------------------------------------------------------
 * Normalizer
 * ------------------------------------------------------------------------ */

static int put(gm_mem *m, gm_bytevec *v, const void *s, size_t n)
{
    if (gm_vec_reserve(m, v, v->n + n))
        return -1;
    if (n)
        memcpy(v->v + v->n, s, n);
    v->n += n;
    return 0;
}

/* utf8proc's normalization of the well-formed s[0..n), appended to out (ucs: scratch). */
static int normalize_run(gm_mem *m, utf8proc_option_t opt, const uint8_t *s, size_t n,
                         gm_bytevec *out, ucs_vec *ucs)
{
    size_t cap = n + 16;
    for (;;) {
        if (gm_vec_reserve(m, ucs, cap))
            return -1;
        /* as utf8proc_map does: decompose and reorder, then compose and encode in place */
        utf8proc_ssize_t r = utf8proc_decompose_custom(s, (utf8proc_ssize_t)n, ucs->v,
                                                       (utf8proc_ssize_t)cap, opt, NULL, NULL);
        if (r < 0)
            return -1; /* cannot happen: the run is well-formed */
        if ((size_t)r > cap) {
            cap = (size_t)r;
            continue;
        }
        r = utf8proc_reencode(ucs->v, r, opt);
        if (r < 0)
            return -1;
        return put(m, out, ucs->v, (size_t)r);
    }
}

/*
 * Unicode normalization of s[0..n) appended to out: well-formed runs go
 * through utf8proc, ill-formed bytes are kept (note [encoder pipeline]).
 * Between two ASCII characters no form changes anything (ASCII is stable,
 * and a starter that composes with nothing blocks what follows it from
 * what precedes it), so ASCII stretches are copied and utf8proc sees only
 * the stretches around non-ASCII characters, from the ASCII character
 * before them to the first ASCII one followed by another.
 */
static int unicode_form(enc_ctx *C, int kind, const uint8_t *s, size_t n, gm_bytevec *out)
{
    gm_mem *m = C->m;
    utf8proc_option_t opt = UTF8PROC_STABLE;
    opt |= kind == GM_NORM_NFC || kind == GM_NORM_NFKC ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE;
    if (kind == GM_NORM_NFKC || kind == GM_NORM_NFKD)
        opt |= UTF8PROC_COMPAT;
    size_t i = 0;
    while (i < n) {
        size_t q = i;
        while (q < n && s[q] < 0x80)
            q++;
        if (q == n)
            return put(m, out, s + i, n - i);
        size_t a = q > i ? q - 1 : q; /* that ASCII character may take a mark */
        if (put(m, out, s + i, a - i))
            return -1;
        /* from a: to the end of a well-formed stretch, or past an ASCII character followed by
           another */
        size_t e = a;
        uint32_t cp;
        size_t k;
        while (e < n && !(s[e] < 0x80 && e + 1 < n && s[e + 1] < 0x80) &&
               (k = gm_utf8_decode(s + e, n - e, &cp)) > 0)
            e += k;
        if (e < n && s[e] < 0x80 && e + 1 < n && s[e + 1] < 0x80)
            e++;
        if (e > a && normalize_run(m, opt, s + a, e - a, out, &C->w->ucs))
            return -1;
        if (e < n && (s[e] & 0x80) && gm_utf8_decode(s + e, n - e, &cp) == 0) {
            if (put(m, out, s + e, 1)) /* an ill-formed byte: kept */
                return -1;
            e++;
        }
        i = e;
    }
    return 0;
}

static int find_matches(enc_ctx *C, const gm_pre_regex *re, const char *lit, size_t litlen,
                        const uint8_t *t, size_t n);

/* Replaces every match of step k in s[0..n) by its content, appending to out. */
static int replace_all(enc_ctx *C, const gm_enc_norm *k, const uint8_t *s, size_t n,
                       gm_bytevec *out)
{
    if (!k->re && ((uint8_t)k->a[0] & 0xc0) != 0x80 && k->blen <= 4 * k->alen) {
        /* a literal: straight to out (see find_matches on where it can start), with room
           for every byte being a match made first (at most 4 times the text) */
        if (n == 0)
            return 0;
        size_t most = n / k->alen * (k->blen > k->alen ? k->blen : k->alen) + n % k->alen;
        if (gm_vec_reserve(C->m, out, out->n + most))
            return -1;
        uint8_t *o = out->v + out->n;
        size_t prev = 0;
        for (;;) {
            const uint8_t *p = prev < n ? memchr(s + prev, k->a[0], n - prev) : NULL;
            size_t at = p ? (size_t)(p - s) : n;
            while (p && (n - at < k->alen || memcmp(s + at, k->a, k->alen))) {
                p = at + 1 < n ? memchr(s + at + 1, k->a[0], n - at - 1) : NULL;
                at = p ? (size_t)(p - s) : n;
            }
            memcpy(o, s + prev, at - prev);
            o += at - prev;
            if (!p)
                break;
            memcpy(o, k->b, k->blen);
            o += k->blen;
            prev = at + k->alen;
        }
        out->n = (size_t)(o - out->v);
        return 0;
    }
    if (find_matches(C, k->re, k->a, k->alen, s, n))
        return -1;
    for (size_t i = 0; i < C->w->found.n; i++) {
        const span *f = &C->w->found.v[i];
        if (f->matched ? put(C->m, out, k->b, k->blen) : put(C->m, out, s + f->off, f->len))
            return -1;
    }
    return 0;
}

static int normalize(enc_ctx *C, const uint8_t *s, size_t n, gm_bytevec *out)
{
    const gm_encoder *e = C->e;
    if (e->nnorm == 0)
        return put(C->m, out, s, n);
    /* steps alternate between two buffers; the last writes to out */
    gm_bytevec *bufs = C->w->nbuf;
    const uint8_t *cur = s;
    size_t ncur = n;
    int rc = 0;
    for (size_t i = 0; i < e->nnorm && !rc; i++) {
        const gm_enc_norm *k = &e->norm[i];
        gm_bytevec *dst = i + 1 == e->nnorm ? out : &bufs[i & 1];
        size_t start = dst == out ? out->n : 0;
        if (dst != out)
            dst->n = 0;
        switch (k->kind) {
        case GM_NORM_PREPEND:
            rc = (ncur ? put(C->m, dst, k->a, k->alen) : 0) || put(C->m, dst, cur, ncur);
            break;
        case GM_NORM_REPLACE:
            rc = replace_all(C, k, cur, ncur, dst);
            break;
        default:
            rc = unicode_form(C, k->kind, cur, ncur, dst);
            break;
        }
        ncur = dst->n - start;
        cur = ncur ? dst->v + start : (const uint8_t *)""; /* an empty vector has no array */
    }
    return rc;
}

gm_status gm_encoder_normalize(const gm_encoder *e, const uint8_t *s, size_t n, gm_bytevec *out)
{
    gm_enc_work w;
    work_init(&w, e->mem);
    w.rx.budget = GM_PRE_BUDGET(n);
    enc_ctx C;
    memset(&C, 0, sizeof C);
    C.e = e;
    C.m = e->mem;
    C.w = &w;
    int rc = normalize(&C, s, n, out);
    work_trim(&w, 0);
    if (rc)
        return C.st != GM_OK ? C.st : GM_ERR_NOMEM;
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * Pre-tokenizer
 * ------------------------------------------------------------------------ */

static int push_span(gm_mem *m, span_vec *v, size_t off, size_t len, bool matched)
{
    span s = {off, len, matched};
    return gm_vec_push(m, v, s);
}

/* What to do with a span t[off, off + len) of a text, matched or between matches. */
typedef int (*span_fn)(enc_ctx *C, const uint8_t *t, size_t off, size_t len, bool matched);

/*
 * The matches of a pattern (regex re, or the string lit) in t[0..n), left
 * to right, with the gaps between them as unmatched spans, to emit.
 */
static int each_match(enc_ctx *C, const gm_pre_regex *re, const char *lit, size_t litlen,
                      const uint8_t *t, size_t n, span_fn emit)
{
    size_t prev = 0, pos = 0;
    while (pos < n) {
        long r;
        if (re) {
            r = gm_pre_regex_match_at(re, t, n, pos, &C->w->rx);
            if (r < GM_PRE_NOMATCH) {
                C->st = r == GM_PRE_TOO_LONG ? GM_ERR_LIMIT : GM_ERR_NOMEM;
                return -1;
            }
        } else if ((lit[0] & 0xc0) != 0x80) {
            /* a literal starting with a lead byte or ASCII only starts where the walk
               by characters would look: never inside a well-formed character */
            const uint8_t *p = memchr(t + pos, lit[0], n - pos);
            if (!p)
                break;
            pos = (size_t)(p - t);
            r = n - pos >= litlen && !memcmp(t + pos, lit, litlen) ? (long)(pos + litlen)
                                                                   : GM_PRE_NOMATCH;
        } else {
            r = n - pos >= litlen && !memcmp(t + pos, lit, litlen) ? (long)(pos + litlen)
                                                                   : GM_PRE_NOMATCH;
        }
        if (r > (long)pos) {
            if ((prev < pos && emit(C, t, prev, pos - prev, false)) ||
                emit(C, t, pos, (size_t)r - pos, true))
                return -1;
            prev = pos = (size_t)r;
        } else {
            pos += gm_pre_char_len(t, n, pos);
        }
    }
    if (prev < n && emit(C, t, prev, n - prev, false))
        return -1;
    return 0;
}

static int collect(enc_ctx *C, const uint8_t *t, size_t off, size_t len, bool matched)
{
    (void)t;
    return push_span(C->m, &C->w->found, off, len, matched);
}

/* each_match into C->w->found. */
static int find_matches(enc_ctx *C, const gm_pre_regex *re, const char *lit, size_t litlen,
                        const uint8_t *t, size_t n)
{
    C->w->found.n = 0;
    return each_match(C, re, lit, litlen, t, n, collect);
}

/*
 * One Split step: the spans of piece `p` (offsets into the same text) are
 * appended to dst, as tokenizers' SplitDelimiterBehavior defines them.
 */
static int split_piece(enc_ctx *C, const gm_enc_pre *k, const uint8_t *text, span p,
                       span_vec *dst)
{
    if (find_matches(C, k->re, k->lit, k->litlen, text + p.off, p.len))
        return -1;
    span_vec *f = &C->w->found;
    if (k->invert)
        for (size_t i = 0; i < f->n; i++)
            f->v[i].matched = !f->v[i].matched;
    size_t first = dst->n;
    bool prev_match = false;
    switch (k->behavior) {
    case GM_SPLIT_ISOLATED:
    case GM_SPLIT_REMOVED:
        for (size_t i = 0; i < f->n; i++)
            if (!(k->behavior == GM_SPLIT_REMOVED && f->v[i].matched) &&
                push_span(C->m, dst, p.off + f->v[i].off, f->v[i].len, false))
                return -1;
        return 0;
    case GM_SPLIT_PREVIOUS:
    case GM_SPLIT_CONTIGUOUS:
        for (size_t i = 0; i < f->n; i++) {
            bool m = f->v[i].matched;
            bool join = k->behavior == GM_SPLIT_PREVIOUS ? m && !prev_match : m == prev_match;
            if (join && dst->n > first)
                dst->v[dst->n - 1].len = p.off + f->v[i].off + f->v[i].len - dst->v[dst->n - 1].off;
            else if (push_span(C->m, dst, p.off + f->v[i].off, f->v[i].len, false))
                return -1;
            prev_match = m;
        }
        return 0;
    default: /* GM_SPLIT_NEXT: the same from the right, then reversed */
        for (size_t i = f->n; i-- > 0;) {
            bool m = f->v[i].matched;
            if (m && !prev_match && dst->n > first) {
                span *last = &dst->v[dst->n - 1];
                last->len += last->off - (p.off + f->v[i].off);
                last->off = p.off + f->v[i].off;
            } else if (push_span(C->m, dst, p.off + f->v[i].off, f->v[i].len, false)) {
                return -1;
            }
            prev_match = m;
        }
        for (size_t a = first, b = dst->n; a + 1 < b; a++, b--) {
            span t = dst->v[a];
            dst->v[a] = dst->v[b - 1];
            dst->v[b - 1] = t;
        }
        return 0;
    }
}

/* The GPT-2 byte map as UTF-8: byte b is gpt2[b].s[0..n). */
typedef struct gpt2_char {
    uint8_t s[2], n;
} gpt2_char;

static gpt2_char gpt2_of(unsigned b)
{
    static const uint16_t extra_base = 256;
    unsigned cp;
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) {
        cp = b;
    } else {
        unsigned k = b <= 32 ? b : b <= 160 ? 33 + (b - 127) : 33 + 34;
        cp = extra_base + k;
    }
    gpt2_char c;
    if (cp < 0x80) {
        c.s[0] = (uint8_t)cp;
        c.n = 1;
    } else {
        c.s[0] = (uint8_t)(0xc0 | cp >> 6);
        c.s[1] = (uint8_t)(0x80 | (cp & 0x3f));
        c.n = 2;
    }
    return c;
}

/* Maps t[0..n) through the GPT-2 byte map onto the end of out. */
static int byte_map(gm_mem *m, const uint8_t *t, size_t n, gm_bytevec *out)
{
    if (gm_vec_reserve(m, out, out->n + 2 * n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        gpt2_char c = gpt2_of(t[i]);
        out->v[out->n++] = c.s[0];
        if (c.n == 2)
            out->v[out->n++] = c.s[1];
    }
    return 0;
}

/* A ByteLevel step on piece p of text: spans of the mapped text appended to dst in out. */
static int byte_level_piece(enc_ctx *C, const gm_enc_pre *k, const uint8_t *text, span p,
                            gm_bytevec *out, span_vec *dst)
{
    const uint8_t *t = text + p.off;
    size_t n = p.len;
    if (k->add_prefix_space && (n == 0 || t[0] != ' ')) {
        C->w->tmp.n = 0;
        if (put(C->m, &C->w->tmp, " ", 1) || put(C->m, &C->w->tmp, t, n))
            return -1;
        t = C->w->tmp.v;
        n = C->w->tmp.n;
    }
    if (!k->re) {
        size_t at = out->n;
        return byte_map(C->m, t, n, out) || push_span(C->m, dst, at, out->n - at, false);
    }
    if (find_matches(C, k->re, k->lit, k->litlen, t, n))
        return -1;
    for (size_t i = 0; i < C->w->found.n; i++) {
        size_t at = out->n;
        if (byte_map(C->m, t + C->w->found.v[i].off, C->w->found.v[i].len, out) ||
            push_span(C->m, dst, at, out->n - at, false))
            return -1;
    }
    return 0;
}

/* Runs the pre-tokenizer steps [from, npre) on s[0..n) and the model on each word. */
static int run_steps(enc_ctx *C, size_t from, const uint8_t *s, size_t n)
{
    const gm_encoder *e = C->e;
    gm_enc_work *W = C->w;
    const uint8_t *text = s;
    span_vec *cur = &W->spans[0], *next = &W->spans[1];
    cur->n = 0;
    if (push_span(C->m, cur, 0, n, false))
        return -1;
    int buf = 0;
    for (size_t i = from; i < e->npre; i++) {
        const gm_enc_pre *k = &e->pre[i];
        next->n = 0;
        if (k->kind == GM_PRE_SPLIT) {
            for (size_t j = 0; j < cur->n; j++)
                if (split_piece(C, k, text, cur->v[j], next))
                    return -1;
        } else {
            gm_bytevec *out = &W->text[buf];
            out->n = 0;
            for (size_t j = 0; j < cur->n; j++)
                if (byte_level_piece(C, k, text, cur->v[j], out, next))
                    return -1;
            text = out->v;
            buf ^= 1;
        }
        span_vec *t = cur;
        cur = next;
        next = t;
    }
    for (size_t j = 0; j < cur->n; j++)
        if (gm_bpe_word(e, text + cur->v[j].off, cur->v[j].len, &W->bpe, C->out))
            return -1;
    return 0;
}

/* The ids of a piece of the first pre-tokenizer step: the later steps and the model. */
static int piece_ids(enc_ctx *C, const uint8_t *w, size_t n)
{
    if (C->e->npre == 1)
        return gm_bpe_word(C->e, w, n, &C->w->bpe, C->out);
    return run_steps(C, 1, w, n);
}

/* A whole word of a tokenizer without pre-tokenizer. */
static int word_ids(enc_ctx *C, const uint8_t *w, size_t n)
{
    return gm_bpe_word(C->e, w, n, &C->w->bpe, C->out);
}

/* A chunk of such a word (note [chunks]): its merges alone. */
static int chunk_ids(enc_ctx *C, const uint8_t *w, size_t n)
{
    return gm_bpe_merges(C->e, w, n, &C->w->bpe, C->out);
}

typedef int (*ids_fn)(enc_ctx *C, const uint8_t *w, size_t n);

/* ids(w) through the word cache (note [word cache]). */
static int cached(enc_ctx *C, const uint8_t *w, size_t n, ids_fn ids)
{
    if (!gm_word_cache_fits(n))
        return ids(C, w, n);
    gm_word_cache *cache = &C->w->cache;
    uint32_t h = gm_word_cache_hash(w, n);
    const gm_wc_slot *hit = gm_word_cache_get(cache, w, n, h);
    gm_u32vec *out = C->out;
    if (hit) {
        if (gm_vec_reserve(C->m, out, out->n + hit->nids))
            return -1;
        for (size_t k = 0; k < hit->nids; k++) /* a few ids: a loop beats a call */
            out->v[out->n++] = hit->ids[k];
        return 0;
    }
    size_t at = out->n;
    if (ids(C, w, n))
        return -1;
    /* (a word may give no ids: dropped characters; out may then have no array) */
    gm_word_cache_put(cache, w, n, h, out->n > at ? out->v + at : NULL, out->n - at);
    return 0;
}

/* gm_utf8_decode(s + i, n - i, cp), with the three-byte case (U+2581, CJK) inline. */
static inline size_t char_at(const uint8_t *s, size_t n, size_t i, uint32_t *cp)
{
    uint8_t c = s[i];
    if (c >= 0xe0 && c < 0xf0 && n - i >= 3 && (s[i + 1] & 0xc0) == 0x80 &&
        (s[i + 2] & 0xc0) == 0x80) {
        uint32_t v = (uint32_t)(c & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 |
                     (s[i + 2] & 0x3f);
        if (v >= 0x800 && (v < 0xd800 || v > 0xdfff)) {
            *cp = v;
            return 3;
        }
    }
    return gm_utf8_decode(s + i, n - i, cp);
}

/* The one word of a tokenizer without pre-tokenizer: cut into chunks (note [chunks]). */
static int encode_word(enc_ctx *C, const uint8_t *w, size_t n)
{
    const gm_encoder *e = C->e;
    if (!e->chunk)
        return cached(C, w, n, word_ids);
    if (e->ignore_merges) {
        size_t k = gm_json_vocab_find(&e->vocab, (const char *)w, n);
        if (k != SIZE_MAX)
            return gm_vec_push(C->m, C->out, (uint32_t)e->vocab.ids[k]);
    }
    size_t start = 0;
    uint32_t prev = UINT32_MAX; /* the previous character, when it is a one-character token */
    for (size_t i = 0; i < n;) {
        uint32_t cp = w[i];
        size_t len = 1;
        if (cp >= 0x80 && (len = char_at(w, n, i, &cp)) == 0) {
            len = 1;
            cp = UINT32_MAX; /* an ill-formed byte */
        }
        if (cp != UINT32_MAX && gm_enc_char_id(e, cp) == UINT32_MAX)
            cp = UINT32_MAX;
        if (cp != UINT32_MAX && prev != UINT32_MAX && !gm_enc_pair(e, prev, cp)) {
            if (cached(C, w + start, i - start, chunk_ids))
                return -1;
            start = i;
        }
        prev = cp;
        i += len;
    }
    return cached(C, w + start, n - start, chunk_ids);
}

/* A span of the first pre-tokenizer step, as a piece through the cache. */
static int cached_piece(enc_ctx *C, const uint8_t *t, size_t off, size_t len, bool matched)
{
    (void)matched;
    return cached(C, t + off, len, piece_ids);
}

/*
 * Pre-tokenizes s[0..n) and encodes every word with the model: the first
 * step runs on the whole segment, the rest (and the model) on each of its
 * pieces through the word cache, a piece's ids depending on its bytes
 * alone (note [word cache]).
 */
static int encode_segment(enc_ctx *C, const uint8_t *s, size_t n)
{
    const gm_encoder *e = C->e;
    gm_enc_work *W = C->w;
    if (n == 0)
        return 0;
    if (e->npre == 0)
        return encode_word(C, s, n);
    span whole = {0, n, false};
    const gm_enc_pre *k = &e->pre[0];
    const uint8_t *text = s;
    W->spans0.n = 0;
    if (k->kind == GM_PRE_SPLIT && k->behavior == GM_SPLIT_ISOLATED)
        /* every match and every gap is a piece: straight to the cache, no spans */
        return each_match(C, k->re, k->lit, k->litlen, s, n, cached_piece);
    if (k->kind == GM_PRE_SPLIT) {
        if (split_piece(C, k, s, whole, &W->spans0))
            return -1;
    } else {
        W->text0.n = 0;
        if (byte_level_piece(C, k, s, whole, &W->text0, &W->spans0))
            return -1;
        text = W->text0.v;
    }
    for (size_t j = 0; j < W->spans0.n; j++)
        if (cached(C, text + W->spans0.v[j].off, W->spans0.v[j].len, piece_ids))
            return -1;
    return 0;
}

/* ------------------------------------------------------------------------
 * Added tokens
 * ------------------------------------------------------------------------ */

/* The start of the whitespace run that ends at s[end] (char::is_whitespace). */
static size_t ws_run_start(const uint8_t *s, size_t end)
{
    while (end > 0) {
        size_t b = end - 1;
        while (b > 0 && (s[b] & 0xc0) == 0x80 && end - b < 4)
            b--;
        uint32_t cp;
        if (gm_utf8_decode(s + b, end - b, &cp) != end - b || !gm_pre_is_space(cp))
            break;
        end = b;
    }
    return end;
}

/* The length of the whitespace run at s[0..n). */
static size_t ws_run_len(const uint8_t *s, size_t n)
{
    size_t i = 0;
    uint32_t cp;
    size_t k;
    while (i < n && (k = gm_utf8_decode(s + i, n - i, &cp)) > 0 && gm_pre_is_space(cp))
        i += k;
    return i;
}

/* Is the character before s[at] (or from s[at]) a word character (letter or digit)? */
static bool word_char_at(const uint8_t *s, size_t n, size_t at, bool before)
{
    size_t b = at;
    if (before) {
        if (at == 0)
            return false;
        b = at - 1;
        while (b > 0 && (s[b] & 0xc0) == 0x80 && at - b < 4)
            b--;
    } else if (at >= n) {
        return false;
    }
    uint32_t cp;
    if (!gm_utf8_decode(s + b, n - b, &cp))
        return false;
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
           (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

/* The longest pattern of t starting at s[pos]: its added[] index (and *len), or -1. */
static int32_t longest_at(const gm_enc_trie *t, const uint8_t *s, size_t n, size_t pos,
                          size_t *len)
{
    int32_t best = -1;
    uint32_t at = 0;
    for (size_t i = pos; i < n; i++) {
        uint32_t c = t->nodes[at].child;
        while (c && t->nodes[c].byte != s[i])
            c = t->nodes[c].sibling;
        if (!c)
            break;
        at = c;
        if (t->nodes[at].token >= 0) {
            best = t->nodes[at].token;
            *len = i + 1 - pos;
        }
    }
    return best;
}

typedef int (*segment_fn)(enc_ctx *C, const uint8_t *s, size_t n);

/*
 * Cuts the added tokens of trie t out of s[0..n) as tokenizers'
 * AddedVocabulary does (leftmost-longest, then the flags); the text between
 * goes to `rest`, the tokens to the output.
 */
static int split_added(enc_ctx *C, const gm_enc_trie *t, const uint8_t *s, size_t n,
                       segment_fn rest)
{
    const gm_encoder *e = C->e;
    size_t start_offset = 0, pos = 0;
    if (!t->nodes)
        return rest(C, s, n);
    while (pos < n) {
        if (t->only_first >= 0) {
            const uint8_t *p = memchr(s + pos, t->only_first, n - pos);
            if (!p)
                break;
            pos = (size_t)(p - s);
        } else if (!((t->first[s[pos] >> 5] >> (s[pos] & 31)) & 1)) {
            pos++;
            continue;
        }
        size_t len = 0;
        int32_t k = longest_at(t, s, n, pos, &len);
        if (k < 0) {
            pos++;
            continue;
        }
        const gm_enc_added *a = &e->added[k];
        size_t start = pos, stop = pos + len;
        pos = stop; /* the next search starts after this match, taken or not */
        if (a->special && !C->parse_special)
            continue;
        if (a->single_word &&
            (word_char_at(s, n, start, true) || word_char_at(s, n, stop, false)))
            continue;
        if (a->lstrip) {
            size_t ns = ws_run_start(s, start);
            start = ns > start_offset ? ns : start_offset;
        }
        if (a->rstrip)
            stop += ws_run_len(s + stop, n - stop);
        if (start < start_offset)
            start = start_offset;
        if (start_offset < start && rest(C, s + start_offset, start - start_offset))
            return -1;
        if (gm_vec_push(C->m, C->out, a->id))
            return -1;
        start_offset = stop;
        if (pos < stop)
            pos = stop;
    }
    return start_offset < n ? rest(C, s + start_offset, n - start_offset) : 0;
}

/* A piece of normalized text: cut the normalized added tokens, encode the rest. */
static int normalized_segment(enc_ctx *C, const uint8_t *s, size_t n)
{
    return split_added(C, &C->e->norm_trie, s, n, encode_segment);
}

/* A piece of raw text between added tokens: normalize, then go on. */
static int raw_segment(enc_ctx *C, const uint8_t *s, size_t n)
{
    C->w->norm.n = 0;
    if (normalize(C, s, n, &C->w->norm))
        return -1;
    /* normalized_segment does not touch C->w->norm, so it may read from it */
    return normalized_segment(C, C->w->norm.v, C->w->norm.n);
}

gm_status gm_encoder_run(const gm_encoder *e, const uint8_t *text, size_t len,
                         bool parse_special, gm_u32vec *out, gm_error *err)
{
    if (!len)
        return GM_OK;
    enc_ctx C;
    memset(&C, 0, sizeof C);
    C.e = e;
    C.m = e->mem;
    C.parse_special = parse_special;
    C.out = out;
    C.w = work_take(e);
    if (!C.w)
        return gm_mem_fail(e->mem, err, "encoding the text");
    C.w->rx.budget = GM_PRE_BUDGET(len);
    int rc = split_added(&C, &e->raw_trie, text, len, raw_segment);
    work_give_back(e, C.w);
    if (!rc)
        return GM_OK;
    if (C.st == GM_ERR_LIMIT)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "encoding: a pre-tokenizer or normalizer regex backtracked past "
                            "its step budget");
    return gm_mem_fail(e->mem, err, "encoding the text");
}
