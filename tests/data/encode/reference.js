// node reference.js TOKENIZER_DIR texts.json > ids.T.json
// The reference ids of tests/test_encode.c: Hugging Face tokenizers (the Rust crate, through
// the npm package @anush008/tokenizers), add_special_tokens false, special tokens parsed.
const {Tokenizer} = require('@anush008/tokenizers');
const fs = require('fs');
(async () => {
  const [dir, textsPath] = process.argv.slice(2);
  const t = Tokenizer.fromFile(dir + '/tokenizer.json');
  const texts = JSON.parse(fs.readFileSync(textsPath, 'utf8'));
  const out = [];
  for (const e of texts) {
    const enc = await t.encode(e.text, null, {addSpecialTokens: false});
    out.push('{"file": ' + JSON.stringify(e.name) + ', "ids": [' + Array.from(enc.getIds()).join(', ') + ']}');
  }
  process.stdout.write('[' + out.join(', ') + ']');
})();
