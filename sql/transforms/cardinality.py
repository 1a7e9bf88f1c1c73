"""Cardinality estimates of MIR plans (EXPLAIN ... WITH (cardinality)), bottom up from the
storage collections' record counts:

- Get(storage) = its record count (unknown without one); Get(let) = the binding's estimate
- Constant = its rows (with multiplicity); Map, Project, ArrangeBy, Negate, Threshold,
  FlatMap = their input
- Filter(p1..pn)(x) = x * 0.1^n (the worst-case selectivity of a predicate we know nothing about)
- Join(x1..xn) = x1 * .. * xn, or, when an input's unique key is equated to other inputs'
  columns, the product of the other inputs (each of their rows meets at most one of its rows)
- Reduce without a group key = 1; with one = its input (an upper bound)
- TopK without a group key = min(input, limit + offset); Union = the sum
- LetRec's bindings are unknown (a fixpoint)

An estimate over anything unknown is unknown (`<UNKNOWN>`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from sql import mir
from sql.scalar import Column, conjuncts
from sql.transforms.analysis import unique_keys

WORST_CASE_SELECTIVITY = 0.1

Estimate = float | None  # None: unknown


def _product(xs: list[Estimate]) -> Estimate:
    return None if any(x is None for x in xs) else math.prod(x for x in xs if x is not None)


def _join(r: mir.Join, ins: list[Estimate]) -> Estimate:
    offsets = [0]
    for x in r.inputs:
        offsets.append(offsets[-1] + mir.arity(x))
    best = _product(ins)
    for j, x in enumerate(r.inputs):
        mine = range(offsets[j], offsets[j + 1])
        equated: set[int] = set()  # j's columns equal to a column of another input
        for cls in r.equivalences:
            cols = [s.index for s in cls if isinstance(s, Column)]
            if any(c not in mine for c in cols):
                equated |= {c - offsets[j] for c in cols if c in mine}
        if any(k and k <= equated for k in unique_keys(x)):
            others = _product(ins[:j] + ins[j + 1:])
            if others is not None and (best is None or others < best):
                best = others
    return best


def cardinalities(r: mir.Mir, sizes: Mapping[str, int] | None) -> dict[int, Estimate]:
    """Every node's estimate, by id(node)."""
    out: dict[int, Estimate] = {}

    def walk(x: mir.Mir, env: dict[str, Estimate]) -> Estimate:
        ins: list[Estimate]
        match x:
            case mir.Let(id=i, value=v, body=b):
                e = walk(b, {**env, i: walk(v, env)})
            case mir.LetRec(ids=ids, values=vs, body=b):
                inner = {**env, **{i: None for i in ids}}
                for v in vs:
                    walk(v, inner)
                e = walk(b, inner)
            case mir.Get(id=i, local=True):
                e = env.get(i)
            case mir.Get(id=i):
                e = float(sizes[i]) if sizes is not None and i in sizes else None
            case mir.Constant(rows=rows):
                e = float(sum(max(d, 0) for _, d in rows))
            case mir.Filter(input=i, predicates=ps):
                n = walk(i, env)
                e = None if n is None else n * WORST_CASE_SELECTIVITY ** len(conjuncts(ps))
            case mir.Join():
                ins = [walk(i, env) for i in x.inputs]
                e = _join(x, ins)
            case mir.Union(inputs=xs):
                ins = [walk(i, env) for i in xs]
                e = None if any(n is None for n in ins) else sum(n for n in ins if n is not None)
            case mir.Reduce(input=i, group_key=g):
                n = walk(i, env)
                e = 1.0 if not g else n
            case mir.TopK(input=i, group_key=g, limit=lim, offset=off):
                n = walk(i, env)
                e = min(n, float(lim + off)) if n is not None and not g and lim is not None else n
            case _:
                e = None
                for c in mir.mir_children(x):
                    e = walk(c, env)
        out[id(x)] = e
        return e

    walk(r, {})
    return out


def estimate_text(e: Estimate) -> str:
    return "<UNKNOWN>" if e is None else str(round(e))
