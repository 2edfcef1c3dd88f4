"""xgrammar.testing's printed-form helpers (gramask.testing): a schema is compiled before
the helper says it has no printed form, so schema errors are reported as such."""

import pytest

import gramask as gm
from gramask.testing import _json_schema_to_ebnf


@pytest.mark.parametrize("schema, where", [
    ({"type": "integer", "multipleOf": 0}, "/multipleOf"),
    ({"type": "array", "maxItems": -1}, "/maxItems"),
    ('{"type": "array", "prefixItems": {"type": "string"}}', "/prefixItems"),
])
def test_schema_errors_come_first(schema, where):
    with pytest.raises(gm.GrammarError, match=where):
        _json_schema_to_ebnf(schema, any_whitespace=False)


def test_valid_schema_has_no_printed_form():
    with pytest.raises(gm.UnsupportedError, match="printed form"):
        _json_schema_to_ebnf({"type": "string", "format": "email"}, any_order=True, json_format="json")
