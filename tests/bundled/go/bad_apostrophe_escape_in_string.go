package p

func f() {
	x := "\'"
}
