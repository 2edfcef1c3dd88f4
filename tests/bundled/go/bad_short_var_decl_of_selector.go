package p

func f() {
	a.b := 1
}
