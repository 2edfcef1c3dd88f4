package p

func f() {
	a b
}
