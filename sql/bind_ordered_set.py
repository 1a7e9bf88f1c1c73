"""Ordered-set and hypothetical-set aggregates: `f(direct args) WITHIN GROUP (ORDER BY ...)`.

PostgreSQL's rules (parse_agg.c, orderedsetaggs.c), as bound here:

- The direct arguments are evaluated once per group, after aggregation: they may use only
  grouping columns (42803 otherwise) and no aggregate of this level.
- percentile_cont(p) WITHIN GROUP (ORDER BY x) [x float8, p float8 or float8[]]:
    percentile_cont(p) = percentile_cont_final(array_agg(x ORDER BY ..) FILTER (WHERE x IS NOT NULL), p)
  the sorted non-NULL values v[0..n-1]; with r = p * (n - 1): v[floor r] when floor r = ceil r,
  else v[floor r] + (v[ceil r] - v[floor r]) * (r - floor r). NULL without rows or for a NULL p;
  22003 when p lies outside [0, 1]. The array form maps every element (a NULL element gives NULL).
- percentile_disc(p) [x of any sortable type]: v[max(ceil(p * n), 1) - 1], same NULL / range rules.
- mode(): the most frequent non-NULL value; among equally frequent ones the first in the sort order.
- hypothetical-set functions, h1..hk direct and x1..xk aggregated (in ORDER BY order), each
  pair coerced to its common type; `before` = the row (x1..xk) sorts strictly before
  (h1..hk) in the ORDER BY order (directions and NULLS FIRST/LAST as written), `peer` = equal
  (NULLs equal):
    rank(h) = 1 + count(*) FILTER (WHERE before)
    dense_rank(h) = 1 + count(DISTINCT row(x1..xk)) FILTER (WHERE before)
    percent_rank(h) = CASE WHEN count(*) = 0 THEN 0 ELSE count(*) FILTER (WHERE before) / count(*) END
    cume_dist(h) = (count(*) FILTER (WHERE before OR peer) + 1) / (count(*) + 1)
  (a FILTER written on the call restricts every count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql import func
from sql.errors import GROUPING_ERROR, UNDEFINED_FUNCTION, SqlError, unsupported
from sql.func_names import pg_function_name
from sql.hir import HirScalar
from sql.scalar import AggregateExpr, CallBinary, CallUnary, CallVariadic, ColumnOrder, If, Literal
from sql.types import BOOL, FLOAT8, TEXT, record_type

if TYPE_CHECKING:
    from sql.bind import Binder
    from sql.bind_aggregates import _AggCtx
    from sql.scope import Scope

PERCENTILES = ("percentile_cont", "percentile_disc")
HYPOTHETICAL = ("rank", "dense_rank", "percent_rank", "cume_dist")
ORDERED_SET = (*PERCENTILES, "mode", *HYPOTHETICAL)

_NO_FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."


def ordered_set_name(e: exp.WithinGroup) -> str:
    return pg_function_name(e.this)


def check_level(binder: Binder, e: exp.WithinGroup, level: int, column_level) -> None:
    """An ordered-set aggregate belongs to the level of its aggregated arguments; its direct
    arguments may not read a query level inside that one (42803)."""
    if any(column_level(c) < level for x in direct_args(e.this) for c in x.find_all(exp.Column) if not isinstance(c.this, exp.Star)):
        raise SqlError(GROUPING_ERROR, "outer-level aggregate cannot contain a lower-level variable in its direct arguments")


def direct_args(call: exp.Expression) -> list[exp.Expression]:
    """The direct arguments of the call inside WITHIN GROUP."""
    if isinstance(call, exp.Anonymous) or "expressions" in call.arg_types and "this" not in call.arg_types:
        return list(call.expressions)
    return [x for x in (call.args.get("this"), call.args.get("expression")) if x is not None]


def within_group(binder: Binder, e: exp.WithinGroup, agg: _AggCtx, out_scope: Scope | None,
                 filter_where: exp.Expression | None) -> HirScalar:
    """The value of an ordered-set aggregate call of this query level (see the module doc)."""
    from sql.bind_aggregates import _has_agg

    name = ordered_set_name(e)
    if name not in ORDERED_SET:
        raise SqlError(UNDEFINED_FUNCTION, f"function {name} with WITHIN GROUP does not exist", hint=_NO_FUNCTION_HINT)
    direct = direct_args(e.this)
    if any(isinstance(x, exp.Order) for x in direct):
        raise SqlError("42601", "cannot use multiple ORDER BY clauses with WITHIN GROUP")
    order = e.expression
    ordered: list[exp.Ordered] = list(order.expressions) if isinstance(order, exp.Order) else []
    if any(_has_agg(x) for x in [*direct, *ordered]):
        raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
    if out_scope is None:
        raise unsupported(f"ordered-set aggregate {name}(...) WITHIN GROUP here")
    if name in HYPOTHETICAL:
        return _hypothetical(binder, agg, name, direct, ordered, out_scope, filter_where)
    want = 0 if name == "mode" else 1
    if len(direct) != want or len(ordered) != 1:
        raise SqlError(UNDEFINED_FUNCTION, f"function {name} with {len(direct)} direct and {len(ordered)} ordered arguments does not exist",
                       hint=_NO_FUNCTION_HINT)
    x = binder_input_scalar(binder, agg, ordered[0].this)
    if name == "percentile_cont":
        if x.typ.name == "interval":
            raise unsupported("percentile_cont over interval values")
        if not (x.typ.is_numeric or x.typ.name == "unknown"):
            raise SqlError(UNDEFINED_FUNCTION, f"function percentile_cont(numeric, {x.typ.pg_format()}) does not exist", hint=_NO_FUNCTION_HINT)
        x = binder.coerce(x, FLOAT8)
    elif x.typ.name == "unknown":
        x = binder.coerce(x, TEXT)
    values = _sorted_values(binder, agg, x, ordered[0], filter_where)
    col = _aggregate_column(agg, values)
    if name == "mode":
        return CallUnary("mode_final", col, x.typ)
    p = binder.scalar(direct[0], out_scope)
    multi = func.is_array(p.typ)
    p = binder.coerce(p, func.array_of(FLOAT8) if multi else FLOAT8)
    res = FLOAT8 if name == "percentile_cont" else x.typ
    return CallBinary(name + ("_multi" if multi else ""), col, p, func.array_of(res) if multi else res)


def binder_input_scalar(binder: Binder, agg: _AggCtx, e: exp.Expression) -> HirScalar:
    """`e` over the aggregate's input rows (the aggregate context off)."""
    binder._agg = None
    try:
        return binder.scalar(e, agg.input_scope)
    finally:
        binder._agg = agg


def _sorted_values(binder: Binder, agg: _AggCtx, x: HirScalar, o: exp.Ordered, filter_where: exp.Expression | None) -> AggregateExpr:
    """array_agg(x ORDER BY x ..) over the rows with a non-NULL x (and the FILTER's)."""
    from sql.bind_aggregates import _nulls_last

    cond: HirScalar = CallUnary("not", CallUnary("is_null", x, BOOL), BOOL)
    if filter_where is not None:
        binder._agg = None
        try:
            cond = CallVariadic("and", (cond, binder._predicate(filter_where, agg.input_scope, "FILTER")), BOOL)
        finally:
            binder._agg = agg
    rt = record_type((x.typ,))
    rec: HirScalar = If(cond, CallVariadic("row", (x,), rt), Literal(None, rt), rt)
    return AggregateExpr("array_agg", rec, False, func.array_of(x.typ),
                         order_by=(ColumnOrder(0, bool(o.args.get("desc")), _nulls_last(o)),))


def _aggregate_column(agg: _AggCtx, a: AggregateExpr) -> HirScalar:
    from sql.scalar import Column

    if a not in agg.aggregates:
        agg.aggregates.append(a)
    return Column(agg.base + agg.aggregates.index(a), a.typ)


def _hypothetical(binder: Binder, agg: _AggCtx, name: str, direct: list[exp.Expression], ordered: list[exp.Ordered], out_scope: Scope,
                  filter_where: exp.Expression | None) -> HirScalar:
    """rank / dense_rank / percent_rank / cume_dist of the hypothetical row (see the module doc),
    bound as the counting aggregates they equal."""
    if len(direct) != len(ordered) or not ordered:
        raise SqlError(UNDEFINED_FUNCTION, f"function {name} with {len(direct)} direct and {len(ordered)} ordered arguments does not exist",
                       hint=_NO_FUNCTION_HINT)
    # the direct arguments must use only grouped columns: bound once after aggregation
    for h in direct:
        bound = binder.scalar(h, out_scope)
        if agg.sets is not None and _reads_key(bound):
            # the counts below read the direct arguments per input row, which is their
            # per-group value only when every grouping set groups by what they read
            raise unsupported(f"{name}(...) WITHIN GROUP with grouped-column direct arguments under grouping sets")
    # each direct argument and its aggregated one are compared as their common type
    for h, o in zip(direct, ordered, strict=True):
        func.unify([binder_input_scalar(binder, agg, o.this).typ, binder_input_scalar(binder, agg, h).typ], "WITHIN GROUP")
    before = _before(direct, ordered)
    peer = exp.and_(*[exp.NullSafeEQ(this=o.this.copy(), expression=h.copy()) for h, o in zip(direct, ordered, strict=True)])

    def counted(cond: exp.Expression | None, distinct_row: bool = False) -> exp.Expression:
        parts = [c for c in (cond, filter_where) if c is not None]
        arg: exp.Expression = exp.Star()
        if distinct_row:
            arg = exp.Distinct(expressions=[exp.Anonymous(this="row", expressions=[o.this.copy() for o in ordered])])
        call: exp.Expression = exp.Count(this=arg)
        if parts:
            call = exp.Filter(this=call, expression=exp.Where(this=exp.and_(*[exp.paren(p.copy()) for p in parts])))
        return call

    def f8(x: exp.Expression) -> exp.Expression:
        return exp.Cast(this=exp.paren(x), to=exp.DataType.build("double precision"))

    one = exp.Literal.number(1)
    match name:
        case "rank":
            q: exp.Expression = exp.Add(this=counted(before), expression=one)
        case "dense_rank":
            q = exp.Add(this=counted(before, distinct_row=True), expression=one)
        case "percent_rank":
            n = counted(None)
            q = exp.Case(ifs=[exp.If(this=exp.EQ(this=n, expression=exp.Literal.number(0)), true=f8(exp.Literal.number(0)))],
                         default=exp.Div(this=f8(counted(before)), expression=f8(n.copy())))
        case _:  # cume_dist
            q = exp.Div(this=f8(exp.Add(this=counted(cast(exp.Expression, exp.or_(exp.paren(before), exp.paren(peer)))), expression=one)),
                        expression=f8(exp.Add(this=counted(None), expression=one.copy())))
    return binder.scalar(q, out_scope)


def _before(direct: list[exp.Expression], ordered: list[exp.Ordered]) -> exp.Expression:
    """x sorts strictly before h, lexicographically in the ORDER BY order:
    lt1 OR (eq1 AND (lt2 OR (eq2 AND ..))), where lt_i = x_i <_i h_i with NULLs placed as
    written (never NULL-valued where it should be true) and eq_i = x_i IS NOT DISTINCT FROM h_i."""
    from sql.bind_aggregates import _nulls_last

    out: exp.Expression | None = None
    for h, o in reversed(list(zip(direct, ordered, strict=True))):
        x = o.this
        desc = bool(o.args.get("desc"))
        cmp = exp.GT if desc else exp.LT
        strict = cmp(this=x.copy(), expression=h.copy())
        if _nulls_last(o):  # a non-NULL x sorts before a NULL h
            nulls = exp.and_(exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null())), exp.Is(this=h.copy(), expression=exp.Null()))
        else:  # a NULL x sorts before a non-NULL h
            nulls = exp.and_(exp.Is(this=x.copy(), expression=exp.Null()), exp.Not(this=exp.Is(this=h.copy(), expression=exp.Null())))
        lt = cast(exp.Expression, exp.or_(exp.paren(strict), exp.paren(nulls)))
        if out is None:
            out = lt
        else:
            eq = exp.NullSafeEQ(this=x.copy(), expression=h.copy())
            out = cast(exp.Expression, exp.or_(exp.paren(lt), exp.paren(exp.and_(eq, exp.paren(out)))))
    assert out is not None
    return out


def _reads_key(h: HirScalar) -> bool:
    """Does the scalar (over a grouped query's output) read one of its columns?"""
    from sql.hir import Exists, OuterColumn, Param, Select
    from sql.scalar import Column, children

    if isinstance(h, (Column, Exists, Select)):
        return True  # (a subquery conservatively)
    if isinstance(h, (Param, OuterColumn)):
        return False
    return any(_reads_key(c) for c in children(h))  # type: ignore[arg-type]
