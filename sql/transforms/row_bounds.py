"""Upper bounds on the records a relation holds, from the exact record counts of the storage
collections it reads (`sizes`, by id, as the catalog knows them at the read time).

Unlike JoinImplementation's estimates (guesses: a filter keeps a tenth), a bound is never
below the true count, so a physical decision taken on it (broadcasting a join's lookup input,
compute.plan.refinements.refine_broadcast_lookups) cannot meet an input larger than planned:

    bound(Get s)                      = sizes[s]            (unknown: None)
    bound(Constant rows)              = len(rows)
    bound(Filter/Map/Project/ArrangeBy/Negate/Threshold(x)) = bound(x)
    bound(Reduce(x) without key)      = 1;   with a key: bound(x)
    bound(TopK(x) without group)      = min(bound(x), limit + offset)
    bound(Union(xs))                  = sum of bound(x)
    bound(Join(xs))                   = product of bound(x)
    bound(Let id = v in b)            = bound(b) with bound(Get id) = bound(v)
    bound(FlatMap, LetRec)            = None (a table function or a fixpoint can grow)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from sql import mir


def row_bound(r: mir.Mir, sizes: Mapping[str, int], lets: Mapping[str, int | None] | None = None) -> int | None:
    """The upper bound on `r`'s records (see the module docstring), or None if unknown."""
    env = lets or {}
    match r:
        case mir.Get(id=i, local=True):
            return env.get(i)
        case mir.Get(id=i):
            return sizes.get(i)
        case mir.Constant(rows=rows):
            return len(rows)
        case mir.Filter(input=x) | mir.Map(input=x) | mir.Project(input=x) | mir.ArrangeBy(input=x) | mir.Negate(input=x) | mir.Threshold(input=x):
            return row_bound(x, sizes, env)
        case mir.Reduce(input=x, group_key=k):
            return 1 if not k else row_bound(x, sizes, env)
        case mir.TopK(input=x, group_key=g, limit=lim, offset=off):
            b = row_bound(x, sizes, env)
            if lim is not None and not g:
                return lim + off if b is None else min(b, lim + off)
            return b
        case mir.Union(inputs=xs) | mir.Join(inputs=xs):
            bs = [row_bound(x, sizes, env) for x in xs]
            if any(b is None for b in bs):
                return None
            return sum(bs) if isinstance(r, mir.Union) else math.prod(bs)  # type: ignore[arg-type]
        case mir.Let(id=i, value=v, body=b):
            return row_bound(b, sizes, {**env, i: row_bound(v, sizes, env)})
        case mir.FlatMap() | mir.LetRec():
            return None
    raise AssertionError(r)
