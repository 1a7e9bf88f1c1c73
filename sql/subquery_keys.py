"""HIR analyses for decorrelating subqueries by what they use (pure; used by sql.lowering).

- equi_correlation(S): S = Filter(x1 = s1 AND .. AND p)(B) where B does not depend on the
  enclosing rows, each xi reads only enclosing columns and each si and p only B's columns.
  Then EXISTS S, for an enclosing row o, = (x1(o), ..) ∈ Distinct(s1, ..)(Filter(p ∧ si IS
  NOT NULL)(B)): a semi-join of the enclosing rows against the subquery's distinct values,
  without computing any set of enclosing rows (how `x IN (SELECT ..)` is bound).
- quantified(S, cmp, n, q) builds x op ANY/ALL (S) (how the binder binds it, comparing by
  `cmp` over S's n columns), and not_in(p) recognises a NOT of the ANY form with one column:
  as a filter, NOT (x IN S) keeps an enclosing row o iff cmp(x(o), s) is false for every s of
  S, i.e. it is the null-aware anti-join I ▷ S on (cmp IS NULL OR cmp) (sql.lowering).
- unshift(e): an expression read from one scope inwards, as the enclosing scope reads it
  (the inverse of bind_subqueries.shift_outer): outer(1, i) -> #i, outer(l, i) -> outer(l-1, i).
"""

from __future__ import annotations

from dataclasses import dataclass

from sql.hir import Exists, HFilter, HirRel, HirScalar, HMap, HProject, HReduce, OuterColumn, Select
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    conjuncts,
    permute,
)
from sql.types import BOOL


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


def quantified(sub: HirRel, cmp: HirScalar, n: int, quantifier: str) -> Select:
    """x op ANY(S) = case when bool_or(x op s) then true when bool_or((x op s) is null)
    then null else false end, over S (false for empty S); x op ALL(S) likewise with
    bool_or(not (x op s)) deciding false and true for empty S. `cmp` is x op s over S's n
    columns (x read as an enclosing value)."""
    decisive = cmp if quantifier == "any" else CallUnary("not", cmp, BOOL)
    unknown = CallUnary("is_null", cmp, BOOL)
    rel = HReduce(
        HMap(sub, (decisive, unknown)),
        (),
        (AggregateExpr("bool_or", Column(n, BOOL), False, BOOL),
         AggregateExpr("bool_or", Column(n + 1, BOOL), False, BOOL)),
    )
    hit = Literal(quantifier == "any", BOOL)
    verdict: HirScalar = If(CallUnary("is_true", Column(0, BOOL), BOOL), hit,
                             If(CallUnary("is_true", Column(1, BOOL), BOOL), Literal(None, BOOL), Literal(quantifier != "any", BOOL), BOOL), BOOL)
    return Select(HProject(HMap(rel, (verdict,)), (2,)), BOOL)


@dataclass(frozen=True, slots=True)
class NotIn:
    """A predicate NOT (x IN (S)) over one column, S's rows compared by x = s."""

    sub: HirRel
    outer: HirScalar  # x, as S's scope reads it (enclosing columns only)
    inner: HirScalar  # s, over S's one column


def not_in(p: HirScalar) -> NotIn | None:
    """p = NOT quantified(S, x = s, 1, "any") with x reading only enclosing columns and s
    only S's, neither holding a subquery; else None."""
    if not (isinstance(p, CallUnary) and p.func == "not" and isinstance(p.expr, Select)):
        return None
    top = p.expr.rel
    if not (isinstance(top, HProject) and isinstance(top.input, HMap) and isinstance(top.input.input, HReduce)):
        return None
    inner = top.input.input.input
    if not (isinstance(inner, HMap) and len(inner.scalars) == 2):
        return None
    cmp = inner.scalars[0]
    if not (isinstance(cmp, CallBinary) and cmp.func == "eq"):
        return None
    if quantified(inner.input, cmp, 1, "any") != p.expr:
        return None  # (this also checks that S has one column: the aggregates read #1, #2)
    a, b = _refs(cmp.expr1), _refs(cmp.expr2)
    if a[0] or a[2] or b[1] or b[2]:
        return None
    return NotIn(inner.input, cmp.expr1, cmp.expr2)


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
    from sql.hir import hir_types
    from sql.transforms.non_null_requirements import strict_columns

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
