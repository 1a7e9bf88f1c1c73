"""Outcomes of one statement and how two of them compare.

Rows are compared as multisets of their text forms as the server printed them, except that
float4/float8 values are equal within a relative 1e-9 (sums of doubles depend on the order of
addition) and numerics are equal when their values are (a different scale, e.g. 2.50 vs 2.5,
is reported separately as `numeric-text`, since PostgreSQL's output scale is part of its
semantics but a different kind of bug than a wrong value)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

FLOAT_OIDS = {700, 701}
NUMERIC_OID = 1700
REL_TOL = 1e-9


@dataclass(frozen=True)
class Outcome:
    ok: bool
    rows: tuple[tuple[str | None, ...], ...] = ()
    oids: tuple[int, ...] = ()
    sqlstate: str = ""
    message: str = ""

    def show(self, limit: int = 12) -> str:
        if not self.ok:
            return f"ERROR {self.sqlstate}: {self.message}"
        body = "\n".join("  " + " | ".join("NULL" if v is None else v for v in r) for r in sorted_rows(self)[:limit])
        more = f"\n  … {len(self.rows) - limit} more" if len(self.rows) > limit else ""
        return f"{len(self.rows)} rows (oids {list(self.oids)})\n{body}{more}"


def _num(v: str) -> Decimal | None:
    try:
        return Decimal(v)
    except InvalidOperation:
        return None


def cell_key(v: str | None, oid: int) -> tuple:
    """A sort key that puts values equal within tolerance next to each other."""
    if v is None:
        return (0, "")
    if oid in FLOAT_OIDS:
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return (1, v)
        return (2, float(f"{f:.6g}"))
    if oid == NUMERIC_OID and (d := _num(v)) is not None:
        return (2, float(f"{float(d):.6g}"))
    return (3, v)


def sorted_rows(o: Outcome) -> list[tuple[str | None, ...]]:
    return sorted(o.rows, key=lambda r: tuple(cell_key(v, oid) for v, oid in zip(r, o.oids, strict=False)))


def cells_equal(a: str | None, b: str | None, oid: int) -> str:
    """'' when equal, 'numeric-text' when only a numeric's text differs, else 'rows'."""
    if a == b:
        return ""
    if a is None or b is None:
        return "rows"
    if oid in FLOAT_OIDS:
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            return "rows"
        if fa == fb or (math.isnan(fa) and math.isnan(fb)):
            return ""
        return "" if abs(fa - fb) <= REL_TOL * max(abs(fa), abs(fb)) else "rows"
    if oid == NUMERIC_OID:
        da, db = _num(a), _num(b)
        if da is None or db is None or not da.is_finite() or not db.is_finite():
            return "rows"
        if da == db:
            return "numeric-text"
        return "numeric-text" if abs(da - db) <= Decimal(REL_TOL) * max(abs(da), abs(db)) else "rows"
    return "rows"


def compare_rows(pg: Outcome, mz: Outcome) -> str:
    """'' if the row multisets agree, else the kind of difference."""
    if len(pg.oids) != len(mz.oids):
        return "columns"
    if len(pg.rows) != len(mz.rows):
        return "rows"
    worst = ""
    # Sort both by the tolerant key, then pair up; ties that the key cannot order are
    # retried with an exhaustive greedy match.
    for ra, rb in zip(sorted_rows(pg), sorted_rows(mz), strict=True):
        for a, b, oid in zip(ra, rb, pg.oids, strict=True):
            k = cells_equal(a, b, oid)
            if k == "rows":
                return _greedy(pg, mz)
            worst = worst or k
    return worst


def _greedy(pg: Outcome, mz: Outcome) -> str:
    rest = list(mz.rows)
    worst = ""
    for ra in pg.rows:
        for i, rb in enumerate(rest):
            kinds = [cells_equal(a, b, oid) for a, b, oid in zip(ra, rb, pg.oids, strict=True)]
            if "rows" not in kinds:
                worst = worst or next((k for k in kinds if k), "")
                del rest[i]
                break
        else:
            return "rows"
    return worst


def classify(pg: Outcome, mz: Outcome) -> str:
    """'' when mzspark agrees with PostgreSQL, 'unsupported' for mzspark's 0A000, else the kind
    of discrepancy."""
    if not mz.ok and mz.sqlstate == "0A000":
        return "unsupported" if pg.ok or pg.sqlstate != "0A000" else ""
    if pg.ok and mz.ok:
        return compare_rows(pg, mz)
    if not pg.ok and not mz.ok:
        return "" if pg.sqlstate[:2] == mz.sqlstate[:2] else "error-class"
    return "mz-error" if pg.ok else "pg-error"
