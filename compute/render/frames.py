"""Window frames as predicates (pure: no Spark): is a partition row in the current row's frame?

Postgres' frame semantics, written once. Each row of a partition carries its position `pos`
(1, 2, .. in the window's order), its peer group number `grp` (1, 2, .. ; rows equal on every
ORDER BY value share one; all rows are peers without ORDER BY) and, for RANGE offset frames,
its ORDER BY value `value` and its boundary values `lo` (frame start) / `hi` (frame end)
= value -/+ offset, computed by the binder. With c the current row and r a partition row:

- ROWS   n PRECEDING / n FOLLOWING: r.pos >= c.pos - n (start) / r.pos <= c.pos + n (end);
  CURRENT ROW: r.pos >= c.pos / r.pos <= c.pos; an offset computed by the query (an
  expression, evaluated once by Postgres) is read from the current row's `lo` / `hi`
- GROUPS the same over grp; CURRENT ROW in RANGE / GROUPS is c's peer group (r.grp vs c.grp)
- RANGE  offset: r.value >= c.lo (start) / r.value <= c.hi (end), reversed for DESC; NULL
  values sort as one block before or after all others, so a NULL r lies after the start
  when NULLs sort last and before the end when they sort first; a NULL c has its NULL
  peers as the bound (in_range never matches NULL)
- UNBOUNDED PRECEDING / FOLLOWING: no condition
- EXCLUDE CURRENT ROW: r.pos <> c.pos; GROUP: r.grp <> c.grp; TIES: r.grp <> c.grp or r = c

A frame is a contiguous piece of the ordered partition intersected with these conditions;
when its start lies after its end it is empty (aggregates of no rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from compute.render.spark_sql import raise_error
from sql.scalar import ColumnOrder, WindowFrame

# positions are below 2^31; larger offsets reach as far (and keep bigint arithmetic exact)
_OFFSET_MAX = 2**32


@dataclass(frozen=True, slots=True)
class FrameRow:
    """SQL expressions of one row's frame coordinates."""

    pos: str
    grp: str
    value: str | None = None
    lo: str | None = None
    hi: str | None = None


def native(frame: WindowFrame, bounds: tuple[int | None, int | None]) -> bool:
    """Can Spark's own ROWS / RANGE frame express this one? (no GROUPS, EXCLUDE or RANGE
    offsets, and not a ROWS frame starting after its end, which Spark rejects)."""
    if frame.units == "groups" or frame.exclude != "no_others" or bounds != (None, None):
        return False
    s, e = _relative(frame.start), _relative(frame.end)
    return not (frame.start[0] == "unbounded_following" or frame.end[0] == "unbounded_preceding"
                or s is not None and e is not None and s > e)


def _relative(b: tuple[str, int | None]) -> int | None:
    kind, n = b
    return {"preceding": -(n or 0), "following": n or 0, "current_row": 0}.get(kind)


def in_frame(frame: WindowFrame, order: ColumnOrder | None, c: FrameRow, r: FrameRow) -> str:
    """The predicate `r is in c's frame` (a partition's rows r, the current row c)."""
    parts = [p for p in (_bound(frame, order, c, r, True), _bound(frame, order, c, r, False),
                         _excluded(frame.exclude, c, r)) if p != "TRUE"]
    return " AND ".join(parts) or "TRUE"


def _bound(frame: WindowFrame, order: ColumnOrder | None, c: FrameRow, r: FrameRow, start: bool) -> str:
    kind, n = frame.start if start else frame.end
    op = ">=" if start else "<="
    if kind == "unbounded_preceding":
        return "TRUE" if start else "FALSE"
    if kind == "unbounded_following":
        return "FALSE" if start else "TRUE"
    if kind == "current_row":
        return f"{r.pos} {op} {c.pos}" if frame.units == "rows" else f"{r.grp} {op} {c.grp}"
    if frame.units in ("rows", "groups"):
        col_r, col_c = (r.pos, c.pos) if frame.units == "rows" else (r.grp, c.grp)
        sign = "-" if kind == "preceding" else "+"
        if n is None:
            # an offset computed per query: the current row's count, NULL / negative refused
            count = c.lo if start else c.hi
            assert count is not None
            which = "starting" if start else "ending"
            return (f"(CASE WHEN {count} IS NULL THEN {raise_error(f'[22004] frame {which} offset must not be null', 'boolean')}"
                    f" WHEN {count} < 0 THEN {raise_error(f'[22013] frame {which} offset must not be negative', 'boolean')}"
                    f" ELSE {col_r} {op} {col_c} {sign} least({count}, {_OFFSET_MAX}) END)")
        d = min(n, _OFFSET_MAX) * (-1 if kind == "preceding" else 1)
        return f"{col_r} {op} {col_c} + ({d})"
    # RANGE offset: boundary values in the current row
    assert order is not None and r.value is not None and c.value is not None
    boundary = c.lo if start else c.hi
    assert boundary is not None
    cmp = op if not order.desc else {">=": "<=", "<=": ">="}[op]
    # a NULL r: after the start when NULLs sort last, before the end when they sort first
    null_inside = order.nulls_last if start else not order.nulls_last
    return (f"(CASE WHEN {c.value} IS NULL THEN {r.grp} {op} {c.grp} WHEN {r.value} IS NULL THEN "
            f"{'TRUE' if null_inside else 'FALSE'} ELSE {r.value} {cmp} {boundary} END)")


def _excluded(exclude: str, c: FrameRow, r: FrameRow) -> str:
    match exclude:
        case "current_row":
            return f"{r.pos} <> {c.pos}"
        case "group":
            return f"{r.grp} <> {c.grp}"
        case "ties":
            return f"({r.grp} <> {c.grp} OR {r.pos} = {c.pos})"
    return "TRUE"
