// The TypeScript corpus oracle (corpus/check_corpus.py, language typescript):
// TypeScript's own parser, ts.createSourceFile as a .ts file, and its parse
// diagnostics only (no binding, no type checking).
// usage: node ts_oracle.js TYPESCRIPT_PACKAGE_DIR FILE...
// prints one line a file: "OK FILE" or "ERR FILE: first parse diagnostic".
"use strict";
const fs = require("fs");
const ts = require(process.argv[2]);
for (const file of process.argv.slice(3)) {
  const text = fs.readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const diags = sf.parseDiagnostics;
  if (diags.length === 0)
    console.log("OK " + file);
  else
    console.log("ERR " + file + ": " + ts.flattenDiagnosticMessageText(diags[0].messageText, " "));
}
