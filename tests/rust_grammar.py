#!/usr/bin/env python3
"""The bundled Rust grammar (grammars/rust.lark) on what makes Rust hard.

Each case is a small Rust file and whether Rust 2021 accepts it. gramask
(`gramask parse GRAMMAR FILE`) must agree with the recorded verdict; when
Debian's rustc is installed (/usr/bin/rustc, package rustc), rustc in
parse-only mode (`RUSTC_BOOTSTRAP=1 rustc --edition 2021 -Z parse-only`)
must agree too, so the verdicts are the oracle's, not ours. Cases marked
BOUND are where the grammar's documented bounds show (comment depth, raw
string hashes): there the verdict is gramask's and rustc is not asked.

The cases are chosen so that the usual approximations fail them: comments
that do not nest, raw strings that end at the first `"#`, lifetimes lexed
as unterminated characters, macro arguments that are not balanced token
trees, `>>` that never closes two generic lists.

Also checked: grammars/rust.lark is what grammars/rust_gen.py writes, and
lexing splits numbers and dots as rustc does (`gramask parse --terminals`).
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get("GM_SRCDIR", ".")
GRAMASK = os.path.join(os.environ.get("GM_BUILDDIR", "."), "gramask")
GRAMMAR = os.path.join(SRC, "grammars", "rust.lark")
RUSTC = "/usr/bin/rustc"

# The generator's bounds (grammars/rust_gen.py): comments nest 8 deep, raw strings take 8 '#'.
DEPTH, HASHES = 8, 8


def nested(depth):
    return "/*" * depth + " x " + "*/" * depth


def raw(n, body="a\"b"):
    return "r" + "#" * n + '"' + body + '"' + "#" * n


def fn(body):
    return "fn f() {\n" + body + "\n}\n"


OK, BAD, BOUND_OK, BOUND_BAD = "ok", "bad", "bound-ok", "bound-bad"

CASES = [
    # nested block comments
    (OK, fn("/* /* */ */ let x = 1;")),
    (OK, fn("/* a /* b /* c */ b */ a */ let x = 1;")),
    (OK, fn("/*/ x */ let y = 2;")),            # `/*/` opens, the `/` is text
    (OK, fn("/**/ /***/ /** doc */ let y = 2;")),
    (OK, fn("let a = 1 /* / * */ + 2;")),
    (BAD, fn("/* /* */ let x = 1;")),            # unterminated: one level left open
    (BAD, fn("/* */ */ let x = 1;")),
    (BOUND_OK, fn(nested(DEPTH) + " let x = 1;")),
    (BOUND_BAD, fn(nested(DEPTH + 1) + " let x = 1;")),
    # raw strings
    (OK, fn("let s = " + raw(0, "a\\b") + ";")),
    (OK, fn("let s = " + raw(1) + ";")),
    (OK, fn("let s = " + raw(2, 'a"#b') + ";")),
    (OK, fn("let s = " + raw(3, 'x"##"#y') + ";")),
    (OK, fn("let s = b" + raw(2, '"#') + ";")),
    (OK, fn('let s = r#"a"#; let t = r#"b"#;')),
    (BAD, fn("let s = " + raw(1, 'a"#b') + ";")),  # ends at the first "#, then b"# is left
    (BAD, fn('let s = r##"a"#;')),
    (BOUND_OK, fn("let s = " + raw(HASHES) + ";")),
    (BOUND_BAD, fn("let s = " + raw(HASHES + 1) + ";")),
    # lifetimes and characters
    (OK, "fn f<'a>(x: &'a str) -> char { 'a' }\n"),
    (OK, fn("let c = '\\''; let d = '\\u{1F600}'; let e = 'é'; let g = '\"';")),
    (OK, fn("let c = b'a'; let d = b'\\x7f'; let e = b'\\'';")),
    (OK, "struct S<'a, 'b: 'a> { x: &'a &'b u8, y: &'static str }\n"),
    (OK, fn("'outer: loop { 'inner: while true { break 'outer; } continue 'outer; }")),
    (OK, fn("let x = m!('a 'b 'c' 'static);")),
    (BAD, fn("let c = 'ab';")),
    (BAD, fn("let c = ''';")),
    (BAD, fn("let c = '';")),
    (BAD, "fn f<'1>() {}\n"),
    (BAD, fn("m!('ab' ' ');")),                  # '\'ab\'' is an error even in a token tree
    # Rust 2021 reserved prefixes: an identifier glued to " ' or #
    (BAD, fn("break'a;")),
    (BAD, fn("let x = match\"x\";")),
    (BAD, fn("m!(a#b);")),
    (BAD, fn("m!(r'x');")),
    (BAD, fn("m!(_\"x\");")),
    (OK, fn("m!(b'x' b\"x\" r\"x\" br\"x\" r#\"x\"# r#x br#\"x\"# a #b);")),
    # macros: any balanced token tree
    (OK, "foo!(a b c ; => $x:expr, #[x] 'a' 'b 1.5 \"s\" @ ~);\n"),
    (OK, "foo![(a [b {c}]) fn struct self];\n"),
    (OK, "foo! { let x = ; ) ( }\n".replace(") (", "( )")),
    (OK, "macro_rules! m { ($($x:expr),* $(,)?) => { vec![$($x),*] }; () => () }\n"),
    (OK, fn("let v = vec![1, 2, 3]; println!(\"{}\", v[0]); m! { a b } m!(x).len();")),
    (BAD, "foo!(a (b);\n"),
    (BAD, "foo!(a ]);\n"),
    (BAD, "foo!(a b)\nfn g() {}\n"),                # a parenthesized item macro needs `;`
    # generics closing with >> (and << opening before a qualified path)
    (OK, fn("let x: Vec<Vec<u8>> = Vec::new();")),
    (OK, fn("let x: Vec<Vec<Vec<u8>>> = Vec::<Vec<Vec<u8>>>::new();")),
    (OK, fn("let x: HashMap<u8, Option<Box<dyn Fn(u8) -> Vec<u8>>>> = m();")),
    (OK, "fn f<T: Iterator<Item = Vec<u8>>>(x: T) where T: Into<Vec<Vec<u8>>> {}\n"),
    (OK, "fn f<I: IntoIterator>(i: I) -> Chain<<I as IntoIterator>::IntoIter, u8> { g() }\n"),
    (OK, fn("let a = x >> 2; let b = x < y; let c = (x as u32) < y; let d = x >> y >> z;")),
    (BAD, fn("let x: Vec<Vec<u8>>> = v;")),
    (BAD, fn("let x: Vec<Vec<u8> = v;")),
    (BAD, fn("let c = x as u32 < y;")),          # rustc: `<` opens u32's generic arguments
    (OK, "fn h() where <<I as A>::B as C>::D: P, X: Extend<<<I as A>::B as C>::D> {}\n"),
    (OK, "fn f(x: &(Error + Send)) { g(#[inline] |a| a); }\n"),
    # numbers and dots
    (OK, fn("for i in 0..n {} let a = &s[i + 1..]; let b = x.0.1; let c = t.0.len(); let d = 1.;")),
    (OK, fn("match c { 0..=9 => 1, 'a'..='z' => 2, -5..=-1 => 3, _ => 4 }")),
    (OK, fn("let a = 1.5e-3f32 + 0x_ffu8 as f32 + 1_000i64 as f32 + 2f64 as f32;")),
    (BAD, fn("let a = 1e;")),
    # attributes
    (OK, "#![allow(dead_code)]\n//! crate doc\n/// item doc\n#[derive(Debug)]\npub struct S;\n"),
    (OK, fn("#[allow(unused)] let x = 1; #[cfg(x)] { } #[cfg(y)] x")),
    (OK, "impl S {\n    #![allow(x)]\n    /// doc\n    #[inline] pub fn f(&self) {}\n}\n"),
    (BAD, "pub struct S;\n#![allow(dead_code)]\n"),
    (BAD, fn("let x = 1; /// dangling doc comment")),
    # closures, patterns, async, where, impl Trait, dyn
    (OK, fn("let f = |x: u8, (a, b): (u8, u8)| -> u8 { x + a + b }; let g = move || 1; h(&|v| v);")),
    (OK, fn("let (a, ref b, mut c, ..) = t; let S { x, y: [first, rest @ ..], .. } = s;")),
    (OK, fn("match v { Some(x) | None if x > 0 => {} E::A { b: 1 | 2, .. } => (), &mut [ref a, _] => {} _ => {} }")),
    (OK, "async fn f() -> u8 { let x = async move { g().await? }.await; x }\n"),
    (OK, "fn f(x: impl Fn(u8) -> u8 + Send) -> Box<dyn Iterator<Item = u8> + 'static> where Self: Sized {}\n"),
    (OK, "impl<T: ?Sized + Clone> Tr for T where for<'a> &'a T: Add<Output = T> { type O = T; const N: usize = 1; }\n"),
    (OK, "pub(crate) unsafe trait Tr: Sized { fn f(&mut self, x: u8) -> Self; type A: Copy; }\n"),
    (OK, fn("if let Some(x) = y { } else if z { } else { } while let Ok(v) = r {} let s = S { a, b: 1, ..d };")),
    (OK, fn("if c {} - 1; match x {}.len(); unsafe { f() }? ;".replace("? ;", "?;"))),
    (BAD, fn("if x == S { a: 1 } {}")),          # no struct literal in a condition
    (BAD, fn("let x = if c { 1 } else { 2 } ")),  # `;` missing before `}`? no: a let needs `;`
    (BAD, "fn f() -> i32 { match x { _ => 1 } + 1 }\n"),
    (BAD, fn("let f = |x| -> u8 x;")),           # a closure with a return type needs a block
    (BAD, "fn f(x: &dyn A + B) {}\n"),
    (BAD, fn("let x = try!(y);")),               # `try` is a keyword in 2021
    # carriage returns: CRLF line ends anywhere, a bare CR not in literals or doc comments
    (OK, fn("/// doc\n  let s = \"a\nb\"; let r = r#\"x\ny\"#; // c\n").replace("\n", "\r\n")),
    (OK, fn("let s = 1; // a bare \r in a comment")),
    (BAD, fn("let s = \"a\rb\";")),
    (BAD, fn("let s = r#\"a\rb\"#;")),
    (BAD, fn("let s = b\"a\rb\";")),
    (BAD, "/// a bare \r in a doc comment\nfn g() {}\n"),
    (BAD, fn("/** a bare \r in a block doc comment */ let x = 1;")),
    (OK, fn("/* a /* CRLF \r\n */ b */ let x = 1;")),
]


def gramask_ok(path):
    r = subprocess.run([GRAMASK, "parse", GRAMMAR, path], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit("FAIL: gramask parse exit %d on %s: %s" % (r.returncode, path, r.stderr))
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def rustc_ok(path):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    r = subprocess.run([RUSTC, "--edition", "2021", "-Z", "parse-only", path], env=env,
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def check_generated():
    r = subprocess.run([sys.executable, os.path.join(SRC, "grammars", "rust_gen.py")],
                       capture_output=True, text=True, check=True)
    with open(GRAMMAR) as f:
        if f.read() != r.stdout:
            return ["grammars/rust.lark is not what grammars/rust_gen.py writes (regenerate it)"]
    return []


def check_terminals(tmp):
    """Numbers next to dots lex as rustc lexes them."""
    cases = [("0..n", ["INT_DOTDOT", "IDENT"]), ("i + 1..=n", ["IDENT", '"+"', "INT_DOTDOTEQ", "IDENT"]),
             ("x.0.1", ["IDENT", '"."', "FLOAT"]), ("x.0.len", ["IDENT", '"."', "INT_DOT", "IDENT"]),
             ("'a'", ["CHAR"]), ("'a", ["LIFETIME"]), ("r#type", ["IDENT"]), ("r#\"x\"#", ["RAW_STRING"]),
             ("a >> b", ["IDENT", '">>"', "IDENT"])]
    fails = []
    for text, want in cases:
        path = os.path.join(tmp, "t.rs")
        with open(path, "w") as f:
            f.write("fn f() { m!(" + text + "); }\n")
        r = subprocess.run([GRAMASK, "parse", GRAMMAR, path, "--terminals"], capture_output=True, text=True)
        # one line per terminal, LINE:COLUMN NAME; the case sits between `m!(` and `);`
        got = [l.split(" ", 1)[1] for l in r.stdout.splitlines() if " " in l and l[0].isdigit()]
        inner = got[8:-3]
        if inner != want:
            fails.append("terminals of %r: want %s, got %s (%s)" % (text, want, inner, r.stderr.strip()))
    return fails


def main():
    have_rustc = os.path.exists(RUSTC)
    fails = check_generated()
    with tempfile.TemporaryDirectory() as tmp:
        fails += check_terminals(tmp)
        paths = []
        for i, (want, text) in enumerate(CASES):
            path = os.path.join(tmp, "case%d.rs" % i)
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
            ok, out = gramask_ok(path)
            expect = want in (OK, BOUND_OK)
            if ok != expect:
                fails.append("case %d (%s): gramask %s:\n%s\n%s" % (i, want, "accepts" if ok else "rejects",
                                                                      text, out))
        if have_rustc:
            # rustc is slow to start: two at a time
            asked = [i for i, (want, _) in enumerate(CASES) if want in (OK, BAD)]
            with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
                verdicts = list(pool.map(lambda i: rustc_ok(paths[i]), asked))
            for i, (rok, rout) in zip(asked, verdicts):
                want, text = CASES[i]
                if rok != (want == OK):
                    fails.append("case %d (%s): rustc %s (the recorded verdict is wrong):\n%s\n%s"
                                 % (i, want, "accepts" if rok else "rejects", text, rout))
    for f in fails:
        print("FAIL: " + f)
    print("%d cases%s, %d failures" % (len(CASES), " (each also checked by " + RUSTC + ")" if have_rustc
                                       else " (no " + RUSTC + ": recorded verdicts only)", len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
