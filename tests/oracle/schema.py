"""Random schemas and rows, a function of a seed: several tables over the oracle's types
(int, bigint, numeric(p,s), double precision, text, boolean, date, timestamp, interval),
with NULLs, duplicate rows and empty tables. Column names repeat across tables (`i0`, `t0`, …)
so JOIN USING has something to join on."""

from __future__ import annotations

import random
from dataclasses import dataclass

# type name -> column-name prefix
TYPES = {
    "int": "i", "bigint": "b", "numeric": "n", "double precision": "f", "text": "s",
    "boolean": "p", "date": "d", "timestamp": "ts", "interval": "iv",
}
NUMERIC_TYPES = ("int", "bigint", "numeric", "double precision")
ORDERABLE = ("int", "bigint", "numeric", "double precision", "text", "date", "timestamp", "interval")

TEXTS = ["a", "b", "abc", "", "A b", "x%y", "zz", "Abc", " pad ", "b_c", "10", "hello world"]
DATES = ["2024-01-15", "2024-02-29", "2023-12-31", "2000-01-01", "2024-01-16", "1999-06-30"]
TIMES = ["00:00:00", "10:30:00", "23:59:59", "12:00:00", "06:15:30.5"]
INTERVALS = ["1 day", "2 hours", "1 mon 2 days", "-3 days", "00:30:00", "1 year 2 mons",
             "5 days 03:00:00", "-01:00:00", "0 days", "1 mon"]


@dataclass(frozen=True)
class Column:
    name: str
    ty: str       # one of TYPES
    decl: str     # the declared type (numeric(p,s))


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]   # SQL literals


def literal(rng: random.Random, ty: str, decl: str = "") -> str:
    """A non-NULL SQL literal of `ty` (small values: no overflow, no division by zero traps)."""
    match ty:
        case "int":
            return str(rng.choice([0, 1, 2, 3, -1, 5, 7, 10, 42, -20, 100, 2]))
        case "bigint":
            return str(rng.choice([0, 1, 3, -2, 5000000000, 7, 10, -4000000000, 12]))
        case "numeric":
            if decl.startswith("numeric("):
                p, s = (int(x) for x in decl[8:-1].split(","))
                v = rng.choice(["0", "1.5", "-2.25", "3.333", "10", "0.01", "-0.5", "7.125", "99"])
                whole = p - s
                if len(v.lstrip("-").split(".")[0]) > whole:
                    v = "1"
                return v
            return rng.choice(["0", "1.5", "-2.25", "3.333", "10", "0.01", "-0.5", "7.125"])
        case "double precision":
            return rng.choice(["0", "1.5", "-2.5", "3.25", "100", "0.125", "-7", "2"]) + "::float8"
        case "text":
            return "'" + rng.choice(TEXTS).replace("'", "''") + "'"
        case "boolean":
            return rng.choice(["true", "false"])
        case "date":
            return f"DATE '{rng.choice(DATES)}'"
        case "timestamp":
            return f"TIMESTAMP '{rng.choice(DATES)} {rng.choice(TIMES)}'"
        case "interval":
            return f"INTERVAL '{rng.choice(INTERVALS)}'"
    raise ValueError(ty)


def random_schema(seed: int) -> tuple[Table, ...]:
    rng = random.Random(f"schema-{seed}")
    tables = []
    for ti in range(rng.randint(3, 5)):
        cols: list[Column] = []
        counts: dict[str, int] = {}
        # every table has an int column i0 and a text column s0, then random ones
        tys = ["int", "text"] + [rng.choice(list(TYPES)) for _ in range(rng.randint(1, 5))]
        for ty in tys:
            k = counts.get(ty, 0)
            counts[ty] = k + 1
            decl = ty
            if ty == "numeric":
                decl = rng.choice(["numeric(10,2)", "numeric(6,3)", "numeric(12,0)", "numeric"])
            cols.append(Column(f"{TYPES[ty]}{k}", ty, decl))
        n = rng.choice([0, 1, 3, 5, 6, 8, 8, 10]) if ti > 0 else rng.choice([4, 6, 8])
        rows: list[tuple[str, ...]] = []
        for _ in range(n):
            if rows and rng.random() < 0.2:
                rows.append(rng.choice(rows))      # duplicate row
                continue
            rows.append(tuple("NULL" if rng.random() < 0.2 else literal(rng, c.ty, c.decl) for c in cols))
        tables.append(Table(f"t{ti}", tuple(cols), tuple(rows)))
    return tuple(tables)


def setup_sql(schema_name: str, tables: tuple[Table, ...]) -> list[str]:
    """Statements creating `schema_name` with the tables and their rows (one INSERT each)."""
    out = [f"CREATE SCHEMA {schema_name}"]
    for tb in tables:
        cols = ", ".join(f"{c.name} {c.decl}" for c in tb.columns)
        out.append(f"CREATE TABLE {schema_name}.{tb.name} ({cols})")
        if tb.rows:
            vals = ", ".join("(" + ", ".join(r) + ")" for r in tb.rows)
            out.append(f"INSERT INTO {schema_name}.{tb.name} VALUES {vals}")
    return out
