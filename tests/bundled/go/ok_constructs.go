package p

type (
	A = B
	C[T any] struct{}
	D [N]int
	F[T interface{ ~int }, U any] []T
	G[P any,] int
	H[P C[P]] struct{}
	I[P ~int | ~string] int
)

var _ = map[string]struct{}{"a": {}}
var _ = [...]int{1, 2}
var _ = func() {}
var _ interface{ ~int | ~string }
var _ = x.(interface{ M() })
var _ chan<- <-chan int
var _ <-chan <-chan int
var f = (func())(nil)
var g = (<-chan int)(nil)
var h = make(<-chan int)
var i = new(*[]int)
const c = len([10]int{})

type E struct{ _ [0]func() }

func (E) m()                   {}
func (e *E) n(a, b int, c ...string) (x, y int) { return }
func f[T interface{ ~[]E }, E any](x T) {}

var _ = []func(){}
var _ = []int{}[0:1:2]
var _ = a[:]
var _ = m[K]{}
var _ = pkg.T[int]{}
var _ = f[int, string](1)
var _ = 0x_1F + 0b1010 + 0o7_7 + 1_000.5e-3i + 'x' + '\x41' + '\u00e9' + "\a\b" + `raw
string`

func g() {
	x := 1
	x++
	x += 2
	*p, q.r = 1, 2
	a, b := f()
	ch <- 1
	v, ok := <-ch
	switch {
	case x > 1:
		fallthrough
	default:
	}
	switch x := 5; x {
	}
	switch y := v.(type) {
	}
	if f := func() bool { return true }; f() {
	}
	for i, j := 0, 1; i < j; i, j = i+1, j-1 {
	}
	for k := range m {
	}
	for range ch {
	}
	for x.a = range m {
	}
	goto L
L:
	;
	{
	}
	select {}
	defer func() { recover() }()
	var z struct {
		a int `tag`
		*pkg.T
	}
	type local int
	const k = 1
	if x := (T{}); x.a {
	}
	for _, x := range []T{{1}, {2}} {
	}
	if m[T{1}] {
	}
	if f(T{}) {
	}
	func() {}()
	return
}
