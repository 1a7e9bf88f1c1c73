"""PostgreSQL's parse_ident(text, strict) (misc.c): a qualified identifier split into its
parts, unquoted parts folded to lower case, quoted ones kept ("" is a quote). Errors are
22023 `string is not a valid identifier: "…"`, raised as IdentError."""

from __future__ import annotations

# the tag catalog queries' run-time errors carry through DuckDB (server/system.py reads it)
RUNTIME_ERROR_TAG = "mzsqlstate"


class IdentError(ValueError):
    def __init__(self, text: str, detail: str | None = None) -> None:
        # PostgreSQL's primary message (its DETAIL, `detail`, is not carried through DuckDB)
        super().__init__(f'{RUNTIME_ERROR_TAG} 22023: string is not a valid identifier: "{text}"')
        self.detail = detail


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_" or ord(c) >= 0x80


def _ident_cont(c: str) -> bool:
    return _ident_start(c) or c.isdigit() or c == "$"


def parse_ident(text: str, strict: bool = True) -> list[str]:
    """parse_ident('"SomeSchema".someTable') = ['SomeSchema', 'sometable']."""
    parts: list[str] = []
    i, n = 0, len(text)
    after_dot = False
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == '"':
            j, buf = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise IdentError(text, "String has unclosed double quotes.")
                buf.append(text[j:k])
                if k + 1 < n and text[k + 1] == '"':
                    buf.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            if not "".join(buf):
                raise IdentError(text, "Quoted identifier must not be empty.")
            parts.append("".join(buf))
        elif i < n and _ident_start(text[i]):
            j = i
            while j < n and _ident_cont(text[j]):
                j += 1
            # downcase_identifier: ASCII letters only (a multibyte character stays as it is)
            parts.append("".join(c.lower() if "A" <= c <= "Z" else c for c in text[i:j]))
            i = j
        else:
            if after_dot:
                raise IdentError(text, 'No valid identifier after ".".')
            if i < n and text[i] == ".":
                raise IdentError(text, 'No valid identifier before ".".')
            raise IdentError(text)
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == ".":
            i += 1
            after_dot = True
            continue
        break
    if strict and i < n:
        raise IdentError(text)
    return parts
