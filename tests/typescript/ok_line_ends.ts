interface Overloads {
  (x: string): string
  <T>(x: T): T
  [k: string]: unknown
  [Symbol.iterator](): Iterator<number>
  a: Array<number>
  [Sym.tag]?: unknown
}
let a = b
!c
let d = e
[0]
let g = h
< i
let i2 = 1
++j
function ret() {
  return
  42
}
type X = {
  a: string
  b: number
}
