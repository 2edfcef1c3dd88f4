// The oracle of tests/ts_generate.sh: TypeScript's own parser
// (ts.createSourceFile as a .ts file, parse diagnostics only, as
// corpus/ts_oracle.js), with what the check needs to sort a rejection.
// usage: node ts_generate_oracle.js TYPESCRIPT_PACKAGE_DIR FILE...
// prints one line a file: "OK FILE", or "ERR FILE KIND: message" where KIND
// says what stands at the first diagnostic: "reserved" (a reserved word,
// which the contextual lexer may have taken as a name), "char" (a non-ASCII
// character or a backslash: an identifier character or escape), "arrow" (a
// `=>` after a parenthesized expression or call arguments, which the
// grammar's arrow-parameter cover took as parameters), "other".
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require(path.resolve(process.argv[2]));
// Whether the `=>` at pos follows, after blanks only, a parenthesized
// expression or a call's arguments: the arrow-parameter covers of the
// grammar (its header: the covers let some non-parameters through), where
// tsc read no arrow function.
function arrowCover(sf, pos) {
  let end = pos;
  while (end > 0 && /\s/.test(sf.text[end - 1]))
    end--;
  let found = false;
  const visit = (node) => {
    if (node.pos > end || node.end < end)
      return;
    if (node.end === end && (node.kind === ts.SyntaxKind.ParenthesizedExpression ||
                             node.kind === ts.SyntaxKind.CallExpression))
      found = true;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

for (const file of process.argv.slice(3)) {
  const text = fs.readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const diags = sf.parseDiagnostics;
  if (diags.length === 0) {
    console.log("OK " + file);
    continue;
  }
  const d = diags[0];
  const c = text.charCodeAt(d.start);
  let kind = "other";
  if (c === 0x5c || c > 0x7f) {
    kind = "char";
  } else {
    const sc = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
    sc.resetTokenState(d.start);
    const tok = sc.scan();
    if (tok >= ts.SyntaxKind.FirstReservedWord && tok <= ts.SyntaxKind.LastReservedWord &&
        sc.getTokenStart() === d.start)
      kind = "reserved";
    else if (tok === ts.SyntaxKind.EqualsGreaterThanToken && sc.getTokenStart() === d.start &&
             arrowCover(sf, d.start))
      kind = "arrow";
  }
  const msg = ts.flattenDiagnosticMessageText(d.messageText, " ");
  console.log("ERR " + file + " " + kind + ": " + msg);
}
