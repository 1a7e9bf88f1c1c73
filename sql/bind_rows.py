"""Row comparisons: `(a, b) op (c, d)` and `ROW(..)` operands, expanded to comparisons of
their fields (Postgres' row-wise semantics, NULLs included)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.hir import HirScalar
from sql.scalar import CallUnary, CallVariadic
from sql.scope import Scope
from sql.types import BOOL

if TYPE_CHECKING:
    from sql.bind import Binder

_STRICT = {"lt": "lt", "le": "lt", "gt": "gt", "ge": "gt"}


def is_row(e: exp.Expression) -> bool:
    """`(a, b)` or `ROW(a, ..)`."""
    return isinstance(e, exp.Tuple) or (isinstance(e, exp.Anonymous) and str(e.this).lower() == "row")


def row_fields(binder: Binder, e: exp.Expression, scope: Scope) -> list[HirScalar]:
    if not is_row(e):
        raise unsupported("comparing a row with a non-row expression")
    return [binder.scalar(x, scope) for x in e.expressions]


def row_comparison(binder: Binder, op: str, left: exp.Expression, right: exp.Expression, scope: Scope) -> HirScalar:
    """(a1, .., an) = (b1, .., bn)  = a1 = b1 AND .. AND an = bn;
    (a..) <> (b..) = a1 <> b1 OR .. OR an <> bn;
    (a..) < (b..)  = a1 < b1 OR (a1 = b1 AND ((a2, ..) < (b2, ..))), ending in an < bn
    (<= ends in an <= bn; > and >= likewise): the first pair that is not equal decides,
    and a NULL there makes the result NULL."""
    a, b = row_fields(binder, left, scope), row_fields(binder, right, scope)
    if len(a) != len(b):
        raise SqlError(SYNTAX_ERROR, "unequal number of entries in row expressions")
    if not a:
        raise unsupported("comparing empty rows")
    pairs = list(zip(a, b, strict=True))
    if op == "eq":
        return _all("and", [binder._binary("eq", x, y) for x, y in pairs])
    if op == "ne":
        return _all("or", [binder._binary("ne", x, y) for x, y in pairs])
    if op not in _STRICT:
        raise unsupported(f"operator {op} on rows")
    x, y = pairs[-1]
    out = binder._binary(op, x, y)
    for x, y in reversed(pairs[:-1]):
        out = CallVariadic("or", (binder._binary(_STRICT[op], x, y),
                                  CallVariadic("and", (binder._binary("eq", x, y), out), BOOL)), BOOL)
    return out


def row_not_distinct(binder: Binder, left: exp.Expression, right: exp.Expression, scope: Scope, negate: bool) -> HirScalar:
    """(a..) IS NOT DISTINCT FROM (b..) = each ai IS NOT DISTINCT FROM bi; IS DISTINCT FROM
    is its negation."""
    a, b = row_fields(binder, left, scope), row_fields(binder, right, scope)
    if len(a) != len(b):
        raise SqlError(SYNTAX_ERROR, "unequal number of entries in row expressions")
    same = _all("and", [binder._same(x, y) for x, y in zip(a, b, strict=True)])
    return CallUnary("not", same, BOOL) if negate else same


def _all(f: str, xs: list[HirScalar]) -> HirScalar:
    return xs[0] if len(xs) == 1 else CallVariadic(f, tuple(xs), BOOL)
