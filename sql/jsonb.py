"""jsonb values as Postgres 15 has them (pure Python, no Spark).

A jsonb value travels as its canonical Postgres text: object keys sorted by (UTF-8 length,
bytes) with the last of duplicate keys kept, `{"a": 1, "b": [1, 2]}` spacing, numbers in
numeric's output form (`1e2` -> `100`, `1.50` stays `1.50`, `-0` -> `0`). These functions
take and return such texts (None is SQL NULL). The planner folds literals with them; the
renderer calls them from Arrow Python UDFs (compute/render/jsonb.py).

Errors are `SqlError`s with Postgres' SQLSTATE and message.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from sql.errors import INVALID_TEXT_REPRESENTATION, SqlError

Json = Any  # dict | list | str | Decimal | bool | None


def _no_constant(name: str) -> Json:
    raise ValueError(name)


def _pairs(pairs: list[tuple[str, Json]]) -> dict[str, Json]:
    """Duplicate keys: the last one wins (as jsonb input keeps it)."""
    return dict(pairs)


def parse(s: str) -> Json:
    """Postgres' json input: strict JSON (no NaN/Infinity), numbers as Decimal."""
    try:
        v = json.loads(s, parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        raise SqlError(INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json") from None
    if "\\u0000" in s and _has_nul(v):
        raise SqlError("22P05", "unsupported Unicode escape sequence", detail="\\u0000 cannot be converted to text.")
    return v


def _has_nul(v: Json) -> bool:
    if isinstance(v, str):
        return "\x00" in v
    if isinstance(v, dict):
        return any("\x00" in k or _has_nul(x) for k, x in v.items())
    if isinstance(v, list):
        return any(_has_nul(x) for x in v)
    return False


def _key_order(k: str) -> tuple[int, bytes]:
    b = k.encode()
    return len(b), b


def number_text(d: Decimal) -> str:
    """numeric's output: plain notation, the scale the input had (never negative)."""
    if d.is_zero():
        d = abs(d)
    return format(d, "f")


def dumps(v: Json) -> str:
    """The canonical jsonb text of a value."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Decimal):
        return number_text(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(dumps(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {dumps(v[k])}" for k in sorted(v, key=_key_order)) + "}"
    raise TypeError(f"not a json value: {v!r}")


def canonical(s: str | None) -> str | None:
    """text -> jsonb (the input cast)."""
    return None if s is None else dumps(parse(s))


def _text(v: Json) -> str | None:
    """->> / #>>: strings unquoted, JSON null is SQL NULL, containers as jsonb text."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return dumps(v)


def as_text(j: str | None) -> str | None:
    """The ->> form of a whole jsonb value (strings unquoted, null is SQL NULL)."""
    return None if j is None else _text(parse(j))


def _index(v: list, i: int) -> Json:
    if i < 0:
        i += len(v)
    return v[i] if 0 <= i < len(v) else _MISSING


_MISSING = object()


def _field(v: Json, key: str) -> Json:
    return v.get(key, _MISSING) if isinstance(v, dict) else _MISSING


def get(j: str | None, key: str | int | None, as_text: bool = False) -> str | None:
    """j -> key (text: an object's field; integer: an array's element, negative from the end)."""
    if j is None or key is None:
        return None
    v = parse(j)
    if isinstance(key, int) and not isinstance(v, (dict, list)):
        v = [v]  # a top-level scalar is a one-element array to integer subscripts
    r = _index(v, key) if isinstance(key, int) and isinstance(v, list) else (
        _field(v, key) if isinstance(key, str) else _MISSING)
    if r is _MISSING:
        return None
    return _text(r) if as_text else dumps(r)


def get_path(j: str | None, path: list[str | None] | None, as_text: bool = False) -> str | None:
    """j #> path: fields of objects, integer-looking elements index arrays; NULL when absent."""
    if j is None or path is None:
        return None
    v = parse(j)
    for p in path:
        if p is None:
            return None
        if isinstance(v, dict):
            v = v.get(p, _MISSING)
        elif isinstance(v, list):
            try:
                i = int(p.strip())
            except ValueError:
                return None
            v = _index(v, i)
        else:
            return None
        if v is _MISSING:
            return None
    return _text(v) if as_text else dumps(v)


def _scalar_eq(a: Json, b: Json) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def value_eq(a: Json, b: Json) -> bool:
    """jsonb equality: structural, numbers by value (1.0 = 1)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(value_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(value_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return _scalar_eq(a, b)


def _key_number(d: Decimal) -> str:
    return "0" if d == 0 else format(d.normalize(), "f")


def _equality_dumps(v: Json) -> str:
    if isinstance(v, Decimal):
        return _key_number(v)
    if isinstance(v, list):
        return "[" + ", ".join(_equality_dumps(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_equality_dumps(v[k])}"
                               for k in sorted(v, key=_key_order)) + "}"
    return dumps(v)


def equality_key(s: str | None) -> str | None:
    """A text equal for exactly the jsonb values `=` finds equal (numbers by value: 1.0, 1.00
    and 1 have one key), for DISTINCT over jsonb."""
    if s is None:
        return None
    return _equality_dumps(parse(s))


def equal(a: str | None, b: str | None) -> bool | None:
    if a is None or b is None:
        return None
    return a == b or value_eq(parse(a), parse(b))


def _contains(a: Json, b: Json) -> bool:
    """Postgres' JsonbDeepContains on values of the same kind."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        for k, bv in b.items():
            if k not in a:
                return False
            av = a[k]
            if isinstance(bv, (dict, list)):
                if type(av) is not type(bv) or not _contains(av, bv):
                    return False
            elif not _scalar_eq(av, bv):
                return False
        return True
    if isinstance(a, list):
        if not isinstance(b, list):
            return False
        for bv in b:
            if isinstance(bv, (dict, list)):
                if not any(type(av) is type(bv) and _contains(av, bv) for av in a):
                    return False
            elif not any(not isinstance(av, (dict, list)) and _scalar_eq(av, bv) for av in a):
                return False
        return True
    return _scalar_eq(a, b)


def contains(a: str | None, b: str | None) -> bool | None:
    """a @> b. A top-level scalar is a one-element array that only contains scalars: an array
    contains a scalar element, a scalar never contains an array."""
    if a is None or b is None:
        return None
    av, bv = parse(a), parse(b)
    a_scalar = not isinstance(av, (dict, list))
    b_scalar = not isinstance(bv, (dict, list))
    if a_scalar and isinstance(bv, list):
        return False
    if a_scalar:
        av = [av]
    if b_scalar:
        bv = [bv]
    return _contains(av, bv)


def _has_key(v: Json, key: str) -> bool:
    if isinstance(v, dict):
        return key in v
    if isinstance(v, list):
        return any(isinstance(x, str) and x == key for x in v)
    return isinstance(v, str) and v == key


def exists(j: str | None, key: str | None) -> bool | None:
    """j ? key: an object's key, or a string element of a top-level array (or the scalar)."""
    if j is None or key is None:
        return None
    return _has_key(parse(j), key)


def exists_any(j: str | None, keys: list[str | None] | None) -> bool | None:
    if j is None or keys is None:
        return None
    v = parse(j)
    return any(k is not None and _has_key(v, k) for k in keys)


def exists_all(j: str | None, keys: list[str | None] | None) -> bool | None:
    if j is None or keys is None:
        return None
    v = parse(j)
    return all(k is None or _has_key(v, k) for k in keys)


def typeof(j: str | None) -> str | None:
    if j is None:
        return None
    v = parse(j)
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    return "number"


def array_length(j: str | None) -> int | None:
    if j is None:
        return None
    v = parse(j)
    if isinstance(v, list):
        return len(v)
    if isinstance(v, dict):
        raise SqlError("22023", "cannot get array length of a non-array")
    raise SqlError("22023", "cannot get array length of a scalar")


def quote(s: str | None) -> str | None:
    """to_jsonb(text): a JSON string."""
    return None if s is None else json.dumps(s, ensure_ascii=False)


def from_float(x: float | None) -> str | None:
    """to_jsonb(float8): float8's shortest text read as numeric; NaN and infinities are strings."""
    if x is None:
        return None
    if x != x:
        return '"NaN"'
    if x in (float("inf"), float("-inf")):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    r = repr(x)  # the shortest round-trip digits, as Postgres' float8out
    return number_text(Decimal(r[:-2] if r.endswith(".0") else r))


def literal_to_jsonb(v: Any, t: Any) -> str | None:
    """to_jsonb of a literal of SqlType `t` (None: SQL NULL), at plan time."""
    from sql.errors import unsupported

    n = t.name
    if v is None:
        return None
    if n == "jsonb":
        return v
    if n == "bool":
        return "true" if v else "false"
    if n in ("int2", "int4", "int8"):
        return str(int(v))
    if n == "numeric":
        if not v.is_finite():
            return '"NaN"'
        return number_text(v)
    if n == "float8":
        return from_float(float(v))
    if t.is_string:
        return quote(str(v))
    raise unsupported(f"to_jsonb of type {t.pg_format()}")


def build_object(keys: list[str | None] | None, vals: list[str | None] | None) -> str:
    """jsonb_build_object(k1, v1, ...): values are jsonb texts (SQL NULL is JSON null)."""
    out: dict[str, Json] = {}
    for i, (k, v) in enumerate(zip(keys or [], vals or [], strict=True)):
        if k is None:
            raise SqlError("22023", f"argument {2 * i + 1}: key must not be null")
        out[k] = None if v is None else parse(v)
    return dumps(out)


def object_agg(keys: list[str | None] | None, vals: list[str | None] | None) -> str | None:
    """jsonb_object_agg over (key, value) pairs in order (the last of equal keys wins)."""
    if not keys:
        return None
    out: dict[str, Json] = {}
    for k, v in zip(keys, vals or [], strict=True):
        if k is None:
            raise SqlError("22023", "field name must not be null")
        out[k] = None if v is None else parse(v)
    return dumps(out)


def elements(j: str | None) -> list[str]:
    """jsonb_array_elements: each element's jsonb text."""
    if j is None:
        return []
    v = parse(j)
    if isinstance(v, list):
        return [dumps(x) for x in v]
    if isinstance(v, dict):
        raise SqlError("22023", "cannot extract elements from an object")
    raise SqlError("22023", "cannot extract elements from a scalar")


def each(j: str | None) -> list[tuple[str, str]]:
    """jsonb_each: (key, value jsonb text) in key order."""
    if j is None:
        return []
    v = parse(j)
    if not isinstance(v, dict):
        raise SqlError("22023", "cannot call jsonb_each on a non-object")
    return [(k, dumps(v[k])) for k in sorted(v, key=_key_order)]


def object_keys(j: str | None) -> list[str]:
    if j is None:
        return []
    v = parse(j)
    if isinstance(v, dict):
        return sorted(v, key=_key_order)
    if isinstance(v, list):
        raise SqlError("22023", "cannot call jsonb_object_keys on an array")
    raise SqlError("22023", "cannot call jsonb_object_keys on a scalar")
