"""Analyses of HIR relations: free outer columns and levels, local Gets, row-count bounds."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any, assert_never

from sql.hir import (
    Exists,
    HConstant,
    HDistinct,
    HFilter,
    HFlatMap,
    HGet,
    HirRel,
    HirScalar,
    HJoin,
    HLetRec,
    HMap,
    HNegate,
    HProject,
    HReduce,
    HThreshold,
    HTopK,
    HUnion,
    HWindow,
    OuterColumn,
    Select,
)
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    If,
    Literal,
)
from sql.types import SqlType


def free_levels(r: HirRel, depth: int = 0) -> set[int]:
    """Outer levels referenced from inside r, relative to the scope `depth` levels out of
    r (0: r's own scope). Subqueries and lateral right sides add a level."""
    return {lv for lv, _ in free_columns(r, depth)}


def free_columns(r: HirRel, depth: int = 0) -> set[tuple[int, int]]:
    """The outer columns (level, index) referenced from inside r, levels as in free_levels."""
    out: set[tuple[int, int]] = set()

    def scal(e: HirScalar, d: int) -> None:
        match e:
            case OuterColumn(level=lv, index=i):
                if lv > d:
                    out.add((lv - d, i))
            case Exists(rel=x) | Select(rel=x):
                out.update(free_columns(x, d + 1))
            case CallUnary(expr=x):
                scal(x, d)
            case CallBinary(expr1=a, expr2=b):
                scal(a, d)
                scal(b, d)
            case CallVariadic(exprs=xs):
                for x in xs:
                    scal(x, d)
            case If(cond=c, then=a, els=b):
                scal(c, d)
                scal(a, d)
                scal(b, d)
            case _:
                pass

    def walk(x: HirRel, d: int) -> None:
        match x:
            case HGet() | HConstant():
                pass
            case HMap(input=i, scalars=ss) | HFlatMap(input=i, exprs=ss):
                walk(i, d)
                for s in ss:
                    scal(s, d)
            case HFilter(input=i, predicates=ps):
                walk(i, d)
                for s in ps:
                    scal(s, d)
            case HJoin(left=a, right=b, on=on, lateral=lat):
                walk(a, d)
                walk(b, d + 1 if lat else d)
                scal(on, d)
            case HReduce(input=i, aggregates=aggs):
                walk(i, d)
                for agg in aggs:
                    scal(agg.expr, d)
            case HProject(input=i) | HDistinct(input=i) | HTopK(input=i) | HNegate(input=i) | HThreshold(input=i):
                walk(i, d)
            case HWindow(input=i, windows=ws):
                walk(i, d)
                for w in ws:
                    for s in w.scalars():
                        scal(s, d)
            case HUnion(inputs=xs):
                for y in xs:
                    walk(y, d)
            case HLetRec(values=vs, body=b):
                for y in vs:
                    walk(y, d)
                walk(b, d)

    walk(r, depth)
    return out


def local_gets(r: HirRel) -> set[str]:
    """The ids of the recursive bindings read anywhere inside r (subqueries included)."""
    out: set[str] = set()

    def scal(e: HirScalar) -> None:
        match e:
            case Exists(rel=x) | Select(rel=x):
                walk(x)
            case CallUnary(expr=x):
                scal(x)
            case CallBinary(expr1=a, expr2=b):
                scal(a)
                scal(b)
            case CallVariadic(exprs=xs):
                for x in xs:
                    scal(x)
            case If(cond=c, then=a, els=b):
                scal(c)
                scal(a)
                scal(b)

    def walk(x: HirRel) -> None:
        match x:
            case HGet(id=i, local=True):
                out.add(i)
            case HGet() | HConstant():
                pass
            case HMap(input=i, scalars=ss) | HFlatMap(input=i, exprs=ss) | HFilter(input=i, predicates=ss):
                walk(i)
                for s in ss:
                    scal(s)
            case HJoin(left=a, right=b, on=on):
                walk(a)
                walk(b)
                scal(on)
            case HReduce(input=i, aggregates=aggs):
                walk(i)
                for agg in aggs:
                    scal(agg.expr)
            case HProject(input=i) | HDistinct(input=i) | HTopK(input=i) | HNegate(input=i) | HThreshold(input=i):
                walk(i)
            case HWindow(input=i, windows=ws):
                walk(i)
                for w in ws:
                    for s in w.scalars():
                        scal(s)
            case HUnion(inputs=xs):
                for y in xs:
                    walk(y)
            case HLetRec(values=vs, body=b):
                for y in vs:
                    walk(y)
                walk(b)
            case _:
                assert_never(x)

    walk(r)
    return out


def exactly_one_row(r: HirRel) -> bool:
    """Global aggregates (under Project/Map) yield exactly one row per outer tuple."""
    match r:
        case HProject(input=i) | HMap(input=i):
            return exactly_one_row(i)
        case HReduce(group_key=()):
            return True
    return False


def at_most_one_row(r: HirRel) -> bool:
    """Does r yield at most one row (per outer tuple)? Global aggregates, LIMIT 0/1 and
    constants of at most one row, under Project/Map/Filter."""
    match r:
        case HProject(input=i) | HMap(input=i) | HFilter(input=i):
            return at_most_one_row(i)
        case HReduce(group_key=()):
            return True
        case HTopK(group_key=(), limit=lim) if lim is not None and lim <= 1:
            return True
        case HConstant(rows=rows):
            return len(rows) <= 1
    return False


def free_scalar_subqueries(e: HirScalar) -> bool:
    match e:
        case Exists() | Select():
            return True
        case CallUnary(expr=x):
            return free_scalar_subqueries(x)
        case CallBinary(expr1=a, expr2=b):
            return free_scalar_subqueries(a) or free_scalar_subqueries(b)
        case CallVariadic(exprs=xs):
            return any(free_scalar_subqueries(x) for x in xs)
        case If(cond=c, then=a, els=b):
            return any(free_scalar_subqueries(x) for x in (c, a, b))
    return False


def shift_levels(x: Any, depth: int = 0, by: int = 1) -> Any:
    """x, part of an expression moved `by` scopes inwards (bind_subqueries.shift_outer; -1:
    outwards), `depth` scopes inside it, with each reference to the moved expression's scope
    or beyond reaching `by` levels further out: outer(l, i) -> outer(l + by, i) for l >= depth;
    references bound inside the expression are unchanged. Subqueries and lateral right sides
    cross a scope; literals and types hold no references."""
    match x:
        case OuterColumn(level=lv) if lv >= depth:
            return replace(x, level=lv + by)
        case Exists(rel=r) | Select(rel=r):
            return replace(x, rel=shift_levels(r, depth + 1, by))
        case HJoin(left=a, right=b, on=on, lateral=lat):
            return replace(x, left=shift_levels(a, depth, by), right=shift_levels(b, depth + 1 if lat else depth, by),
                           on=shift_levels(on, depth, by))
        case Literal() | SqlType() | OuterColumn():
            return x
        case tuple():
            return tuple(shift_levels(y, depth, by) for y in x)
        case _ if is_dataclass(x) and not isinstance(x, type):
            return replace(x, **{f.name: shift_levels(getattr(x, f.name), depth, by) for f in fields(x) if f.init})
    return x
