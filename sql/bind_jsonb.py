"""jsonb expressions: the operators ->, ->>, #>, ?.., to_jsonb and jsonb_build_object / _array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql import func, jsonb
from sql.errors import (
    SqlError,
    unsupported,
)
from sql.hir import (
    HirScalar,
)
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Literal,
)
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn  # noqa: F401 (re-exported)
from sql.types import (
    JSONB,
    TEXT,
)

if TYPE_CHECKING:
    from sql.bind import Binder


_JSONB_NODES: dict[type, str] = {
    exp.JSONExtract: "->", exp.JSONExtractScalar: "->>", exp.JSONBExtract: "#>", exp.JSONBExtractScalar: "#>>",
    exp.JSONBContainsTopKey: "?", exp.JSONBContainsAnyTopKeys: "?|", exp.JSONBContainsAllTopKeys: "?&",
}


def jsonb_operator(binder: Binder, e: exp.Expression, scope: Scope) -> HirScalar:
    """->, ->>, #>, #>>, ?, ?|, ?& (the left operand is jsonb; typing in sql.func)."""
    a = binder.scalar(e.this, scope)
    b = binder.scalar(e.expression, scope)
    op = _JSONB_NODES[type(e)]
    ta, tb, tr, name = func.jsonb_operator(op, a.typ, b.typ)
    return CallBinary(name, binder.coerce(a, ta), binder.coerce(b, tb), tr)


def to_jsonb(binder: Binder, h: HirScalar) -> HirScalar:
    """to_jsonb(h) for the scalar types whose jsonb form we render exactly; literals fold."""
    if h.typ.name == "unknown":
        h = binder.coerce(h, TEXT)
    if isinstance(h, Literal):
        return Literal(jsonb.literal_to_jsonb(h.value, h.typ), JSONB)
    func.to_jsonb_check(h.typ)
    if h.typ.name == "jsonb":
        return h
    return CallUnary("to_jsonb", h, JSONB)


def jsonb_key(binder: Binder, h: HirScalar) -> HirScalar:
    """An object key: text (other types through their text form)."""
    if h.typ.name in ("int2", "int4", "int8") or h.typ.is_string or h.typ.name == "unknown":
        return binder.coerce(h, TEXT, explicit=True)
    raise unsupported(f"jsonb object keys of type {h.typ.pg_format()}")


def jsonb_build(binder: Binder, name: str, args: list[HirScalar]) -> HirScalar:
    """jsonb_build_object(k, v, ...) / jsonb_build_array(v, ...)."""
    if name == "jsonb_build_array":
        return CallVariadic("jsonb_build_array", tuple(to_jsonb(binder, a) for a in args), JSONB)
    if len(args) % 2:
        raise SqlError("22023", "argument list must have even number of elements",
                       hint="The arguments of jsonb_build_object() must consist of alternating keys and values.")
    out: list[HirScalar] = []
    for i in range(0, len(args), 2):
        k = jsonb_key(binder, args[i])
        if isinstance(k, Literal) and k.value is None:
            raise SqlError("22023", f"argument {i + 1}: key must not be null")
        out += [k, to_jsonb(binder, args[i + 1])]
    return CallVariadic("jsonb_build_object", tuple(out), JSONB)
