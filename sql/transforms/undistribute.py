"""Common conjuncts factored out of a disjunction (Materialize's `undistribute_and_or`):

    (a AND b) OR (a AND c) = a AND (b OR c)
    a OR (a AND b)         = a

Both identities hold in SQL's three-valued logic. TPC-H q19 repeats `p_partkey = l_partkey`
in each of its three disjuncts: factored out, it is a join equivalence instead of a filter
over a cross join."""

from __future__ import annotations

from collections.abc import Callable

from sql.scalar import CallVariadic, Scalar, conjuncts
from sql.types import BOOL


def _disjuncts(p: Scalar) -> list[Scalar]:
    if isinstance(p, CallVariadic) and p.func == "or":
        return [d for e in p.exprs for d in _disjuncts(e)]
    return [p]


def _all(ps: list[Scalar], func: str) -> Scalar:
    return ps[0] if len(ps) == 1 else CallVariadic(func, tuple(ps), BOOL)


def undistribute(p: Scalar) -> list[Scalar]:
    """The conjuncts of p after factoring the conjuncts common to all its disjuncts out of
    it (p itself when it is no OR or they share none)."""
    ds = _disjuncts(p)
    if len(ds) < 2:
        return [p]
    parts = [conjuncts([d]) for d in ds]
    common = [c for c in dict.fromkeys(parts[0]) if all(c in cs for cs in parts[1:])]
    if not common:
        return [p]
    rests = [[c for c in cs if c not in common] for cs in parts]
    if any(not r for r in rests):  # a disjunct is exactly the common part: absorbed
        return common
    return [*common, _all([_all(r, "and") for r in rests], "or")]


def implied_parts(p: Scalar, owner: Callable[[Scalar], int | None]) -> dict[int, Scalar]:
    """For a disjunction p over a join's inputs: {input i: the disjunction, over the disjuncts,
    of each one's conjuncts that read input i alone}, for every i each disjunct restricts.
    p implies each of them (a true disjunct makes its own part true), so each may filter
    input i below the join while p stays above it:

        (a1 AND b1) OR (a2 AND b2) => a1 OR a2   (a's over one input, b's over others)

    TPC-H q19: the brand / container / size disjunction shrinks `part` before the join."""
    ds = _disjuncts(p)
    if len(ds) < 2:
        return {}
    per: list[dict[int, list[Scalar]]] = []
    for d in ds:
        by: dict[int, list[Scalar]] = {}
        for c in conjuncts([d]):
            if (o := owner(c)) is not None:
                by.setdefault(o, []).append(c)
        per.append(by)
    common = set(per[0]).intersection(*per[1:])
    return {i: _all([_all(by[i], "and") for by in per], "or") for i in sorted(common)}
