"""Union-negate fusion and branch cancellation.

- Negate(Negate(x)) = x
- Union(.., Negate(Union(ys)), ..) = Union(.., Negate(y) for y in ys, ..)
- Union(.., x, .., Negate(x), ..) = Union(..)          (the pair cancels: x - x = 0)
- Union(.., Constant <empty>, ..) = Union(..);  Union(x) = x;  Union() = Constant <empty>
"""

from __future__ import annotations

from sql import mir
from sql.transforms.visit import map_children


def union_negate(r: mir.Mir) -> mir.Mir:
    r = map_children(r, union_negate)
    match r:
        case mir.Negate(input=mir.Negate(input=x)):
            return x
        case mir.Union(inputs=xs):
            flat: list[mir.Mir] = []
            for x in xs:
                match x:
                    case mir.Negate(input=mir.Union(inputs=ys)):
                        flat.extend(y.input if isinstance(y, mir.Negate) else mir.Negate(y) for y in ys)
                    case mir.Constant(rows=()):
                        pass
                    case _:
                        flat.append(x)
            out: list[mir.Mir] = []
            for x in flat:
                opposite = x.input if isinstance(x, mir.Negate) else mir.Negate(x)
                if opposite in out:
                    out.remove(opposite)
                else:
                    out.append(x)
            if not out:
                return mir.Constant((), mir.mir_types(r))
            if len(out) == 1:
                return out[0]
            return r if tuple(out) == xs else mir.Union(tuple(out))
        case _:
            return r
