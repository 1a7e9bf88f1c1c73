"""Let normalization.

- Let(l, v, body) = body                 when body does not read l
- Let(l, v, body) = body[l := v]         when body reads l once, or v is itself a Get
A read inside a LetRec's value counts as many reads (it runs once per iteration), so a Let
is never inlined into a recursive binding unless v is a Get. LetRec bindings are never
inlined or dropped: a LetRec stays a LetRec.
"""

from __future__ import annotations

from sql import mir
from sql.transforms.visit import map_children

_MANY = 2


def _uses(r: mir.Mir, lid: str) -> int:
    if isinstance(r, mir.Get):
        return 1 if r.local and r.id == lid else 0
    if isinstance(r, mir.LetRec):
        in_values = sum(_uses(v, lid) for v in r.values)
        return (_MANY if in_values else 0) + _uses(r.body, lid)
    return sum(_uses(c, lid) for c in mir.mir_children(r))


def _substitute(r: mir.Mir, lid: str, value: mir.Mir) -> mir.Mir:
    if isinstance(r, mir.Get) and r.local and r.id == lid:
        return value
    return map_children(r, lambda c: _substitute(c, lid, value))


def normalize_lets(r: mir.Mir) -> mir.Mir:
    r = map_children(r, normalize_lets)
    if isinstance(r, mir.Let):
        n = _uses(r.body, r.id)
        if n == 0:
            return r.body
        if n == 1 or isinstance(r.value, mir.Get):
            return _substitute(r.body, r.id, r.value)
    return r
