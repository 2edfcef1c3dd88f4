"""Pieces both generated-turn checkers use to parse a turn back (independently of
gramask): dispatch_generate_check.py (the four presets) and family_generate_check.py
(the model families). A turn is bytes; a parse error raises Bad."""
import json


class Bad(Exception):
    pass


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Bad("duplicate member in %r" % keys)
    return dict(pairs)


DECODER = json.JSONDecoder(object_pairs_hook=no_duplicates)


def utf8(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Bad("not UTF-8 (%s): %r" % (e.reason, b[:80]))


def json_at(b, i):
    """The JSON value at b[i] (no whitespace before it) and the index past it (strict UTF-8)."""
    s = b[i:].decode("utf-8", "surrogateescape")
    try:
        v, k = DECODER.raw_decode(s)
    except ValueError as e:
        raise Bad("arguments are not JSON: %s: %r" % (e, b[i:i + 80]))
    used = s[:k].encode("utf-8", "surrogateescape")
    utf8(used)
    return v, i + len(used)


def expect(b, i, lit):
    lit = lit.encode() if isinstance(lit, str) else lit
    if not b.startswith(lit, i):
        raise Bad("expected %r at %d, found %r" % (lit, i, b[i:i + 40]))
    return i + len(lit)
