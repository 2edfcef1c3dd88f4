"""Whole-string regexes as XGrammar takes them: edge anchors, and the regex as EBNF text.

A regex grammar matches the whole string (Python's ``re.fullmatch``), so ``^`` at the start
of a top-level alternative and ``$`` at its end assert nothing: ``^abc$``, ``^$|^https://``
mean ``abc``, ``|https://`` under ``re.fullmatch`` too. XGrammar accepts them there; gramask's
regex front end (the Lark terminal dialect, where a terminal matches a lexeme) refuses every
anchor, so :func:`strip_edge_anchors` drops those edge anchors first and leaves any other
anchor for the front end to report.
"""

from typing import List


def _top_level_alternatives(regex: str) -> List[str]:
    """The regex split at its top-level ``|`` (outside groups, classes and escapes)."""
    parts, start, depth, i, n = [], 0, 0, 0, len(regex)
    in_class = False
    while i < n:
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            # a ']' right after '[' or '[^' is a member, not the end
            if regex[i + 1:i + 2] == "^":
                i += 1
            if regex[i + 1:i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def _ends_with_anchor(alt: str) -> bool:
    """Whether alt ends with an unescaped '$' (an even number of backslashes before it)."""
    if not alt.endswith("$"):
        return False
    k = len(alt) - 1
    while k > 0 and alt[k - 1] == "\\":
        k -= 1
    return (len(alt) - 1 - k) % 2 == 0


def strip_edge_anchors(regex: str) -> str:
    """The regex without the ``^`` that starts and the ``$`` that ends a top-level
    alternative (no-ops for a whole-string match)."""
    if "^" not in regex and "$" not in regex:
        return regex
    alts = []
    for alt in _top_level_alternatives(regex):
        if alt.startswith("^"):
            alt = alt[1:]
        if _ends_with_anchor(alt):
            alt = alt[:-1]
        alts.append(alt)
    return "|".join(alts)


def ebnf_string_literal(text: str) -> str:
    """text as a double-quoted string literal of XGrammar's EBNF."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
