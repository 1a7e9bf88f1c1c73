"""HIR -> MIR. Parameters become literals; SQL constructs become MIR operators:

- Distinct(x) = Reduce(x, group_key=all columns, no aggregates)
- avg(x) = sum(x) / count(x) (Map over a Reduce)
- a global aggregate gets its empty-input row: R ∪ (defaults × (Constant[()] - Project()(R)))
- inner join on conjunctive equalities = Join with equivalences, the rest a Filter.
"""

from __future__ import annotations

from typing import Any, assert_never

from sql.errors import unsupported
from sql.hir import (
    HConstant,
    HDistinct,
    HFilter,
    HGet,
    HirRel,
    HirScalar,
    HJoin,
    HMap,
    HNegate,
    HProject,
    HReduce,
    HThreshold,
    HTopK,
    HUnion,
    Param,
    hir_types,
)
from sql.literal import cast_value
from sql.mir import Constant, Filter, Get, Join, Let, Map, Mir, Negate, Project, Reduce, Threshold, TopK, Union, mir_types
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    Scalar,
    columns_used,
)
from sql.types import INT8, NUMERIC, SqlType


class Lowerer:
    def __init__(self, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = ()) -> None:
        self.params = params or []
        self.param_types = param_types
        self._next_local = 0

    def scalar(self, e: HirScalar) -> Scalar:
        match e:
            case Param(n=n, typ=t):
                if n > len(self.params):
                    from sql.errors import PROTOCOL_VIOLATION, SqlError

                    raise SqlError(PROTOCOL_VIOLATION, f"no value for parameter ${n}")
                v = self.params[n - 1]
                have = self.param_types[n - 1] if n - 1 < len(self.param_types) else t
                return Literal(cast_value(v, have, t) if v is not None and have != t else v, t)
            case Column() | Literal():
                return e
            case CallUnary(func=f, expr=x, typ=t):
                return CallUnary(f, self.scalar(x), t)
            case CallBinary(func=f, expr1=a, expr2=b, typ=t):
                return CallBinary(f, self.scalar(a), self.scalar(b), t)
            case CallVariadic(func=f, exprs=xs, typ=t):
                return CallVariadic(f, tuple(self.scalar(x) for x in xs), t)
            case If(cond=c, then=a, els=b, typ=t):
                return If(self.scalar(c), self.scalar(a), self.scalar(b), t)
            case _:
                assert_never(e)

    def rel(self, r: HirRel) -> Mir:
        match r:
            case HGet(id=i, name=n, types=t):
                return Get(i, n, t)
            case HConstant(rows=rows, types=t):
                return Constant(tuple((row, 1) for row in rows), t)
            case HProject(input=i, outputs=o):
                return Project(self.rel(i), o)
            case HMap(input=i, scalars=s):
                return Map(self.rel(i), tuple(self.scalar(x) for x in s))
            case HFilter(input=i, predicates=p):
                return Filter(self.rel(i), tuple(self.scalar(x) for x in p))
            case HJoin(left=a, right=b, on=on, kind=kind):
                if kind != "inner":
                    raise unsupported(f"{kind.upper()} JOIN")
                return self._join(self.rel(a), self.rel(b), self.scalar(on))
            case HReduce(input=i, group_key=k, aggregates=aggs):
                return self._reduce(self.rel(i), k, aggs)
            case HDistinct(input=i):
                inner = self.rel(i)
                ts = mir_types(inner)
                return Reduce(inner, tuple(Column(c, t) for c, t in enumerate(ts)), ())
            case HTopK(input=i, group_key=g, order_key=o, limit=lim, offset=off):
                return TopK(self.rel(i), g, o, lim, off)
            case HNegate(input=i):
                return Negate(self.rel(i))
            case HThreshold(input=i):
                return Threshold(self.rel(i))
            case HUnion(inputs=xs):
                return Union(tuple(self.rel(x) for x in xs))
            case _:
                assert_never(r)

    def _join(self, left: Mir, right: Mir, on: Scalar) -> Mir:
        la = len(mir_types(left))
        conj = _conjuncts(on)
        equivs: list[tuple[Scalar, ...]] = []
        rest: list[Scalar] = []
        for c in conj:
            if isinstance(c, Literal) and c.value is True:
                continue
            if isinstance(c, CallBinary) and c.func == "eq":
                ua, ub = columns_used(c.expr1), columns_used(c.expr2)
                if ua and ub and (max(ua) < la <= min(ub) or max(ub) < la <= min(ua)):
                    equivs.append((c.expr1, c.expr2))
                    continue
            rest.append(c)
        j: Mir = Join((left, right), tuple(equivs))
        return Filter(j, tuple(rest)) if rest else j

    def _reduce(self, inp: Mir, key: tuple[int, ...], aggs: tuple[AggregateExpr, ...]) -> Mir:
        ts = mir_types(inp)
        group = tuple(Column(c, ts[c]) for c in key)
        # avg(x) -> sum(x), count(x); everything else passes through
        lowered: list[AggregateExpr] = []
        finals: list[Scalar] = []
        nk = len(group)

        def slot(a: AggregateExpr) -> int:
            if a not in lowered:
                lowered.append(a)
            return nk + lowered.index(a)

        for a in aggs:
            a = AggregateExpr(a.func, self.scalar(a.expr), a.distinct, a.typ)
            if a.func == "avg":
                st = a.expr.typ
                sum_t = NUMERIC if st.name in ("int2", "int4", "int8", "numeric", "uint8") else a.typ
                s = slot(AggregateExpr("sum", a.expr, a.distinct, sum_t if st.name not in ("int2", "int4") else INT8))
                c = slot(AggregateExpr("count", a.expr, a.distinct, INT8))
                sum_col: Scalar = Column(s, sum_t if st.name not in ("int2", "int4") else INT8)
                if sum_col.typ != a.typ:
                    sum_col = CallUnary("cast", sum_col, a.typ)
                cnt: Scalar = Column(c, INT8)
                if a.typ.name != "interval":
                    cnt = CallUnary("cast", cnt, a.typ)
                finals.append(CallBinary("div_avg", sum_col, cnt, a.typ))
            else:
                finals.append(Column(slot(a), a.typ))
        red: Mir = Reduce(inp, group, tuple(lowered))
        simple = all(isinstance(f, Column) for f in finals) and [f.index for f in finals] == list(range(nk, nk + len(finals)))  # type: ignore[union-attr]
        if not key:
            red = self._global_default(red, lowered)
        if simple:
            return red
        width = nk + len(lowered)
        out = Map(red, tuple(finals))
        return Project(out, tuple(range(nk)) + tuple(range(width, width + len(finals))))

    def _global_default(self, red: Mir, aggs: list[AggregateExpr]) -> Mir:
        """R ∪ Map(defaults)(Constant[()] − Project()(R)): one row even for empty input."""
        lid = f"l{self._next_local}"
        self._next_local += 1
        ts = mir_types(red)
        get = Get(lid, lid, ts, local=True)
        defaults = tuple(Literal(0 if a.func == "count" else None, a.typ) for a in aggs)
        empty = Union((Negate(Project(get, ())), Constant(((( ), 1),), ())))
        return Let(lid, red, Union((get, Map(empty, defaults))))


def _conjuncts(e: Scalar) -> list[Scalar]:
    if isinstance(e, CallVariadic) and e.func == "and":
        out: list[Scalar] = []
        for x in e.exprs:
            out.extend(_conjuncts(x))
        return out
    return [e]


def lower(rel: HirRel, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = ()) -> Mir:
    return Lowerer(params, param_types).rel(rel)


def hir_arity(rel: HirRel) -> int:
    return len(hir_types(rel))

