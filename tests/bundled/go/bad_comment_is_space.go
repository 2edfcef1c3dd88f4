package p

func f() {
	x := 1 /* one line */ y := 2
}
