"""MonotonicFlag: mark each Reduce and TopK whose input is append-only (never retracts).

    Reduce(x) = Reduce(x, monotonic=monotonic(x));  TopK(x) = TopK(x, monotonic=monotonic(x))

monotonic(Get storage s) = s in the given monotonic sources (append-only sources such as load
generators); Constant = all diffs positive; Map/Filter/Project/FlatMap/ArrangeBy = their input;
Join/Union = all inputs; Let = its body with the binding's value known; Negate, Reduce, TopK,
Threshold = false (their outputs retract as their inputs change), and so is every read of a
recursive (LetRec) binding. The LIR lowering then picks
the monotonic variants (Hierarchical Monotonic, MonotonicTop1, MonotonicTopK).
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from sql import mir
from sql.transforms.visit import map_children


def monotonic(r: mir.Mir, sources: frozenset[str], env: dict[str, bool] | None = None) -> bool:
    env = {} if env is None else env
    match r:
        case mir.Constant(rows=rows):
            return all(d > 0 for _, d in rows)
        case mir.Get(id=i, local=loc):
            return env.get(i, False) if loc else i in sources
        case mir.Let(id=i, value=v, body=b):
            return monotonic(b, sources, {**env, i: monotonic(v, sources, env)})
        case mir.LetRec(body=b):
            return monotonic(b, sources, env)  # recursive bindings retract: never in env
        case mir.Project(input=x) | mir.Map(input=x) | mir.FlatMap(input=x) | mir.Filter(input=x) | mir.ArrangeBy(input=x):
            return monotonic(x, sources, env)
        case mir.Join(inputs=xs) | mir.Union(inputs=xs):
            return all(monotonic(x, sources, env) for x in xs)
        case mir.Negate() | mir.Reduce() | mir.TopK() | mir.Threshold():
            return False
        case _:
            assert_never(r)


def monotonic_flag(r: mir.Mir, sources: frozenset[str] = frozenset(), env: dict[str, bool] | None = None) -> mir.Mir:
    env = {} if env is None else env
    if isinstance(r, mir.Let):
        value = monotonic_flag(r.value, sources, env)
        body = monotonic_flag(r.body, sources, {**env, r.id: monotonic(value, sources, env)})
        return r if value is r.value and body is r.body else mir.Let(r.id, value, body)
    r = map_children(r, lambda c: monotonic_flag(c, sources, env))
    match r:
        case mir.Reduce(input=x) | mir.TopK(input=x):
            m = monotonic(x, sources, env)
            return r if m == r.monotonic else replace(r, monotonic=m)
        case _:
            return r
