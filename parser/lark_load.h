/*
 * Internal interfaces of the Lark front end after parsing: the definition
 * table that imports fill (lark_load.c), terminal composition
 * (lark_terminals.c) and EBNF->BNF desugaring into a gm_cfg (lark_bnf.c).
 */
#ifndef GM_PARSER_LARK_LOAD_H
#define GM_PARSER_LARK_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "parser/arena.h"
#include "parser/cfg.h"
#include "parser/lark_ast.h"
#include "parser/lark_pattern.h"
#include "base/hash.h"
#include "base/strbuf.h"

/* A source text the loader has read: the main grammar or an imported one. */
typedef struct gm_lsource {
    const char *name;        /* as locations show it (NULL for an unnamed main text) */
    const char *text;        /* NUL-terminated copy */
    size_t len;
} gm_lsource;

/* One loading of a grammar: everything here lives until gm_grammar_load returns. */
typedef struct gm_lload {
    gm_mem *mem;
    gm_arena arena;
    gm_error *err;
    gm_limits limits;
    const gm_grammar_options *opts;
    gm_lsource *sources;     /* [nsources] main first */
    uint32_t nsources, sources_cap;
    const char **import_stack; /* files being imported (cycle detection) */
    uint32_t import_depth;
    uint32_t ignore_count;   /* __IGNORE_n names handed out */
} gm_lload;

/* Where a definition came from, for warnings. */
enum {
    GM_LORIGIN_LOCAL = 0,    /* written in the main grammar */
    GM_LORIGIN_IMPORTED,     /* named in an %import of the main grammar (import_loc) */
    GM_LORIGIN_DEPENDENCY    /* pulled in by an import; never warned about */
};

/* The definitions of one grammar being built (Lark's GrammarBuilder). */
typedef struct gm_lbuilder {
    gm_lload *L;
    gm_intern names;         /* name -> id */
    gm_ldef **defs;          /* [cap] by id; NULL = not defined */
    uint8_t *origin;         /* [cap] GM_LORIGIN_* */
    gm_srcloc *import_loc;   /* [cap] where an imported name was imported */
    size_t cap;
    uint32_t *order;         /* ids in definition order */
    size_t norder, order_cap;
    gm_lx **ignores;         /* %ignore'd terminal names (LX_NAME) in order */
    size_t nignores, ignores_cap;
    const gm_lstmt *insert;  /* the main grammar's %insert directive, or NULL */
    const gm_lstmt *indent;  /* the main grammar's %indent directive, or NULL */
} gm_lbuilder;

/* Looks up a definition by name (NULL when not defined). */
gm_ldef *gm_lbuilder_find(const gm_lbuilder *b, const char *name);

/* Reports an error at loc with the caret line of the source loc points into. */
gm_status gm_lload_error(gm_lload *L, gm_status code, gm_srcloc loc, const char *fmt, ...)
    GM_PRINTF(4, 5);
/* Reports a warning through opts->warn (nothing when it is NULL). */
void gm_lload_warn(gm_lload *L, gm_status code, gm_srcloc loc, const char *fmt, ...)
    GM_PRINTF(4, 5);
/* Reports an allocation failure of the loader. */
gm_status gm_lload_nomem(gm_lload *L);

/*
 * Parses the main grammar text and resolves its imports into b (which must
 * be zeroed), then validates the definitions (undefined symbols, templates,
 * %ignore'd names).
 */
gm_status gm_lload_main(gm_lload *L, gm_lbuilder *b, const char *file, const char *text,
                        size_t len);
void gm_lbuilder_free(gm_lbuilder *b);

/* A terminal's pattern after composition (lark_terminals.c). */
/* Composition state for all terminals of a builder. */
typedef struct gm_lterms {
    gm_lload *L;
    const gm_lbuilder *b;
    gm_lpattern *pat;        /* [b->cap] by definition id */
    uint8_t *state;          /* [b->cap] 0 = not done, 1 = in progress, 2 = done */
    uint32_t depth;          /* current recursion depth */
} gm_lterms;

/* Composes the pattern of terminal definition d (memoized; detects cycles). */
gm_status gm_lterms_pattern(gm_lterms *t, const gm_ldef *d, gm_lpattern *out);
/* The pattern of an expression used as a rule item or %ignore (a literal, regex or range). */
gm_status gm_lterms_leaf(gm_lterms *t, const gm_lx *x, gm_lpattern *out);

/* Desugars the validated definitions of b into a gm_cfg (lark_bnf.c). */
gm_status gm_lbnf_build(gm_lload *L, gm_lbuilder *b, const char *start, gm_cfg **out);

#endif
