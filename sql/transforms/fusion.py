"""Fusion of adjacent operators of the same kind, and removal of trivial ones.

- Project(o2)(Project(o1)(x)) = Project(o1∘o2)(x)
- Project(identity)(x) = x
- Map(s2)(Map(s1)(x)) = Map(s1 ++ s2)(x)
- Filter(p2)(Filter(p1)(x)) = Filter(p1 ++ p2)(x);  Filter()(x) = x;  Map()(x) = x
- Project(o)(Map(ss)(x)) = Project(o')(Map(ss')(x)): outputs that are plain column copies
  point at the copied column, unused trailing scalars go, and the Map goes when unused
- Union(.., Union(ys), ..) = Union(.., ys.., ..)
"""

from __future__ import annotations

from sql import mir
from sql.scalar import Column
from sql.transforms.visit import map_children


def fusion(r: mir.Mir) -> mir.Mir:
    r = map_children(r, fusion)
    match r:
        case mir.Project(input=mir.Project(input=x, outputs=o1), outputs=o2):
            return fusion(mir.Project(x, tuple(o1[i] for i in o2)))
        case mir.Project(input=x, outputs=o) if o == tuple(range(mir.arity(x))):
            return x
        case mir.Project(input=mir.Map(input=x, scalars=ss), outputs=o):
            n = mir.arity(x)
            o2 = tuple(_resolve(i, n, ss) for i in o)
            if all(i < n for i in o2):
                return fusion(mir.Project(x, o2))
            keep = max(o2) - n + 1  # scalars see only earlier columns: a prefix suffices
            if o2 != o or keep < len(ss):
                return mir.Project(mir.Map(x, ss[:keep]), o2)
            return r
        case mir.Map(input=mir.Map(input=x, scalars=s1), scalars=s2):
            return mir.Map(x, s1 + s2)
        case mir.Map(input=x, scalars=()):
            return x
        case mir.Filter(input=mir.Filter(input=x, predicates=p1), predicates=p2):
            return mir.Filter(x, p1 + p2)
        case mir.Filter(input=x, predicates=()):
            return x
        case mir.Union(inputs=xs) if any(isinstance(x, mir.Union) for x in xs):
            flat: list[mir.Mir] = []
            for x in xs:
                flat.extend(x.inputs if isinstance(x, mir.Union) else (x,))
            return mir.Union(tuple(flat))
        case _:
            return r


def _resolve(i: int, n: int, ss) -> int:
    """Follow a Map output that merely copies a column to the column it copies."""
    while i >= n and isinstance(ss[i - n], Column):
        i = ss[i - n].index
    return i
