#!/bin/sh
# SynCode's Go, Java and Python grammars as given (issue 8), end to end with
# --conflicts=lark: Lark's conflict counts; every Go and Java program parses
# and traces (sp32k: every true token allowed, EOS at the end); the Python
# grammar keeps Lark's token stream on indented blocks with comments, and on
# its programs, whose lines start with "for", "from" or r'...' where Lark's
# _NL falls back from a possible docstring (lexer backtracking, lexer.h): the
# terminal counts below are Lark 1.1.5's (lexer='basic', PythonIndenter).
set -u
show=tail
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
s=$d/benchmarks/syncode-grammars
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run grammar "$s/go_grammar.lark" --conflicts=lark
has '604 states, 666 conflicts resolved as Lark does (509 shift/reduce, 157 reduce/reduce) in 660 cells'
ok "go: Lark's 509 + 157 conflicts (660 cells)" $?
run grammar "$s/java_grammar.lark" --conflicts=lark
has '596 states, 15 conflicts resolved as Lark does (15 shift/reduce, 0 reduce/reduce)'; ok "java: 15 conflicts" $?
run grammar "$s/python_grammar.lark" --conflicts=lark
has '752 states, 1 conflict resolved as Lark does (1 shift/reduce, 0 reduce/reduce)'; ok "python: 1 conflict" $?

for f in "$s"/programs/*.go "$s"/programs/*.java; do
    case $f in *.go) gr=go ;; *) gr=java ;; esac
    run parse "$s/${gr}_grammar.lark" "$f" --conflicts=lark; has 'OK (' && has 'exit 0'; ok "parse $(basename "$f")" $?
done
run trace "$s/go_grammar.lark" --conflicts=lark --tokenizer "$d/tokenizers/sp32k" --ids "$s/programs/ids.sp32k.json" \
    --only go3.go
has '1 files, 0 failing' && has 'exit 0'; ok "trace go3.go (sp32k)" $?
run trace "$s/java_grammar.lark" --conflicts=lark --tokenizer "$d/tokenizers/sp32k" \
    --ids "$s/programs/ids.sp32k.json" --only java1.java
has '1 files, 0 failing' && has 'exit 0'; ok "trace java1.java (sp32k): the string ends at its first quote" $?

# Indented blocks, tabs, comments (which Lark's lexer takes as _NL), blank lines, brackets.
printf 'def square(n):\n    x = n * n  # square it\n    if x > 10:\n        y = x\n\n    else:\n        y = 0\n        # c\n    while y:\n        y = y - 1\n    pass\nclass A:\n\tdef m(self, a,\n\t      c):\n\t\tpass\nx = [1,\n     2]\n' >"$tmp/blocks.py"
run parse "$s/python_grammar.lark" "$tmp/blocks.py" --conflicts=lark --terminals
n=$(printf '%s\n' "$o" | grep -c -E '^[0-9]+:[0-9]+ ')
has 'OK (79 terminals)' && [ "$n" = 79 ] && has '2:16 _NL' && has '2:5 _INDENT' && has '12:1 _DEDENT'
ok "python: indented blocks give Lark's 79 terminals" $?
for p in py1:72 py2:86 py3:102 py4:87 py5:124; do
    run parse "$s/python_grammar.lark" "$s/programs/${p%:*}.py" --conflicts=lark
    has "OK (${p#*:} terminals)" && has 'exit 0'; ok "parse ${p%:*}.py: Lark's ${p#*:} terminals" $?
done
printf 'x = 1\nfor i in r"ab":\n    from_ = b"\\x00"\n    """doc"""\n    f(i)\nreturn_ = u\n' >"$tmp/fallback.py"
run parse "$s/python_grammar.lark" "$tmp/fallback.py" --conflicts=lark --terminals
has 'OK (25 terminals)' && has '2:1 "for"' && has '2:10 STRING' && has '3:5 NAME' && has '5:5 NAME' &&
    has '6:1 NAME'
ok "python: _NL falls back before for, r\"..\", from_, f(, return_ (a docstring stays in _NL)" $?
for p in py1 py3 py5; do
    run trace "$s/python_grammar.lark" --conflicts=lark --tokenizer "$d/tokenizers/sp32k" \
        --ids "$s/programs/ids.sp32k.json" --only $p.py
    has '1 files, 0 failing' && has 'exit 0'; ok "trace $p.py (sp32k)" $?
done

finish
