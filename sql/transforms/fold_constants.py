"""Constant folding of operators whose input is a Constant and whose scalars are literals.

- Map(lits)(Constant(rows)) = Constant(row ++ lits for row in rows)
- Project(o)(Constant(rows)) = Constant(row[o] for row in rows)
- Filter(true..)(x) = x;  Filter(.., false/null, ..)(x) = Constant[]
"""

from __future__ import annotations

from sql import mir
from sql.scalar import Literal
from sql.transforms.visit import map_children


def fold_constants(r: mir.Mir) -> mir.Mir:
    r = map_children(r, fold_constants)
    match r:
        case mir.Map(input=mir.Constant(rows=rows, types=ts), scalars=ss) if all(isinstance(s, Literal) for s in ss):
            vals = tuple(s.value for s in ss)  # type: ignore[union-attr]
            return mir.Constant(tuple((row + vals, d) for row, d in rows), ts + tuple(s.typ for s in ss))
        case mir.Project(input=mir.Constant(rows=rows, types=ts), outputs=o):
            return mir.Constant(tuple((tuple(row[i] for i in o), d) for row, d in rows), tuple(ts[i] for i in o))
        case mir.Filter(input=x, predicates=ps):
            keep = tuple(p for p in ps if not (isinstance(p, Literal) and p.value is True))
            if any(isinstance(p, Literal) and p.value is not True for p in keep):
                return mir.Constant((), mir.mir_types(x))
            return mir.Filter(x, keep) if keep else x
        case _:
            return r
