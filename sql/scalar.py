"""MIR scalar expressions: positional columns, literals, function calls, If.

Function names are strings from `sql.func`; every call carries its result type so typing a
scalar is O(1). Aggregates and column orders used by Reduce/TopK also live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from sql.types import BOOL, SqlType


@dataclass(frozen=True, slots=True)
class Column:
    index: int
    typ: SqlType


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any  # Python value per sql/types.py; None = NULL
    typ: SqlType


@dataclass(frozen=True, slots=True)
class CallUnary:
    func: str
    expr: Scalar
    typ: SqlType


@dataclass(frozen=True, slots=True)
class CallBinary:
    func: str
    expr1: Scalar
    expr2: Scalar
    typ: SqlType


@dataclass(frozen=True, slots=True)
class CallVariadic:
    func: str
    exprs: tuple[Scalar, ...]
    typ: SqlType


@dataclass(frozen=True, slots=True)
class If:
    cond: Scalar
    then: Scalar
    els: Scalar
    typ: SqlType


Scalar = Column | Literal | CallUnary | CallBinary | CallVariadic | If


@dataclass(frozen=True, slots=True)
class AggregateExpr:
    func: str  # count | sum | min | max | sum_int (internal) ...
    expr: Scalar
    distinct: bool
    typ: SqlType


@dataclass(frozen=True, slots=True)
class ColumnOrder:
    column: int
    desc: bool = False
    nulls_last: bool = True


TRUE = Literal(True, BOOL)
FALSE = Literal(False, BOOL)


def children(e: Scalar) -> tuple[Scalar, ...]:
    match e:
        case Column() | Literal():
            return ()
        case CallUnary(expr=x):
            return (x,)
        case CallBinary(expr1=a, expr2=b):
            return (a, b)
        case CallVariadic(exprs=xs):
            return xs
        case If(cond=c, then=t, els=f):
            return (c, t, f)
        case _:
            assert_never(e)


def columns_used(e: Scalar, acc: set[int] | None = None) -> set[int]:
    acc = set() if acc is None else acc
    if isinstance(e, Column):
        acc.add(e.index)
    for c in children(e):
        columns_used(c, acc)
    return acc


def permute(e: Scalar, mapping: dict[int, int] | list[int] | tuple[int, ...]) -> Scalar:
    """Rename column references: #i -> #mapping[i]."""
    match e:
        case Column(index=i, typ=t):
            return Column(mapping[i], t)
        case Literal():
            return e
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, permute(x, mapping), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, permute(a, mapping), permute(b, mapping), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(permute(x, mapping) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(permute(c, mapping), permute(a, mapping), permute(b, mapping), t)
        case _:
            assert_never(e)


def substitute(e: Scalar, exprs: tuple[Scalar, ...] | list[Scalar]) -> Scalar:
    """Replace #i by exprs[i] (inlining a Map)."""
    match e:
        case Column(index=i):
            return exprs[i]
        case Literal():
            return e
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, substitute(x, exprs), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, substitute(a, exprs), substitute(b, exprs), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(substitute(x, exprs) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(substitute(c, exprs), substitute(a, exprs), substitute(b, exprs), t)
        case _:
            assert_never(e)


_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%",
    "eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "concat": "||", "like": "like", "ilike": "ilike", "not_like": "not like",
    "not_ilike": "not ilike",
}


def literal_text(v: Any, t: SqlType) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) or t.is_numeric:
        return str(v)
    s = str(v).replace('"', '\\"')
    return f'"{s}"'


def explain(e: Scalar, names: list[str] | None = None) -> str:
    """Materialize-style scalar text: #0, (#0 + 1), coalesce(#1, 0)."""
    match e:
        case Column(index=i):
            if names is not None and i < len(names) and names[i]:
                return names[i]
            return f"#{i}"
        case Literal(value=v, typ=t):
            return literal_text(v, t)
        case CallUnary(func="not", expr=CallUnary(func="is_null", expr=x)):
            return f"({explain(x, names)}) IS NOT NULL"
        case CallUnary(func="not", expr=x):
            return f"NOT({explain(x, names)})"
        case CallUnary(func="is_null", expr=x):
            return f"({explain(x, names)}) IS NULL"
        case CallUnary(func="neg", expr=x):
            return f"-({explain(x, names)})"
        case CallUnary(func="cast", expr=x, typ=t):
            return f"{t.name}({explain(x, names)})"
        case CallUnary(func=f, expr=x):
            return f"{f}({explain(x, names)})"
        case CallBinary(func="raise_error", expr2=b):
            return f"error({explain(b, names)})"
        case CallBinary(func=f, expr1=a, expr2=b) if f in _INFIX:
            return f"({explain(a, names)} {_INFIX[f]} {explain(b, names)})"
        case CallBinary(func=f, expr1=a, expr2=b):
            return f"{f}({explain(a, names)}, {explain(b, names)})"
        case CallVariadic(func=("and" | "or") as f, exprs=xs):
            return "(" + f" {f.upper()} ".join(explain(x, names) for x in xs) + ")"
        case CallVariadic(func=f, exprs=xs):
            return f"{f}(" + ", ".join(explain(x, names) for x in xs) + ")"
        case If(cond=c, then=a, els=b):
            return f"case when {explain(c, names)} then {explain(a, names)} else {explain(b, names)} end"
        case _:
            assert_never(e)


def explain_agg(a: AggregateExpr, names: list[str] | None = None) -> str:
    inner = "*" if (a.func == "count" and a.expr == TRUE) else explain(a.expr, names)
    d = "distinct " if a.distinct else ""
    return f"{a.func}({d}{inner})"


def explain_order(o: ColumnOrder) -> str:
    return f"#{o.column} {'desc' if o.desc else 'asc'} {'nulls_last' if o.nulls_last else 'nulls_first'}"
