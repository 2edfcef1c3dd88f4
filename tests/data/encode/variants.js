// node variants.js SHARED_DIR variants.json texts.json OUTDIR
// Reference ids for tests/test_encode.c's variant tokenizers: each is a shared tokenizer.json
// with some top-level members replaced (variants.json), encoded by Hugging Face tokenizers
// (the Rust crate through @anush008/tokenizers). Writes OUTDIR/ids.NAME.json.
const {Tokenizer} = require('@anush008/tokenizers');
const fs = require('fs'), os = require('os'), path = require('path');
(async () => {
  const [shared, variantsPath, textsPath, outdir] = process.argv.slice(2);
  const variants = JSON.parse(fs.readFileSync(variantsPath, 'utf8'));
  const texts = JSON.parse(fs.readFileSync(textsPath, 'utf8'));
  for (const v of variants) {
    const tok = JSON.parse(fs.readFileSync(shared + '/tokenizers/' + v.tokenizer + '/tokenizer.json', 'utf8'));
    Object.assign(tok, v.members);
    const tmp = path.join(os.tmpdir(), 'gm_variant_' + v.name + '.json');
    fs.writeFileSync(tmp, JSON.stringify(tok));
    const t = Tokenizer.fromFile(tmp);
    const out = [];
    for (const e of texts) {
      const enc = await t.encode(e.text, null, {addSpecialTokens: false});
      out.push('{"file": ' + JSON.stringify(e.name) + ', "ids": [' + Array.from(enc.getIds()).join(', ') + ']}');
    }
    fs.writeFileSync(path.join(outdir, 'ids.' + v.name + '.json'), '[' + out.join(', ') + ']');
    fs.unlinkSync(tmp);
  }
})();
