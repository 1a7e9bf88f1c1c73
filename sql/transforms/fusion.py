"""Fusion of adjacent operators of the same kind, and removal of trivial ones.

- Project(o2)(Project(o1)(x)) = Project(o1∘o2)(x)
- Project(identity)(x) = x
- Map(s2)(Map(s1)(x)) = Map(s1 ++ s2)(x)
- Filter(p2)(Filter(p1)(x)) = Filter(p1 ++ p2)(x);  Filter()(x) = x;  Map()(x) = x
- Project(o)(Map(ss)(x)) = Project(o')(Map(ss')(x)): outputs that are plain column copies
  point at the copied column, unused trailing scalars go, and the Map goes when unused
- Union(.., Union(ys), ..) = Union(.., ys.., ..)
- Join(.., Constant[()], .., eq) = Join(.., .., eq): the one-row, zero-column constant is the
  identity of the join (it adds no columns, so no column moves); Join(x) with no
  equivalences is x
- Join(.., Project(o)(Filter(ps)(Join(ys, eq'))), .., eq)
    = Project(o')(Filter(ps')(Join(.., ys.., .., eq' ++ eq)))   (JoinFusion)
  an inner join read by an inner join is one n-ary join: its inputs join the outer inputs,
  its equivalences (shifted to the fused columns) join the outer ones, and the Filters and
  Projects between them are lifted above the fused join (predicate pushdown then moves
  their equalities into the equivalences). Any chain of Project/Filter may separate the
  joins; outer joins are Unions of joins (lowering), so they stay barriers.
"""

from __future__ import annotations

from sql import mir
from sql.scalar import Column, Scalar, permute
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
        case mir.Join(inputs=xs) if len(xs) > 1 and any(_is_unit(x) for x in xs):
            rest = tuple(x for x in xs if not _is_unit(x))
            if not rest:
                return xs[0]
            if len(rest) == 1 and not r.equivalences:
                return rest[0]
            if len(rest) == 1:
                return r  # a one-input join keeps its equivalences as a join
            return fusion(mir.Join(rest, r.equivalences))
        case mir.Join() if any(_peel(x)[0] is not None for x in r.inputs):
            return _fuse_join(r)
        case mir.Union(inputs=xs) if any(isinstance(x, mir.Union) for x in xs):
            flat: list[mir.Mir] = []
            for x in xs:
                flat.extend(x.inputs if isinstance(x, mir.Union) else (x,))
            return mir.Union(tuple(flat))
        case _:
            return r


def _is_unit(x: mir.Mir) -> bool:
    return isinstance(x, mir.Constant) and x.rows == (((), 1),) and not x.types


def _resolve(i: int, n: int, ss) -> int:
    """Follow a Map output that merely copies a column to the column it copies."""
    while i >= n and isinstance(ss[i - n], Column):
        i = ss[i - n].index
    return i


def _peel(x: mir.Mir) -> tuple[mir.Join | None, tuple[int, ...], list[Scalar]]:
    """x = Project(o)(Filter(ps)(j)) for a Join j under a chain of Projects and Filters:
    (j, o, ps) with o and ps over j's columns; (None, .., ..) when no Join is below."""
    chain: list[mir.Mir] = []
    while isinstance(x, (mir.Project, mir.Filter)):
        chain.append(x)
        x = x.input
    if not isinstance(x, mir.Join):
        return None, (), []
    o = tuple(range(mir.arity(x)))  # columns of the current node -> columns of x
    preds: list[Scalar] = []
    for node in reversed(chain):
        match node:
            case mir.Filter(predicates=ps):
                preds.extend(permute(p, o) for p in ps)
            case mir.Project(outputs=out):
                o = tuple(o[c] for c in out)
    return x, o, preds


def _fuse_join(r: mir.Join) -> mir.Mir:
    inputs: list[mir.Mir] = []
    eqs: list[tuple[Scalar, ...]] = []
    preds: list[Scalar] = []
    cols: list[int] = []  # r's columns -> fused columns
    for x in r.inputs:
        base = sum(mir.arity(i) for i in inputs)
        inner, o, ps = _peel(x)
        if inner is None:
            cols.extend(range(base, base + mir.arity(x)))
            inputs.append(x)
            continue
        shift = {c: base + c for c in range(mir.arity(inner))}
        inputs.extend(inner.inputs)
        eqs.extend(tuple(permute(e, shift) for e in cls) for cls in inner.equivalences)
        preds.extend(permute(p, shift) for p in ps)
        cols.extend(base + c for c in o)
    eqs.extend(tuple(permute(e, cols) for e in cls) for cls in r.equivalences)
    out: mir.Mir = mir.Join(tuple(inputs), tuple(eqs))
    if preds:
        out = mir.Filter(out, tuple(preds))
    return mir.Project(out, tuple(cols)) if tuple(cols) != tuple(range(mir.arity(out))) else out
