"""Parser for sqllogictest files (the SQLite format plus a few Materialize/CockroachDB extras).

A file is a sequence of records separated by blank lines; `#` lines between records are
comments. A record starts with zero or more conditions (`skipif <engine>` /
`onlyif <engine>`, anything after the engine name is a comment) and then one of:

    statement ok | statement error [regex] | statement count N
    <sql, one or more lines>

    query <types> [nosort|rowsort|valuesort|multiline] [label]
    <sql>
    ----
    <one value per line>  |  N values hashing to <md5>     (standard mode)
    <one row per line, values separated by spaces>          (cockroach mode)
    <lines ... up to a line `EOF`>                          (multiline: one text value)

    query error [regex]
    <sql>

    hash-threshold N        halt        mode standard|cockroach

Lines are right-stripped (some corpus files use CRLF line endings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

HASH_RE = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")


@dataclass
class Record:
    kind: str  # statement | query | hash-threshold | halt | mode
    line: int  # 1-based line of the record's first line (its first condition, if any)
    conditions: list[tuple[str, str]] = field(default_factory=list)  # (skipif|onlyif, engine)
    sql: str = ""
    # statement: "ok" | "error" | "count"; query: "ok" | "error"
    expect: str = "ok"
    error_regex: str | None = None
    count: int | None = None
    types: str = ""
    sort: str = "nosort"  # nosort | rowsort | valuesort
    label: str | None = None
    multiline: bool = False
    # Expected results: either `values` (already split into lines) or a hash.
    expected_lines: list[str] | None = None
    hash_count: int | None = None
    hash_value: str | None = None
    arg: str = ""  # hash-threshold value / mode name
    sql_line: int = 0  # 1-based line of the SQL's first line

    def skipped_for(self, engines: frozenset[str]) -> bool:
        """True when the conditions exclude every name in `engines`."""
        for cond, engine in self.conditions:
            if cond == "skipif" and engine in engines:
                return True
            if cond == "onlyif" and engine not in engines:
                return True
        return False


class ParseError(ValueError):
    pass


def parse_file(path: str | Path) -> list[Record]:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return parse_text(f.read(), str(path))


def parse_text(text: str, name: str = "<text>") -> list[Record]:
    lines = [ln.rstrip() for ln in text.split("\n")]
    n = len(lines)
    records: list[Record] = []
    i = 0
    while i < n:
        line = lines[i]
        if not line or line.startswith("#"):
            i += 1
            continue
        rec = Record(kind="", line=i + 1)
        # conditions
        while i < n and lines[i] and lines[i].split(None, 1)[0] in ("skipif", "onlyif"):
            tok = lines[i].split()
            if len(tok) < 2:
                raise ParseError(f"{name}:{i + 1}: {tok[0]} without an engine name")
            rec.conditions.append((tok[0], tok[1]))
            i += 1
        if i >= n or not lines[i]:
            raise ParseError(f"{name}:{rec.line}: conditions without a record")
        head = lines[i]
        tok = head.split()
        kind = tok[0]
        i += 1
        if kind == "statement":
            rec.kind = "statement"
            what = tok[1] if len(tok) > 1 else "ok"
            if what == "ok":
                rec.expect = "ok"
            elif what == "error":
                rec.expect = "error"
                rest = head.split(None, 2)
                rec.error_regex = rest[2] if len(rest) > 2 else None
            elif what == "count" and len(tok) > 2:
                rec.expect = "count"
                rec.count = int(tok[2])
            else:
                raise ParseError(f"{name}:{i}: unknown statement kind {what!r}")
            rec.sql_line = i + 1
            sql, i = _read_sql(lines, i)
            rec.sql = "\n".join(sql)
            if i < n and lines[i] == "----":
                raise ParseError(f"{name}:{i + 1}: statement with a result section")
        elif kind == "query":
            rec.kind = "query"
            if len(tok) > 1 and tok[1] == "error":
                rec.expect = "error"
                rest = head.split(None, 2)
                rec.error_regex = rest[2] if len(rest) > 2 else None
            else:
                if len(tok) < 2:
                    raise ParseError(f"{name}:{i}: query without column types")
                rec.types = tok[1]
                for t in tok[2:]:
                    if t.startswith("#"):
                        break
                    if t in ("nosort", "rowsort", "valuesort"):
                        rec.sort = t
                    elif t == "multiline":
                        rec.multiline = True
                    elif t.startswith(("retry", "colnames", "partial_sort")):
                        continue
                    else:
                        rec.label = t
            rec.sql_line = i + 1
            sql, i = _read_sql(lines, i)
            rec.sql = "\n".join(sql)
            if i < n and lines[i] == "----":
                i += 1
                if rec.multiline:
                    out = []
                    while i < n and lines[i] != "EOF":
                        out.append(lines[i])
                        i += 1
                    if i >= n:
                        raise ParseError(f"{name}:{rec.line}: multiline result without EOF")
                    i += 1
                    rec.expected_lines = out
                else:
                    out = []
                    while i < n and lines[i]:
                        out.append(lines[i])
                        i += 1
                    m = HASH_RE.match(out[0]) if len(out) == 1 else None
                    if m:
                        rec.hash_count = int(m.group(1))
                        rec.hash_value = m.group(2)
                    else:
                        rec.expected_lines = out
            elif rec.expect == "ok":
                rec.expected_lines = []
        elif kind == "hash-threshold":
            rec.kind = kind
            rec.arg = tok[1] if len(tok) > 1 else "0"
        elif kind == "halt":
            rec.kind = kind
        elif kind == "mode":
            rec.kind = kind
            rec.arg = tok[1] if len(tok) > 1 else "standard"
        else:
            raise ParseError(f"{name}:{i}: unknown record type {kind!r}")
        records.append(rec)
        # skip the rest of an over-long record (there should be none)
        while i < n and lines[i]:
            i += 1
    return records


def _read_sql(lines: list[str], i: int) -> tuple[list[str], int]:
    out: list[str] = []
    n = len(lines)
    while i < n and lines[i] and lines[i] != "----":
        out.append(lines[i])
        i += 1
    return out, i
