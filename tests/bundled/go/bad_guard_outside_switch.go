package p

func f() {
	x := y.(type)
}
