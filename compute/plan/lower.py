"""MIR -> LIR with node ids allocated post-order from 0 within one dataflow.

Chains of Map/Filter/Project fuse into one Mfp (or into the Get they read). Variant choice:
Reduce: no aggregates -> Distinct; only min/max -> Hierarchical (Monotonic if MIR says so,
else Bucketed); only non-distinct sum/count -> Accumulable; otherwise Basic. TopK:
monotonic & offset 0 & limit 1 -> MonotonicTop1; monotonic & offset 0 -> MonotonicTopK;
otherwise Basic. Joins: MIR `type=differential` -> Join::Linear, `type=delta` -> Join::Delta
with the stages of JoinImplementation's paths (an unimplemented join: Linear, in input order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from compute.plan import lir
from sql import mir
from sql.scalar import Column, Scalar, columns_used, permute
from sql.transforms.join_implementation import JoinGraph
from sql.transforms.row_bounds import row_bound


class _Ids:
    """Node ids, and what the join stages' row bounds need: the storage sizes and the bounds
    of the enclosing Let bindings."""

    def __init__(self, sizes: Mapping[str, int]) -> None:
        self.next = 0
        self.sizes = sizes
        self.lets: dict[str, int | None] = {}

    def take(self) -> int:
        n = self.next
        self.next += 1
        return n


def _compose(chain: list[mir.Mir], input_arity: int) -> lir.Mfp:
    """Fuse Map/Filter/Project nodes (outermost first in `chain`) into one Mfp."""
    exprs: list[Scalar] = []
    preds: list[Scalar] = []
    proj = list(range(input_arity))
    for node in reversed(chain):
        match node:
            case mir.Map(scalars=ss):
                for s in ss:
                    e = permute(s, proj)
                    if isinstance(e, Column):
                        proj.append(e.index)
                    else:
                        exprs.append(e)
                        proj.append(input_arity + len(exprs) - 1)
            case mir.Filter(predicates=ps):
                preds.extend(permute(p, proj) for p in ps)
            case mir.Project(outputs=o):
                proj = [proj[i] for i in o]
            case _:
                raise AssertionError(node)
    full = tuple(range(input_arity + len(exprs)))
    return lir.Mfp(input_arity, tuple(exprs), tuple(preds), None if tuple(proj) == full else tuple(proj))


def _is_mfp(r: mir.Mir) -> bool:
    return isinstance(r, (mir.Map, mir.Filter, mir.Project))


def lower(root: mir.Mir, sizes: Mapping[str, int] | None = None) -> lir.Plan:
    """`sizes`: the exact record counts of the storage collections at the read time (by id),
    for the join stages' `lookup_rows`; without them every bound is unknown."""
    ids = _Ids(sizes or {})
    return _lower(root, ids)


def _lower(r: mir.Mir, ids: _Ids) -> lir.Plan:
    if _is_mfp(r):
        chain: list[mir.Mir] = []
        x = r
        while _is_mfp(x):
            chain.append(x)
            x = x.input  # type: ignore[union-attr]
        mfp = _compose(chain, mir.arity(x))
        if isinstance(x, mir.Get):
            strategy = "PassArrangements" if mfp.is_identity() else "Collection"
            return lir.Plan(ids.take(), lir.Get(x.id, x.name, x.types, strategy, mfp, x.local))
        inner = _lower(x, ids)
        if mfp.is_identity():
            return inner
        return lir.Plan(ids.take(), lir.MfpNode(inner, mfp))
    match r:
        case mir.Constant(rows=rows, types=t):
            return lir.Plan(ids.take(), lir.Constant(rows, t))
        case mir.Get(id=i, name=n, types=t, local=loc):
            return lir.Plan(ids.take(), lir.Get(i, n, t, "PassArrangements", lir.Mfp(len(t)), loc))
        case mir.Let(id=i, value=v, body=b):
            value = _lower(v, ids)
            outer = ids.lets
            ids.lets = {**outer, i: row_bound(v, ids.sizes, outer)}
            try:
                body = _lower(b, ids)
            finally:
                ids.lets = outer
            return lir.Plan(ids.take(), lir.Let(i, value, body))
        case mir.LetRec(ids=lids, values=vs, limits=lims, body=b):
            outer = ids.lets
            ids.lets = {**outer, **dict.fromkeys(lids)}  # fixpoints: unbounded
            try:
                values = tuple(_lower(v, ids) for v in vs)
                body = _lower(b, ids)
            finally:
                ids.lets = outer
            return lir.Plan(ids.take(), lir.LetRec(lids, values, lims, body))
        case mir.Join(inputs=xs, equivalences=eq, implementation=impl, paths=mpaths):
            ins = tuple(_lower(x, ids) for x in xs)
            strategy = _JOIN_STRATEGY.get(impl) or "Linear"
            if not mpaths:  # not implemented (a transform test): inputs in their order
                mpaths = ((tuple((i, ()) for i in range(len(xs)))),)
            bounds = [row_bound(x, ids.sizes, ids.lets) for x in xs]
            paths = tuple(_join_path(r, p, bounds) for p in mpaths)
            return lir.Plan(ids.take(), lir.Join(ins, eq, strategy, tuple(mir.arity(x) for x in xs), paths))
        case mir.Reduce(input=i, group_key=k, aggregates=aggs, monotonic=m):
            inner = _lower(i, ids)
            return lir.Plan(ids.take(), lir.Reduce(inner, k, aggs, _reduce_plan(aggs, m)))
        case mir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, monotonic=m):
            inner = _lower(i, ids)
            if m and off == 0 and lim == 1:
                plan: lir.TopKPlan = lir.TopKMonotonicTop1(False)
            elif m and off == 0:
                plan = lir.TopKMonotonicTopK(False)
            else:
                plan = lir.TopKBasic()
            return lir.Plan(ids.take(), lir.TopK(inner, g, o, lim, off, plan))
        case mir.FlatMap(input=i, func=f, exprs=xs, types=t):
            inner = _lower(i, ids)
            return lir.Plan(ids.take(), lir.FlatMap(inner, f, xs, t))
        case mir.Negate(input=i):
            inner = _lower(i, ids)
            return lir.Plan(ids.take(), lir.Negate(inner))
        case mir.Threshold(input=i):
            inner = _lower(i, ids)
            return lir.Plan(ids.take(), lir.Threshold(inner))
        case mir.Union(inputs=xs):
            ins = tuple(_lower(x, ids) for x in xs)
            return lir.Plan(ids.take(), lir.Union(ins))
        case mir.ArrangeBy(input=i, keys=ks):
            inner = _lower(i, ids)
            return lir.Plan(ids.take(), lir.ArrangeBy(inner, ks))
        case mir.Map() | mir.Filter() | mir.Project():
            raise AssertionError("handled above")
        case _:
            assert_never(r)


def _join_path(r: mir.Join, path, bounds: list[int | None]) -> lir.JoinPath:
    """The stages of a MIR join path: each stage's keys on both sides (JoinImplementation's
    lookup key, the stream's side of the same equivalences), the stream's other columns and
    the bound on the lookup input's records."""
    g = JoinGraph(r)
    offs = g.offs
    done = {path[0][0]}
    stages: list[lir.JoinStage] = []
    for inp, _ in path[1:]:
        stream, lookup = g.stage_keys(done, inp)
        keyed = set().union(*(columns_used(k) for k in stream)) if stream else set()
        thinning = tuple(c for i in sorted(done) for c in range(offs[i], offs[i + 1]) if c not in keyed)
        stages.append(lir.JoinStage(inp, lookup, stream, thinning, bounds[inp]))
        done.add(inp)
    source = path[0][0]
    source_key = tuple(permute(k, {c: c - offs[source] for c in columns_used(k)}) for k in stages[0].stream_key) if stages else ()
    if stages and any(not columns_used(k) <= set(range(offs[source], offs[source + 1])) for k in stages[0].stream_key):
        source_key = ()
    return lir.JoinPath(source, source_key, tuple(stages))


# MIR's JoinImplementation names -> LIR join variants (unimplemented: by input count)
_JOIN_STRATEGY = {"differential": "Linear", "delta": "Delta"}


def _reduce_plan(aggs, monotonic: bool) -> lir.ReducePlan:
    if not aggs:
        return lir.ReduceDistinct()
    if all(a.func in ("min", "max") and not a.distinct for a in aggs):
        if monotonic:
            return lir.ReduceHierarchical(True, False)
        return lir.ReduceHierarchical(False, False, lir.DEFAULT_BUCKETS)
    if all(a.func in ("sum", "count") and not a.distinct for a in aggs):
        return lir.ReduceAccumulable()
    return lir.ReduceBasic()
