package p

// parsed as an array type (P * C), as the specification says
type T[P *C] struct{}
