package p

func f() {
	if x == T{} {
	}
}
