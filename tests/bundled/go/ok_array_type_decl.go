package p

type T [P * C]struct{}
type U[P interface{ *C }] struct{}
