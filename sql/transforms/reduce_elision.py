"""Reduce elision: a Reduce over an input already unique on (a subset of) its group key
sees only singleton groups, so it is a Map.

    Reduce(key=[#k..], aggs)(x) = Project(key ++ aggs)(Map(key, agg1(row), ..)(x))
        when x has a unique key contained in the plain-column group key

with, for a one-row group: count(*) = 1, count(e) = (e IS NULL ? 0 : 1), sum(e) = e cast to
the sum's type, min/max/any_value/bool_and/bool_or(e) = e (DISTINCT changes nothing).
Any other aggregate keeps the Reduce.
"""

from __future__ import annotations

from sql import mir
from sql.scalar import TRUE, AggregateExpr, CallUnary, Column, If, Literal, Scalar
from sql.transforms.analysis import unique_keys
from sql.transforms.visit import map_children
from sql.types import BOOL


def _single(a: AggregateExpr) -> Scalar | None:
    """The aggregate of a one-row group, as a scalar over that row (None: unknown)."""
    e = a.expr
    if a.window is not None:
        return None  # a window aggregate's one-row result is a list: not simplified here
    match a.func:
        case "count":
            if e == TRUE:
                return Literal(1, a.typ)
            return If(CallUnary("is_null", e, BOOL), Literal(0, a.typ), Literal(1, a.typ), a.typ)
        case "sum":
            return e if e.typ == a.typ else CallUnary("cast", e, a.typ)
        case "min" | "max" | "any_value" | "bool_and" | "bool_or" if e.typ == a.typ:
            return e
        case _:
            return None


def reduce_elision(r: mir.Mir) -> mir.Mir:
    return _elide(r, {}, {})


def _elide(r: mir.Mir, env: dict, memo: dict) -> mir.Mir:
    if isinstance(r, mir.Let):
        value = _elide(r.value, env, memo)
        body = _elide(r.body, {**env, r.id: unique_keys(value, env, memo)}, memo)
        return r if value is r.value and body is r.body else mir.Let(r.id, value, body)
    r = map_children(r, lambda c: _elide(c, env, memo))
    match r:
        case mir.Reduce(input=x, group_key=key, aggregates=aggs) if all(isinstance(k, Column) for k in key):
            cols = {k.index for k in key}  # type: ignore[union-attr]
            if not any(k <= cols for k in unique_keys(x, env, memo)):
                return r
            singles = [_single(a) for a in aggs]
            if any(s is None for s in singles):
                return r
            n = mir.arity(x)
            out = tuple(k.index for k in key) + tuple(range(n, n + len(aggs)))  # type: ignore[union-attr]
            m = mir.Map(x, tuple(s for s in singles if s is not None)) if aggs else x
            return mir.Project(m, out)
        case _:
            return r
