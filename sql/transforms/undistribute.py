"""Common conjuncts factored out of a disjunction (Materialize's `undistribute_and_or`):

    (a AND b) OR (a AND c) = a AND (b OR c)
    a OR (a AND b)         = a

Both identities hold in SQL's three-valued logic. TPC-H q19 repeats `p_partkey = l_partkey`
in each of its three disjuncts: factored out, it is a join equivalence instead of a filter
over a cross join."""

from __future__ import annotations

from sql.scalar import CallVariadic, Scalar
from sql.types import BOOL


def _disjuncts(p: Scalar) -> list[Scalar]:
    if isinstance(p, CallVariadic) and p.func == "or":
        return [d for e in p.exprs for d in _disjuncts(e)]
    return [p]


def _conjuncts(p: Scalar) -> list[Scalar]:
    if isinstance(p, CallVariadic) and p.func == "and":
        return [c for e in p.exprs for c in _conjuncts(e)]
    return [p]


def _all(ps: list[Scalar], func: str) -> Scalar:
    return ps[0] if len(ps) == 1 else CallVariadic(func, tuple(ps), BOOL)


def undistribute(p: Scalar) -> list[Scalar]:
    """The conjuncts of p after factoring the conjuncts common to all its disjuncts out of
    it (p itself when it is no OR or they share none)."""
    ds = _disjuncts(p)
    if len(ds) < 2:
        return [p]
    parts = [_conjuncts(d) for d in ds]
    common = [c for c in dict.fromkeys(parts[0]) if all(c in cs for cs in parts[1:])]
    if not common:
        return [p]
    rests = [[c for c in cs if c not in common] for cs in parts]
    if any(not r for r in rests):  # a disjunct is exactly the common part: absorbed
        return common
    return [*common, _all([_all(r, "and") for r in rests], "or")]
