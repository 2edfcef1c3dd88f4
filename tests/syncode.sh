#!/bin/sh
# SynCode's Go, Java and Python grammars as given (issue 8), end to end with
# --conflicts=lark: Lark's conflict counts; every Go and Java program parses
# and traces (sp32k: every true token allowed, EOS at the end); the Python
# grammar keeps Lark's token stream on indented blocks with comments, and its
# programs fail exactly where the 1-lookahead lexer cannot follow Lark's
# backtracking _NL (README, Lark compatibility): a change there shows here.
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
run parse "$s/python_grammar.lark" "$s/programs/py4.py" --conflicts=lark; has 'OK ('; ok "parse py4.py" $?
run parse "$s/python_grammar.lark" "$s/programs/py1.py" --conflicts=lark
has 'py1.py:2:3: lexical error' && has 'exit 1'; ok "py1.py: _NL needs backtracking before 'from' (known)" $?

finish
