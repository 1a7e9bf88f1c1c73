"""In a single-time dataflow: a monotonic operator whose input is *physically monotonic*
needs no consolidation: must_consolidate(op) = not physically_monotonic(input(op)).

Physical monotonicity is an abstract interpretation over LIR:
- enforcers (Reduce, TopK, Threshold outside recursion; Constant with all diffs > 0; Get of
  a monotonic input) produce monotonic output;
- keepers (Mfp, FlatMap, Join, Union, ArrangeBy, Let body, LetRec body) are monotonic iff
  their inputs are;
- breakers (Negate; Constant with a non-positive diff; Get of a non-monotonic input; Get of a
  recursive binding; Reduce, TopK, Threshold inside a recursive binding, whose output changes
  from one iteration to the next) are not.
Storage reads are monotonic only when the shard holds no retractions, which is not known at
planning time, so a Get of storage is a breaker unless listed in `monotonic_ids`.
Values of recursive bindings are left alone (their operators are never monotonic variants).
"""

from __future__ import annotations

from dataclasses import replace

from compute.plan import lir


def physically_monotonic(p: lir.Plan, env: dict[str, bool], monotonic_ids: frozenset[str], in_recursion: bool = False) -> bool:
    n = p.node
    match n:
        case lir.Constant(rows=rows):
            return all(d > 0 for _, d in rows)
        case lir.Get(id=i, local=loc):
            return env.get(i, False) if loc else i in monotonic_ids
        case lir.Reduce() | lir.TopK() | lir.Threshold():
            return not in_recursion
        case lir.MfpNode(input=i) | lir.FlatMap(input=i) | lir.ArrangeBy(input=i):
            return physically_monotonic(i, env, monotonic_ids, in_recursion)
        case lir.Join(inputs=xs) | lir.Union(inputs=xs):
            return all(physically_monotonic(x, env, monotonic_ids, in_recursion) for x in xs)
        case lir.Negate():
            return False
        case lir.Let(id=i, value=v, body=b):
            env2 = {**env, i: physically_monotonic(v, env, monotonic_ids, in_recursion)}
            return physically_monotonic(b, env2, monotonic_ids, in_recursion)
        case lir.LetRec(ids=ids, body=b):
            return physically_monotonic(b, {**env, **dict.fromkeys(ids, False)}, monotonic_ids, in_recursion)
    raise AssertionError(n)


def _relax(p: lir.Plan, env: dict[str, bool], ids: frozenset[str]) -> lir.Plan:
    n = p.node
    match n:
        case lir.Let(id=i, value=v, body=b):
            v2 = _relax(v, env, ids)
            env2 = {**env, i: physically_monotonic(v2, env, ids)}
            return lir.Plan(p.node_id, replace(n, value=v2, body=_relax(b, env2, ids)))
        case lir.LetRec(ids=rec_ids, body=b):
            env2 = {**env, **dict.fromkeys(rec_ids, False)}
            return lir.Plan(p.node_id, replace(n, body=_relax(b, env2, ids)))
        case lir.Constant() | lir.Get():
            return p
        case lir.Join() | lir.Union():
            return lir.Plan(p.node_id, replace(n, inputs=tuple(_relax(x, env, ids) for x in n.inputs)))
    child = _relax(n.input, env, ids)  # type: ignore[union-attr]
    n = replace(n, input=child)
    mono_in = physically_monotonic(child, env, ids)
    match n:
        case lir.Reduce(plan=lir.ReduceHierarchical(monotonic=True, must_consolidate=True) as rp) if mono_in:
            n = replace(n, plan=replace(rp, must_consolidate=False))
        case lir.TopK(plan=(lir.TopKMonotonicTop1(must_consolidate=True) | lir.TopKMonotonicTopK(must_consolidate=True)) as tp) if mono_in:
            n = replace(n, plan=replace(tp, must_consolidate=False))
    return lir.Plan(p.node_id, n)


def refine_single_time_consolidation(df: lir.Dataflow, flags, monotonic_ids: frozenset[str] = frozenset()) -> lir.Dataflow:
    if not df.single_time or not flags.enable_monotonic_oneshot_selects:
        return df
    return replace(df, plan=_relax(df.plan, {}, monotonic_ids))
