"""In a single-time dataflow (until = as_of + 1, e.g. every one-shot SELECT):

- Reduce::Hierarchical(Bucketed) = Reduce::Hierarchical(Monotonic{must_consolidate=true})
- TopK::Basic{offset=0, limit=1 literal} = TopK::MonotonicTop1{must_consolidate=true}
- TopK::Basic{offset=0} = TopK::MonotonicTopK{must_consolidate=true}

A single time has no retractions to come, so any input is monotonic once consolidated.
Values of recursive bindings (LetRec) are left alone: inside an iteration the operators see
every round's changes, retractions included, so they stay Basic / Bucketed. Controlled by
`enable_monotonic_oneshot_selects` (default on).
"""

from __future__ import annotations

from dataclasses import replace

from compute.plan import lir
from compute.plan.refinements.rewrite import map_plan


def refine_single_time_operator_selection(df: lir.Dataflow, flags) -> lir.Dataflow:
    if not df.single_time or not flags.enable_monotonic_oneshot_selects:
        return df

    def f(p: lir.Plan) -> lir.Plan:
        n = p.node
        match n:
            case lir.Reduce(plan=lir.ReduceHierarchical(monotonic=False)):
                return lir.Plan(p.node_id, replace(n, plan=lir.ReduceHierarchical(True, True)))
            case lir.TopK(plan=lir.TopKBasic(), offset=0, limit=1):
                return lir.Plan(p.node_id, replace(n, plan=lir.TopKMonotonicTop1(True)))
            case lir.TopK(plan=lir.TopKBasic(), offset=0):
                return lir.Plan(p.node_id, replace(n, plan=lir.TopKMonotonicTopK(True)))
        return p

    return replace(df, plan=map_plan(df.plan, f, enter_recursive=False))
