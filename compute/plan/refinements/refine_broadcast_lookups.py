"""In a single-time dataflow, a join stage whose lookup input holds at most
`broadcast_join_threshold_rows` records for certain is a broadcast stage:

    JoinStage{lookup_rows=n} = JoinStage{lookup_rows=n, broadcast=true}   if n <= threshold

The lookup is then sent whole to every worker and the stream is joined where it is: no
shuffle of either side, and the stages of a chain of small lookups run in the stream's one
pass. `lookup_rows` is an upper bound from the exact record counts at the read time
(sql.transforms.row_bounds), never a guess, so a broadcast never meets a larger input than
planned. Maintained dataflows are left alone (their inputs grow after planning), and so are
the values of recursive bindings (a fixpoint has no bound). A threshold of 0 turns it off.
"""

from __future__ import annotations

from dataclasses import replace

from compute.plan import lir
from compute.plan.refinements.rewrite import map_plan


def broadcast_lookup(lookup_rows: int | None, threshold: int) -> bool:
    """Whether a lookup of at most `lookup_rows` records (None: unknown) is broadcast."""
    return lookup_rows is not None and threshold > 0 and lookup_rows <= threshold


def refine_broadcast_lookups(df: lir.Dataflow, flags) -> lir.Dataflow:
    if not df.single_time:
        return df
    threshold = flags.broadcast_join_threshold_rows

    def stage(st: lir.JoinStage) -> lir.JoinStage:
        b = broadcast_lookup(st.lookup_rows, threshold)
        return st if b == st.broadcast else replace(st, broadcast=b)

    def f(p: lir.Plan) -> lir.Plan:
        n = p.node
        if not isinstance(n, lir.Join):
            return p
        paths = tuple(replace(path, stages=tuple(stage(st) for st in path.stages)) for path in n.paths)
        return p if paths == n.paths else lir.Plan(p.node_id, replace(n, paths=paths))

    return replace(df, plan=map_plan(df.plan, f, enter_recursive=False))
