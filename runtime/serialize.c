/*
 * Compiled files (.gmc): everything a compiled grammar needs to produce
 * masks, without the grammar or tokenizer files.
 *
 * note [compiled file format]
 *   header (40 bytes): magic "GRAMASK\x1a", u32 version, u32 byte-order mark
 *   0x01020304 (written in the writer's order: a foreign-endian file shows
 *   0x04030201 and is refused), u64 payload length, u64 checksum of the
 *   payload (gm_hash_bytes), u32 flags, u32 reserved.
 *   payload: sections, each a u32 tag then its fields; arrays are a u32 or
 *   u64 count then the elements, those of 4- and 8-byte elements after zero
 *   padding to a multiple of their size from the file's start (so a mapped
 *   file's arrays are used in place: note [mapped compiled files],
 *   base/mapping.h). VOCB (vocabulary), TRIE (its trie as vocab/trie.h
 *   lays it out, 16-byte nodes), then for the LALR
 *   engine LEXR (lexing DFA and its backtracking states, lexer/lexer.h; the
 *   transitions in the form the lexer keeps them: 32-bit, or 16-bit rows
 *   and patch cells), LRTB (LALR tables and their unit chains), under the
 *   contextual lexer CTXL (each LR state's
 *   lexer set, then every contextual lexer as LEXR lays out a lexer, without
 *   the layers), PROF (the basic spanner's token-class profiles built so
 *   far; the contextual spanners' are rebuilt at load), FILT (the basic
 *   spanner's first-byte filters, all of them); for
 *   the Earley engine EARL (u64 length, then the rule automata as
 *   gm_egrammar_write lays them out; earley/engine.h). The derived tables
 *   (trie, unit chains, lexer rows, filters) are in the file since format 9
 *   so that the processes mapping it share them (bench/results/
 *   shared_load.md), and each is checked against what it derives from
 *   (gm_trie_check, gm_lr_unit_chains_check, every lexer move,
 *   gm_tokpool_filter_matches) instead of trusted. The Earley mask caches
 *   and the profiles' class records are rebuilt at load (lazily, or all of
 *   them with an eager load).
 * Loading checks the header, the checksum, and then every count and index
 * against the arrays it points into, so a corrupt or hostile file fails with
 * GM_ERR_FORMAT instead of reading out of bounds.
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/blocks.h"
#include "runtime/ctx_spanners.h"
#include "runtime/objects.h"
#include "parser/contextual.h"
#include "spanner/profile.h"
#include "spanner/tokpool.h"
#include "base/error.h"
#include "base/file.h"
#include "base/mapping.h"
#include "base/hash.h"
#include "base/vec.h"

#define GMC_MAGIC "GRAMASK\x1a"
enum {
    GMC_VERSION = GM_COMPILED_FORMAT,
    GMC_BYTE_ORDER = 0x01020304,
    GMC_HEADER = GM_COMPILED_HEADER,
    TAG_VOCB = 0x42434f56, /* "VOCB" little-endian */
    TAG_LEXR = 0x5258454c,
    TAG_LRTB = 0x4254524c,
    TAG_PROF = 0x464f5250,
    TAG_EARL = 0x4c524145, /* "EARL" */
    TAG_CTXL = 0x4c585443, /* "CTXL" */
    TAG_TRIE = 0x45495254, /* "TRIE" */
    TAG_FILT = 0x544c4946  /* "FILT" */
};

/* Trie nodes go to the file as they lie in memory (note [mapped compiled files]). */
_Static_assert(sizeof(gm_trie_node) == 16 && offsetof(gm_trie_node, byte) == 14,
               "a trie node is 16 bytes in compiled files");

/* ---- writing ------------------------------------------------------------- */

typedef struct writer {
    gm_mem *mem;
    uint8_t *buf;
    size_t len, cap;
    int failed;
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->failed || n == 0)
        return;
    if (w->len + n > w->cap && gm_vec_grow_(w->mem, (void **)&w->buf, &w->cap, w->len + n, 1)) {
        w->failed = 1;
        return;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u32(writer *w, uint32_t x) { put(w, &x, 4); }

/* Zeros up to a multiple of `align` bytes from the file's start. */
static void pad(writer *w, size_t align)
{
    static const uint8_t zeros[16]; /* align is at most 16 (trie nodes) */
    put(w, zeros, (align - w->len % align) % align);
}

/* An array of count elements of `size` bytes, aligned to its element size in the file
   (note [mapped compiled files]: the loader points into a mapped file). */
static void put_array(writer *w, const void *p, size_t count, size_t size)
{
    pad(w, size);
    put(w, p, count * size);
}

static void put_vocab(writer *w, const gm_vocab_data *v)
{
    put_u32(w, TAG_VOCB);
    put_u32(w, v->size);
    put_u32(w, v->ntokenizer);
    put_u32(w, v->strip_leading);
    put_u32(w, v->kind);
    put_u32(w, v->offsets[v->size]);
    put_array(w, v->offsets, (size_t)v->size + 1, 4);
    put(w, v->bytes, v->offsets[v->size]);
    put(w, v->flags, v->size);
    put_u32(w, v->neos);
    put_array(w, v->eos, v->neos, 4);
}

/* The vocabulary's trie (vocab/trie.h), used in place when the file is mapped. */
static void put_trie(writer *w, const gm_trie *t)
{
    put_u32(w, TAG_TRIE);
    put_u32(w, t->nnodes);
    put_u32(w, t->ntokens);
    put_u32(w, t->max_depth);
    gm_trie_node chunk[256];
    size_t n = 0;
    pad(w, sizeof *chunk);
    memset(chunk, 0, sizeof chunk); /* the padding byte of each node is zero in the file */
    for (uint32_t i = 0; i < t->nnodes; i++) {
        gm_trie_node *to = &chunk[n++];
        to->skip = t->nodes[i].skip;
        to->tok_begin = t->nodes[i].tok_begin;
        to->tok_end = t->nodes[i].tok_end;
        to->depth = t->nodes[i].depth;
        to->byte = t->nodes[i].byte;
        if (n == sizeof chunk / sizeof *chunk) {
            put(w, chunk, sizeof chunk);
            n = 0;
        }
    }
    put(w, chunk, n * sizeof *chunk);
    put_array(w, t->tokens, t->ntokens, 4);
}

/*
 * The transitions in the form the lexer keeps them (lexer/lexer.h, note
 * [transition rows]), so a mapped file's lexers are used in place: form 0,
 * the 32-bit table; form 1, the 16-bit rows (u32 count of base rows, 0
 * when each state has its own, the rows, each state's row) and the patch
 * cells (u32 comb size, 0 when none, each state's place in it, the comb).
 */
static void put_lexer_next(writer *w, const gm_lexer *lx)
{
    put_u32(w, lx->next ? 0 : 1);
    if (lx->next) {
        put_array(w, lx->next, (size_t)lx->nstates * lx->nclasses, 4);
        return;
    }
    uint32_t nrows = 0, ncomb = 0;
    for (uint32_t q = 0; lx->row16 && q < lx->nstates; q++)
        if (lx->row16[q] + 1u > nrows)
            nrows = lx->row16[q] + 1u;
    for (uint32_t q = 0; lx->patch && q < lx->nstates; q++)
        if (lx->patch_at[q] + lx->nclasses > ncomb)
            ncomb = lx->patch_at[q] + lx->nclasses;
    put_u32(w, nrows);
    put_array(w, lx->next16, (size_t)(nrows ? nrows : lx->nstates) * lx->nclasses, 2);
    if (nrows)
        put_array(w, lx->row16, lx->nstates, 2);
    put_u32(w, ncomb);
    if (ncomb) {
        put_array(w, lx->patch_at, lx->nstates, 4);
        put_array(w, lx->patch, ncomb, 4);
    }
}

/* A lexer's tables and terminal names (the basic lexer's and each contextual one's). */
static void put_lexer_body(writer *w, const gm_lexer *lx)
{
    put_u32(w, lx->nstates);
    put_u32(w, lx->nclasses);
    put_u32(w, lx->nterminals);
    put_u32(w, lx->prod_words);
    put(w, lx->byte_class, 256);
    put_lexer_next(w, lx);
    put_array(w, lx->accept, lx->nstates, 4);
    put_array(w, lx->prod, (size_t)lx->nstates * lx->prod_words, 8);
    put_u32(w, lx->ndfa);
    put_array(w, lx->bt_main, lx->nstates - lx->ndfa, 4);
    put_array(w, lx->bt_fallback, lx->nstates - lx->ndfa, 4);
    put_array(w, lx->bt_relex, lx->nstates - lx->ndfa, 4);
    put_u32(w, lx->ncond);
    if (lx->ncond) {
        put_array(w, lx->cond, lx->ndfa, 4);
        put_array(w, lx->cond_rows, (size_t)lx->ncond * (lx->nclasses + 1), 4);
    }
    for (uint32_t t = 0; t < lx->nterminals; t++) {
        uint32_t flags = (lx->terminals[t].ignored ? 1u : 0) |
                         (lx->terminals[t].declared_only ? 2u : 0);
        uint32_t n = (uint32_t)strlen(lx->terminals[t].name);
        put_u32(w, flags);
        put_u32(w, n);
        put(w, lx->terminals[t].name, n);
    }
}

static void put_lexer(writer *w, const gm_lexer *lx, const gm_postlex *pl)
{
    put_u32(w, TAG_LEXR);
    put_lexer_body(w, lx);
    /* 1: semicolon insertion; 2: with note [offending-token insertion] (its list follows) */
    put_u32(w, pl->insertion ? 1u + pl->offending : 0u);
    if (pl->insertion) {
        put_u32(w, pl->insert);
        put(w, pl->at, lx->nterminals);
        put(w, pl->after, lx->nterminals);
        if (pl->offending) {
            put(w, pl->try_before, lx->nterminals);
            put_array(w, pl->renamed, lx->nterminals, 4);
        }
    }
    put_u32(w, pl->indentation);
    if (pl->indentation) {
        put_u32(w, pl->newline);
        put_u32(w, pl->indent);
        put_u32(w, pl->dedent);
        put_u32(w, pl->tab_width);
        put_u32(w, pl->line_start);
        put(w, pl->bracket, lx->nterminals);
    }
}

static void put_lr(writer *w, const gm_lr_table *t)
{
    put_u32(w, TAG_LRTB);
    put_u32(w, t->nstates);
    put_u32(w, t->nterms);
    put_u32(w, t->eof);
    put_u32(w, t->nnonterms);
    put_u32(w, t->nprods);
    put_array(w, t->prod_lhs, t->nprods, 4);
    put_array(w, t->prod_len, t->nprods, 4);
    put_array(w, t->action, (size_t)t->nstates * t->nterms, 4);
    put_array(w, t->go, (size_t)t->nstates * t->nnonterms, 4);
    /* The unit chains (note [unit chains]), used in place instead of built per process. */
    put_u32(w, t->unit_row != NULL);
    if (t->unit_row) {
        put_array(w, t->unit_row, (size_t)t->nstates * t->nnonterms, 4);
        put_u32(w, t->nunit_rows);
        put_array(w, t->unit_go, (size_t)t->nunit_rows * t->nterms, 4);
    }
}

static void put_tokset(writer *w, const gm_tokset *s, uint32_t nbits)
{
    put_u32(w, s->kind);
    put_u32(w, s->n);
    put_u32(w, s->count);
    if (s->kind == GM_TOKSET_LIST || s->kind == GM_TOKSET_COMPLEMENT)
        put_array(w, s->u.ids, s->n, 4);
    else if (s->kind == GM_TOKSET_BITSET)
        put_array(w, s->u.words, GM_MASK_WORDS(nbits), 4);
}

static void put_profiles(writer *w, gm_spanner *sp)
{
    put_u32(w, TAG_PROF);
    uint32_t n = 0;
    for (uint32_t i = 0; i < sp->nslots; i++)
        n += atomic_load(&sp->profiles[i]) != NULL;
    put_u32(w, n);
    for (uint32_t i = 0; i < sp->nslots; i++) {
        const gm_profile *p = atomic_load(&sp->profiles[i]);
        if (!p)
            continue;
        uint32_t q = p->state;
        size_t nseq = 0;
        for (uint32_t c = 0; c < p->nclasses; c++)
            nseq += p->classes[c].len;
        put_u32(w, q);
        put_u32(w, p->nclasses);
        put_u32(w, (uint32_t)nseq);
        put_array(w, p->seqs, nseq, 4);
        for (uint32_t c = 0; c < p->nclasses; c++) {
            put_u32(w, p->classes[c].len);
            put_u32(w, p->classes[c].prod);
            put_tokset(w, p->classes[c].tokens, sp->nbits);
        }
    }
}

/*
 * The basic spanner's first-byte filters (note [first-byte split]), each
 * built now if it was not yet, in the order of its split ids: a mapped
 * file's processes use them in place instead of each building them.
 */
static gm_status put_filters(writer *w, gm_spanner *sp, gm_error *err)
{
    put_u32(w, TAG_FILT);
    put_u32(w, sp->nsplit0);
    for (uint32_t id = 0; id < sp->nsplit0; id++) {
        const uint32_t *bits = gm_spanner_split0(sp, id, err);
        if (!bits)
            return err ? err->code : GM_ERR_NOMEM;
        put_array(w, bits, GM_MASK_WORDS(sp->nbits), 4);
    }
    return GM_OK;
}

/*
 * The contextual lexers (note [contextual lexer]): every lexer is built
 * now (they are built lazily, and a loaded grammar has no cfg to build them
 * from), then written with the set of each LR state. The contextual
 * spanners' profiles are not written: they are built again on first use
 * (or all at an eager load).
 */
static gm_status put_ctx(writer *w, gm_ctx_lexers *cl, gm_error *err)
{
    for (uint32_t k = 0; k < cl->nsets; k++) {
        const gm_lexer *lx;
        gm_status st = gm_ctx_lexers_lexer(cl, k, &lx, err);
        if (st != GM_OK)
            return st;
    }
    put_u32(w, TAG_CTXL);
    put_u32(w, cl->lark);
    put_u32(w, cl->nstates_total);
    put_u32(w, cl->nsets);
    put_u32(w, cl->words);
    put_array(w, cl->set_of, cl->nstates_total, 4);
    put_array(w, cl->sets, (size_t)cl->nsets * cl->words, 8);
    for (uint32_t k = 0; k < cl->nsets; k++)
        put_lexer_body(w, atomic_load(&cl->lexers[k]));
    return GM_OK;
}

/* The whole file (header and payload) into w->buf. */
static gm_status write_compiled(const gm_compiled *c, writer *w, gm_error *err)
{
    if (c->ctd) /* a loaded grammar has no cfg to build the layer's tables from */
        return gm_error_set(err, GM_ERR_UNSUPPORTED, "saving a compiled grammar with the "
                            "typedef-name layer (C): compile it from the grammar instead");
    uint8_t header[GM_COMPILED_HEADER] = {0};
    put(w, header, sizeof header); /* filled at the end */
    put_vocab(w, c->vocab->data);
    put_trie(w, c->vocab->trie);
    if (c->grammar->engine == GM_ENGINE_EARLEY) {
        gm_strbuf eb;
        gm_strbuf_init(&eb, w->mem);
        gm_egrammar_write(c->grammar->eg, &eb);
        w->failed |= eb.failed;
        uint64_t n = eb.n;
        put_u32(w, TAG_EARL);
        put(w, &n, 8);
        put(w, eb.s, eb.n);
        gm_strbuf_free(&eb);
    } else {
        put_lexer(w, c->grammar->lexer, &c->grammar->postlex);
        put_lr(w, c->grammar->lr);
        if (c->grammar->ctx) {
            gm_status st = put_ctx(w, c->grammar->ctx, err);
            if (st != GM_OK)
                return st;
        }
        put_profiles(w, c->spanner);
        gm_status st = put_filters(w, c->spanner, err);
        if (st != GM_OK)
            return st;
    }
    if (w->failed)
        return gm_mem_fail(w->mem, err, "the compiled file");
    gm_compiled_header(w->buf, w->buf + GM_COMPILED_HEADER, w->len - GM_COMPILED_HEADER);
    return GM_OK;
}

gm_status gm_compiled_save_bytes(const gm_compiled *c, uint8_t **out, size_t *len, gm_error *err)
{
    if (!c || !out || !len)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_compiled_save_bytes: NULL argument");
    *out = NULL;
    *len = 0;
    writer w = {.mem = (gm_mem *)&c->mem};
    gm_status st = write_compiled(c, &w, err);
    if (st != GM_OK) {
        gm_mem_free(w.mem, w.buf);
        return st;
    }
    *out = w.buf;
    *len = w.len;
    return GM_OK;
}

void gm_compiled_free_bytes(const gm_compiled *c, uint8_t *bytes)
{
    if (c)
        gm_mem_free((gm_mem *)&c->mem, bytes);
}

gm_status gm_compiled_load_bytes(const void *bytes, size_t len, const gm_compile_options *opts,
                                 gm_compiled **out, gm_error *err)
{
    if (!out || (!bytes && len))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_compiled_load_bytes: NULL argument");
    return gm_compiled_load_buffer(bytes, len, "the compiled bytes", opts, out, err);
}

gm_status gm_compiled_save(const gm_compiled *c, const char *path, gm_error *err)
{
    if (!c || !path)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_compiled_save: NULL argument");
    gm_mem *m = (gm_mem *)&c->mem;
    writer w = {.mem = m};
    gm_status st = write_compiled(c, &w, err);
    if (st != GM_OK) {
        gm_mem_free(m, w.buf);
        return st;
    }
    /* A new file renamed over the old one: processes that have the old one loaded keep
       their mapping of it intact (note [mapped compiled files]). A path that is not a
       regular file (a device, a pipe) is written in place. */
    struct stat sb;
    bool in_place = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
    size_t plen = strlen(path);
    char *tmp = in_place ? NULL : gm_mem_alloc(m, plen + 16);
    if (!in_place && !tmp) {
        gm_mem_free(m, w.buf);
        return gm_mem_fail(m, err, "the compiled file's name");
    }
    FILE *f = NULL;
    if (in_place) {
        f = fopen(path, "wb");
    } else {
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".tmp-XXXXXX", 12);
        int fd = mkstemp(tmp);
        if (fd < 0) {
            gm_mem_free(m, tmp); /* nothing made: nothing to remove */
            tmp = NULL;
        } else if (!(f = fdopen(fd, "wb"))) {
            close(fd);
        }
    }
    int ok = f && fwrite(w.buf, 1, w.len, f) == w.len;
    int why = errno; /* the system's reason, before fclose can change it */
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        why = errno;
    }
    if (ok && tmp) {
        /* mkstemp made it 0600: the mode a plain fopen would have given. */
        mode_t mask = umask(0);
        umask(mask);
        if (chmod(tmp, 0666 & ~mask) != 0 || rename(tmp, path) != 0) {
            ok = 0;
            why = errno;
        }
    }
    if (!ok && tmp)
        unlink(tmp);
    gm_mem_free(m, tmp);
    gm_mem_free(m, w.buf);
    if (!ok)
        return gm_error_set(err, GM_ERR_IO, "cannot write the compiled file %s: %s", path,
                            strerror(why));
    return GM_OK;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t left;
    const uint8_t *base;      /* the file's first byte (arrays are aligned from it) */
    bool borrow;              /* arrays point into the file (a mapping) instead of copies */
    const char *path;
    gm_error *err;
    int bad;                  /* an error was recorded */
} reader;

static int bad(reader *r, const char *what)
{
    if (!r->bad)
        gm_error_set(r->err, GM_ERR_FORMAT, "%s: corrupt compiled file: %s", r->path, what);
    r->bad = 1;
    return -1;
}

static int get(reader *r, void *out, size_t n, const char *what)
{
    if (r->bad)
        return -1;
    if (n > r->left)
        return bad(r, what);
    memcpy(out, r->p, n);
    r->p += n;
    r->left -= n;
    return 0;
}

static uint32_t get_u32(reader *r, const char *what)
{
    uint32_t x = 0;
    get(r, &x, 4, what);
    return x;
}

/*
 * Reads count*size bytes, after the padding put_array wrote, into a new
 * array from m, or, when the file is mapped, points into it (note [mapped
 * compiled files]; an empty array is always m's own). NULL and r->bad set
 * on failure.
 */
static void *get_array(reader *r, gm_mem *m, size_t count, size_t size, const char *what)
{
    if (r->bad)
        return NULL;
    size_t skip = size > 1 ? (size - (size_t)(r->p - r->base) % size) % size : 0;
    if (skip > r->left) {
        bad(r, what);
        return NULL;
    }
    for (size_t i = 0; i < skip; i++)
        if (r->p[i]) {
            bad(r, "nonzero padding");
            return NULL;
        }
    r->p += skip;
    r->left -= skip;
    if (size && count > r->left / size) {
        bad(r, what);
        return NULL;
    }
    size_t bytes = count * size;
    if (r->borrow && bytes) {
        void *p = (void *)(uintptr_t)r->p; /* read-only pages: the loader only reads them */
        r->p += bytes;
        r->left -= bytes;
        return p;
    }
    void *p = gm_mem_alloc(m, bytes ? bytes : 1);
    if (!p) {
        gm_mem_fail(m, r->err, "a loaded compiled grammar");
        r->bad = 1;
        return NULL;
    }
    get(r, p, count * size, what);
    return p;
}

static int expect_tag(reader *r, uint32_t tag, const char *name)
{
    if (get_u32(r, name) != tag)
        return bad(r, name);
    return 0;
}

/* The EARL section: the Earley grammar's automata (earley/engine.h). */
static int read_earley(reader *r, gm_grammar *g)
{
    uint64_t n;
    if (get(r, &n, 8, "truncated Earley section"))
        return -1;
    if (n > r->left)
        return bad(r, "Earley section longer than the file");
    size_t used = 0;
    gm_status st = gm_egrammar_read(&g->mem, r->p, (size_t)n, &used, &g->eg, r->err);
    if (st != GM_OK) {
        if (st != GM_ERR_FORMAT)
            r->bad = 1;
        else
            gm_error_prefix(r->err, "%s: corrupt compiled file", r->path);
        r->bad = 1;
        return -1;
    }
    if (used != n)
        return bad(r, "trailing bytes in the Earley section");
    r->p += n;
    r->left -= n;
    g->engine = GM_ENGINE_EARLEY;
    /* Code blocks: their bundled grammars are named by the automata's external symbols
       (note [code blocks]); their tables are built again, lazily. */
    if (gm_blocks_attach(g, NULL, r->err) != GM_OK) {
        gm_error_prefix(r->err, "%s", r->path);
        r->bad = 1;
        return -1;
    }
    return 0;
}

static int read_vocab(reader *r, gm_vocab *v)
{
    gm_mem *m = &v->mem;
    if (expect_tag(r, TAG_VOCB, "missing vocabulary section"))
        return -1;
    gm_vocab_data *d = gm_mem_calloc(m, 1, sizeof *d);
    if (!d) {
        gm_mem_fail(m, r->err, "a loaded vocabulary");
        return r->bad = 1, -1;
    }
    v->data = d;
    d->mem = m;
    d->size = get_u32(r, "vocabulary size");
    d->ntokenizer = get_u32(r, "vocabulary size");
    d->strip_leading = get_u32(r, "vocabulary header");
    d->kind = (uint8_t)get_u32(r, "vocabulary header");
    uint32_t nbytes = get_u32(r, "vocabulary header");
    if (r->bad)
        return -1;
    if (d->size == 0 || d->size > GM_VOCAB_MAX_TOKENS || d->ntokenizer > d->size ||
        d->strip_leading > 9)
        return bad(r, "vocabulary sizes out of range");
    d->offsets = get_array(r, m, (size_t)d->size + 1, 4, "vocabulary offsets");
    d->bytes = get_array(r, m, nbytes, 1, "vocabulary bytes");
    d->flags = get_array(r, m, d->size, 1, "vocabulary flags");
    d->neos = get_u32(r, "EOS count");
    if (r->bad)
        return -1;
    if (d->neos > d->size)
        return bad(r, "EOS count out of range");
    d->eos = get_array(r, m, d->neos, 4, "EOS ids");
    if (r->bad)
        return -1;
    if (d->offsets[0] != 0 || d->offsets[d->size] != nbytes)
        return bad(r, "vocabulary offsets do not cover the bytes");
    for (uint32_t i = 0; i < d->size; i++)
        if (d->offsets[i + 1] < d->offsets[i] ||
            d->offsets[i + 1] - d->offsets[i] > GM_VOCAB_MAX_TOKEN_BYTES)
            return bad(r, "vocabulary offsets are not increasing");
    for (uint32_t i = 0; i < d->neos; i++)
        if (d->eos[i] >= d->size || (i && d->eos[i] <= d->eos[i - 1]))
            return bad(r, "EOS ids out of range or unsorted");
    return 0;
}

/* The TRIE section (put_trie), checked against the vocabulary (gm_trie_check). */
static int read_trie(reader *r, gm_vocab *v)
{
    gm_mem *m = &v->mem;
    if (expect_tag(r, TAG_TRIE, "missing vocabulary trie section"))
        return -1;
    gm_trie *t = gm_mem_calloc(m, 1, sizeof *t);
    if (!t) {
        gm_mem_fail(m, r->err, "a loaded vocabulary trie");
        return r->bad = 1, -1;
    }
    v->trie = t;
    t->mem = m;
    t->nnodes = get_u32(r, "trie header");
    t->ntokens = get_u32(r, "trie header");
    uint32_t depth = get_u32(r, "trie header");
    if (r->bad)
        return -1;
    if (t->nnodes == 0 || t->ntokens > v->data->size || depth > GM_VOCAB_MAX_TOKEN_BYTES)
        return bad(r, "trie sizes out of range");
    t->max_depth = (uint16_t)depth;
    t->nodes = get_array(r, m, t->nnodes, sizeof *t->nodes, "trie nodes");
    t->tokens = get_array(r, m, t->ntokens, 4, "trie tokens");
    if (r->bad)
        return -1;
    const char *why;
    gm_status st = gm_trie_check(t, v->data, m, &why, r->err);
    if (st == GM_ERR_FORMAT)
        return bad(r, why);
    if (st != GM_OK)
        return r->bad = 1, -1;
    return 0;
}

/*
 * Backtracking states (lexer.h, note [lexer backtracking]): a break resumes
 * in a smaller state, and no chain of them is longer than a window can be,
 * so a byte's emissions fit in GM_LEX_MAX_EMIT and every break loop ends.
 */
static int check_backtracking(reader *r, const gm_lexer *lx)
{
    uint32_t nbt = lx->nstates - lx->ndfa;
    uint8_t *depth = gm_mem_calloc(lx->mem, nbt ? nbt : 1, 1);
    if (!depth) {
        gm_mem_fail(lx->mem, r->err, "a loaded lexer");
        return r->bad = 1, -1;
    }
    const char *why = NULL;
    for (uint32_t i = 0; i < nbt && !why; i++) {
        uint32_t s = lx->ndfa + i, relex = lx->bt_relex[i];
        if (lx->accept[s] != GM_LEX_NONE || lx->bt_main[i] >= lx->ndfa ||
            lx->bt_fallback[i] >= lx->nterminals || relex == 0 || relex >= s)
            why = "malformed lexer backtracking state";
        else if ((depth[i] = (uint8_t)(1 + (relex >= lx->ndfa ? depth[relex - lx->ndfa] : 0))) >
                 GM_LEX_BACKTRACK_MAX)
            why = "lexer backtracking states nest deeper than a window";
    }
    gm_mem_free(lx->mem, depth);
    return why ? bad(r, why) : 0;
}

/* The transitions put_lexer_next wrote; every state's row and comb place in range. */
static int read_lexer_next(reader *r, gm_mem *m, gm_lexer *lx)
{
    uint32_t form = get_u32(r, "lexer transitions");
    if (r->bad)
        return -1;
    if (form > 1 || (form == 1 && lx->nstates >= UINT16_MAX))
        return bad(r, "malformed lexer transitions");
    if (form == 0) {
        lx->next = get_array(r, m, (size_t)lx->nstates * lx->nclasses, 4, "lexer transitions");
        return r->bad ? -1 : 0;
    }
    uint32_t nrows = get_u32(r, "lexer transitions");
    if (r->bad)
        return -1;
    if (nrows > lx->nstates)
        return bad(r, "lexer transition rows out of range");
    lx->next16 = get_array(r, m, (size_t)(nrows ? nrows : lx->nstates) * lx->nclasses, 2,
                           "lexer transitions");
    if (nrows)
        lx->row16 = get_array(r, m, lx->nstates, 2, "lexer transition rows");
    uint32_t ncomb = get_u32(r, "lexer transitions");
    if (r->bad)
        return -1;
    if (ncomb && (!nrows || ncomb < lx->nclasses))
        return bad(r, "malformed lexer transitions");
    if (ncomb) {
        lx->patch_at = get_array(r, m, lx->nstates, 4, "lexer transition patches");
        lx->patch = get_array(r, m, ncomb, 4, "lexer transition patches");
    }
    if (r->bad)
        return -1;
    for (uint32_t q = 0; q < lx->nstates; q++)
        if ((nrows && lx->row16[q] >= nrows) || (ncomb && lx->patch_at[q] > ncomb - lx->nclasses))
            return bad(r, "lexer transition rows out of range");
    return 0;
}

/* A lexer written by put_lexer_body, checked; *out is set first (the caller frees it). */
static int read_lexer_body(reader *r, gm_mem *m, gm_lexer **out)
{
    gm_lexer *lx = gm_mem_calloc(m, 1, sizeof *lx);
    *out = lx;
    if (!lx) {
        gm_mem_fail(m, r->err, "a loaded lexer");
        return r->bad = 1, -1;
    }
    lx->mem = m;
    lx->nstates = get_u32(r, "lexer header");
    lx->nclasses = get_u32(r, "lexer header");
    lx->nterminals = get_u32(r, "lexer header");
    lx->prod_words = get_u32(r, "lexer header");
    get(r, lx->byte_class, 256, "lexer byte classes");
    if (r->bad)
        return -1;
    if (lx->nstates == 0 || lx->nstates > 100000000u || lx->nclasses == 0 ||
        lx->nclasses > 256 || lx->nterminals > 1000000u ||
        lx->prod_words != (lx->nterminals + 63) / 64)
        return bad(r, "lexer sizes out of range");
    for (int b = 0; b < 256; b++)
        if (lx->byte_class[b] >= lx->nclasses)
            return bad(r, "lexer byte class out of range");
    if (read_lexer_next(r, m, lx))
        return -1;
    lx->accept = get_array(r, m, lx->nstates, 4, "lexer accepting terminals");
    lx->prod = get_array(r, m, (size_t)lx->nstates * lx->prod_words, 8, "lexer Prod sets");
    lx->ndfa = get_u32(r, "lexer header");
    if (r->bad)
        return -1;
    if (lx->ndfa == 0 || lx->ndfa > lx->nstates)
        return bad(r, "lexer sizes out of range");
    uint32_t nbt = lx->nstates - lx->ndfa;
    lx->bt_main = get_array(r, m, nbt, 4, "lexer backtracking states");
    lx->bt_fallback = get_array(r, m, nbt, 4, "lexer backtracking states");
    lx->bt_relex = get_array(r, m, nbt, 4, "lexer backtracking states");
    lx->line_end = GM_LEX_NONE; /* only the builder and gm_lexer_run read it */
    lx->ncond = get_u32(r, "lexer header");
    if (!r->bad && lx->ncond > lx->ndfa)
        return bad(r, "lexer sizes out of range");
    if (lx->ncond) {
        lx->cond = get_array(r, m, lx->ndfa, 4, "lexer conditional states");
        lx->cond_rows = get_array(r, m, (size_t)lx->ncond * (lx->nclasses + 1), 4, "lexer conditional states");
    }
    lx->terminals = gm_mem_calloc(m, lx->nterminals ? lx->nterminals : 1, sizeof *lx->terminals);
    if (r->bad)
        return -1;
    if (!lx->terminals) {
        gm_mem_fail(m, r->err, "a loaded lexer");
        return r->bad = 1, -1;
    }
    for (uint32_t t = 0; t < lx->nterminals; t++) {
        uint32_t flags = get_u32(r, "terminal flags");
        uint32_t n = get_u32(r, "terminal name");
        if (r->bad)
            return -1;
        if (flags > 3 || n > 65536)
            return bad(r, "terminal record out of range");
        if (n > r->left)
            return bad(r, "terminal name");
        char *name = gm_mem_alloc(m, (size_t)n + 1);
        if (!name) {
            gm_mem_fail(m, r->err, "a loaded lexer");
            return r->bad = 1, -1;
        }
        lx->terminals[t].name = name;
        if (get(r, name, n, "terminal name"))
            return -1;
        name[n] = '\0';
        if (memchr(name, '\0', n))
            return bad(r, "terminal name holds a NUL byte");
        lx->terminals[t].ignored = flags & 1;
        lx->terminals[t].declared_only = (flags & 2) != 0;
    }
    for (uint32_t q = 0; q < lx->nstates; q++)
        for (uint32_t c = 0; c < lx->nclasses; c++) {
            uint32_t to = gm_lexer_move(lx, q, c);
            if (to != GM_LEX_DEAD && to >= lx->nstates)
                return bad(r, "lexer transition to a state that does not exist");
            if (to == 0)
                return bad(r, "a lexer transition re-enters the start state");
        }
    for (uint32_t q = 0; q < lx->nstates; q++)
        if (lx->accept[q] != GM_LEX_NONE && lx->accept[q] >= lx->nterminals)
            return bad(r, "lexer state accepts a terminal that does not exist");
    if (lx->accept[0] != GM_LEX_NONE)
        return bad(r, "the lexer's start state accepts the empty string");
    for (uint32_t q = 0; lx->ncond && q < lx->ndfa; q++)
        if ((lx->cond[q] != GM_LEX_NONE && lx->cond[q] >= lx->ncond) || (q == 0 && lx->cond[q] != GM_LEX_NONE))
            return bad(r, "malformed lexer conditional state");
    for (size_t i = 0; i < (size_t)lx->ncond * (lx->nclasses + 1); i++)
        if (lx->cond_rows[i] != GM_LEX_NONE && lx->cond_rows[i] >= lx->nterminals)
            return bad(r, "lexer state accepts a terminal that does not exist");
    if (check_backtracking(r, lx))
        return -1;
    uint64_t tail = lx->nterminals % 64 ? ~(uint64_t)0 << (lx->nterminals % 64) : 0;
    for (uint32_t q = 0; q < lx->nstates && tail; q++)
        if (lx->prod[(size_t)q * lx->prod_words + lx->prod_words - 1] & tail)
            return bad(r, "lexer Prod set names a terminal that does not exist");
    if (gm_lexer_compact(lx, r->err) != GM_OK)
        return r->bad = 1, -1;
    return 0;
}

static int read_lexer(reader *r, gm_grammar *g)
{
    gm_mem *m = &g->mem;
    if (expect_tag(r, TAG_LEXR, "missing lexer section"))
        return -1;
    if (read_lexer_body(r, m, &g->lexer))
        return -1;
    const gm_lexer *lx = g->lexer;
    gm_postlex *pl = &g->postlex;
    uint32_t insertion = get_u32(r, "post-lexing layer");
    if (r->bad)
        return -1;
    if (insertion > 2)
        return bad(r, "malformed post-lexing layer");
    if (insertion) {
        pl->insertion = true;
        pl->offending = insertion == 2;
        pl->nterminals = lx->nterminals;
        pl->insert = get_u32(r, "post-lexing layer");
        pl->at = get_array(r, m, lx->nterminals, 1, "post-lexing layer");
        pl->after = get_array(r, m, lx->nterminals, 1, "post-lexing layer");
        if (pl->offending) {
            pl->try_before = get_array(r, m, lx->nterminals, 1, "post-lexing layer");
            pl->renamed = get_array(r, m, lx->nterminals, 4, "post-lexing layer");
        }
        if (r->bad)
            return -1;
        for (uint32_t t = 0; pl->offending && t < lx->nterminals; t++)
            if (pl->renamed[t] != GM_POSTLEX_NONE && pl->renamed[t] >= lx->nterminals)
                return bad(r, "post-lexing layer renames to a terminal that does not exist");
        if (pl->insert >= lx->nterminals)
            return bad(r, "post-lexing layer inserts a terminal that does not exist");
        for (uint32_t t = 0; t < lx->nterminals; t++)
            if (pl->at[t] > 1 || pl->after[t] > 1 || (pl->offending && pl->try_before[t] > 1))
                return bad(r, "malformed post-lexing layer");
    }
    uint32_t indentation = get_u32(r, "indentation layer");
    if (r->bad)
        return -1;
    if (indentation > 1)
        return bad(r, "malformed indentation layer");
    if (indentation) {
        pl->indentation = true;
        pl->nterminals = lx->nterminals;
        pl->newline = get_u32(r, "indentation layer");
        pl->indent = get_u32(r, "indentation layer");
        pl->dedent = get_u32(r, "indentation layer");
        pl->tab_width = get_u32(r, "indentation layer");
        uint32_t line_start = get_u32(r, "indentation layer");
        pl->line_start = line_start == 1;
        if (line_start > 1)
            return bad(r, "malformed indentation layer");
        pl->bracket = get_array(r, m, lx->nterminals, 1, "indentation layer");
        if (r->bad)
            return -1;
        if (pl->newline >= lx->nterminals || pl->indent >= lx->nterminals ||
            pl->dedent >= lx->nterminals || pl->tab_width > 64)
            return bad(r, "indentation layer names a terminal that does not exist");
        for (uint32_t t = 0; t < lx->nterminals; t++)
            if (pl->bracket[t] != 0 && pl->bracket[t] != 1 && pl->bracket[t] != -1)
                return bad(r, "malformed indentation layer");
    }
    return 0;
}

static int read_lr(reader *r, gm_grammar *g)
{
    gm_mem *m = &g->mem;
    if (expect_tag(r, TAG_LRTB, "missing parse table section"))
        return -1;
    gm_lr_table *t = gm_mem_calloc(m, 1, sizeof *t);
    if (!t) {
        gm_mem_fail(m, r->err, "loaded parse tables");
        return r->bad = 1, -1;
    }
    g->lr = t;
    t->mem = m;
    t->nstates = get_u32(r, "parse table header");
    t->nterms = get_u32(r, "parse table header");
    t->eof = get_u32(r, "parse table header");
    t->nnonterms = get_u32(r, "parse table header");
    t->nprods = get_u32(r, "parse table header");
    if (r->bad)
        return -1;
    if (t->nstates == 0 || t->nstates > 100000000u || t->nterms != g->lexer->nterminals + 1 ||
        t->eof != t->nterms - 1 || t->nnonterms == 0 || t->nnonterms > 10000000u ||
        t->nprods == 0 || t->nprods > 10000000u)
        return bad(r, "parse table sizes out of range or not matching the lexer");
    t->prod_lhs = get_array(r, m, t->nprods, 4, "production left-hand sides");
    t->prod_len = get_array(r, m, t->nprods, 4, "production lengths");
    t->action = get_array(r, m, (size_t)t->nstates * t->nterms, 4, "parse actions");
    t->go = get_array(r, m, (size_t)t->nstates * t->nnonterms, 4, "parse gotos");
    if (r->bad)
        return -1;
    for (uint32_t p = 0; p < t->nprods; p++)
        if (t->prod_lhs[p] >= t->nnonterms || t->prod_len[p] > 1000000u)
            return bad(r, "production out of range");
    for (size_t i = 0; i < (size_t)t->nstates * t->nterms; i++) {
        gm_lr_action a = t->action[i];
        uint32_t arg = GM_LR_ARG(a);
        switch (GM_LR_KIND(a)) {
        case GM_LR_SHIFT:
            if (arg >= t->nstates)
                return bad(r, "shift to a state that does not exist");
            break;
        case GM_LR_REDUCE:
            if (arg >= t->nprods)
                return bad(r, "reduction by a production that does not exist");
            break;
        case GM_LR_ERROR:
            if (arg)
                return bad(r, "malformed parse action");
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; i < (size_t)t->nstates * t->nnonterms; i++)
        if (t->go[i] != UINT32_MAX && t->go[i] >= t->nstates)
            return bad(r, "goto to a state that does not exist");
    /*
     * A reduction may pop at most the states below it: the runtime trusts
     * that a reduce never empties the stack. Check it the cheap way: a
     * production longer than the number of states can never be reduced.
     */
    for (uint32_t p = 0; p < t->nprods; p++)
        if (t->prod_len[p] >= t->nstates + 1u)
            return bad(r, "production longer than any stack");
    /*
     * Every reduction must fit every stack that can reach its state: the
     * stack reaching s is a path from state 0, and in tables built from a
     * grammar the last len(p) transitions into s spell p's right-hand side,
     * so the shortest path to s is at least len(p). Checked here so the
     * runtime never pops below the bottom of a stack.
     */
    uint32_t *dist = gm_mem_alloc(m, (size_t)t->nstates * sizeof *dist);
    uint32_t *queue = gm_mem_alloc(m, (size_t)t->nstates * sizeof *queue);
    if (!dist || !queue) {
        gm_mem_free(m, dist);
        gm_mem_free(m, queue);
        gm_mem_fail(m, r->err, "loaded parse tables");
        return r->bad = 1, -1;
    }
    memset(dist, 0xff, (size_t)t->nstates * sizeof *dist);
    uint32_t head = 0, tail = 0;
    dist[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t s = queue[head++];
        for (uint32_t x = 0; x < t->nterms + t->nnonterms; x++) {
            uint32_t to = UINT32_MAX;
            if (x < t->nterms) {
                gm_lr_action a = t->action[(size_t)s * t->nterms + x];
                if (GM_LR_KIND(a) == GM_LR_SHIFT)
                    to = GM_LR_ARG(a);
            } else {
                to = t->go[(size_t)s * t->nnonterms + (x - t->nterms)];
            }
            if (to != UINT32_MAX && dist[to] == UINT32_MAX) {
                dist[to] = dist[s] + 1;
                queue[tail++] = to;
            }
        }
    }
    int fits = 1;
    for (uint32_t s = 0; s < t->nstates && fits; s++)
        for (uint32_t x = 0; x < t->nterms && fits; x++) {
            gm_lr_action a = t->action[(size_t)s * t->nterms + x];
            if (GM_LR_KIND(a) == GM_LR_REDUCE && dist[s] != UINT32_MAX &&
                t->prod_len[GM_LR_ARG(a)] > dist[s])
                fits = 0;
        }
    gm_mem_free(m, dist);
    gm_mem_free(m, queue);
    if (!fits)
        return bad(r, "a reduction pops more states than a stack reaching it holds");
    /* Tables from a file might reduce in a cycle: guard every feed (lr.h, loop_guard). */
    t->loop_guard = t->nstates + 1;
    uint32_t units = get_u32(r, "LR unit chains");
    if (r->bad)
        return -1;
    if (units > 1)
        return bad(r, "malformed LR unit chains");
    if (!units)
        return gm_lr_unit_chains(t, r->err) == GM_OK ? 0 : (r->bad = 1, -1);
    t->unit_row = get_array(r, m, (size_t)t->nstates * t->nnonterms, 4, "LR unit-chain rows");
    t->nunit_rows = get_u32(r, "LR unit chains");
    if (r->bad)
        return -1;
    if (t->nunit_rows > (size_t)t->nstates * t->nnonterms)
        return bad(r, "LR unit-chain rows out of range");
    t->unit_go = get_array(r, m, (size_t)t->nunit_rows * t->nterms, 4, "LR unit chains");
    if (r->bad)
        return -1;
    const char *why;
    gm_status st = gm_lr_unit_chains_check(t, &why, r->err);
    if (st == GM_ERR_FORMAT)
        return bad(r, why);
    return st == GM_OK ? 0 : (r->bad = 1, -1);
}

/* Whether terminal x (GM_LEX_NONE: none) is outside lexer set `set`. */
static bool outside(const uint64_t *set, uint32_t x)
{
    return x != GM_LEX_NONE && !((set[x >> 6] >> (x & 63)) & 1);
}

/* Lexer k of a contextual lexer lexes only the terminals of its set. */
static int check_ctx_lexer(reader *r, const gm_ctx_lexers *cl, uint32_t k, const gm_lexer *lx,
                           const gm_lexer *basic)
{
    const uint64_t *set = cl->sets + (size_t)k * cl->words;
    if (lx->nterminals != basic->nterminals)
        return bad(r, "a contextual lexer's terminals are not the grammar's");
    for (uint32_t t = 0; t < lx->nterminals; t++)
        if (strcmp(lx->terminals[t].name, basic->terminals[t].name) ||
            lx->terminals[t].ignored != basic->terminals[t].ignored)
            return bad(r, "a contextual lexer's terminals are not the grammar's");
    for (uint32_t q = 0; q < lx->nstates; q++)
        if (outside(set, lx->accept[q]))
            return bad(r, "a contextual lexer accepts a terminal outside its set");
    for (uint32_t i = 0; i < lx->nstates - lx->ndfa; i++)
        if (outside(set, lx->bt_fallback[i]))
            return bad(r, "a contextual lexer accepts a terminal outside its set");
    for (size_t i = 0; i < (size_t)lx->ncond * (lx->nclasses + 1); i++)
        if (outside(set, lx->cond_rows[i]))
            return bad(r, "a contextual lexer accepts a terminal outside its set");
    for (uint32_t q = 0; q < lx->nstates; q++)
        for (uint32_t i = 0; i < lx->prod_words; i++)
            if (lx->prod[(size_t)q * lx->prod_words + i] & ~set[i])
                return bad(r, "a contextual lexer produces a terminal outside its set");
    return 0;
}

/* The CTXL section (put_ctx): the contextual lexers, all built. */
static int read_ctx(reader *r, gm_grammar *g)
{
    gm_mem *m = &g->mem;
    const gm_lexer *basic = g->lexer;
    const gm_lr_table *t = g->lr;
    gm_ctx_lexers *cl = gm_mem_calloc(m, 1, sizeof *cl);
    if (!cl) {
        gm_mem_fail(m, r->err, "loaded contextual lexers");
        return r->bad = 1, -1;
    }
    g->ctx = cl;
    cl->mem = m;
    gm_limits_init_defaults(&cl->limits);
    uint32_t lark = get_u32(r, "contextual lexer header");
    cl->nstates_total = get_u32(r, "contextual lexer header");
    cl->nsets = get_u32(r, "contextual lexer header");
    cl->words = get_u32(r, "contextual lexer header");
    if (r->bad)
        return -1;
    uint32_t words = basic->prod_words ? basic->prod_words : 1;
    cl->lark = lark == 1;
    if (lark > 1 || cl->nstates_total != t->nstates || cl->nsets == 0 ||
        cl->nsets > t->nstates || cl->words != words)
        return bad(r, "contextual lexer sizes out of range or not matching the parse tables");
    cl->set_of = get_array(r, m, cl->nstates_total, 4, "contextual lexer of each state");
    cl->sets = get_array(r, m, (size_t)cl->nsets * cl->words, 8, "contextual lexer sets");
    cl->nstates_of = gm_mem_calloc(m, cl->nsets, sizeof *cl->nstates_of);
    cl->lexers = gm_mem_calloc(m, cl->nsets, sizeof *cl->lexers);
    if (r->bad)
        return -1;
    if (!cl->nstates_of || !cl->lexers) {
        gm_mem_fail(m, r->err, "loaded contextual lexers");
        return r->bad = 1, -1;
    }
    for (uint32_t s = 0; s < cl->nstates_total; s++) {
        if (cl->set_of[s] >= cl->nsets)
            return bad(r, "a state's contextual lexer does not exist");
        cl->nstates_of[cl->set_of[s]]++;
    }
    uint64_t tail = basic->nterminals % 64 ? ~(uint64_t)0 << (basic->nterminals % 64) : 0;
    for (uint32_t k = 0; k < cl->nsets; k++)
        if (cl->sets[(size_t)k * cl->words + cl->words - 1] & (basic->nterminals ? tail : ~tail))
            return bad(r, "a contextual lexer set names a terminal that does not exist");
    for (uint32_t k = 0; k < cl->nsets; k++) {
        gm_lexer *lx = NULL;
        int fail = read_lexer_body(r, m, &lx);
        atomic_store(&cl->lexers[k], lx); /* owned by cl now */
        if (fail || check_ctx_lexer(r, cl, k, lx, basic))
            return -1;
        /* Its rows are in the form the built lexer had (put_lexer_next): packing them
           again would give each process a private copy. */
    }
    return 0;
}

static int read_tokset(reader *r, gm_mem *m, gm_tokset *s, uint32_t nbits)
{
    uint32_t kind = get_u32(r, "token set");
    uint32_t n = get_u32(r, "token set");
    uint32_t count = get_u32(r, "token set");
    if (r->bad)
        return -1;
    memset(s, 0, sizeof *s);
    if (kind == GM_TOKSET_EMPTY)
        return n || count ? bad(r, "malformed empty token set") : 0;
    if (kind == GM_TOKSET_LIST || kind == GM_TOKSET_COMPLEMENT) {
        if (n > nbits)
            return bad(r, "token list longer than the vocabulary");
        uint32_t *ids = get_array(r, m, n, 4, "token list");
        if (!ids)
            return -1;
        s->kind = (uint8_t)kind;
        s->n = n;
        s->count = count;
        s->u.ids = ids;
        for (uint32_t i = 0; i < n; i++)
            if (ids[i] >= nbits || (i && ids[i] <= ids[i - 1]))
                return bad(r, "token list out of range or unsorted");
        if (count != (kind == GM_TOKSET_LIST ? n : nbits - n))
            return bad(r, "token set count does not match");
        return 0;
    }
    if (kind == GM_TOKSET_BITSET) {
        size_t words = GM_MASK_WORDS(nbits);
        uint32_t *bits = get_array(r, m, words, 4, "token bitset");
        if (!bits)
            return -1;
        s->kind = GM_TOKSET_BITSET;
        s->count = count;
        s->u.words = bits;
        if (nbits % 32 && bits[words - 1] >> (nbits % 32))
            return bad(r, "token bitset sets bits past the vocabulary");
        return 0;
    }
    return bad(r, "unknown token set kind");
}

static int read_profiles(reader *r, gm_compiled *c)
{
    gm_mem *m = &c->mem;
    gm_spanner *sp = c->spanner;
    const gm_lexer *lx = c->grammar->lexer;
    if (expect_tag(r, TAG_PROF, "missing profile section"))
        return -1;
    uint32_t n = get_u32(r, "profile count");
    if (r->bad)
        return -1;
    if (n > sp->nslots)
        return bad(r, "more profiles than lexer states");
    for (uint32_t k = 0; k < n; k++) {
        uint32_t q = get_u32(r, "profile state");
        uint32_t nclasses = get_u32(r, "profile classes");
        uint32_t nseq = get_u32(r, "profile sequences");
        if (r->bad)
            return -1;
        if (q >= sp->nstates || gm_spanner_profile_state(sp, q) != q ||
            atomic_load(&sp->profiles[gm_spanner_slot(sp, q)]))
            return bad(r, "profile of a state that does not exist, or twice");
        if (nclasses > sp->nbits + 1u || nseq > r->left / 4)
            return bad(r, "profile sizes out of range");
        gm_profile *p = gm_mem_calloc(m, 1, sizeof *p);
        if (!p) {
            gm_mem_fail(m, r->err, "a loaded profile");
            return r->bad = 1, -1;
        }
        atomic_store(&sp->profiles[gm_spanner_slot(sp, q)], p); /* owned by the spanner now */
        p->state = q;
        p->nclasses = nclasses;
        p->classes = gm_mem_calloc(m, nclasses ? nclasses : 1, sizeof *p->classes);
        if (!p->classes) {
            gm_mem_fail(m, r->err, "a loaded profile");
            return r->bad = 1, -1;
        }
        p->seqs = get_array(r, m, nseq, 4, "profile sequences");
        if (!p->seqs)
            return -1;
        for (uint32_t i = 0; i < nseq; i++) {
            uint32_t e = p->seqs[i];
            bool line = (e & GM_SEQ_LINE) != 0; /* an indentation line end and its width */
            if (!line && (e & GM_POSTLEX_TRY) && c->grammar->postlex.offending)
                e &= ~GM_POSTLEX_TRY; /* note [offending-token insertion] */
            if (line ? !c->grammar->postlex.indentation || GM_SEQ_WIDTH(e) > GM_INDENT_MAX_WIDTH
                     : e >= lx->nterminals || lx->terminals[e].ignored)
                return bad(r, "profile sequence names a terminal the parser never sees");
        }
        (void)lx;
        uint32_t off = 0;
        for (uint32_t i = 0; i < nclasses; i++) {
            gm_class *cl = &p->classes[i];
            cl->len = get_u32(r, "class");
            cl->prod = get_u32(r, "class");
            if (r->bad)
                return -1;
            if (cl->len > nseq - off || cl->prod >= sp->nprods)
                return bad(r, "class out of range");
            cl->seq = off;
            off += cl->len;
            if (cl->len > p->max_len)
                p->max_len = cl->len;
            /* Derived fields are recomputed, never trusted. */
            if (i > 0) {
                const gm_class *prev = &p->classes[i - 1];
                uint32_t lim = prev->len < cl->len ? prev->len : cl->len, s = 0;
                while (s < lim && p->seqs[prev->seq + s] == p->seqs[cl->seq + s])
                    s++;
                cl->shared = s;
            }
            gm_tokset set = {0};
            if (read_tokset(r, m, &set, sp->nbits)) {
                gm_tokset_free(m, &set); /* what a malformed set had read (a class owns none) */
                return -1;
            }
            if (!(cl->tokens = gm_tokpool_adopt(sp->pool, &set))) {
                gm_mem_fail(m, r->err, "a loaded token class");
                r->bad = 1;
                return -1;
            }
            p->ntokens += cl->tokens->count;
        }
        if (off != nseq)
            return bad(r, "profile sequences do not match its classes");
        gm_profile_set_split0(sp, p);
        p->bytes += sizeof *p + (size_t)nclasses * sizeof *p->classes + (size_t)nseq * 4;
    }
    return 0;
}

/* The FILT section (put_filters): each filter checked to be its tokens, then adopted. */
static int read_filters(reader *r, gm_compiled *c)
{
    gm_spanner *sp = c->spanner;
    if (expect_tag(r, TAG_FILT, "missing first-byte filter section"))
        return -1;
    uint32_t n = get_u32(r, "first-byte filter count");
    if (r->bad)
        return -1;
    if (n != sp->nsplit0)
        return bad(r, "first-byte filters do not match the lexer");
    for (uint32_t id = 0; id < n; id++) {
        uint32_t *bits = get_array(r, &c->mem, GM_MASK_WORDS(sp->nbits), 4, "first-byte filter");
        if (!bits)
            return -1;
        if (!gm_tokpool_filter_matches(sp->pool, sp->split0_filter[id], bits)) {
            gm_mem_free(&c->mem, bits);
            return bad(r, "a first-byte filter is not the tokens of its bytes");
        }
        gm_tokpool_filter_adopt(sp->pool, sp->split0_filter[id], bits);
    }
    return 0;
}

/* A zeroed object from the caller's allocator with its own gm_mem initialized in it. */
static void *object_new_with(const gm_allocator *allocator, const gm_limits *limits, size_t size,
                             size_t mem_offset)
{
    gm_allocator al = allocator ? *allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, limits);
    gm_mem boot;
    gm_mem_init(&boot, &al, lim.max_memory);
    char *p = boot.fn(boot.ud, NULL, size);
    if (p) {
        memset(p, 0, size);
        gm_mem_init((gm_mem *)(p + mem_offset), &al, lim.max_memory);
    }
    return p;
}

static void *object_new(const gm_compile_options *opts, size_t size, size_t mem_offset)
{
    return object_new_with(opts ? &opts->allocator : NULL, opts ? &opts->limits : NULL, size,
                           mem_offset);
}

static gm_status load(const uint8_t *b, size_t len, const char *path, gm_mapping *map,
                      const gm_compile_options *opts, gm_compiled **out, gm_error *err);

gm_status gm_compiled_load(const char *path, const gm_compile_options *opts, gm_compiled **out,
                           gm_error *err)
{
    if (!path || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_compiled_load: NULL argument");
    *out = NULL;
    /* Mapped (note [mapped compiled files]); what cannot be mapped (a pipe) is read. */
    gm_mapping *map;
    if (gm_mapping_open(path, &map, NULL) == GM_OK) {
        gm_status st = load(gm_mapping_data(map), gm_mapping_size(map), path, map, opts, out,
                            err);
        gm_mapping_release(map); /* the loaded objects hold their own references */
        return st;
    }
    char *text = NULL;
    size_t len = 0;
    gm_mem scratch;
    gm_mem_init(&scratch, opts ? &opts->allocator : NULL, 0);
    gm_status st = gm_file_read(&scratch, path, (size_t)1 << 40, &text, &len, err);
    if (st != GM_OK)
        return st;
    st = gm_compiled_load_buffer((const uint8_t *)text, len, path, opts, out, err);
    gm_mem_free(&scratch, text);
    return st;
}

/* The header of b[0..len): magic, byte order, version, length, checksum. */
static gm_status check_header(const uint8_t *b, size_t len, const char *path, gm_error *err)
{
    if (len < GMC_HEADER || memcmp(b, GMC_MAGIC, 8))
        return gm_error_set(err, GM_ERR_FORMAT, "%s is not a gramask compiled file", path);
    uint32_t version, order;
    uint64_t plen, sum;
    memcpy(&version, b + 8, 4);
    memcpy(&order, b + 12, 4);
    memcpy(&plen, b + 16, 8);
    memcpy(&sum, b + 24, 8);
    if (order != GMC_BYTE_ORDER)
        return gm_error_set(err, GM_ERR_FORMAT,
                            "%s was written on a machine of the other byte order", path);
    if (version != GMC_VERSION)
        return gm_error_set(err, GM_ERR_FORMAT,
                            "%s is a compiled file of format version %u; this gramask reads "
                            "version %u (recompile it)", path, version, GMC_VERSION);
    if (plen != len - GMC_HEADER)
        return gm_error_set(err, GM_ERR_FORMAT, "%s is truncated or has trailing bytes (%llu of "
                            "%llu payload bytes)", path, (unsigned long long)(len - GMC_HEADER),
                            (unsigned long long)plen);
    if (gm_compiled_checksum(b + GMC_HEADER, plen) != sum)
        return gm_error_set(err, GM_ERR_FORMAT, "%s is corrupt (checksum mismatch)", path);
    return GM_OK;
}

/* Loads b[0..len); with map (b is its data), the arrays point into it. */
static gm_status load(const uint8_t *b, size_t len, const char *path, gm_mapping *map,
                      const gm_compile_options *opts, gm_compiled **out, gm_error *err)
{
    *out = NULL;
    gm_error local;
    if (!err)
        err = &local;
    gm_vocab *v = NULL;
    gm_grammar *g = NULL;
    gm_compiled *c = NULL;
    gm_status st;
    if ((st = check_header(b, len, path, err)) != GM_OK)
        goto fail;
    uint64_t plen = len - GMC_HEADER;
    reader r = {.p = b + GMC_HEADER, .left = plen, .base = b, .borrow = map != NULL,
                .path = path, .err = err};
    v = object_new(opts, sizeof *v, offsetof(gm_vocab, mem));
    g = object_new(opts, sizeof *g, offsetof(gm_grammar, mem));
    if (v) {
        atomic_init(&v->refs, 1);
        if (map)
            gm_mem_borrow(&v->mem, map);
    }
    if (g) {
        atomic_init(&g->refs, 1);
        g->engine = GM_ENGINE_LALR;
        if (map)
            gm_mem_borrow(&g->mem, map);
    }
    if (!v || !g) {
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory loading %s", path);
        goto fail;
    }
    uint32_t section = 0;
    if (read_vocab(&r, v) || read_trie(&r, v))
        goto fail_read;
    if (r.left >= 4)
        memcpy(&section, r.p, 4);
    if (section == TAG_EARL) {
        r.p += 4;
        r.left -= 4;
        if (read_earley(&r, g))
            goto fail_read;
    } else if (read_lexer(&r, g) || read_lr(&r, g)) {
        goto fail_read;
    }
    if (g->engine == GM_ENGINE_LALR && r.left >= 4 && (memcpy(&section, r.p, 4), section == TAG_CTXL)) {
        r.p += 4;
        r.left -= 4;
        if (read_ctx(&r, g))
            goto fail_read;
    }
    gm_compile_options co = opts ? *opts : (gm_compile_options){0};
    /* LALR: the profiles in the file come first, then what eager still lacks. */
    if (g->engine == GM_ENGINE_LALR)
        co.eager = false;
    st = gm_compiled_create(g, v, &co, &c, err);
    if (st != GM_OK)
        goto fail;
    if (map)
        gm_mem_borrow(&c->mem, map);
    if (g->engine == GM_ENGINE_LALR && (read_profiles(&r, c) || read_filters(&r, c)))
        goto fail_read;
    if (g->ctx && opts && opts->eager &&
        (st = gm_ctx_spanners_build_all(c->ctx, opts->progress, opts->progress_ud, err)) != GM_OK)
        goto fail;
    if (r.left) {
        bad(&r, "trailing bytes after the last section");
        st = err->code;
        goto fail;
    }
    if (opts && opts->eager && g->engine == GM_ENGINE_LALR &&
        (st = gm_spanner_build_all_progress(c->spanner, opts->progress, opts->progress_ud,
                                            err)) != GM_OK)
        goto fail;
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    *out = c;
    return GM_OK;
fail_read:
    st = err->code;
fail:
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
    return st;
}

gm_status gm_compiled_load_buffer(const uint8_t *b, size_t len, const char *path,
                                  const gm_compile_options *opts, gm_compiled **out,
                                  gm_error *err)
{
    return load(b, len, path, NULL, opts, out, err);
}

void gm_compiled_header(uint8_t header[GM_COMPILED_HEADER], const uint8_t *payload, size_t len)
{
    uint32_t version = GMC_VERSION, order = GMC_BYTE_ORDER, flags = 0, reserved = 0;
    uint64_t n = len, sum = gm_compiled_checksum(payload, len);
    memcpy(header, GMC_MAGIC, 8);
    memcpy(header + 8, &version, 4);
    memcpy(header + 12, &order, 4);
    memcpy(header + 16, &n, 8);
    memcpy(header + 24, &sum, 8);
    memcpy(header + 32, &flags, 4);
    memcpy(header + 36, &reserved, 4);
}

uint64_t gm_compiled_checksum(const uint8_t *payload, size_t len)
{
    return gm_hash_bytes(payload, len, GMC_VERSION);
}

/* ---- vocabularies alone --------------------------------------------------- */

/*
 * A vocabulary's bytes (gm_vocab_save_bytes): a compiled file's header and
 * its VOCB section alone, so a process can send a vocabulary as exactly as
 * a compiled grammar's (special flags, EOS ids, padding) without its
 * tokenizer file.
 */
gm_status gm_vocab_save_bytes(const gm_vocab *v, uint8_t **out, size_t *len, gm_error *err)
{
    if (!v || !out || !len)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_save_bytes: NULL argument");
    *out = NULL;
    *len = 0;
    writer w = {.mem = (gm_mem *)&v->mem};
    uint8_t header[GM_COMPILED_HEADER] = {0};
    put(&w, header, sizeof header);
    put_vocab(&w, v->data);
    if (w.failed) {
        gm_mem_free(w.mem, w.buf);
        return gm_mem_fail(w.mem, err, "the vocabulary's bytes");
    }
    gm_compiled_header(w.buf, w.buf + GM_COMPILED_HEADER, w.len - GM_COMPILED_HEADER);
    *out = w.buf;
    *len = w.len;
    return GM_OK;
}

void gm_vocab_free_bytes(const gm_vocab *v, uint8_t *bytes)
{
    if (v)
        gm_mem_free((gm_mem *)&v->mem, bytes);
}

gm_status gm_vocab_load_bytes(const void *bytes, size_t len, const gm_vocab_options *opts,
                              gm_vocab **out, gm_error *err)
{
    if (!out || (!bytes && len))
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_vocab_load_bytes: NULL argument");
    *out = NULL;
    gm_error local;
    if (!err)
        err = &local;
    const char *name = "the vocabulary bytes";
    gm_status st = check_header(bytes, len, name, err);
    if (st != GM_OK)
        return st;
    reader r = {.p = (const uint8_t *)bytes + GMC_HEADER, .left = len - GMC_HEADER,
                .base = bytes, .path = name, .err = err};
    gm_vocab *v = object_new_with(opts ? &opts->allocator : NULL, opts ? &opts->limits : NULL,
                                  sizeof *v, offsetof(gm_vocab, mem));
    if (!v)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory loading %s", name);
    atomic_init(&v->refs, 1);
    if (read_vocab(&r, v)) {
        st = err->code;
    } else if (r.left) {
        st = gm_error_set(err, GM_ERR_FORMAT, "%s hold more than a vocabulary (a compiled "
                          "grammar's bytes? load them with gm_compiled_load_bytes)", name);
    } else {
        st = gm_trie_build(&v->mem, v->data, &v->trie, err);
    }
    if (st != GM_OK) {
        gm_vocab_destroy(v);
        return st;
    }
    *out = v;
    return GM_OK;
}
