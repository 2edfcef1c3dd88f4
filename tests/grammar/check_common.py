#!/usr/bin/env python3
"""Differential test of grammars/common.lark against Lark's own common.lark.

usage: check_common.py PATTERNS.json

PATTERNS.json maps each terminal name to the pattern gramask composed for it
({"pattern": str, "literal": bool, "flags": str}), as written by
tests/test_grammar.c. For every terminal and many strings, the token Lark's
lexer takes (Python re.match of Lark's composed regex, lazy quantifiers and
lookbehind included) must have the length of the token maximal munch takes
with gramask's pattern (the longest prefix that re.fullmatch accepts).
Exits 1 and prints the differences otherwise.
"""
import itertools
import json
import random
import re
import sys

# The regexes Lark composes from its common.lark (lark/grammars/common.lark,
# through load_grammar.TerminalTreeToPattern), written out.
D = r'[0-9]'
INT = r'(?:%s)+' % D
SIGNED_INT = r'(?:(?:\+|\-))?' + INT
DECIMAL = r'(?:%s\.(?:%s)?|\.%s)' % (INT, INT, INT)
EXP = r'(?:e|E)' + SIGNED_INT
FLOAT = r'(?:%s%s|%s(?:%s)?)' % (INT, EXP, DECIMAL, EXP)
NUMBER = r'(?:%s|%s)' % (FLOAT, INT)
LETTER = r'(?:[A-Z]|[a-z])'
LARK = {
    'DIGIT': D,
    'HEXDIGIT': r'(?:[a-f]|[A-F]|%s)' % D,
    'INT': INT,
    'SIGNED_INT': SIGNED_INT,
    'DECIMAL': DECIMAL,
    '_EXP': EXP,
    'FLOAT': FLOAT,
    'SIGNED_FLOAT': r'(?:(?:\+|\-))?' + FLOAT,
    'NUMBER': NUMBER,
    'SIGNED_NUMBER': r'(?:(?:\+|\-))?' + NUMBER,
    'ESCAPED_STRING': r'".*?(?<!\\)(\\\\)*?"',
    'LCASE_LETTER': r'[a-z]',
    'UCASE_LETTER': r'[A-Z]',
    'LETTER': LETTER,
    'WORD': r'(?:%s)+' % LETTER,
    'CNAME': r'(?:_|%s)(?:_|%s|%s)*' % (LETTER, LETTER, D),
    'WS_INLINE': r'(?: |\t)+',
    'WS': r'(?:[ \t\f\r\n])+',
    'CR': r'\r',
    'LF': r'\n',
    'NEWLINE': r'(?:(?:\r)?\n)+',
    'SH_COMMENT': r'#[^\n]*',
    'CPP_COMMENT': r'//[^\n]*',
    'C_COMMENT': r'/\*(?s:.*?)\*/',
    'SQL_COMMENT': r'--[^\n]*',
}
# The inner string terminals are lazy and match "" on their own in Lark; they
# are compared inside the quotes they are written for.
WRAPPED = {
    '_STRING_INNER': (r'".*?"', '"%s"'),
    '_STRING_ESC_INNER': (r'".*?(?<!\\)(\\\\)*?"', '"%s"'),
}

ALPHABET = list('0123456789afeExX+-._ "\\\n\r\t\f#/*-Zzç')


def ours(entry, wrap=None):
    pat = re.escape(entry['pattern']) if entry['literal'] else entry['pattern']
    flags = 0
    for f in entry['flags']:
        flags |= {'i': re.I, 's': re.S, 'm': re.M, 'x': re.X, 'u': re.U}[f]
    if wrap:
        pat = '"(?:%s)"' % pat
    return re.compile(pat, flags)


def munch(rx, s):
    """Length of the longest prefix of s that rx matches entirely, or None."""
    for n in range(len(s), -1, -1):
        if rx.fullmatch(s, 0, n):
            return n
    return None


def lark_len(rx, s):
    m = rx.match(s)
    return m.end() if m else None


def strings(seed):
    rng = random.Random(seed)
    for n in range(0, 4):
        for t in itertools.product('0e.+"\\\n*/#-', repeat=n):
            yield ''.join(t)
    for _ in range(6000):
        yield ''.join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 14)))
    # shapes that matter: strings with escapes, comments, numbers
    for _ in range(3000):
        body = ''.join(rng.choice('ab\\"\n *') for _ in range(rng.randint(0, 10)))
        yield rng.choice(['"', '/*', '']) + body + rng.choice(['"', '*/', '', '" x"'])
        yield rng.choice(['', '+', '-']) + ''.join(rng.choice('0123456789.eE+-') for _ in range(rng.randint(1, 10)))


def main():
    with open(sys.argv[1], encoding='utf-8') as f:
        got = json.load(f)
    failures = 0
    checked = 0
    names = sorted(set(LARK) | set(WRAPPED))
    missing = [n for n in names if n not in got]
    if missing:
        print('missing terminals:', missing)
        return 1
    for name in names:
        if name in WRAPPED:
            ref = re.compile(WRAPPED[name][0])
            mine = ours(got[name], wrap=True)
        else:
            ref = re.compile(LARK[name])
            mine = ours(got[name])
        bad = 0
        for s in strings(name):
            checked += 1
            a, b = lark_len(ref, s), munch(mine, s)
            if a != b:
                bad += 1
                if bad <= 3:
                    print('%s: %r: Lark takes %s, gramask %s' % (name, s, a, b))
        failures += bad
    print('%d terminals, %d strings, %d differences' % (len(names), checked, failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
