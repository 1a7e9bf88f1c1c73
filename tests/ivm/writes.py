"""Random writes for the IVM oracle: single- and multi-row INSERTs (duplicates of rows seen
before, NULLs), UPDATEs, DELETEs (down to emptying a table) and write-only transactions
(`BEGIN; INSERT …; INSERT …; COMMIT`, possibly over several tables — mzspark, like
Materialize, allows only INSERTs inside a transaction block)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.ivm.choose import Chooser
from tests.ivm.schema import KEYS, TEXTS, row, value
from tests.oracle.schema import Table


@dataclass(frozen=True)
class Write:
    stmts: tuple[str, ...]
    txn: bool = False

    def statements(self) -> list[str]:
        return ["BEGIN", *self.stmts, "COMMIT"] if self.txn else list(self.stmts)

    def sql(self) -> str:
        return "; ".join(self.statements())


def _where(c: Chooser, t: Table) -> str:
    col = c.choice(t.columns)
    match c.randint(0, 4):
        case 0 | 1:
            return f"i0 = {c.choice(KEYS)}"
        case 2:
            return f"s0 = {c.choice(TEXTS)}"
        case 3:
            return f"{col.name} IS NULL"
    return f"i0 > {c.choice(KEYS)}"


def _insert(c: Chooser, t: Table, seen: dict[str, list[tuple[str, ...]]], n: int) -> str:
    rows = []
    for _ in range(n):
        r = c.choice(seen[t.name]) if seen[t.name] and c.chance(0.3) else row(c, t)
        seen[t.name].append(r)
        rows.append("(" + ", ".join(r) + ")")
    return f"INSERT INTO {t.name} VALUES {', '.join(rows)}"


def random_writes(c: Chooser, tables: tuple[Table, ...], n: int) -> tuple[Write, ...]:
    seen = {t.name: list(t.rows) for t in tables}
    out = []
    for _ in range(n):
        t = c.choice(tables)
        match c.randint(0, 9):
            case 0 | 1:
                w = Write((_insert(c, t, seen, 1),))
            case 2 | 3:
                w = Write((_insert(c, t, seen, c.randint(2, 5)),))
            case 4 | 5:
                col = c.choice(t.columns)
                rhs = value(c, col) if c.chance(0.7) or col.ty != "int" else f"{col.name} + 1"
                w = Write((f"UPDATE {t.name} SET {col.name} = {rhs} WHERE {_where(c, t)}",))
            case 6 | 7:
                w = Write((f"DELETE FROM {t.name} WHERE {_where(c, t)}",))
            case 8:
                w = Write((f"DELETE FROM {t.name}",) if c.chance(0.3) else (f"DELETE FROM {t.name} WHERE {_where(c, t)}",))
            case _:
                stmts = tuple(_insert(c, c.choice(tables), seen, c.randint(1, 3)) for _ in range(c.randint(2, 3)))
                w = Write(stmts, txn=True)
        out.append(w)
    return tuple(out)
