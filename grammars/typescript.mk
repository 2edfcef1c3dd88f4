# The TypeScript grammar (grammars/typescript.lark): its snippets, checked
# against TypeScript's own parser when written (tests/typescript/README). Its
# corpus check is the typescript entry of corpus/check_corpus.py
# (`make check-corpus`).
TESTS += tests/typescript_snippets.sh
EXTRA_DIST += tests/typescript_snippets.sh tests/typescript
