"""Random schemas for the IVM oracle: 2–3 tables over int, bigint, text, numeric, boolean and
date, with NULLs and duplicate rows. Every table has an int column `i0` (a small domain, so
joins on it match) and a text column `s0`; the oracle's `Column` / `Table` / `literal` /
`setup_sql` are reused as they are."""

from __future__ import annotations

from dataclasses import replace

from tests.ivm.choose import Chooser
from tests.oracle.schema import TYPES, Column, Table, literal

IVM_TYPES = ("int", "bigint", "text", "numeric", "boolean", "date")
KEYS = ("0", "1", "2", "3", "4", "5", "-1")      # the domain of i0 (joins on it hit often)
TEXTS = ("'a'", "'b'", "'abc'", "''", "'zz'", "'A b'", "'b_c'")
NULL_RATE = 0.15


def _column(c: Chooser, ty: str, k: int) -> Column:
    decl = "numeric(10,2)" if ty == "numeric" else ty
    return Column(f"{TYPES[ty]}{k}", ty, decl)


def value(c: Chooser, col: Column) -> str:
    """A SQL literal for `col` (NULL at NULL_RATE; i0 and s0 from small domains)."""
    if c.chance(NULL_RATE):
        return "NULL"
    if col.name == "i0":
        return c.choice(KEYS)
    if col.name == "s0":
        return c.choice(TEXTS)
    return literal(_Rng(c), col.ty, col.decl)


def row(c: Chooser, table: Table) -> tuple[str, ...]:
    return tuple(value(c, col) for col in table.columns)


def random_tables(c: Chooser) -> tuple[Table, ...]:
    tables = []
    for ti in range(c.randint(2, 3)):
        tys = ["int", "text"] + [c.choice(IVM_TYPES) for _ in range(c.randint(1, 3))]
        counts: dict[str, int] = {}
        cols = []
        for ty in tys:
            k = counts.get(ty, 0)
            counts[ty] = k + 1
            cols.append(_column(c, ty, k))
        tb = Table(f"t{ti}", tuple(cols), ())
        rows: list[tuple[str, ...]] = []
        for _ in range(c.choice((0, 2, 4, 6, 8, 10) if ti else (4, 6, 8, 10))):
            rows.append(c.choice(rows) if rows and c.chance(0.2) else row(c, tb))   # duplicates
        tables.append(replace(tb, rows=tuple(rows)))
    return tuple(tables)


def create_sql(tables: tuple[Table, ...]) -> list[str]:
    """CREATE TABLE and one INSERT per non-empty table, unqualified (the search path decides)."""
    out = []
    for tb in tables:
        out.append(f"CREATE TABLE {tb.name} (" + ", ".join(f"{col.name} {col.decl}" for col in tb.columns) + ")")
        if tb.rows:
            out.append(f"INSERT INTO {tb.name} VALUES " + ", ".join("(" + ", ".join(r) + ")" for r in tb.rows))
    return out


class _Rng:
    """The slice of `random.Random` that `tests.oracle.schema.literal` uses, over a Chooser."""

    def __init__(self, c: Chooser) -> None:
        self.c = c

    def choice(self, seq):  # type: ignore[no-untyped-def]
        return self.c.choice(seq)
