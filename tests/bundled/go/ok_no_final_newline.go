package p
func f() { return }