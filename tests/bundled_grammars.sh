#!/bin/sh
# The bundled grammars on small files (tests/bundled/README): ok_* parse,
# bad_* fail where their .err says. Covers what the corpus cannot: the
# semicolon insertion layer (line ends, comments, end of input), the
# statement-header rule for composite literals, and the whitespace bound
# of json_bounded.
set -u
g=${GM_BUILDDIR:-.}/gramask
src=${GM_SRCDIR:-.}
fails=0 n=0
for dir in "$src"/tests/bundled/*/; do
    name=$(basename "$dir")
    grammar=$src/grammars/$name.lark
    for f in "$dir"ok_* "$dir"bad_*; do
        case $f in *'*'|*.err) continue ;; esac
        n=$((n + 1))
        out=$("$g" parse "$grammar" "$f" 2>&1)
        rc=$?
        case $(basename "$f") in
        ok_*)
            if [ $rc -ne 0 ]; then echo "FAIL: $name: $f does not parse: $out"; fails=$((fails + 1)); fi ;;
        bad_*)
            if [ ! -f "${f%.*}.err" ]; then echo "FAIL: $f has no .err"; fails=$((fails + 1)); continue; fi
            want=$(cat "${f%.*}.err")
            case $out in
            "$f$want"*) ;;
            *) echo "FAIL: $name: $f: expected $want (exit 1), got: $out (exit $rc)"; fails=$((fails + 1)) ;;
            esac
            [ $rc -eq 1 ] || { echo "FAIL: $name: $f: exit $rc"; fails=$((fails + 1)); } ;;
        esac
    done
done
echo "$n files, $fails failures"
[ $n -ge 25 ] || { echo "FAIL: only $n files"; exit 1; }
exit $((fails > 0))
