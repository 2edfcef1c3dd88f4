package main

import (
	"fmt"
	"os"
)

type Pair[K comparable, V any] struct {
	Key K
	Val V
}

type A [N]int

type T struct {
	a, b int
	*Embedded
	pkg.Other `json:"x"`
	G[int]
	arr [4]byte
}

func (p *Pair[K, V]) Get() (k K, v V) { return p.Key, p.Val }

func Map[T, U any](s []T, f func(T) U) []U {
	r := make([]U, 0, len(s))
	for _, x := range s {
		r = append(r, f(x))
	}
	return r
}

func main() {
	x := []int{1, 2, 3}
	if len(x) > 2 {
		fmt.Println(x[1:])
	} else if y := (T{}); y.a == 0 {
	}
	switch v := interface{}(x).(type) {
	case []int, nil:
		_ = v
	default:
	}
	for i := 0; i < 10; i++ {
		continue
	}
	var m = map[string][]int{"a": {1}}
	select {
	case v, ok := <-ch:
		_, _ = v, ok
	case ch <- 1:
	}
	go func() { defer wg.Done() }()
	L:
	for range m {
		break L
	}
	p := &Pair[string, int]{Key: "a"}
	_ = Map[int, string](x, func(i int) string { return fmt.Sprint(i) })
	os.Exit(0)
	/* multi
	line */
	a, b.c = 1, 2
	*p = 3
	f := func() {}; f()
	ch := make(chan<- chan int, 3)
	_ = []byte("x")
	_ = (*T)(nil)
	var _ = 0x1p-2 + 1e9 + .5 + 0o17 + 'a' + '\n' + 3i
}
