#!/bin/sh
# Java corpus check: the share of the java.base sources of OpenJDK 17 (Debian
# package openjdk-17-source, lib/src.zip) that `gramask parse` accepts with
# grammars/java.lark. Installs the package when missing (as root), unpacks
# java.base into CACHE once, prints the coverage and every failing file with
# its first error, and fails below MIN percent (default 95).
#
#   tests/corpus/java.sh GRAMASK GRAMMAR CACHE [MIN]
#
# `make check-corpus-java` runs it with the build tree's gramask and
# _corpus/java as the cache.
set -eu

if [ $# -lt 3 ]; then
    echo "usage: $0 GRAMASK GRAMMAR CACHE [MIN_PERCENT]" >&2
    exit 2
fi
gramask=$1
grammar=$2
cache=$3
min=${4:-95}
pkg=openjdk-17-source
zip=/usr/lib/jvm/openjdk-17/lib/src.zip

if [ ! -f "$zip" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "java corpus: installing $pkg"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null ||
            { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null; }
    fi
    if [ ! -f "$zip" ]; then
        echo "java corpus: $zip is missing: install the Debian package $pkg" >&2
        exit 1
    fi
fi
command -v unzip >/dev/null 2>&1 || { echo "java corpus: unzip is needed" >&2; exit 1; }

# Unpack once per src.zip (its size and time are the stamp).
stamp="$cache/.stamp"
want=$(ls -l --time-style=+%s "$zip" | awk '{print $5, $6}')
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$cache"
    mkdir -p "$cache"
    unzip -q -o "$zip" 'java.base/*' -d "$cache"
    echo "$want" >"$stamp"
fi

list="$cache/files.txt"
fails="$cache/failures.txt"
(cd "$cache" && find java.base -name '*.java' | LC_ALL=C sort) >"$list"
total=$(wc -l <"$list")
if [ "$total" -eq 0 ]; then
    echo "java corpus: no .java file under $cache/java.base" >&2
    exit 1
fi

# One `gramask parse` per file, one per processor; a failure prints the
# first line of its error (FILE:LINE:COLUMN: ...).
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
(cd "$cache" && xargs -P "$jobs" -n 1 sh -c '
    out=$("$0" parse "$1" "$2" 2>&1) || printf "%s\n" "$out" | head -n 1 | cut -c 1-400
' "$gramask" "$grammar" <"$list") | LC_ALL=C sort >"$fails"

failed=$(wc -l <"$fails")
passed=$((total - failed))
pct=$(awk -v p="$passed" -v t="$total" 'BEGIN { printf "%.2f", 100 * p / t }')
echo "java: $passed of $total java.base files parse ($pct%, target $min%)"
if [ "$failed" -gt 0 ]; then
    echo "java: failing files (first error):"
    sed 's/^/  /' "$fails"
fi
if awk -v p="$passed" -v t="$total" -v m="$min" 'BEGIN { exit !(100 * p < m * t) }'; then
    echo "java: coverage below $min%" >&2
    exit 1
fi
