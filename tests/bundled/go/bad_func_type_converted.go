package p

func f() {
	x := func()(nil)
}
