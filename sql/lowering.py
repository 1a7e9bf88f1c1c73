"""HIR -> MIR with general decorrelation.

Every HIR relation is lowered relative to an *outer* relation: the distinct tuples of the
enclosing scopes' columns. The MIR for a relation R lowered under outer O has O's columns
first, then R's: lower(R, O) = {(o, r) | o ∈ O, r ∈ R(o)}. Leaves cross-join with O; the
optimizer later turns the correlation predicates into join equivalences.

Identities used:
- Distinct(x) = Reduce(x, group_key=all columns, no aggregates)
- avg(x) = sum(x) / count(x)
- a global aggregate yields one row per outer tuple even for empty input:
  R ∪ Map(defaults)(O − Project(outer cols)(R))           (the COUNT bug, fixed)
- a scalar subquery S applied to input I (k outer + n local columns):
  D = Distinct(Project(u)(I)) with u the columns of I that S reads (Ctx.cols: where S's outer
  references are in D); R = lower(S, D); V = per-D-row (count, any value) of R, erroring
  (21000) when count > 1, plus NULL for the D rows without any; result = I ⋈ V on I.u = D
- EXISTS S: the same with V = (D-rows of R ↦ true) ∪ (the other D rows ↦ false)
- Filter(NOT (x IN S))(I), S uncorrelated with one column (a null-aware anti-join: a row
  stays iff x = s is false for every s):
  Threshold(I − Project_I(Filter((x = s) IS NULL OR x = s)(I × S))), since a row of I
  with multiplicity m that meets rows of S of total multiplicity k ≥ 1 is left with m − m·k ≤ 0
  (rendered as one Spark LEFT ANTI JOIN on that condition: compute.render.semijoin)
- L ⟕ R on p = J ∪ Map(nulls)(L − semijoin(L, J)) with J = L ⋈ R on p (right/full alike)
- a LATERAL right side R built only from Constant/Project/Map/Filter/FlatMap is lowered
  under the left rows L themselves: L ⋈lateral R = lower(R, L); any other is lowered under
  D = Distinct(the columns of L it reads) and joined back on them (as a subquery is).
- WITH MUTUALLY RECURSIVE under outer O: every binding value is lowered under O, so each
  binding holds (o, row) pairs and iterates per o; a reference under a deeper outer O' (whose
  columns extend O's) is O' ⋈ binding on O's columns (a cross join when O is the top level).
  A subquery that reads a binding of a correlated block is itself correlated.
- a window function w over input I (k outer + n local columns), Materialize's shape:
  Project(n+1 columns)(Map(record_get ..)(FlatMap unnest_list(Reduce(I, group_by=outer ++
  PARTITION BY, aggregates=[w(row(<row of I>, args), ORDER BY values)])))): the group key
  isolates each outer tuple's partitions, and each input row comes back with its value.
Join equivalences are null-safe (`IS NOT DISTINCT FROM`); SQL `=` additionally filters nulls.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, assert_never

from sql.errors import PROTOCOL_VIOLATION, SqlError, unsupported
from sql.func import AGGREGATES
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
    Param,
    Select,
    WindowExpr,
    hir_types,
)
from sql.hir_analysis import (
    free_columns,
    free_scalar_subqueries,
)
from sql.literal import cast_value
from sql.lowering_ctx import TOP, Ctx, _distinct
from sql.lowering_subqueries import SubqueryLowerer
from sql.mir import (
    Constant,
    Filter,
    FlatMap,
    Get,
    Join,
    Let,
    LetRec,
    Map,
    Mir,
    Negate,
    Project,
    Reduce,
    TopK,
    Union,
    mir_types,
)
from sql.scalar import (
    RANK_LIKE,
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    ParamLiteral,
    Scalar,
    WindowSpec,
    conjuncts,
    record_get,
)
from sql.subquery_keys import (
    not_in,
)
from sql.types import BOOL, INT8, MZ_TIMESTAMP, NUMERIC, SqlType, list_type, record_type


class Lowerer(SubqueryLowerer):
    """HIR -> MIR (the module docstring); subqueries: sql.lowering_subqueries."""

    # ---- scalars ----------------------------------------------------------------------
    def scalar(self, e: HirScalar, ctx: Ctx) -> Scalar:
        """A subquery-free HIR scalar over [outer k, local n] -> MIR."""
        k = ctx.k
        match e:
            case Column(index=i, typ=t):
                return Column(k + i, t)
            case OuterColumn(level=lv, index=i, typ=t):
                return Column(ctx.at(ctx.offset(lv) + i), t)
            case Param(n=n, typ=t):
                if n > len(self.params):
                    raise SqlError(PROTOCOL_VIOLATION, f"no value for parameter ${n}")
                v = self.params[n - 1]
                have = self.param_types[n - 1] if n - 1 < len(self.param_types) else t
                return ParamLiteral(cast_value(v, have, t) if v is not None and have != t else v, t)
            case Literal():
                return e
            case CallUnary(func=f, expr=x, typ=t):
                return CallUnary(f, self.scalar(x, ctx), t)
            case CallBinary(func=f, expr1=a, expr2=b, typ=t):
                return CallBinary(f, self.scalar(a, ctx), self.scalar(b, ctx), t)
            case CallVariadic(func="mz_now", typ=t) if self.now is not None:
                return Literal(self.now, t)
            case CallVariadic(func="now", typ=t) if self.now is not None:
                return Literal(cast_value(self.now, MZ_TIMESTAMP, t), t)
            case CallVariadic(func=f, exprs=xs, typ=t):
                return CallVariadic(f, tuple(self.scalar(x, ctx) for x in xs), t)
            case If(cond=c, then=a, els=b, typ=t):
                return If(self.scalar(c, ctx), self.scalar(a, ctx), self.scalar(b, ctx), t)
            case Exists() | Select():
                raise AssertionError("subqueries are applied before scalar lowering")
            case _:
                assert_never(e)

    def scalars_with_subqueries(self, inp: Mir, ctx: Ctx, n: int, exprs: tuple[HirScalar, ...]) -> tuple[Mir, list[Scalar], int]:
        """Apply every subquery in `exprs` to `inp` (k + n columns), appending one column
        each; returns (new input, lowered scalars, number of appended columns)."""
        inp, replaced, appended = self._hoist_subqueries(inp, ctx, n, exprs)
        return inp, [self.scalar(e, ctx) for e in replaced], appended

    def _hoist_subqueries(self, inp: Mir, ctx: Ctx, n: int, exprs: tuple[HirScalar, ...]) -> tuple[Mir, list[HirScalar], int]:
        """Apply every subquery in `exprs` to `inp` (k + n columns), appending one column
        each; returns (new input, exprs reading those columns, number of appended columns)."""
        appended = 0

        def replace(e: HirScalar) -> HirScalar:
            nonlocal inp, appended
            match e:
                case Exists() | Select():
                    inp = self._apply_subquery(inp, ctx, n + appended, e)
                    appended += 1
                    return Column(n + appended - 1, e.typ)
                case CallUnary(func=f, expr=x, typ=t):
                    return CallUnary(f, replace(x), t)
                case CallBinary(func=f, expr1=a, expr2=b, typ=t):
                    return CallBinary(f, replace(a), replace(b), t)
                case CallVariadic(func=f, exprs=xs, typ=t):
                    return CallVariadic(f, tuple(replace(x) for x in xs), t)
                case If(cond=c, then=a, els=b, typ=t):
                    return If(replace(c), replace(a), replace(b), t)
                case _:
                    return e

        replaced = [replace(e) for e in exprs]
        return inp, replaced, appended

    def _let_rec(self, r: HLetRec, ctx: Ctx) -> Mir:
        saved = dict(self._rec)
        outer_types = mir_types(ctx.outer) if ctx.outer is not None else ()
        gets: list[Get] = []
        for hid, ts in zip(r.ids, r.types, strict=True):
            lid = f"l{self._next_local}"
            self._next_local += 1
            get = Get(lid, lid, outer_types + ts, local=True)
            gets.append(get)
            self._rec[hid] = (ctx.outer, get)
        try:
            values = tuple(self.rel(v, ctx) for v in r.values)
            body = self.rel(r.body, ctx)
        finally:
            self._rec = saved
        return LetRec(tuple(g.id for g in gets), values, tuple(g.types for g in gets), (r.limit,) * len(gets), body)

    def _rec_get(self, hid: str, ctx: Ctx) -> Mir:
        if hid not in self._rec:
            raise SqlError("XX000", f"recursive binding {hid} read outside its WITH MUTUALLY RECURSIVE")
        outer, get = self._rec[hid]
        if outer is None:
            return self._cross(ctx.outer, get)
        if ctx.outer == outer:
            return get
        k0 = len(mir_types(outer))
        if ctx.k < k0:
            raise SqlError("XX000", "recursive binding read under fewer outer columns than it was defined with")
        ts = mir_types(get)
        joined = Join((ctx.outer, get), tuple((Column(i, ts[i]), Column(ctx.k + i, ts[i])) for i in range(k0)))  # type: ignore[arg-type]
        return Project(joined, tuple(range(ctx.k)) + tuple(range(ctx.k + k0, ctx.k + len(ts))))

    def rel(self, r: HirRel, ctx: Ctx = TOP) -> Mir:
        k = ctx.k
        match r:
            case HGet(id=i, local=True):
                return self._rec_get(i, ctx)
            case HGet(id=i, name=name, types=t):
                return self._cross(ctx.outer, Get(i, name, t))
            case HLetRec():
                return self._let_rec(r, ctx)
            case HConstant(rows=rows, types=t):
                return self._cross(ctx.outer, Constant(tuple((row, 1) for row in rows), t))
            case HProject(input=i, outputs=o):
                return Project(self.rel(i, ctx), tuple(range(k)) + tuple(k + c for c in o))
            case HMap(input=i, scalars=ss):
                inp = self.rel(i, ctx)
                n = len(mir_types(inp)) - k
                inp2, lowered, extra = self.scalars_with_subqueries(inp, ctx, n, ss)
                out: Mir = Map(inp2, tuple(lowered))
                if extra:
                    base = k + n
                    out = Project(out, tuple(range(base)) + tuple(range(base + extra, base + extra + len(ss))))
                return out
            case HFilter(input=i, predicates=ps):
                inp = self.rel(i, ctx)
                n = len(mir_types(inp)) - k
                rest = [p for p in ps if not free_scalar_subqueries(p)]
                if rest:  # plain predicates first: they shrink what the subqueries see
                    inp = Filter(inp, tuple(self.scalar(p, ctx) for p in rest))
                rest = []
                for p in ps:
                    if not free_scalar_subqueries(p):
                        continue
                    match p:
                        case Exists(rel=sub):
                            inp = self._semijoin(inp, ctx, n, sub, anti=False)
                        case CallUnary(func="not", expr=Exists(rel=sub)):
                            inp = self._semijoin(inp, ctx, n, sub, anti=True)
                        case _ if (ni := not_in(p)) is not None and not self._correlated(ni.sub):
                            inp = self._not_in(inp, ctx, ni)
                        case _:
                            rest.append(p)
                if not rest:
                    return inp
                inp2, lowered, extra = self.scalars_with_subqueries(inp, ctx, n, tuple(rest))
                out = Filter(inp2, tuple(lowered))
                if extra:
                    out = Project(out, tuple(range(k + n)))
                return out
            case HJoin():
                return self._join(r, ctx)
            case HFlatMap(input=i, func=f, exprs=xs, types=t):
                inp = self.rel(i, ctx)
                n = len(mir_types(inp)) - k
                inp2, lowered, extra = self.scalars_with_subqueries(inp, ctx, n, xs)
                out = FlatMap(inp2, f, tuple(lowered), t)
                if extra:
                    base = k + n
                    out = Project(out, tuple(range(base)) + tuple(range(base + extra, base + extra + len(t))))
                return out
            case HReduce(input=i, group_key=key, aggregates=aggs):
                return self._reduce(self.rel(i, ctx), ctx, key, aggs)
            case HDistinct(input=i):
                return _distinct(self.rel(i, ctx))
            case HTopK(input=i, group_key=g, order_key=o, limit=lim, offset=off):
                inner = self.rel(i, ctx)
                order = tuple(ColumnOrder(x.column + k, x.desc, x.nulls_last) for x in o)
                return TopK(inner, tuple(range(k)) + tuple(c + k for c in g), order, lim, off)
            case HNegate(input=i):
                return Negate(self.rel(i, ctx))
            case HThreshold(input=i):
                from sql.mir import Threshold

                return Threshold(self.rel(i, ctx))
            case HUnion(inputs=xs):
                return Union(tuple(self.rel(x, ctx) for x in xs))
            case HWindow(input=i, windows=ws):
                out = self.rel(i, ctx)
                for w in ws:
                    out = self._window(out, ctx, w)
                return out
            case _:
                assert_never(r)

    def _window(self, inp: Mir, ctx: Ctx, w: WindowExpr) -> Mir:
        """inp (k outer + n local columns) ++ one column: w's value for each row. The row
        record carries all k + n columns; see AggregateExpr for the window aggregate's input
        and output shapes."""
        if any(free_scalar_subqueries(e) for e in w.scalars()):
            # w(subquery ..) over inp = w(#c ..) over (inp with the subquery's value as #c),
            # that column projected away again
            n = len(mir_types(inp)) - ctx.k
            inp2, xs, extra = self._hoist_subqueries(inp, ctx, n, w.scalars())
            windowed = self._window(inp2, ctx, _with_scalars(w, xs))
            return Project(windowed, tuple(range(ctx.k + n)) + (ctx.k + n + extra,))
        ts = mir_types(inp)
        width = len(ts)
        row_t = record_type(ts)
        row = CallVariadic("row", tuple(Column(i, t) for i, t in enumerate(ts)), row_t)
        key = tuple(Column(i, ts[i]) for i in range(ctx.k)) + tuple(self.scalar(p, ctx) for p in w.partition_by)
        order_values = tuple(self.scalar(o, ctx) for o in w.order_by)
        # RANGE offset frames: the boundary values follow the ORDER BY values in the record
        bound_fields = [None if b is None else 1 + len(order_values) + k for k, b in enumerate(b for b in w.bounds if b is not None)]
        bound_values = tuple(self.scalar(b, ctx) for b in w.bounds if b is not None)
        it = iter(bound_fields)
        bounds = (next(it) if w.bounds[0] is not None else None, next(it) if w.bounds[1] is not None else None)
        order_values += bound_values
        args = tuple(self.scalar(a, ctx) for a in w.args)
        if w.func in RANK_LIKE:
            first: Scalar = CallVariadic("list_create", (row,), list_type(row_t))
        else:
            arg = args[0] if len(args) == 1 else CallVariadic("row", args, record_type(tuple(a.typ for a in args)))
            first = CallVariadic("row", (row, arg), record_type((row_t, arg.typ)))
        agg_input = CallVariadic("row", (first,) + order_values, record_type((first.typ,) + tuple(o.typ for o in order_values)))
        elem_t = record_type((w.typ, row_t))
        if w.func in AGGREGATES:
            func, spec = "window_agg", WindowSpec(w.order, w.frame, w.func, bounds)
        else:
            func, spec = w.func, WindowSpec(w.order, w.frame, None, bounds)
        red = Reduce(inp, key, (AggregateExpr(func, agg_input, False, list_type(elem_t), spec),))
        g = len(key)
        unnested = FlatMap(red, "unnest_list", (Column(g, list_type(elem_t)),), (elem_t,))
        elem = Column(g + 1, elem_t)
        orig = record_get(elem, 1, row_t)
        fields = tuple(record_get(orig, i, t) for i, t in enumerate(ts)) + (record_get(elem, 0, w.typ),)
        return Project(Map(unnested, fields), tuple(range(g + 2, g + 2 + width + 1)))

    def _join(self, j: HJoin, ctx: Ctx) -> Mir:
        re = _reassociate(j)
        if re is not None:
            return self.rel(re, ctx)
        k = ctx.k
        left = self.rel(j.left, ctx)
        nl = len(mir_types(left)) - k
        l_id, l_get = self._let(left)
        lets: list[tuple[str, Mir]] = [(l_id, left)]
        lts = mir_types(l_get)
        cross: Mir
        if j.lateral and self._correlated(j.right) and _row_wise(j.right):
            # applied to the left rows themselves: R(o) for each row o, duplicates included
            right = self.rel(j.right, ctx.enter(l_get, nl, list(range(k + nl))))
            r_id, r_get = self._let(right)
            lets.append((r_id, right))
            shared, nr = k + nl, len(mir_types(right)) - k - nl
            cross = r_get
        else:
            if j.lateral and self._correlated(j.right):
                used = self._outer_keys(j.right, ctx, nl, k + nl)
                distinct = _distinct(Project(l_get, tuple(used)))
                d_id, d_get = self._let(distinct)
                lets.append((d_id, distinct))
                right = self.rel(j.right, ctx.enter(d_get, nl, used))
            else:
                used = list(range(k))
                right = self.rel(j.right, ctx)
            shared = len(used)  # the right side repeats these columns of the left first
            r_id, r_get = self._let(right)
            lets.append((r_id, right))
            rts = mir_types(r_get)
            nr = len(rts) - shared
            eq = tuple((Column(c, lts[c]), Column(k + nl + i, rts[i])) for i, c in enumerate(used))
            cross = Join((l_get, r_get), eq)
            cross = Project(cross, tuple(range(k + nl)) + tuple(range(k + nl + shared, k + nl + shared + nr)))
        inner_ctx = ctx
        inp2, preds, extra = self.scalars_with_subqueries(cross, inner_ctx, nl + nr, (j.on,))
        inner: Mir = Filter(inp2, tuple(preds))
        if extra:
            inner = Project(inner, tuple(range(k + nl + nr)))
        if j.kind == "inner":
            return _wrap_lets(lets, inner)
        if j.lateral and j.kind != "left":
            raise unsupported(f"LATERAL {j.kind.upper()} JOIN")
        j_id, j_get = self._let(inner)
        lets.append((j_id, inner))
        parts: list[Mir] = [j_get]
        jts = mir_types(j_get)
        if j.kind in ("left", "full"):
            keys = None if j.lateral else _left_keys(j.on, nl)
            if keys is not None:  # matched iff the key matched: L − (L ⋉ Distinct(J's keys))
                unmatched = self._antijoin_on(l_get, j_get, list(range(k)) + [k + c for c in keys])
            else:
                unmatched = self._antijoin(l_get, j_get, range(k + nl))
            nulls = tuple(Literal(None, jts[c]) for c in range(k + nl, k + nl + nr))
            parts.append(Map(unmatched, nulls))
        if j.kind in ("right", "full"):
            right_cols = list(range(k)) + list(range(k + nl, k + nl + nr))
            unmatched = self._antijoin(self._right_rows(r_get, k, shared), j_get, right_cols)
            nulls = tuple(Literal(None, jts[c]) for c in range(k, k + nl))
            padded = Map(unmatched, nulls)  # [k, right, nulls(left)]
            order = tuple(range(k)) + tuple(range(k + nr, k + nr + nl)) + tuple(range(k, k + nr))
            parts.append(Project(padded, order))
        return _wrap_lets(lets, Union(tuple(parts)))

    @staticmethod
    def _right_rows(r_get: Mir, k: int, shared: int) -> Mir:
        """The right input as [outer k, right columns] (dropping a lateral prefix)."""
        ts = mir_types(r_get)
        return Project(r_get, tuple(range(k)) + tuple(range(shared, len(ts))))

    @staticmethod
    def _antijoin(x: Mir, joined: Mir, cols) -> Mir:
        """x − (x ⋉ joined): the rows of x (all columns) that do not appear among `cols` of
        `joined` (null-safe), with their multiplicities."""
        cols = list(cols)
        xts = mir_types(x)
        matched = Reduce(Project(joined, tuple(cols)), tuple(Column(i, xts[i]) for i in range(len(cols))), ())
        semi = Project(Join((x, matched), tuple((Column(i, xts[i]), Column(len(xts) + i, xts[i])) for i in range(len(xts)))), tuple(range(len(xts))))
        return Union((x, Negate(semi)))

    @staticmethod
    def _antijoin_on(x: Mir, joined: Mir, cols: list[int]) -> Mir:
        """x − (x ⋉ Distinct(Project(cols)(joined)) on those columns of x): the rows of x whose
        values in `cols` (columns of both) do not appear in `joined`, with their multiplicities."""
        xts = mir_types(x)
        matched = _distinct(Project(joined, tuple(cols)))
        eq = tuple((Column(c, xts[c]), Column(len(xts) + i, xts[c])) for i, c in enumerate(cols))
        semi = Project(Join((x, matched), eq), tuple(range(len(xts))))
        return Union((x, Negate(semi)))

    def _reduce(self, inp: Mir, ctx: Ctx, key: tuple[int, ...], aggs: tuple[AggregateExpr, ...]) -> Mir:
        k = ctx.k
        ts = mir_types(inp)
        group = tuple(Column(c, ts[c]) for c in range(k)) + tuple(Column(k + c, ts[k + c]) for c in key)
        lowered: list[AggregateExpr] = []
        finals: list[Scalar] = []
        ng = len(group)

        def slot(a: AggregateExpr) -> int:
            if a not in lowered:
                lowered.append(a)
            return ng + lowered.index(a)

        # subqueries in arguments: applied to the input first (one appended column each, the
        # group key's columns unchanged), the argument reads their columns
        with_subs = [i for i, a in enumerate(aggs) if free_scalar_subqueries(a.expr)]
        pre: dict[int, Scalar] = {}
        if with_subs:
            inp, lowered_args, _ = self.scalars_with_subqueries(inp, ctx, len(ts) - k, tuple(aggs[i].expr for i in with_subs))
            pre = dict(zip(with_subs, lowered_args, strict=True))
        for i, a in enumerate(aggs):
            a = replace(a, expr=pre[i] if i in pre else self.scalar(a.expr, ctx))
            if a.func == "avg":
                st = a.expr.typ
                small_int = st.name in ("int2", "int4")
                sum_t = INT8 if small_int else (NUMERIC if st.name in ("int8", "numeric", "uint8") else a.typ)
                s = slot(AggregateExpr("sum", a.expr, a.distinct, sum_t))
                c = slot(AggregateExpr("count", a.expr, a.distinct, INT8))
                sum_col: Scalar = Column(s, sum_t)
                if sum_t != a.typ:
                    sum_col = CallUnary("cast", sum_col, a.typ)
                cnt: Scalar = Column(c, INT8)
                if a.typ.name != "interval":
                    cnt = CallUnary("cast", cnt, a.typ)
                finals.append(CallBinary("div_avg", sum_col, cnt, a.typ))
            else:
                finals.append(Column(slot(a), a.typ))
        red: Mir = Reduce(inp, group, tuple(lowered))
        if not key:
            red = self._global_default(red, ctx, lowered)
        width = ng + len(lowered)
        if [f.index if isinstance(f, Column) else -1 for f in finals] == list(range(ng, ng + len(finals))) and len(finals) == len(lowered):
            return red
        out = Map(red, tuple(finals))
        return Project(out, tuple(range(ng)) + tuple(range(width, width + len(finals))))

    def _global_default(self, red: Mir, ctx: Ctx, aggs: list[AggregateExpr]) -> Mir:
        """R ∪ Map(defaults)(O − Project(outer)(R)): one row per outer tuple, even for none."""
        k = ctx.k
        lid, get = self._let(red)
        defaults = tuple(Literal(0 if a.func == "count" else None, a.typ) for a in aggs)
        base = ctx.outer if ctx.outer is not None else Constant((((), 1),), ())
        empty = Union((Negate(Project(get, tuple(range(k)))), base))
        return Let(lid, red, Union((get, Map(empty, defaults))))


def _reassociate(j: HJoin) -> HirRel | None:
    """(A ⋈_p B) ⋈lateral_q R = Project(perm)(Filter(p', q')((A ⋈lateral R) ⋈ B)) when both
    joins are inner, R reads only A's columns of its left side, and p, q hold no subquery
    (p', q': p, q over the columns A, R, B; B's own references to its left read A's columns,
    which stay first). `FROM a, b JOIN LATERAL (VALUES (a.x)) ..` then applies the lateral
    side to a alone, as PostgreSQL does, instead of to a × b."""
    match j:
        case HJoin(left=HJoin(left=a, right=b, on=p, kind="inner", lateral=b_lat), right=r, on=q, kind="inner", lateral=True):
            pass
        case _:
            return None
    na, nb, nr = len(hir_types(a)), len(hir_types(b)), len(hir_types(r))
    if free_scalar_subqueries(p) or free_scalar_subqueries(q):
        return None
    used = {i for lv, i in free_columns(r) if lv == 1}
    if not used or max(used) >= na:
        return None
    to_new = {**{i: i for i in range(na)}, **{na + i: na + nr + i for i in range(nb)}, **{na + nb + i: na + i for i in range(nr)}}
    inner = HJoin(HJoin(a, r, Literal(True, BOOL), "inner", True), b, Literal(True, BOOL), "inner", b_lat)
    preds = tuple(_permute_hir(e, to_new) for e in conjuncts((p, q)) if e != Literal(True, BOOL))
    body: HirRel = HFilter(inner, preds) if preds else inner
    return HProject(body, tuple(to_new[c] for c in range(na + nb + nr)))


def _permute_hir(e: HirScalar, m: dict[int, int]) -> HirScalar:
    """e (subquery-free) with its own columns #i renamed #m[i]."""
    match e:
        case Column(index=i, typ=t):
            return Column(m[i], t)
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, _permute_hir(x, m), t)
        case CallBinary(func=f, expr1=x, expr2=y, typ=t):
            return CallBinary(f, _permute_hir(x, m), _permute_hir(y, m), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(_permute_hir(x, m) for x in xs), t)
        case If(cond=c, then=x, els=y, typ=t):
            return If(_permute_hir(c, m), _permute_hir(x, m), _permute_hir(y, m), t)
        case _:
            return e


def _row_wise(r: HirRel) -> bool:
    """Is r built only from Constant, Project, Map, Filter and FlatMap (Materialize's "simple"
    subquery)? Then lower(r, O) is R(o) for each row o of O, duplicates of O included, so a
    LATERAL r is applied to the left rows themselves: L ⋈lateral r = lower(r, L), with no
    Distinct(L) and no join back."""
    match r:
        case HConstant():
            return True
        case HProject(input=i) | HMap(input=i) | HFilter(input=i) | HFlatMap(input=i):
            return _row_wise(i)
        case _:
            return False


def _left_keys(on: HirScalar, nl: int) -> list[int] | None:
    """The left columns c1, .. when every conjunct of a join's ON clause (left columns < nl,
    then the right's) is `c = e` with e over the right (and enclosing) columns, or reads no
    left column: then whether a left row meets a right row depends only on its values of
    c1, .. (and the enclosing row), so L's unmatched rows are those whose keys J lacks."""
    keys: list[int] = []
    for p in conjuncts((on,)):
        cols = _local_columns(p)
        if cols is None:
            return None
        if all(c >= nl for c in cols):
            continue
        if not (isinstance(p, CallBinary) and p.func == "eq"):
            return None
        for x, y in ((p.expr1, p.expr2), (p.expr2, p.expr1)):
            ys = _local_columns(y)
            if isinstance(x, Column) and x.index < nl and ys is not None and all(c >= nl for c in ys):
                keys.append(x.index)
                break
        else:
            return None
    return sorted(set(keys))


def _local_columns(e: HirScalar) -> set[int] | None:
    """The columns of its own scope that e reads; None if it holds a subquery."""
    match e:
        case Column(index=i):
            return {i}
        case Exists() | Select():
            return None
        case CallUnary(expr=x):
            parts = [x]
        case CallBinary(expr1=a, expr2=b):
            parts = [a, b]
        case CallVariadic(exprs=xs):
            parts = list(xs)
        case If(cond=c, then=a, els=b):
            parts = [c, a, b]
        case _:
            return set()
    out: set[int] = set()
    for x in parts:
        got = _local_columns(x)
        if got is None:
            return None
        out |= got
    return out


def _wrap_lets(lets: list[tuple[str, Mir]], body: Mir) -> Mir:
    for lid, value in reversed(lets):
        body = Let(lid, value, body)
    return body


def lower(rel: HirRel, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = (), now: int | None = None) -> Mir:
    return Lowerer(params, param_types, now).rel(rel, TOP)


def _with_scalars(w: WindowExpr, xs: list[HirScalar]) -> WindowExpr:
    """w reading `xs` (in the order of w.scalars()) instead of its own scalars."""
    it = iter(xs)
    args = tuple(next(it) for _ in w.args)
    partition = tuple(next(it) for _ in w.partition_by)
    order_by = tuple(next(it) for _ in w.order_by)
    bounds = (None if w.bounds[0] is None else next(it), None if w.bounds[1] is None else next(it))
    return replace(w, args=args, partition_by=partition, order_by=order_by, bounds=bounds)
