#!/bin/sh
# The README's install of the Python package, offline: a virtual environment with
# Debian's site packages, `pip install --no-index --no-build-isolation` of a copy of
# python/ against this build tree, then `python -m gramask` (the demo) from there.
b=${GM_BUILDDIR:-.}
s=${GM_SRCDIR:-.}
py=${PYTHON3:-/usr/bin/python3}
if ldd "$b/.libs/libgramask.so" 2>/dev/null | grep -q libasan; then
    echo "SKIP: sanitizer build (pytest.sh covers the binding there)"; exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp -R "$s/python" "$tmp/python" && chmod -R u+w "$tmp/python" && rm -rf "$tmp/python/build" || exit 1
run() { "$@" >"$tmp/log" 2>&1 || { echo "FAIL: $*"; tail -30 "$tmp/log"; exit 1; }; }
run "$py" -m venv --system-site-packages "$tmp/venv"
GRAMASK_BUILD_DIR=$(cd "$b" && pwd) GRAMASK_SRC_DIR=$(cd "$s" && pwd) \
    run "$tmp/venv/bin/pip" install -q --no-index --no-build-isolation "$tmp/python"
cd "$tmp" || exit 1
run "$tmp/venv/bin/python" -m gramask
grep -q "every sample token allowed: yes; EOS allowed at the end: yes" "$tmp/log" \
    || { echo "FAIL: python -m gramask"; cat "$tmp/log"; exit 1; }
"$tmp/venv/bin/python" -c 'import gramask, sys; sys.exit(0 if gramask.__file__.startswith(sys.argv[1]) else 1)' "$tmp/venv" \
    || { echo "FAIL: the venv imports gramask from elsewhere"; exit 1; }
echo "ok: pip install --no-index --no-build-isolation into a venv; python -m gramask"
