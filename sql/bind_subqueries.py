"""Subqueries inside scalar expressions: scalar, row, quantified (op ANY / ALL), IN as a
semijoin, ARRAY(subquery), and moving an expression one scope inwards (shift_outer)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from sql import func
from sql.bind_rows import compare_fields, is_row, row_fields
from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.hir import (
    Exists,
    HFilter,
    HirScalar,
    HMap,
    HProject,
    HReduce,
    HTopK,
    OuterColumn,
    Select,
    hir_types,
)
from sql.hir_analysis import shift_levels
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    record_get,
)
from sql.scope import BoundQuery, Scope, ScopeColumn
from sql.subquery_keys import quantified
from sql.types import BOOL, TEXT, SqlType, record_type

if TYPE_CHECKING:
    from sql.bind import Binder


def subquery(binder: Binder, q: exp.Expression, scope: Scope) -> BoundQuery:
    """Bind a subquery expression's query with `scope` as its enclosing scope."""
    saved_agg, saved_ctes = binder._agg, dict(binder.ctes)
    if saved_agg is not None:
        binder._outer_agg[len(binder.outer)] = saved_agg
        # After GROUP BY the enclosing query's columns are its group keys (then its
        # aggregates, which a subquery cannot name): outer references resolve to keys.
        scope = Scope([
            replace(saved_agg.input_scope.columns[k.index], defined_as=None) if isinstance(k, Column)
            else ScopeColumn(None, "?column?", k.typ)
            for k in saved_agg.keys
        ])
    binder._agg = None
    binder.outer.append(scope)
    try:
        bq = binder.bind_query(q.this if isinstance(q, exp.Subquery) else q, top=False)
    finally:
        binder.outer.pop()
        binder._outer_agg.pop(len(binder.outer), None)
        binder._agg = saved_agg
        binder.ctes = saved_ctes
    return bq


def scalar_subquery(binder: Binder, q: exp.Expression, scope: Scope) -> HirScalar:
    bq = subquery(binder, q, scope)
    if len(bq.types) != 1:
        raise SqlError(SYNTAX_ERROR, "subquery must return only one column")
    return Select(binder._finish_nested(bq), bq.types[0])


def quantified_subquery(binder: Binder, op: str, lhs: list[HirScalar], q: exp.Expression, scope: Scope, quantifier: str) -> HirScalar:
    """x op ANY(S) / x op ALL(S) (sql.subquery_keys.quantified). A row constructor
    (x1, .., xn) on the left compares row-wise with S's n columns (compare_fields)."""
    bq = subquery(binder, q, scope)
    _check_width(lhs, bq.types)
    sub = binder._finish_nested(bq)
    cmp = compare_fields(binder, op, [shift_outer(x) for x in lhs], [Column(i, t) for i, t in enumerate(bq.types)])
    return quantified(sub, cmp, len(bq.types), quantifier)


def operand_fields(binder: Binder, e: exp.Expression, scope: Scope) -> list[HirScalar]:
    """The left operand of IN / op ANY / op ALL over a subquery: a row constructor's
    fields (matched to the subquery's columns), else the one value."""
    return row_fields(binder, e, scope) if is_row(e) else [binder.scalar(e, scope)]


def _check_width(lhs: list[HirScalar], types: tuple[SqlType, ...]) -> None:
    if len(types) > len(lhs):
        raise SqlError(SYNTAX_ERROR, "subquery has too many columns")
    if len(types) < len(lhs):
        raise SqlError(SYNTAX_ERROR, "subquery has too few columns")


def semijoin(binder: Binder, lhs: list[HirScalar], q: exp.Expression, scope: Scope) -> HirScalar:
    """In a WHERE conjunct, x IN (S) may be EXISTS(SELECT 1 FROM S WHERE x = s): null and
    false both reject the row, and the EXISTS decorrelates into an equi-join ((x1, .., xn)
    IN (S): x1 = s1 AND .. AND xn = sn)."""
    bq = subquery(binder, q, scope)
    _check_width(lhs, bq.types)
    sub = binder._finish_nested(bq)
    eqs = [binder._binary("eq", shift_outer(x), Column(i, t)) for i, (x, t) in enumerate(zip(lhs, bq.types, strict=True))]
    return Exists(HFilter(sub, tuple(eqs)), BOOL)


def row_subquery(binder: Binder, op: str, lhs: list[HirScalar], q: exp.Expression, scope: Scope) -> HirScalar:
    """(x1, .., xn) op (SELECT s1, .., sn ...) compares the row with the subquery's single
    row: (x1, .., xn) op ((SELECT s1 ...), .., (SELECT sn ...)) over one evaluation of the
    subquery, whose row is read as a record (NULLs if it has no row; more than one row is
    an error, as for any scalar subquery)."""
    bq = subquery(binder, q, scope)
    _check_width(lhs, bq.types)
    sub = binder._finish_nested(bq)
    rt = record_type(bq.types)
    row = Select(HProject(HMap(sub, (CallVariadic("row", tuple(Column(i, t) for i, t in enumerate(bq.types)), rt),)),
                          (len(bq.types),)), rt)
    return compare_fields(binder, op, lhs, [record_get(row, i, t) for i, t in enumerate(bq.types)])


def array_subquery(binder: Binder, q: exp.Expression, scope: Scope) -> HirScalar:
    """ARRAY(subquery) = coalesce((SELECT array_agg(c ORDER BY k1, ..) FROM subquery), '{}'):
    the subquery's one column over its rows, in the order of its ORDER BY k1, .. (after its
    LIMIT / OFFSET); no rows make an empty array, not NULL."""
    bq = subquery(binder, q, scope)
    if len(bq.types) != 1:
        raise SqlError(SYNTAX_ERROR, "subquery must return only one column")
    f = bq.finishing
    rel = bq.rel
    if f.limit is not None or f.offset:
        rel = HTopK(rel, (), f.order_by, f.limit, f.offset)
    types = hir_types(rel)
    value = Column(f.project[0], types[f.project[0]])
    elem = binder.coerce(value, TEXT) if value.typ.name == "unknown" else value
    if func.is_array(elem.typ):
        raise unsupported("ARRAY(subquery) of arrays")
    fields = (elem, *(Column(o.column, types[o.column]) for o in f.order_by))
    rt = record_type(tuple(x.typ for x in fields))
    order = tuple(ColumnOrder(1 + i, o.desc, o.nulls_last) for i, o in enumerate(f.order_by))
    t = func.array_of(elem.typ)
    agg = AggregateExpr("array_agg", CallVariadic("row", fields, rt), False, t, order_by=order)
    return CallVariadic("coalesce", (Select(HReduce(rel, (), (agg,)), t), Literal([], t)), t)


def shift_outer(h: HirScalar) -> HirScalar:
    """Move an expression one scope inwards: #i -> outer(1, i), outer(l, i) -> outer(l+1, i)."""
    match h:
        case Column(index=i, typ=t):
            return OuterColumn(1, i, t)
        case OuterColumn(level=lv, index=i, typ=t):
            return OuterColumn(lv + 1, i, t)
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, shift_outer(x), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, shift_outer(a), shift_outer(b), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(shift_outer(x) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(shift_outer(c), shift_outer(a), shift_outer(b), t)
        case Exists() | Select():  # its references to this scope and beyond reach one level further
            return shift_levels(h)
        case _:
            return h
