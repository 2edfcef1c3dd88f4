#!/usr/bin/env python3
"""Writes grammars/rust.lark (the bundled Rust 2021 grammar).

usage: rust_gen.py > grammars/rust.lark

The grammar is generated because three of its parts are families a Lark
file cannot abbreviate:
  - nested block comments and raw strings are regular only up to a bound,
    and their regexes are built here for that bound (COMMENT_DEPTH,
    RAW_HASHES);
  - the expression grammar exists in three variants (note [rust: expression
    variants] in the output) that differ only in their leftmost operand;
  - the token-tree terminal list (every terminal but the delimiters) is
    collected from the rules themselves.
Edit this script, not rust.lark; `make check` (tests/test_rust_grammar)
fails when the two disagree.
"""
import re
import sys

COMMENT_DEPTH = 8     # block comments nest at most this deep (deeper: lexical error)
RAW_HASHES = 8        # r#..#"..."#..# with at most this many '#'


def block_comment():
    """/* ... */ with nesting up to COMMENT_DEPTH, as rustc lexes it.

    Inside a comment the lexer is in one of three situations: after '*'
    (a '/' closes), after '/' (a '*' opens a nested comment), or neither.
    body(k) is what follows an opening "/*" at nesting level k (k levels
    still allowed, itself included) up to and including its "*/"."""
    def unit(k):
        # a carriage return only in a CRLF line end: rustc rejects a bare CR in a
        # block doc comment (`/** */`, `/*! */`), and the comments are one terminal
        o = r"(?:[^*/\r]|\r\n)"
        alts = [o, r"\*+" + o, r"/+" + o]
        if k > 1:
            alts.append(r"/+\*" + body(k - 1))
        return "(?:" + "|".join(alts) + ")"

    def body(k):
        return "(?:" + unit(k) + r"*\*+/)"

    return (r"/\*" + body(COMMENT_DEPTH)).replace("/", r"\/")


def raw_string(prefix):
    """prefix r / br: r"..." and r#"..."# ... with matching '#' counts up to RAW_HASHES.

    With n hashes the body may hold '"' followed by fewer than n '#' and
    then anything but '#' or '"'; the first '"' followed by n '#' ends it."""
    # a carriage return only in a CRLF line end (rustc: "bare CR not allowed in raw string")
    c, c2 = r'(?:[^"\r]|\r\n)', r'(?:[^"#\r]|\r\n)'
    alts = [prefix + '"%s*"' % c]
    for n in range(1, RAW_HASHES + 1):
        q = '"#{0,%d}' % (n - 1)
        alts.append(prefix + "#{%d}" % n + '"(?:%s|(?:%s)+%s)*(?:%s)*"#{%d}' % (c, q, c2, q, n))
    return "(?:" + "|".join(alts) + ")"


# ---------------------------------------------------------------------------
# note [rust: expression variants]

BLOCKLIKE = "blocklike"
XLEVELS = ("bor", "bxor", "band", "shift", "add", "mul")


def expr_levels():
    """The binary/unary/postfix levels for the variants
         f  full expressions;
         n  no struct literal and no bare block at top level (the scrutinee of
            if/while/match/for: `if x == S { ... }` must end at `{`);
         s  statement start: a block-like expression at the start is a
            statement of its own (`if c {} - 1` is two statements), unless
            a `.` or `?` follows it (`match x {}.len() + 1;`).
       The right operand of an operator is `n` inside `n` and `f` otherwise
       (only the leftmost operand of a statement is restricted)."""
    out = []
    bins = [
        ("or", "and", ['"||"']),
        ("and", "cmp", ['"&&"']),
        (None, None, None),  # cmp: non-associative, below
        ("bor", "bxor", ['"|"']),
        ("bxor", "band", ['"^"']),
        ("band", "shift", ['"&"']),
        ("shift", "add", ['"<<"', '">>"']),
        ("add", "mul", ['"+"', '"-"']),
        ("mul", "cast", ['"*"', '"/"', '"%"']),
    ]
    for v in "fns":
        w = "n" if v == "n" else "f"
        out.append("?expr_%s: assign_%s | jump_%s | closure_%s | \"&\" closure_%s | \"&\" \"mut\" closure_%s"
                   % (v, v, w, w, w, w))
        out.append("?assign_%s: range_%s | range_%s assign_op expr_%s" % (v, v, v, w))
        out.append("?range_%s: or_%s | or_%s \"..\" or_%s | or_%s \"..=\" or_%s | or_%s \"..\""
                   " | \"..\" or_%s | \"..=\" or_%s | \"..\" | or_dd_%s or_%s | or_dd_%s"
                   " | or_ddeq_%s or_%s" % (v, v, v, w, v, w, v, w, w, v, w, v, v, w))
        # note [rust: numbers and dots]: the left side of a range whose last
        # token is an integer fused with the `..` (`i + 1..n`)
        for dd, term in (("dd", "INT_DOTDOT"), ("ddeq", "INT_DOTDOTEQ")):
            for name, lower, ops in bins:
                if name is None:
                    out.append("cmp_%s_%s: bor_%s_%s | bor_%s cmp_op bor_%s_%s | bor_x_%s \"<\" bor_%s_%s"
                               % (dd, v, dd, v, v, dd, w, v, dd, w))
                    continue
                left = lambda op: "%s_x_%s" % (name, v) if op == '"<<"' else "%s_%s" % (name, v)
                alts = " | ".join("%s %s %s_%s_%s" % (left(op), op, lower, dd, w) for op in ops)
                out.append("%s_%s_%s: %s_%s_%s | %s" % (name, dd, v, lower, dd, v, alts))
            out.append("cast_%s_%s: %s | \"-\" cast_%s_%s | \"!\" cast_%s_%s | \"*\" cast_%s_%s"
                       " | \"&\" cast_%s_%s | \"&\" \"mut\" cast_%s_%s | \"&&\" cast_%s_%s"
                       " | \"&&\" \"mut\" cast_%s_%s"
                       % ((dd, v, term) + (dd, w) * 7))
        for name, lower, ops in bins:
            if name is None:
                out.append("?cmp_%s: bor_%s | bor_%s cmp_op bor_%s | bor_x_%s \"<\" bor_%s"
                           % (v, v, v, w, v, w))
                continue
            left = lambda op: "%s_x_%s" % (name, v) if op == '"<<"' else "%s_%s" % (name, v)
            alts = " | ".join("%s %s %s_%s" % (left(op), op, lower, w) for op in ops)
            out.append("?%s_%s: %s_%s | %s" % (name, v, lower, v, alts))
            if name in XLEVELS:
                # the same, not ending in a cast to a plain path (note [rust: casts and <])
                alts = " | ".join("%s %s %s_x_%s" % (left(op), op, lower, w) for op in ops)
                out.append("?%s_x_%s: %s_x_%s | %s" % (name, v, lower, v, alts))
        out.append("?cast_%s: unary_%s | cast_%s \"as\" type_cast" % (v, v, v))
        out.append("?cast_x_%s: unary_%s" % (v, v))
        out.append("?unary_%s: postfix_%s | \"-\" unary_%s | \"!\" unary_%s | \"*\" unary_%s"
                   " | \"&\" unary_%s | \"&\" \"mut\" unary_%s | \"&&\" unary_%s | \"&&\" \"mut\" unary_%s"
                   % (v, v, w, w, w, w, w, w, w))
        base = "primary_%s" % v
        if v == "s":
            out.append("?postfix_s: primary_s | postfix_s postop | %s dotop" % BLOCKLIKE)
        else:
            out.append("?postfix_%s: %s | postfix_%s postop" % (v, base, v))
        # jumps and closures take the rest of the expression
        out.append("jump_%s: \"return\" | \"return\" expr_%s | \"break\" | \"break\" LIFETIME"
                   " | \"break\" expr_%s | \"break\" LIFETIME expr_%s | \"continue\""
                   " | \"continue\" LIFETIME | \"yield\" | \"yield\" expr_%s"
                   % (v, v, v, v, v) if v != "s" else "")
        if v != "s":
            out.append("closure_%s: closure_head expr_%s | closure_head \"->\" type_nb block" % (v, v))
    return "\n".join(l for l in out if l)


GRAMMAR = r"""// Rust 2021 edition for gramask: LALR(1), no conflicts.
// GENERATED by grammars/rust_gen.py: edit that script, not this file.
//
// Written from the Rust Reference (lexical structure, items, expressions,
// patterns, types) and checked against Debian's rustc 1.63 in parse-only
// mode (`RUSTC_BOOTSTRAP=1 rustc --edition 2021 -Z parse-only FILE`), which
// is the oracle of the corpus check (corpus/check_corpus.py, language rust).
// Parse-only means: no macro expansion, no name resolution, no AST
// validation, no feature gates; so `fn f();` at module level or a free
// `type X;` parse (rustc rejects them later), and this grammar takes them.
// Macro bodies are token trees, as for rustc before expansion.
//
// note [rust: nested block comments]
// `/* /* */ */` is one comment: rustc counts the depth. A finite lexer
// cannot count without bound, so BLOCK_COMMENT is the regular language of
// comments nested at most %(depth)d deep (grammars/rust_gen.py COMMENT_DEPTH);
// within that bound it is exact (a `*/` closes the innermost level, a `/*`
// opens one, `/*/` is an opener followed by `/`). A comment nested deeper
// is a lexical error at the `/*` that would open level %(depth1)d: that is
// where the bound shows. Block doc comments (`/** */`, `/*! */`) are
// comments here (they are attributes to rustc, allowed where attributes
// are; this grammar takes them anywhere a comment may be).
// A carriage return is taken in string literals, raw strings and line doc
// comments only as part of a CRLF line end (rustc normalizes CRLF and rejects a
// bare CR there; a doc comment's token then includes the `\r\n`). Block
// comments are one terminal, doc comments or not, so none may hold a bare
// CR: stricter than rustc for the non-doc ones, in exchange for never
// allowing one in a doc comment.
// Line doc comments are tokens: `///` (OUTER_DOC) is an outer attribute
// and `//!` (INNER_DOC) an inner one, allowed exactly where `#[...]` and
// `#![...]` are; `////` and `//` are comments.
//
// note [rust: raw strings]
// r"...", r#"..."#, r##"..."## ...: the string ends at the first `"`
// followed by as many `#` as opened it. RAW_STRING and RAW_BYTE_STRING
// hold one alternative per hash count up to %(hashes)d
// (grammars/rust_gen.py RAW_HASHES; rustc allows 255): more hashes are a
// lexical error.
//
// note [rust: lifetimes and characters]
// `'a` is a LIFETIME, `'a'` a CHAR (`'\''`, `'\u{1F600}'`, `'é'` too):
// maximal munch takes the longer CHAR when the closing quote is there, and
// a LIFETIME never ends in `'`. `'ab'` (rustc: error, a character literal
// of two characters) lexes as the longer LIFETIME_QUOTE, a lexical error
// (note [rust: lexical errors]), not as `'ab` and a character literal.
//
// note [rust: lexical errors]
// Some byte strings are errors to rustc's lexer although a shorter prefix
// is a token: `'ab'`, and Rust 2021's reserved prefixes, an identifier or
// keyword followed at once by `"`, `'` or `#` (`match"x"`, `break'a`, `a#b`,
// `r'x'`; `b'x'`, `b"x"`, `r"x"`, `br"x"`, `r#"x"#` and `r#x` are literals
// and raw identifiers, longer matches). Each has a terminal (LIFETIME_QUOTE,
// RESERVED_PREFIX) that maximal munch prefers, taken by one rule only after
// the %%declare'd _LEXICAL_ERROR, which the lexer never produces: so the
// parser never shifts them, masks never allow them, and the terminals stay in
// the lexer (a terminal no rule names is dropped from it).
//
// note [rust: numbers and dots]
// rustc lexes `1.` as a float unless a `.` or an identifier follows, so
// `0..n` is `0` `..` `n` and `x.0.len()` is `x` `.` `0` `.` `len`. The
// lexer here has no look-ahead, so the combined forms are terminals:
// INT_DOT (`1.`: a float literal, or an integer and `.` before a field or
// method name), INT_DOTDOT (`0..`) and INT_DOTDOTEQ (`0..=`), and the
// rules take them where their parts may stand. `x.0.1` lexes the
// `0.1` as a FLOAT, as in rustc, and a field may be a FLOAT.
//
// note [rust: closing generics]
// `Vec<Vec<T>>` ends in one `>>` token. As in java.lark (note [java:
// closing type arguments]) the lexer stays context free and generic
// argument and parameter lists are parsed by how many `>` characters close
// them: *_c1 is a type (argument, parameter, bound) followed by one `>`,
// *_c2 one followed by `>>`; a type whose own list ends in a *_c2 supplies
// the `>` of the enclosing list (*_open2). `>>>` lexes as `>>` `>`.
// `<<` opens a generic argument list whose first argument is a qualified
// path type (`Vec<<T as Tr>::A>`: ga_1_lt), and `<<` opens a qualified path
// whose self type is one (`<<T as A>::B as C>::D`: qself_body_lt). Not covered: `>=` and `>>=`
// closing a list before `=` (`let x: Vec<u8>= v;`, rustc splits them), `<<`
// opening a generic list and a qualified path's
// qualified self type at once (`X<<<T as A>::B as C>::D>`).
//
// note [rust: expression variants]
// note [rust: casts and <]
// After `x as u32`, rustc reads `<` and `<<` as opening generic arguments
// (`x as u32 < y` is an error: write `(x as u32) < y`). So the left operand
// of `<` and `<<` is an *_x_* expression: one that does not end in a cast
// (stricter than rustc for `x as (u8) < y`, which it takes).
//
// Rust's expressions have two restrictions an LALR grammar must spell out:
// a struct literal cannot be the scrutinee of if/while/match/for (`if x ==
// S {` ends at `{`), and a block-like expression (block, if, match, loop,
// while, for, unsafe/async block, brace macro call) at the start of a
// statement or of a match arm's body ends there (`if c {} - 1` is two
// statements) unless `.` or `?` follows. So every expression level exists
// as _f (full), _n (no struct literal or bare block at top level) and _s
// (statement start), generated by grammars/rust_gen.py.
// `return`, `break`, `continue`, `yield` and closures are whole
// expressions (or the right side of `=`); as the operand of an operator
// (`a || return`) they need parentheses here, where rustc does not.
//
// Limits (rustc parse-only accepts them, this grammar does not): let-else
// and let chains (not stable in 1.63), labeled blocks, `const` blocks,
// `box` patterns and expressions, bare trait objects without `dyn` except
// `(A + B)` in parentheses, attributes on expressions other than statements,
// tail expressions and call arguments, `pub (A, B)` tuple fields whose type
// starts with `(`, `>=`/`>>=` closing generics (note above), a qualified path
// type right after `impl`, `impl ! {}`, `for<'a> fn(...)` pointer types,
// `macro_rules` as an ordinary identifier, a block as the condition of
// `if`/`while` (`if { c } {}`), literal suffixes other than the numeric
// types (`1u256` in a token tree), reserved keywords (`try`, `box`, ...) as
// names, shebang lines, C string literals (Rust 1.77). Taken where rustc
// rejects them: escapes checked by form,
// not value (`'\u{D800}'`), and what rustc rejects only after parsing (see
// the top).

start: inner_attr* item*


// ---------------------------------------------------------------------------
// Attributes

outer_attr: "#" "[" attr_body "]" | OUTER_DOC
inner_attr: "#" "!" "[" attr_body "]" | INNER_DOC
attr_body: simple_path | simple_path delim_tt | simple_path "=" expr_f

// ---------------------------------------------------------------------------
// Items

item: outer_attr* vis_item | outer_attr* macro_item
vis_item: vis? item_kind
vis: "pub" | "pub" "(" "crate" ")" | "pub" "(" "self" ")" | "pub" "(" "super" ")" | "pub" "(" "in" simple_path ")"

item_kind: use_item | extern_crate | mod_item | fn_item | type_alias | struct_item | enum_item
         | union_item | const_item | static_item | trait_item | impl_item | extern_block

macro_item: simple_path "!" "(" tts ")" ";" | simple_path "!" "[" tts "]" ";" | simple_path "!" "{" tts "}"
          | macro_rules
macro_rules: "macro_rules" "!" ident "(" tts ")" ";" | "macro_rules" "!" ident "[" tts "]" ";"
           | "macro_rules" "!" ident "{" tts "}"

use_item: "use" use_tree ";"
use_tree: "*" | "::" "*" | simple_path "::" "*"
        | "{" use_trees "}" | "::" "{" use_trees "}" | simple_path "::" "{" use_trees "}"
        | simple_path | simple_path "as" ident | simple_path "as" "_"
use_trees: | use_tree ("," use_tree)* ","?

extern_crate: "extern" "crate" ident ";" | "extern" "crate" "self" ";"
            | "extern" "crate" ident "as" ident ";" | "extern" "crate" "self" "as" ident ";"
            | "extern" "crate" ident "as" "_" ";"

mod_item: "mod" ident ";" | "mod" ident "{" inner_attr* item* "}"
        | "unsafe" "mod" ident "{" inner_attr* item* "}"

fn_item: fn_head fn_sig fn_body
fn_head: "fn" | "const" "fn" | "async" "fn" | "unsafe" "fn" | abi_head "fn"
       | "const" "unsafe" "fn" | "async" "unsafe" "fn" | "const" abi_head "fn" | "unsafe" abi_head "fn"
       | "const" "unsafe" abi_head "fn" | "async" "unsafe" abi_head "fn" | "const" "async" "fn"
       | "const" "async" "unsafe" "fn"
abi_head: "extern" | "extern" abi
abi: STRING | RAW_STRING
fn_sig: ident generics? "(" fn_params ")" fn_ret? where_clause?
fn_ret: "->" type
fn_body: block | ";"
fn_params: | self_param | self_param "," | self_param "," params | params
params: param ("," param)* ","?
param: outer_attr* pattern_nt ":" type | outer_attr* "..." | outer_attr* pattern_nt ":" "..."
self_param: outer_attr* self_value | outer_attr* "&" self_value_ref | outer_attr* "&" LIFETIME self_value_ref
self_value: "self" | "mut" "self" | "self" ":" type | "mut" "self" ":" type
self_value_ref: "self" | "mut" "self"

type_alias: "type" ident generics? type_alias_bounds? where_clause? type_alias_value? ";"
type_alias_bounds: ":" | ":" bounds
type_alias_value: "=" type where_clause?

struct_item: "struct" ident generics? where_clause? "{" fields "}"
           | "struct" ident generics? where_clause? ";"
           | "struct" ident generics? "(" tuple_fields ")" where_clause? ";"
union_item: "union" ident generics? where_clause? "{" fields "}"
fields: | field ("," field)* ","?
field: outer_attr* vis? ident ":" type
tuple_fields: | tuple_field ("," tuple_field)* ","?
tuple_field: outer_attr* type | outer_attr* "pub" type_np | outer_attr* vis_restricted type
vis_restricted: "pub" "(" "crate" ")" | "pub" "(" "self" ")" | "pub" "(" "super" ")" | "pub" "(" "in" simple_path ")"

enum_item: "enum" ident generics? where_clause? "{" variants "}"
variants: | variant ("," variant)* ","?
variant: outer_attr* vis? ident variant_body?
variant_body: "{" fields "}" | "(" tuple_fields ")" | "=" expr_f | "{" fields "}" "=" expr_f | "(" tuple_fields ")" "=" expr_f

const_item: "const" ident ":" type ";" | "const" ident ":" type "=" expr_f ";"
          | "const" "_" ":" type "=" expr_f ";"
static_item: "static" ident ":" type static_value? ";" | "static" "mut" ident ":" type static_value? ";"
static_value: "=" expr_f

trait_item: trait_head ident generics? trait_bounds? where_clause? "{" inner_attr* assoc_item* "}"
          | trait_head ident generics? "=" bounds where_clause? ";"
trait_head: "trait" | "unsafe" "trait" | "auto" "trait" | "unsafe" "auto" "trait"
trait_bounds: ":" | ":" bounds
assoc_item: outer_attr* vis? assoc_kind | outer_attr* macro_item
assoc_kind: fn_item | type_alias | const_item | "default" fn_item | "default" type_alias

impl_item: impl_head impl_target where_clause? "{" inner_attr* assoc_item* "}"
impl_head: "impl" | "impl" generics | "unsafe" "impl" | "unsafe" "impl" generics
         | "impl" "const" | "impl" generics "const"
impl_target: impl_type | impl_type "for" type | "!" impl_type "for" type

extern_block: abi_head "{" inner_attr* extern_item* "}" | "unsafe" abi_head "{" inner_attr* extern_item* "}"
extern_item: outer_attr* vis? extern_kind | outer_attr* macro_item
extern_kind: fn_item | static_item | type_alias

// ---------------------------------------------------------------------------
// Generic parameters and where clauses (note [rust: closing generics])

generics: "<" ">" | "<" gp_1
gp_1: gp_elem_1 | gp_list "," gp_elem_1 | gp_list "," ">"
gp_list: gp_elem | gp_list "," gp_elem
gp_elem: outer_attr* LIFETIME | outer_attr* LIFETIME ":" lifetime_bounds | outer_attr* LIFETIME ":"
       | outer_attr* ident | outer_attr* ident ":" | outer_attr* ident ":" bounds
       | outer_attr* ident "=" type | outer_attr* ident ":" "=" type | outer_attr* ident ":" bounds "=" type
       | outer_attr* "const" ident ":" type | outer_attr* "const" ident ":" type "=" const_arg
gp_elem_1: outer_attr* LIFETIME ">" | outer_attr* LIFETIME ":" lifetime_bounds ">" | outer_attr* LIFETIME ":" ">"
         | outer_attr* ident ">" | outer_attr* ident ":" ">" | outer_attr* ident ":" bounds_c1
         | outer_attr* ident "=" type_c1 | outer_attr* ident ":" "=" type_c1 | outer_attr* ident ":" bounds "=" type_c1
         | outer_attr* "const" ident ":" type_c1 | outer_attr* "const" ident ":" type "=" const_arg ">"
lifetime_bounds: LIFETIME ("+" LIFETIME)*

where_clause: "where" | "where" where_preds
where_preds: where_pred ("," where_pred)* ","?
where_pred: LIFETIME ":" | LIFETIME ":" lifetime_bounds | type ":" | type ":" bounds
          | for_lifetimes type ":" | for_lifetimes type ":" bounds
for_lifetimes: "for" generics

bounds: bound | bound_plus bound
bound: LIFETIME | trait_bound | "(" trait_bound ")"
trait_bound: type_path | "?" type_path | for_lifetimes type_path | "?" for_lifetimes type_path
           | "~" "const" type_path
bounds_c1: bounds ">" | bounds_open2
bounds_open2: bound_open2 | bound_plus bound_open2
bound_plus: bound "+" | bound_plus bound "+"
bound_open2: type_path_open2 | "?" type_path_open2 | for_lifetimes type_path_open2 | "?" for_lifetimes type_path_open2

// ---------------------------------------------------------------------------
// Types

// `dyn A + B` and `impl A + B` only where a whole type may stand (not after
// `&`, in a cast, or as an Fn() return type: there `+` belongs to the outside)
type: type_nb_nd | "impl" bounds | "dyn" bounds
type_np: type_nb_core | "!" | qpath_type | "impl" bounds | "dyn" bounds
type_nb: type_nb_nd | "impl" bound | "dyn" bound
type_nb_nd: type_nb_core | "!" | qpath_type | "(" ")" | "(" type ")" | "(" type "," ")" | "(" type "," types ")"
          | "(" type_path "+" bounds ")"
types: type ("," type)* ","?
// what an impl header's type may be (not `!`, not a qualified path: `impl <` opens generics)
type_nb_core: "_" | "[" type "]" | "[" type ";" expr_f "]"
            | "&" type_nb | "&" LIFETIME type_nb | "&" "mut" type_nb | "&" LIFETIME "mut" type_nb
            | "&&" type_nb | "&&" LIFETIME type_nb | "&&" "mut" type_nb | "&&" LIFETIME "mut" type_nb
            | "*" "const" type_nb | "*" "mut" type_nb
            | type_path | fn_ptr | tpath_p "!" delim_tt
impl_type: type_nb_core | "dyn" bounds
type_cast: type_cast_path | "&" type_nb | "&" LIFETIME type_nb | "&" "mut" type_nb | "&" LIFETIME "mut" type_nb
         | "*" "const" type_nb | "*" "mut" type_nb | "(" ")" | "(" type ")" | "(" type "," ")" | "(" type "," types ")"
         | "[" type "]" | "[" type ";" expr_f "]" | "_" | "!" | fn_ptr | qpath_type
type_cast_path: tpath_p | tpath_p generic_args | tpath_p "::" generic_args

fn_ptr: fn_ptr_head "(" fn_ptr_params ")" | fn_ptr_head "(" fn_ptr_params ")" "->" type_nb
fn_ptr_head: "fn" | "unsafe" "fn" | abi_head "fn" | "unsafe" abi_head "fn"
fn_ptr_params: | fn_ptr_param ("," fn_ptr_param)* ","?
fn_ptr_param: outer_attr* type | outer_attr* ident ":" type | outer_attr* "_" ":" type | outer_attr* "..."

// paths in types: `<` opens generic arguments (`::<` too); tpath_p ends in a name,
// tpath_g in generic arguments or Fn sugar (which nothing else may follow but `::`)
type_path: tpath_p | tpath_g | tpath_p "(" fn_ptr_types ")" "->" type_nb
tpath_p: pseg | "::" pseg | tpath_p "::" pseg | tpath_g "::" pseg
tpath_g: tpath_p generic_args | tpath_p "::" generic_args | tpath_p "(" fn_ptr_types ")"
fn_ptr_types: | types
qpath_type: qself "::" pseg | qpath_type "::" pseg | qpath_type generic_args | qpath_type "::" generic_args
qself: "<" qself_body | "<<" qself_body_lt
qself_body: type_c1 | type "as" type_path_c1
// `<<T as A>::B as C>::D`: the inner qualified path's `<` was the second `<`
qself_body_lt: type_lt ">" | type_lt "as" type_path_c1
type_path_c1: type_path ">" | type_path_open2

generic_args: "<" ">" | "<" ga_1 | "<<" ga_1_lt
// after `<<`: the first argument is a qualified path type whose `<` was the second `<`
ga_1_lt: type_lt ">" | type_lt "," ">" | type_lt "," ga_1
ga_2_lt: type_lt ">>" | type_lt "," ">>" | type_lt "," ga_2
type_lt: qself_body "::" pseg | type_lt "::" pseg | type_lt generic_args | type_lt "::" generic_args
ga_1: ga_elem_1 | ga_list "," ga_elem_1 | ga_list "," ">"
ga_2: ga_elem_2 | ga_list "," ga_elem_2 | ga_list "," ">>"
ga_list: ga_elem | ga_list "," ga_elem
ga_elem: type | LIFETIME | ident "=" type | ident ":" bounds | const_arg
ga_elem_1: type_c1 | LIFETIME ">" | ident "=" type_c1 | ident ":" bounds_c1 | const_arg ">"
ga_elem_2: type ">>" | LIFETIME ">>" | ident "=" type ">>" | ident ":" bounds ">>"
         | const_arg ">>"
const_arg: block | literal | "-" literal

type_c1: type ">" | type_open2
// a type whose last generic argument list is closed by the first `>` of a `>>`
type_open2: type_nb_open2 | "impl" bound_plus bound_open2 | "dyn" bound_plus bound_open2
type_nb_open2: type_path_open2 | "&" type_nb_open2 | "&" LIFETIME type_nb_open2 | "&" "mut" type_nb_open2
          | "&" LIFETIME "mut" type_nb_open2 | "&&" type_nb_open2 | "&&" LIFETIME type_nb_open2
          | "&&" "mut" type_nb_open2 | "&&" LIFETIME "mut" type_nb_open2
          | "*" "const" type_nb_open2 | "*" "mut" type_nb_open2 | "impl" bound_open2 | "dyn" bound_open2
          | fn_ptr_head "(" fn_ptr_params ")" "->" type_nb_open2 | qpath_type_open2
type_path_open2: tpath_p "<" ga_2 | tpath_p "::" "<" ga_2 | tpath_p "<<" ga_2_lt | tpath_p "::" "<<" ga_2_lt
               | tpath_p "(" fn_ptr_types ")" "->" type_nb_open2
qpath_type_open2: qpath_type "<" ga_2 | qpath_type "::" "<" ga_2

// ---------------------------------------------------------------------------
// Statements and blocks

block: "{" inner_attr* stmt* "}" | "{" inner_attr* stmt* outer_attr* expr_s "}"
stmt: ";" | outer_attr* vis_item | outer_attr* macro_rules | outer_attr* let_stmt
    | outer_attr* expr_s ";" | outer_attr* blocklike
let_stmt: "let" pattern let_type? let_init? ";"
let_type: ":" type
let_init: "=" expr_f

blocklike: block | "unsafe" block | "async" block | "async" "move" block
         | if_expr | match_expr | loop_expr | LIFETIME ":" loop_expr
         | path_expr "!" "{" tts "}"
if_expr: "if" cond block | "if" cond block "else" block | "if" cond block "else" if_expr
cond: expr_n | "let" pattern "=" expr_n
match_expr: "match" expr_n "{" inner_attr* arms? last_arm? "}"
arms: arm | arms arm
arm: arm_head expr_s "," | arm_head blocklike | arm_head blocklike ","
last_arm: arm_head expr_s
arm_head: outer_attr* pattern "=>" | outer_attr* pattern "if" expr_f "=>"
loop_expr: "loop" block | "while" cond block | "for" pattern "in" expr_n block

// ---------------------------------------------------------------------------
// Expressions (note [rust: expression variants])

%(expr_levels)s

assign_op: "=" | "+=" | "-=" | "*=" | "/=" | "%%=" | "^=" | "&=" | "|=" | "<<=" | ">>="
cmp_op: "==" | "!=" | ">" | "<=" | ">="

closure_head: "||" | "|" "|" | "|" closure_params "|" | "move" closure_head | "async" "move" closure_head
closure_params: closure_param ("," closure_param)* ","?
closure_param: outer_attr* pattern_nt | outer_attr* pattern_nt ":" type

postop: "?" | "(" args ")" | "[" expr_f "]" | dotop_tail
dotop: "?" | dotop_tail
dotop_tail: "." "await" | "." ident | "." INT | "." FLOAT | "." method "(" args ")"
          | "." INT_DOT ident | "." INT_DOT method "(" args ")"
method: ident "::" generic_args
args: | arg ("," arg)* ","?
// rustc takes outer attributes on an argument (`f(#[inline] |x| x)`)
arg: expr_f | outer_attr+ expr_f

primary_common: literal | "_" | path_expr | qpath_expr | "(" ")" | "(" expr_f ")" | "(" expr_f "," ")"
              | "(" expr_f "," args_1 ")" | "[" "]" | "[" exprs_1 "]" | "[" expr_f ";" expr_f "]"
              | path_expr "!" "(" tts ")" | path_expr "!" "[" tts "]"
              | INT_DOT ident | INT_DOT method "(" args ")"
args_1: expr_f ("," expr_f)* ","?
exprs_1: expr_f ("," expr_f)* ","?
primary_f: primary_common | struct_expr | blocklike
primary_n: primary_common | "unsafe" block | "async" block | "async" "move" block
         | if_expr | match_expr | loop_expr | LIFETIME ":" loop_expr
primary_s: primary_common | struct_expr

struct_expr: path_expr "{" struct_fields "}" | qpath_expr "{" struct_fields "}"
struct_fields: | struct_field ("," struct_field)* ","? | struct_field ("," struct_field)* "," ".." expr_f
             | ".." expr_f
struct_field: outer_attr* ident | outer_attr* ident ":" expr_f | outer_attr* INT ":" expr_f

path_expr: pseg | "::" pseg | path_expr "::" pseg | path_expr "::" generic_args
qpath_expr: qself "::" pseg | qpath_expr "::" pseg | qpath_expr "::" generic_args

literal: INT | FLOAT | INT_DOT | STRING | RAW_STRING | BYTE_STRING | RAW_BYTE_STRING | CHAR | BYTE
       | "true" | "false"

// ---------------------------------------------------------------------------
// Patterns

pattern: pat_alts | "|" pat_alts
pat_alts: pattern_nt | pat_alts "|" pattern_nt
// after `&`, `mut` is the reference's (`&mut x`), never a binding's
pattern_nt: pat_nomut | "mut" ident | "mut" ident "@" pattern_nt
pat_nomut: "_" | ".." | literal_pat | "ref" ident | "ref" "mut" ident
          | "ref" ident "@" pattern_nt | "ref" "mut" ident "@" pattern_nt
          | ident "@" pattern_nt | pat_path
          | pat_path "(" pat_list ")" | pat_path "{" pat_fields "}"
          | "&" pat_nomut | "&" "mut" pattern_nt | "&&" pat_nomut | "&&" "mut" pattern_nt
          | "(" ")" | "(" pattern ")" | "(" pattern "," pat_list ")"
          | "[" pat_list "]"
          | range_pat | pat_path "!" delim_tt
pat_list: | pattern ("," pattern)* ","?
pat_fields: | pat_field ("," pat_field)* ","? | pat_field ("," pat_field)* "," ".." | ".."
pat_field: outer_attr* ident | outer_attr* "ref" ident | outer_attr* "mut" ident | outer_attr* "ref" "mut" ident
         | outer_attr* ident ":" pattern | outer_attr* INT ":" pattern
pat_path: ppat | qpath_expr
// a pattern path is never `self` alone (`self:` starts a self parameter)
ppat: pseg_ns | "::" pseg | "self" "::" pseg | ppat "::" pseg | ppat "::" generic_args
pseg_ns: ident | "super" | "crate" | "Self"
literal_pat: literal | "-" INT | "-" FLOAT | "-" INT_DOT
range_pat: range_bound "..=" range_bound | range_bound "..." range_bound | range_bound ".." range_bound
         | range_bound ".." | "..=" range_bound
         | INT_DOTDOTEQ range_bound | INT_DOTDOT range_bound | INT_DOTDOT
         | "-" INT_DOTDOTEQ range_bound | "-" INT_DOTDOT range_bound | "-" INT_DOTDOT
range_bound: literal_pat | pat_path

// ---------------------------------------------------------------------------
// Token trees (macro arguments and macro_rules! bodies)

delim_tt: "(" tts ")" | "[" tts "]" | "{" tts "}"
tts: tt*
tt: delim_tt | tt_token | lexical_error
// note [rust: lexical errors]: never entered (_LEXICAL_ERROR is never lexed)
lexical_error: _LEXICAL_ERROR LIFETIME_QUOTE | _LEXICAL_ERROR RESERVED_PREFIX
tt_token: %(tt_tokens)s

// ---------------------------------------------------------------------------
// Names

simple_path: pseg | "::" pseg | simple_path "::" pseg
pseg: ident | "self" | "super" | "crate" | "Self"
ident: IDENT | "union" | "auto" | "default"

// ---------------------------------------------------------------------------
// Terminals

IDENT: /(?:r#)?[^\W\d]\w*/
LIFETIME: /'[^\W\d]\w*/
LIFETIME_QUOTE: /'[^\W\d]\w+'/
RESERVED_PREFIX: /(?:r#)?[^\W\d]\w*["'#]/
CHAR: /'(?:[^'\\\n\r\t]|\\[nrt\\0'"]|\\x[0-7][0-9a-fA-F]|\\u\{[0-9a-fA-F_]{1,6}\})'/
BYTE: /b'(?:[ -&(-\[\]-~]|\\[nrt\\0'"]|\\x[0-9a-fA-F]{2})'/
STRING: /"(?:[^"\\\r]|\r\n|\\[nrt\\0'"]|\\x[0-7][0-9a-fA-F]|\\u\{[0-9a-fA-F_]{1,6}\}|\\\r?\n)*"/
BYTE_STRING: /b"(?:[\t\n -!#-\[\]-~]|\r\n|\\[nrt\\0'"]|\\x[0-9a-fA-F]{2}|\\\r?\n)*"/
RAW_STRING: /%(raw)s/
RAW_BYTE_STRING: /%(rawb)s/
INT: /(?:[0-9][0-9_]*|0x[0-9a-fA-F_]*[0-9a-fA-F][0-9a-fA-F_]*|0o[0-7_]*[0-7][0-7_]*|0b[01_]*[01][01_]*)(?:u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize)?/
FLOAT: /[0-9][0-9_]*\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]*[0-9][0-9_]*)?(?:f32|f64)?|[0-9][0-9_]*[eE][+-]?[0-9_]*[0-9][0-9_]*(?:f32|f64)?|[0-9][0-9_]*(?:f32|f64)/
INT_DOT: /[0-9][0-9_]*\./
INT_DOTDOT: /[0-9][0-9_]*\.\./
INT_DOTDOTEQ: /[0-9][0-9_]*\.\.=/
OUTER_DOC: /\/\/\/(?:[^\/\n\r][^\n\r]*)?(?:\r\n)?/
INNER_DOC: /\/\/![^\n\r]*(?:\r\n)?/
LINE_COMMENT: /\/\/(?:[^\/!\n][^\n]*)?|\/\/\/\/[^\n]*/
BLOCK_COMMENT: /%(comment)s/
WS: /[ \t\r\n\f\v]+/

%%declare _LEXICAL_ERROR
%%ignore WS
%%ignore LINE_COMMENT
%%ignore BLOCK_COMMENT
"""

DELIMS = {'"("', '")"', '"["', '"]"', '"{"', '"}"'}
TT_TERMINALS = ["IDENT", "LIFETIME", "CHAR", "BYTE", "STRING", "BYTE_STRING", "RAW_STRING",
                "RAW_BYTE_STRING", "INT", "FLOAT", "INT_DOT", "INT_DOTDOT", "INT_DOTDOTEQ",
                "OUTER_DOC", "INNER_DOC"]
# reserved keywords: tokens (never identifiers) that only token trees take
RESERVED = ['"abstract"', '"become"', '"box"', '"do"', '"final"', '"macro"', '"override"', '"priv"',
            '"typeof"', '"unsized"', '"virtual"', '"try"']
EXTRA_TT = RESERVED + ['"$"', '"@"', '"~"', '"#"', '"?"', '"=>"', '"->"', '"..."', '"::"', '":"', '";"', '","', '"."']


def main():
    params = {"depth": COMMENT_DEPTH, "depth1": COMMENT_DEPTH + 1, "hashes": RAW_HASHES,
              "raw": raw_string("r"), "rawb": raw_string("br"), "comment": block_comment(),
              "expr_levels": expr_levels(), "tt_tokens": "TT_TOKENS_HERE"}
    text = GRAMMAR % params
    rules = text.split("// Terminals")[0]
    lits = set(re.findall(r'"(?:[^"\\]|\\.)*"', "\n".join(
        l for l in rules.splitlines() if not l.lstrip().startswith("//"))))
    lits |= set(EXTRA_TT)
    lits -= DELIMS
    toks = sorted(lits) + TT_TERMINALS
    lines, cur = [], []
    for t in toks:
        cur.append(t)
        if len(cur) == 10:
            lines.append(" | ".join(cur))
            cur = []
    if cur:
        lines.append(" | ".join(cur))
    text = text.replace("TT_TOKENS_HERE", "\n        | ".join(lines))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
