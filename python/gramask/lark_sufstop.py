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
gramask's own (``__gm_ss`` and the hex of a JSON object saying what the rule is, so that the
printed EBNF read again by ``Grammar.from_ebnf``, a union or a concat keep it);
``GrammarMatcher.get_captures`` sees such a label and :func:`captures` rewrites the
matcher's spans of it into the rule's capture and its marker's, splitting each span where
BODY ends and M begins (the marker's byte length for a plain string marker; otherwise the
first split where BODY matches the part before and M the rest, checked on grammars of BODY
and M alone), and cuts stop markers out of the enclosing spans. What this does not know:
which completions are the occurrence's ancestors in the parse, so an enclosing capture is
one of a rule from which the stop rule can be reached (:func:`scope`; or of an enclosing
grammar) that completed later and whose span holds the occurrence; XGrammar tracks it per
Earley item, so a marker of a branch that died is still cut from such a rule's capture.
Budgets (``max_tokens``, ``max_chars``) on the same rule are refused: XGrammar closes the
rule without its marker when the budget runs out, which the lazy rule cannot.
"""

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


def _encode(inf: Dict[str, Any]) -> str:
    """A capture label that holds what :func:`captures` needs to know (so that the printed
    EBNF, read again by Grammar.from_ebnf, keeps it)."""
    return LABEL_PREFIX + json.dumps(inf, sort_keys=True, separators=(",", ":")).encode().hex()


def decode(label: str) -> Optional[Dict[str, Any]]:
    if not label.startswith(LABEL_PREFIX):
        return None
    try:
        inf = json.loads(bytes.fromhex(label[len(LABEL_PREFIX):]).decode())
    except ValueError:
        return None
    return inf if isinstance(inf, dict) and "kind" in inf else None


def _capture_label(d: Any) -> Optional[str]:
    c = d.attrs.get("capture")
    return None if c is None else d.name if c is True else c


def scope(p: Any, name: str) -> Dict[str, List[str]]:
    """Which captures of p can hold an occurrence of rule name: the labels of the captured
    rules from which it can be reached ("within"), and every capture label of p ("local");
    a capture whose label is not local belongs to an enclosing grammar, which may hold it."""
    from .lark_xgr import _refs
    within = set()
    local = set()
    for d in p.defs.values():
        lab = _capture_label(d)
        if lab is None:
            continue
        local.add(lab)
        seen = set()
        todo = [d.name]
        while todo:
            n = todo.pop()
            if n in seen or n not in p.defs:
                continue
            seen.add(n)
            if p.defs[n].body[0] != "common":
                todo.extend(_refs(p.defs[n].body))
        if name in seen:
            within.add(lab)
    return {"within": sorted(within), "local": sorted(local)}


def label(em: Any, p: Any, ns: str, d: Any) -> str:
    """The capture label of rule d's lazy rule."""
    kind, marker, body, stop_capture = d.sufstop
    inner = None
    if "capture" in d.attrs:
        inner = d.name if d.attrs["capture"] is True else d.attrs["capture"]
    out: Dict[str, Any] = {"kind": kind, "inner": inner, "marker": stop_capture}
    if kind == "stop":
        out["scope"] = scope(p, d.name)
    if marker[0] == "lit" and not marker[2]:
        out["fixed"] = len(marker[1].encode("utf-8"))
    else:
        out["body"] = _alone(em, p, ns, body)
        out["mark"] = _alone(em, p, ns, marker)
    return _encode(out)


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
    """Where BODY ends in a span of a suffix/stop rule, and the infos of the labels seen."""

    def __init__(self) -> None:
        self.infos: Dict[str, Optional[Dict[str, Any]]] = {}
        self.matchers: Dict[str, Any] = {}

    def info(self, label: str) -> Optional[Dict[str, Any]]:
        if label not in self.infos:
            self.infos[label] = decode(label)
        return self.infos[label]

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
        assert inf is not None
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


def splitter() -> _Splitter:
    return _Splitter()


def captures(spans: List[Tuple[str, int, bytes]], sp: _Splitter) -> List[Tuple[str, bytes]]:
    """XGrammar's captures from the matcher's spans (label, start, text): each span of a
    suffix/stop rule becomes its marker's capture and its own; each tag of a TagDispatch
    with suffix/stop heads, its trigger's and its head's; a stop marker's bytes leave every
    later span of another rule that holds the occurrence."""
    buf: Dict[int, int] = {}  # the output bytes the spans show
    occ: Dict[str, List[Tuple[int, int]]] = {}  # dispatcher label -> its occurrences
    owner: Dict[str, str] = {}  # tag label -> dispatcher label
    for label, start, text in spans:
        for j, byte in enumerate(text):
            buf[start + j] = byte
        inf = sp.info(label)
        if inf is not None and inf["kind"] == "dispatch":
            occ.setdefault(label, []).append((start, start + len(text)))
            for t in inf["tags"]:
                owner[t] = label
    items: List[Tuple[str, int, int, List[Tuple[int, int]]]] = []
    stops: List[Tuple[Any, ...]] = []  # (first later item, occurrence start, cut, scope)
    last_end: Dict[Tuple[str, int], int] = {}  # dispatcher occurrence -> end of its last tag
    for label, start, text in spans:
        end = start + len(text)
        inf = sp.info(label)
        if inf is None:
            items.append((label, start, end, []))
        elif inf["kind"] in ("suffix", "stop"):
            i = sp.split(label, text)
            if i is None:
                raise AssertionError(f"a span of {label} that its body and marker do not split")
            if inf["marker"]:
                items.append((inf["marker"], start + i, end, []))
            if inf["inner"]:
                items.append((inf["inner"], start, start + i, []))
            if inf["kind"] == "stop":
                stops.append((len(items), start, start + i, end, inf.get("scope")))
        elif label in owner:
            dl = owner[label]
            tag = sp.info(dl)["tags"][label]
            tstart = start - len(tag["trigger"].encode("utf-8"))
            holders = [o for o in occ[dl] if o[0] <= tstart and end <= o[1]]
            if not holders:
                continue
            o = max(holders)
            seg = last_end.get((dl, o[0]), o[0])
            last_end[(dl, o[0])] = end
            if tag["marker"]:
                items.append((tag["marker"], tstart, start, []))
            if tag["inner"]:
                items.append((tag["inner"], seg, tstart, []))
            if tag["of"] == "stop":
                stops.append((len(items), seg, tstart, start, tag.get("scope")))
        elif inf["kind"] == "dispatch" and not inf["loop"] and (label, start) not in last_end:
            # the non-looping form that has not reached its trigger: all of it is the head's,
            # inside every capture of the same span listed before it (the dispatching rule's)
            for tag in inf["tags"].values():
                if tag["inner"]:
                    at = len(items)
                    while at and items[at - 1][1:3] == (start, end):
                        at -= 1
                    items.insert(at, (tag["inner"], start, end, []))
                    stops = [(f + (f >= at),) + tuple(rest) for f, *rest in stops]
    for first, ostart, a, b, where in stops:
        for k in range(first, len(items)):
            lab, s, e, cuts = items[k]
            if where is not None and lab in where["local"] and lab not in where["within"]:
                continue  # a capture of this grammar that cannot hold the occurrence
            if s <= ostart and b <= e and a < b and (a, b) not in cuts:
                cuts.append((a, b))
    result = []
    for label, s, e, cuts in items:
        text = bytes(buf[j] for j in range(s, e))
        for a, b in sorted(cuts, reverse=True):
            text = text[:a - s] + text[b - s:]
        result.append((label, text))
    return result


# ---- suffix/stop heads of dynamic dispatch (lark_dispatch.py): TagDispatch triggers
#
# `tool: head rest` with `head[stop="<t>"]: TEXT` is the trigger "<t>" of a TagDispatch
# whose tag rule is `rest`; the head's text is the free text before its trigger. Where
# captures can see it, the dispatching rule's TagDispatch gets a rule of its own with a
# label of gramask's own (its occurrence: where the free text starts) and each tag rule
# one (where the trigger ends): :func:`captures` then finds each head's text (from the end
# of the previous tag of the same occurrence, or its start, to the trigger) and its
# trigger; in the non-looping form (`start: head`), an occurrence that never reached its
# trigger is the head's text alone.


def _head_info(d: Any, captures_on: bool) -> Optional[Dict[str, Any]]:
    sufstop = getattr(d, "sufstop", None)
    if not sufstop:
        return None
    kind, _, _, stop_capture = sufstop
    inner = None
    if "capture" in d.attrs:
        inner = d.name if d.attrs["capture"] is True else d.attrs["capture"]
    if not (inner or stop_capture or (kind == "stop" and captures_on)):
        return None
    return {"kind": "tag", "of": kind, "inner": inner, "marker": stop_capture}


def dispatch_labels(em: Any, p: Any, ns: str, d: Any, loop: bool,
                    heads: Dict[str, List[Any]]) -> Tuple[Optional[str], Dict[str, str]]:
    """For the TagDispatch of rule d (heads: trigger -> the head rules it ends): the label
    of its own rule and of each trigger's tag rule, or (None, {}) when no capture sees
    its suffix/stop heads."""
    tags: Dict[str, Dict[str, Any]] = {}
    for trigger, hs in heads.items():
        infos = [_head_info(h, em.captures) for h in hs]
        if all(i is None for i in infos):
            continue
        if any(i != infos[0] for i in infos):
            raise UnsupportedError(
                f"heads of the dynamic dispatch of '{d.name}' sharing the trigger {trigger!r} "
                "with different captures are not implemented by gramask yet", _UNSUPPORTED)
        tags[trigger] = dict(infos[0], trigger=trigger, rule=f"{ns}_{d.name}")
        if infos[0]["of"] == "stop":
            tags[trigger]["scope"] = scope(p, d.name)
    if not tags:
        return None, {}
    disp: Dict[str, Any] = {"kind": "dispatch", "loop": loop, "tags": {}}
    labels = {}
    for trigger, inf in tags.items():
        labels[trigger] = _encode(inf)
        disp["tags"][labels[trigger]] = inf
    return _encode(disp), labels
