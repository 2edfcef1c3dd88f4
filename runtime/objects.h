/*
 * The public objects behind include/gramask.h's opaque handles. Each owns a
 * gm_mem (its allocator and limits) and is reference-counted; a compiled
 * grammar keeps its grammar and vocabulary alive.
 */
#ifndef GM_RUNTIME_OBJECTS_H
#define GM_RUNTIME_OBJECTS_H

#include <pthread.h>
#include <stdatomic.h>

#include "gramask.h"
#include "earley/engine.h"
#include "lexer/lexer.h"
#include "parser/cfg.h"
#include "parser/lr.h"
#include "parser/postlex.h"
#include "spanner/spanner.h"
#include "vocab/vocab.h"
#include "base/mem.h"

struct gm_encoder;

struct gm_vocab {
    atomic_uint refs;
    gm_mem mem;
    gm_vocab_data *data;
    gm_trie *trie;
    char *path;               /* the tokenizer.json it came from (for the encoder), or NULL */
    struct gm_encoder *_Atomic encoder; /* built on the first encode (under encoder_lock) */
    pthread_mutex_t encoder_lock;
    /* The Earley engine's cross-grammar cache for this vocabulary, made by the
       first Earley grammar compiled for it (gm_vocab_excache). */
    _Atomic(gm_excache *) excache;
};

/* v's cross-grammar cache, created on first use (thread-safe); NULL when out of memory. */
gm_excache *gm_vocab_excache(gm_vocab *v, gm_error *err);

struct gm_fcache;

/* The public grammar cache: the rule automata cache of the Earley engine. */
struct gm_grammar_cache {
    gm_mem mem;
    struct gm_fcache *rules;
};

struct gm_grammar {
    atomic_uint refs;
    gm_mem mem;
    gm_engine engine;
    /* GM_ENGINE_LALR */
    gm_cfg *cfg;              /* NULL when loaded from a compiled file */
    gm_lexer *lexer;
    gm_postlex postlex;       /* post-lexing layer (copied from the cfg; arrays owned) */
    gm_lr_table *lr;
    struct gm_ctx_lexers *ctx; /* GM_LEXER_CONTEXTUAL (note [lazy lexers]); else NULL */
    /* GM_ENGINE_EARLEY */
    gm_egrammar *eg;
    struct gm_gblocks *blocks; /* code blocks of eg's tags, or NULL (runtime/blocks.h) */
    gm_ebnf *ir;              /* the IR eg was built from (owned; NULL when loaded from a
                                 compiled file): what gm_grammar_combine joins */
    struct gm_stag_source *stag_src; /* a structural tag with special_token_candidates:
                                 its text, compiled again for a vocabulary that has some
                                 (runtime/stag_source.c); one allocation, or NULL */
};

struct gm_compiled {
    atomic_uint refs;
    gm_mem mem;
    gm_grammar *grammar;      /* retained */
    gm_vocab *vocab;          /* retained */
    const struct gm_engine_ops *ops; /* the grammar's engine (runtime/engine.h) */
    gm_spanner *spanner;      /* GM_ENGINE_LALR */
    gm_eengine *eengine;      /* GM_ENGINE_EARLEY */
    struct gm_cblocks *cblocks; /* when the grammar has code blocks (runtime/blocks.h) */
    struct gm_compiled **inner; /* with code blocks: each block's grammar compiled (owned) */
    struct gm_ctx_spanners *ctx; /* the grammar's contextual lexer: a spanner per lexer */
    struct gm_ctypedef *ctd;  /* C's typedef-name layer's tables (runtime/engine_cdecl.c), or
                                 NULL; only read (its own stream state is unused) */
    struct gm_cindex *cidx;   /* with ctd: its exception index (runtime/cdecl_index.h) */
    uint32_t cdecl_overlay;   /* tests only: the layer's first overlay capacity when below
                                 its default (note [typedef-layer overlays]); 0: default */
};

/*
 * A grammar for the Earley engine from a grammar IR (src is borrowed): the
 * constructor behind JSON Schema and TagDispatch grammars. src must have
 * passed gm_ebnf_check with opts' limits, as gm_schema_compile and
 * gm_stag_compile check what they emit (checking it again here was a
 * twentieth of a schema's compile). opts may be NULL (its format is ignored).
 */
gm_status gm_grammar_from_ebnf(const gm_ebnf *src, const gm_grammar_options *opts,
                               gm_grammar **out, gm_error *err);

/* gm_compiled_load from bytes in memory (`name` names them in errors). */
gm_status gm_compiled_load_buffer(const uint8_t *data, size_t len, const char *name,
                                  const gm_compile_options *opts, gm_compiled **out,
                                  gm_error *err);
/* The checksum a compiled file's header holds for its payload. */
uint64_t gm_compiled_checksum(const uint8_t *payload, size_t len);
/* The format version compiled files are written and read in (serialize.c). */
#define GM_COMPILED_FORMAT 10 /* 7: EOS ids are special (never text); 8: contextual lexers,
                                aligned arrays (mapped files), Earley rules carry max_tokens
                                (note [token budgets] in ir/ebnf.h); 9: the vocabulary trie
                                (TRIE) and what else a mapped file's processes would each
                                build at load (note [mapped compiled files]); 10: Earley
                                rules carry capture labels (earley/capture.c) and
                                temperatures (earley/temperature.c) */
#define GM_COMPILED_HEADER 40
/* The header of a compiled file of the current format in front of payload[0..len). */
void gm_compiled_header(uint8_t header[GM_COMPILED_HEADER], const uint8_t *payload, size_t len);

/*
 * Records the tokenizer file behind `path` (a file, or a directory holding
 * tokenizer.json) for gm_vocab_encode, and builds the encoder now when
 * `now` (api_encode.c).
 */
gm_status gm_vocab_set_encoder_path_(gm_vocab *v, const char *path, bool now, gm_error *err);

#endif
