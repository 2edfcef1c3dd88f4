#!/bin/sh
# grammars/typescript.lark on snippets (tests/typescript/README): ok_*.ts
# parse and bad_*.ts fail where their .err says, with the contextual lexer
# and the semicolon-insertion layer. The corpus check (`make check-corpus`,
# entry typescript) compares with TypeScript's own parser on real files.
set -u
g=${GM_BUILDDIR:-.}/gramask
dir=${GM_SRCDIR:-.}/tests/typescript
fails=0 n=0
for f in "$dir"/ok_*.ts "$dir"/bad_*.ts; do
    n=$((n + 1))
    out=$("$g" parse typescript --lexer=contextual "$f" 2>&1)
    rc=$?
    case $(basename "$f") in
    ok_*)
        [ $rc -eq 0 ] || { echo "FAIL: $f does not parse: $out"; fails=$((fails + 1)); } ;;
    bad_*)
        want=$(cat "${f%.ts}.err")
        case $out in
        "$f:$want"*) ;;
        *) echo "FAIL: $f: expected $want, got: $out (exit $rc)"; fails=$((fails + 1)) ;;
        esac
        [ $rc -eq 1 ] || { echo "FAIL: $f: exit $rc"; fails=$((fails + 1)); } ;;
    esac
done
echo "$n files, $fails failures"
[ $n -ge 10 ] || { echo "FAIL: only $n files"; exit 1; }
exit $((fails > 0))
