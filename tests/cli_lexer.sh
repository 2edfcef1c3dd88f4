#!/bin/sh
# `gramask regex` and `gramask lex` end to end: help, state counts, dumps,
# matches, errors with construct and column, terminal lists and grammars,
# lexing errors with their offsets, and exit statuses.
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run regex --help; has 'usage: gramask regex' && has 'exit 0'; ok "regex --help" $?
run --help; has '  regex' && has '  lex'; ok "listed in gramask --help" $?
run regex; has 'usage: gramask regex' && has 'exit 2'; ok "regex without a pattern: exit 2" $?
run regex 'ab*|ac*'
has 'nfa states:' && has 'minimal dfa states: 4 (byte classes: 4)' && has 'exit 0'; ok "regex state counts" $?
run regex 'ab*|ac*' --dump; has "s1 accept 0" && has "'b' -> s2"; ok "regex --dump" $?
run regex '[^\x00-\x7f]' --dot; has 'digraph dfa' && has '\\xed' && has 'doublecircle'; ok "regex --dot" $?
run regex 'colou?r' --flags i --match COLOR --match colr
has 'match: COLOR' && has 'no match: colr'; ok "regex --match with --flags i" $?
run regex 'a(?=b)'
has 'unsupported construct: lookahead (?=...) at column 2' && has 'exit 1'; ok "regex: unsupported construct and column" $?
run regex 'a{3,2}'; has 'syntax error: min repeat greater than max repeat at column 2'; ok "regex: syntax error" $?
run regex '(a{1000}){1000}'; has 'limit exceeded' && has 'max_nfa_states' && has 'exit 1'; ok "regex: limit" $?
run regex 'x' --flags q; has "unknown flag 'q'" && has 'exit 2'; ok "regex: unknown flag" $?

printf 'B /ab*/\nC /ac*/\n' >"$tmp/seed.terms"
printf 'abaccab' >"$tmp/seed.txt"
run lex "$tmp/seed.terms" "$tmp/seed.txt"
has '0 2 B "ab"' && has '2 5 C "acc"' && has '5 7 B "ab"' && has 'exit 0'; ok "lex: the seed example" $?
printf 'abx' >"$tmp/bad.txt"
run lex "$tmp/seed.terms" "$tmp/bad.txt"
has 'lexing error at byte 2' && has 'exit 1'; ok "lex: error offset" $?
run lex "$tmp/seed.terms" --dump; has 'dfa states=4' && has 's2 accept B'; ok "lex --dump" $?
printf 'ID /[a-z]+/\nWS /[ ]+/\n%%ignore WS\n' >"$tmp/ws.terms"
printf 'ab cd' >"$tmp/ws.txt"
run lex "$tmp/ws.terms" "$tmp/ws.txt"; has '3 5 ID' && ! has 'WS'; ok "lex: ignored terminals hidden" $?
run lex "$tmp/ws.terms" "$tmp/ws.txt" --all; has '2 3 WS " "'; ok "lex --all" $?
printf 'A /a/\nLOOK /a(?!bc)/\n' >"$tmp/bad.terms"
run lex "$tmp/bad.terms" --dump
has 'bad.terms:2:1: terminal LOOK: unsupported construct: negative lookahead (?!...) (it looks more than one byte past the end of the lexeme' &&
    has 'at column 2' && has 'exit 1'
ok "lex: regex errors name the terminal, line and column" $?
printf 'A "x"\nB /x/\n' >"$tmp/shadow.terms"
run lex "$tmp/shadow.terms" --dump; has 'shadow.terms:2:1: warning: terminal B can never be produced'; ok "lex: shadowed terminal warning" $?
printf 'A /[a-z\n' >"$tmp/syntax.terms"
run lex "$tmp/syntax.terms" --dump; has 'syntax.terms:1:3: unterminated regex' && has 'exit 1'; ok "lex: terminal list syntax error" $?
run lex "$src/bench/java.terms" "$d/corpus/java/65f74416_ParsePosition.java"
has 'KW_PACKAGE "package"' && has 'IDENTIFIER "ParsePosition"' && has 'exit 0'; ok "lex: Java tokens on real Java" $?
run lex json "$d/corpus/json/$(ls "$d/corpus/json" | grep '\.json$' | grep -v '^ids\.' | head -1)"
has 'STRING' && has 'exit 0'; ok "lex: a bundled grammar's terminals" $?

# javascript.lark's %insert has nolex and glued, which only the contextual lexer
# honours: compiling it with the basic lexer is refused, not a wrong language.
run compile javascript --tokenizer "$d/tokenizers/sp32k" -o "$tmp/js.gmc"
has 'only the contextual lexer honours' && has 'exit 1'; ok "compile javascript with the basic lexer: refused" $?
run compile javascript --lexer=contextual --tokenizer "$d/tokenizers/sp32k" -o "$tmp/js.gmc"
has 'exit 0'; ok "compile javascript with the contextual lexer" $?

finish
