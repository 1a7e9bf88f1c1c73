"""Bottom-up rewriting of LIR plans (node ids are preserved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compute.plan import lir


def map_plan(p: lir.Plan, f: Callable[[lir.Plan], lir.Plan], enter_recursive: bool = True) -> lir.Plan:
    """Rewrite children first, then apply f to the node. With `enter_recursive=False` the
    values of LetRec bindings (and everything under them) are left as they are."""
    n = p.node
    new: lir.Node
    match n:
        case lir.Constant() | lir.Get():
            new = n
        case lir.MfpNode() | lir.FlatMap() | lir.Reduce() | lir.TopK() | lir.Negate() | lir.Threshold() | lir.ArrangeBy():
            new = replace(n, input=map_plan(n.input, f, enter_recursive))
        case lir.Join() | lir.Union():
            new = replace(n, inputs=tuple(map_plan(x, f, enter_recursive) for x in n.inputs))
        case lir.Let():
            new = replace(n, value=map_plan(n.value, f, enter_recursive), body=map_plan(n.body, f, enter_recursive))
        case lir.LetRec():
            values = tuple(map_plan(v, f, enter_recursive) for v in n.values) if enter_recursive else n.values
            new = replace(n, values=values, body=map_plan(n.body, f, enter_recursive))
        case _:
            raise AssertionError(n)
    return f(lir.Plan(p.node_id, new))
