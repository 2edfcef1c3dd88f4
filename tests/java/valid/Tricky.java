// Java 17 constructs the grammar must accept (checked with javac 17:
// `javac -d OUT tests/java/valid/*.java`). One construct per line where
// possible, so that a parse error points at what is missing.
package p;

import java.util.*;
import java.util.function.*;
import static java.lang.Math.max;
import static java.util.Collections.*;
import java.io.Serializable;
import java.lang.annotation.*;

@SuppressWarnings({"unchecked", "rawtypes",})
public sealed class Tricky<T extends Comparable<? super T>, U> permits Tricky.Sub, Tricky.Other {
    static final class Sub extends Tricky<String, Integer> {}
    static non-sealed class Other extends Tricky<String, Integer> {}

    @Target({ElementType.TYPE_USE, ElementType.METHOD, ElementType.FIELD, ElementType.PARAMETER, ElementType.LOCAL_VARIABLE})
    @interface A { int value() default 0; String[] names() default {}; }
    public @interface B {}
    @Retention(RetentionPolicy.RUNTIME) @interface C { A a() default @A(value = 2, names = {"x", "y"}); int[] v() default {1, 2,}; }

    private Map<String, List<Map<Integer, Set<String>>>> deep = new HashMap<>();
    private Map<String, List<Set<T>>> deep2;
    private Map<String, List<Set<List<T>>>> deep3;
    private Map<List<Map<String, List<Set<T>>>>, String> deep4;
    private List<List<String> > spaced;
    private List<List<List<String>> > spaced2;
    private List<List<String>> ll = new ArrayList<List<String>>();
    private List<? extends Number>[] arr;
    private Map<?, ?> wild;
    private List<? super List<? extends T>> wild2;
    private int[][] grid = {{1, 2}, {3, 4},};
    private int[] empty = {}, comma = {,};
    private int x = 0x7fff_ffff, y = 0b1010_1010, z = 0777, w = 1_000_000, zz = 0_7, z0 = 0, z00 = 00;
    private long l = 0xFFFFFFFFL + 123L + 0_7L + 0B1l;
    private double d = 1.5e-3 + .5 + 1. + 1e10 + 0x1.8p3 + 0x1p-2f + 1D + 2f + 09.5 + 0.0 + 1_0.0_1e1_0 + 0x.8p1 + 0xA.p0d + 1e+5F;
    private char c1 = 'a', c2 = '\n', c3 = '\'', c4 = '\u0041', c5 = '\377', c6 = '\0', c7 = '\s', c8 = '"', c9 = '\\', c10 = '\uuu0041';
    private String s = "a\"b\\c\t\u00e9\0\12\123'";
    private String tb = """
        Hello "world" ""quoted"" \
        continued \""" end \"
        """;
    private String tb2 = """
        x""";
    private String tb3 = """   
        "a" ""b"" \t\s
        """ + "";
    volatile transient int vt;
    @A(1) @B String annotated;
    String @A [] typeAnnotArr;
    List<@A String> tal;
    Map<@A String, @A ? extends @A Object> tal2;

    <V> Tricky(V v) { super(); }
    public Tricky() { this(null); }

    public static <K extends Comparable<K>, V> Map<K, List<V>> generic(Map<? super K, ? extends V> m) { return null; }
    static <K extends Comparable<? super K> & Serializable> void bounds(K k) {}
    static <K extends Map<String, List<K>>> void bounds2(K k) {}
    static <K extends Object & Comparable<K>> void bounds3() {}

    @Override
    public final synchronized strictfp String toString() throws RuntimeException, Error { return ""; }
    int arrayReturn()[] { return null; }

    native void nat();
    abstract static class Abs { abstract void f(int... xs); abstract void g(List<String>... xs); }

    void statements(int a, final String b, String... rest) throws Exception {
        int i = 0, j[] = {1}, k;
        var v = new ArrayList<String>();
        final var fv = 1;
        List<String>[] la = null;
        Map.Entry<String, Integer> e = null;
        java.util.Map.Entry<String, List<String>> e2 = null;
        Tricky<String, Integer>.Inner inner = null;
        label:
        for (int q = 0, r = 10; q < r; q++, r--) {
            if (q > 3) continue label; else if (q < 0) break label; else break;
        }
        outer: while (true) { inner: do { break outer; } while (false); }
        for (String str : rest) { }
        for (final var str : rest) { }
        for (Map.Entry<String, List<String>> en : new HashMap<String, List<String>>().entrySet()) { }
        for (;;) { break; }
        for (i = 0, a = 1; ; i++) { break; }
        while (i < 10) i++;
        do { i--; } while (i > 0);
        if (a > 0) if (a > 1) i = 1; else i = 2;
        switch (a) {
            case 1:
            case 2: i = 3; break;
            case 3, 4: { i = 4; }
            default:
        }
        switch (a) { }
        switch (a) { case 1: }
        switch (b) {
            case "x" -> i = 1;
            case "y", "z" -> { i = 2; }
            default -> throw new IllegalStateException();
        }
        int sw = switch (a) {
            case 1 -> 10;
            case 2 -> { int t = 3; yield t * 2; }
            case 3 -> (4);
            case -1 -> -4;
            default -> { yield -1; }
        };
        int sw2 = switch (a) { case 1: yield 3; default: { yield 4; } };
        int sw3 = switch (Color.RED) { case RED -> 1; case GREEN, BLUE -> 2; };
        try (var in = new java.io.StringReader("x"); java.io.Reader r2 = in;) {
        } catch (IllegalArgumentException | IllegalStateException ex) {
        } catch (final Exception ex) {
        } finally { }
        java.io.Reader rr = null;
        try (rr) { }
        try { } finally { }
        try { } catch (RuntimeException ex) { }
        synchronized (this) { i++; }
        assert i > 0 : "msg";
        assert i >= 0;
        Object o = (Object) b;
        String cs = (String) o;
        int ci = (int) 3.5 + (int) -2 + (int) +3 + (int) ~3 + (int) ++i + (int) 'c';
        long cl = (long) (i);
        List<String> cg = (List<String>) o;
        Map<String, List<String>> cg2 = (Map<String, List<String>>) o;
        Object[] ca = (Object[]) o;
        int[] cia = (int[]) o;
        boolean nb = (Boolean) !false;
        Comparator<String> cmp = (Comparator<String> & Serializable) (s1, s2) -> s1.compareTo(s2);
        Runnable run = (Runnable) () -> {};
        Runnable run2 = (Runnable & Serializable & Cloneable) () -> {};
        Runnable run3 = (Runnable & Serializable) run;
        Object run4 = (java.lang.Runnable & java.io.Serializable) null;
        int and1 = (a & i), and2 = a & i & a, and3 = (a & i & a), and4 = a & i | a, and5 = (a & i) == 0 ? 1 : 0;
        boolean and6 = (a & i) != 0, and7 = a == 0 & i == 0 & true, and8 = (a == i & i == a), and9 = (a & i & (i == 1 ? 1 : 0)) > 0;
        and1 &= (a & -i) & ~a;
        Function<String, Integer> fn = (Function<String, Integer>) String::length;
        Function<String, String> fn2 = (Function<String, String>) x1 -> x1;
        boolean lt = i < j[0], gt = i > 2, cmp2 = (i < k(1)), cmp3 = (i) < 3, cmp4 = (i < 3), cmp5 = (i < -3);
        boolean cmp6 = (i < j.length), cmp7 = (a < i == true), cmp8 = (a < i ? true : false), cmp9 = (i >> 1 > a), cmp10 = (a < i >> 1);
        boolean cmp11 = (a < (int) 3.0), cmp12 = (a < i && i > a), cmp13 = (a < i) & (i > a);
        boolean inst = o instanceof String;
        if (o instanceof String str && !str.isEmpty()) { }
        if (o instanceof final String str2) { }
        if (o instanceof List<?> lst) { }
        if (!(o instanceof Map<?, ?> mp)) { }
        boolean paren = (a < i) == (a > i);
        int sh = a >> 2 >>> 3 << 1;
        sh >>= 1; sh >>>= 2; sh <<= 3; sh &= 1; sh |= 2; sh ^= 3; sh %= 5; sh /= 1; sh *= 2; sh -= 1; sh += 1;
        int tern = a > 0 ? 1 : a < 0 ? -1 : 0;
        Function<Integer, Integer> tl = a > 0 ? x1 -> x1 : x1 -> -x1;
        Supplier<Runnable> sr = () -> () -> {};
        BiFunction<Integer, Integer, Integer> add = (x1, x2) -> x1 + x2;
        BiFunction<Integer, Integer, Integer> add2 = (Integer x1, Integer x2) -> { return x1 + x2; };
        BiFunction<Integer, Integer, Integer> add3 = (var x1, var x2) -> x1 * x2;
        BiFunction<Integer, Integer, Integer> add4 = (final var x1, @A var x2) -> x1 * x2;
        BiFunction<List<String>, Map<String, List<String>>, Integer> add5 = (List<String> x1, Map<String, List<String>> x2) -> 0;
        Function<Integer, Integer> inc = x1 -> x1 + 1;
        Function<Integer, Integer> inc2 = (x1) -> x1 + 1;
        Function<int[], Integer> len = (int[] arr2) -> arr2.length;
        Function<String[], Integer> len3 = (String... arr2) -> arr2.length;
        Function<String[], Integer> len4 = (java.lang.String[] arr2) -> arr2.length;
        IntFunction<String[]> mk = String[]::new;
        IntFunction<int[]> mk2 = int[]::new;
        Supplier<List<String>> sup = ArrayList::new;
        Function<String, Integer> ml = String::length;
        Supplier<String> ts = this::toString;
        Supplier<String> ss = super::toString;
        Function<List<String>, Integer> sz = List::size;
        Function<List<String>, Integer> sz2 = java.util.List::size;
        Function<Object, String> gm = String::<Object>valueOf;
        Function<List<String>, Integer> gsz = List<String>::size;
        BiFunction<Collection<String>, String, Boolean> gadd = Collection<String>::add;
        IntFunction<Class<?>[]> gca = Class<?>[]::new;
        Supplier<ArrayList<String>> gnew = ArrayList<String>::new;
        foo2(List<String>::size, a < i, i > a);
        Supplier<Function<List<String>, Integer>> gr = () -> List<String>::size;
        Function<List<String>, Integer> gc = (Function<List<String>, Integer>) (List<String>::size);
        Function<List<List<String>>, Integer> gn = List<List<String>>::size;
        Function<java.util.List<String>, Integer> gq = java.util.List<String>::size;
        Function<List<String>, Integer> gt2 = a > 0 ? List<String>::size : List::size;
        Object emptyList = Collections.<String>emptyList();
        Object el2 = this.<String>id("a");
        Object el3 = Collections.<Map<String, List<String>>>emptyList();
        Object el4 = Tricky.<String>sid("a").length();
        Tricky.this.vt = 3;
        this.vt++;
        ++this.vt;
        (this).vt--;
        new Object() { int f; }.hashCode();
        Tricky<String, Integer> outer = null;
        Tricky<String, Integer>.Inner in2 = outer.new Inner();
        Tricky<T, U>.Inner in3 = this.new Inner();
        Object anon = new Comparable<String>() { public int compareTo(String o2) { return 0; } };
        int[] na = new int[10], nb2 = new int[]{1, 2}, nc = {};
        int[][] nd = new int[3][], ne = new int[2][3];
        String[][] sa = new String[][] {{"a"}, {}};
        Class<?> k1 = int.class, k2 = String[].class, k3 = void.class, k4 = int[][].class, k5 = java.lang.String.class;
        int len2 = new int[]{1, 2}.length;
        Object[] oa = new List<?>[3];
        Object[] ob = new java.util.List<?>[3][];
        record R(int a, String... b) implements Serializable {
            R { if (a < 0) throw new IllegalArgumentException(); }
            R(int a) { this(a, "x"); }
            static int count;
        }
        record Empty() {}
        enum E { X, Y }
        interface I { default void m() {} }
        final class Local {}
        abstract class Local2 {}
        @A class Local3 {}
        int record = 3, sealed = 4, permits = 5, yield2 = 6;
        record = sealed + permits;
        foo(record, sealed);
        int[] rr2 = {record};
        String module = "m", open = "o", to = "t", with = "w", transitive = "", exports = "", opens = "", uses = "", provides = "", requires = "";
        module.length();
        with = to + open;
        Thread.yield();
        int non = 1;
        non = non - 1;
        non++;
        foo(non, -non);
        int[] arrx = new int[5];
        arrx[0] = arrx[1] = 2;
        i = arrx[i]++;
        char ch = (char) ('a' + 1);
        String cc = "a" + (char) i;
        Object oo = (Object) (Runnable) null;
        long big = -9223372036854775808L;
        int min = -2147483648;
        float ff = 3.4028235e38f;
        i = i+++i;
        i = i - -i;
        i = i-->0 ? 1 : 0;
        boolean bb = !(o == null) && i != 3 || i <= 4 ^ i >= 5;
        i = ~i & i | i;
        Object cast2 = (Tricky<?, ?>.Inner) null;
        Object cast3 = (java.util.List<String>[]) null;
        Object cast4 = (Map.Entry<String, Integer>) null;
        Object cast5 = (List<List<String>>) null;
        Object cast6 = (List<List<List<String>>>) null;
        Object cast7 = (List<List<List<List<String>>>>) null;
        Object cast8 = (Map<String, ? extends List<String>>) null;
        Object cast9 = (java.lang.Object) null;
        var hex = 0x1.fffffffffffffP+1023;
        java.lang.@A String qa = null;
        List<int[]> lia = null;
        Object gen = new HashMap<String, List<String>>() {};
        Object gct = new <String>Tricky<String, Integer>("x", 1);
        Object gct2 = new <String, Integer>HashMap<String, Integer>();
        int lab = 0;
        lab: { break lab; }
        ;
        Runnable r3 = () -> { return; };
        Object ter = a > 0 ? (Object) "x" : null;
        i = (a) + 1;
        i = (a) - 1;
        boolean b2 = (a) < i;
        i = (i) * (a);
    }
    <X> X id(X x) { return x; }
    void receiver(@A Tricky<T, U> this, int a) {}
    class Inner2 { Inner2(Tricky<T, U> Tricky.this) {} }
    <X> Tricky(X x, int y) { this(); }
    static <X> X sid(X x) { return x; }
    static void foo(int a, int b) {}
    static void foo2(Function<List<String>, Integer> f, boolean b, boolean c) {}
    int k(int q) { return q; }
    class Inner {}
    enum Color implements Runnable {
        @Deprecated RED(1) { public void run() {} },
        GREEN(2),
        BLUE;
        Color(int v) {}
        Color() {}
        public void run() {}
    }
    enum Empty2 { ; static int x; }
    enum Trail { A, B, }
    enum Trail2 { A, B, ; }
    enum NoConst { }
    interface J<T> extends Comparable<T>, Serializable {
        int CONST = 1;
        void m();
        default int n() { return 1; }
        static int s() { return 2; }
        private int p() { return 3; }
    }
    sealed interface Shape permits Circle, Square {}
    record Circle(double r) implements Shape {}
    record Square(@A double side) implements Shape {}
    record Gen<T extends Comparable<T>>(T t, List<? extends T> ts) {}
    static { int q = 1; }
    { int q = 2; }
    ;
}
