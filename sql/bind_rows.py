"""Row comparisons: `(a, b) op (c, d)` and `ROW(..)` operands, expanded to comparisons of
their fields (Postgres' row-wise semantics, NULLs included)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.hir import HirScalar
from sql.scalar import CallUnary, CallVariadic, If, Literal, record_get
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
    """(a1, .., an) op (b1, .., bn), see compare_fields."""
    return compare_fields(binder, op, row_fields(binder, left, scope), row_fields(binder, right, scope))


def compare_fields(binder: Binder, op: str, a: list[HirScalar], b: list[HirScalar]) -> HirScalar:
    """(a1, .., an) = (b1, .., bn)  = a1 = b1 AND .. AND an = bn;
    (a..) <> (b..) = a1 <> b1 OR .. OR an <> bn;
    (a..) < (b..)  = a1 < b1 OR (a1 = b1 AND ((a2, ..) < (b2, ..))), ending in an < bn
    (<= ends in an <= bn; > and >= likewise): the first pair that is not equal decides,
    and a NULL there makes the result NULL."""
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


def is_record(h: HirScalar) -> bool:
    """A value of a record type whose fields are known (ROW(..), a whole-row reference)."""
    return h.typ.name == "record" and bool(h.typ.fields)


def record_comparison(binder: Binder, op: str, a: HirScalar, b: HirScalar) -> HirScalar:
    """record op record (not two row constructors): Postgres' record_eq / record_lt / ..,
    strict in the records themselves, then a total order over their fields: the first
    pair of fields that is not equal decides, two NULL fields are equal and a NULL field
    sorts after every value (so the result is never NULL for two non-NULL records). Fields
    must have the same types (42804)."""
    if len(a.typ.fields) != len(b.typ.fields):
        raise SqlError("42804", "cannot compare record types with different numbers of columns")
    for i, (tx, ty) in enumerate(zip(a.typ.fields, b.typ.fields, strict=True)):
        if tx.name != ty.name or tx.fields != ty.fields:
            raise SqlError("42804", f"cannot compare dissimilar column types {tx.pg_format()} and {ty.pg_format()} "
                                    f"at record column {i + 1}")
    pairs = list(zip(record_fields(a), record_fields(b), strict=True))
    if op in ("eq", "ne"):
        same = _all("and", [binder._same(x, y) for x, y in pairs])
        out = same if op == "eq" else CallUnary("not", same, BOOL)
    else:
        if op not in _STRICT:
            raise unsupported(f"operator {op} on records")
        out = _last_field(binder, op, *pairs[-1])
        for x, y in reversed(pairs[:-1]):
            out = CallVariadic("or", (_last_field(binder, _STRICT[op], x, y),
                                      CallVariadic("and", (binder._same(x, y), out), BOOL)), BOOL)
    either_null = CallVariadic("or", (CallUnary("is_null", a, BOOL), CallUnary("is_null", b, BOOL)), BOOL)
    return If(either_null, Literal(None, BOOL), out, BOOL)


def _last_field(binder: Binder, op: str, x: HirScalar, y: HirScalar) -> HirScalar:
    """x op y in the order where NULL sorts after every value and equals NULL:
    x < y = coalesce(x < y, x IS NOT NULL AND y IS NULL); x <= y = that OR both NULL;
    > and >= mirrored."""
    x_null, y_null = CallUnary("is_null", x, BOOL), CallUnary("is_null", y, BOOL)
    if op in ("lt", "le"):
        beyond: HirScalar = CallVariadic("and", (CallUnary("not", x_null, BOOL), y_null), BOOL)
    else:
        beyond = CallVariadic("and", (x_null, CallUnary("not", y_null, BOOL)), BOOL)
    if op in ("le", "ge"):
        beyond = CallVariadic("or", (beyond, CallVariadic("and", (x_null, y_null), BOOL)), BOOL)
    return CallVariadic("coalesce", (binder._binary(op, x, y), beyond), BOOL)


def record_fields(h: HirScalar) -> list[HirScalar]:
    """The fields of a record value; a ROW(..) call's own arguments."""
    if isinstance(h, CallVariadic) and h.func == "row":
        return list(h.exprs)
    return [record_get(h, i, t) for i, t in enumerate(h.typ.fields)]


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
