"""XGrammar's ``suffix=``, ``stop=`` and ``stop_capture=`` rule attributes (its Lark dialect).

``r[suffix=M]: BODY`` reads BODY, then the marker M (a string, a ``"..."i`` string, a
regex or a terminal's name), and ends at the first place where it can: it is XGrammar's
committed-shortest (``[lazy]``) rule of ``BODY M``, so its language is that of the lazy
rule ``r[lazy] ::= BODY M`` (note [lazy rules] in earley/fsm_build.c: the strings of
``BODY M`` no proper prefix of which is one). ``stop=M`` is the same language. They differ
only in what captures report (XGrammar's tests, test_lark.py):

- ``r[capture]`` reports BODY alone (the marker is never part of r's own capture);
- ``stop_capture="name"`` reports the marker's text under that name (just before r's own
  capture, as XGrammar lists them);
- with ``stop=``, the marker's bytes are also left out of every enclosing capture (a
  rule's capture whose span holds the occurrence); with ``suffix=`` they stay there.

How: the rule is written as a lazy rule over ``BODY M`` whose capture has a label of
gramask's own (``__gm_ss...``); :func:`captures` rewrites the matcher's spans of that
label into the rule's capture and its marker's, splitting each span where BODY ends and M
begins (the marker's byte length for a plain string marker; otherwise the first split
where BODY matches the part before and M the rest, checked on grammars of BODY and M
alone), and cuts stop markers out of the enclosing spans. What this does not know: which
completions are the occurrence's ancestors in the parse, so an enclosing capture is any
capture of another rule that completed later and whose span holds the occurrence (XGrammar
tracks it per Earley item: test_lark_stop_capture_scope_ignores_unrelated_earley_branch
differs). Budgets (``max_tokens``, ``max_chars``) on the same rule are refused: XGrammar
closes the rule without its marker when the budget runs out, which the lazy rule cannot.
"""

import hashlib
import json
from typing import Any, Dict, List, Optional, Tuple

from .errors import UnsupportedError

LABEL_PREFIX = "__gm_ss"
_UNSUPPORTED = 5  # GM_ERR_UNSUPPORTED (lark_xgr's _GRAMMAR + 1)


def desugar(p: Any) -> None:
    """Rewrites each rule of p with suffix= or stop= into the lazy rule of its body and
    marker; its attributes go to ``d.sufstop`` (kind, marker expression, body expression,
    stop_capture label or None)."""
    for d in p.defs.values():
        kind = "suffix" if "suffix" in d.attrs else "stop" if "stop" in d.attrs else None
        if kind is None:
            continue
        m = d.attrs.pop(kind)
        marker = m if m[0] != "lit" else ("lit", m[1], m[2])
        stop_capture = d.attrs.pop("stop_capture", None)
        d.sufstop = (kind, marker, d.body, stop_capture)
        d.attrs["lazy"] = True
        d.body = ("seq", [d.body, marker])


def needs_capture_events(p: Any) -> bool:
    """Whether p's captures can see a suffix/stop rule: it has a capture or stop_capture."""
    return any("capture" in d.attrs or (getattr(d, "sufstop", None) and d.sufstop[3])
               for d in p.defs.values())


def refuse_budgets(d: Any) -> None:
    for key in ("max_tokens", "max_chars"):
        if key in d.attrs:
            raise UnsupportedError(
                f"rule attribute '{key}' with '{d.sufstop[0]}' (rule '{d.name}') is not "
                "implemented by gramask yet (XGrammar closes the rule without its marker "
                "when the budget runs out)", _UNSUPPORTED)


def refuse_dispatch_captures(d: Any, grammar_captures: bool) -> None:
    """A suffix/stop head consumed by dynamic dispatch (a TagDispatch trigger) keeps its
    language; its captures are not built there."""
    kind, _, _, stop_capture = d.sufstop
    if "capture" in d.attrs or stop_capture or (kind == "stop" and grammar_captures):
        raise UnsupportedError(
            f"captures of rule '{d.name}' with '{kind}' used as a dynamic dispatch trigger are "
            "not implemented by gramask yet", _UNSUPPORTED)


def info(em: Any, p: Any, ns: str, d: Any) -> Tuple[str, Dict[str, Any]]:
    """The capture label of rule d's lazy rule and what :func:`captures` needs to know."""
    kind, marker, body, stop_capture = d.sufstop
    inner = None
    if "capture" in d.attrs:
        inner = d.name if d.attrs["capture"] is True else d.attrs["capture"]
    out: Dict[str, Any] = {"kind": kind, "inner": inner, "marker": stop_capture}
    if marker[0] == "lit" and not marker[2]:
        out["fixed"] = len(marker[1].encode("utf-8"))
    else:
        out["body"] = _alone(em, p, ns, body)
        out["mark"] = _alone(em, p, ns, marker)
    digest = hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:10]
    return f"{LABEL_PREFIX}{digest}_{ns}_{d.name}", out


def _alone(em: Any, p: Any, ns: str, e: Any) -> str:
    """EBNF text of the expression e of p alone (its terminals with it)."""
    from .lark_xgr import _refs
    sub = type(em)({}, None, ())
    root = sub.expr(p, ns, e, "", True)
    rules = []
    todo = list(_refs(e))
    seen = set()
    common = False
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        t = p.defs[n]
        if t.attrs:
            raise UnsupportedError(f"terminal '{n}' with attributes inside a suffix or stop rule "
                                   "is not implemented by gramask yet", _UNSUPPORTED)
        if t.body[0] == "common":
            common = True
            rules.append(f"{ns}_{n} ::= {ns}_c_{t.body[1]}")
            continue
        rules.append(f"{ns}_{n} ::= {sub.expr(p, ns, t.body, '', True)}")
        todo.extend(_refs(t.body))
    if common:
        for n in p.common.order:
            body = sub.expr(p.common, ns + "_c", p.common.defs[n].body, "", True)
            rules.append(f"{ns}_c_{n} ::= {body}")
    return "\n".join([f"root ::= {root}"] + sub.rules + rules) + "\n"


class _Splitter:
    """Where BODY ends in a span of a suffix/stop rule (the infos of one grammar)."""

    def __init__(self, infos: Dict[str, Dict[str, Any]]) -> None:
        self.infos = infos
        self.matchers: Dict[str, Any] = {}

    def matcher(self, ebnf: str) -> Any:
        m = self.matchers.get(ebnf)
        if m is None:
            from .compiler import GrammarCompiler
            from .grammar import Grammar
            from .matcher import GrammarMatcher
            from .tokenizer_info import TokenizerInfo
            compiled = GrammarCompiler(TokenizerInfo([]), cache_enabled=False).compile_grammar(
                Grammar.from_ebnf(ebnf))
            m = GrammarMatcher(compiled, terminate_without_stop_token=True)
            self.matchers[ebnf] = m
        m.reset()
        return m

    def split(self, label: str, text: bytes) -> Optional[int]:
        inf = self.infos[label]
        if "fixed" in inf:
            return len(text) - inf["fixed"] if inf["fixed"] <= len(text) else None
        body = self.matcher(inf["body"])
        ends = [0] if body.is_accepting() else []
        for i in range(len(text)):
            if not body.accept_string(text[i:i + 1]):
                break
            if body.is_accepting():
                ends.append(i + 1)
        for i in ends:  # the first split: the longest marker after a body
            mark = self.matcher(inf["mark"])
            if mark.accept_string(text[i:]) and mark.is_accepting():
                return i
        return None


def splitter(infos: Dict[str, Dict[str, Any]]) -> _Splitter:
    return _Splitter(infos)


def captures(spans: List[Tuple[str, int, bytes]], sp: _Splitter) -> List[Tuple[str, bytes]]:
    """XGrammar's captures from the matcher's spans (label, start, text): each span of a
    suffix/stop rule becomes its marker's capture and its own, and a stop marker's bytes
    leave every later span of another rule that holds the occurrence."""
    out: List[Tuple[str, int, bytes, List[Tuple[int, int]]]] = []
    stops: List[Tuple[int, int, int, int]] = []  # (index in out, start, marker start, end)
    for label, start, text in spans:
        if not label.startswith(LABEL_PREFIX) or label not in sp.infos:
            out.append((label, start, text, []))
            continue
        inf = sp.infos[label]
        i = sp.split(label, text)
        if i is None:
            raise AssertionError(f"a span of {label} that its body and marker do not split")
        if inf["marker"]:
            out.append((inf["marker"], start + i, text[i:], []))
        if inf["inner"]:
            out.append((inf["inner"], start, text[:i], []))
        if inf["kind"] == "stop":
            stops.append((len(out), start, start + i, start + len(text)))
    for first, start, mstart, end in stops:
        for k in range(first, len(out)):
            label, s, text, cuts = out[k]
            cut = (mstart - s, end - s)
            if s <= start and end <= s + len(text) and mstart < end and cut not in cuts:
                cuts.append(cut)
    result = []
    for label, s, text, cuts in out:
        for a, b in sorted(cuts, reverse=True):
            text = text[:a] + text[b:]
        result.append((label, text))
    return result


def merged(infos: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The suffix/stop infos of a grammar made of parts (labels name their info: equal
    labels are equal infos); None when there are none."""
    out: Dict[str, Any] = {}
    for x in infos:
        out.update(x)
    return out or None
