package p

func f() {
	for i := 0; i < 3; j := 1 {
	}
}
