/*
 * gramask — grammar-constrained decoding masks for LLM inference.
 *
 * The public C API. Two engines behind one interface: a Lark grammar runs
 * on the LALR engine (a lexer DFA, LALR(1) tables, the token spanner's
 * tables over the vocabulary); a character-level grammar (GBNF, XGrammar's
 * EBNF, a regex, a JSON Schema, a structural tag) on the Earley engine (rule
 * automata, an Earley recognizer, a token-mask cache). gm_grammar_engine
 * says which; everything from the compiled grammar on is the same for both.
 * One header, cut into sections by object:
 *   1. Basics: status codes, errors, allocation hook, limits, version.
 *   2. Vocabulary: token id -> bytes, special tokens, EOS ids; the text
 *      encoder (text -> ids, as the tokenizer does).
 *   3. Grammar: from Lark text (LALR engine), GBNF, EBNF or regex text, or
 *      a JSON Schema (Earley engine); the bundled grammars.
 *   4. Compiled grammar: grammar x vocabulary, immutable, shared by threads;
 *      saved to and loaded from a .gmc file.
 *   5. Matcher: the state of one sequence; masks, accept, rollback, clone.
 *   6. Batch: masks of many matchers on a thread pool.
 *   7. Structural tags and tool calls (TagDispatch): free text dispatching to
 *      JSON Schemas, grammars and regexes, the models' tool-call formats,
 *      Markdown code blocks of the bundled grammars; the grammar cache that
 *      such grammars share their rule automata through.
 *
 * Typical decoding loop:
 *   gm_vocab_create_from_file("tokenizer.json", NULL, &vocab, &err);
 *   gm_grammar_create_bundled("json", NULL, &grammar, &err);
 *   gm_compiled_create(grammar, vocab, NULL, &compiled, &err);
 *   gm_matcher_create(compiled, NULL, &matcher, &err);
 *   uint32_t *mask = malloc(gm_compiled_mask_words(compiled) * 4);
 *   while (!gm_matcher_is_terminated(matcher)) {
 *       gm_matcher_fill_mask(matcher, mask, words, &err);
 *       token = sample(logits, mask);       // bit t%32 of mask[t/32] = allowed
 *       gm_matcher_accept_token(matcher, token, &err);
 *   }
 *
 * Conventions
 * - Every function that can fail returns a gm_status and, when given a
 *   non-NULL gm_error *, fills it with a message (and a source location when
 *   the failure is in an input file). The library never aborts or exits on
 *   bad input.
 * - Objects are opaque handles created by gm_<object>_create() and released
 *   by gm_<object>_destroy(), which accepts NULL.
 * - Options and limits structs are valid when zeroed (zero means "default");
 *   gm_<struct>_init_defaults() fills in the documented defaults.
 */
#ifndef GRAMASK_H
#define GRAMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GM_API __attribute__((visibility("default")))
#else
#define GM_API
#endif

/* ------------------------------------------------------------------------
 * 1. Basics
 * ------------------------------------------------------------------------ */

typedef enum gm_status {
    GM_OK = 0,
    GM_ERR_NOMEM,       /* an allocation failed */
    GM_ERR_LIMIT,       /* a gm_limits bound (states, memory, length) was hit */
    GM_ERR_SYNTAX,      /* malformed regex or grammar text */
    GM_ERR_GRAMMAR,     /* well-formed grammar that cannot be used (conflicts, undefined symbols) */
    GM_ERR_UNSUPPORTED, /* a construct gramask does not implement (named in the message) */
    GM_ERR_IO,          /* a file could not be read or written */
    GM_ERR_FORMAT,      /* malformed tokenizer, ids or compiled file */
    GM_ERR_ARGUMENT,    /* API misuse: NULL, size mismatch, id out of range */
    GM_ERR_REJECTED,    /* input not allowed by the grammar (token, bytes) */
    GM_ERR_STATE        /* operation not valid in the object's current state */
} gm_status;

/* A short English name for a status code ("ok", "out of memory", ...). Static storage. */
GM_API const char *gm_status_name(gm_status status);

enum { GM_ERROR_MESSAGE_MAX = 1024, GM_ERROR_FILE_MAX = 256 };

/*
 * What went wrong. `message` is a complete sentence and may span several
 * lines (for example a source line and a caret under the offending column).
 * `file`, `line` and `column` locate the error in an input file when known
 * (line and column count from 1; 0 means unknown; columns count bytes).
 */
typedef struct gm_error {
    gm_status code;
    char message[GM_ERROR_MESSAGE_MAX];
    char file[GM_ERROR_FILE_MAX];
    uint32_t line;
    uint32_t column;
} gm_error;

/*
 * Receives a warning (same shape as an error, code GM_OK or the code the
 * problem would have as an error). Called synchronously; `warning` is valid
 * only during the call.
 */
typedef void (*gm_warning_fn)(void *ud, const gm_error *warning);

/* Resets an error to GM_OK with empty fields. */
GM_API void gm_error_clear(gm_error *err);

/*
 * Allocation hook, in the shape of realloc: called with (ud, NULL, n) to
 * allocate, (ud, p, n) to resize, (ud, p, 0) to free (returns NULL).
 * Returning NULL for n > 0 is an allocation failure, which gramask reports
 * as GM_ERR_NOMEM. Must be thread-safe when objects are shared by threads.
 */
typedef void *(*gm_realloc_fn)(void *ud, void *ptr, size_t size);

typedef struct gm_allocator {
    gm_realloc_fn realloc; /* NULL means the C library's realloc/free */
    void *ud;              /* passed to realloc unchanged */
} gm_allocator;

/*
 * Resource limits, enforced with GM_ERR_LIMIT rather than exhausting the
 * machine. Zero fields take the defaults of gm_limits_init_defaults().
 */
typedef struct gm_limits {
    size_t max_memory;        /* bytes one object tree may hold [8 GiB] */
    uint32_t max_dfa_states;  /* states of one DFA (regex or lexer) [100000] */
    uint32_t max_nfa_states;  /* states of one NFA [1000000] */
    uint32_t max_regex_repeat;/* largest m or n in {m,n} [1000] */
    uint32_t max_lr_states;   /* LALR(1) states [100000] */
    uint32_t max_input_bytes; /* size of a grammar or regex text [64 MiB] */
    uint32_t max_earley_work; /* work of one Earley mask or step: Earley items added or
                                 found again (like llguidance's fuel); past it the mask or
                                 step fails naming the rule. Highly ambiguous grammars
                                 (s ::= s s | "a" | "") need work growing with the output's
                                 length [GM_EARLEY_WORK_DEFAULT] */
} gm_limits;

/* About 30-50 ms of work; the most any bundled, shared (llama.cpp's GBNF) or MaskBench grammar
   was seen to take in one mask or step is about 12,000. */
#define GM_EARLEY_WORK_DEFAULT 1000000u

GM_API void gm_limits_init_defaults(gm_limits *limits);

/* The library version as "MAJOR.MINOR.PATCH". Static storage. */
GM_API const char *gm_version(void);

/* ------------------------------------------------------------------------
 * 2. Vocabulary
 * ------------------------------------------------------------------------ */

/*
 * A tokenizer vocabulary: token id -> raw bytes, with special tokens and EOS
 * ids. Immutable and reference-counted: safe to share between threads.
 */
typedef struct gm_vocab gm_vocab;

typedef struct gm_vocab_options {
    uint32_t model_vocab_size;     /* 0 = the tokenizer's size; larger: the extra ids are
                                      model padding and never allowed */
    const uint32_t *extra_eos_ids; /* ids treated as EOS besides the tokenizer's eos_token */
    size_t n_extra_eos_ids;
    gm_allocator allocator;        /* zero = libc */
    gm_limits limits;              /* zero fields = defaults */
    bool load_encoder;             /* build the text encoder (gm_vocab_encode) while loading,
                                      not on the first encode; fails the load when the
                                      tokenizer cannot encode */
} gm_vocab_options;

GM_API void gm_vocab_options_init_defaults(gm_vocab_options *opts);

/*
 * Loads a Hugging Face tokenizer.json (or a directory holding one; the
 * tokenizer_config.json beside it gives eos_token) or a plain vocabulary
 * file ("gramask-vocab 1" then one token per line as hex bytes). opts may be
 * NULL. Malformed files fail with GM_ERR_FORMAT naming the file and what.
 */
GM_API gm_status gm_vocab_create_from_file(const char *path, const gm_vocab_options *opts,
                                           gm_vocab **out, gm_error *err);

/*
 * Builds a vocabulary from the engine's own table: token i has bytes
 * tokens[i][0..lens[i]); special may be NULL or flag tokens never allowed as
 * text; eos_ids lists the end-of-sequence ids, which are never text either
 * (special or not: their text is never content). Copies everything.
 */
GM_API gm_status gm_vocab_create_from_tokens(const uint8_t *const *tokens, const size_t *lens,
                                             uint32_t n, const bool *special,
                                             const uint32_t *eos_ids, size_t n_eos,
                                             const gm_vocab_options *opts, gm_vocab **out,
                                             gm_error *err);

/* Adds a reference; returns v. */
GM_API gm_vocab *gm_vocab_retain(gm_vocab *v);
/* Drops a reference; frees on the last. NULL is fine. */
GM_API void gm_vocab_destroy(gm_vocab *v);
/* Number of ids (mask bits). */
GM_API uint32_t gm_vocab_size(const gm_vocab *v);
/* Bytes of token id (valid while v lives); NULL for an id out of range. */
GM_API const uint8_t *gm_vocab_token(const gm_vocab *v, uint32_t id, size_t *len);
/* EOS ids (sorted; valid while v lives); returns their number. */
GM_API size_t gm_vocab_eos_ids(const gm_vocab *v, const uint32_t **ids);

/* Options of gm_vocab_encode; zero = defaults. */
typedef struct gm_encode_options {
    bool special_as_text;     /* encode the text of special tokens ("<|eot_id|>") as plain
                                 text, like tokenizers' split_special_tokens; by default
                                 (false) such text is the special token's one id, as Hugging
                                 Face encodes it. Non-special added tokens are always one id */
} gm_encode_options;

/*
 * Encodes text[0..len) (UTF-8) into token ids exactly as Hugging Face
 * tokenizers encodes it with the tokenizer.json v was loaded from: added
 * and special tokens first, then its normalizer, pre-tokenizer (Split
 * regexes, ByteLevel) and BPE model (merges by rank, byte fallback); no
 * BOS/EOS or other post-processing is added. Bytes that are not UTF-8 are
 * encoded too (byte-level and byte-fallback tokenizers give them back
 * exactly when decoded). opts may be NULL.
 * On success *ids is an array of *n_ids ids (NULL when empty) owned by the
 * caller: free it with gm_vocab_free_ids. The encoder (the merges and the
 * rest of tokenizer.json that loading skips) is built from the file on the
 * first call unless gm_vocab_options.load_encoder was set; that first call
 * takes longer (about as long as loading). Thread-safe. Calls reuse scratch
 * space and a word cache kept with the vocabulary (about 2 MiB for each
 * thread encoding at once, four of them kept at most), counted against
 * its memory limit.
 * Fails with GM_ERR_UNSUPPORTED when the tokenizer cannot encode (a model
 * other than BPE, an unsupported normalizer or pre-tokenizer step: the
 * message names its JSON path; a vocabulary not loaded from tokenizer.json),
 * GM_ERR_STATE when the file changed since v was loaded, GM_ERR_IO /
 * GM_ERR_FORMAT reading it, GM_ERR_ARGUMENT, GM_ERR_NOMEM, GM_ERR_LIMIT.
 */
GM_API gm_status gm_vocab_encode(const gm_vocab *v, const char *text, size_t len,
                                 const gm_encode_options *opts, uint32_t **ids, size_t *n_ids,
                                 gm_error *err);
/* Frees an array returned by gm_vocab_encode (NULL is fine). */
GM_API void gm_vocab_free_ids(const gm_vocab *v, uint32_t *ids);

/*
 * The vocabulary as bytes (to send it to another process; the tokenizer
 * file is not needed to load them, and not kept: gm_vocab_encode needs a
 * vocabulary loaded from its file). *out holds *len bytes from v's
 * allocator, freed with gm_vocab_free_bytes. Loading checks them as
 * gm_compiled_load_bytes does (GM_ERR_FORMAT naming what is wrong).
 */
GM_API gm_status gm_vocab_save_bytes(const gm_vocab *v, uint8_t **out, size_t *len,
                                     gm_error *err);
GM_API void gm_vocab_free_bytes(const gm_vocab *v, uint8_t *bytes);
GM_API gm_status gm_vocab_load_bytes(const void *bytes, size_t len, const gm_vocab_options *opts,
                                     gm_vocab **out, gm_error *err);

/* ------------------------------------------------------------------------
 * 3. Grammar
 * ------------------------------------------------------------------------ */

/*
 * A grammar, ready for either engine: a Lark grammar with its lexer and
 * LALR(1) tables, or a character-level grammar (GBNF, EBNF, regex, JSON
 * Schema) with its rule automata for the Earley engine. Immutable,
 * reference-counted.
 */
typedef struct gm_grammar gm_grammar;
/* A cache of compiled grammar parts, shared by the grammars built with it (below). */
typedef struct gm_grammar_cache gm_grammar_cache;

/* The text format of a grammar. */
typedef enum gm_grammar_format {
    GM_FORMAT_AUTO = 0, /* gm_grammar_create: Lark; gm_grammar_create_from_file: by the
                           file's extension (.gbnf, .ebnf, .regex; anything else is Lark) */
    GM_FORMAT_LARK,     /* Lark EBNF: lexer + LALR(1) engine */
    GM_FORMAT_GBNF,     /* llama.cpp's GBNF: Earley engine */
    GM_FORMAT_EBNF,     /* XGrammar's EBNF dialect: Earley engine */
    GM_FORMAT_REGEX     /* one regex (Python re syntax) as the whole grammar: Earley engine */
} gm_grammar_format;

/* Which engine produces a grammar's masks. */
typedef enum gm_engine {
    GM_ENGINE_LALR = 1, /* lexer + LALR(1) parser + token spanner tables */
    GM_ENGINE_EARLEY    /* Earley recognizer + adaptive token-mask cache */
} gm_engine;

typedef enum gm_conflicts {
    GM_CONFLICTS_ERROR = 0, /* a grammar with LALR(1) conflicts is an error (default) */
    GM_CONFLICTS_LARK       /* resolve them as Lark does: shift wins shift/reduce;
                               reduce/reduce goes to the rule of strictly highest priority
                               and a tie is an error (as in Lark); each resolution is
                               reported as a warning */
} gm_conflicts;

/*
 * Which lexer masks and matchers run (Lark's lexer= option; README, Lark
 * compatibility). Basic: one lexer of every terminal. Contextual (Lark's
 * default for LALR): each lexeme is lexed with the terminals the parser's
 * state accepts there (plus the ignored ones); masks stay exact under it.
 * Compiled grammars with it are saved with every contextual lexer built
 * (their token tables are built again after a load).
 */
typedef enum gm_lexer_kind {
    GM_LEXER_BASIC = 0,
    GM_LEXER_CONTEXTUAL
} gm_lexer_kind;

typedef struct gm_grammar_options {
    gm_grammar_format format; /* the text's format (GM_FORMAT_AUTO = by extension / Lark) */
    const char *start;        /* start rule; NULL = "start" (Lark) or "root" (GBNF, EBNF) */
    gm_conflicts conflicts;
    gm_warning_fn warn;       /* warnings (unused rules, resolved conflicts...); may be NULL */
    void *warn_ud;
    gm_allocator allocator;
    gm_limits limits;
    bool no_file_imports;     /* reject `%import .name.X` (files beside the grammar): only
                                 bundled grammars can be imported; for untrusted text */
    gm_grammar_cache *cache;  /* Earley grammars: reuse what earlier builds with this cache
                                 made (gm_grammar_cache_create); NULL = none */
    gm_lexer_kind lexer;      /* GM_LEXER_BASIC (default) or GM_LEXER_CONTEXTUAL */
} gm_grammar_options;

GM_API void gm_grammar_options_init_defaults(gm_grammar_options *opts);

/*
 * Builds a grammar from Lark EBNF text. `name` names it in diagnostics and
 * anchors relative imports (may be NULL). Errors carry file:line:column.
 */
GM_API gm_status gm_grammar_create(const char *text, size_t len, const char *name,
                                   const gm_grammar_options *opts, gm_grammar **out,
                                   gm_error *err);
GM_API gm_status gm_grammar_create_from_file(const char *path, const gm_grammar_options *opts,
                                             gm_grammar **out, gm_error *err);
/* A grammar bundled with gramask: "json", "go", "java", "python"... */
GM_API gm_status gm_grammar_create_bundled(const char *name, const gm_grammar_options *opts,
                                           gm_grammar **out, gm_error *err);
GM_API gm_grammar *gm_grammar_retain(gm_grammar *g);
GM_API void gm_grammar_destroy(gm_grammar *g);
/* The engine that produces g's masks. */
GM_API gm_engine gm_grammar_engine(const gm_grammar *g);

/*
 * JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12) compiled to a grammar for
 * the Earley engine: the grammar accepts exactly the JSON texts, in the
 * layout the options choose, that are valid instances of the schema.
 *
 * What a grammar cannot enforce exactly (uniqueItems, not, if/then/else,
 * contains, dependentSchemas, remote $ref, overlapping oneOf branches, ...)
 * is an error, GM_ERR_UNSUPPORTED, naming the keyword and its JSON pointer
 * ("keyword 'uniqueItems' at /properties/tags"); with `lenient` it is
 * relaxed to a superset instead (a valid instance is never refused) and
 * each relaxation is reported through `warn` as a warning naming keyword
 * and pointer. No keyword is ever dropped silently; unknown keywords are
 * annotations (the specification's rule) and unknown formats too (a
 * warning each).
 *
 * Strings: every spelling JSON allows, in any mix (UTF-8 as is, the short
 * escapes, \uXXXX with either case of hex digits, surrogate pairs past
 * U+FFFF; lone surrogates refused), each escape counted as the character
 * it spells by maxLength, pattern, enum, const and format.
 * The default whitespace is JSON's own between tokens, at most
 * max_ws_run characters in a row (so that a model cannot loop on
 * whitespace), none before or after the value.
 */
typedef enum gm_schema_whitespace {
    GM_SCHEMA_WS_FLEXIBLE = 0, /* [ \t\n\r]{0,max_ws_run} between tokens */
    GM_SCHEMA_WS_COMPACT,      /* no whitespace: {"a":1,"b":[1,2]} */
    GM_SCHEMA_WS_INDENT        /* json.dumps(indent=N): one member or item per line, ": " */
} gm_schema_whitespace;

#define GM_SCHEMA_MAX_WS_RUN_DEFAULT 32
#define GM_SCHEMA_MAX_AUTOMATON_STATES_DEFAULT 4000

/* The draft a schema is read as when it has no $schema (or an unknown one). */
typedef enum gm_schema_draft {
    GM_SCHEMA_DRAFT_DEFAULT = 0, /* 2020-12 */
    GM_SCHEMA_DRAFT_4 = 4,
    GM_SCHEMA_DRAFT_6 = 6,
    GM_SCHEMA_DRAFT_7 = 7,
    GM_SCHEMA_DRAFT_2019_09 = 2019,
    GM_SCHEMA_DRAFT_2020_12 = 2020
} gm_schema_draft;

typedef struct gm_schema_options {
    gm_schema_whitespace whitespace;
    uint32_t indent;          /* spaces per level for GM_SCHEMA_WS_INDENT [2] */
    uint32_t max_ws_run;      /* longest whitespace run for GM_SCHEMA_WS_FLEXIBLE
                                 [GM_SCHEMA_MAX_WS_RUN_DEFAULT] */
    const char *item_separator; /* GM_SCHEMA_WS_COMPACT and _INDENT: what separates members
                                   and items, json.dumps' separators[0]: a comma with JSON
                                   whitespace around it (", "); under _INDENT the newline
                                   follows it. NULL = "," */
    const char *key_separator;  /* the same for a key and its value, separators[1] (a colon
                                   with whitespace around it); NULL = ":" (compact), ": "
                                   (indent). GM_SCHEMA_WS_FLEXIBLE ignores both */
    bool any_order;           /* properties in any order (default: as the schema lists them) */
    gm_schema_draft draft;    /* for schemas without $schema [2020-12] */
    bool lenient;             /* over-approximate what a grammar cannot enforce; each
                                 relaxation reported through warn */
    bool format_annotation;   /* `format` as an annotation only (any string), the reading
                                 2019-09 and 2020-12 give it unless assertion is configured;
                                 default false: formats asserted, as drafts 4-7 allow and
                                 the format-assertion vocabulary asks (README, "JSON Schema") */
    gm_warning_fn warn;       /* relaxations, ignored unknown formats; may be NULL */
    void *warn_ud;
    gm_allocator allocator;
    gm_limits limits;         /* max_input_bytes bounds the schema text, max_nfa_states the
                                 grammar's expression nodes, max_regex_repeat counts in
                                 patterns */
    gm_grammar_cache *cache;  /* as gm_grammar_options.cache: a server compiling many schemas
                                 builds their common rules (strings, numbers, whitespace,
                                 free-form values) once; NULL = none */
    uint32_t max_automaton_states; /* states of one string automaton: the keys of an object
                                 with patternProperties or propertyNames, a string with
                                 several patterns, formats or exclusions; past it
                                 GM_ERR_LIMIT (with lenient, a superset)
                                 [GM_SCHEMA_MAX_AUTOMATON_STATES_DEFAULT] */
} gm_schema_options;

GM_API void gm_schema_options_init_defaults(gm_schema_options *opts);

/*
 * Compiles the JSON Schema text json[0..len) to a grammar (engine
 * GM_ENGINE_EARLEY). opts may be NULL (defaults). Errors: GM_ERR_SYNTAX
 * for malformed JSON (line:column), GM_ERR_GRAMMAR for a malformed schema
 * (a keyword of the wrong type, an unresolvable local $ref), GM_ERR_UNSUPPORTED
 * as above, GM_ERR_LIMIT for schemas past the limits (nesting deeper than
 * 512, grammars past max_nfa_states nodes, string automata past
 * max_automaton_states states); the message names the keyword, its JSON
 * pointer and the limit.
 */
GM_API gm_status gm_grammar_from_json_schema(const char *json, size_t len,
                                             const gm_schema_options *opts, gm_grammar **out,
                                             gm_error *err);



/* ------------------------------------------------------------------------
 * 4. Compiled grammar
 * ------------------------------------------------------------------------ */

/*
 * A grammar compiled for a vocabulary: everything needed to produce masks.
 * Immutable after creation except for its lazy caches, which are
 * thread-safe; reference-counted; share one between all matchers and threads.
 */
typedef struct gm_compiled gm_compiled;

/*
 * Progress of a long operation: `done` of `total` steps (done <= total;
 * called with done == total at the end). Called on the thread doing the
 * work, at most a few thousand times; it must not call back into gramask.
 */
typedef void (*gm_progress_fn)(void *ud, uint64_t done, uint64_t total);

typedef struct gm_compile_options {
    bool eager;               /* build every table now instead of on first use */
    gm_allocator allocator;
    gm_limits limits;
    gm_progress_fn progress;  /* eager compiles: called as the tables are built (LALR
                                 engine: one step per lexer-state table); NULL = none */
    void *progress_ud;        /* passed to progress unchanged */
} gm_compile_options;

GM_API void gm_compile_options_init_defaults(gm_compile_options *opts);

/* Compiles g for v (both are retained by the result). opts may be NULL. */
GM_API gm_status gm_compiled_create(gm_grammar *g, gm_vocab *v, const gm_compile_options *opts,
                                    gm_compiled **out, gm_error *err);
GM_API gm_compiled *gm_compiled_retain(gm_compiled *c);
GM_API void gm_compiled_destroy(gm_compiled *c);

/*
 * Writes everything needed to produce masks (vocabulary, lexer, parse
 * tables, and the token tables built so far: all of them after an eager
 * compile) to a file: versioned header, byte order, checksum.
 */
GM_API gm_status gm_compiled_save(const gm_compiled *c, const char *path, gm_error *err);

/*
 * Loads a file written by gm_compiled_save; no grammar or tokenizer file is
 * needed. The file is mapped read-only and its large tables are used in
 * place, so processes loading one file share them (what cannot be mapped,
 * a pipe, is read); change it only by saving a new file over it
 * (gm_compiled_save renames a new file into place). A truncated, corrupt, foreign-endian or other-version file fails
 * with GM_ERR_FORMAT saying which. opts may be NULL (eager builds the
 * tables the file lacks).
 */
GM_API gm_status gm_compiled_load(const char *path, const gm_compile_options *opts,
                                  gm_compiled **out, gm_error *err);
/*
 * The bytes gm_compiled_save writes, in memory (to send a compiled grammar
 * to another process): *out holds *len bytes from c's allocator, freed
 * with gm_compiled_free_bytes(c, *out) (c or any compiled grammar with the
 * same allocator).
 */
GM_API gm_status gm_compiled_save_bytes(const gm_compiled *c, uint8_t **out, size_t *len,
                                        gm_error *err);
GM_API void gm_compiled_free_bytes(const gm_compiled *c, uint8_t *bytes);
/*
 * gm_compiled_load from bytes in memory (borrowed: the result copies what it
 * keeps), with its errors (GM_ERR_FORMAT for truncated, corrupt, foreign or
 * other-version bytes, naming "the compiled bytes").
 */
GM_API gm_status gm_compiled_load_bytes(const void *bytes, size_t len,
                                        const gm_compile_options *opts, gm_compiled **out,
                                        gm_error *err);
/* Mask size: vocabulary ids, and uint32_t words of a mask (ceil(ids / 32)). */
GM_API uint32_t gm_compiled_vocab_size(const gm_compiled *c);
GM_API size_t gm_compiled_mask_words(const gm_compiled *c);
/* The vocabulary the grammar was compiled for (borrowed). */
GM_API const gm_vocab *gm_compiled_vocab(const gm_compiled *c);

/* Sizes of the compiled tables (for reports). */
typedef struct gm_compiled_stats {
    gm_engine engine;
    /* GM_ENGINE_LALR */
    uint32_t lexer_states;
    uint32_t terminals;
    uint32_t lr_states;
    uint32_t productions;
    uint32_t profiles_built;  /* lexer-state tables built so far (all when eager) */
    uint64_t classes;         /* token classes in those tables */
    /* GM_ENGINE_EARLEY */
    uint32_t rules;           /* rules (after inlining) */
    uint32_t fsm_states;      /* states of the rule automata */
    uint32_t cache_entries;   /* token-mask cache entries built so far (all when eager) */
    uint32_t cross_hits;      /* entries taken from the vocabulary's cross-grammar cache */
    uint64_t uncertain_tokens;/* tokens left to check at run time in those entries */
    /* both */
    uint32_t vocab_size;
    size_t table_bytes;       /* memory of the token tables / mask caches */
    size_t memory_bytes;      /* all memory held by the compiled grammar */
} gm_compiled_stats;

GM_API void gm_compiled_get_stats(const gm_compiled *c, gm_compiled_stats *stats);

/* ------------------------------------------------------------------------
 * 5. Matcher
 * ------------------------------------------------------------------------ */

/*
 * The state of one sequence being decoded. Not thread-safe: use one matcher
 * from one thread at a time (different matchers of one compiled grammar may
 * run on different threads). A matcher that hit an internal failure (memory,
 * limits) stays failed until gm_matcher_reset; a rejected token is not a
 * failure and leaves the state unchanged.
 */
typedef struct gm_matcher gm_matcher;

typedef struct gm_matcher_options {
    uint32_t max_rollback;    /* tokens kept for rollback; 0 = unlimited */
    bool terminate_without_stop_token; /* a vocabulary without EOS ids is accepted (the
                                 caller ends the output when gm_matcher_is_accepting says
                                 it may); by default gm_matcher_create refuses it with
                                 GM_ERR_ARGUMENT, as no mask could allow an end */
    bool eos_after_end;       /* after EOS was accepted, gm_matcher_fill_mask writes a mask of
                                 the EOS ids only and returns GM_OK, gm_matcher_accept_token
                                 takes another EOS id (one more step) and rejects any other
                                 token with GM_ERR_REJECTED, instead of both failing with
                                 GM_ERR_STATE: engines verifying draft tokens step past the
                                 end of a sequence */
} gm_matcher_options;

GM_API gm_status gm_matcher_create(gm_compiled *c, const gm_matcher_options *opts,
                                   gm_matcher **out, gm_error *err);
GM_API void gm_matcher_destroy(gm_matcher *m);

/*
 * Writes the next-token mask: words must be gm_compiled_mask_words(); bit
 * t % 32 of mask[t / 32] is 1 when token t is allowed. EOS ids are allowed
 * exactly when the output may end there: the output so far is a complete
 * sentence, or (an EOS id the grammar names as a special token) the grammar
 * takes it here and is complete right after it; gm_matcher_accept_token
 * agrees and ends the sequence. Other special tokens are allowed only where
 * the grammar names them, padding ids never. After EOS was accepted the mask is all zero and
 * GM_ERR_STATE is returned.
 */
GM_API gm_status gm_matcher_fill_mask(gm_matcher *m, uint32_t *mask, size_t words,
                                      gm_error *err);

/* Advances by one token; GM_ERR_REJECTED (state unchanged) when it is not allowed. */
GM_API gm_status gm_matcher_accept_token(gm_matcher *m, uint32_t token, gm_error *err);

/*
 * Speculative decoding: how many of tokens[0..n) would be accepted in a
 * row (*accepted), without changing the state.
 */
GM_API gm_status gm_matcher_validate_tokens(gm_matcher *m, const uint32_t *tokens, size_t n,
                                            size_t *accepted, gm_error *err);

/* Advances by raw bytes (counts as one step for rollback); GM_ERR_REJECTED when not allowed. */
GM_API gm_status gm_matcher_accept_bytes(gm_matcher *m, const uint8_t *bytes, size_t len,
                                         gm_error *err);

/* Undoes the last n accepted steps (tokens, byte strings or EOS). */
GM_API gm_status gm_matcher_rollback(gm_matcher *m, size_t n, gm_error *err);

/* An independent copy sharing the compiled grammar (O(1): stacks are persistent). */
GM_API gm_status gm_matcher_clone(const gm_matcher *m, gm_matcher **out, gm_error *err);

/* Back to the start of a sequence (also clears a failure). */
GM_API void gm_matcher_reset(gm_matcher *m);

/*
 * Captures (XGrammar's `rule[capture]` and `rule[capture="label"]`, Earley
 * grammars): the spans of the accepted output where a captured rule
 * completed, in the order the completions happened. deduplicate: each
 * occurrence (label, start) once, its longest completion; otherwise every
 * completion (a rule of /[0-9]+/ completes after each digit). Masks record
 * nothing; rollback, reset and clone carry the list along. *out (matcher
 * owned, *n entries; text points into the matcher's copy of the output) is
 * valid until the matcher's next call. A grammar without captures gives 0.
 */
typedef struct gm_capture {
    const char *label;        /* NUL-terminated */
    const uint8_t *text;      /* output[start .. start + len) */
    size_t start, len;
} gm_capture;
GM_API gm_status gm_matcher_captures(gm_matcher *m, bool deduplicate, const gm_capture **out,
                                     size_t *n, gm_error *err);

/* Whether EOS would be allowed now. */
GM_API bool gm_matcher_is_accepting(const gm_matcher *m);
/* Whether EOS has been accepted. */
GM_API bool gm_matcher_is_terminated(const gm_matcher *m);

/*
 * XGrammar's rule temperatures (name[temperature=t] in its EBNF): the
 * sampling temperature for the next token, that of the innermost rule with
 * one inside which the next token may be read. Where the output so far
 * reads more than one way and they disagree, *hi is the largest and *lo
 * the smallest; both are -1 where no rule with a temperature is open (the
 * caller's default applies) and after EOS. Changes nothing.
 */
GM_API gm_status gm_matcher_temperature(const gm_matcher *m, float *hi, float *lo,
                                        gm_error *err);

/*
 * Jump-forward decoding: the longest byte string that every allowed
 * continuation starts with, written to buf (at most cap bytes, *len set).
 * Does not change the state.
 */
GM_API gm_status gm_matcher_forced_bytes(gm_matcher *m, uint8_t *buf, size_t cap, size_t *len,
                                         gm_error *err);

/*
 * Speculative decoding with a tree of draft tokens (XGrammar's
 * traverse_draft_tree): the masks of every node in one call. Node 0 is the
 * root, the matcher's current state; next_token[i] is node i's first child
 * and next_sibling[i] its next sibling (-1: none); draft_tokens[i] is node
 * i's token (the root's is not read). Row i of masks (row stride `words`,
 * which must be gm_compiled_mask_words()) gets what gm_matcher_fill_mask
 * would write after the tokens on the path from the root to node i; a node
 * whose token its parent's row does not allow (or out of the vocabulary),
 * the nodes below it, and a node after EOS (unless eos_after_end) get an
 * all-zero row. The matcher's state and history are unchanged. A tree of n
 * nodes is walked once, from persistent states (no accept and rollback per
 * node); no allocation for trees of up to GM_DRAFT_TREE_SMALL nodes.
 * Errors: GM_ERR_ARGUMENT for a malformed tree (an index out of range, the
 * root with a sibling or a parent, a node linked from two places, a cycle),
 * naming the node; GM_ERR_LIMIT past GM_DRAFT_TREE_MAX_NODES nodes.
 * *completed (may be NULL) is false when opts->time_limit_s ran out first:
 * the rows not reached by then are zero (the root's is always filled).
 */
#define GM_DRAFT_TREE_MAX_NODES 65536
#define GM_DRAFT_TREE_SMALL 128

typedef struct gm_draft_tree_options {
    double time_limit_s;      /* > 0: stop once this many seconds passed (checked before each
                                 node below the root); 0 = no limit */
    bool end_when_complete;   /* a node where the output is complete counts as ended (all-zero
                                 row, no children): XGrammar's terminate_without_stop_token */
} gm_draft_tree_options;

GM_API gm_status gm_matcher_fill_draft_tree(gm_matcher *m, const int64_t *next_token,
                                            const int64_t *next_sibling,
                                            const int64_t *draft_tokens, size_t n,
                                            uint32_t *masks, size_t words,
                                            const gm_draft_tree_options *opts, bool *completed,
                                            gm_error *err);

/* ------------------------------------------------------------------------
 * 6. Batch
 * ------------------------------------------------------------------------ */

/* A pool of worker threads filling masks of many matchers at once. */
typedef struct gm_batch gm_batch;

typedef struct gm_batch_options {
    unsigned threads;         /* threads filling masks, the caller's included; 0 = one per
                                 online CPU */
    unsigned spin_us;         /* how long an idle thread keeps polling for the next call (and
                                 the caller for the last rows) before it sleeps; a sleeping
                                 thread takes tens of microseconds to wake. 0 = sleep at once */
} gm_batch_options;

#define GM_BATCH_SPIN_US_DEFAULT 100

/* opts NULL: one thread per online CPU, spin_us GM_BATCH_SPIN_US_DEFAULT. */
GM_API gm_status gm_batch_create(const gm_batch_options *opts, gm_batch **out, gm_error *err);
GM_API void gm_batch_destroy(gm_batch *b);

/*
 * Fills row i of masks (row stride `words` uint32_t) for matchers[i], i < n,
 * in parallel. Matchers of a terminated sequence get an all-zero row. Every
 * row is written even when one fails; the first failure is returned (with
 * its row index in the message). One call at a time per pool: a call while
 * another runs returns GM_ERR_STATE. A thread keeps the same rows from call
 * to call (for its caches), so keep each sequence at the same index.
 */
GM_API gm_status gm_batch_fill_masks(gm_batch *b, gm_matcher *const *matchers, size_t n,
                                     uint32_t *masks, size_t words, gm_error *err);

/* ------------------------------------------------------------------------
 * 7. Structural tags and tool calls (TagDispatch)
 * ------------------------------------------------------------------------ */

/*
 * A structural tag: XGrammar's `structural_tag` response format (JSON),
 * free text in which triggers dispatch to tags whose contents are JSON
 * Schemas, grammars or regexes, compiled to one Earley grammar (masks are
 * exact over the whole structure, across tag boundaries and across tokens
 * that straddle them). The formats and gramask's additions are listed in
 * the README (structural tags); errors name the JSON pointer.
 */
typedef struct gm_structural_tag_options {
    const char *const *special_tokens; /* texts that stand for special tokens of the
                                          tokenizer wherever they appear in a begin, end,
                                          trigger, separator or constant string (a special
                                          token is produced only by its id, never spelled) */
    size_t n_special_tokens;
    gm_schema_options schema;          /* how json_schema contents are compiled */
    gm_allocator allocator;
    gm_limits limits;
    gm_grammar_cache *cache;           /* as gm_grammar_options.cache */
    bool free_text_bytes;              /* free text (any_text, the text around tags) may be
                                          any bytes; by default it stays valid UTF-8, complete
                                          wherever it ends (README, free text). The document's
                                          "free_text": "utf8" | "bytes" overrides it */
} gm_structural_tag_options;

GM_API void gm_structural_tag_options_init_defaults(gm_structural_tag_options *opts);
GM_API gm_status gm_grammar_from_structural_tag(const char *json, size_t len,
                                                const gm_structural_tag_options *opts,
                                                gm_grammar **out, gm_error *err);

/* The tool-calling formats of the presets (README, tool calls). */
typedef enum gm_tool_format {
    GM_TOOLS_LLAMA = 1,  /* <function=NAME>{args}</function> */
    GM_TOOLS_LLAMA_JSON, /* {"name": "NAME", "parameters": {args}} */
    GM_TOOLS_QWEN,       /* <tool_call>\n{"name": "NAME", "arguments": {args}}\n</tool_call> */
    GM_TOOLS_HARMONY,    /* gpt-oss: <|channel|>commentary to=functions.NAME ... <|call|> */
    /* Model families under XGrammar's names (get_model_structural_tag; XGrammar's "llama"
       is GM_TOOLS_LLAMA_JSON): the turn starts inside the reasoning block the prompt
       opened (dispatch/tool_families.h, note [tool families]). */
    GM_TOOLS_QWEN_3,        /* qwen_3: <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call> */
    GM_TOOLS_QWEN_3_5,      /* qwen_3_5: <tool_call>\n<function=NAME>\n<parameter=K>... */
    GM_TOOLS_QWEN_3_CODER,  /* qwen_3_coder: as qwen_3_5 */
    GM_TOOLS_KIMI,          /* kimi (K2): <|tool_calls_section_begin|>... functions.NAME:N */
    GM_TOOLS_DEEPSEEK_R1,   /* deepseek_r1 (and V3): <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME */
    GM_TOOLS_DEEPSEEK_V3_1, /* deepseek_v3_1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{args} */
    GM_TOOLS_DEEPSEEK_V3_2, /* deepseek_v3_2: <｜DSML｜function_calls> invokes */
    GM_TOOLS_DEEPSEEK_V4,   /* deepseek_v4: <｜DSML｜tool_calls> invokes */
    GM_TOOLS_GLM_4_7,       /* glm_4_7: <tool_call>NAME<arg_key>K</arg_key><arg_value>... */
    GM_TOOLS_MINIMAX,       /* minimax: <minimax:tool_call>\n<invoke name="NAME">... */
    GM_TOOLS_COHERE,        /* cohere: <cofl:tool_calls><cofl:tool_call id="N" name="NAME">... */
    GM_TOOLS_EXAONE,        /* exaone: <tool_call>{"name": ..., "arguments": ...}</tool_call> */
    GM_TOOLS_KIMI_K3,       /* kimi_k3: <|open|>call tool="NAME" index="N"<|sep|>... blocks */
    GM_TOOLS_KIMI_K3_XML    /* kimi_k3_xml: as kimi_k3 */
} gm_tool_format;

typedef enum gm_tool_choice {
    GM_TOOL_CHOICE_DEFAULT = 0, /* as the tools JSON says ("tool_choice"), else auto */
    GM_TOOL_CHOICE_AUTO,        /* free text; calls allowed */
    GM_TOOL_CHOICE_REQUIRED,    /* at least one call */
    GM_TOOL_CHOICE_NONE,        /* no call */
    GM_TOOL_CHOICE_NAMED        /* calls of the tool called tool_name only, at least one */
} gm_tool_choice;

typedef enum gm_reasoning {
    GM_REASONING_ALLOWED = 0,   /* qwen <think>...</think> / harmony analysis may come first */
    GM_REASONING_FORCED,        /* must come first */
    GM_REASONING_FORBIDDEN      /* may not */
} gm_reasoning;

typedef struct gm_tools_options {
    gm_tool_format format;
    gm_tool_choice tool_choice;
    const char *tool_name;      /* GM_TOOL_CHOICE_NAMED */
    int parallel;               /* 1: several calls per turn, 0: at most one; -1 (the
                                   default): the JSON's "parallel_tool_calls", else 1 */
    gm_reasoning reasoning;
    gm_schema_options schema;   /* how the tools' parameter schemas are compiled */
    gm_allocator allocator;
    gm_limits limits;
    gm_grammar_cache *cache;    /* as gm_grammar_options.cache: a tool set that differs from
                                   an earlier one by a few tools rebuilds only theirs */
    bool free_text_bytes;       /* the turn's free text (answers, thinking, text between
                                   calls) may be any bytes, not only valid UTF-8 */
} gm_tools_options;

GM_API void gm_tools_options_init_defaults(gm_tools_options *opts);

/*
 * The grammar of one assistant turn in format opts->format with the tools of
 * tools_json[0..len): an array of OpenAI tools ({"type": "function",
 * "function": {"name", "description", "parameters"}}) or an object
 * {"tools": [...], "tool_choice": ..., "parallel_tool_calls": ...}.
 */
GM_API gm_status gm_grammar_from_tools(const char *tools_json, size_t len,
                                       const gm_tools_options *opts, gm_grammar **out,
                                       gm_error *err);

/*
 * Markdown with fenced code blocks (README, code blocks): free text in which
 * "```LANG\n" opens a block of the bundled LALR grammar LANG (languages[0..n):
 * "json", "python", "go", "java"), closed by the first "\n```"; the code in
 * a block must be a whole program there. Masks are exact over the whole
 * answer, tokens straddling the fences included. opts may be NULL.
 */
GM_API gm_status gm_grammar_from_code_blocks(const char *const *languages, size_t n,
                                             const gm_structural_tag_options *opts,
                                             gm_grammar **out, gm_error *err);

/*
 * A cache of compiled grammar parts: the rule automata of the Earley
 * engine, each stored under what it is built from (its rule's body with
 * the rules inlined into it), for the grammars built with it
 * (gm_grammar_options.cache, gm_structural_tag_options.cache,
 * gm_tools_options.cache). A tool set that differs from an earlier one by
 * one tool rebuilds that tool's automata and the dispatch around them;
 * the grammar built is the same as without the cache. Thread-safe; it and
 * the grammars built with it are independent (either may be destroyed
 * first). It holds at most max_bytes (0: 64 MiB) and is emptied when full.
 */
typedef struct gm_grammar_cache_stats {
    uint64_t hits, misses;    /* rule automata found / not found */
    uint64_t entries, bytes;  /* held now */
} gm_grammar_cache_stats;

GM_API gm_status gm_grammar_cache_create(const gm_allocator *allocator, size_t max_bytes,
                                         gm_grammar_cache **out, gm_error *err);
GM_API void gm_grammar_cache_destroy(gm_grammar_cache *c);
GM_API void gm_grammar_cache_get_stats(gm_grammar_cache *c, gm_grammar_cache_stats *out);

/*
 * XGrammar's Grammar.union / Grammar.concat: one grammar whose language is
 * the union (GM_COMBINE_UNION) or the concatenation, in order
 * (GM_COMBINE_CONCAT), of the languages of grammars[0..n), n >= 1. The
 * grammars' rules are copied under fresh names (root_1, ...), so names
 * never clash. Each must be a grammar of the Earley engine (GBNF, EBNF,
 * regex, JSON Schema, structural tag) built in this process: a Lark grammar
 * (LALR engine), one with code blocks, or one loaded from a compiled file
 * is GM_ERR_UNSUPPORTED naming which. opts (may be NULL) gives limits and
 * the allocator.
 */
typedef enum gm_combine { GM_COMBINE_UNION = 0, GM_COMBINE_CONCAT = 1 } gm_combine;
GM_API gm_status gm_grammar_combine(gm_grammar *const *grammars, size_t n, gm_combine how,
                                    const gm_grammar_options *opts, gm_grammar **out,
                                    gm_error *err);

/*
 * XGrammar's Lark dialect (%json, @name): one grammar made of `main` with
 * the body of each rule names[i] replaced by a reference to the root of
 * parts[i] (copied under fresh names). main and parts are grammars of the
 * Earley engine built in this process (as for gm_grammar_combine); a name
 * that is not a rule of main is GM_ERR_ARGUMENT. opts may be NULL.
 */
GM_API gm_status gm_grammar_link(const gm_grammar *main, const char *const *names,
                                 gm_grammar *const *parts, size_t n,
                                 const gm_grammar_options *opts, gm_grammar **out,
                                 gm_error *err);

#ifdef __cplusplus
}
#endif

#endif /* GRAMASK_H */
