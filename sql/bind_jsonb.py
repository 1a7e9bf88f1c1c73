"""jsonb expressions: the operators ->, ->>, #>, ?.., to_jsonb and jsonb_build_object / _array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql import func, func_names, jsonb
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
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn, whole_row  # noqa: F401 (re-exported)
from sql.types import (
    BOOL,
    INT4,
    JSONB,
    TEXT,
    SqlType,
)

TEXT_ARRAY = func.TEXT_ARRAY

if TYPE_CHECKING:
    from sql.bind import Binder


_JSONB_NODES: dict[type, str] = {
    exp.JSONExtract: "->", exp.JSONExtractScalar: "->>", exp.JSONBExtract: "#>", exp.JSONBExtractScalar: "#>>",
    exp.JSONBContainsTopKey: "?", exp.JSONBContainsAnyTopKeys: "?|", exp.JSONBContainsAllTopKeys: "?&",
    exp.JSONBDeleteAtPath: "#-",
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


def record_to_jsonb(binder: Binder, name: str, raw: exp.Expression, args: list[HirScalar], scope: Scope) -> HirScalar:
    """to_jsonb(r) / row_to_json(r [, pretty]) of a record whose field names are known =
    jsonb_build_object('name1', r.f1, ..): a whole-row reference names its item's columns, a
    ROW(..) constructor f1, f2, .. (row_to_json's pretty-printing is json text layout, which
    jsonb does not keep)."""
    if len(args) > (2 if name == "row_to_json" else 1) or len(args) == 2 and args[1].typ.name not in ("bool", "unknown"):
        raise func_names.no_function(name, [a.typ for a in args])
    r = args[0]
    names = _field_names(binder, raw, scope, r)
    if names is None or not isinstance(r, CallVariadic) or r.func != "row":
        raise unsupported(f"{name} of a record value whose field names are not known")
    pairs: list[HirScalar] = []
    for n, f in zip(names, r.exprs, strict=True):
        pairs += [Literal(n, TEXT), f]
    return jsonb_build(binder, "jsonb_build_object", pairs)


def _field_names(binder: Binder, raw: exp.Expression, scope: Scope, r: HirScalar) -> list[str] | None:
    if isinstance(raw, exp.Paren):
        raw = raw.this
    if isinstance(raw, exp.Column) and not raw.table:
        for sc in [scope, *reversed(binder.outer)]:
            positions = whole_row(sc, raw.name)
            if positions is not None:
                cols = [sc.columns[i] for i in positions]
                return [c.attname or c.name for c in cols] if len(cols) == len(r.typ.fields) else None
        return None
    if isinstance(raw, exp.Tuple) or isinstance(raw, exp.Anonymous) and raw.name.lower() == "row":
        return [f"f{i + 1}" for i in range(len(r.typ.fields))]
    return None


def jsonb_key(binder: Binder, h: HirScalar) -> HirScalar:
    """An object key: text (other types through their text form)."""
    if h.typ.name in ("int2", "int4", "int8", "bool") or h.typ.is_string or h.typ.name == "unknown":
        return binder.coerce(h, TEXT, explicit=True)
    if func.is_array(h.typ) or h.typ.name in ("record", "jsonb", "list", "map"):
        raise SqlError("22023", "key value must be scalar, not array, composite, or json")
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


def jsonb_binary(binder: Binder, op: str, a: HirScalar, b: HirScalar) -> HirScalar | None:
    """jsonb || jsonb and jsonb - key / index / keys (None: not a jsonb operator); an unknown
    operand of || beside a jsonb one is jsonb, as in Postgres."""
    ta, tb = a.typ.name, b.typ.name
    if op == "concat" and {ta, tb} <= {"jsonb", "unknown"} and "jsonb" in (ta, tb):
        return CallBinary("jsonb_concat", binder.coerce(a, JSONB), binder.coerce(b, JSONB), JSONB)
    if op == "sub" and ta == "jsonb":
        lt, rt, res, name = func.jsonb_operator("-", a.typ, b.typ)
        return CallBinary(name, binder.coerce(a, lt), binder.coerce(b, rt), res)
    return None


def jsonb_subscript(binder: Binder, j: HirScalar, sub: HirScalar) -> HirScalar:
    """j[s]: j #> ARRAY[s::text] (Postgres fetches a jsonb subscript as a one-element path;
    integer subscripts index arrays, negative from the end)."""
    if sub.typ.name in ("int2", "int4", "int8", "unknown") or sub.typ.is_string:
        key = binder.coerce(sub, TEXT, explicit=True)
    else:
        raise SqlError("42804", f"subscript type {sub.typ.pg_format()} is not supported",
                       hint="jsonb subscript must be coercible to either integer or text.")
    path = CallVariadic("array_create", (key,), TEXT_ARRAY)
    return CallBinary("jsonb_get_path", binder.coerce(j, JSONB), path, JSONB)


# name -> [(parameter types, function, result type)]; the first whose arity and types fit
_FUNCTIONS: dict[str, list[tuple[tuple[SqlType, ...], str, SqlType]]] = {
    "jsonb_set": [((JSONB, TEXT_ARRAY, JSONB), "jsonb_set", JSONB), ((JSONB, TEXT_ARRAY, JSONB, BOOL), "jsonb_set", JSONB)],
    "jsonb_insert": [((JSONB, TEXT_ARRAY, JSONB), "jsonb_insert", JSONB),
                     ((JSONB, TEXT_ARRAY, JSONB, BOOL), "jsonb_insert", JSONB)],
    "jsonb_strip_nulls": [((JSONB,), "jsonb_strip_nulls", JSONB)],
    "jsonb_pretty": [((JSONB,), "jsonb_pretty", TEXT)],
    "jsonb_concat": [((JSONB, JSONB), "jsonb_concat", JSONB)],
    "jsonb_delete": [((JSONB, TEXT), "jsonb_delete_key", JSONB), ((JSONB, TEXT_ARRAY), "jsonb_delete_keys", JSONB),
                     ((JSONB, INT4), "jsonb_delete_index", JSONB)],
    "jsonb_delete_path": [((JSONB, TEXT_ARRAY), "jsonb_delete_path", JSONB)],
    "jsonb_contains": [((JSONB, JSONB), "jsonb_contains", BOOL)],
    "jsonb_contained": [((JSONB, JSONB), "jsonb_contained", BOOL)],
    "jsonb_exists": [((JSONB, TEXT), "jsonb_exists", BOOL)],
    "jsonb_exists_any": [((JSONB, TEXT_ARRAY), "jsonb_exists_any", BOOL)],
    "jsonb_exists_all": [((JSONB, TEXT_ARRAY), "jsonb_exists_all", BOOL)],
    "jsonb_object": [((TEXT_ARRAY,), "jsonb_object", JSONB), ((TEXT_ARRAY, TEXT_ARRAY), "jsonb_object_pairs", JSONB)],
}
JSONB_FUNCTIONS = frozenset(_FUNCTIONS) | {"jsonb_extract_path", "jsonb_extract_path_text"}


def _fits(have: SqlType, want: SqlType) -> bool:
    if have.name == "unknown" or have == want:
        return True
    if want == TEXT:
        return have.is_string
    if want == TEXT_ARRAY:
        return func.is_array(have) and have.element is not None and have.element.is_string
    return want == INT4 and have.name in ("int2", "int4")


def jsonb_function(binder: Binder, name: str, args: list[HirScalar]) -> HirScalar:
    """The jsonb functions of _FUNCTIONS, and jsonb_extract_path(_text)(j, VARIADIC text):
    j #> ARRAY[path...]."""
    if name in ("jsonb_extract_path", "jsonb_extract_path_text") and args and _fits(args[0].typ, JSONB) \
            and all(_fits(a.typ, TEXT) for a in args[1:]):
        path = CallVariadic("array_create", tuple(binder.coerce(a, TEXT) for a in args[1:]), TEXT_ARRAY)
        f, res = ("jsonb_get_path_text", TEXT) if name.endswith("_text") else ("jsonb_get_path", JSONB)
        return CallBinary(f, binder.coerce(args[0], JSONB), path, res)
    for params, f, res in _FUNCTIONS.get(name, []):
        if len(params) == len(args) and all(_fits(a.typ, p) for a, p in zip(args, params, strict=True)):
            cargs = tuple(binder.coerce(a, p) for a, p in zip(args, params, strict=True))
            if f == "jsonb_contained":
                return CallBinary("jsonb_contains", cargs[1], cargs[0], BOOL)
            if len(cargs) == 1:
                return CallUnary(f, cargs[0], res)
            if len(cargs) == 2:
                return CallBinary(f, cargs[0], cargs[1], res)
            return CallVariadic(f, cargs, res)
    raise func._no_function(name, [a.typ for a in args])


def jsonb_variadic(binder: Binder, name: str, fixed: list[HirScalar], arr: HirScalar) -> HirScalar:
    """f(a, ..., VARIADIC arr): the array is the variadic parameter itself.
    jsonb_extract_path(_text)(j, VARIADIC p) = j #> p (#>> p); jsonb_build_array /
    jsonb_build_object(VARIADIC arr) = the call with arr's elements as arguments (NULL when arr
    is NULL), for an array known when planning."""
    if arr.typ.name == "unknown":
        arr = binder.coerce(arr, TEXT_ARRAY)
    if not func.is_array(arr.typ):
        raise SqlError("42804", "VARIADIC argument must be an array")
    if name in ("jsonb_extract_path", "jsonb_extract_path_text") and len(fixed) == 1 and _fits(fixed[0].typ, JSONB) \
            and _fits(arr.typ, TEXT_ARRAY):
        f, res = ("jsonb_get_path_text", TEXT) if name.endswith("_text") else ("jsonb_get_path", JSONB)
        return CallBinary(f, binder.coerce(fixed[0], JSONB), binder.coerce(arr, TEXT_ARRAY), res)
    if name in ("jsonb_build_array", "jsonb_build_object") and not fixed:
        elem = arr.typ.element
        assert elem is not None
        if isinstance(arr, Literal):
            if arr.value is None:
                return Literal(None, JSONB)
            return jsonb_build(binder, name, [Literal(v, elem) for v in arr.value])
        if isinstance(arr, CallVariadic) and arr.func == "array_create":
            return jsonb_build(binder, name, list(arr.exprs))
        raise unsupported(f"{name}(VARIADIC ...) of an array not known when planning")
    raise unsupported(f"VARIADIC arguments of {name}")
