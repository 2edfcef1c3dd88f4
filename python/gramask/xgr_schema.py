"""XGrammar's ``strict_mode`` for JSON Schemas, as a schema rewrite: no properties or items
beyond those a schema names. XGrammar defines the mode as ``unevaluatedProperties: false``
and ``unevaluatedItems: false``; gramask's compiler does not take those, so an object schema
that evaluates its properties locally (no ``allOf``/``anyOf``/``oneOf``/``$ref``/``if``/
``dependentSchemas``, ``const``, ``enum`` beside them, where the two differ) and names
properties (``properties``, ``patternProperties``; ``{"type": "object"}`` stays open, as in
XGrammar) gets ``additionalProperties: false``, and a tuple schema ``items: false`` (``additionalItems: false`` before 2020-12).
Schemas with composition stay open: a superset of XGrammar's language, never a subset.
The C compiler then sees a standard schema."""

import json
from typing import Any

# Keywords whose value is a schema, a list of schemas, or a map of name -> schema.
_ONE = ("additionalProperties", "unevaluatedProperties", "items", "additionalItems",
        "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

_COMPOSED = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas",
             "dependencies")


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for k in _ONE:
        if k in out:
            v = out[k]
            out[k] = [_strict(x) for x in v] if isinstance(v, list) else _strict(v)
    for k in _LIST:
        if isinstance(out.get(k), list):
            out[k] = [_strict(x) for x in out[k]]
    for k in _MAP:
        if isinstance(out.get(k), dict):
            out[k] = {n: _strict(x) for n, x in out[k].items()}
    if any(k in out for k in _COMPOSED) or "const" in out or "enum" in out:
        return out  # composition: see above; const/enum list their instances themselves
    if (("properties" in out or "patternProperties" in out)
            and "additionalProperties" not in out and "unevaluatedProperties" not in out):
        # as XGrammar: an object schema naming no properties ({"type": "object"}) stays open
        out["additionalProperties"] = False
    if "unevaluatedItems" not in out and "additionalItems" not in out:
        if "prefixItems" in out and "items" not in out:
            out["items"] = False
        elif isinstance(out.get("items"), list):
            out["additionalItems"] = False
    return out


def strict_schema_text(text: str) -> str:
    """The schema text with XGrammar's strict mode applied; text that is not JSON is
    returned as it is (the C compiler reports where it is malformed)."""
    try:
        schema = json.loads(text)
    except ValueError:
        return text
    return json.dumps(_strict(schema))
