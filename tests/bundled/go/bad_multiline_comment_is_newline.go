package p

var x, y = 1 /* a
comment */, 2
