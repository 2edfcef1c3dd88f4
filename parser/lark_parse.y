/*
 * The Bison grammar of Lark grammar files: a pure, reentrant LALR(1) parser
 * (no globals) that builds a gm_lmodule in the scanner's arena. It follows
 * Lark's own grammar of grammars (lark/load_grammar.py): definitions end at
 * a newline, `|` after a newline continues them (note [Lark newlines]).
 */
%code requires {
#include "parser/lark_state.h"
}

%code provides {
/* Implemented by the scanner (lark_scan.re). */
int gm_lark_yylex(GM_LARK_YYSTYPE *lval, GM_LARK_YYLTYPE *lloc, gm_lscan *S);

/*
 * Parses text[0..len) (text[len] must be '\0') into a module allocated in a.
 * Errors carry file:line:column and a caret line. GM_ERR_NOMEM on failure
 * of the arena's allocator (GM_ERR_LIMIT when its memory limit refused).
 */
gm_status gm_lark_parse(gm_arena *a, const char *file, const char *text, size_t len,
                        gm_lmodule **out, gm_error *err);
}

%code {
#include <stdio.h>
#include <string.h>

static void gm_lark_yyerror(GM_LARK_YYLTYPE *lloc, gm_lscan *S, const char *msg);

/* A fixed stack that never grows (note [parser stack]). */
#define YYINITDEPTH 1000
#define YYMAXDEPTH 1000
#define YYMALLOC(n) ((void)(n), (void *)0)
#define YYFREE(p) ((void)(p))

#define LOC(l) ((gm_srcloc){S->file, (uint32_t)(l).first_line, (uint32_t)(l).first_column})
#define NEW(kind, l) gm_lx_new(S->arena, (kind), LOC(l))
#define CHECK(x)                  \
    do {                          \
        if (!(x)) {               \
            gm_lscan_nomem(S);    \
            YYABORT;              \
        }                         \
    } while (0)

/*
 * note [parser stack]
 * Nesting is bounded by the scanner (GM_LARK_MAX_NESTING brackets), and
 * each level takes a handful of stack entries, so a fixed stack on the C
 * stack is enough and Bison never allocates. Overflowing it anyway is
 * reported as a limit, never a crash.
 */

static gm_lstmt *new_stmt(gm_lscan *S, gm_lstmt_kind kind, gm_srcloc loc)
{
    gm_lstmt *st = gm_arena_alloc(S->arena, sizeof *st);
    if (st) {
        st->kind = (uint8_t)kind;
        st->loc = loc;
    }
    return st;
}

static int push_stmt(gm_lscan *S, gm_lstmt *st)
{
    gm_lmodule *m = S->mod;
    size_t cap = m->cap;
    if (gm_arena_grow(S->arena, (void **)&m->stmts, &cap, (size_t)m->n + 1, sizeof *m->stmts,
                      m->n))
        return -1;
    m->cap = (uint32_t)cap;
    m->stmts[m->n++] = st;
    return 0;
}

/* Appends a name (with its alias and location) to an import or %declare statement. */
static int push_name(gm_lscan *S, gm_lstmt *st, const char *name, gm_srcloc loc)
{
    if (st->nnames == st->names_cap) {
        size_t cap = st->names_cap, c2 = cap, c3 = cap;
        if (gm_arena_grow(S->arena, (void **)&st->names, &cap, (size_t)st->nnames + 1,
                          sizeof *st->names, st->nnames) ||
            gm_arena_grow(S->arena, (void **)&st->aliases, &c2, (size_t)st->nnames + 1,
                          sizeof *st->aliases, st->nnames) ||
            gm_arena_grow(S->arena, (void **)&st->name_locs, &c3, (size_t)st->nnames + 1,
                          sizeof *st->name_locs, st->nnames))
            return -1;
        st->names_cap = (uint32_t)cap;
    }
    st->names[st->nnames] = name;
    st->aliases[st->nnames] = name;
    st->name_locs[st->nnames] = loc;
    st->nnames++;
    return 0;
}

/* Moves the names of a dotted import path to its `path` (all but the last, for a single import). */
static int split_path(gm_lscan *S, gm_lstmt *st, uint32_t keep)
{
    uint32_t np = st->nnames - keep;
    st->path = gm_arena_array(S->arena, np ? np : 1, sizeof *st->path);
    if (!st->path)
        return -1;
    for (uint32_t i = 0; i < np; i++)
        st->path[i] = st->names[i];
    st->npath = np;
    for (uint32_t i = 0; i < keep; i++) {
        st->names[i] = st->names[np + i];
        st->aliases[i] = st->aliases[np + i];
        st->name_locs[i] = st->name_locs[np + i];
    }
    st->nnames = keep;
    return 0;
}

static gm_ldef *new_def(gm_lscan *S, const char *name, bool is_term, gm_srcloc loc)
{
    gm_ldef *d = gm_arena_alloc(S->arena, sizeof *d);
    if (d) {
        d->name = name;
        d->is_term = is_term;
        d->loc = loc;
    }
    return d;
}
}

%define api.pure full
%define api.prefix {gm_lark_yy}
%define api.token.prefix {TOK_}
%define parse.error custom
%define lr.default-reduction consistent
%locations
%param {gm_lscan *S}

%union {
    const char *str;
    struct { const char *bytes; size_t len; unsigned flags; } lit;
    int64_t num;
    unsigned mods;
    int op;
    gm_lx *x;
    gm_ldef *def;
    gm_lstmt *st;
}

%token END 0 "end of input"
%token ERROR "invalid token"
%token NL "end of line"
%token OR "'|'"
%token COLON "':'"
%token LPAR "'('"
%token RPAR "')'"
%token LBRA "'['"
%token RBRA "']'"
%token LBRACE "'{'"
%token RBRACE "'}'"
%token COMMA "','"
%token ARROW "'->'"
%token DOTDOT "'..'"
%token DOT "'.'"
%token TILDE "'~'"
%token <op> OP "operator"
%token <mods> MODS "rule modifier"
%token <num> NUMBER "number"
%token <str> RULE "rule name"
%token <str> TERM "terminal name"
%token <lit> STRING "string"
%token <lit> REGEX "regular expression"
%token IGNORE "%ignore"
%token IMPORT "%import"
%token DECLARE "%declare"
%token OVERRIDE "%override"
%token EXTEND "%extend"
%token INSERT "%insert"
%token INDENT "%indent"

%type <x> expansions alias expansion expr atom value targs insert_item insert_list
%type <def> definition rule_def term_def rule_head
%type <st> import_path dotted name_list declare_list params insert_clauses
%type <mods> mods
%type <num> priority

%%

file:
    %empty
  | file NL
  | file stmt NL
  ;

stmt:
    definition {
        gm_lstmt *st = new_stmt(S, LS_DEF, $1->loc);
        CHECK(st);
        st->def = $1;
        CHECK(!push_stmt(S, st));
    }
  | OVERRIDE definition {
        gm_lstmt *st = new_stmt(S, LS_DEF, LOC(@1));
        CHECK(st);
        $2->how = LDEF_OVERRIDE;
        st->def = $2;
        CHECK(!push_stmt(S, st));
    }
  | EXTEND definition {
        gm_lstmt *st = new_stmt(S, LS_DEF, LOC(@1));
        CHECK(st);
        $2->how = LDEF_EXTEND;
        st->def = $2;
        CHECK(!push_stmt(S, st));
    }
  | IGNORE expansions {
        gm_lstmt *st = new_stmt(S, LS_IGNORE, LOC(@1));
        CHECK(st);
        st->expr = $2;
        CHECK(!push_stmt(S, st));
    }
  | IMPORT import_path {
        if ($2->nnames < 2) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, $2->name_locs[0],
                           "nothing imported from '%s': name a symbol, as in %%import %s.NAME",
                           $2->names[0], $2->names[0]);
            YYABORT;
        }
        CHECK(!split_path(S, $2, 1));
        $2->loc = LOC(@1);
        CHECK(!push_stmt(S, $2));
    }
  | IMPORT import_path ARROW RULE {
        if ($2->nnames < 2) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, $2->name_locs[0],
                           "nothing imported from '%s'", $2->names[0]);
            YYABORT;
        }
        CHECK(!split_path(S, $2, 1));
        $2->aliases[0] = $4;
        $2->loc = LOC(@1);
        CHECK(!push_stmt(S, $2));
    }
  | IMPORT import_path ARROW TERM {
        if ($2->nnames < 2) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, $2->name_locs[0],
                           "nothing imported from '%s'", $2->names[0]);
            YYABORT;
        }
        CHECK(!split_path(S, $2, 1));
        $2->aliases[0] = $4;
        $2->loc = LOC(@1);
        CHECK(!push_stmt(S, $2));
    }
  | IMPORT import_path LPAR name_list RPAR {
        gm_lstmt *p = $2;
        CHECK(!split_path(S, p, 0));
        for (uint32_t i = 0; i < $4->nnames; i++)
            CHECK(!push_name(S, p, $4->names[i], $4->name_locs[i]));
        p->loc = LOC(@1);
        CHECK(!push_stmt(S, p));
    }
  | DECLARE declare_list {
        $2->loc = LOC(@1);
        CHECK(!push_stmt(S, $2));
    }
  | INSERT insert_item insert_clauses {
        gm_lstmt *st = $3;
        st->loc = LOC(@1);
        st->insert = $2;
        const char *missing = !st->at ? "at" : !st->after ? "after" : NULL;
        if (missing) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, st->loc,
                           "%%insert needs an '%s' list: %%insert \";\" at NEWLINE after NAME "
                           "\")\" ...", missing);
            YYABORT;
        }
        CHECK(!push_stmt(S, st));
    }
  | INDENT insert_list {
        /* note [indent directive] (lark_bnf.c): the items are checked there */
        gm_lstmt *st = new_stmt(S, LS_INDENT, LOC(@1));
        CHECK(st);
        st->expr = $2;
        CHECK(!push_stmt(S, st));
    }
  ;

/* note [semicolon insertion] (parser/postlex.h): `at` and `after` lists, in either order, and
   optionally an `offending` list (note [offending-token insertion]). */
insert_clauses:
    %empty { $$ = new_stmt(S, LS_INSERT, LOC(@$)); CHECK($$); }
  | insert_clauses RULE insert_list {
        $$ = $1;
        gm_lx **slot = !strcmp($2, "at") ? &$$->at : !strcmp($2, "after") ? &$$->after
                     : !strcmp($2, "offending") ? &$$->offending
                     : !strcmp($2, "nolex") ? &$$->nolex
                     : !strcmp($2, "glued") ? &$$->glued
                     : !strcmp($2, "rename") ? &$$->rename : NULL;
        if (!slot) {
            gm_lscan_error(S, GM_ERR_SYNTAX, LOC(@2),
                           "unknown %%insert clause '%s' (expected at, after, offending, nolex, "
                           "glued or rename)", $2);
            YYABORT;
        }
        if (*slot) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(@2), "%%insert has two '%s' lists", $2);
            YYABORT;
        }
        *slot = $3;
    }
  ;

insert_list:
    insert_item {
        $$ = NEW(LX_SEQ, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
    }
  | insert_list insert_item {
        $$ = $1;
        CHECK(!gm_lx_push(S->arena, $$, $2));
    }
  ;

insert_item:
    TERM {
        $$ = NEW(LX_NAME, @1);
        CHECK($$);
        $$->name = $1;
        $$->is_term = true;
    }
  | STRING {
        $$ = NEW(LX_LITERAL, @1);
        CHECK($$);
        $$->bytes = $1.bytes;
        $$->len = $1.len;
        $$->flags = $1.flags;
    }
  ;

definition: rule_def | term_def ;

rule_def:
    rule_head priority COLON expansions {
        $$ = $1;
        $$->has_priority = $2 != INT64_MIN;
        $$->priority = $2 == INT64_MIN ? 0 : (int32_t)$2;
        $$->body = $4;
    }
  ;

rule_head:
    mods RULE {
        $$ = new_def(S, $2, false, LOC(@2));
        CHECK($$);
        $$->mods = (uint8_t)$1;
    }
  | mods RULE LBRACE params RBRACE {
        $$ = new_def(S, $2, false, LOC(@2));
        CHECK($$);
        $$->mods = (uint8_t)$1;
        $$->params = $4->names;
        $$->param_locs = $4->name_locs;
        $$->nparams = $4->nnames;
    }
  ;

params:
    RULE {
        $$ = new_stmt(S, LS_DECLARE, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | params COMMA RULE { $$ = $1; CHECK(!push_name(S, $$, $3, LOC(@3))); }
  ;

term_def:
    TERM priority COLON expansions {
        $$ = new_def(S, $1, true, LOC(@1));
        CHECK($$);
        $$->has_priority = $2 != INT64_MIN;
        $$->priority = $2 == INT64_MIN ? 0 : (int32_t)$2;
        $$->body = $4;
    }
  ;

mods:
    %empty { $$ = 0; }
  | MODS { $$ = $1; }
  ;

priority:
    %empty { $$ = INT64_MIN; }
  | DOT NUMBER { $$ = $2; }
  ;

expansions:
    alias {
        $$ = NEW(LX_ALT, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
    }
  | expansions OR alias {
        $$ = $1;
        CHECK(!gm_lx_push(S->arena, $$, $3));
    }
  ;

alias:
    expansion { $$ = $1; }
  | expansion ARROW RULE { $$ = $1; $$->alias = $3; }
  ;

expansion:
    %empty { $$ = NEW(LX_SEQ, @$); CHECK($$); }
  | expansion expr {
        $$ = $1;
        if ($$->n == 0)
            $$->loc = $2->loc;
        CHECK(!gm_lx_push(S->arena, $$, $2));
    }
  ;

expr:
    atom { $$ = $1; }
  | atom OP {
        $$ = NEW($2 == '?' ? LX_OPT : $2 == '*' ? LX_STAR : LX_PLUS, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
    }
  | atom TILDE NUMBER {
        if ($3 < 0) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(@3), "a repetition count cannot be negative");
            YYABORT;
        }
        $$ = NEW(LX_REPEAT, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
        $$->min = $$->max = (uint32_t)$3;
    }
  | atom TILDE NUMBER DOTDOT NUMBER {
        if ($3 < 0 || $5 < $3) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(@3),
                           "bad repetition range %lld..%lld (need 0 <= min <= max)",
                           (long long)$3, (long long)$5);
            YYABORT;
        }
        $$ = NEW(LX_REPEAT, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
        $$->min = (uint32_t)$3;
        $$->max = (uint32_t)$5;
    }
  ;

atom:
    LPAR expansions RPAR { $$ = $2; $$->loc = LOC(@1); }
  | LBRA expansions RBRA {
        $$ = NEW(LX_MAYBE, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $2));
    }
  | value { $$ = $1; }
  ;

value:
    TERM {
        $$ = NEW(LX_NAME, @1);
        CHECK($$);
        $$->name = $1;
        $$->is_term = true;
    }
  | RULE {
        $$ = NEW(LX_NAME, @1);
        CHECK($$);
        $$->name = $1;
    }
  | STRING {
        $$ = NEW(LX_LITERAL, @1);
        CHECK($$);
        $$->bytes = $1.bytes;
        $$->len = $1.len;
        $$->flags = $1.flags;
    }
  | REGEX {
        $$ = NEW(LX_REGEX, @1);
        CHECK($$);
        $$->bytes = $1.bytes;
        $$->len = $1.len;
        $$->flags = $1.flags;
    }
  | STRING DOTDOT STRING {
        uint32_t cp[2];
        const char *b[2] = {$1.bytes, $3.bytes};
        size_t n[2] = {$1.len, $3.len};
        GM_LARK_YYLTYPE at[2] = {@1, @3};
        for (int i = 0; i < 2; i++) {
            if (!gm_lark_one_char(b[i], n[i], &cp[i])) {
                gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(at[i]),
                               "a literal range needs one character on each side");
                YYABORT;
            }
        }
        if ($1.flags || $3.flags) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(@1), "a literal range takes no flags");
            YYABORT;
        }
        if (cp[1] < cp[0]) {
            gm_lscan_error(S, GM_ERR_GRAMMAR, LOC(@1),
                           "empty literal range: U+%04X comes after U+%04X", (unsigned)cp[0],
                           (unsigned)cp[1]);
            YYABORT;
        }
        $$ = NEW(LX_RANGE, @1);
        CHECK($$);
        $$->min = cp[0];
        $$->max = cp[1];
    }
  | RULE LBRACE targs RBRACE {
        $$ = $3;
        $$->name = $1;
        $$->loc = LOC(@1);
    }
  ;

targs:
    value {
        $$ = NEW(LX_TEMPLATE, @1);
        CHECK($$ && !gm_lx_push(S->arena, $$, $1));
    }
  | targs COMMA value {
        $$ = $1;
        CHECK(!gm_lx_push(S->arena, $$, $3));
    }
  ;

import_path:
    dotted { $$ = $1; }
  | DOT dotted { $$ = $2; $$->relative = true; }
  ;

dotted:
    RULE {
        $$ = new_stmt(S, LS_IMPORT, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | TERM {
        $$ = new_stmt(S, LS_IMPORT, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | dotted DOT RULE { $$ = $1; CHECK(!push_name(S, $$, $3, LOC(@3))); }
  | dotted DOT TERM { $$ = $1; CHECK(!push_name(S, $$, $3, LOC(@3))); }
  ;

name_list:
    RULE {
        $$ = new_stmt(S, LS_IMPORT, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | TERM {
        $$ = new_stmt(S, LS_IMPORT, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | name_list COMMA RULE { $$ = $1; CHECK(!push_name(S, $$, $3, LOC(@3))); }
  | name_list COMMA TERM { $$ = $1; CHECK(!push_name(S, $$, $3, LOC(@3))); }
  ;

declare_list:
    RULE {
        $$ = new_stmt(S, LS_DECLARE, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | TERM {
        $$ = new_stmt(S, LS_DECLARE, LOC(@1));
        CHECK($$ && !push_name(S, $$, $1, LOC(@1)));
    }
  | declare_list RULE { $$ = $1; CHECK(!push_name(S, $$, $2, LOC(@2))); }
  | declare_list TERM { $$ = $1; CHECK(!push_name(S, $$, $2, LOC(@2))); }
  ;

%%

static void gm_lark_yyerror(GM_LARK_YYLTYPE *lloc, gm_lscan *S, const char *msg)
{
    if (!strcmp(msg, "memory exhausted"))
        gm_lscan_error(S, GM_ERR_LIMIT, LOC(*lloc), "grammar nested too deeply for the parser");
    else
        gm_lscan_error(S, GM_ERR_SYNTAX, LOC(*lloc), "%s", msg);
}

/* The token just read, for messages: its text, or a description. */
static void describe_token(const gm_lscan *S, yysymbol_kind_t sym, char *buf, size_t cap)
{
    if (sym == YYSYMBOL_NL) {
        snprintf(buf, cap, "end of line");
        return;
    }
    if (sym == YYSYMBOL_YYEOF) {
        snprintf(buf, cap, "end of input");
        return;
    }
    const unsigned char *p = S->tok;
    while (p < S->cur && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t'))
        p++;
    size_t n = 0;
    while (p + n < S->cur && p[n] != '\n' && p[n] != '\r' && n < 40)
        n++;
    snprintf(buf, cap, "'%.*s'%s", (int)n, (const char *)p, p + n < S->cur ? "..." : "");
}

static int yyreport_syntax_error(const yypcontext_t *ctx, gm_lscan *S)
{
    if (S->status != GM_OK)
        return 0; /* the scanner already said what is wrong */
    yysymbol_kind_t la = yypcontext_token(ctx);
    gm_srcloc loc = LOC(*yypcontext_location(ctx));
    enum { NEXP = 8 };
    yysymbol_kind_t exp[NEXP];
    int n = yypcontext_expected_tokens(ctx, exp, NEXP);
    char what[64];
    describe_token(S, la, what, sizeof what);
    bool want_colon = false;
    for (int i = 0; i < n; i++)
        want_colon |= exp[i] == YYSYMBOL_COLON;
    if (want_colon) {
        gm_lscan_error(S, GM_ERR_SYNTAX, loc,
                       "missing ':' after the name of a definition (found %s)", what);
        return 0;
    }
    if (la == YYSYMBOL_OP) {
        gm_lscan_error(S, GM_ERR_SYNTAX, loc,
                       "misplaced operator %s: ?, * and + follow an item", what);
        return 0;
    }
    char list[256] = "";
    if (n > 0 && n <= 6) {
        size_t used = 0;
        for (int i = 0; i < n; i++) {
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     i == 0 ? "; expected " : i == n - 1 ? " or " : ", ",
                                     yysymbol_name(exp[i]));
            if (used >= sizeof list)
                break;
        }
    }
    gm_lscan_error(S, GM_ERR_SYNTAX, loc, "unexpected %s%s", what, list);
    return 0;
}

gm_status gm_lark_parse(gm_arena *a, const char *file, const char *text, size_t len,
                        gm_lmodule **out, gm_error *err)
{
    *out = NULL;
    gm_lscan s;
    memset(&s, 0, sizeof s);
    s.arena = a;
    s.file = file;
    s.text = text;
    s.len = len;
    s.cur = (const unsigned char *)text;
    s.lim = (const unsigned char *)text + len;
    s.tok = s.cur;
    s.line_start = s.cur;
    s.line = 1;
    s.last_was_nl = true;
    s.err = err;
    s.mod = gm_arena_alloc(a, sizeof *s.mod);
    if (!s.mod)
        return gm_mem_fail(a->mem, err, "parsing a grammar");
    s.mod->file = file;
    s.mod->text = text;
    s.mod->len = len;
    int r = gm_lark_yyparse(&s);
    if (s.status != GM_OK)
        return s.status;
    if (r != 0) {
        /* Bison gave up without a message of ours: only allocation can do that. */
        return gm_lscan_nomem(&s);
    }
    *out = s.mod;
    return GM_OK;
}
