"""SQL's SIMILAR TO patterns as Java regular expressions (Postgres' similar_to_escape)."""

from __future__ import annotations

import re

from sql.errors import SqlError

_OPERATORS = set("|*+?{}")
_QUOTED = set(".^$\\")


def similar_to_regex(pattern: str, escape: str | None = "\\") -> str:
    """A Java regex matching exactly the strings `pattern` matches as a SIMILAR TO pattern:
    % is .*, _ is ., | * + ? {m,n} ( ) [..] are regex operators, the escape character quotes
    the next one, every other character is itself; the whole string must match."""
    if escape is not None and len(escape) > 1:
        raise SqlError("22025", "invalid escape string", hint="Escape string must be empty or one character.")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if escape and c == escape:
            if i + 1 >= n:
                raise SqlError("2201B", "invalid regular expression: invalid escape \\ sequence")
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                raise SqlError("2201B", "invalid regular expression: brackets [] not balanced")
            body = pattern[i + 1:j].replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[{body}]")
            i = j + 1
            continue
        if c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c == "(":
            out.append("(?:")
        elif c == ")" or c in _OPERATORS:
            out.append(c)
        elif c in _QUOTED:
            out.append("\\" + c)
        else:
            out.append(re.escape(c) if not c.isalnum() and c != " " else c)
        i += 1
    return "(?s)^(?:" + "".join(out) + ")$"
