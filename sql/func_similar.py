"""SQL's SIMILAR TO patterns as Java regular expressions (Postgres' similar_to_escape)."""

from __future__ import annotations

import re

from sql.errors import SqlError, unsupported

_OPERATORS = set("|*+?{}")
_QUOTED = set(".^$\\")


def similar_to_regex(pattern: str, escape: str | None = "\\") -> str:
    """A Java regex matching exactly the strings `pattern` matches as a SIMILAR TO pattern:
    % is .*, _ is ., | * + ? {m,n} ( ) [..] are regex operators, the escape character quotes
    the next one, every other character is itself; the whole string must match."""
    return "(?s)^(?:" + _body(pattern, escape) + ")$"


def _body(pattern: str, escape: str | None) -> str:
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
    return "".join(out)


SEPARATORS = "2200C"


def similar_substring_regex(pattern: str, escape: str | None) -> str:
    """The Java regex of SUBSTRING(s SIMILAR pattern ESCAPE escape), the result its group 1:
    the pattern is split by escape-double-quote separators into P1, P2, P3 and matches the whole
    string as ^(?:P1)(P2)(?:P3)$ with P1 as short and then P2 as long as possible (PostgreSQL's
    P1{1,1}? (P2){1,1}); without separators the result is the whole match. Java's backtracking
    gives that split when P1 and P2 have no alternation and quantify single characters (P1's
    quantifiers made reluctant); other P1 / P2 are 0A000."""
    if escape is not None and len(escape) > 1:
        raise SqlError("22025", "invalid escape string", hint="Escape string must be empty or one character.")
    parts = _split_separators(pattern, escape or None)
    if len(parts) > 3:
        raise SqlError(SEPARATORS, "SQL regular expression may not contain more than two escape-double-quote separators")
    if len(parts) == 1:
        return "(?s)^(" + _body(parts[0], escape or None) + ")$"
    p1, p2, p3 = parts[0], parts[1], parts[2] if len(parts) == 3 else ""
    for p in (p1, p2):
        _check_simple(p, escape or None)
    b1, b2, b3 = (_body(p, escape or None) for p in (p1, p2, p3))
    return f"(?s)^(?:{_reluctant(b1)})({b2})(?:{b3})$"


def _split_separators(pattern: str, escape: str | None) -> list[str]:
    parts, start, i, n = [], 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if escape and c == escape:
            if pattern[i + 1:i + 2] == '"':
                parts.append(pattern[start:i])
                start = i + 2
            i += 2
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("]", "^") else i + 1)
            i = n if j == -1 else j + 1
        else:
            i += 1
    return [*parts, pattern[start:]]


def _check_simple(part: str, escape: str | None) -> None:
    """0A000 unless `part` has no | and every quantifier follows a single character."""
    last, i, n = "", 0, len(part)
    while i < n:
        c = part[i]
        if escape and c == escape:
            last, i = "atom", i + 2
            continue
        if c == "[":
            j = part.find("]", i + 2 if part[i + 1:i + 2] in ("]", "^") else i + 1)
            last, i = "atom", (n if j == -1 else j + 1)
            continue
        if c == "|" or c in "*+?{" and last != "atom":
            raise unsupported("SUBSTRING(.. SIMILAR ..) with alternation or a quantified group before or between "
                              "its separators")
        last = "quant" if c in "*+?{}" else "open" if c == "(" else "close" if c == ")" else "atom"
        if c == "{":
            i = part.find("}", i) if "}" in part[i:] else n
        i += 1


def _reluctant(java: str) -> str:
    """The Java regex `java` with every quantifier reluctant."""
    out, i, n = [], 0, len(java)
    while i < n:
        c = java[i]
        if c == "\\":
            out.append(java[i:i + 2])
            i += 2
            continue
        if c == "[":
            j = java.find("]", i + 2 if java[i + 1:i + 2] in ("]", "^") else i + 1)
            while j > 0 and java[j - 1] == "\\":
                j = java.find("]", j + 1)
            j = n - 1 if j == -1 else j
            out.append(java[i:j + 1])
            i = j + 1
            continue
        if java.startswith("(?:", i):
            out.append("(?:")
            i += 3
            continue
        if c == "{":
            j = java.find("}", i)
            out.append(java[i:j + 1] + "?")
            i = j + 1
            continue
        out.append(c + "?" if c in "*+?" else c)
        i += 1
    return "".join(out)
