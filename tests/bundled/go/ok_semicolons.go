package p

func f() {
	x := []int{
		1,
		2,
	}
	if x != nil { return }; for { break }
	;;
L:
}
