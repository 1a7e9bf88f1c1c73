"""Union(.., Negate(x), ..) = Union{consolidate_output=true}(.., Negate(x), ..)

A Union with a directly negated input produces retractions that cancel rows of its other
inputs; consolidating its output stops them from piling up downstream (the LEFT JOIN
stack: N, 3N, 5N, ... records without, N, N, N with). Controlled by
`enable_consolidate_after_union_negate` (default on).
"""

from __future__ import annotations

from dataclasses import replace

from compute.plan import lir
from compute.plan.refinements.rewrite import map_plan


def refine_union_negate_consolidation(df: lir.Dataflow, flags) -> lir.Dataflow:
    if not flags.enable_consolidate_after_union_negate:
        return df

    def f(p: lir.Plan) -> lir.Plan:
        n = p.node
        if isinstance(n, lir.Union) and any(isinstance(x.node, lir.Negate) for x in n.inputs):
            return lir.Plan(p.node_id, replace(n, consolidate_output=True))
        return p

    return replace(df, plan=map_plan(df.plan, f))
