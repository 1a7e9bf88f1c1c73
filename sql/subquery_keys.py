"""HIR analyses for decorrelating subqueries by what they use (pure; used by sql.lowering).

- equi_correlation(S): S = Filter(x1 = s1 AND .. AND p)(B) where B does not depend on the
  enclosing rows, each xi reads only enclosing columns and each si and p only B's columns.
  Then EXISTS S, for an enclosing row o, = (x1(o), ..) ∈ Distinct(s1, ..)(Filter(p ∧ si IS
  NOT NULL)(B)): a semi-join of the enclosing rows against the subquery's distinct values,
  without computing any set of enclosing rows (how `x IN (SELECT ..)` is bound).
- unshift(e): an expression read from one scope inwards, as the enclosing scope reads it
  (the inverse of bind_scalar.shift_outer): outer(1, i) -> #i, outer(l, i) -> outer(l-1, i).
"""

from __future__ import annotations

from dataclasses import dataclass

from sql.hir import Exists, HFilter, HirRel, HirScalar, OuterColumn, Select
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, If, conjuncts, permute


@dataclass(frozen=True, slots=True)
class EquiCorrelation:
    base: HirRel  # B, with its own predicates p applied
    pairs: tuple[tuple[HirScalar, HirScalar], ...]  # (xi over enclosing scopes, si over B)


def _refs(e: HirScalar) -> tuple[bool, bool, bool]:
    """(reads a column of its own scope, reads an enclosing column, holds a subquery)."""
    match e:
        case Column():
            return True, False, False
        case OuterColumn():
            return False, True, False
        case Exists() | Select():
            return False, False, True
        case CallUnary(expr=x):
            parts = [_refs(x)]
        case CallBinary(expr1=a, expr2=b):
            parts = [_refs(a), _refs(b)]
        case CallVariadic(exprs=xs):
            parts = [_refs(x) for x in xs]
        case If(cond=c, then=a, els=b):
            parts = [_refs(c), _refs(a), _refs(b)]
        case _:
            return False, False, False
    return any(p[0] for p in parts), any(p[1] for p in parts), any(p[2] for p in parts)



def equi_correlation(sub: HirRel, correlated) -> EquiCorrelation | None:
    """`correlated(rel)`: does rel depend on the enclosing rows (the lowerer knows)."""
    if not isinstance(sub, HFilter) or correlated(sub.input):
        return None
    pairs: list[tuple[HirScalar, HirScalar]] = []
    local: list[HirScalar] = []
    for p in conjuncts(sub.predicates):
        own, outer, nested = _refs(p)
        if nested:
            return None
        if not outer:
            local.append(p)
            continue
        if not (isinstance(p, CallBinary) and p.func == "eq"):
            return None
        a, b = _refs(p.expr1), _refs(p.expr2)
        if a[1] and not a[0] and b[0] and not b[1]:
            pairs.append((p.expr1, p.expr2))
        elif b[1] and not b[0] and a[0] and not a[1]:
            pairs.append((p.expr2, p.expr1))
        else:
            return None
    if not pairs:
        return None
    base = HFilter(sub.input, tuple(local)) if local else sub.input
    return EquiCorrelation(base, tuple(pairs))


def unshift(h: HirScalar) -> HirScalar:
    match h:
        case OuterColumn(level=1, index=i, typ=t):
            return Column(i, t)
        case OuterColumn(level=lv, index=i, typ=t):
            return OuterColumn(lv - 1, i, t)
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, unshift(x), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, unshift(a), unshift(b), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(unshift(x) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(unshift(c), unshift(a), unshift(b), t)
        case _:
            return h


# aggregates whose value over no rows is NULL
_NULL_ON_EMPTY = frozenset({"sum", "min", "max", "avg"})


@dataclass(frozen=True, slots=True)
class GroupedCorrelation:
    """S = chain(Reduce(aggs)(Filter(x1 = s1 AND .. AND p)(B))), a global aggregate under
    Maps and Projects (`chain`) that read no enclosing column, whose value is NULL when B has
    no row for o. Then, for an enclosing row o,

        S(o) = the value of `grouped` at keys (x1(o), ..), NULL where it has none,
        grouped = chain'(Reduce(group_by=(s1, ..), aggs)(Filter(p ∧ si IS NOT NULL)(B)))

    (chain' carries the keys in front): one aggregate per correlation key over all of B,
    joined to the enclosing rows, as Spark's RewriteCorrelatedScalarSubquery plans it, without
    computing the set of enclosing keys first."""

    pairs: tuple[tuple[HirScalar, HirScalar], ...]  # (xi over enclosing scopes, si over B)
    grouped: HirRel  # columns: s1 .. sm, then S's value


def grouped_correlation(sub: HirRel, correlated) -> GroupedCorrelation | None:
    from sql.hir import HMap, HProject, HReduce, hir_types
    from sql.transforms.non_null_requirements import strict_columns
    from sql.types import BOOL

    chain: list[HirRel] = []
    r = sub
    while isinstance(r, (HMap, HProject)):
        chain.append(r)
        r = r.input
    if not isinstance(r, HReduce) or r.group_key or len(hir_types(sub)) != 1:
        return None
    if any(a.func not in _NULL_ON_EMPTY or a.window is not None or any(_refs(a.expr)[1:]) for a in r.aggregates):
        return None
    for node in chain:
        if isinstance(node, HMap) and any(any(_refs(s)[1:]) for s in node.scalars):
            return None
    eqc = equi_correlation(r.input, correlated)
    if eqc is None:
        return None
    # is S's one column NULL when every aggregate is (no row of B)?
    nulls = set(range(len(r.aggregates)))
    width = len(r.aggregates)
    for node in reversed(chain):
        if isinstance(node, HMap):
            for j, s in enumerate(node.scalars):
                if strict_columns(s) & nulls:  # type: ignore[arg-type]
                    nulls.add(width + j)
            width += len(node.scalars)
        else:
            nulls = {i for i, o in enumerate(node.outputs) if o in nulls}  # type: ignore[union-attr]
            width = len(node.outputs)  # type: ignore[union-attr]
    if 0 not in nulls:
        return None
    nb = len(hir_types(eqc.base))
    keys = tuple(s for _, s in eqc.pairs)
    m = len(keys)
    keyed: HirRel = HMap(eqc.base, keys)
    keyed = HFilter(keyed, tuple(CallUnary("not", CallUnary("is_null", Column(nb + j, k.typ), BOOL), BOOL) for j, k in enumerate(keys)))  # type: ignore[attr-defined]
    out: HirRel = HReduce(keyed, tuple(range(nb, nb + m)), r.aggregates)
    for node in reversed(chain):
        if isinstance(node, HMap):
            shift = {c: c + m for c in range(len(hir_types(out)))}
            out = HMap(out, tuple(permute(s, shift) for s in node.scalars))  # type: ignore[arg-type]
        else:
            out = HProject(out, tuple(range(m)) + tuple(o + m for o in node.outputs))  # type: ignore[union-attr]
    return GroupedCorrelation(eqc.pairs, out)
