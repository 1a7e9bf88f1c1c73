"""RelationCSE: a relation computed more than once is computed once and read by name.

    r[e, .., e] = Let(l, e, r[Get l, .., Get l])

for each outermost subexpression e that occurs at least twice, reads no Let binding (so it
can be bound at the root) and does real work (contains an operator other than Map, Filter,
Project over a storage read or a constant: those stay inline so the source read can absorb
them). Run to a fixpoint, nested repeats inside a bound value are bound in later rounds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import fields

from sql import mir
from sql.transforms.analysis import hashable, local_ids
from sql.transforms.visit import map_children


def _worth(r: mir.Mir) -> bool:
    match r:
        case mir.Get() | mir.Constant():
            return False
        case mir.Map(input=x) | mir.Filter(input=x) | mir.Project(input=x):
            return _worth(x)
        case _:
            return True


def _all_ids(r: mir.Mir, acc: set[str]) -> set[str]:
    if isinstance(r, mir.Let):
        acc.add(r.id)
    elif isinstance(r, mir.LetRec):
        acc.update(r.ids)
    elif isinstance(r, mir.Get) and r.local:
        acc.add(r.id)
    for c in mir.mir_children(r):
        _all_ids(c, acc)
    return acc


_OWN: dict[type, tuple[str, ...]] = {}


def _own_fields(t: type) -> tuple[str, ...]:
    """The compared fields of a node kind other than its children."""
    if t not in _OWN:
        _OWN[t] = tuple(f.name for f in fields(t) if f.compare and f.name not in ("input", "inputs", "value", "values", "body"))
    return _OWN[t]


def relation_cse(r: mir.Mir) -> mir.Mir:
    # structural ids, bottom-up in one pass (hashing whole subtrees at every node would be
    # quadratic): equal subtrees get equal ids
    table: dict[tuple, int] = {}
    sid: dict[int, int] = {}  # id(node) -> structural id
    counts: Counter[int] = Counter()
    nodes: dict[int, mir.Mir] = {}

    def intern(x: mir.Mir) -> int:
        kids = tuple(intern(c) for c in mir.mir_children(x))
        own = tuple(getattr(x, f) for f in _own_fields(type(x)))
        key = (type(x).__name__, own, kids)
        if hashable(own):
            s = table.setdefault(key, len(table))
        else:  # holds an array value: never shared
            s = -1 - len(sid)
        sid[id(x)] = s
        counts[s] += 1
        nodes.setdefault(s, x)
        return s

    intern(r)
    closed: dict[int, bool] = {}

    def eligible(x: mir.Mir, s: int) -> bool:
        if counts[s] < 2 or not _worth(x):
            return False
        if s not in closed:
            closed[s] = not local_ids(x)
        return closed[s]

    used = _all_ids(r, set())
    n = max((int(i[1:]) for i in used if i[1:].isdigit()), default=-1) + 1
    bindings: dict[int, str] = {}

    def replace_repeats(x: mir.Mir) -> mir.Mir:
        s = sid[id(x)]
        if s in bindings or eligible(x, s):
            lid = bindings.setdefault(s, f"l{n + len(bindings)}")
            return mir.Get(lid, lid, mir.mir_types(x), local=True)
        return map_children(x, replace_repeats)

    body = replace_repeats(r)
    for s, lid in reversed(list(bindings.items())):
        body = mir.Let(lid, nodes[s], body)
    return body
