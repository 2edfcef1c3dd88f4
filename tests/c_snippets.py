#!/usr/bin/env python3
"""The bundled C grammar and its typedef-name layer against gcc.

Each snippet is checked by `gcc -fsyntax-only -std=gnu11` (the oracle) and
by `gramask parse c`; the two must agree, and gcc must give the verdict
written beside the snippet (so a snippet that stops testing what it was
written for is noticed). Most snippets are about typedef names (grammars/
c.lark, note [c: typedef names]; parser/ctypedef.h): each is one a lexer
without the layer, or a layer that forgets scopes, gets wrong. The rest
are GNU extensions of preprocessed headers.
"""
import os
import subprocess
import sys
import tempfile

# (gcc accepts it, the snippet)
SNIPPETS = [
    # A typedef name starts a declaration; any other name an expression.
    (True, "typedef int T; void f(void) { T * x; (void)x; }"),
    (True, "int a, b; void f(void) { a * b; }"),
    (False, "int a; void f(void) { a x; }"),
    (False, "void f(void) { T x; }"),
    (True, "typedef int T, *P; P p; T t;"),
    (True, "typedef int (*F)(int); F f; int g(F h) { return h(1); }"),
    (True, "__extension__ typedef long long LL; LL v;"),
    (True, "typedef struct foo foo; struct foo { foo *next; }; foo *head;"),
    (True, "typedef int T; int f(void) { int x = (T)1; T *p = &x; return *p + (int)sizeof(T); }"),
    # Shadowing in inner blocks, and the end of those blocks.
    (True, "typedef int T; int f(void) { int T = 1; return T * 2; }"),
    (False, "typedef int T; void f(void) { int T = 1; T x; }"),
    (True, "typedef int T; void f(void) { { int T = 1; (void)T; } T x; (void)x; }"),
    (False, "void f(void) { { typedef int T; } T x; }"),
    (True, "typedef int T; void f(void) { { typedef char T; T c = 0; (void)c; } T x = 1; (void)x; }"),
    (True, "typedef int T; void f(void) { T T; T = 1; }"),
    (False, "typedef int T; void f(void) { T T; T x; }"),
    (True, "typedef int T; void f(void) { long T = 2; T *= 3; }"),
    (True, "typedef int T; void f(void) { long (T) = 1; T = 2; }"),
    (True, "typedef int T; void f(void) { T (*T)[2] = 0; (void)T; }"),
    # Parameters: in scope in the body of a definition, not after a prototype.
    (True, "typedef int T; int f(int T) { return T * 2; }"),
    (False, "typedef int T; void f(int T) { T x; }"),
    (True, "typedef int T; void g(int T); T y;"),
    (True, "typedef int T; void f(T); void g(T T) { (void)T; }"),
    (False, "typedef int T; void g(T T) { T x; }"),
    (True, "typedef int T; void f(int (T)); T z; void g(int (*h)(T)) { T y = h(1); (void)y; }"),
    (True, "typedef int T; void g(int T); void h(void) { T z; (void)z; }"),
    (True, "typedef int T; void h(void *p) { if ((int (*)(int T))p) { T z = 0; (void)z; } }"),
    # Members, tags and member access do not bind names.
    (True, "typedef int T; struct s { T T; }; T u;"),
    (True, "typedef int T; struct s { int T; } v; T w; int g(void) { return v.T; }"),
    (True, "typedef int T; struct T { int a; }; struct T st; T n;"),
    (True, "typedef int T; enum E { A, B }; T e = A;"),
    (True, "typedef int T; int f(void) { enum { T = 2 }; return T * 3; }"),
    (False, "typedef int T; void f(void) { enum { T = 2 }; T x; }"),
    (True, "typedef int T; void f(void) { { enum { T = 2 }; } T x; (void)x; }"),
    (True, "typedef int T; int f(void) { struct s { enum { T } e; } v; (void)v; return T; }"),
    (True, "typedef int T; void f(void) { int a[2] = { 1, 2 }; T x = a[0]; (void)x; }"),
    # K&R definitions.
    (True, "int f(a, b) int a; char *b; { return a + *b; }"),
    # GNU extensions of preprocessed text.
    (True, "int f(int x) { return ({ int y = x; y * 2; }); }"),
    (True, "int f(int x) { switch (x) { case 1 ... 3: return 1; default: return x ?: 2; } }"),
    (True, "static void *__attribute__((used)) g(void) __asm__(\"g2\");"),
    (True, "int x __attribute__((aligned(8))) = 1; __typeof__(x) y; int a[2] = { [0 ... 1] = 3 };"),
    (True, "void f(void) { int r; __asm__ __volatile__ (\"\" : \"=r\"(r) : \"0\"(1) : \"memory\"); }"),
    (True, "struct s { __extension__ union { int a; float b; }; };"),
    (True, "#pragma GCC diagnostic push\nint x;\n#pragma GCC diagnostic pop\n"),
    (True, "void f(void) { void *p = &&l; goto *p; l: ; }"),
    (True, "int f(__builtin_va_list ap) { return __builtin_va_arg(ap, int); }"),
    (True, "struct s { int a[3]; }; unsigned long o = __builtin_offsetof(struct s, a[1]);"),
    (True, "_Static_assert(sizeof(int) == 4, \"int\"); _Alignas(8) char c; _Thread_local int t;"),
    (True, "int g(int x) { return _Generic(x, int: 1, default: 0); }"),
    # A lone carriage return ends a line for gcc: not inside a literal or a line comment.
    (False, "char *s = \"a\rb\";"),
    (True, "int x; // note\r"),
    (False, "int x; // note\rint y"),
    (False, "int f(void) { return 1 }"),
    (False, "int x = ;"),
]


def main():
    build = os.environ.get("GM_BUILDDIR", ".")
    src = os.environ.get("GM_SRCDIR", ".")
    gramask = os.path.join(build, "gramask")
    grammar = os.path.join(src, "grammars", "c.lark")
    try:
        subprocess.run(["gcc", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("SKIP: no gcc")
        return 77
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (want, text) in enumerate(SNIPPETS):
            path = os.path.join(tmp, "s%d.c" % i)
            with open(path, "w") as f:
                f.write(text + "\n")
            gcc = subprocess.run(["gcc", "-fsyntax-only", "-std=gnu11", "-w", path],
                                 capture_output=True, text=True).returncode == 0
            r = subprocess.run([gramask, "parse", grammar, path], capture_output=True, text=True)
            if r.returncode not in (0, 1):
                print("FAIL: gramask exit %d on %r: %s" % (r.returncode, text, r.stderr.strip()))
                fails += 1
                continue
            ours = r.returncode == 0
            if gcc != want:
                print("FAIL: gcc %s %r (the snippet says %s)"
                      % ("accepts" if gcc else "rejects", text, "accept" if want else "reject"))
                fails += 1
            if ours != gcc:
                print("FAIL: gramask %s %r, gcc %s it: %s"
                      % ("accepts" if ours else "rejects", text, "accepts" if gcc else "rejects",
                         r.stdout.strip()[:300]))
                fails += 1
        # Masks apply the layer (runtime/cdecl.h): decoding each snippet token by token
        # (sp32k) allows every true token and EOS at the end exactly when gcc accepts it
        # (a snippet gcc rejects must hit a masked token or a refused EOS somewhere).
        paths = [os.path.join(tmp, "s%d.c" % i) for i in range(len(SNIPPETS))]
        r = subprocess.run([gramask, "trace", grammar, "--tokenizer",
                            os.path.join(src, "tests", "data", "sp32k"), "--quiet", "--text"]
                           + paths, capture_output=True, text=True)
        passed = {}
        for line in r.stdout.splitlines():
            cols = line.split()
            if len(cols) >= 4 and cols[0] in paths:
                passed[cols[0]] = cols[2] == "all" and cols[3] == "yes"
        for i, (want, text) in enumerate(SNIPPETS):
            got = passed.get(paths[i])
            if got is None:
                print("FAIL: gramask trace c gave no verdict on %r: %s" % (text, r.stderr.strip()[:300]))
                fails += 1
            elif got != want:
                print("FAIL: masks %s %r, gcc %s it" % ("allow" if got else "refuse", text,
                                                         "accepts" if want else "rejects"))
                fails += 1
    print("%d snippets, %d failures" % (len(SNIPPETS), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
