"""LIMIT / OFFSET / FETCH FIRST: the row count clauses of a query and FETCH FIRST n ROWS
WITH TIES, which the Finishing's plain limit cannot express (it becomes a filter over
rank() and row_number() windows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.hir import HFilter, HirRel, HProject, HWindow, WindowExpr, hir_types
from sql.scalar import DEFAULT_FRAME, CallBinary, Column, ColumnOrder, Literal
from sql.types import BOOL, INT8

if TYPE_CHECKING:
    from sql.bind import Binder


@dataclass(frozen=True)
class RowCount:
    """`LIMIT limit OFFSET offset`, or `OFFSET offset FETCH FIRST limit ROWS {ONLY | WITH
    TIES}` (limit None: no limit)."""

    limit: int | None
    offset: int
    with_ties: bool = False


def row_count(binder: Binder, q: exp.Expression) -> RowCount:
    """The row count clauses of q. FETCH FIRST ROWS without a count fetches one row; WITH
    TIES needs an ORDER BY and a non-NULL count (Postgres' 42601 and 2201W)."""
    limit = None
    ties = False
    lim = q.args.get("limit")
    if isinstance(lim, exp.Fetch):
        opts = lim.args.get("limit_options")
        if opts is not None and opts.args.get("percent"):
            raise unsupported("FETCH FIRST ... PERCENT")
        ties = bool(opts is not None and opts.args.get("with_ties"))
        if ties and not q.args.get("order"):
            raise SqlError(SYNTAX_ERROR, "WITH TIES cannot be specified without ORDER BY clause")
        count = lim.args.get("count")
        limit = 1 if count is None else binder.const_int(count, "LIMIT")
        if ties and limit is None:
            raise SqlError("2201W", "row count cannot be null in FETCH FIRST ... WITH TIES clause")
    elif lim is not None:
        limit = binder.const_int(lim.expression, "LIMIT")
    offset = 0
    if (off := q.args.get("offset")) is not None:
        offset = binder.const_int(off.expression, "OFFSET") or 0
    return RowCount(limit, offset, ties)


def with_ties(rel: HirRel, orders: tuple[ColumnOrder, ...], limit: int, offset: int) -> HirRel:
    """OFFSET o FETCH FIRST n ROWS WITH TIES over rel ordered by `orders` keeps the rows at
    positions o+1 .. o+n and every later row that ties with the one at o+n:
    = rel's rows with row_number() > o AND rank() <= o + n (both OVER (ORDER BY orders)).
    A row after position o+n has rank <= o+n exactly when fewer than o+n rows sort strictly
    before it, i.e. when it is a peer of row o+n."""
    types = hir_types(rel)
    k = len(types)
    keys = tuple(Column(o.column, types[o.column]) for o in orders)
    order = tuple(ColumnOrder(i, o.desc, o.nulls_last) for i, o in enumerate(orders))
    rank = WindowExpr("rank", (), (), keys, order, DEFAULT_FRAME, INT8)
    number = WindowExpr("row_number", (), (), keys, order, DEFAULT_FRAME, INT8)
    kept = HFilter(HWindow(rel, (rank, number)), (
        CallBinary("gt", Column(k + 1, INT8), Literal(offset, INT8), BOOL),
        CallBinary("le", Column(k, INT8), Literal(offset + limit, INT8), BOOL),
    ))
    return HProject(kept, tuple(range(k)))
