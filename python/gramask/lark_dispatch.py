"""XGrammar's dynamic dispatch in its Lark dialect, written as EBNF's TagDispatch.

`start: (foo | bar)* tail` where each of foo, bar begins with a [lazy] head that is free
text up to a trigger (`foo_head[lazy]: TEXT "<foo>"` or `/(\\n|.)*<foo>/`) and tail is
free text: the output is free text in which each trigger dispatches to the rest of its
rule, and free text resumes after it; no trigger occurs in the free text otherwise. That is
TagDispatch(("<foo>", foo_rest), ("<bar>", bar_rest)) (ir/ebnf_parse.c note [token
macros]; rules sharing a trigger become one alternative). A grammar that is only
`start: head` with such a head is its non-looping form: free text without the trigger, or
up to and including its first occurrence.
"""

import re
from typing import Any, Dict, List, Optional, Tuple

from . import lark_sufstop

_ANY_TEXT = {"(\\n|.)*", "(.|\\n)*", "[\\s\\S]*", "[\\S\\s]*"}


def _any_text(p: Any, e: Any) -> bool:
    """Whether e (a name of a terminal, or a regex) reads any text."""
    seen = set()
    while e[0] == "name" and e[1] in p.defs and p.defs[e[1]].terminal and e[1] not in seen:
        seen.add(e[1])
        e = p.defs[e[1]].body
    if e[0] != "regex":
        return False
    return e[1] in _ANY_TEXT or (e[1] == ".*" and "s" in e[2])


def _regex_literal(text: str) -> Optional[str]:
    """The string a regex without metacharacters matches (escapes undone), or None."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n in "nrt":
                out.append({"n": "\n", "r": "\r", "t": "\t"}[n])
            elif not n.isalnum():
                out.append(n)
            else:
                return None
            i += 2
            continue
        if c in ".^$*+?{}[]()|\\":
            return None
        out.append(c)
        i += 1
    return "".join(out)


def _token_trigger(p: Any, items: List[Any], what: str) -> Optional[Any]:
    """A special-token trigger: items are free text, then a special token (`TEXT <|t|>`);
    that token item, or None. A negated one (`<[^1]>`) is XGrammar's error."""
    if len(items) < 2 or items[1][0] not in ("named_token", "tokens") \
            or not _any_text(p, items[0]):
        return None
    if items[1][0] == "tokens" and (items[1][1] or items[1][2] is None):
        from .lark_xgr import LarkDialectError
        raise LarkDialectError(items[1][-1], f"{what} special-token trigger cannot be negated")
    return items[1]


def head_trigger(p: Any, d: Any) -> Optional[Any]:
    """The trigger of a [lazy] head (free text, then a string or a special token), or
    None."""
    b = d.body
    if b[0] == "seq" and len(b[1]) == 2:
        t = _token_trigger(p, b[1], "lazy")
        if t is not None:
            return t
    if b[0] == "seq" and len(b[1]) == 2 and b[1][1][0] == "lit" and not b[1][1][2] \
            and _any_text(p, b[1][0]) and b[1][1][1]:
        return b[1][1][1]
    if b[0] == "regex" and "i" not in b[2]:
        for h in sorted(_ANY_TEXT | ({".*"} if "s" in b[2] else set()), key=len, reverse=True):
            if b[1].startswith(h):
                lit = _regex_literal(b[1][len(h):])
                return lit or None
    return None


def _tail_is_text(p: Any, e: Any) -> bool:
    if e[0] == "name" and e[1] in p.defs and not p.defs[e[1]].terminal:
        e = p.defs[e[1]].body
    return _any_text(p, e)


def match(p: Any, d: Any) -> Optional[Tuple[bool, List[Tuple[str, str, List[Any]]]]]:
    """Whether rule d is a dynamic dispatch: (loop, [(trigger, rule name, rest items)]).
    loop: `(a | b)* tail`; not loop: d is `head` alone (the root)."""
    b = d.body
    if b[0] == "name" and b[1] in p.defs and p.defs[b[1]].attrs.get("lazy"):
        t = head_trigger(p, p.defs[b[1]])
        if t is not None and d.name == "start":
            return False, [(t, b[1], [])]
        return None
    if not (b[0] == "seq" and len(b[1]) == 2 and b[1][0][0] == "rep" and b[1][0][2] == 0
            and b[1][0][3] is None and _tail_is_text(p, b[1][1])):
        return None
    x = b[1][0][1]
    names = [x] if x[0] == "name" else (x[1] if x[0] == "alt" else [])
    tags = []
    for n in names:
        if n[0] != "name" or n[1] not in p.defs:
            return None
        o = p.defs[n[1]]
        ob = o.body
        if o.terminal or ob[0] != "seq" or not ob[1] or ob[1][0][0] != "name":
            return None
        t = _token_trigger(p, ob[1], "dynamic")
        if t is not None:  # `tool: TEXT <|tool|> rest`: the special token is the trigger
            tags.append((t, o.name, ob[1][2:]))
            continue
        h = p.defs.get(ob[1][0][1])
        if h is None or not h.attrs.get("lazy"):
            return None
        t = head_trigger(p, h)
        if t is None:
            return None
        tags.append((t, o.name, ob[1][1:]))
    if tags and len({isinstance(t, str) for t, _, _ in tags}) > 1:
        from .lark_xgr import LarkDialectError
        raise LarkDialectError(d.pos, "dynamic dispatch cannot mix string and token triggers")
    return (True, tags) if tags else None


def heads(p: Any) -> Dict[str, str]:
    """The rules a dispatch consumes: head rules and the rules they begin -> the
    dispatching rule."""
    out = {}
    for d in p.defs.values():
        if d.terminal or d.body[0] == "common":
            continue
        m = match(p, d)
        if m is None:
            continue
        for t, name, _ in m[1]:
            out[name] = d.name
            if m[0] and not p.defs[p.defs[name].body[1][0][1]].terminal:  # begins with its head
                out[p.defs[name].body[1][0][1]] = d.name
    return out


def emit(em: Any, p: Any, ns: str, d: Any, ign: str) -> Optional[str]:
    """The TagDispatch body of rule d, adding its helper rules to em.rules; None when d
    is not a dispatch."""
    m = match(p, d)
    if m is None:
        return None
    loop, tags = m
    if not isinstance(tags[0][0], str):
        return _emit_tokens(em, p, ns, d, ign, loop, tags)
    by_trigger: Dict[str, List[str]] = {}
    heads_of: Dict[str, List[Any]] = {}
    for t, name, rest in tags:
        if rest:
            body = " ".join(em.expr(p, ns, x, ign, False) for x in rest)
        else:
            body = '""'
        by_trigger.setdefault(t, []).append(body)
        heads_of.setdefault(t, []).append(p.defs[p.defs[name].body[1][0][1]] if loop
                                          else p.defs[name])
    # captures of suffix/stop heads: labels on the dispatch and its tags (lark_sufstop.py)
    disp_label, tag_labels = lark_sufstop.dispatch_labels(em, p, ns, d, loop, heads_of)
    parts = []
    for k, (t, bodies) in enumerate(by_trigger.items()):
        rule = f"{ns}_{d.name}_tag{k}"
        attrs = f'[capture="{tag_labels[t]}"]' if t in tag_labels else ""
        em.rules.append(f"{rule}{attrs} ::= " + " | ".join(f"({x})" for x in bodies))
        parts.append(f"({ebnf_literal(t)}, {rule})")
    opt = f", loop_after_dispatch={'true' if loop else 'false'}"
    text = "TagDispatch(" + ", ".join(parts) + opt + ")"
    if disp_label is None:
        return text
    rule = f"{ns}_{d.name}_dispatch"
    em.rules.append(f'{rule}[capture="{disp_label}"] ::= {text}')
    return rule


def ebnf_literal(s: str) -> str:
    """s as an EBNF string literal: ASCII as is, other characters as \\u / \\U escapes."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o <= 0xFFFF:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    out.append('"')
    return "".join(out)


def _emit_tokens(em: Any, p: Any, ns: str, d: Any, ign: str, loop: bool,
                 tags: List[Tuple[Any, str, List[Any]]]) -> str:
    """A dispatch on special-token triggers: XGrammar's TokenTagDispatch, whose free text is
    any token but a trigger (ir/ebnf_parse.c note [token macros]): a trigger token is
    never read as text inside it."""
    by_id: Dict[int, List[str]] = {}
    for t, name, rest in tags:
        token = em.expr(p, ns, t, "", False)  # Token(ids), the ids checked against the vocabulary
        ids = [int(x) for x in re.findall(r"\d+", token)]
        body = " ".join(em.expr(p, ns, x, ign, False) for x in rest) if rest else '""'
        for i in ids:
            by_id.setdefault(i, []).append(body)
    parts = []
    for k, (i, bodies) in enumerate(sorted(by_id.items())):
        rule = f"{ns}_{d.name}_tok{k}"
        em.rules.append(f"{rule} ::= " + " | ".join(f"({x})" for x in bodies))
        parts.append(f"({i}, {rule})")
    opt = f", loop_after_dispatch={'true' if loop else 'false'}"
    return "TokenTagDispatch(" + ", ".join(parts) + opt + ")"
