/*
 * A context-free grammar in plain BNF: what the grammar front end produces
 * (Lark EBNF desugared) and what the LALR(1) construction consumes.
 *
 * Symbols are numbered terminals first, then nonterminals:
 *   0 .. nterminals-1                      terminals (ids shared with the lexer)
 *   nterminals .. nterminals+nnonterminals-1  nonterminals
 * The end-of-input marker `$end` is not a grammar symbol; LR tables give it
 * the terminal index nterminals (see parser/lr.h).
 *
 * Terminals include %ignore'd ones (never on a right-hand side) and
 * %declare'd ones (no pattern; produced by a post-lexing layer such as
 * Python's indentation). Lark's tree-shaping marks (?rule, !rule, _rule,
 * -> alias) do not change the language; they are kept only for reports.
 */
#ifndef GM_PARSER_CFG_H
#define GM_PARSER_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/lexer.h"
#include "parser/postlex.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/strbuf.h"

typedef uint32_t gm_sym;

typedef struct gm_production {
    gm_sym lhs;              /* a nonterminal */
    uint32_t rhs;            /* index of the first symbol in gm_cfg.rhs */
    uint32_t len;            /* number of right-hand-side symbols (0 = empty) */
    int32_t priority;        /* Lark rule priority (rule.N); used only for --conflicts=lark */
    gm_srcloc loc;           /* the alternative in the grammar text */
    const char *alias;       /* Lark alias (`-> name`) or NULL; owned by the cfg; reports only */
} gm_production;

/* gm_cfg.rule_flags: Lark's tree-shaping marks and where a nonterminal came from (reports only). */
enum {
    GM_CFG_RULE_INLINE = 1u << 0,    /* _rule */
    GM_CFG_RULE_EXPAND1 = 1u << 1,   /* ?rule */
    GM_CFG_RULE_KEEP = 1u << 2,      /* !rule */
    GM_CFG_RULE_GENERATED = 1u << 3, /* helper made by EBNF desugaring (x*, x+, x~n) */
    GM_CFG_RULE_TEMPLATE = 1u << 4,  /* instance of a template rule, e.g. _sep{item,","} */
};

typedef struct gm_cfg {
    gm_mem *mem;             /* allocator of everything below (owned by the caller) */
    uint32_t nterminals;
    uint32_t nnonterminals;
    char **names;            /* [nterminals + nnonterminals] symbol names (anonymous terminals
                                are named by their literal, e.g. "\"(\"") */
    gm_terminal_spec *terminals; /* [nterminals] lexer input; strings owned by the cfg */
    gm_production *prods;    /* [nprods] in declaration order */
    uint32_t nprods;
    gm_sym *rhs;             /* all right-hand sides, back to back */
    uint32_t nrhs;
    gm_sym start;            /* the start nonterminal */
    gm_postlex postlex;      /* post-lexing layer from gramask directives (parser/postlex.h);
                                zeroed when the grammar has none; arrays owned by the cfg */
    char *file;              /* name of the main grammar file (for diagnostics), owned;
                                NULL when the text was loaded without a name */
    uint8_t *rule_flags;     /* [nnonterminals] GM_CFG_RULE_* (index: symbol - nterminals) */
    char **files;            /* [nfiles] every grammar file read (main first, then imports);
                                the gm_srcloc.file pointers of terminals and productions
                                point into these strings (or are NULL), owned */
    uint32_t nfiles;
} gm_cfg;

static inline bool gm_cfg_is_terminal(const gm_cfg *g, gm_sym s) { return s < g->nterminals; }
static inline uint32_t gm_cfg_nsymbols(const gm_cfg *g) { return g->nterminals + g->nnonterminals; }

void gm_cfg_destroy(gm_cfg *g);

/*
 * Appends the cfg as stable text (golden tests, `gramask grammar`): the
 * start symbol, the terminals in id order with pattern, flags, priority and
 * %ignore/%declare marks, the %insert directive when there is one (terminals
 * in id order), then the productions in id order as
 * `lhs: rhs...` with rule modifiers, `-> alias` and priority, then the
 * indentation layer when it is on (`%indent NL INDENT DEDENT open ...
 * close ... tab N`). Check out->failed for allocation failure.
 */
void gm_cfg_dump(const gm_cfg *g, gm_strbuf *out);

/* Conflict handling of the LALR(1) construction: the public gm_conflicts
 * (GM_CONFLICTS_ERROR by default, GM_CONFLICTS_LARK on request). */
typedef gm_conflicts gm_conflict_mode;

/* Internal third mode, Bison's default resolution: shift wins, the earlier
 * production wins reduce/reduce; each resolution a warning. Used to compare
 * the tables with Bison's on conflicting grammars (tests/test_lalr_bison.c). */
#define GM_CONFLICTS_BISON ((gm_conflict_mode)2)

#endif
