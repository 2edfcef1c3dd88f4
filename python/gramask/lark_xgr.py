"""XGrammar's Lark dialect (``Grammar.from_lark``) read into XGrammar's EBNF.

XGrammar translates Lark to its own EBNF and runs it character by character; this
module does the same for gramask's Earley engine: rules and terminals become EBNF
rules, ``%ignore`` is inserted after every lexeme of a rule (not inside terminals, not
before the first one unless ``allow_initial_skip``), and XGrammar's extensions are
read: ``{n,m}`` repetition, ``<[ids]>`` / ``<|name|>`` token sets, ``%regex {...}``
substrings, ``%json {schema}``, ``%lark {...}`` nested grammars, ``@name`` named
grammars, ``%grammar_options``. Parts that are grammars of their own (a JSON Schema, a
named grammar object) are linked in by the C library (``gm_grammar_link``).

Errors are XGrammar's: ``Lark error at line L, column C: message`` with the source
line and a caret, raised as :class:`GrammarSyntaxError` / :class:`GrammarError`
(both ``RuntimeError``). Rule attributes (``[lazy]``, ``[max_tokens=]``, ``suffix``,
``stop``, ``capture``, ``[temperature=]``, ``[max_chars=]``) are checked as XGrammar
checks them; their meanings are not implemented yet, so a grammar using one is
refused with :class:`UnsupportedError` naming it, never read without it. The one
exception is ``[temperature=t]`` on the start rule alone: it holds for the whole
output, so it is the grammar's temperature (``GrammarMatcher.temperature``).
"""

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from . import lark_dispatch, lark_sufstop
from .errors import GrammarError, GrammarSyntaxError, UnsupportedError

_SYNTAX, _GRAMMAR = 3, 4

# Lark's common.lark, in this dialect (character-level, so ESCAPED_STRING and
# C_COMMENT are written without lookbehind or lazy quantifiers).
_COMMON = r'''
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+" | "-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e" | "E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+" | "-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+" | "-"] NUMBER
ESCAPED_STRING: "\"" /([^"\\\n]|\\.)*/ "\""
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_" | LETTER) ("_" | LETTER | DIGIT)*
WS_INLINE: (" " | /\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: /--[^\n]*/
'''

_ATTR_NAMES = ("lazy", "capture", "max_tokens", "max_chars", "temperature", "suffix", "stop",
               "stop_capture")
_CAPTURE_NAME = re.compile(r"[A-Za-z0-9_]+\Z")
_MAX_TOKEN_RANGE = 1000000
# Escapes of a "..." literal that Lark reads as a backslash and the letter ("\\b" is two
# characters there) and XGrammar as one character (a backspace): from_lark reads a grammar
# with one as XGrammar does (Earley), not with the LALR engine (_lark_reads_it_so).
_NOT_LARKS_ESCAPES = "b/'0va"


class LarkDialectError(Exception):
    def __init__(self, pos: int, message: str, code: int = _SYNTAX) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message
        self.code = code


def located_error(text: str, pos: int, message: str, code: int) -> Exception:
    """XGrammar's error text: where (1-based line and column; CRLF is one line end),
    what, the source line and a caret."""
    pos = max(0, min(pos, len(text)))
    line = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    src = text[start:end if end >= 0 else len(text)].rstrip("\r")
    column = pos - start + 1
    msg = (f"Lark error at line {line}, column {column}: {message}\n{src}\n"
           f"{' ' * (column - 1)}^")
    cls = GrammarError if code == _GRAMMAR else GrammarSyntaxError
    return cls(msg, code, None, line, column)


# ---- expressions: tuples ("seq", [..]), ("alt", [..]), ("rep", e, lo, hi|None),
# ("lit", str, ci), ("range", lo, hi), ("regex", pattern, flags), ("name", name, pos),
# ("tokens", excluded, ids|None for all), ("named_token", text, pos), ("substring", chunks),
# ("json", schema_text, pos), ("lark", ns), ("grammar", name, pos)


class Definition:
    def __init__(self, name: str, terminal: bool, pos: int, attrs: Dict[str, Any]) -> None:
        self.name = name
        self.terminal = terminal
        self.pos = pos
        self.attrs = attrs
        self.body: Any = None


def _is_terminal(name: str) -> bool:
    s = name.lstrip("_")
    return bool(s) and s[0].isupper()


class _Parser:
    def __init__(self, text: str, base: int = 0) -> None:
        self.t = text
        self.i = 0
        self.base = base  # offset of this text in the text errors are reported against
        self.defs: Dict[str, Definition] = {}
        self.order: List[str] = []
        self.ignores: List[Any] = []
        self.options: Dict[str, bool] = {"allow_initial_skip": False}
        self.imports: List[Tuple[str, str, int]] = []  # (common name, local name, pos)
        self.extended = False  # uses XGrammar's extensions: must run on the Earley engine
        self.lark_escapes = False  # a literal escape Lark reads otherwise (_NOT_LARKS_ESCAPES)

    def err(self, message: str, pos: Optional[int] = None, code: int = _SYNTAX):
        raise LarkDialectError(self.base + (self.i if pos is None else pos), message, code)

    # -- characters
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j] if j < len(self.t) else "\x00"  # the end: in no set of characters

    def skip(self, newlines: bool) -> None:
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c in " \t\f\v" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#" or t.startswith("//", self.i):
                while self.i < len(t) and t[self.i] not in "\r\n":
                    self.i += 1
            else:
                break

    def at_line_end(self) -> bool:
        self.skip(False)
        return self.i >= len(self.t) or self.t[self.i] in "\r\n"

    def name(self) -> str:
        t, j = self.t, self.i
        if j >= len(t) or not (t[j].isalpha() or t[j] == "_"):
            return ""
        j += 1
        while j < len(t) and (t[j].isalnum() or t[j] == "_" or
                              (t[j] == "-" and j + 1 < len(t) and (t[j + 1].isalnum() or t[j + 1] == "_")
                               and t[j + 1] != ">")):
            j += 1
        s = t[self.i:j]
        self.i = j
        return s

    # -- statements
    def parse(self) -> "_Parser":
        t = self.t
        while True:
            self.skip(True)
            if self.i >= len(t):
                break
            c = t[self.i]
            if c == "%":
                self.directive()
            elif c in "?!" or c.isalpha() or c == "_":
                self.definition()
            else:
                self.unexpected()
            if not self.at_line_end():
                self.unexpected()
        return self

    def unexpected(self) -> None:
        c = self.peek()
        if c in "-!":
            self.err(f"unexpected '{c}' character")
        if c == "&":
            self.err("intersection '&' is not supported")
        if c == "\x00":
            self.err("unexpected end of grammar")
        self.err(f"unexpected character '{c}'")

    def directive(self) -> None:
        at = self.i
        self.i += 1
        d = self.name()
        self.skip(False)
        if d == "import":
            self.imports_stmt(at)
        elif d == "ignore":
            self.ignores.append(self.alternatives(False, top=True))
        elif d == "grammar_options":
            self.extended = True
            value = self.json_value("failed to parse JSON value after %grammar_options")
            if not isinstance(value, dict):
                self.err("%grammar_options value must be an object", at)
            for k, v in value.items():
                if k in ("allow_initial_skip", "no_forcing", "allow_invalid_utf8"):
                    if not isinstance(v, bool):
                        self.err(f"{k} must be a boolean", at)
                    if k == "allow_initial_skip":
                        self.options[k] = v
                    elif v:
                        self.err(f"%grammar_options option '{k}' is not supported", at)
                else:
                    self.err(f"unknown %grammar_options option '{k}'", at)
        elif d in ("declare", "override", "extend"):
            self.err(f"directive %{d} is not supported", at)
        else:
            self.err(f"unknown directive %{d}", at)

    def imports_stmt(self, at: int) -> None:
        mod = self.name()
        if mod != "common":
            self.err("only %import common... is supported (Lark's common terminals)", at)
        if self.peek() == ".":
            self.i += 1
            pos = self.i
            n = self.name()
            if not n:
                self.err("expected a name after %import common.")
            local = n
            self.skip(False)
            if self.t.startswith("->", self.i):
                self.i += 2
                self.skip(False)
                local = self.name()
                if not local:
                    self.err("expected alias name after '->'")
            self.imports.append((n, local, pos))
        else:
            self.skip(False)
            if self.peek() != "(":
                self.err("expected '.' or '(' after %import common")
            self.i += 1
            while True:
                self.skip(True)
                pos = self.i
                n = self.name()
                if not n:
                    self.err("expected a name in %import common (...)")
                self.imports.append((n, n, pos))
                self.skip(True)
                if self.peek() == ",":
                    self.i += 1
                    continue
                if self.peek() == ")":
                    self.i += 1
                    break
                self.err("expected ',' or ')' in %import")

    def definition(self) -> None:
        if self.peek() in "?!":
            self.i += 1
        pos = self.i
        n = self.name()
        if not n:
            self.unexpected()
        terminal = _is_terminal(n)
        if self.t.startswith("::", self.i):
            self.err("parametric grammar is not supported")
        if self.peek() == "{":
            self.err("Lark templates are not supported")
        if self.peek() == ".":
            self.err("priorities are not supported")
        attrs: Dict[str, Any] = {}
        if self.peek() == "[":
            if terminal:
                self.err("attributes are only supported on rules")
            attrs = self.attributes()
            self.extended = True
        self.skip(False)
        if self.peek() != ":":
            self.err("expected ':' after rule name")
        self.i += 1
        if n in self.defs:
            self.err(f"duplicate rule or terminal '{n}'", pos, _GRAMMAR)
        d = Definition(n, terminal, self.base + pos, attrs)
        self.defs[n] = d
        self.order.append(n)
        d.body = self.alternatives(terminal, top=True)

    def attributes(self) -> Dict[str, Any]:
        self.i += 1
        attrs: Dict[str, Any] = {}
        while True:
            self.skip(True)
            if self.peek() == "]":
                self.i += 1
                break
            at = self.i
            key = self.name()
            if not key:
                self.err("expected an attribute name")
            if key not in _ATTR_NAMES:
                self.err(f"attribute '{key}' is not supported", at)
            if key in attrs:
                self.err(f"{key} attribute is specified more than once", at)
            self.skip(False)
            value: Any = True
            if self.peek() == "=":
                self.i += 1
                self.skip(False)
                value = self.attribute_value(key)
            if key in ("suffix", "stop") and ("stop" if key == "suffix" else "suffix") in attrs:
                other = "stop" if key == "suffix" else "suffix"
                self.err(f"{key} cannot be combined with {other}", at)
            if key in ("capture", "stop_capture") and value is not True:
                if value == "":
                    self.err("capture name must not be empty", at)
                if not _CAPTURE_NAME.match(value):
                    self.err("capture name must only contain letters, digits and underscores", at)
            attrs[key] = value
            self.skip(True)
            if self.peek() == ",":
                self.i += 1
        if "stop_capture" in attrs and "stop" not in attrs and "suffix" not in attrs:
            self.err("stop_capture requires stop or suffix")
        return attrs

    def attribute_value(self, key: str) -> Any:
        at = self.i
        if key == "temperature":
            m = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?").match(self.t, self.i)
            if not m:
                self.err("expected number after temperature=")
            self.i = m.end()
            v = float(m.group(0))
            if not (v >= 0 and v != float("inf")):
                self.err("temperature must be a finite non-negative number", at)
            return v
        if key in ("max_tokens", "max_chars"):
            m = re.compile(r"[+-]?\d+").match(self.t, self.i)
            if not m:
                self.err(f"expected integer after {key}=")
            self.i = m.end()
            v = int(m.group(0))
            if v < 0 or (v == 0 and key == "max_tokens"):
                self.err(f"{key} must be {'positive' if key == 'max_tokens' else 'non-negative'}",
                         at)
            return v
        if self.peek() == '"':
            s, ci = self.string()
            if key in ("suffix", "stop"):
                if s == "":
                    self.err(f"{key} must not be empty", at)
                return ("lit", s, ci)  # the marker expression (lark_sufstop.py)
            return s
        if key in ("capture", "stop_capture"):
            self.err(f"expected string literal after {key}=")
        if key in ("suffix", "stop"):
            if self.peek() == "/":
                pattern, flags = self.regex()
                if "i" in flags:
                    self.err("regular-expression flag 'i' is not supported with suffix or stop "
                             "attributes", at)
                return ("regex", pattern, flags)
            n = self.name()
            if not n:
                self.err(f"expected a string, regex or terminal after {key}=")
            if not _is_terminal(n):
                self.err(f"{key} terminal name must be uppercase", at)
            return ("name", n, self.base + at)
        self.err(f"attribute '{key}' takes no value", at)

    # -- expressions
    def alternatives(self, terminal: bool, top: bool = False) -> Any:
        alts = [self.sequence(terminal, top)]
        while True:
            save = self.i
            self.skip(not top)
            if top and self.at_line_end():
                # a body goes on on the next line when that line starts with '|'
                j = self.i
                self.skip(True)
                if self.peek() != "|":
                    self.i = j
                    break
            if self.peek() != "|":
                self.i = save
                break
            self.i += 1
            alts.append(self.sequence(terminal, top))
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def sequence(self, terminal: bool, top: bool) -> Any:
        items = []
        while True:
            self.skip(not top)
            c = self.peek()
            if c == "\x00" or c in "|)]}\r\n":
                break
            if self.t.startswith("->", self.i):
                self.i += 2
                self.skip(False)
                if not self.name():
                    self.err("expected alias name after '->'")
                continue
            items.append(self.postfix(terminal))
        return items[0] if len(items) == 1 else ("seq", items)

    def postfix(self, terminal: bool) -> Any:
        e = self.atom(terminal)
        while True:
            c = self.peek()
            if c in "?*+":
                self.i += 1
                e = ("rep", e, 0 if c != "+" else 1, 1 if c == "?" else None)
            elif c == "~":
                self.i += 1
                self.skip(False)
                lo = self.count()
                hi = lo
                if self.t.startswith("..", self.i):
                    self.i += 2
                    hi = self.count()
                if hi < lo:
                    self.err("repetition end must be greater than or equal to its start")
                e = ("rep", e, lo, hi)
            elif c == "{":
                e = self.braces(e)
            else:
                return e

    def count(self) -> int:
        m = re.compile(r"-?\d+").match(self.t, self.i)
        if not m or m.group(0).startswith("-") or len(m.group(0)) > 9:
            self.err("invalid repetition count")
        self.i = m.end()
        return int(m.group(0))

    def braces(self, e: Any) -> Any:
        self.extended = True
        at = self.i
        self.i += 1
        self.skip(False)
        if self.peek() not in "0123456789,-":
            self.err("Lark templates are not supported", at)
        lo, hi = 0, None
        if self.peek() != ",":
            lo = self.count()
            hi = lo
        self.skip(False)
        if self.peek() == ",":
            self.i += 1
            self.skip(False)
            hi = None if self.peek() == "}" else self.count()
        self.skip(False)
        if self.peek() != "}":
            self.err("expected '}' after repetition")
        self.i += 1
        if hi is not None and hi < lo:
            self.err("repetition end must be greater than or equal to its start", at)
        return ("rep", e, lo, hi)

    def atom(self, terminal: bool) -> Any:
        t = self.t
        c = self.peek()
        at = self.i
        if c == "(":
            self.i += 1
            e = self.alternatives(terminal)
            self.skip(True)
            if self.peek() != ")":
                self.err("expected ')' after group")
            self.i += 1
            return e
        if c == "[":
            self.i += 1
            e = self.alternatives(terminal)
            self.skip(True)
            if self.peek() != "]":
                self.err("expected ']' after optional group")
            self.i += 1
            return ("rep", e, 0, 1)
        if c == '"':
            s, ci = self.string()
            save = self.i
            self.skip(False)
            if t.startswith("..", self.i):
                self.i += 2
                self.skip(False)
                if self.peek() != '"':
                    self.err("expected a string after '..'")
                s2, ci2 = self.string()
                if ci or ci2:
                    self.err("flags are not allowed on character ranges", at)
                if len(s) != 1 or len(s2) != 1:
                    self.err("range endpoints must be one character", at)
                if ord(s) > ord(s2):
                    self.err("range start must not exceed end", at)
                return ("range", s, s2)
            self.i = save
            return ("lit", s, ci)
        if c == "/":
            pattern, flags = self.regex()
            return ("regex", pattern, flags)
        if c == "<":
            if terminal:
                self.err("special tokens cannot be used in terminals")
            self.extended = True
            return self.special_token()
        if c == "@":
            self.extended = True
            self.i += 1
            n = self.name()
            if not n:
                self.err("empty grammar reference", at)
            return ("grammar", n, self.base + at)
        if c == "%":
            self.i += 1
            d = self.name()
            if d == "if":
                self.err("parametric %if conditions are not supported", at)
            self.skip(False)
            self.extended = True
            if d == "json":
                if terminal:
                    self.err("%json cannot be used in terminals", at)
                value = self.json_value("failed to parse JSON value after %json")
                return ("json", json.dumps(value), self.base + at)
            if d == "lark":
                if terminal:
                    self.err("nested %lark cannot be used in terminals", at)
                return ("lark", self.nested(at))
            if d == "regex":
                return self.structured_regex(at)
            self.err(f"unknown directive %{d}", at)
        if c == "~":
            self.err("complement '~' is not supported")
        if c == "&":
            self.err("intersection '&' is not supported")
        if c.isalpha() or c == "_":
            n = self.name()
            if t.startswith("::", self.i):
                self.err("parametric grammar is not supported")
            if self.peek() == "{":
                j = self.i + 1
                while j < len(t) and t[j] in " \t":
                    j += 1
                if j < len(t) and not (t[j].isdigit() or t[j] in ",-"):
                    self.err("Lark templates are not supported")
            return ("name", n, self.base + at)
        self.unexpected()

    def string(self) -> Tuple[str, bool]:
        """A "..." literal (JSON's escapes, and \\xNN), then its i flag."""
        t, at = self.t, self.i
        j = self.i + 1
        out = []
        simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", '"': '"',
                  "/": "/", "'": "'", "0": "\0", "v": "\v", "a": "\a"}
        while True:
            if j >= len(t) or t[j] in "\r\n":
                self.err("unterminated string literal", at)
            ch = t[j]
            if ch == '"':
                j += 1
                break
            if ch == "\\":
                e = t[j + 1] if j + 1 < len(t) else "\x00"
                if e in simple:
                    out.append(simple[e])
                    j += 2
                    if e in _NOT_LARKS_ESCAPES:
                        self.lark_escapes = True
                elif e in "xuU":
                    n = {"x": 2, "u": 4, "U": 8}[e]
                    h = t[j + 2:j + 2 + n]
                    if len(h) != n or not all(x in "0123456789abcdefABCDEF" for x in h):
                        self.err("invalid string literal", at)
                    cp = int(h, 16)
                    if cp > 0x10FFFF:
                        self.err("invalid string literal", at)
                    out.append(chr(cp))
                    j += 2 + n
                else:
                    self.err("invalid string literal", at)
            else:
                out.append(ch)
                j += 1
        self.i = j
        ci = False
        if self.peek() == "i":
            nxt = self.peek(1)
            if not (nxt.isalnum() or nxt == "_"):
                ci = True
                self.i += 1
        s = "".join(out)
        if ci and any(ord(x) > 127 for x in s):
            self.err("case-insensitive string literals currently support ASCII characters only", at)
        return s, ci

    def regex(self) -> Tuple[str, str]:
        t, at = self.t, self.i
        j = self.i + 1
        out = []
        while True:
            if j >= len(t) or t[j] in "\r\n":
                self.err("unterminated regular expression", at)
            ch = t[j]
            if ch == "\\" and j + 1 < len(t):
                if t[j + 1] == "/":
                    out.append("/")
                else:
                    out.append(t[j:j + 2])
                j += 2
                continue
            if ch == "/":  # as Lark: the first unescaped '/' ends it, even in a class
                j += 1
                break
            out.append(ch)
            j += 1
        k = j
        while k < len(t) and t[k].isalpha():
            k += 1
        flags = t[j:k]
        for f in flags:
            if f not in "isu":
                self.err(f"regular-expression flag '{f}' is not supported", at)
        self.i = k
        pattern = "".join(out)
        self.check_regex(pattern, at)
        return pattern, flags

    def check_regex(self, pattern: str, at: int) -> None:
        checks = [(r"(?<!\\)(\\\\)*\\[bB]", "Word boundary assertion is not supported"),
                  (r"(?<!\\)(\\\\)*\\[pP]\{", "Unicode property escape is not supported"),
                  (r"(?<!\\)(\\\\)*\\[1-9]", "Backreference is not supported"),
                  (r"\(\?<[=!]", "Lookbehind assertion is not supported"),
                  (r"(?<!\\)(\\\\)*\[\]", "Empty character class is not allowed"),
                  (r"(?<!\\)(\\\\)*\\u(?![0-9a-fA-F]{4}|\{)",
                   "\\u must be followed by four hexadecimal digits")]
        for rx, msg in checks:
            if re.search(rx, pattern):
                self.err(msg, at)
        try:
            re.compile(_python_form(pattern))
        except re.error as e:
            self.err(f"failed to compile regular expression: {e}", at)

    def json_value(self, message: str) -> Any:
        try:
            value, end = json.JSONDecoder().raw_decode(self.t, self.i)
        except ValueError:
            self.err(message)
        self.i = end
        return value

    def nested(self, at: int) -> "_Parser":
        if self.peek() != "{":
            self.err("expected '{' after %lark")
        t = self.t
        depth, j = 0, self.i
        while j < len(t):
            ch = t[j]
            if ch == '"':
                j += 1
                while j < len(t) and t[j] != '"':
                    j += 2 if t[j] == "\\" else 1
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if depth:
            self.err("unterminated %lark { ... }", at)
        inner = _Parser(t[self.i + 1:j], self.base + self.i + 1)
        try:
            inner.parse()
            inner.check()
        except LarkDialectError as e:
            raise LarkDialectError(self.base + at, "failed to compile nested Lark grammar: "
                                   + e.message, e.code) from None
        self.i = j + 1
        return inner

    def structured_regex(self, at: int) -> Any:
        value = self.json_value("failed to parse JSON value after %regex")
        if not isinstance(value, dict):
            self.err("%regex value must be an object", at)
        known = ("substring_chars", "substring_chunks", "substring_words")
        for k in value:
            if k not in known:
                self.err(f"unknown field '{k}' in %regex", at)
        if not value:
            self.err("no fields set on %regex", at)
        if len(value) > 1:
            self.err("only one field can be set on %regex", at)
        if "substring_words" in value:
            self.err("substring_words is not supported yet", at)
        if "substring_chars" in value:
            s = value["substring_chars"]
            if not isinstance(s, str):
                self.err("substring_chars must be a string", at)
            return ("substring", list(s))
        chunks = value["substring_chunks"]
        if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
            self.err("substring_chunks must be an array of strings", at)
        return ("substring", chunks)

    def special_token(self) -> Any:
        t, at = self.t, self.i
        end = t.find(">", self.i)
        nl = min([k for k in (t.find("\n", self.i), t.find("\r", self.i)) if k >= 0] or [len(t)])
        if end < 0 or end > nl:
            self.err("unterminated special token", at)
        body = t[self.i + 1:end]
        self.i = end + 1
        if body.startswith("[") and body.endswith("]"):
            inner = body[1:-1]
            excluded = inner.startswith("^")
            if excluded:
                inner = inner[1:]
            parts = [p.strip() for p in inner.split(",")]
            if "*" in parts:
                if excluded:
                    self.err("negated wildcard special token is not supported", at)
                if len(parts) > 1:
                    self.err("wildcard cannot be mixed with token ids", at)
                return ("tokens", False, None, self.base + at)
            ids = set()
            for p in parts:
                if not p:
                    continue
                m = re.fullmatch(r"(\d+)(?:-(\d+))?", p)
                if not m:
                    self.err("invalid numeric special-token range", at)
                lo = int(m.group(1))
                hi = int(m.group(2)) if m.group(2) else lo
                if hi < lo:
                    self.err("invalid numeric special-token range", at)
                if hi - lo >= _MAX_TOKEN_RANGE:
                    self.err("special-token range is too large", at)
                ids.update(range(lo, hi + 1))
            if not ids:
                self.err("empty numeric special-token range", at)
            return ("tokens", excluded, sorted(ids), self.base + at)
        if not body or any(ch.isspace() for ch in body):
            self.err("invalid special token", at)
        return ("named_token", "<" + body + ">", self.base + at)

    # -- checks after parsing
    def check(self) -> None:
        common = None
        for n, local, pos in self.imports:
            if common is None:
                common = _Parser(_COMMON).parse()
            if n not in common.defs:
                self.err(f"unknown common import '{n}'", pos, _GRAMMAR)
            if local in self.defs:
                self.err(f"duplicate rule or terminal '{local}'", pos, _GRAMMAR)
            d = Definition(local, True, self.base + pos, {})
            d.body = ("common", n)
            self.defs[local] = d
        self.common = common
        if "start" not in self.defs:
            self.err("no start rule", 0, _GRAMMAR)
        for d in self.defs.values():
            self.check_expr(d.body, d)
            for key in ("suffix", "stop"):
                v = d.attrs.get(key)
                if isinstance(v, tuple) and v[0] == "name" and v[1] not in self.defs:
                    raise LarkDialectError(v[2], f"unknown name '{v[1]}'", _GRAMMAR)
        for e in self.ignores:
            self.check_expr(e, None)
        # suffix= / stop= rules are lazy rules of their body and marker (lark_sufstop.py)
        lark_sufstop.desugar(self)
        self.check_lazy()
        for d in self.defs.values():
            if "temperature" in d.attrs and any(
                    r in self.defs and not self.defs[r].terminal for r in _refs(d.body)):
                raise LarkDialectError(d.pos, "temperature is only supported on terminals and "
                                       "subgrammars", _GRAMMAR)
        # terminal cycles
        state: Dict[str, int] = {}

        def visit(n: str) -> None:
            state[n] = 1
            for r in _refs(self.defs[n].body):
                if r in self.defs and self.defs[r].terminal:
                    if state.get(r) == 1:
                        raise LarkDialectError(self.defs[n].pos, "circular reference in terminal "
                                               f"'{r}'", _GRAMMAR)
                    if r not in state:
                        visit(r)
            state[n] = 2

        for n, d in self.defs.items():
            if d.terminal and n not in state:
                visit(n)

    def check_lazy(self) -> None:
        """XGrammar's checks of [lazy] rules: a body like a terminal's, and a regex body
        (its suffix is the trigger) only on a head that dynamic dispatch uses: the first
        item of a rule that is repeated."""
        repeated = _repeated_names(self)
        for d in self.defs.values():
            if not d.attrs.get("lazy"):
                continue
            for r in _refs(d.body):
                if r in self.defs and not self.defs[r].terminal:
                    raise LarkDialectError(d.pos, "terminal cannot reference rule (a [lazy] "
                                           f"rule's body is a terminal's: '{r}')", _GRAMMAR)
            heads = [o for o in self.defs.values() if o.body[0] == "seq"
                     and o.body[1] and o.body[1][0][:2] == ("name", d.name)]
            for o in heads:
                if o.name in repeated and "max_tokens" in o.attrs:
                    raise LarkDialectError(o.pos, "max_tokens is not supported on rules consumed "
                                           "by dynamic dispatch", _GRAMMAR)
            if d.body[0] == "regex" and _any_text_prefix(d.body[1], d.body[2]):
                if not any(o.name in repeated for o in heads):
                    raise LarkDialectError(d.pos, "lazy regex suffix is only supported on a head "
                                           "used by dynamic dispatch", _GRAMMAR)

    def check_expr(self, e: Any, d: Optional[Definition]) -> None:
        k = e[0]
        if k in ("seq", "alt"):
            for x in e[1]:
                self.check_expr(x, d)
        elif k == "rep":
            self.check_expr(e[1], d)
        elif k == "name":
            n = e[1]
            if n not in self.defs:
                raise LarkDialectError(e[2], f"unknown name '{n}'", _GRAMMAR)
            if d is not None and d.terminal and not self.defs[n].terminal:
                raise LarkDialectError(e[2], f"terminal '{d.name}' cannot reference rule '{n}'",
                                       _GRAMMAR)


def _any_text_prefix(pattern: str, flags: str) -> bool:
    """Whether a regex reads any text first, then its suffix (`/(\\n|.)*<call>/`): as a
    [lazy] body that is a dispatch trigger, not a shortest match."""
    heads = ["(\\n|.)*", "(.|\\n)*", "[\\s\\S]*", "[\\S\\s]*", "[^]*"]
    if "s" in flags:
        heads.append(".*")
    return any(pattern.startswith(h) for h in heads)


def _repeated_names(p: Any) -> set:
    """The names p's rules use inside an unbounded repetition (`tool*`, `(a b)+`)."""
    repeated = set()

    def reps(e: Any, inside: bool) -> None:
        k = e[0]
        if k in ("seq", "alt"):
            for x in e[1]:
                reps(x, inside)
        elif k == "rep":
            reps(e[1], inside or e[3] is None)
        elif k == "name" and inside:
            repeated.add(e[1])

    for o in p.defs.values():
        if o.body[0] != "common":
            reps(o.body, False)
    return repeated


def _dispatch_form(p: Any, d: Any) -> bool:
    """Whether lazy rule d is XGrammar's dynamic dispatch rather than a shortest match:
    the first item of a rule that is repeated (`tool: head ...` with `tool*`), or a body
    of a terminal and then a literal (`head[lazy]: TEXT "<end>"`, a TagDispatch trigger)."""
    repeated = _repeated_names(p)
    for o in p.defs.values():
        if (o.body[0] == "seq" and o.body[1] and o.body[1][0][:2] == ("name", d.name)
                and o.name in repeated):
            return True
    b = d.body
    return (b[0] == "seq" and len(b[1]) == 2 and b[1][0][0] == "name"
            and b[1][0][1] in p.defs and p.defs[b[1][0][1]].terminal and b[1][1][0] == "lit")


def _hot_lexeme(p: Any, d: Any) -> bool:
    """Whether rule d has a temperature and its body is one lexeme (a literal, a regex, a
    range, a terminal, or a choice of those): then %ignore goes after its references, not
    inside it, so that ignored text after it is read at the temperature around it, as in
    XGrammar (test_temperature_works_with_ignored_tokens); the language is the same."""
    def one(e: Any) -> bool:
        if e[0] in ("lit", "regex", "range"):
            return True
        if e[0] == "name":
            t = p.defs.get(e[1])
            return t is not None and t.terminal
        return e[0] == "alt" and all(one(x) for x in e[1])
    return not d.terminal and "temperature" in d.attrs and one(d.body)


def _refs(e: Any) -> List[str]:
    k = e[0]
    if k in ("seq", "alt"):
        return [r for x in e[1] for r in _refs(x)]
    if k == "rep":
        return _refs(e[1])
    if k == "name":
        return [e[1]]
    return []


def _python_form(pattern: str) -> str:
    """The pattern with XGrammar's additions to Python's regex syntax (each an error in
    Python; lexer/regex_parse.c note [xgrammar regex]) written as Python writes them, so
    that re.compile checks the rest: \\cX as the control character's \\xNN, (?<name> as
    (?P<name>, \\e as \\x1b; \\u{...} and \\x{...} become plain text (the C parser checks
    their digits). The grammar itself keeps XGrammar's text."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e == "c" and i + 2 < n and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
                out.append("\\x%02x" % (ord(pattern[i + 2]) % 32))
                i += 3
            elif e == "e":
                out.append("\\x1b")
                i += 2
            elif e in "ux" and i + 2 < n and pattern[i + 2] == "{":
                out.append("x{")
                i += 3
            else:
                out.append(pattern[i:i + 2])
                i += 2
        elif pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ---- EBNF output

# an EBNF string literal of s (shared with the TagDispatch triggers of lark_dispatch)
_lit = lark_dispatch.ebnf_literal


def _cp(ch: str) -> str:
    o = ord(ch)
    return "\\u%04x" % o if o <= 0xFFFF else "\\U%08x" % o


class _Emitter:
    """Writes the EBNF of one grammar and its nested ones (each in its own namespace)."""

    def __init__(self, named: Dict[str, Any], tokenizer_info: Any, stack: Tuple[str, ...]) -> None:
        self.rules: List[str] = []
        self.parts: List[Tuple[str, Any]] = []  # (placeholder rule, Grammar) to link
        self.named = named
        self.tokenizer_info = tokenizer_info
        self.stack = stack
        self.nns = 0
        self.named_done: Dict[str, str] = {}
        self.temperature: Optional[float] = None
        self.captures = False  # whether an enclosing grammar has captures

    def grammar(self, p: _Parser, ns: str) -> str:
        """Emits p's rules under ns; returns the name of its start rule (with ignores)."""
        ign = ""
        if p.ignores:
            ign = f"{ns}_ign"
            alts = " | ".join(self.expr(p, ns, e, "", True) for e in p.ignores)
            self.rules.append(f"{ign} ::= ({alts})*")
        if p.common is not None:
            for n in p.common.order:
                body = self.expr(p.common, ns + "_c", p.common.defs[n].body, "", True)
                self.rules.append(f"{ns}_c_{n} ::= {body}")
        consumed = lark_dispatch.heads(p)
        outer_captures = self.captures
        # whether a capture can see this grammar's suffix/stop rules (lark_sufstop.py)
        self.captures = outer_captures or lark_sufstop.needs_capture_events(p)
        for n, by in consumed.items():
            if getattr(p.defs[n], "sufstop", None):
                lark_sufstop.refuse_budgets(p.defs[n])
            users = [o.name for o in p.defs.values() if n in _refs(o.body)
                     and o.name not in (by, n) and consumed.get(o.name) != by]
            if users:
                raise UnsupportedError(
                    f"rule '{n}' is consumed by the dynamic dispatch of '{by}' and also used "
                    f"by '{users[0]}': not implemented by gramask yet", _GRAMMAR + 1)
            for key in ("capture", "max_tokens"):
                if key in p.defs[n].attrs and not p.defs[n].attrs.get("lazy"):
                    raise LarkDialectError(p.defs[n].pos, f"{key} is not supported on rules "
                                           "consumed by dynamic dispatch", _GRAMMAR)
        for n, d in p.defs.items():
            if n in consumed:
                # written into its dispatcher's TagDispatch (lark_dispatch.py)
                self.rules.append(f'{ns}_{n} ::= ""')
                continue
            if ns == "L" and n == "start" and set(d.attrs) == {"temperature"}:
                # on the start rule it holds for the whole output: the grammar's temperature
                self.temperature = d.attrs["temperature"]
            sufstop = getattr(d, "sufstop", None)
            if sufstop:
                lark_sufstop.refuse_budgets(d)
            head = self.attr_head(ns, n, d)
            if head != f"{ns}_{n}":
                d = Definition(n, d.terminal, d.pos, {a: v for a, v in d.attrs.items()
                                                      if a not in ("max_tokens", "max_chars",
                                                                   "temperature")})
                d.body = p.defs[n].body
                d.sufstop = sufstop
            unsupported = [a for a in d.attrs if a not in ("capture", "lazy")]
            if unsupported:
                raise UnsupportedError(
                    f"rule attribute '{unsupported[0]}' of XGrammar's Lark dialect (rule "
                    f"'{n}') is not implemented by gramask yet", _GRAMMAR + 1)
            lazy = bool(d.attrs.get("lazy"))
            if lazy and _dispatch_form(p, d):
                raise UnsupportedError(
                    f"rule attribute 'lazy' on a head of dynamic dispatch (rule '{n}': free "
                    "text up to its trigger, as a TagDispatch) is not implemented by gramask "
                    "yet", _GRAMMAR + 1)
            attrs = []
            if sufstop:
                if "capture" in d.attrs or sufstop[3] or (sufstop[0] == "stop" and self.captures):
                    label = lark_sufstop.label(self, p, ns, d)
                    attrs.append(f'capture="{label}"')
            elif "capture" in d.attrs:
                # the label is the Lark rule's name unless given (earley/capture.c)
                label = n if d.attrs["capture"] is True else d.attrs["capture"]
                attrs.append(f'capture="{label}"')
            if lazy:
                # its shortest matches (note [lazy rules] in earley/fsm_build.c); a lexeme:
                # %ignore goes after it, not inside
                attrs.append("lazy")
            attrs = f"[{', '.join(attrs)}]" if attrs else ""
            disp = None if d.terminal else lark_dispatch.emit(self, p, ns, d, ign)
            if disp is not None:
                body = disp
            elif d.body[0] == "common":
                body = f"{ns}_c_{d.body[1]}"
            else:
                inside = "" if d.terminal or lazy or _hot_lexeme(p, p.defs[n]) else ign
                body = self.expr(p, ns, d.body, inside, d.terminal)
            if attrs:
                # one bracket: the budget and temperature of attr_head, then capture and lazy
                head = head[:-1] + ", " + attrs[1:] if head.endswith("]") else head + attrs
            self.rules.append(f"{head} ::= {body}")
        start = f"{ns}_start"
        if ign and p.options["allow_initial_skip"]:
            start = f"{ign} {start}"
        self.captures = outer_captures
        return start

    @staticmethod
    def attr_head(ns: str, n: str, d: "Definition") -> str:
        """The rule's EBNF name, with XGrammar's ``[max_tokens=N, max_chars=n,
        temperature=t]`` for those of d's attributes: the token budget of each occurrence,
        its character bound and the sampling temperature inside it, which gramask's EBNF
        takes as they are (note [rule attributes] in ir/ebnf_parse.c)."""
        attrs = []
        if "max_tokens" in d.attrs:
            attrs.append(f"max_tokens={d.attrs['max_tokens']}")
        if "max_chars" in d.attrs:
            attrs.append(f"max_chars={d.attrs['max_chars']}")
        if "temperature" in d.attrs:
            attrs.append(f"temperature={d.attrs['temperature']!r}")
        return f"{ns}_{n}[{', '.join(attrs)}]" if attrs else f"{ns}_{n}"

    def lexeme(self, text: str, ign: str) -> str:
        return f"({text} {ign})" if ign else text

    def expr(self, p: _Parser, ns: str, e: Any, ign: str, terminal: bool) -> str:
        k = e[0]
        if k == "seq":
            if not e[1]:
                return '""'
            return "(" + " ".join(self.expr(p, ns, x, ign, terminal) for x in e[1]) + ")"
        if k == "alt":
            return "(" + " | ".join(self.expr(p, ns, x, ign, terminal) for x in e[1]) + ")"
        if k == "rep":
            inner = self.expr(p, ns, e[1], ign, terminal)
            lo, hi = e[2], e[3]
            if (lo, hi) == (0, 1):
                return f"{inner}?"
            if (lo, hi) == (0, None):
                return f"{inner}*"
            if (lo, hi) == (1, None):
                return f"{inner}+"
            if hi == 0:
                return '""'
            return f"{inner}{{{lo},{'' if hi is None else hi}}}"
        if k == "lit":
            s, ci = e[1], e[2]
            if not ci:
                return self.lexeme(_lit(s), ign)
            parts = []
            for ch in s:
                if ch.isalpha():
                    parts.append(f"[{ch.lower()}{ch.upper()}]")
                else:
                    parts.append(_lit(ch))
            return self.lexeme("(" + " ".join(parts) + ")" if parts else '""', ign)
        if k == "range":
            return self.lexeme(f"[{_cp(e[1])}-{_cp(e[2])}]", ign)
        if k == "regex":
            flags = e[2].replace("u", "") + "u"
            return self.lexeme(f'Regex({_lit(e[1])}, flags="{flags}")', ign)
        if k == "name":
            d = p.defs[e[1]]
            lexeme = d.terminal or bool(d.attrs.get("lazy")) or _hot_lexeme(p, d)
            return self.lexeme(f"{ns}_{e[1]}", ign) if lexeme else f"{ns}_{e[1]}"
        if k == "substring":
            chunks = [c for c in e[1] if c]
            body = "Substring(" + ", ".join(_lit(c) for c in chunks) + ")" if chunks else '""'
            return self.lexeme(body, ign)
        if k == "tokens":
            excluded, ids, at = e[1], e[2], e[3]
            if ids is None:
                if self.tokenizer_info is None:
                    raise LarkDialectError(at, "wildcard special token requires tokenizer_info")
                body = "ExcludeToken()"
            else:
                body = ("ExcludeToken(" if excluded else "Token(") + ", ".join(map(str, ids)) + ")"
            return self.lexeme(body, ign)
        if k == "named_token":
            text, at = e[1], e[2]
            if self.tokenizer_info is None:
                raise LarkDialectError(at, f"named special token {text} requires tokenizer_info")
            vocab = self.tokenizer_info.decoded_vocab
            ids = [i for i, tok in enumerate(vocab) if tok == text.encode("utf-8")]
            if not ids:
                raise LarkDialectError(at, f"unknown special token {text}", _GRAMMAR)
            return self.lexeme("Token(" + ", ".join(map(str, ids)) + ")", ign)
        if k == "json":
            from .grammar import Grammar
            try:
                g = Grammar.from_json_schema(e[1])
            except Exception as x:  # any refusal of the schema, reported where %json is
                raise LarkDialectError(e[2], f"failed to compile inline JSON schema: {x}",
                                       _GRAMMAR) from None
            return self.lexeme(self.part(g), ign)
        if k == "lark":
            self.nns += 1
            return self.lexeme(self.grammar(e[1], f"{ns}_n{self.nns}"), ign)
        if k == "grammar":
            return self.lexeme(self.named_grammar(e[1], e[2]), ign)
        raise AssertionError(k)

    def part(self, g: Any) -> str:
        name = f"gmx_part{len(self.parts)}"
        self.parts.append((name, g))
        self.rules.append(f'{name} ::= ""')
        return name

    def named_grammar(self, name: str, at: int) -> str:
        if name in self.named_done:
            return self.named_done[name]
        if name not in self.named:
            raise LarkDialectError(at, f"unknown named grammar '@{name}'", _GRAMMAR)
        if name in self.stack:
            chain = " -> ".join("@" + n for n in self.stack[self.stack.index(name):] + (name,))
            raise LarkDialectError(at, f"circular named grammar reference: {chain}", _GRAMMAR)
        value = self.named[name]
        text = value if isinstance(value, str) else _lark_text_of(value)
        if text is not None:
            sub = _Parser(text).parse()
            sub.check()
            saved = self.stack
            self.stack = self.stack + (name,)
            self.nns += 1
            ref = self.grammar(sub, f"g_{name}_{self.nns}")
            self.stack = saved
        else:
            ref = self.part(value)
        self.named_done[name] = ref
        return ref


def _lark_text_of(g: Any) -> Optional[str]:
    spec = getattr(g, "_spec", None) or {}
    if spec.get("from") == "lark" and isinstance(spec.get("text"), str):
        return spec["text"]
    return None


def parse(text: str) -> _Parser:
    """Parses and checks text; raises the located error XGrammar raises."""
    try:
        p = _Parser(text).parse()
        p.check()
        return p
    except LarkDialectError as e:
        raise located_error(text, e.pos, e.message, e.code) from None


def to_ebnf(text: str, p: _Parser, named: Dict[str, Any],
            tokenizer_info: Any) -> Tuple[str, List[Tuple[str, Any]], Optional[float]]:
    """The EBNF of a parsed grammar, the grammars to link into its placeholders, and
    the grammar's temperature (``start[temperature=t]``; None if none)."""
    em = _Emitter(named, tokenizer_info, ())
    try:
        start = em.grammar(p, "L")
    except LarkDialectError as e:
        raise located_error(text, e.pos, e.message, e.code) from None
    return "\n".join([f"root ::= {start}"] + em.rules) + "\n", em.parts, em.temperature


def _check_named(named: Any) -> Dict[str, Any]:
    from .grammar import Grammar
    if named is None:
        return {}
    if not isinstance(named, dict):
        raise TypeError("named_grammars must be a dictionary of names to grammars")
    for k, v in named.items():
        if not isinstance(k, str):
            raise TypeError("named_grammars names must be strings")
        if not isinstance(v, (Grammar, str)):
            raise TypeError("named_grammars values must be Grammar instances or Lark strings")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise GrammarError(f"Invalid named grammar name '{k}': names are letters, digits "
                               "and underscores, not starting with a digit", _GRAMMAR)
    return named


def from_xgrammar_lark(text: str, tokenizer_info: Any, named_grammars: Any,
                      exact: bool = True) -> Any:
    """Grammar.from_lark without gramask's own options: None when the text is plain Lark
    that the LALR engine takes (the caller builds it there), else the Earley grammar.
    exact (from_lark): only where XGrammar's reading is Lark's (_lark_reads_it_so);
    GrammarCompiler.compile_lark, gramask's own, passes False: plain Lark stays Lark's."""
    from . import _core
    from .errors import GramaskError
    from .grammar import Grammar
    named = _check_named(named_grammars)
    p = parse(text)
    if not p.extended and not named and (not exact or _lark_reads_it_so(p)):
        try:
            _core.grammar_create(text, None, format=_core.FORMAT_LARK).close()
            return None
        except GramaskError:
            pass  # not LALR(1), or beyond gramask's Lark: XGrammar's reading below
    ebnf, parts, temperature = to_ebnf(text, p, named, tokenizer_info)
    return link(ebnf, parts, text, temperature)


def as_earley(g: Any) -> Any:
    """For Grammar.union/concat, which combine grammars of the Earley engine: a grammar
    that Grammar.from_lark (XGrammar's API, no gramask option) kept on the LALR engine, as
    XGrammar reads its text there; any other grammar, itself (gramask's own Lark keeps
    Lark's reading, which only the LALR engine has: the C library refuses to combine it)."""
    spec = getattr(g, "_spec", None) or {}
    own = any(spec.get(k) for k in ("start", "name", "lark_conflicts", "no_file_imports",
                                    "lark_reading"))
    if spec.get("from") != "lark" or own or spec.get("lexer", "basic") != "basic":
        return g
    text = spec["text"]
    ebnf, parts, temperature = to_ebnf(text, parse(text), {}, None)
    return link(ebnf, parts, text, temperature)


def _lark_reads_it_so(p: _Parser) -> bool:
    """Whether Lark's reading of a plain Lark text (the LALR engine's) is XGrammar's as far
    as the text shows: no %ignore (Lark skips ignored text before the first lexeme too,
    XGrammar only after each lexeme unless allow_initial_skip: " ab" is Lark's, not
    XGrammar's) and no literal escape that Lark reads as two characters ("\\b")."""
    return not p.ignores and not p.lark_escapes


def link(ebnf: str, parts: List[Tuple[str, Any]], lark_text: str,
         temperature: Optional[float] = None) -> Any:
    """The grammar of ebnf with each placeholder rule's body replaced by a grammar."""
    from . import _core
    from .grammar import Grammar
    spec = {"from": "lark_xgr", "text": ebnf, "lark": lark_text,
            "parts": [[name, g._spec] for name, g in parts], "temperature": temperature}
    if not parts:
        handle = _core.grammar_create(ebnf, None, format=_core.FORMAT_EBNF, start="root")
    else:
        main = _core.grammar_create(ebnf, None, format=_core.FORMAT_EBNF, start="root")
        handle = _core.grammar_link(main, [n for n, _ in parts], [g._handle for _, g in parts])
        main.close()
    g = Grammar(handle, "lark", spec)
    g._temperature = temperature
    return g


def from_spec(spec: Dict[str, Any]) -> Any:
    from .grammar import grammar_from_spec
    parts = [(name, grammar_from_spec(s)) for name, s in spec.get("parts", [])]
    return link(spec["text"], parts, spec.get("lark", ""), spec.get("temperature"))
