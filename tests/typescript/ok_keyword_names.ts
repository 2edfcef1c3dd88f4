// return, break, continue and throw as property names before a line end: the
// line end is not their "no line terminator here" (only the statements' is),
// so no semicolon is inserted after them (node --check accepts this file).
x = a.return
  .c
let o: object = { return
  : 1, throw
  : 2 }
a.break
  .c
class K2 { continue
  () {} }
function f() {
  return
  1                      // the statement's: `return; 1;`
}
