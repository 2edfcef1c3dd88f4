package p

func f() (int, int) {
	return
	1, 2
}
