"""CanonicalizeMfp: every maximal chain of Map/Filter/Project is put in one canonical form

    chain(x) = Project(o)(Filter(late)(Map(es)(Filter(early)(x))))

where `early` are the predicates over x's columns only (evaluated before any expression),
`late` those that read an expression, `es` the distinct (literals may repeat), used, non-column expressions in
dependency order (a column copy becomes a projection), predicates deduplicated and `true`
dropped; empty or identity parts are omitted. The LIR lowering fuses the form into one Mfp.
"""

from __future__ import annotations

from sql import mir
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    Scalar,
    columns_used,
    permute,
)
from sql.transforms.analysis import hashable
from sql.transforms.visit import map_children


def _is_mfp(r: mir.Mir) -> bool:
    return isinstance(r, (mir.Map, mir.Filter, mir.Project))


def canonicalize_mfp(r: mir.Mir) -> mir.Mir:
    if not _is_mfp(r):
        return map_children(r, canonicalize_mfp)
    chain: list[mir.Mir] = []
    x = r
    while _is_mfp(x):
        chain.append(x)
        x = x.input  # type: ignore[union-attr]
    x = canonicalize_mfp(x)
    n = mir.arity(x)
    exprs: list[Scalar] = []
    preds: list[Scalar] = []
    proj = list(range(n))
    for node in reversed(chain):
        match node:
            case mir.Map(scalars=ss):
                for s in ss:
                    e = _reuse(permute(s, proj), _known(exprs, n))
                    if isinstance(e, Column):
                        proj.append(e.index)
                    elif not isinstance(e, Literal) and e in exprs:
                        proj.append(n + exprs.index(e))
                    else:
                        exprs.append(e)
                        proj.append(n + len(exprs) - 1)
            case mir.Filter(predicates=ps):
                for p in ps:
                    q = _reuse(permute(p, proj), _known(exprs, n))
                    if q not in preds and not (isinstance(q, Literal) and q.value is True):
                        preds.append(q)
            case mir.Project(outputs=o):
                proj = [proj[i] for i in o]
    # keep only the expressions something reads, renumbered
    used = set(proj)
    for p in preds:
        used |= columns_used(p)
    for k in range(len(exprs) - 1, -1, -1):
        if n + k in used:
            used |= columns_used(exprs[k])
    kept = [k for k in range(len(exprs)) if n + k in used]
    pos = {c: c for c in range(n)} | {n + k: n + j for j, k in enumerate(kept)}
    es = tuple(permute(exprs[k], pos) for k in kept)
    preds = [permute(p, pos) for p in preds]
    early = tuple(p for p in preds if all(c < n for c in columns_used(p)))
    late = tuple(p for p in preds if p not in early)
    out: mir.Mir = x
    if early:
        out = mir.Filter(out, early)
    if es:
        out = mir.Map(out, es)
    if late:
        out = mir.Filter(out, late)
    o = tuple(pos[c] for c in proj)
    if o != tuple(range(n + len(es))):
        out = mir.Project(out, o)
    return out


def _known(exprs: list[Scalar], n: int) -> dict[Scalar, int]:
    return {x: n + k for k, x in enumerate(exprs) if hashable(x)}


def _reuse(e: Scalar, known: dict[Scalar, int]) -> Scalar:
    """Replace the largest subexpressions of e that are already computed by their columns."""
    if not known or isinstance(e, (Column, Literal)):
        return e
    if hashable(e) and e in known:
        return Column(known[e], e.typ)
    match e:
        case CallUnary(expr=x):
            y = _reuse(x, known)
            return e if y is x else CallUnary(e.func, y, e.typ)
        case CallBinary(expr1=a, expr2=b):
            a2, b2 = _reuse(a, known), _reuse(b, known)
            return e if a2 is a and b2 is b else CallBinary(e.func, a2, b2, e.typ)
        case CallVariadic(exprs=xs):
            ys = tuple(_reuse(x, known) for x in xs)
            return e if all(y is x for x, y in zip(xs, ys, strict=True)) else CallVariadic(e.func, ys, e.typ)
        case If(cond=c, then=t, els=f):
            # reading a column computed anyway evaluates nothing new, even in a branch
            c2, t2, f2 = _reuse(c, known), _reuse(t, known), _reuse(f, known)
            return e if c2 is c and t2 is t and f2 is f else If(c2, t2, f2, e.typ)
    return e
