"""Adaptations of test_setup.sql, applied identically to BOTH servers (so the comparison
stays fair) so that the shared tables most scripts read exist on mzspark too.

Without them mzspark cannot create `onek`, `tenk1`, `person`, … at all and nearly every
later statement would only measure that. Each rewrite keeps the rows and their text form:

1. column type `name` -> `text` (onek, tenk1, emp.manager): same text output, byte-wise
   ordering under the reference's C collation;
2. `point` / `path` columns of `person` and `road` (and their children) -> `text` (the
   scripts only print them); `POINT_TBL` keeps `point`, it is the geometric type's own test;
3. `CREATE TABLE child (…) INHERITS (parent…)` -> a plain table with the parents' columns
   first (as PostgreSQL lays them out); `SELECT … FROM person` then no longer includes the
   children's rows, on both sides;
4. `CREATE TABLE x AS SELECT * FROM y` -> `CREATE TABLE x (<y's columns>)` and
   `INSERT INTO x SELECT * FROM y`;
5. `FROM ONLY t` -> `FROM t` (no inheritance left).
"""

from __future__ import annotations

import re

_CREATE = re.compile(r"(?is)^\s*create\s+table\s+(\w+)\s*\((.*?)\)\s*(inherits\s*\((.*)\))?\s*$")
_CTAS = re.compile(r"(?is)^\s*create\s+table\s+(\w+)\s+as\s+select\s+\*\s+from\s+(\w+)\s*$")
_GEOMETRIC_KEEP = {"point_tbl"}


def _columns(body: str) -> list[tuple[str, str]]:
    cols = []
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        name, typ = (re.split(r"\s+", part, maxsplit=1) + [""])[:2]
        cols.append((name.strip(), typ.strip()))
    return cols


class SetupAdapter:
    """Rewrites test_setup statements; remembers the columns of the tables it has seen."""

    def __init__(self) -> None:
        self.tables: dict[str, list[tuple[str, str]]] = {}
        self.applied: list[tuple[int, str, str]] = []  # (line, original, rewritten)

    def adapt(self, sql: str, line: int = 0) -> list[str]:
        out = self._adapt(sql)
        if out != [sql]:
            self.applied.append((line, sql, ";\n".join(out)))
        return out

    def _adapt(self, sql: str) -> list[str]:
        m = _CTAS.match(sql)
        if m and m.group(2).lower() in self.tables:
            name, src = m.group(1).lower(), m.group(2).lower()
            cols = self.tables[src]
            self.tables[name] = list(cols)
            return [_create(name, cols), f"INSERT INTO {name} SELECT * FROM {src}"]
        m = _CREATE.match(sql)
        if m:
            written, name = m.group(1), m.group(1).lower()
            own = _columns(m.group(2))
            cols: list[tuple[str, str]] = []
            if m.group(4):
                for parent in (p.strip().lower() for p in m.group(4).split(",")):
                    for c in self.tables.get(parent, []):
                        if c[0].lower() not in {x[0].lower() for x in cols}:
                            cols.append(c)
            cols += own
            retyped = [(c, _retype(t, name)) for c, t in cols]
            self.tables[name] = retyped
            if retyped == cols and not m.group(3):
                return [sql]
            return [_create(written, retyped)]
        s2 = re.sub(r"(?i)\bfrom\s+only\s+", "FROM ", sql)
        return [s2]


def _retype(typ: str, table: str) -> str:
    t = re.sub(r"(?i)^name$", "text", typ.strip())
    if table not in _GEOMETRIC_KEEP:
        t = re.sub(r"(?i)^(point|path)$", "text", t)
    return t


def _create(name: str, cols: list[tuple[str, str]]) -> str:
    return f"CREATE TABLE {name} (" + ", ".join(f"{c} {t}" for c, t in cols) + ")"
