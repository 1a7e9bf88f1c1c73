"""Generic child rewriting for MIR."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import assert_never

from sql import mir


def map_children(r: mir.Mir, f: Callable[[mir.Mir], mir.Mir]) -> mir.Mir:
    match r:
        case mir.Constant() | mir.Get():
            return r
        case mir.Let(value=v, body=b):
            return mir.Let(r.id, f(v), f(b))
        case mir.LetRec(values=vs, body=b):
            return replace(r, values=tuple(f(v) for v in vs), body=f(b))
        case mir.Project() | mir.Map() | mir.FlatMap() | mir.Filter() | mir.Reduce() | mir.TopK() | mir.Negate() | mir.Threshold() | mir.ArrangeBy():
            return replace(r, input=f(r.input))
        case mir.Join(inputs=xs):
            return replace(r, inputs=tuple(f(x) for x in xs))
        case mir.Union(inputs=xs):
            return replace(r, inputs=tuple(f(x) for x in xs))
        case _:
            assert_never(r)
