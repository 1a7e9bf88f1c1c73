"""A small SQL lexer: enough to split statements and classify Materialize-only syntax.

It understands '...' strings ('' escapes), E'...' strings (backslash escapes), "..."
identifiers, $tag$...$tag$ dollar quotes, -- line comments and nested /* */ comments.
"""

from __future__ import annotations

import re

from sql.errors import SYNTAX_ERROR, SqlError

_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def _segments(sql: str):
    """Yield (kind, start, end) with kind in code|string|comment|semicolon."""
    i = 0
    n = len(sql)
    code_start = 0
    while i < n:
        c = sql[i]
        j = -1
        kind = ""
        if c == "'":
            escape = i > 0 and sql[i - 1] in "eE" and (i < 2 or not (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            j, kind = _skip_string(sql, i, escape), "string"
        elif c == '"':
            j = sql.find('"', i + 1)
            while j != -1 and j + 1 < n and sql[j + 1] == '"':
                j = sql.find('"', j + 2)
            if j == -1:
                raise SqlError(SYNTAX_ERROR, "unterminated quoted identifier", position=i + 1)
            j, kind = j + 1, "string"
        elif c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j, kind = (n if j == -1 else j + 1), "comment"
        elif c == "/" and sql.startswith("/*", i):
            depth = 0
            j = i
            while j < n:
                if sql.startswith("/*", j):
                    depth += 1
                    j += 2
                elif sql.startswith("*/", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            if depth:
                raise SqlError(SYNTAX_ERROR, "unterminated /* comment", position=n)
            kind = "comment"
        elif c == "$" and (m := _DOLLAR.match(sql, i)) and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            tag = m.group(0)
            k = sql.find(tag, m.end())
            if k == -1:
                raise SqlError(SYNTAX_ERROR, "unterminated dollar-quoted string", position=i + 1)
            j, kind = k + len(tag), "string"
        elif c == ";":
            j, kind = i + 1, "semicolon"
        if kind:
            if code_start < i:
                yield "code", code_start, i
            yield kind, i, j
            i = code_start = j
        else:
            i += 1
    if code_start < n:
        yield "code", code_start, n


def split_statements(sql: str) -> list[str]:
    """Split on top-level semicolons; drop empty statements and surrounding whitespace."""
    out: list[str] = []
    start = 0
    for kind, s, e in _segments(sql):
        if kind == "semicolon":
            out.append(sql[start:s])
            start = e
    out.append(sql[start:])
    return [s.strip() for s in out if _has_content(s)]


def _skip_string(sql: str, i: int, escape: bool) -> int:
    n = len(sql)
    j = i + 1
    while j < n:
        ch = sql[j]
        if escape and ch == "\\":
            j += 2
            continue
        if ch == "'":
            if j + 1 < n and sql[j + 1] == "'":
                j += 2
                continue
            return j + 1
        j += 1
    raise SqlError(SYNTAX_ERROR, "unterminated quoted string", position=i + 1)


def strip_comments(sql: str) -> str:
    """Replace comments outside strings by a space."""
    return "".join(" " if k == "comment" else sql[s:e] for k, s, e in _segments(sql))


def _has_content(s: str) -> bool:
    return any(k not in ("comment",) and s[a:b].strip() for k, a, b in _segments(s))


_WORD = re.compile(r"\s*(\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_$]*|\S)")


def leading_words(sql: str, k: int = 4) -> list[str]:
    """The first k tokens (lowercased words, quoted identifiers kept) of a statement."""
    words: list[str] = []
    pos = 0
    text = strip_comments(sql)
    while len(words) < k:
        m = _WORD.match(text, pos)
        if not m:
            break
        w = m.group(1)
        words.append(w if w.startswith('"') else w.lower())
        pos = m.end()
    return words


_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = re.compile(r"[0-9A-Fa-f]{1,2}")


def _unicode_escape_at(body: str, i: int) -> tuple[int, int] | None:
    """The code point and end of a well-formed \\uXXXX / \\UXXXXXXXX escape at body[i], if any."""
    if body[i:i + 2] not in ("\\u", "\\U"):
        return None
    k = 4 if body[i + 1] == "u" else 8
    digits = body[i + 2:i + 2 + k]
    if len(digits) != k or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
        return None
    return int(digits, 16), i + 2 + k


def decode_escape_string(body: str, position: int = 0) -> str:
    """The value of an E'...' literal's body (Postgres' backslash escapes: \\b \\f \\n \\r \\t,
    \\ooo octal, \\xhh hex, \\uXXXX / \\UXXXXXXXX Unicode, '' and \\' quotes; any other \\c is c)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "'" and i + 1 < n and body[i + 1] == "'":
            out.append("'")
            i += 2
            continue
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in _ESCAPES:
            out.append(_ESCAPES[d])
            i += 2
        elif (m := _OCTAL.match(body, i + 1)) is not None:
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i = m.end()
        elif d == "x" and (m := _HEX.match(body, i + 2)) is not None:
            out.append(chr(int(m.group(0), 16)))
            i = m.end()
        elif d in "uU":
            k = 4 if d == "u" else 8
            digits = body[i + 2:i + 2 + k]
            if len(digits) != k or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                raise SqlError("22025", "invalid Unicode escape",
                               hint="Unicode escapes must be \\uXXXX or \\UXXXXXXXX.", position=position + i + 1)
            cp = int(digits, 16)
            i += 2 + k
            if 0xD800 <= cp <= 0xDBFF:
                # a high surrogate: the next escape must be its low half
                low = _unicode_escape_at(body, i)
                if low is None or not 0xDC00 <= low[0] <= 0xDFFF:
                    raise SqlError("42601", "invalid Unicode surrogate pair", position=position + i + 1)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low[0] - 0xDC00)
                i = low[1]
            elif 0xDC00 <= cp <= 0xDFFF:
                raise SqlError("42601", "invalid Unicode surrogate pair", position=position + i + 1)
            if not 0 < cp <= 0x10FFFF:
                raise SqlError("42601", "invalid Unicode escape value", position=position + i + 1)
            out.append(chr(cp))
        else:
            out.append(d)
            i += 2
    text = "".join(out)
    if "\x00" in text:
        raise SqlError("22021", 'invalid byte sequence for encoding "UTF8": 0x00')
    return text


def rewrite_escape_strings(sql: str) -> str:
    """`sql` with every E'...' literal written as the standard '...' literal of its value (the
    parser does not read backslash escapes)."""
    if "'" not in sql or not re.search(r"[eE]'", sql):
        return sql
    out: list[str] = []
    for kind, s, e in _segments(sql):
        piece = sql[s:e]
        if kind == "string" and piece.startswith("'") and s > 0 and sql[s - 1] in "eE" \
                and (s < 2 or not (sql[s - 2].isalnum() or sql[s - 2] in "_$")):
            out[-1] = out[-1][:-1]  # the E prefix ends the preceding code segment
            value = decode_escape_string(piece[1:-1], s)
            piece = "'" + value.replace("'", "''") + "'"
        out.append(piece)
    return "".join(out)


_EXPONENT_THEN_SIGN = re.compile(r"(?<![A-Za-z0-9_$.])(\d+(?:\.\d*)?[eE][+-]?\d+)([+-])")


def separate_exponent_signs(sql: str) -> str:
    """`1e9+1` as `1e9 +1`: the tokenizer would read the whole of it as one number (a second
    exponent sign), where Postgres reads 1e9 + 1. Only code is touched, never strings."""
    if not re.search(r"\d[eE][+-]?\d", sql):
        return sql
    return "".join(_EXPONENT_THEN_SIGN.sub(r"\1 \2", sql[s:e]) if kind == "code" else sql[s:e]
                   for kind, s, e in _segments(sql))


def ident(s: str) -> str:
    """An identifier as written, as a name: a quoted one unquoted, an unquoted one folded to
    lower case."""
    s = s.strip()
    if s.startswith('"'):
        return s[1:-1].replace('""', '"')
    return s.lower()


# an identifier (quoted or not) and a dotted name of them, as regular expressions
IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
QNAME = rf"{IDENT}(?:\s*\.\s*{IDENT})*"


def qname(s: str) -> tuple[str, ...]:
    """The names of a dotted name as written (`a."B".c`)."""
    return tuple(ident(p) for p in re.findall(IDENT, s))


_UESCAPE = re.compile(r"\s*uescape\s*", re.IGNORECASE)


def rewrite_unicode_literals(sql: str) -> str:
    """`sql` with every U&'..' constant written as the standard '..' literal of its value and
    every U&".." identifier as the quoted identifier of its name, each with its UESCAPE 'c'
    clause, if any, consumed (sql.unicode_escapes)."""
    if "&" not in sql or not re.search(r"[uU]&['\"]", sql):
        return sql
    from sql.unicode_escapes import check_escape_character, decode

    segs = list(_segments(sql))
    out: list[str] = []
    k = 0
    while k < len(segs):
        kind, s, e = segs[k]
        piece = sql[s:e]
        k += 1
        if not (kind == "string" and piece[0] in "'\"" and s >= 2 and sql[s - 2:s] in ("U&", "u&") and out
                and (s < 3 or not (sql[s - 3].isalnum() or sql[s - 3] in "_$"))):
            out.append(piece)
            continue
        out[-1] = out[-1][:-2]  # the U& prefix ends the preceding code segment
        esc = "\\"
        if k + 1 < len(segs) and segs[k][0] == "code" and _UESCAPE.fullmatch(sql[segs[k][1]:segs[k][2]]) \
                and segs[k + 1][0] == "string" and sql[segs[k + 1][1]] == "'":
            es, ee = segs[k + 1][1], segs[k + 1][2]
            esc = check_escape_character(sql[es + 1:ee - 1].replace("''", "'"), es + 1)
            k += 2
        quote = piece[0]
        value = decode(piece[1:-1].replace(quote * 2, quote), esc, s + 2)
        if quote == '"' and not value:
            raise SqlError(SYNTAX_ERROR, 'zero-length delimited identifier at or near "U&""""', position=s - 1)
        out.append(quote + value.replace(quote, quote * 2) + quote)
    return "".join(out)


_SUBSTRING_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*|[()]")


def rewrite_substring_similar(sql: str) -> str:
    """`SUBSTRING(s SIMILAR p ESCAPE e)` (SQL:2003) as the equivalent `SUBSTRING(s FROM p FOR e)`
    (which the parser reads), the keywords blank-padded so every position stays the same."""
    if not re.search(r"similar", sql, re.IGNORECASE) or not re.search(r"substring", sql, re.IGNORECASE):
        return sql
    out = list(sql)
    depth, frames = 0, []  # frames: depths of the open SUBSTRING( parentheses
    prev = ""
    for kind, s, e in _segments(sql):
        if kind != "code":
            prev = ""
            continue
        for m in _SUBSTRING_WORDS.finditer(sql, s, e):
            w = m.group(0).lower()
            if w == "(":
                depth += 1
                if prev == "substring":
                    frames.append(depth)
            elif w == ")":
                if frames and frames[-1] == depth:
                    frames.pop()
                depth -= 1
            elif frames and frames[-1] == depth and w in ("similar", "escape"):
                nxt = _SUBSTRING_WORDS.search(sql, m.end(), e)
                if w == "escape" or nxt is None or nxt.group(0).lower() != "to":
                    out[m.start():m.end()] = list(("FROM" if w == "similar" else "FOR").ljust(len(w)))
            prev = w
    return "".join(out)
