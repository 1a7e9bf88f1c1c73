"""Predicate pushdown.

- Filter((a AND b) OR (a AND c)) = Filter(a, b OR c) first (sql.transforms.undistribute)
- Filter((a1 AND b1) OR (a2 AND b2))(Join(x, ..)) with a's over x alone
    = Filter(same)(Join(Filter(a1 OR a2)(x), ..)): implied, pushed to a plain input once
- Filter(p)(Join(x1..xn)) where p uses only xi's columns = Join(.., Filter(p')(xi), ..)
- Filter(a = b)(Join(..)) with a over xi, b over xj (i != j)
    = Join with equivalence (a, b) and Filter(a IS NOT NULL) pushed to xi
  (join equivalences are null-safe; SQL `=` is not)
- Filter(p)(Map(ss)(x)) = Map(ss)(Filter(p)(x)) when p reads only x's columns, after the
  Map columns that copy a column are replaced in p by the column they copy
  (p[#n+j := ss[j]]: LATERAL (VALUES (a.x)) is a Map of a.x, and `b.y = ss.x` is `b.y = a.x`)
- Filter(p)(Project(o)(x)) = Project(o)(Filter(p∘o)(x))
- Filter(p)(Union(xs)) = Union(Filter(p)(x) for x in xs);  likewise through Negate, Threshold
- Filter(p)(Reduce(x)) = Reduce(Filter(p')(x)) when p reads only plain-column group keys
- Filter(p)(Let(v, body)) = Let(v, Filter(p)(body));  likewise LetRec(vs, body): the filter
  reaches the body only, never a recursive binding (other readers, and the binding's own
  iterations, need all of its rows)
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from sql import mir
from sql.scalar import (
    CallBinary,
    CallUnary,
    Column,
    Scalar,
    columns_used,
    conjuncts,
    permute,
    substitute,
)
from sql.transforms.undistribute import implied_parts, undistribute
from sql.transforms.visit import map_children
from sql.types import BOOL


def _owner(cols: set[int], offsets: list[int]) -> int | None:
    owners = {bisect_right(offsets, c) - 1 for c in cols}
    return owners.pop() if len(owners) == 1 else None


def _merge(classes: list[tuple[Scalar, ...]]) -> tuple[tuple[Scalar, ...], ...]:
    merged: list[list[Scalar]] = []
    for cls in classes:
        hits = [m for m in merged if any(x in m for x in cls)]
        new = list(dict.fromkeys([x for m in hits for x in m] + list(cls)))
        merged = [m for m in merged if m not in hits] + [new]
    return tuple(tuple(m) for m in merged)


def _inline_copies(p: Scalar, n: int, ss: tuple[Scalar, ...]) -> Scalar:
    """p with each Map column #n+j that copies a column of the input (after following copies)
    replaced by that column."""
    sub: dict[int, Scalar] = {}
    for c in columns_used(p):
        s = ss[c - n] if c >= n else None
        while isinstance(s, Column) and s.index >= n:
            s = ss[s.index - n]
        if isinstance(s, Column):
            sub[c] = s
    return substitute(p, sub) if sub else p


def _holds_below(x: mir.Mir, p: Scalar) -> bool:
    """Is p already a filter of x's rows, as pushdown would place it: a conjunct of a Filter
    on the way down through Filters, Projects, Maps and ArrangeBys (renumbered on the way)?
    Anything else (a join, a reduce, ...) counts as yes, so an implied part is pushed into a
    plain input only and the rewrite reaches a fixpoint."""
    while True:
        match x:
            case mir.Filter(input=y, predicates=ps):
                if p in conjuncts(ps):
                    return True
                x = y
            case mir.Project(input=y, outputs=o):
                p, x = permute(p, o), y
            case mir.Map(input=y) if all(c < mir.arity(y) for c in columns_used(p)):
                x = y
            case mir.ArrangeBy(input=y):
                x = y
            case mir.Get(local=False):
                return False
            case _:
                return True


def predicate_pushdown(r: mir.Mir) -> mir.Mir:
    r = map_children(r, predicate_pushdown)
    if not isinstance(r, mir.Filter):
        return r
    x = r.input
    preds = [q for p in conjuncts(r.predicates) for q in undistribute(p)]
    match x:
        case mir.Join(inputs=ins, equivalences=eq):
            offsets = [0]
            for i in ins:
                offsets.append(offsets[-1] + mir.arity(i))
            pushed: list[list[Scalar]] = [[] for _ in ins]
            classes = list(eq)
            rest: list[Scalar] = []
            for p in preds:
                used = columns_used(p)
                o = _owner(used, offsets) if used else None
                if o is not None:
                    pushed[o].append(permute(p, {c: c - offsets[o] for c in used}))
                    continue
                if isinstance(p, CallBinary) and p.func == "eq":
                    ua, ub = columns_used(p.expr1), columns_used(p.expr2)
                    oa = _owner(ua, offsets) if ua else None
                    ob = _owner(ub, offsets) if ub else None
                    if oa is not None and ob is not None and oa != ob:
                        classes.append((p.expr1, p.expr2))
                        pushed[oa].append(CallUnary("not", CallUnary("is_null", permute(p.expr1, {c: c - offsets[oa] for c in ua}), BOOL), BOOL))
                        continue
                rest.append(p)
            derived = False
            for p in rest:  # a disjunction's parts over one input, pushed below as well
                for o, q in implied_parts(p, lambda c: _owner(columns_used(c), offsets) if columns_used(c) else None).items():
                    local = permute(q, {c: c - offsets[o] for c in columns_used(q)})
                    if not _holds_below(ins[o], local) and local not in pushed[o]:
                        pushed[o].append(local)
                        derived = True
            if len(rest) == len(preds) and r.predicates == tuple(preds) and not derived:
                return r  # nothing to push
            new_ins = tuple(predicate_pushdown(mir.Filter(i, tuple(ps))) if ps else i for i, ps in zip(ins, pushed, strict=True))
            out: mir.Mir = replace(x, inputs=new_ins, equivalences=_merge(classes))
            return mir.Filter(out, tuple(rest)) if rest else out
        case mir.Map(input=inner, scalars=ss):
            n = mir.arity(inner)
            preds = [_inline_copies(p, n, ss) for p in preds]
            below = [p for p in preds if all(c < n for c in columns_used(p))]
            if not below:
                return r
            above = [p for p in preds if p not in below]
            m: mir.Mir = mir.Map(predicate_pushdown(mir.Filter(inner, tuple(below))), ss)
            return mir.Filter(m, tuple(above)) if above else m
        case mir.Project(input=inner, outputs=o):
            return mir.Project(predicate_pushdown(mir.Filter(inner, tuple(permute(p, o) for p in preds))), o)
        case mir.Union(inputs=xs):
            return mir.Union(tuple(predicate_pushdown(mir.Filter(i, tuple(preds))) for i in xs))
        case mir.Negate(input=inner):
            return mir.Negate(predicate_pushdown(mir.Filter(inner, tuple(preds))))
        case mir.Threshold(input=inner):
            return mir.Threshold(predicate_pushdown(mir.Filter(inner, tuple(preds))))
        case mir.Let(id=i, value=v, body=b):
            return mir.Let(i, v, predicate_pushdown(mir.Filter(b, tuple(preds))))
        case mir.LetRec(body=b):
            return replace(x, body=predicate_pushdown(mir.Filter(b, tuple(preds))))
        case mir.Reduce(input=inner, group_key=key):
            nk = len(key)
            below, above = [], []
            for p in preds:
                used = columns_used(p)
                if used and all(c < nk and isinstance(key[c], Column) for c in used):
                    below.append(permute(p, {c: key[c].index for c in used}))  # type: ignore[union-attr]
                else:
                    above.append(p)
            if not below:
                return r
            red: mir.Mir = replace(x, input=predicate_pushdown(mir.Filter(inner, tuple(below))))
            return mir.Filter(red, tuple(above)) if above else red
        case _:
            return r
