/*
 * note [typedef names]
 * C's lexer feedback (grammars/c.lark, note [c: typedef names]): whether a
 * name is a type depends on the declarations in scope before it. This layer
 * keeps the names in scope (a stack of bindings per name: typedef or
 * ordinary, popped with their block) and turns an IDENTIFIER whose
 * innermost binding is a typedef into TYPEDEF_NAME before the parser gets
 * it. It learns bindings from the parser: after a name terminal is shifted,
 * the state it entered says what the name is (its kernel items are all
 * `decl_name: NAME .`, or all a parameter's name rule; a state that mixes
 * them with other items is a grammar error, checked when the layer is made):
 *  - `decl_name`: the name of a declaration's
 *    declarator; a typedef when the nearest specifier node below it on the
 *    stack was entered by `td_specifiers`, ordinary when by
 *    `declaration_specifiers`; bound in the current block;
 *  - `param_name` (or `param_type_name`): a parameter, ordinary, bound in
 *    the body of the function definition whose `{` comes next (a `{`
 *    shifted from a state with the item `function_definition: ... .
 *    compound_statement`); the pending parameters are dropped at any other
 *    `{`, at `;` and when the next declarator name comes;
 *  - `enumeration_constant`: an ordinary identifier, bound in the current
 *    block;
 *  - anything else (members, tags, labels, uses) binds nothing.
 * The `{` of a compound_statement (its shift enters a state with the item
 * `compound_statement: "{" . ...`) opens a block, with the pending
 * parameters; its `}` closes it. Other braces (struct and enum bodies,
 * initializers) open none, so enumeration constants in a struct body are
 * in the enclosing block, as in C.
 *
 * The layer is on for a grammar with the terminals IDENTIFIER, TYPEDEF_NAME
 * (%declare'd), "{", "}", ";" and the rules decl_name, param_name,
 * td_specifiers and declaration_specifiers (gm_ctypedef_create says
 * whether).
 *
 * What it does not do (differences from a C compiler's scopes):
 *  - A declaration in a `for` header, and the parameter declarations of
 *    an old-style definition, are bound in the enclosing block (C ends
 *    their scope with the loop or the body); the parameters of a
 *    prototype bind nothing; a binding starts when its name is shifted,
 *    not at the end of its declarator.
 *  - It runs in `gramask parse` (and tests) over one stream. Matchers
 *    apply the same rules on persistent scopes (parser/cscope.h) with this
 *    object's tables (runtime/cdecl.h, note [typedef-name masks]).
 *
 * Not thread-safe; one per stream.
 */
#ifndef GM_PARSER_CTYPEDEF_H
#define GM_PARSER_CTYPEDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/mem.h"
#include "base/vec.h"
#include "parser/cfg.h"
#include "parser/lr.h"

/* shift_kind bits: a `{` entering the state opens a block; one shifted from it starts a
   function body. The low bits are the kind of name its shift binds (1, 2, 3). */
#define GM_CTYPEDEF_BLOCK 0x80u
#define GM_CTYPEDEF_BODY 0x40u

typedef struct gm_ctypedef_binding {
    uint32_t name;           /* interned name id */
    uint32_t is_type;        /* 1: typedef name, 0: ordinary identifier */
    uint32_t prev;           /* the binding it shadows, or UINT32_MAX */
} gm_ctypedef_binding;

typedef struct gm_ctypedef {
    gm_mem *mem;
    const gm_lr_table *t;
    uint32_t identifier, typedef_name, lbrace, rbrace, semi; /* terminals */
    uint32_t td_specifiers, declaration_specifiers;         /* cfg symbol ids */
    uint8_t *shift_kind;     /* [nstates] a name whose shift enters the state is 1: a
                                decl_name, 2: a parameter's name, 3: an enumeration
                                constant, 0: none; | 0x80: a `{` entering it opens a block;
                                | 0x40: a `{` shifted from it starts a function body */
    gm_intern names;
    uint32_t *innermost;     /* [names.count, grown] the innermost binding, or UINT32_MAX */
    size_t ninnermost;
    GM_VEC(gm_ctypedef_binding) bindings;
    GM_VEC(uint32_t) blocks;      /* bindings.n when each open block began */
    GM_VEC(uint32_t) pending;     /* parameter names for the next `{` */
} gm_ctypedef;

/*
 * The layer for grammar g with tables t, or *out = NULL (GM_OK) when the
 * grammar does not have the symbols it works on. GM_ERR_GRAMMAR when a state
 * shifts names for both decl_name and param_name.
 */
gm_status gm_ctypedef_create(gm_mem *m, const gm_cfg *g, const gm_lr_table *t, gm_ctypedef **out,
                             gm_error *err);
void gm_ctypedef_destroy(gm_ctypedef *c);

/* Whether grammar g has the symbols the layer works on (then it needs the layer). */
bool gm_ctypedef_wanted(const gm_cfg *g);

/* Back to an empty file scope. */
void gm_ctypedef_reset(gm_ctypedef *c);

/* The terminal the parser gets for lexeme `term` with text[0..len). */
uint32_t gm_ctypedef_classify(const gm_ctypedef *c, uint32_t term, const uint8_t *text, size_t len);

/*
 * After the parser shifted `term` (the classified one) with text[0..len):
 * top is the new top of the stack (its parent is the state it was shifted
 * from). GM_ERR_NOMEM on allocation failure.
 */
gm_status gm_ctypedef_shifted(gm_ctypedef *c, const gm_lr_node *top, uint32_t term,
                              const uint8_t *text, size_t len, gm_error *err);

/* Whether the declarator whose name was shifted from `from` belongs to a typedef. */
bool gm_ctypedef_in_typedef(const gm_ctypedef *c, const gm_lr_node *from);

#endif
