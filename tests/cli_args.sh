#!/bin/sh
# The command line's answers to bad arguments, in every subcommand: a
# one-line reason, the command's synopsis, exit status 2; demo's answer to a
# grammar it cannot run; --version, --help's exit statuses; the generated
# reference page (docs/cli.md) against the help texts it comes from.
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
b=${GM_BUILDDIR:-.}
tok="$d/tokenizers/sp32k"

# exact: the whole of stderr + status
exact() {
    want=$(printf '%s\nexit %s' "$1" "$2")
    [ "$o" = "$want" ] || { printf 'want:\n%s\n' "$want"; return 1; }
}

run --version; has "gramask 0." && has 'exit 0'; ok "--version" $?
run --help
has 'exit status:' && has '  2  bad command line: a one-line reason' &&
    has '  1  the work failed' && has 'exit 0'; ok "--help documents the exit statuses" $?
run; has 'gramask: missing COMMAND' && has 'exit 2'; ok "no command" $?
run frobnicate
exact "gramask: unknown command 'frobnicate'
usage: gramask COMMAND [ARGS...]; the commands: $("$g" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { printf "%s%s", s, $1; s = ", " }')
(gramask --help for details)" 2; ok "unknown command: the list of commands" $?

run encode
exact "gramask encode: missing TOKENIZER and FILE
usage: gramask encode TOKENIZER FILE... [-o OUT] [--special-as-text]
(gramask encode --help for details)" 2; ok "encode: missing arguments" $?
run encode "$tok"; has 'gramask encode: missing FILE (the text to encode)' && has 'exit 2'
ok "encode: missing FILE" $?
run encode "$tok" x -o; has 'gramask encode: -o needs a value' && has 'exit 2'; ok "encode: -o" $?
run encode --frob; has "gramask encode: unknown option '--frob'" && has 'exit 2'; ok "encode: unknown option" $?

run trace json --tokenizer "$tok"
exact "gramask trace: missing --ids IDS.json or --text FILE...
usage: gramask trace GRAMMAR --tokenizer T (--ids IDS.json | --text FILE...) [--json] [--dump-masks OUT]
(gramask trace --help for details)" 2; ok "trace: neither --ids nor --text" $?
run trace json --tokenizer "$tok" a.json; has "gramask trace: unexpected argument 'a.json' (text files go after --text)" && has 'exit 2'
ok "trace: a text file without --text" $?
run trace json --tokenizer "$tok" --text; has 'gramask trace: --text needs at least one FILE' && has 'exit 2'
ok "trace: --text without files" $?
run trace json --tokenizer "$tok" --ids x --text y; has 'gramask trace: --ids and --text exclude each other'
ok "trace: --ids and --text" $?
run trace json --format cobol; has "gramask trace: --format 'cobol': the grammar formats are lark, gbnf, ebnf and regex; the tool formats (with --tools) llama, llama-json, qwen and harmony" && has 'exit 2'
ok "trace: bad --format" $?
run trace json --tokenizer; has 'gramask trace: --tokenizer needs a value' && has 'exit 2'; ok "trace: --tokenizer without value" $?
run trace --ids x; has 'gramask trace: missing GRAMMAR' && has 'exit 2'; ok "trace: missing GRAMMAR" $?

run generate json --tokenizer "$tok" --seed x
exact "gramask generate: bad value 'x' for --seed
usage: gramask generate $("$g" generate --help | head -1 | sed 's/^usage: gramask generate //')
(gramask generate --help for details)" 2; ok "generate: bad --seed" $?
run generate json --tokenizer "$tok" --eos-prob 2; has "gramask generate: --eos-prob '2': not a number in 0..1" && has 'exit 2'
ok "generate: bad --eos-prob" $?
run generate; has 'gramask generate: missing GRAMMAR' && has 'exit 2'; ok "generate: missing GRAMMAR" $?
run compile json --tokenizer "$tok"; has 'gramask compile: missing -o FILE.gmc (where to write)' && has 'exit 2'
ok "compile: missing -o" $?
run compile -o x.gmc; has 'gramask compile: missing GRAMMAR' && has 'exit 2'; ok "compile: missing GRAMMAR" $?
run compile json -o; has 'gramask compile: -o needs a value' && has 'exit 2'; ok "compile: -o without value" $?
run info; has 'gramask info: missing FILE.gmc' && has 'exit 2'; ok "info: missing FILE" $?
run info a.gmc b.gmc; has "gramask info: unexpected argument 'b.gmc'" && has 'exit 2'; ok "info: two files" $?
run vocab; has 'gramask vocab: missing PATH (a tokenizer)' && has 'exit 2'; ok "vocab: missing PATH" $?
run vocab "$tok" --model-size big; has "gramask vocab: bad value 'big' for --model-size" && has 'exit 2'
ok "vocab: bad --model-size" $?
run vocab "$tok" --frob; has "gramask vocab: unknown option '--frob'" && has 'exit 2'; ok "vocab: unknown option" $?
run regex; has "gramask regex: missing 'RE' (the regex)" && has 'exit 2'; ok "regex: missing RE" $?
run regex a --dot --dump; has 'gramask regex: --dot and --dump exclude each other' && has 'exit 2'
ok "regex: --dot and --dump" $?
run lex; has 'gramask lex: missing TERMINALS' && has 'exit 2'; ok "lex: missing TERMINALS" $?
run lex t.terms; has 'gramask lex: missing INPUT (or --dump / --dot)' && has 'exit 2'; ok "lex: missing INPUT" $?
run grammar; has 'gramask grammar: missing GRAMMAR' && has 'exit 2'; ok "grammar: missing GRAMMAR" $?
run grammar json --frob; has "gramask grammar: unknown option '--frob'" && has 'exit 2'; ok "grammar: unknown option" $?
run parse json; has 'gramask parse: missing FILE (the text to parse)' && has 'exit 2'; ok "parse: missing FILE" $?
run parse --frob; has "gramask parse: unknown option '--frob'" && has 'exit 2'; ok "parse: unknown option" $?

run demo --grammar go
exact "gramask demo: the bundled sample is JSON, so 'go' needs a sample of its own
  gramask demo --grammar go --sample FILE             decode FILE as the demo does
  gramask trace go --tokenizer T --text FILE          as the tokenizer encodes FILE
  gramask generate go --tokenizer T                   random constrained output" 2
ok "demo --grammar go: how to run it" $?
run demo --grammar cobol
has "gramask demo: no bundled grammar 'cobol'; the bundled grammars are json, json_bounded, go," &&
    has 'usage: gramask demo' && has 'exit 2'; ok "demo: an unknown grammar lists the bundled ones" $?
run demo --steps x
exact "gramask demo: bad value 'x' for --steps
usage: gramask demo [--tokenizer T] [--grammar NAME] [--sample FILE] [--steps N] [--quiet]
(gramask demo --help for details)" 2; ok "demo: bad --steps" $?
run demo --grammar; has 'gramask demo: --grammar needs a value'; ok "demo: --grammar without value" $?

# One option parser (getopt_long semantics) in every command: --opt=V, --opt V, "--".
tmp=${TMPDIR:-/tmp}/gm_cli_args.$$
mkdir -p "$tmp"
printf '{"a": [1, 2]}' > "$tmp/s.json"
run trace json --tokenizer="$tok" --lexer contextual --text "$tmp/s.json"
has '1 files, 0 failing' && has 'exit 0'; ok "trace: --tokenizer=T and --lexer contextual" $?
run trace json --tokenizer "$tok" --lexer=contextual --conflicts lark --text -- "$tmp/s.json"
has '1 files, 0 failing' && has 'exit 0'; ok "trace: --lexer=V, --conflicts V, -- before the files" $?
run grammar json --start value; has 'LALR(1):' && has 'exit 0'; ok "grammar --start V" $?
run grammar json --start=value; has 'LALR(1):' && has 'exit 0'; ok "grammar --start=V" $?
run schema --indent 4 "$tmp/s.json"; has 'root ::=' && has 'exit 0'; ok "schema --indent 4" $?
run schema --max-ws 3 "$tmp/s.json"; has 'root ::=' && has 'exit 0'; ok "schema --max-ws V" $?
run generate json --tokenizer "$tok" -n 1 --seed=x; has "gramask generate: bad value 'x' for --seed" && has 'exit 2'
ok "generate --seed=x" $?
run compile json --eager=yes; has 'gramask compile: --eager takes no value' && has 'exit 2'; ok "a flag given a value" $?
run trace json --lexer weird; has "gramask trace: --lexer 'weird': basic or contextual" && has 'exit 2'; ok "trace: bad --lexer" $?
run regex --match=--x -- --x; has 'exit 0' && ! has 'unexpected'; ok "regex: -- then a pattern starting with --" $?

# A bundled name wins over a directory of that name (python/ in the checkout).
(cd "$src" && "$g" trace python --tokenizer "$tok" --text "$tmp/s.json" >"$tmp/out" 2>&1); rc=$?
o="$(cat "$tmp/out")
exit $rc"
has "'python' is the bundled grammar python (not the directory python/" && has '1 files, 0 failing'
ok "trace python from the checkout root: the bundled grammar, said so" $?

# --tokenizer NAME through the search path: $GRAMASK_TOKENIZERS, then the configured data dirs.
mkdir -p "$tmp/toks/mytok"
cp "$tok/tokenizer.json" "$tmp/toks/mytok/"
o=$(GRAMASK_TOKENIZERS="$tmp/nothing:$tmp/toks" "$g" trace json --tokenizer mytok --eos '</s>' --text "$tmp/s.json" 2>&1; echo "exit $?")
has '1 files, 0 failing' && has 'exit 0'; ok "--tokenizer NAME found in \$GRAMASK_TOKENIZERS" $?
run vocab sp32k; has 'size:' && has 'exit 0'; ok "vocab sp32k: a bundled tokenizer by name" $?
run trace json --tokenizer nosuchtok --text "$tmp/s.json"
has "gramask trace: no tokenizer 'nosuchtok': not a file or directory here, nor in \$GRAMASK_TOKENIZERS" && has 'exit 1'
ok "an unknown tokenizer name: where it was looked for" $?

# No EOS, never silently: a tokenizer.json alone; generation_config.json; --eos ID|TEXT.
run trace json --tokenizer "$tmp/toks/mytok" --text "$tmp/s.json"
has 'no stop token' && has '--eos' && has 'exit 1'; ok "a vocabulary without a stop token: an error that says what to do" $?
eos=$("$g" vocab "$tok" | awk '/^  / { sub(/:$/, "", $1); print $1; exit }')
printf '{"eos_token_id": [%s]}' "$eos" > "$tmp/toks/mytok/generation_config.json"
run trace json --tokenizer "$tmp/toks/mytok" --text "$tmp/s.json"; has '1 files, 0 failing' && has 'exit 0'
ok "generation_config.json's eos_token_id" $?
run vocab "$tmp/toks/mytok"; has 'EOS ids:         1' ; ok "vocab: generation_config.json's EOS" $?
printf '{"eos_token_id": "x"}' > "$tmp/toks/mytok/generation_config.json"
run vocab "$tmp/toks/mytok"; has 'generation_config.json' && has 'eos_token_id: expected a token id' && has 'exit 1'
ok "a malformed generation_config.json is named" $?
printf '{"eos_token_id": [2, 99999]}' > "$tmp/toks/mytok/generation_config.json"
run vocab "$tmp/toks/mytok"; has 'generation_config.json' && has 'eos_token_id 99999 is not a token of' && has 'exit 1'
ok "generation_config.json: an id past the vocabulary is named" $?
printf '{"eos_token_id": 2, "temperature": 0.6}' > "$tmp/toks/mytok/generation_config.json"
run vocab "$tmp/toks/mytok"; has 'EOS ids:         1' && has 'exit 0'; ok "generation_config.json: a single id" $?
rm "$tmp/toks/mytok/generation_config.json"
run trace json --tokenizer "$tmp/toks/mytok" --eos "$eos" --text "$tmp/s.json"; has '1 files, 0 failing' && has 'exit 0'
ok "--eos ID" $?
run generate json --tokenizer "$tmp/toks/mytok" --eos '</s>' -n 2; has '2 texts' && has 'exit 0'; ok "--eos TEXT" $?
run trace json --tokenizer "$tmp/toks/mytok" --eos '<nope>' --text "$tmp/s.json"
has "--eos '<nope>': no token of the tokenizer has this text" && has 'exit 1'; ok "--eos TEXT that is no token" $?
run vocab "$tmp/toks/mytok" --eos=99999999; has "not a token id" && has 'exit 1'; ok "vocab --eos out of range" $?

# A .gmc: --text with its tokenizer; another tokenizer refused.
"$g" compile json --tokenizer "$tok" -o "$tmp/j.gmc" >/dev/null 2>&1
run trace "$tmp/j.gmc" --tokenizer "$tok" --text "$tmp/s.json"; has '1 files, 0 failing' && has 'exit 0'
ok "trace FILE.gmc --tokenizer T --text" $?
run trace "$tmp/j.gmc" --text "$tmp/s.json"; has 'needs --tokenizer T, the tokenizer it was compiled for' && has 'exit 2'
ok "trace FILE.gmc --text without --tokenizer" $?
if [ -d "$d/tokenizers/llama3" ]; then
    run trace "$tmp/j.gmc" --tokenizer "$d/tokenizers/llama3" --text "$tmp/s.json"
    has 'is not the tokenizer' && has 'was compiled for' && has 'exit 1'; ok "trace FILE.gmc with another tokenizer: refused" $?
fi

# gramask grammar on GBNF, EBNF and regex grammars: the normalized rules.
printf 'root ::= "a" x\nx ::= [0-9]+\n' > "$tmp/g.gbnf"
run grammar "$tmp/g.gbnf"; has 'root ::= "a" x' && has 'x ::= ' && has 'exit 0'; ok "grammar FILE.gbnf: its rules" $?
cp "$tmp/g.gbnf" "$tmp/g.txt"
run grammar --format gbnf "$tmp/g.txt"; has 'root ::= "a" x' && has 'exit 0'; ok "grammar --format gbnf" $?
printf 'ab+c\n' > "$tmp/r.regex"
run grammar "$tmp/r.regex"; has 'root ::=' && has 'exit 0'; ok "grammar FILE.regex" $?
"$g" grammar "$tmp/g.gbnf" > "$tmp/n.ebnf" && run grammar "$tmp/n.ebnf"
[ "$(printf '%s' "$o" | sed '$d')" = "$(cat "$tmp/n.ebnf")" ]; ok "grammar: the printed rules read back the same" $?

# generate: readable sampling finishes; uniform stays for stress tests.
run generate json --tokenizer "$tok" -n 10 --max-tokens 120
has '10 finished' && has 'exit 0'; ok "generate (readable): every JSON text finished" $?
run generate json --tokenizer "$tok" -n 10 --max-tokens 120 --sampling uniform
has '0 dead ends' && has 'exit 0' && ! has '10 finished'; ok "generate --sampling uniform: the stress test" $?
run generate json --tokenizer "$tok" --sampling nice; has "--sampling 'nice': readable or uniform" && has 'exit 2'
ok "generate: bad --sampling" $?
# trace --dump-masks: the compact form (ranges or their complement, the shorter), read back:
# every true token is in its step's set, the count agrees, and the other form is no shorter.
"$g" encode "$tok" "$tmp/s.json" > "$tmp/ids.json" 2>/dev/null
"$g" trace json --tokenizer "$tok" --ids "$tmp/ids.json" --dump-masks "$tmp/d.jsonl" >/dev/null 2>&1
o=$(python3 - "$tmp/ids.json" "$tmp/d.jsonl" <<'PY' 2>&1; echo "exit $?"
import json, sys
ids = json.load(open(sys.argv[1]))[0]["ids"]
rows = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == len(ids) + 1, (len(rows), len(ids))
def runs(s, n):
    out, t = [], 0
    while t < n:
        if t not in s:
            t += 1
            continue
        a = t
        while t < n and t in s:
            t += 1
        out.append(a if a == t - 1 else [a, t - 1])
    return out
for step, r in enumerate(rows):
    key = "ranges" if "ranges" in r else "except"
    got = set()
    for x in r[key]:
        got.update(range(x[0], x[1] + 1) if isinstance(x, list) else (x,))
    allowed = got if key == "ranges" else set(range(r["vocab"])) - got
    assert len(allowed) == r["count"], step
    if step < len(ids):
        assert ids[step] in allowed, step
    other = runs(allowed, r["vocab"]) if key == "except" else runs(set(range(r["vocab"])) - allowed, r["vocab"])
    assert len(json.dumps(r[key])) <= len(json.dumps(other)) + 2, step
print("dump ok", len(rows))
PY
)
has 'dump ok' && has 'exit 0'; ok "trace --dump-masks: compact, read back, the shorter form" $?
# Messages (issue 33 item 7).
printf '[1' > "$tmp/m.json"
"$g" encode "$tok" "$tmp/m.json" > "$tmp/m.ids" 2>/dev/null
python3 - "$tmp/m.ids" "$tok/tokenizer.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = json.load(open(sys.argv[2]))["model"]["vocab"]
d.append({"file": "multi.json", "ids": d[0]["ids"] + [v["],"]]})   # "]" fits, "," does not
d.append({"file": "first.json", "ids": [v["a"]]})                    # refused at step 0
d.append({"file": "range.json", "ids": [10 ** 6]})                   # another tokenizer's id
json.dump(d, open(sys.argv[1], "w"))
PY
run trace json --tokenizer "$tok" --ids "$tmp/m.ids" --only multi.json
has 'is not allowed: its byte 2 (0x2c) is refused' && has 'expected at that byte: end of input'
ok "trace: a multi-byte token is reported at the byte refused" $?
run trace json --tokenizer "$tok" --ids "$tmp/m.ids" --only first.json
has 'after: nothing (it is the first token)'; ok "trace: a rejection at step 0 has no text before it" $?
run trace json --tokenizer "$tok" --ids "$tmp/m.ids" --only range.json
has 'true token 1000000 (step 0) is out of range: the tokenizer has 32000 ids (ids made with another tokenizer?)'
ok "trace: an id out of range says so" $?
printf 'start: a | b\na: "x"\nb: "x"\n' > "$tmp/c.lark"
run grammar "$tmp/c.lark"; has 'is not LALR(1)' && has 'hint: for a grammar written for Lark, --conflicts=lark'
ok "grammar: not LALR(1) names --conflicts=lark" $?
run trace "$tmp/c.lark" --tokenizer "$tok" --text "$tmp/m.json"; has 'hint: for a grammar written for Lark, --conflicts=lark'
ok "trace: not LALR(1) names --conflicts=lark" $?
printf 'start: X\nX: /(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)/\n' > "$tmp/big.lark"
run grammar "$tmp/big.lark" --max-dfa-states 100; has 'gm_limits.max_dfa_states' && has 'hint: --max-dfa-states N raises the limit' && has 'exit 1'
ok "grammar: the DFA limit, and the option that raises it" $?
printf 'start: A B\nA: "x"\nB: /(a|b)*a(a|b){20}/\n' > "$tmp/big2.lark"
run grammar "$tmp/big2.lark" --max-dfa-states 1000
has "$tmp/big2.lark:3:1: terminal B: its lexer DFA alone needs more than 1000 states (gm_limits.max_dfa_states)" &&
    has 'exit 1'; ok "grammar: the DFA limit names the terminal that needs the states, where it is defined" $?
run grammar "$tmp/big.lark"; has 'LALR(1):' && has 'exit 0'; ok "grammar: the same under the default limit" $?
printf 'root ::= "a"\n' > "$tmp/a.gbnf"
printf 'a\n' > "$tmp/a.txt"
run parse "$tmp/a.gbnf" "$tmp/a.txt"; has "unexpected '\\n' (byte 0x0a)"; ok "parse: a newline shown as \\n" $?
run trace json --tokenizer "$tok" --text "$tmp/m.json" --dump-masks "$tmp/nodir/x.jsonl"
has 'cannot write' && has 'No such file or directory' && has 'exit 1'; ok "a write error with the system's reason" $?
run compile json --tokenizer "$tok" -o "$tmp/nodir/x.gmc"
has 'cannot write the compiled file' && has 'No such file or directory'; ok "compile: a write error with the system's reason" $?
run trace json --tokenizer "$tok" --ids "$tmp/m.ids"
n=$(printf '%s\n' "$o" | grep -c '^multi.json\|^first.json\|^range.json\|^m.json'); [ "$n" = 4 ]
ok "trace: the table names each file" $?
rm -rf "$tmp"

# README's dependency list is bootstrap's, package for package.
want=$(deps=; eval "$(sed -n '/^deps=/{:a;/\\$/{N;ba};p}' "$src/bootstrap")"; printf '%s\n' $deps | sort -u)
got=$(python3 -c '
import re, sys
t = open(sys.argv[1]).read()
para = t[t.index("Dependencies (Debian packages"):].split("\n\n")[0]
para = re.sub(r"\([^)]*\)", "", para.split(":", 1)[1].replace("\n", " "))
print("\n".join(sorted({x.strip(" .") for x in para.split(",") if x.strip(" .")})))' "$src/README.md")
o="bootstrap: $want
README: $got"
[ -n "$want" ] && [ "$want" = "$got" ]; ok "README's dependency list equals bootstrap's" $?

# Progress goes to a terminal only: piped, nothing but the report.
run compile json --tokenizer "$tok" --eager -o "${TMPDIR:-/tmp}/gm_cli_args.$$.gmc"
! has 'building token tables' && has 'exit 0'; ok "no progress line when stderr is not a terminal" $?
rm -f "${TMPDIR:-/tmp}/gm_cli_args.$$.gmc"

# docs/cli.md is the help texts, every command's
doc="$b/docs/cli.md"
[ -f "$doc" ]; ok "docs/cli.md was generated" $?
for c in $("$g" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
    o=$(awk -v h="## gramask $c" '$0 == h { on = 1; next } on && /^```$/ { n++; if (n == 2) exit; next } on && n == 1' "$doc")
    [ "$o" = "$("$g" "$c" --help)" ]; ok "docs/cli.md: gramask $c --help" $?
done
# docs/python.md is the package's docstrings: a section for every name of gramask.__all__.
pydoc="$b/docs/python.md"
o=$(python3 - "$src/python/gramask/__init__.py" "$pydoc" <<'PY' 2>&1; echo "exit $?"
import ast, re, sys
tree = ast.parse(open(sys.argv[1]).read())
names = next(ast.literal_eval(n.value) for n in tree.body
             if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__")
doc = open(sys.argv[2]).read()
missing = [x for x in names if not re.search(r"^## .*`gramask\.%s[`(]" % re.escape(x), doc, re.M)]
assert not missing, missing
assert "Generated by the build from the package's docstrings" in doc
print("python doc ok", len(names))
PY
)
has 'python doc ok' && has 'exit 0'; ok "docs/python.md: every name of gramask.__all__" $?
finish
