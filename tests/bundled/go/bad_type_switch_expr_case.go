package p

func f() {
	switch x := y.(type) {
	case 1:
	}
}
