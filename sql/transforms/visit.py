"""Generic child rewriting for MIR. A node whose children come back unchanged (the same
objects) is returned as is, so unchanged subtrees stay shared and comparing a rewritten
plan with its input (the fixpoint test) short-circuits on identity."""

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
            v2, b2 = f(v), f(b)
            return r if v2 is v and b2 is b else mir.Let(r.id, v2, b2)
        case mir.LetRec(values=vs, body=b):
            vs2, b2 = tuple(f(v) for v in vs), f(b)
            return r if b2 is b and all(x is y for x, y in zip(vs, vs2, strict=True)) else replace(r, values=vs2, body=b2)
        case mir.Project() | mir.Map() | mir.FlatMap() | mir.Filter() | mir.Reduce() | mir.TopK() | mir.Negate() | mir.Threshold() | mir.ArrangeBy():
            i2 = f(r.input)
            return r if i2 is r.input else replace(r, input=i2)
        case mir.Join(inputs=xs) | mir.Union(inputs=xs):
            ys = tuple(f(x) for x in xs)
            return r if all(y is x for x, y in zip(xs, ys, strict=True)) else replace(r, inputs=ys)
        case _:
            assert_never(r)
