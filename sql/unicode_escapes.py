"""PostgreSQL's Unicode escapes: U&'..' string constants and U&".." identifiers (with an
optional UESCAPE 'c'), and the unistr(text) function.

- In U&'..' (escape character c, default backslash): cc = c, cXXXX = U+XXXX,
  c+XXXXXX = U+XXXXXX; a UTF-16 surrogate pair of escapes is one code point. Anything else
  after c, a lone surrogate, code point 0 or one past U+10FFFF is an error (42601).
- unistr(s) reads the same escapes with c = backslash, and also \\uXXXX and \\UXXXXXXXX; a
  code point past U+10FFFF (or 0) is 22023 "invalid Unicode code point".
"""

from __future__ import annotations

from sql.errors import SYNTAX_ERROR, SqlError

_HEX = frozenset("0123456789abcdefABCDEF")
_BAD_ESCAPE_CHARS = frozenset("0123456789abcdefABCDEF+'\" \t\n\r\f")


def check_escape_character(esc: str, position: int | None = None) -> str:
    """The UESCAPE character: one character, not a hex digit, +, a quote or white space."""
    if len(esc) != 1 or esc in _BAD_ESCAPE_CHARS:
        raise SqlError(SYNTAX_ERROR, f"invalid Unicode escape character at or near \"'{esc}'\"", position=position)
    return esc


def _hex_at(s: str, i: int, k: int) -> int | None:
    digits = s[i:i + k]
    return int(digits, 16) if len(digits) == k and all(ch in _HEX for ch in digits) else None


def decode(body: str, esc: str = "\\", position: int = 0, unistr: bool = False) -> str:
    """The value of a U&'..' constant's body (or, `unistr`, of unistr's argument); `position`:
    the body's 1-based offset in the statement, for errors (0: none)."""
    out: list[str] = []
    high: int | None = None  # a pending high surrogate
    i, n = 0, len(body)

    def err(msg: str, at: int, state: str = SYNTAX_ERROR, hint: str | None = None) -> SqlError:
        return SqlError(state, msg, hint=hint, position=position + at if position else None)

    while i < n:
        c = body[i]
        if c != esc:
            if high is not None:
                raise err("invalid Unicode surrogate pair", i)
            out.append(c)
            i += 1
            continue
        start = i
        if body[i + 1:i + 2] == esc:
            if high is not None:
                raise err("invalid Unicode surrogate pair", i)
            out.append(esc)
            i += 2
            continue
        if (cp := _hex_at(body, i + 1, 4)) is not None:
            i += 5
        elif body[i + 1:i + 2] == "+" and (cp := _hex_at(body, i + 2, 6)) is not None:
            i += 8
        elif unistr and body[i + 1:i + 2] == "u" and (cp := _hex_at(body, i + 2, 4)) is not None:
            i += 6
        elif unistr and body[i + 1:i + 2] == "U" and (cp := _hex_at(body, i + 2, 8)) is not None:
            i += 10
        else:
            forms = "\\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX" if unistr else "\\XXXX or \\+XXXXXX"
            raise err("invalid Unicode escape", start, hint=f"Unicode escapes must be {forms}.")
        if 0xD800 <= cp <= 0xDBFF:
            if high is not None:
                raise err("invalid Unicode surrogate pair", start)
            high = cp
            continue
        if 0xDC00 <= cp <= 0xDFFF:
            if high is None:
                raise err("invalid Unicode surrogate pair", start)
            cp, high = 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00), None
        elif high is not None:
            raise err("invalid Unicode surrogate pair", start)
        if not 0 < cp <= 0x10FFFF:
            if unistr:
                raise err(f"invalid Unicode code point: {cp:X}", start, state="22023")
            raise err("invalid Unicode escape value", start)
        out.append(chr(cp))
    if high is not None:
        raise err("invalid Unicode surrogate pair", n)
    return "".join(out)
