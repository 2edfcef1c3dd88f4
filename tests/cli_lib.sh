# Shared by the CLI test scripts (sourced): run a command of the gramask
# binary, look for strings in what it printed, and count failures.
#   run ARGS...  runs `gramask ARGS`; $o holds its output and "exit STATUS"
#   has TEXT     whether $o contains TEXT (a fixed string)
#   ok DESC $?   records the verdict of the `has` chain before it
#   finish       reports the failures; its status is the script's verdict
# A script may set show=tail (before sourcing) to print the end of a
# failing command's output instead of its start.
g=${GM_BUILDDIR:-.}/gramask
d=${GM_SHARED_DIR:-../shared}
src=${GM_SRCDIR:-.}
show=${show:-head}
fails=0
o=
run() { o=$("$g" "$@" 2>&1; echo "exit $?"); }
has() { printf '%s\n' "$o" | grep -q -F -- "$1"; }
ok() {
    if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; printf '%s\n' "$o" | "$show" -20; fails=$((fails + 1)); fi
}
finish() {
    [ "$fails" = 0 ] || { echo "$fails failure(s)"; return 1; }
}
