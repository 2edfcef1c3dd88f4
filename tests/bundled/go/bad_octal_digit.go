package p

const c = 09
