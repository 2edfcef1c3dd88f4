#!/bin/sh
# gramask against Lark itself, token for token (tests/lark_diff.py says what is
# compared); skips when no python3 can import lark (Debian: python3-lark).
py=${LARK_PYTHON:-}
if [ -z "$py" ] || ! "$py" -c 'import lark' 2>/dev/null; then
    echo "SKIP: no python3 with lark (LARK_PYTHON; Debian: python3-lark)"
    exit 77
fi
exec "$py" "${GM_SRCDIR:-.}/tests/lark_diff.py"
