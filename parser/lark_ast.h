/*
 * The syntax tree of one Lark grammar file, as the Bison parser builds it
 * (all nodes in a gm_arena), and the entry point of the parser.
 *
 * Expressions keep Lark's EBNF as written: sequences, alternatives, names,
 * literals, the operators ? * + [..] ~, and template uses. Literal and regex
 * bytes are already unescaped the way Lark's eval_escaping does it (see
 * lark_scan.re); names are arena strings.
 */
#ifndef GM_PARSER_LARK_AST_H
#define GM_PARSER_LARK_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "parser/arena.h"
#include "base/error.h"

typedef enum gm_lx_kind {
    LX_SEQ,      /* kids in order; no kids = the empty string */
    LX_ALT,      /* alternatives (kids); a kid may carry an alias */
    LX_NAME,     /* reference to a rule or terminal (name, is_term) */
    LX_LITERAL,  /* "..." or "..."i (bytes, flags) */
    LX_REGEX,    /* /.../flags (bytes, flags) */
    LX_RANGE,    /* "a".."z" (lo, hi code points) */
    LX_OPT,      /* x? */
    LX_MAYBE,    /* [x] */
    LX_STAR,     /* x* */
    LX_PLUS,     /* x+ */
    LX_REPEAT,   /* x ~ min..max */
    LX_TEMPLATE, /* name{kids...}: use of a template rule */
    LX_SYM       /* a resolved grammar symbol (desugaring only; sym) */
} gm_lx_kind;

typedef struct gm_lx {
    uint8_t kind;            /* gm_lx_kind */
    bool is_term;            /* LX_NAME: an uppercase (terminal) name */
    unsigned flags;          /* LX_LITERAL, LX_REGEX: GM_RE_* */
    uint32_t n, cap;         /* kids */
    struct gm_lx **kids;
    const char *name;        /* LX_NAME, LX_TEMPLATE */
    const char *alias;       /* `-> alias` on an alternative, or NULL */
    const char *bytes;       /* LX_LITERAL, LX_REGEX: unescaped text (NUL-terminated) */
    size_t len;
    uint32_t min, max;       /* LX_REPEAT counts; LX_RANGE code points */
    uint32_t sym;            /* LX_SYM */
    gm_srcloc loc;           /* where the expression starts */
} gm_lx;

/* Rule modifiers (?rule, !rule) and what the loader knows of a rule. */
enum {
    GM_LMOD_EXPAND1 = 1u << 0, /* ?rule */
    GM_LMOD_KEEP = 1u << 1,    /* !rule */
};

typedef enum gm_ldef_how { LDEF_DEFINE, LDEF_OVERRIDE, LDEF_EXTEND } gm_ldef_how;

/* A rule or terminal definition (also %declare'd names: body NULL). */
typedef struct gm_ldef {
    const char *name;
    bool is_term;
    uint8_t how;             /* gm_ldef_how */
    uint8_t mods;            /* GM_LMOD_* */
    bool has_priority;
    int32_t priority;
    const char **params;     /* template parameters (rules only) */
    gm_srcloc *param_locs;
    uint32_t nparams;
    gm_lx *body;             /* LX_ALT; NULL for a %declare'd symbol */
    gm_srcloc loc;           /* the defined name */
} gm_ldef;

typedef enum gm_lstmt_kind { LS_DEF, LS_IGNORE, LS_IMPORT, LS_DECLARE, LS_INSERT,
                             LS_INDENT } gm_lstmt_kind;

typedef struct gm_lstmt {
    uint8_t kind;            /* gm_lstmt_kind */
    gm_srcloc loc;           /* the directive or definition */
    gm_ldef *def;            /* LS_DEF */
    gm_lx *expr;             /* LS_IGNORE: an LX_ALT; LS_INDENT: an LX_SEQ of the items of
                                `%indent NL INDENT DEDENT OPEN CLOSE ...` (LX_NAME terminals
                                or LX_LITERALs; note [indent directive] in lark_bnf.c) */
    /* LS_IMPORT: `%import [.]a.b.NAME [-> ALIAS]` or `%import [.]a.b (N1, N2)`.
       path excludes the imported names. LS_DECLARE: names only. */
    bool relative;
    const char **path;
    uint32_t npath;
    const char **names;
    const char **aliases;    /* [nnames] the local names (= names unless `->`) */
    gm_srcloc *name_locs;
    uint32_t nnames, names_cap;
    /* LS_INSERT: `%insert X at A B... after C D...` (note [semicolon insertion] in
       parser/postlex.h). Items are LX_NAME terminals or LX_LITERALs. */
    gm_lx *insert;           /* the inserted terminal */
    gm_lx *at;               /* LX_SEQ of the line-end terminals */
    gm_lx *after;            /* LX_SEQ of the terminals that trigger insertion */
    gm_lx *offending;        /* LX_SEQ or NULL: note [offending-token insertion] (postlex.h) */
    gm_lx *nolex;            /* LX_SEQ or NULL: terminals the rule adds to no contextual lexer */
    gm_lx *glued;            /* LX_SEQ or NULL: terminals nothing ignored may precede */
    gm_lx *rename;           /* LX_SEQ or NULL: pairs FROM TO fed as TO after a line end */
} gm_lstmt;

typedef struct gm_lmodule {
    const char *file;        /* for diagnostics; may be NULL */
    const char *text;        /* the source (NUL at text[len]) */
    size_t len;
    gm_lstmt **stmts;
    uint32_t n, cap;
} gm_lmodule;

/* Deepest nesting of ( [ { that a grammar may use. */
#define GM_LARK_MAX_NESTING 100

/* Tree building, shared by the parser and the template expander. NULL on allocation failure. */
gm_lx *gm_lx_new(gm_arena *a, gm_lx_kind kind, gm_srcloc loc);
/* Appends kid to x->kids; -1 on allocation failure. */
int gm_lx_push(gm_arena *a, gm_lx *x, gm_lx *kid);
/* A deep copy with LX_NAME/LX_TEMPLATE names passed through rename (may be NULL). */
gm_lx *gm_lx_copy(gm_arena *a, const gm_lx *x,
                  const char *(*rename)(void *ud, const char *name), void *ud);

/* Whether bytes[0..n) is exactly one UTF-8 encoded code point (stored in *cp). */
bool gm_lark_one_char(const char *bytes, size_t n, uint32_t *cp);

#endif
