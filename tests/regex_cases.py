#!/usr/bin/env python3
"""Differential cases for gramask's regex compiler, with Python's re as the oracle.

Prints, for every regex in REGEXES (Lark's common terminals, programming-language
tokens, and one or more regexes per syntax feature), a line

    P <flags or -> <pattern as hex UTF-8>   [name]

followed by generated inputs, each with the truth of re.fullmatch:

    T <1|0> <input as hex bytes>

Inputs are generated from the regex's own parse tree (matching candidates),
mutated (deletions, insertions, substitutions, truncation), and drawn at random
from a character pool, so about half of them match. Each matching string is also
damaged at the byte level (cut inside a multi-byte character, ill-formed UTF-8
inserted: overlongs, surrogates, values above U+10FFFF, stray continuation and
invalid bytes); those byte strings are not UTF-8 and must never match.

The generator is deterministic (fixed seed). Non-ASCII characters come from
POOL: characters whose Unicode properties are the same in Python 3.11's Unicode
14 and in the utf8proc of Debian 12 (Unicode 15). The C side (test_regex_diff)
checks that claim for every pool character (category and case key) before it
compares anything, so a different utf8proc fails loudly instead of silently.

Usage: regex_cases.py [--pool]   (--pool prints only the pool check lines)
"""
import random
import re
import sys
import unicodedata
import warnings

import _sre
import re._casefix as _casefix
import re._constants as C
import re._parser as P

warnings.simplefilter("ignore")

SEED = 20240611
PER_REGEX = 40

# Characters the generator may use beyond what a regex mentions.
POOL_NON_ASCII = (
    "\u00e9\u00df\u00ff\u00b5\u03b1\u03a3\u03c2\u03c3\u0416\u0436\u0449\u4e2d\u6587"
    "\u0663\u0969\uff21\uff41\u00c0\u00e0\u01c5\u01c4\u01c6\U0001f600\u0301\u200d\u00a0"
    "\u2028\u1680\u3000\u212a\u017f\u0131\u0130\ufb05\ufb06\u1e9e\U00010400\U00010428"
    "\U0001d400\u0378\ue000\uffff\U0010ffff\u00b2\u2160\u2170\u0660\u24d0\u24b6\u1c80"
    "\u0432\u0390\u1fd3\u0345\u03b9\u1fbe\u00aa\u00ba\u02b0\u05d0\u0e01\u1100\uac00"
    "\U00020000\u2000\u202f\u0085\u001c\u00d7\u00f7\u2019\u201c\u20ac\u00a7\u0394\u03b4"
    "\u0100\u0101\u00c9\u00d6\u00f6\u00dc\u00fc\u015f\u015e\u011f\u011e\u00e7\u00c7"
    "\u0391\u1f00\u1f08\u0410\u0430\u042f\u044f\u0401\u0451\u00c5\u00e5\u212b\u03a9\u2126"
)
POOL_ASCII = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x7f"]
POOL = POOL_ASCII + list(POOL_NON_ASCII)

# (name, pattern, flags). Flags as in Lark's /.../flags.
REGEXES = [
    # ---- Lark's common.lark, as the regexes Lark builds from it ----
    ("common.DIGIT", r"[0-9]", ""),
    ("common.HEXDIGIT", r"(?:[a-f]|[A-F]|[0-9])", ""),
    ("common.INT", r"(?:[0-9])+", ""),
    ("common.SIGNED_INT", r"(?:(?:\+|\-))?(?:[0-9])+", ""),
    ("common.DECIMAL", r"(?:(?:[0-9])+\.(?:(?:[0-9])+)?|\.(?:[0-9])+)", ""),
    ("common._EXP", r"(?:e|E)(?:(?:\+|\-))?(?:[0-9])+", ""),
    ("common.FLOAT", r"(?:(?:[0-9])+(?:e|E)(?:(?:\+|\-))?(?:[0-9])+|(?:(?:[0-9])+\.(?:(?:[0-9])+)?|\.(?:[0-9])+)(?:(?:e|E)(?:(?:\+|\-))?(?:[0-9])+)?)", ""),
    ("common.SIGNED_FLOAT", r"(?:(?:\+|\-))?(?:(?:[0-9])+(?:e|E)(?:[+\-])?(?:[0-9])+|(?:(?:[0-9])+\.(?:(?:[0-9])+)?|\.(?:[0-9])+)(?:(?:e|E)(?:[+\-])?(?:[0-9])+)?)", ""),
    ("common.NUMBER", r"(?:(?:[0-9])+(?:e|E)(?:[+\-])?(?:[0-9])+|(?:(?:[0-9])+\.(?:(?:[0-9])+)?|\.(?:[0-9])+)(?:(?:e|E)(?:[+\-])?(?:[0-9])+)?|(?:[0-9])+)", ""),
    ("common.SIGNED_NUMBER", r"(?:[+\-])?(?:(?:[0-9])+(?:e|E)(?:[+\-])?(?:[0-9])+|(?:(?:[0-9])+\.(?:(?:[0-9])+)?|\.(?:[0-9])+)(?:(?:e|E)(?:[+\-])?(?:[0-9])+)?|(?:[0-9])+)", ""),
    ("common._STRING_INNER", r".*?", ""),
    ("common.ESCAPED_STRING(munch-safe)", r'"(?:[^"\\\n]|\\.)*"', ""),
    ("common.LCASE_LETTER", r"[a-z]", ""),
    ("common.UCASE_LETTER", r"[A-Z]", ""),
    ("common.LETTER", r"(?:[A-Z]|[a-z])", ""),
    ("common.WORD", r"(?:(?:[A-Z]|[a-z]))+", ""),
    ("common.CNAME", r"(?:_|(?:[A-Z]|[a-z]))(?:_|(?:[A-Z]|[a-z])|[0-9])*", ""),
    ("common.WS_INLINE", r"(?:(?:\ |\t))+", ""),
    ("common.WS", r"(?:[ \t\f\r\n])+", ""),
    ("common.CR", r"\r", ""),
    ("common.LF", r"\n", ""),
    ("common.NEWLINE", r"(?:(?:\r)?\n)+", ""),
    ("common.SH_COMMENT", r"#[^\n]*", ""),
    ("common.CPP_COMMENT", r"//[^\n]*", ""),
    ("common.C_COMMENT", r"/\*(?:.|\n)*?\*/", ""),
    ("common.C_COMMENT(s)", r"/\*.*?\*/", "s"),
    ("common.SQL_COMMENT", r"--[^\n]*", ""),
    # ---- identifiers ----
    ("ident.ascii", r"[A-Za-z_][A-Za-z0-9_]*", ""),
    ("ident.unicode", r"[^\W\d]\w*", ""),
    ("ident.unicode_ascii_flag", r"[^\W\d]\w*", "a"),
    ("ident.java", r"[a-zA-Z_$][a-zA-Z0-9_$]*", ""),
    ("ident.java_unicode", r"[^\W\d]|[$]", ""),
    ("ident.java_unicode_full", r"(?:[^\W\d]|\$)(?:\w|\$)*", ""),
    ("ident.go", r"(?:[^\W\d]|_)(?:\w)*", ""),
    ("ident.css", r"-?(?:[_a-zA-Z]|[^\x00-\x7f])(?:[_a-zA-Z0-9-]|[^\x00-\x7f])*", ""),
    ("ident.lisp", r"[a-zA-Z!$%&*/:<=>?^_~][a-zA-Z0-9!$%&*/:<=>?^_~+.@-]*", ""),
    ("ident.kebab", r"[a-z]+(?:-[a-z]+)*", ""),
    ("ident.dotted", r"\w+(?:\.\w+)*", ""),
    ("ident.upper_const", r"[A-Z][A-Z0-9_]*", ""),
    ("ident.rust_raw", r"r#[A-Za-z_]\w*", ""),
    ("ident.at_annotation", r"@\w+(?:\.\w+)*", ""),
    ("ident.sql_quoted", r'"(?:[^"]|"")*"', ""),
    ("ident.backtick", r"`[^`\n]+`", ""),
    ("ident.php_var", r"\$[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*", ""),
    ("ident.xml_name", r"[:A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF][:A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF.0-9\u00B7\u0300-\u036F\u203F-\u2040-]*", ""),
    # ---- integers in every base ----
    ("int.dec", r"0|[1-9][0-9]*", ""),
    ("int.dec_underscore", r"(?:0(?:_?0)*|[1-9](?:_?[0-9])*)", ""),
    ("int.hex", r"0[xX][0-9a-fA-F]+", ""),
    ("int.hex_underscore", r"0[xX](?:_?[0-9a-fA-F])+", ""),
    ("int.oct_c", r"0[0-7]*", ""),
    ("int.oct_py", r"0[oO](?:_?[0-7])+", ""),
    ("int.bin", r"0[bB](?:_?[01])+", ""),
    ("int.java_long", r"(?:0|[1-9](?:[0-9_]*[0-9])?)[lL]?", ""),
    ("int.java_hex_long", r"0[xX][0-9a-fA-F](?:[0-9a-fA-F_]*[0-9a-fA-F])?[lL]?", ""),
    ("int.c_suffix", r"(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?", ""),
    ("int.rust", r"(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?", ""),
    ("int.go", r"0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO]?(?:_?[0-7])+|[1-9](?:_?[0-9])*|0", ""),
    ("int.signed", r"[+-]?\d+", ""),
    ("int.signed_ascii", r"[+-]?\d+", "a"),
    ("int.unicode_digits", r"\d+", ""),
    ("int.non_digits", r"\D+", ""),
    ("int.roman", r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})", ""),
    ("int.roman_i", r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})", "i"),
    # ---- floats ----
    ("float.py", r"(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*\.(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[0-9](?:_?[0-9])*[eE][+-]?[0-9](?:_?[0-9])*", ""),
    ("float.imag", r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[jJ]", "a"),
    ("float.java", r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?|[0-9]+(?:[eE][+-]?[0-9]+[fFdD]?|[fFdD])", ""),
    ("float.hex", r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFlL]?", ""),
    ("float.json", r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", ""),
    ("float.go", r"(?:\d(?:_?\d)*\.(?:\d(?:_?\d)*)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*[eE][+-]?\d(?:_?\d)*", "a"),
    ("float.special", r"[+-]?(?:inf|nan|infinity)", "i"),
    ("float.percent", r"\d{1,3}(?:\.\d{1,2})?%", "a"),
    ("float.currency", r"\$\d{1,3}(?:,\d{3})*(?:\.\d{2})?", "a"),
    ("float.sci_compact", r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", "a"),
    # ---- strings ----
    ("str.dq_escapes", r'"(?:[^"\\]|\\.)*"', ""),
    ("str.dq_escapes_s", r'"(?:[^"\\]|\\.)*"', "s"),
    ("str.sq_escapes", r"'(?:[^'\\\n]|\\.)*'", ""),
    ("str.json", r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"', ""),
    ("str.c_char", r"'(?:[^'\\\n]|\\(?:[abfnrtv'\"?\\]|[0-7]{1,3}|x[0-9a-fA-F]+))'", ""),
    ("str.java_char", r"'(?:[^'\\\r\n]|\\(?:[btnfr\"'\\]|[0-3]?[0-7]{1,2}|u+[0-9a-fA-F]{4}))'", ""),
    ("str.py_short", r"[rRbBuUfF]{0,2}(?:'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")", ""),
    ("str.py_triple", r'"""(?:[^"\\]|\\.|"[^"\\]|""[^"\\])*"""', "s"),
    ("str.py_raw", r"[rR]'[^'\n]*'", ""),
    ("str.go_raw", r"`[^`]*`", ""),
    ("str.go_rune", r"'(?:[^'\\\n]|\\(?:[abfnrtv\\']|[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))'", ""),
    ("str.js_template", r"`(?:[^`\\$]|\\.|\$[^{`\\])*`", "s"),
    ("str.rust_byte", r"b'(?:[^'\\]|\\[nrt\\0'\"]|\\x[0-7][0-9a-fA-F])'", ""),
    ("str.sql", r"'(?:[^']|'')*'", ""),
    ("str.heredoc_marker", r"<<-?[A-Z_]+", ""),
    ("str.java_text_block", r'"""[ \t\f]*\n(?:[^"\\]|\\.|"[^"]|""[^"])*"""', "s"),
    ("str.css_url", r"url\((?:[^()\\\s]|\\.)*\)", "i"),
    ("str.nonascii_only", r"[^\x00-\x7f]+", ""),
    ("str.quoted_unicode_letters", r"«[^»]*»", ""),
    # ---- comments ----
    ("comment.c_block", r"/\*(?:[^*]|\*+[^*/])*\*+/", ""),
    ("comment.c_block_lazy", r"/\*[\s\S]*?\*/", ""),
    ("comment.line_slash", r"//.*", ""),
    ("comment.line_hash", r"#.*", ""),
    ("comment.line_semicolon", r";[^\n\r]*", ""),
    ("comment.html", r"<!--(?:[^-]|-[^-]|--+[^->])*-*-->", ""),
    ("comment.lua_block", r"--\[\[(?:[^\]]|\][^\]])*\]\]", ""),
    ("comment.ocaml_flat", r"\(\*(?:[^*]|\*+[^*)])*\*+\)", ""),
    ("comment.doc_java", r"/\*\*(?:[^*]|\*+[^*/])*\*+/", ""),
    ("comment.nested_looking", r"\{-(?:[^-]|-+[^-}])*-+\}", ""),
    ("comment.rem", r"REM [^\n]*", "i"),
    ("comment.python_line", r"#[^\r\n]*", ""),
    ("comment.shebang", r"#![^\n]*\n?", ""),
    # ---- whitespace / layout ----
    ("ws.spaces", r"[ \t]+", ""),
    ("ws.unicode", r"\s+", ""),
    ("ws.unicode_ascii", r"\s+", "a"),
    ("ws.non_space", r"\S+", ""),
    ("ws.newline_indent", r"(?:\r?\n[\t ]*)+", ""),
    ("ws.py_newline", r"(?:\r?\n[\t ]*|#[^\n]*)+", ""),
    ("ws.line_continuation", r"\\[\t \f]*\r?\n", ""),
    ("ws.blank_lines", r"\n(?:[ \t]*\n)*", ""),
    # ---- operators and punctuation ----
    ("op.c_ops", r"->|\+\+|--|<<=|>>=|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>=?:]=?|[(){}\[\];,.]", ""),
    ("op.shift", r">>>?=?|<<=?", ""),
    ("op.arrow", r"=>|->|<-|::", ""),
    ("op.ellipsis", r"\.\.\.|\.\.=?", ""),
    ("op.go_ops", r"&\^=?|<-|:=|\.\.\.|[+\-*/%&|^<>=!]=?|&&|\|\||\+\+|--|<<=?|>>=?", ""),
    ("op.py_ops", r"\*\*=?|//=?|->|:=|[-+*/%@&|^<>=!]=|[-+*/%@&|^~<>]", ""),
    ("op.brackets", r"[\[\](){}]", ""),
    ("op.any_punct", r"[!-/:-@\[-`{-~]+", ""),
    # ---- keywords and alternations ----
    ("kw.c", r"auto|break|case|char|const|continue|default|do|double|else|enum|extern|float|for|goto|if|inline|int|long|register|restrict|return|short|signed|sizeof|static|struct|switch|typedef|union|unsigned|void|volatile|while", ""),
    ("kw.py_soft", r"match|case|_|type", ""),
    ("kw.sql_i", r"select|from|where|group\s+by|order\s+by|insert\s+into|values", "i"),
    ("kw.bool", r"true|false|null", ""),
    ("kw.bool_i", r"true|false|null|none|nil", "i"),
    ("kw.prefix_shared", r"int|integer|interface|internal|into", ""),
    ("kw.java_modifiers", r"(?:public|protected|private|static|final|abstract|synchronized|native|transient|volatile|strictfp)(?:\s+(?:public|protected|private|static|final))*", ""),
    ("kw.unicode_words", r"für|über|naïve|café|señor|Ελλάδα|москва", ""),
    ("kw.unicode_words_i", r"für|über|naïve|café|señor|Ελλάδα|москва", "i"),
    # ---- structured tokens ----
    ("tok.email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", ""),
    ("tok.url", r"https?://[A-Za-z0-9.-]+(?::\d+)?(?:/[^\s?#]*)?(?:\?[^\s#]*)?(?:#\S*)?", ""),
    ("tok.ipv4", r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)", "a"),
    ("tok.ipv6_simple", r"(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}", ""),
    ("tok.uuid", r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", "i"),
    ("tok.date", r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])", "a"),
    ("tok.time", r"(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?", "a"),
    ("tok.iso8601", r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})", "a"),
    ("tok.semver", r"(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?", "a"),
    ("tok.hex_color", r"#(?:[0-9a-fA-F]{3}){1,2}", ""),
    ("tok.css_length", r"-?\d*\.?\d+(?:px|em|rem|%|vh|vw|pt)?", "a"),
    ("tok.phone", r"\+?\d{1,3}[-. ]?\(?\d{3}\)?[-. ]?\d{3}[-. ]?\d{4}", "a"),
    ("tok.path_unix", r"(?:/[^/\0\n]+)+/?", ""),
    ("tok.path_windows", r"[A-Za-z]:\\(?:[^\\/:*?\"<>|\r\n]+\\)*[^\\/:*?\"<>|\r\n]*", ""),
    ("tok.regex_literal", r"/(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[gimsuy]*", ""),
    ("tok.html_tag", r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s+[a-zA-Z-]+(?:=\"[^\"]*\")?)*\s*/?>", ""),
    ("tok.xml_entity", r"&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);", ""),
    ("tok.markdown_heading", r"#{1,6} [^\n]+", ""),
    ("tok.base64", r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", ""),
    ("tok.jwt", r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*", ""),
    ("tok.mac", r"(?:[0-9A-F]{2}:){5}[0-9A-F]{2}", "i"),
    ("tok.git_sha", r"[0-9a-f]{7,40}", ""),
    ("tok.tool_call_tag", r"<\|(?:start|end|channel|message|call)\|>", ""),
    ("tok.placeholder", r"\{\{\s*[a-z_]+\s*\}\}", ""),
    # ---- escapes ----
    ("esc.hex", r"\x41\x42[\x30-\x39]+", ""),
    ("esc.unicode4", r"\u00e9\u4e2d+", ""),
    ("esc.unicode8", r"\U0001F600|\U00010400+", ""),
    ("esc.octal", r"\0\01\012\101\141", ""),
    ("esc.octal_class", r"[\101-\132\0]+", ""),
    ("esc.controls", r"[\a\b\f\n\r\t\v]+", ""),
    ("esc.metachars", r"\.\*\+\?\(\)\[\]\{\}\|\^\$\\", ""),
    ("esc.punct", r"\-\!\@\#\%\&\=\<\>\,\;\:\'\"\/\`\~", ""),
    ("esc.nonascii_escaped", "\\\u00e9\\\u4e2d", ""),
    ("esc.max_cp", r"[\U0010FFFF]", ""),
    ("esc.zero", r"a\0b", ""),
    ("esc.tab_nl_class", r"[^\t\n]+", ""),
    # ---- dot ----
    ("dot.plain", r".", ""),
    ("dot.dotall", r".", "s"),
    ("dot.many", r"a.*b", ""),
    ("dot.many_s", r"a.*b", "s"),
    ("dot.two", r"..", ""),
    ("dot.three_nonascii", r"x...y", ""),
    # ---- classes ----
    ("class.ranges", r"[a-cx-zA-C0-2]+", ""),
    ("class.negated", r"[^a-z]+", ""),
    ("class.negated_nonascii", r"[^é中😀]+", ""),
    ("class.nonascii_ranges", r"[α-ωА-я]+", ""),
    ("class.cjk", r"[\u4e00-\u9fff]+", ""),
    ("class.astral", r"[\U00010000-\U0001FFFF]+", ""),
    ("class.astral_negated", r"[^\U00010000-\U0010FFFF]+", ""),
    ("class.bmp_boundary", r"[\uffff\U00010000]+", ""),
    ("class.utf8_boundaries", r"[\x7f\x80\u07ff\u0800\uffff\U00010000\U0010ffff]+", ""),
    ("class.utf8_len_ranges", r"[\x70-\u0810]+", ""),
    ("class.utf8_span_all", r"[\x00-\U0010ffff]", ""),
    ("class.surrogate_range", r"[\ud7ff-\ue000]+", ""),
    ("class.only_surrogates_or_a", r"a[\ud800-\udfff]?", ""),
    ("class.bracket_first", r"[]a]+", ""),
    ("class.negated_bracket_first", r"[^]a]+", ""),
    ("class.dash_first_last", r"[-a]+[a-]+", ""),
    ("class.escapes_mixed", r"[\w.-]+", ""),
    ("class.escapes_mixed_ascii", r"[\w.-]+", "a"),
    ("class.not_word_or_digit", r"[\W\d]+", ""),
    ("class.not_not_word", r"[^\W]+", ""),
    ("class.letters_only", r"[^\W\d_]+", ""),
    ("class.space_or_punct", r"[\s,;]+", ""),
    ("class.negated_space", r"[^\s]+", ""),
    ("class.negated_digit_word", r"[^\d\s]+", ""),
    ("class.caret_literal", r"[a^]+", ""),
    ("class.brackets_in", r"[[\]]+", ""),
    ("class.backslash", r"[\\/]+", ""),
    ("class.dash_range", r"[--a]+", ""),
    ("class.negated_newline_only", r"[^\n]*", ""),
    ("class.single_negated", r"[^x]", ""),
    ("class.single_negated_i", r"[^k]", "i"),
    ("class.empty_look", r"[^\s\S]?a", ""),
    ("class.all", r"[\s\S]*", ""),
    ("class.all_w", r"[\w\W]{2}", ""),
    ("class.digits_unicode_negated", r"[^\d]+", ""),
    ("class.D_in_class", r"[\D]+", ""),
    ("class.D_ascii", r"[\D]+", "a"),
    ("class.S_in_class", r"[\S]+", ""),
    ("class.W_in_class", r"[\W]+", ""),
    ("class.W_ascii", r"[\W]+", "a"),
    ("class.latin1", r"[\x80-\xff]+", ""),
    ("class.latin1_negated", r"[^\x00-\xff]+", ""),
    # ---- alternation and groups ----
    ("alt.empty_branch", r"a(?:|b)c", ""),
    ("alt.empty_both", r"(|)", ""),
    ("alt.nested", r"(?:a(?:b|c(?:d|e)))|f", ""),
    ("alt.named", r"(?P<first>\w+)\s(?P<second>\d+)", ""),
    ("alt.capture", r"(a)(b(c))", ""),
    ("alt.comment", r"a(?#this is a comment)b", ""),
    ("alt.comment_escaped_paren", r"a(?#x\)y)b", ""),
    ("alt.empty_group_repeat", r"a(?:)*b", ""),
    ("alt.common_prefix", r"abc|abd|ab", ""),
    ("alt.unicode_branches", r"é|e\u0301|ë", ""),
    # ---- quantifiers ----
    ("rep.star", r"a*", ""),
    ("rep.plus", r"(?:ab)+", ""),
    ("rep.opt", r"colou?r", ""),
    ("rep.exact", r"a{3}", ""),
    ("rep.range", r"a{2,4}", ""),
    ("rep.atleast", r"(?:ab){2,}", ""),
    ("rep.atmost", r"a{,3}b", ""),
    ("rep.open_both", r"a{,}b", ""),
    ("rep.zero", r"a{0}b", ""),
    ("rep.zero_zero", r"(?:xy){0,0}z", ""),
    ("rep.nested", r"(?:a{2}){3}", ""),
    ("rep.nested_stars", r"(?:a*)*b", ""),
    ("rep.nested_plus_opt", r"(?:a+)?b", ""),
    ("rep.set_range", r"[a-c]{2,5}", ""),
    ("rep.unicode", r"é{2,3}中?", ""),
    ("rep.astral", r"😀{2}", ""),
    ("rep.lazy_star", r"a*?", ""),
    ("rep.lazy_plus", r"<.+?>", ""),
    ("rep.lazy_range", r"a{2,4}?b", ""),
    ("rep.lazy_opt", r"ab??c", ""),
    ("rep.possessive_disjoint", r"[a-z]*+\d", ""),
    ("rep.possessive_plus", r"\d++x", ""),
    ("rep.possessive_range", r"a{1,3}+b", ""),
    ("rep.brace_literal", r"a{", ""),
    ("rep.brace_literal2", r"a{x}", ""),
    ("rep.brace_literal3", r"a{1,x}", ""),
    ("rep.brace_close_literal", r"x}", ""),
    ("rep.brace_empty", r"a{}", ""),
    ("rep.brace_comma_space", r"a{1, 2}", ""),
    ("rep.counted_class", r"\d{3}-\d{4}", "a"),
    ("rep.big", r"a{100}", ""),
    ("rep.big_range", r"[ab]{10,20}", ""),
    ("rep.after_comment", r"a(?#c)*", ""),
    ("rep.group_repeat_nullable", r"(?:a|)+b", ""),
    # ---- flags ----
    ("flag.i_ascii", r"hello", "i"),
    ("flag.i_class", r"[a-f]+", "i"),
    ("flag.i_negated_class", r"[^a-f]+", "i"),
    ("flag.i_kelvin", r"k+", "i"),
    ("flag.i_kelvin_ascii", r"k+", "ia"),
    ("flag.i_long_s", r"s+", "i"),
    ("flag.i_sigma", r"σ+", "i"),
    ("flag.i_final_sigma", r"ς", "i"),
    ("flag.i_dotless", r"i", "i"),
    ("flag.i_dotted_capital", r"\u0130", "i"),
    ("flag.i_sharp_s", r"ß", "i"),
    ("flag.i_capital_sharp_s", r"\u1e9e", "i"),
    ("flag.i_st_ligature", r"\ufb05", "i"),
    ("flag.i_iota", r"\u0345", "i"),
    ("flag.i_micro", r"µ", "i"),
    ("flag.i_dz", r"\u01c5", "i"),
    ("flag.i_deseret", r"\U00010400+", "i"),
    ("flag.i_ohm", r"ω", "i"),
    ("flag.i_angstrom", r"å", "i"),
    ("flag.i_cyrillic_ve", r"в", "i"),
    ("flag.i_greek_range", r"[α-ω]+", "i"),
    ("flag.i_cyrillic_range", r"[а-я]+", "i"),
    ("flag.i_astral_range", r"[\U00010428-\U0001044f]+", "i"),
    ("flag.i_mixed_class", r"[a\W]+", "i"),
    ("flag.i_word", r"\w+", "i"),
    ("flag.i_circled", r"ⓐ", "i"),
    ("flag.i_roman", r"\u2170", "i"),
    ("flag.i_fullwidth", r"ａ+", "i"),
    ("flag.i_latin1_range", r"[\xc0-\xde]+", "i"),
    ("flag.i_ascii_flag_latin1", r"[\xc0-\xde]+", "ia"),
    ("flag.i_literal_string", r"Straße", "i"),
    ("flag.s_dot", r"a.b", "s"),
    ("flag.m_noop", r"a.b", "m"),
    ("flag.x_verbose", "a b  c # comment\n d", "x"),
    ("flag.x_escaped_space", r"a\ b", "x"),
    ("flag.x_class_space", r"[ ]+x", "x"),
    ("flag.x_quantifier_space", r"a *", "x"),
    ("flag.x_brace_space", r"a{1, 2}", "x"),
    ("flag.x_multiline", "(?:\n  \\d+   # digits\n  | [a-z]+ # letters\n)", "x"),
    ("flag.x_hash_in_class", r"[#a]+", "x"),
    ("flag.u_explicit", r"\w+", "u"),
    ("flag.a_word", r"\w+", "a"),
    ("flag.a_space", r"\s", "a"),
    ("flag.a_digit", r"\d", "a"),
    ("flag.inline_i", r"(?i)abc", ""),
    ("flag.inline_s", r"(?s).", ""),
    ("flag.inline_x", "(?x) a b", ""),
    ("flag.inline_multi", r"(?i)(?s)a.b", ""),
    ("flag.inline_a", r"(?a)\w+", ""),
    ("flag.inline_after_comment", r"(?#c)(?i)x", ""),
    ("flag.inline_applies_to_all_branches", r"(?i)a|b", ""),
    ("flag.scoped_i", r"a(?i:b)c", ""),
    ("flag.scoped_minus_i", r"(?-i:a)b", "i"),
    ("flag.scoped_s", r"(?s:.).", ""),
    ("flag.scoped_minus_s", r"(?-s:.).", "s"),
    ("flag.scoped_x", "(?x: a b )c d", ""),
    ("flag.scoped_minus_x", "(?-x: a)b c", "x"),
    ("flag.scoped_a", r"(?a:\w)\w", ""),
    ("flag.scoped_u", r"(?u:\w)\w", "a"),
    ("flag.scoped_nested", r"(?i:a(?-i:b)c)", ""),
    ("flag.scoped_repeat", r"(?i:ab)+", ""),
    ("flag.scoped_class_i", r"(?i:[a-c])[a-c]", ""),
    ("flag.lark_composed", r"(?:(?i:select)|(?i:from))\s+(?:[A-Za-z_]\w*)", ""),
    ("flag.lark_composed2", r"(?:(?s:/\*.*?\*/)|(?://[^\n]*))", ""),
    ("flag.lark_literal_i", r"(?i:if)|(?i:else)", ""),
]

# Systematic combinations: every atom under every quantifier, with and without i.
_ATOMS = [r"a", r"é", r"中", r"😀", r"[a-c]", r"[^a]", r"\d", r"\w", r"\s", r".", r"(?:ab|c)", r"[é-ë]", r"K"]
_QUANTS = ["", "?", "*", "+", "{2}", "{1,3}"]
for _i, _a in enumerate(_ATOMS):
    for _q in _QUANTS:
        REGEXES.append(("combo.%d%s" % (_i, _q), _a + _q + "x", "i" if (_i + len(_q)) % 3 == 0 else ""))

FLAGS = {"i": re.I, "s": re.S, "m": re.M, "x": re.X, "a": re.A, "u": re.U}


def pyflags(letters):
    f = 0
    for c in letters:
        f |= FLAGS[c]
    return f


class Gen:
    """Random strings from a parsed pattern (re._parser), mostly matching it."""

    def __init__(self, rnd, ascii_only):
        self.rnd = rnd
        self.ascii_only = ascii_only

    def pick_pool(self):
        return self.rnd.choice(POOL)

    def pick_category(self, cat):
        for _ in range(50):
            c = self.pick_pool()
            if self.category_ok(cat, c):
                return c
        return self.pick_pool()

    def category_ok(self, cat, c):
        name = C.CHCODES[cat] if isinstance(cat, int) else cat
        name = str(name)
        pat = {
            "CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D",
            "CATEGORY_SPACE": r"\s", "CATEGORY_NOT_SPACE": r"\S",
            "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W",
        }.get(name)
        if pat is None:
            return True
        return re.fullmatch(pat, c, re.A if self.ascii_only else 0) is not None

    def pick_in(self, items):
        negate = any(op is C.NEGATE for op, _ in items)
        choices = [x for x in items if x[0] is not C.NEGATE]
        if negate or not choices:
            return self.pick_pool()
        op, av = self.rnd.choice(choices)
        if op is C.LITERAL:
            return chr(av)
        if op is C.RANGE:
            lo, hi = av
            c = self.rnd.randint(lo, hi)
            if 0xD800 <= c <= 0xDFFF:
                c = lo if not 0xD800 <= lo <= 0xDFFF else 0x41
            return chr(c)
        if op is C.CATEGORY:
            return self.pick_category(av)
        return self.pick_pool()

    def gen(self, tree, depth=0):
        out = []
        for op, av in tree:
            if op is C.LITERAL:
                c = chr(av)
                if self.rnd.random() < 0.3:
                    c = self.rnd.choice([c.upper(), c.lower(), c.swapcase()])
                out.append(c)
            elif op is C.NOT_LITERAL:
                out.append(self.pick_pool())
            elif op is C.ANY:
                out.append(self.pick_pool() if self.rnd.random() < 0.9 else "\n")
            elif op is C.IN:
                out.append(self.pick_in(av))
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                hi = min(hi, lo + 3)
                n = self.rnd.randint(lo, hi)
                if depth > 6:
                    n = lo
                for _ in range(n):
                    out.append(self.gen(sub, depth + 1))
            elif op is C.SUBPATTERN:
                out.append(self.gen(av[-1], depth + 1))
            elif op is C.ATOMIC_GROUP:
                out.append(self.gen(av, depth + 1))
            elif op is C.BRANCH:
                out.append(self.gen(self.rnd.choice(av[1]), depth + 1))
            else:
                raise ValueError("generator cannot handle %r" % (op,))
        return "".join(out)


def mutate(rnd, s):
    k = rnd.randrange(7)
    if k == 0 and s:
        i = rnd.randrange(len(s))
        return s[:i] + s[i + 1:]
    if k == 1:
        i = rnd.randrange(len(s) + 1)
        return s[:i] + rnd.choice(POOL) + s[i:]
    if k == 2 and s:
        i = rnd.randrange(len(s))
        return s[:i] + rnd.choice(POOL) + s[i + 1:]
    if k == 3 and s:
        return s[: rnd.randrange(len(s))]
    if k == 4:
        return s + rnd.choice(POOL)
    if k == 5 and s:
        i = rnd.randrange(len(s))
        j = rnd.randrange(i, len(s)) + 1
        return s[:j] + s[i:j] + s[j:]
    return "".join(rnd.choice(POOL) for _ in range(rnd.randrange(4)))


BAD_UTF8 = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
            b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
            b"\xfe", b"\xff", b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x98", b"\xc3\xc3\xa9"]


def byte_damage(rnd, s):
    """Ill-formed byte strings derived from s: never UTF-8, so never a match."""
    b = s.encode()
    out = []
    multi = [i for i, ch in enumerate(s) if ord(ch) > 0x7F]
    if multi:
        # Cut inside a multi-byte character (at its end or followed by the rest).
        i = rnd.choice(multi)
        start = len(s[:i].encode())
        n = len(s[i].encode())
        cut = rnd.randrange(1, n)
        out.append(b[: start + cut])
        out.append(b[: start + cut] + b[start + n:])
    i = rnd.randrange(len(b) + 1)
    out.append(b[:i] + rnd.choice(BAD_UTF8) + b[i:])
    return out


def pool_lines():
    """The claim the C side checks: each non-ASCII pool character's category and case key."""
    lines = []
    extra = _casefix._EXTRA_CASES
    for ch in POOL_NON_ASCII:
        cp = ord(ch)
        low = _sre.unicode_tolower(cp)
        key = min((low,) + tuple(extra.get(low, ())))
        lines.append("C %x %s %x" % (cp, unicodedata.category(ch), key))
    return lines


def main():
    rnd = random.Random(SEED)
    out = sys.stdout
    out.write("# generated by tests/regex_cases.py (seed %d): P pattern, T truth input\n" % SEED)
    for line in pool_lines():
        out.write(line + "\n")
    if "--pool" in sys.argv:
        return
    seen = set()
    for name, pattern, flags in REGEXES:
        key = (pattern, flags)
        if key in seen:
            raise SystemExit("duplicate regex %s" % name)
        seen.add(key)
        f = pyflags(flags)
        rx = re.compile(pattern, f)
        tree = P.parse(pattern, f)
        gen = Gen(rnd, bool(f & re.A))
        out.write("P %s %s %s\n" % (flags or "-", pattern.encode().hex(), name))
        cases = {}
        positives = []
        for _ in range(PER_REGEX):
            s = gen.gen(tree)
            if rnd.random() < 0.5:
                s = mutate(rnd, s)
            cases[s.encode()] = rx.fullmatch(s) is not None
            if cases[s.encode()]:
                positives.append(s)
        for _ in range(8):
            s = "".join(rnd.choice(POOL) for _ in range(rnd.randrange(1, 5)))
            cases[s.encode()] = rx.fullmatch(s) is not None
        cases[b""] = rx.fullmatch("") is not None
        for s in positives[:6]:
            for b in byte_damage(rnd, s):
                cases[b] = False
        for b, truth in cases.items():
            out.write("T %d %s\n" % (1 if truth else 0, b.hex()))


if __name__ == "__main__":
    main()
