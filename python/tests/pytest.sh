#!/bin/sh
# The Python package's pytest suite (python/tests), run by `make check` against
# the package built in the build tree (python/lib, see python/local.mk).
b=${GM_BUILDDIR:-.}
s=${GM_SRCDIR:-.}
py=${PYTHON3:-/usr/bin/python3}
"$py" -c 'import pytest, numpy' || { echo "FAIL: $py lacks pytest or numpy (./bootstrap installs python3-pytest, python3-numpy)"; exit 1; }
# A sanitizer build's library needs its runtime loaded first; Python itself leaks by
# design. A sanitizer report ends the process at once: without --capture=no it would
# go to pytest's capture file and be lost.
capture=
if ldd "$b/.libs/libgramask.so" 2>/dev/null | grep -q libasan; then
    LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so) $(${CC:-cc} -print-file-name=libubsan.so)"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
    GRAMASK_SANITIZERS=1
    capture=--capture=no
    export LD_PRELOAD ASAN_OPTIONS GRAMASK_SANITIZERS
fi
PYTHONPATH="$b/python/lib" PYTHONDONTWRITEBYTECODE=1 exec "$py" -m pytest -q -p no:cacheprovider \
    -p no:hypothesispytest $capture --rootdir "$s/python/tests" "$s/python/tests" "$@"
