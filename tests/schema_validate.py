"""Judge for tests/test_schema_masks: generated instances against their schemas.

Reads FILE: lines "S <schema JSON>" (case 0, 1, ...), then "<case> <hex text>".
Each text must be one JSON value (json.loads) valid for its schema under
python-jsonschema (the validator its $schema names, 2020-12 otherwise; the
format checker on). Prints one line per failure and "OK <count>" at the end.
"""
import json
import sys

import jsonschema
from jsonschema import validators

schemas, validators_by_case = [], []
ok = 0
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("S "):
        schema = json.loads(line[2:])
        cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validators_by_case.append(cls(schema, format_checker=cls.FORMAT_CHECKER))
        continue
    case, hx = line.split(" ", 1)
    text = bytes.fromhex(hx).decode("utf-8")
    try:
        value = json.loads(text)
    except ValueError as e:
        print(f"case {case}: not JSON ({e}): {text!r}")
        continue
    errors = list(validators_by_case[int(case)].iter_errors(value))
    if errors:
        print(f"case {case}: invalid ({errors[0].message}): {text!r}")
        continue
    ok += 1
print(f"OK {ok}")
