package p

var x = 1 /* a
comment */ var y = 2
