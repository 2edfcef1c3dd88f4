package p

func f() {
	x := []int{
		1,
		2
	}
}
