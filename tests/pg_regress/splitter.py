"""Split a PostgreSQL regression script into statements the way psql's lexer does.

A script is a stream of SQL statements ended by `;` and psql meta-commands (a backslash
outside any literal starts one; it runs to the end of the line). `;` ends a statement only
outside `'…'`, `E'…'` (backslash escapes), `"…"`, dollar quotes (`$$…$$`, `$tag$…$tag$`),
`--` comments and nested `/* … */` comments; `;` inside parentheses does not end it either
(psql counts them, e.g. `CREATE RULE … DO (a; b)`).

psql variables: `\\set NAME arg…` and `\\getenv NAME ENV` assign (the caller keeps the map,
so later references see earlier assignments); `:'NAME'` becomes a quoted literal,
`:"NAME"` a quoted identifier and `:NAME` the raw text, only when NAME is set (as psql).

`COPY … FROM STDIN` statements take the lines after them up to `\\.` as their data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_COPY_STDIN = re.compile(r"(?is)^\s*copy\b.*\bfrom\s+std(in|out)\b")
_VAR_CHAR = re.compile(r"[A-Za-z0-9_]")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$")


@dataclass(frozen=True)
class Statement:
    sql: str
    line: int  # 1-based line of the statement's first character
    copy_data: str | None = None  # the inline rows of COPY … FROM STDIN


@dataclass(frozen=True)
class Meta:
    command: str  # e.g. "\\set"
    args: list[str] = field(default_factory=list)
    line: int = 0
    text: str = ""


def quote_literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def quote_ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _meta_args(rest: str, variables: dict[str, str]) -> list[str]:
    """psql meta-command arguments: whitespace-separated, '…' quoted, :var / :'var' interpolated."""
    out: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i].isspace():
            i += 1
        if i >= n:
            break
        buf = []
        while i < n and not rest[i].isspace():
            c = rest[i]
            if c == "'":
                j = i + 1
                while j < n:
                    if rest[j] == "'" and j + 1 < n and rest[j + 1] == "'":
                        buf.append("'")
                        j += 2
                        continue
                    if rest[j] == "'":
                        break
                    buf.append(rest[j])
                    j += 1
                i = j + 1
            elif c == ":" and i + 1 < n and _VAR_CHAR.match(rest[i + 1]):
                j = i + 1
                while j < n and _VAR_CHAR.match(rest[j]):
                    j += 1
                name = rest[i + 1:j]
                buf.append(variables.get(name, rest[i:j]))
                i = j
            else:
                buf.append(c)
                i += 1
        out.append("".join(buf))
    return out


def split_script(text: str, variables: dict[str, str]) -> Iterator[Statement | Meta]:
    """Yield statements and meta-commands in order. The caller applies `\\set` / `\\getenv`
    to `variables` before asking for the next item (interpolation reads it lazily)."""
    lines_starts = [0]
    for m in re.finditer("\n", text):
        lines_starts.append(m.end())

    def line_of(pos: int) -> int:
        lo, hi = 0, len(lines_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if lines_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    n = len(text)
    i = 0
    buf: list[str] = []
    start: int | None = None  # position of the statement's first significant character
    depth = 0

    def flush() -> Statement | None:
        nonlocal buf, start, depth
        sql = "".join(buf).strip()
        st = Statement(sql, line_of(start)) if sql and start is not None else None
        buf, start, depth = [], None, 0
        return st

    while i < n:
        c = text[i]
        if c.isspace():
            if start is not None:
                buf.append(c)
            i += 1
            continue
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if start is not None:
                buf.append(text[i:j])
            i = j
            continue
        if text.startswith("/*", i):
            j, nest = i + 2, 1
            while j < n and nest:
                if text.startswith("/*", j):
                    nest, j = nest + 1, j + 2
                elif text.startswith("*/", j):
                    nest, j = nest - 1, j + 2
                else:
                    j += 1
            if start is not None:
                buf.append(text[i:j])
            i = j
            continue
        if c == "\\":
            j = text.find("\n", i)
            j = n if j < 0 else j
            raw = text[i:j]
            m = re.match(r"\\(\S+)\s*(.*)$", raw, re.S)
            cmd = "\\" + (m.group(1) if m else "")
            args = _meta_args(m.group(2) if m else "", variables)
            yield Meta(cmd, args, line_of(i), raw)
            i = j
            continue
        if start is None:
            start = i
        if c in "'\"" or (c in "eE" and text.startswith("'", i + 1) and not _ident_before(text, i)):
            j = _end_of_quoted(text, i)
            buf.append(text[i:j])
            i = j
            continue
        if c == "$" and not _ident_before(text, i):
            m = _DOLLAR_TAG.match(text, i)
            if m:
                tag = m.group(0)
                j = text.find(tag, m.end())
                j = n if j < 0 else j + len(tag)
                buf.append(text[i:j])
                i = j
                continue
        if c == ":" and i + 1 < n:
            if text[i + 1] == ":":
                buf.append("::")
                i += 2
                continue
            rep = _interpolate(text, i, variables)
            if rep is not None:
                value, j, bare = rep
                if bare:
                    # psql lexes a bare :name's value as script text (it may hold `;`s);
                    # the values in the corpus are one line, so line numbers stay right
                    text = text[:i] + value.replace("\n", " ") + text[j:]
                    n = len(text)
                    lines_starts[:] = [0, *(m.end() for m in re.finditer("\n", text))]
                    if start == i:
                        start = None
                    continue
                buf.append(value)
                i = j
                continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == ";" and depth == 0:
            st = flush()
            i += 1
            if st is not None:
                if _COPY_STDIN.match(st.sql):
                    # the data starts on the line after the statement and ends at a `\.` line
                    nl = text.find("\n", i)
                    nl = n if nl < 0 else nl + 1
                    end = text.find("\n\\.", nl - 1)
                    if end < 0:
                        data, i = text[nl:], n
                    else:
                        data = text[nl:end + 1]
                        after = text.find("\n", end + 1)
                        i = n if after < 0 else after + 1
                    st = Statement(st.sql, st.line, data)
                yield st
            continue
        buf.append(c)
        i += 1
    st = flush()
    if st is not None:
        yield st


def _ident_before(text: str, i: int) -> bool:
    """True when text[i] continues an identifier (so `e'` / `$1$` are not literal starts)."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$")


def _end_of_quoted(text: str, i: int) -> int:
    """Index just past the literal / quoted identifier starting at i."""
    n = len(text)
    escapes = text[i] in "eE"
    if escapes:
        i += 1
    q = text[i]
    j = i + 1
    while j < n:
        ch = text[j]
        if escapes and ch == "\\":
            j += 2
            continue
        if ch == q:
            if j + 1 < n and text[j + 1] == q:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _interpolate(text: str, i: int, variables: dict[str, str]) -> tuple[str, int, bool] | None:
    """psql's :name, :'name', :"name" at text[i] == ':' -> (replacement, end, bare);
    None: leave the colon as it is."""
    n = len(text)
    nxt = text[i + 1]
    if nxt in "'\"":
        j = text.find(nxt, i + 2)
        if j < 0:
            return None
        name = text[i + 2:j]
        if name not in variables:
            return None
        val = variables[name]
        return (quote_literal(val) if nxt == "'" else quote_ident(val)), j + 1, False
    if _VAR_CHAR.match(nxt):
        j = i + 1
        while j < n and _VAR_CHAR.match(text[j]):
            j += 1
        name = text[i + 1:j]
        if name in variables:
            return variables[name], j, True
    return None
