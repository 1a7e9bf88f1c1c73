"""What a maintained dataflow (materialized view, index) may compute from time, checked on the
decorrelated MIR of its definition (views inlined), before `now` is bound:

- `now()` / `current_timestamp` (and what is built on them) never: their value is the
  statement's time, so a maintained result would be wrong as time passes ("cannot
  materialize call to current_timestamp", 0A000 in Materialize);
- `mz_now()` only in a temporal filter: a top-level conjunct of a WHERE / HAVING predicate
  `mz_now() <op> e` or `e <op> mz_now()` with `<op>` one of `= < <= > >=` and `e` free of
  `mz_now()` (Materialize's "Unsupported temporal predicate" otherwise: inside OR, NOT,
  CASE, `<>`, the select list, an aggregate or its FILTER, a join condition).

One-shot SELECTs are not checked: there both functions are the query's timestamp.
"""

from __future__ import annotations

from typing import assert_never

from sql import mir
from sql.errors import FEATURE_NOT_SUPPORTED, SqlError
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, If, Literal, Scalar, explain

_COMPARISONS = {"eq", "lt", "le", "gt", "ge"}


def check_maintainable(m: mir.Mir) -> None:
    """Raise 0A000 when `m` uses `now()` anywhere or `mz_now()` outside a temporal filter."""
    match m:
        case mir.Filter(predicates=ps, input=x):
            for p in ps:
                for c in _conjuncts(p):
                    _check_predicate(c)
            check_maintainable(x)
            return
        case mir.Constant() | mir.Get():
            return
        case mir.Map(scalars=xs):
            _check_scalars(xs)
        case mir.FlatMap(exprs=xs):
            _check_scalars(xs)
        case mir.Join(equivalences=eq):
            _check_scalars(tuple(x for cls in eq for x in cls))
        case mir.Reduce(group_key=k, aggregates=aggs):
            _check_scalars(k)
            _check_scalars(tuple(a.expr for a in aggs))
        case mir.ArrangeBy(keys=ks):
            _check_scalars(tuple(x for k in ks for x in k))
        case mir.Project() | mir.TopK() | mir.Negate() | mir.Threshold() | mir.Union() | mir.Let() | mir.LetRec():
            pass
        case _:
            assert_never(m)
    for child in mir.mir_children(m):
        check_maintainable(child)


def _conjuncts(p: Scalar) -> list[Scalar]:
    if isinstance(p, CallVariadic) and p.func == "and":
        return [c for x in p.exprs for c in _conjuncts(x)]
    return [p]


def _check_predicate(p: Scalar) -> None:
    _refuse_now(p)
    if not _calls(p, "mz_now"):
        return
    if isinstance(p, CallBinary) and p.func in _COMPARISONS:
        a, b = p.expr1, p.expr2
        if (_is_mz_now(a) and not _calls(b, "mz_now")) or (_is_mz_now(b) and not _calls(a, "mz_now")):
            return
    raise SqlError(
        FEATURE_NOT_SUPPORTED,
        "Unsupported temporal predicate. Note: `mz_now()` must be directly compared to a non-temporal "
        f"expression of mz_timestamp-castable type. Expression found: {explain(p)}",
    )


def _check_scalars(xs: tuple[Scalar, ...]) -> None:
    for x in xs:
        _refuse_now(x)
        if _calls(x, "mz_now"):
            raise SqlError(
                FEATURE_NOT_SUPPORTED,
                "Unsupported temporal expression: `mz_now()` can only be used in a temporal filter "
                f"(a WHERE or HAVING comparison) of a materialized view or index. Expression found: {explain(x)}",
            )


def _refuse_now(x: Scalar) -> None:
    if _calls(x, "now"):
        raise SqlError(FEATURE_NOT_SUPPORTED, "cannot materialize call to current_timestamp")


def _is_mz_now(x: Scalar) -> bool:
    """mz_now(), possibly cast to timestamp(tz) (`mz_now()::timestamptz`: the bounds of
    compute.plan.temporal round exactly)."""
    if isinstance(x, CallUnary) and x.func == "cast" and x.typ.name in ("timestamp", "timestamptz"):
        x = x.expr
    return isinstance(x, CallVariadic) and x.func == "mz_now"


def _calls(x: Scalar, func: str) -> bool:
    match x:
        case Column() | Literal():
            return False
        case CallVariadic(func=f, exprs=xs):
            return f == func or any(_calls(e, func) for e in xs)
        case CallUnary(expr=e):
            return _calls(e, func)
        case CallBinary(expr1=a, expr2=b):
            return _calls(a, func) or _calls(b, func)
        case If(cond=c, then=a, els=b):
            return _calls(c, func) or _calls(a, func) or _calls(b, func)
        case _:
            assert_never(x)
