"""Reference verdicts for tests/test_schema_formats: strings for each `format`, judged
without gramask's format regexes (schema/formats.c).

Prints, per format, "F <format>" and then one line per string: "<verdict> <hex of the
JSON text>" (verdict 1 = a valid instance of {"type": "string", "format": F}, 0 = not; 2 =
not, but inside the one documented approximation of note [formats]: the minute of a leap
second at an offset of a fractional hour is not checked, so the grammar accepts it), each string
spelled twice (json.dumps with and without ensure_ascii). The strings are hand-picked
edge cases and mutations of valid seeds (a character inserted, deleted or replaced, with
a fixed seed). The judges:
  - date, ipv4, ipv6: python3-jsonschema's FormatChecker (datetime.date.fromisoformat,
    Python's ipaddress; ipv6 without a zone), dates also by the RFC 3339 parser below
    (FormatChecker has no year 0000);
  - uuid: Python's uuid, in its canonical 8-4-4-4-12 spelling (uuid.UUID alone also takes
    braces, "urn:uuid:" and hyphens anywhere);
  - time, date-time (RFC 3339 section 5.6), duration (its appendix A), hostname (RFC 1123
    labels), email (RFC 5321 Mailbox, the domain or address literal checked with
    ipaddress), json-pointer (RFC 6901), relative-json-pointer: the small procedural
    parsers below, with Python's datetime for dates and leap seconds;
  - uri, uri-reference, iri, uri-template: no reference here, hand-picked strings with
    their verdict written next to them (RFC 3986, 3987, 6570).
"""
import datetime
import ipaddress
import json
import random
import sys
import uuid

import jsonschema

FC = jsonschema.Draft202012Validator.FORMAT_CHECKER
DIGITS = set("0123456789")
HEX = set("0123456789abcdefABCDEF")


def digits(s, n=None):
    return s != "" and set(s) <= DIGITS and (n is None or len(s) == n)


def rfc3339_time(s):
    if len(s) < 9 or s[2] != ":" or s[5] != ":":
        return False
    hh, mm, ss = s[0:2], s[3:5], s[6:8]
    if not (digits(hh, 2) and digits(mm, 2) and digits(ss, 2)):
        return False
    h, m, sec = int(hh), int(mm), int(ss)
    rest = s[8:]
    if rest.startswith("."):
        i = 1
        while i < len(rest) and rest[i] in DIGITS:
            i += 1
        if i == 1:
            return False
        rest = rest[i:]
    if rest in ("Z", "z"):
        off = 0
    elif len(rest) == 6 and rest[0] in "+-" and rest[3] == ":" and digits(rest[1:3], 2) \
            and digits(rest[4:6], 2):
        oh, om = int(rest[1:3]), int(rest[4:6])
        if oh > 23 or om > 59:
            return False
        off = (oh * 60 + om) * (1 if rest[0] == "+" else -1)
    else:
        return False
    if h > 23 or m > 59 or sec > 60:
        return False
    if sec == 60:  # a leap second is 23:59:60 in UTC
        return (h * 60 + m - off) % 1440 == 23 * 60 + 59
    return True


def rfc3339_date(s):
    if len(s) != 10 or s[4] != "-" or s[7] != "-" or not digits(s[0:4] + s[5:7] + s[8:10]):
        return False
    year = int(s[0:4])
    try:  # Python's dates start at year 1; year 0 is a leap year (divisible by 400) as 2000
        datetime.date(year or 2000, int(s[5:7]), int(s[8:10]))
    except ValueError:
        return False
    return True


def leap_minute_unchecked(s):
    """A time (or date-time) whose only fault is the minute of a leap second at an offset
    of a fractional hour (note [formats]): with the minute that makes it 23:59:60 UTC, the
    string is valid."""
    t = s[11:] if len(s) > 11 and s[10] in "Tt" else s
    if (len(t) < 14 or t[6:8] != "60" or t[-6] not in "+-" or t[-2:] == "00" or not digits(t[3:5], 2)
            or int(t[3:5]) > 59):
        return False
    pre = s[:len(s) - len(t)]
    return any(date_time(pre + t[:3] + f"{mm:02}" + t[5:]) if pre else rfc3339_time(t[:3] + f"{mm:02}" + t[5:])
               for mm in range(60))


def date_time(s):
    return len(s) > 11 and s[10] in "Tt" and rfc3339_date(s[:10]) and rfc3339_time(s[11:])


def duration(s):
    # P (dur-date | dur-time | dur-week); dur-date = (day | month | year) [dur-time]
    def units(t, order):
        """Number-unit pairs of t, their units in order and consecutive in `order`."""
        got, i = [], 0
        while i < len(t):
            j = i
            while j < len(t) and t[j] in DIGITS:
                j += 1
            if j == i or j == len(t):
                return None
            got.append(t[j])
            i = j + 1
        if not got or any(u not in order for u in got):
            return None
        idx = [order.index(u) for u in got]
        if idx != list(range(idx[0], idx[0] + len(idx))):
            return None
        return got

    if not s.startswith("P"):
        return False
    body = s[1:]
    if body.endswith("W") and "T" not in body:
        return units(body, "W") is not None
    date, _, time = body.partition("T")
    if "T" in body and (time == "" or "T" in time):
        return False
    if date and units(date, "YMD") is None:
        return False
    if "T" in body and units(time, "HMS") is None:
        return False
    return bool(date or time)


def hostname(s):
    labels = s.split(".")
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
    return all(0 < len(x) <= 63 and set(x) <= ok and x[0] != "-" and x[-1] != "-" for x in labels)


ATEXT = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-")


def email(s):
    if s.startswith('"'):
        i, n = 1, len(s)
        while i < n and s[i] != '"':
            if s[i] == "\\":
                if i + 1 >= n or not (0x20 <= ord(s[i + 1]) <= 0x7E):
                    return False
                i += 2
            elif 0x20 <= ord(s[i]) <= 0x7E:
                i += 1
            else:
                return False
        if i >= n or i + 1 >= n or s[i + 1] != "@":
            return False
        domain = s[i + 2:]
    else:
        local, at, domain = s.partition("@")
        if not at or any(not a or not set(a) <= ATEXT for a in local.split(".")):
            return False
    if domain.startswith("[IPv6:") and domain.endswith("]"):
        return FC.conforms(domain[6:-1], "ipv6")
    if domain.startswith("[") and domain.endswith("]"):
        return FC.conforms(domain[1:-1], "ipv4")
    return hostname(domain)


def json_pointer(s):
    if s and not s.startswith("/"):
        return False
    return all(i + 1 < len(s) and s[i + 1] in "01" for i, ch in enumerate(s) if ch == "~")


def relative_json_pointer(s):
    i = 0
    while i < len(s) and s[i] in DIGITS:
        i += 1
    if i == 0 or (s[0] == "0" and i > 1):
        return False
    return s[i:] == "#" or json_pointer(s[i:])


def canonical_uuid(s):
    try:
        return str(uuid.UUID(s)) == s.lower() and len(s) == 36
    except ValueError:
        return False


JUDGES = {
    # FormatChecker (date.fromisoformat) has no year 0: the parser below judges it alone
    "date": lambda s: rfc3339_date(s) and (s.startswith("0000") or FC.conforms(s, "date")),
    "time": rfc3339_time,
    "date-time": date_time,
    "duration": duration,
    "hostname": hostname,
    "email": email,
    "ipv4": lambda s: FC.conforms(s, "ipv4"),
    "ipv6": lambda s: FC.conforms(s, "ipv6"),
    "uuid": canonical_uuid,
    "json-pointer": json_pointer,
    "relative-json-pointer": relative_json_pointer,
}

SEEDS = {
    "date": ["2024-02-29", "2023-12-31", "0000-01-01", "1900-02-28", "2000-02-29"],
    "time": ["23:59:60Z", "12:00:00+01:00", "00:00:00.5z", "15:59:60-08:00", "09:29:60+09:30",
             "23:59:59.123456-23:59"],
    "date-time": ["2024-05-19T14:23:45Z", "1998-12-31T23:59:60Z", "2020-02-29t00:00:00.1+05:30",
                  "1998-12-31T15:59:60.123-08:00"],
    "duration": ["P1Y2M3DT4H5M6S", "PT1H", "P4W", "P1D", "PT0S", "P1YT1S", "P2MT30M"],
    "hostname": ["example.com", "a", "xn--nxasmq6b.com", "a-b.c-d.e", "a" * 63 + ".b"],
    "email": ["simple@example.com", "a.b+c@d-e.org", '"john..doe"@ex.org', '"a\\"b"@x',
              "u@[192.168.0.1]", "u@[IPv6:2001:db8::1]", "x@localhost"],
    "ipv4": ["192.168.0.1", "0.0.0.0", "255.255.255.255", "1.2.3.4"],
    "ipv6": ["::1", "::", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1",
             "fe80::1:2:3:4:5", "1::", "1:2:3:4:5:6:1.2.3.4"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000",
             "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
    "json-pointer": ["", "/", "/a/b", "/a~0b/c~1d", "/~01", "//"],
    "relative-json-pointer": ["0", "1#", "12/a~1b", "0/", "3"],
}

# Edge cases judged like the rest (XGrammar's suite expects the first three valid: RFC 3339
# puts a leap second at 23:59:60 UTC only, and RFC 2673's dotted quad has no leading zeros).
EDGES = {
    "date-time": ["2024-12-31T23:45:60.123456Z", "2024-12-31T23:59:60+00:00", "2024-12-31T23:59:60-00:01"],
    "ipv4": ["00.00.00.00", "000.000.000.000", "01.2.3.4", "1.2.3.04", "256.1.1.1", "1.2.3"],
    "ipv6": ["1:2:3:4:5:6:7:8:9", "::1::", "12345::", "1:2:3:4:5:6:7::", "::1.2.3.04", "fe80::1%eth0"],
    "time": ["23:59:60Z", "23:58:60Z", "00:59:60+01:00", "24:00:00Z", "12:00:00", "12:00Z"],
    "date": ["2023-02-29", "2024-02-30", "2024-04-31", "1900-02-29", "2024-1-01", "+2024-01-01"],
    "duration": ["P", "PT", "P1M1Y", "PT1S1M", "P1W1D", "P1.5D", "P1DT"],
    "email": ["a@b@c.com", ".a@b.com", "a.@b.com", "a..b@c.com", "@b.com", "a@", "a@-b.com", "a b@c.com"],
    "hostname": ["-a.com", "a-.com", "a..b", ".a", "a.", "a_b.com", "a" * 64],
    "uuid": ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}",
             "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000"],
    "json-pointer": ["a", "/~", "/~2", "~0", "/a~"],
    "relative-json-pointer": ["01", "-1", "1##", "#", "", "0a"],
}

ALPHABET = {
    "date": "0123456789-T:",
    "time": "0123456789:.+-Zz",
    "date-time": "0123456789:.+-TtZz",
    "duration": "0123456789PYMWDTHS.",
    "hostname": "abcXYZ019-._",
    "email": "ab0.@\"\\[]:-_+ ",
    "ipv4": "0123456789.",
    "ipv6": "0123456789abcdefABg:.%",
    "uuid": "0123456789abcdefABCDEFg-{}",
    "json-pointer": "ab~01/",
    "relative-json-pointer": "0123456789#/~",
}
EXTRA = "é٣ \t"  # a letter past ASCII, an Arabic-Indic digit (str.isdigit's trap), space, tab

# Hand-picked, with the verdict written here (no reference in Python for these).
WRITTEN = {
    "uri": [("http://example.com/a?b=c#d", 1), ("urn:isbn:0451450523", 1), ("mailto:a@b.c", 1),
            ("http://[2001:db8::1]:8080/", 1), ("file:///etc/hosts", 1), ("a:", 1),
            ("http://a/%41", 1), ("//example.com", 0), ("/abs/path", 0), ("rel", 0),
            ("http://a b", 0), ("http://a/%4", 0), ("1http://a", 0), ("http://a/\u00e9", 0),
            ("http://[::1", 0), ("", 0)],
    "uri-reference": [("//example.com/p", 1), ("/abs", 1), ("rel/x", 1), ("?q", 1), ("#f", 1),
                      ("", 1), ("http://a/b", 1), ("a:b", 1), ("\\\\x", 0), ("a b", 0),
                      ("%zz", 0), ("#a#b", 0), ("\u00e9", 0)],
    "iri": [("http://\u00e9x.com/\u00e9", 1), ("http://a/b", 1), ("rel", 0), ("http://a b", 0)],
    "uri-template": [("http://x/{a}", 1), ("{+path}/here", 1), ("{;x,y}", 1), ("{var:3}", 1),
                     ("{list*}", 1), ("plain", 1), ("", 1), ("{a.b}", 1), ("{%41}", 1),
                     ("{", 0), ("}", 0), ("{a", 0), ("{}", 0), ("{a b}", 0), ("{var:0}", 0),
                     ("{var:10000}", 0), ("<x>", 0), ("a b", 0)],
}


def random_valid(rng, fmt):
    """A random valid string for the formats Python can build one for, else None."""
    if fmt in ("date", "date-time"):
        d = datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randrange(3652058))
        if fmt == "date":
            return d.isoformat()
        return d.isoformat() + rng.choice("Tt") + random_valid(rng, "time")
    if fmt == "time":
        t = f"{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}"
        if rng.randrange(2):
            t += "." + str(rng.randrange(10 ** rng.randrange(1, 7)))
        if rng.randrange(3) == 0:
            return t + rng.choice("Zz")
        return t + rng.choice("+-") + f"{rng.randrange(24):02}:{rng.randrange(60):02}"
    if fmt == "ipv4":
        return str(ipaddress.IPv4Address(rng.getrandbits(32)))
    if fmt == "ipv6":
        a = ipaddress.IPv6Address(rng.getrandbits(128) & ~((1 << rng.randrange(0, 128, 16)) - 1))
        return rng.choice([str(a), a.exploded, a.exploded.upper()])
    if fmt == "uuid":
        u = str(uuid.UUID(int=rng.getrandbits(128)))
        return u.upper() if rng.randrange(2) else u
    return None


def mutate(rng, s, alphabet):
    pool = alphabet + EXTRA
    op = rng.randrange(3)
    i = rng.randrange(len(s) + 1)
    if op == 0 or not s:
        return s[:i] + rng.choice(pool) + s[i:]
    i = min(i, len(s) - 1)
    if op == 1:
        return s[:i] + s[i + 1:]
    return s[:i] + rng.choice(pool) + s[i + 1:]


def emit(verdict, s, out, fmt=None):
    v = 1 if verdict else 2 if fmt in ("time", "date-time") and leap_minute_unchecked(s) else 0
    for ascii_only in (True, False):
        text = json.dumps(s, ensure_ascii=ascii_only)
        out.write(f"{v} {text.encode('utf-8').hex()}\n")


def main():
    out = sys.stdout
    rng = random.Random(20261129)
    per_format = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    for fmt, judge in JUDGES.items():
        out.write(f"F {fmt}\n")
        seen = set()
        for s in SEEDS[fmt]:
            assert judge(s), (fmt, s)
        todo = list(SEEDS[fmt]) + EDGES.get(fmt, [])
        for _ in range(per_format // 6):
            v = random_valid(rng, fmt)
            if v is not None:
                assert judge(v), (fmt, v)
                todo.append(v)
        while len(seen) < per_format and todo:
            s = todo.pop(0)
            if s in seen:
                continue
            seen.add(s)
            emit(judge(s), s, out, fmt)
            # one or two mutations of a seed or of a mutation
            base = rng.choice(SEEDS[fmt])
            m = mutate(rng, base, ALPHABET[fmt])
            todo.append(m)
            todo.append(mutate(rng, m, ALPHABET[fmt]))
    for fmt, cases in WRITTEN.items():
        out.write(f"F {fmt}\n")
        for s, verdict in cases:
            emit(verdict, s, out)


main()
