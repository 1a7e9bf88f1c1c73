"""Literal lifting: columns that are literals are computed as late as possible, so joins and
unions move narrower rows and the literals can meet each other.

- Negate(Map(lits)(x)) = Map(lits)(Negate(x));  likewise Threshold
- Union(Map(lits)(x1), .., Map(lits)(xn)) = Map(lits)(Union(x1, .., xn))
    (the same literals, in the same trailing positions, in every input)
- Join(.., Map(lits)(xi), ..) = Project(order)(Map(lits)(Join(.., xi, ..)))
    when no equivalence reads those literal columns
"""

from __future__ import annotations

from dataclasses import replace

from sql import mir
from sql.scalar import Literal, columns_used, permute
from sql.transforms.visit import map_children


def _lits(x: mir.Mir) -> tuple[Literal, ...] | None:
    if isinstance(x, mir.Map) and x.scalars and all(isinstance(s, Literal) for s in x.scalars):
        return x.scalars  # type: ignore[return-value]
    return None


def literal_lifting(r: mir.Mir) -> mir.Mir:
    r = map_children(r, literal_lifting)
    match r:
        case mir.Negate(input=mir.Map(input=x, scalars=ss)) | mir.Threshold(input=mir.Map(input=x, scalars=ss)) if _lits(r.input):
            return mir.Map(replace(r, input=x), ss)
        case mir.Union(inputs=xs):
            first = _lits(xs[0])
            if first is None or any(_lits(x) != first for x in xs[1:]):
                return r
            return mir.Map(mir.Union(tuple(x.input for x in xs)), first)  # type: ignore[union-attr]
        case mir.Join(inputs=xs, equivalences=eq):
            used: set[int] = set()
            for cls in eq:
                for e in cls:
                    used |= columns_used(e)
            offsets = [0]
            for x in xs:
                offsets.append(offsets[-1] + mir.arity(x))
            lift = [j for j, x in enumerate(xs) if _lits(x) and not any(offsets[j] + mir.arity(x.input) <= c < offsets[j + 1] for c in used)]  # type: ignore[union-attr]
            if not lift:
                return r
            ins = [x.input if j in lift else x for j, x in enumerate(xs)]  # type: ignore[union-attr]
            new_pos: dict[int, int] = {}
            lifted: list[Literal] = []
            at = 0
            for j in range(len(xs)):
                n = mir.arity(ins[j])
                for c in range(n):
                    new_pos[offsets[j] + c] = at + c
                at += n
            for j in lift:
                n = mir.arity(ins[j])
                for k, lit in enumerate(xs[j].scalars):  # type: ignore[union-attr]
                    new_pos[offsets[j] + n + k] = at + len(lifted)
                    lifted.append(lit)
            join = replace(r, inputs=tuple(ins), equivalences=tuple(tuple(permute(e, new_pos) for e in cls) for cls in eq))
            return mir.Project(mir.Map(join, tuple(lifted)), tuple(new_pos[c] for c in range(offsets[-1])))
        case _:
            return r
