#!/bin/sh
# Builds the libFuzzer targets (see tests/local.mk): compiles every source of
# libgmcore with $CC $CFLAGS into _fuzz/obj (in parallel), then links each
# target. Usage: build.sh SRCDIR "TARGETS" LIBGMCORE_OBJECTS...
# A source is looked up in the build directory first (generated files), then
# in SRCDIR.
set -eu
srcdir=$1
targets=$2
shift 2
mkdir -p _fuzz/obj
list=_fuzz/obj/list
: >"$list"
objs=
for lo in "$@"; do
    base=${lo%.lo}
    src=$base.c
    [ -f "$src" ] || src=$srcdir/$base.c
    obj=_fuzz/obj/$(echo "$base" | tr / _).o
    echo "$src $obj" >>"$list"
    objs="$objs $obj"
done
# shellcheck disable=SC2016
xargs -P "$(nproc)" -L 1 sh -c '$CC $CFLAGS -c "$0" -o "$1" || exit 255' <"$list"
for t in $targets; do
    name=$(basename "$t")
    echo "  FUZZ     _fuzz/$name"
    # shellcheck disable=SC2086
    $CC $CFLAGS -fsanitize=fuzzer "$srcdir/$t.c" $objs -o "_fuzz/$name" $LIBS
done
