// The hard parts of grammars/javascript.lark together (written here; node --check accepts it).
'use strict';
const a = 10, b = 2, g = 3;
let q = a / b / g;             // division
let r = /ab+c\/[/]/gi.test("abbc/");  // a regular expression literal
let s = (a) / 2 + [1][0] / 1;
const t = `sum ${a + `${b}`} and ${ {x: 1}.x } done`;
let u = a
++q                            // ASI: `a; ++q`
function f() {
  return
  42                           // ASI after return: `return; 42;`
}
const arrow = (x, y) => x * y;
const obj = { get v() { return 1; }, set v(z) {}, async *gen() { yield 1; }, [`k${a}`]: 2 };
class K extends Object {
  #p = 1;
  static { this.y = 2; }
  get p() { return this.#p ?? 0; }
}
function* gen() {
  const x = yield
  a;
  yield* [1, 2];
}
async function h() {
  await null;
  for await (const x of []) { void x; }
  label: for (let i = 0; i < 2; i++) { if (i) break label; else continue label; }
}
const async = 1;
let w = async
function later() {}
let ü = 1, 变量 = 2, $_ = ü + 变量;
x: { }
export default f;
