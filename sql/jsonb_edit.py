"""jsonb values built from others, as Postgres 15 has them (pure Python, no Spark).

`||`, `-`, `#-`, jsonb_set, jsonb_insert, jsonb_strip_nulls and jsonb_pretty over canonical
jsonb texts (see sql.jsonb); None is SQL NULL (every function here is strict). Errors are
`SqlError`s with Postgres' SQLSTATE and message.
"""

from __future__ import annotations

import re

from sql.errors import INVALID_TEXT_REPRESENTATION, SqlError
from sql.jsonb import Json, dumps, parse

INVALID_PARAMETER = "22023"


def _as_list(v: Json) -> list:
    """A value as the elements it contributes to an array concatenation (a scalar or an
    object is one element)."""
    return v if isinstance(v, list) else [v]


def concat(a: str | None, b: str | None) -> str | None:
    """a || b: two objects merge (b's keys win); anything else concatenates as arrays, where
    an object or a scalar is a one-element array."""
    if a is None or b is None:
        return None
    x, y = parse(a), parse(b)
    if isinstance(x, dict) and isinstance(y, dict):
        return dumps({**x, **y})
    return dumps(_as_list(x) + _as_list(y))


def _container(v: Json, what: str) -> Json:
    if not isinstance(v, (dict, list)):
        raise SqlError(INVALID_PARAMETER, f"cannot {what} scalar")
    return v


def delete_key(j: str | None, key: str | None) -> str | None:
    """j - key: an object without `key`; an array without its string elements equal to it."""
    if j is None or key is None:
        return None
    v = _container(parse(j), "delete from")
    if isinstance(v, dict):
        return dumps({k: x for k, x in v.items() if k != key})
    return dumps([x for x in v if x != key or not isinstance(x, str)])


def delete_keys(j: str | None, keys: list[str | None] | None) -> str | None:
    """j - text[]: every key of the array deleted (NULL elements are ignored)."""
    if j is None or keys is None:
        return None
    v = _container(parse(j), "delete from")
    drop = {k for k in keys if k is not None}
    if isinstance(v, dict):
        return dumps({k: x for k, x in v.items() if k not in drop})
    return dumps([x for x in v if not (isinstance(x, str) and x in drop)])


def delete_index(j: str | None, i: int | None) -> str | None:
    """j - integer: an array without its i-th element (negative from the end; out of range:
    unchanged)."""
    if j is None or i is None:
        return None
    v = _container(parse(j), "delete from")
    if isinstance(v, dict):
        raise SqlError(INVALID_PARAMETER, "cannot delete from object using integer index")
    n = len(v)
    if i < 0:
        i += n
    if not 0 <= i < n:
        return dumps(v)
    return dumps(v[:i] + v[i + 1:])


_INT = re.compile(r"\s*[+-]?[0-9]+")
_MISSING = object()

# the operations of Postgres' setPath
REPLACE, CREATE, DELETE, INSERT_BEFORE, INSERT_AFTER = "replace", "create", "delete", "before", "after"


def _path_index(p: str, level: int) -> int:
    if not _INT.fullmatch(p) or not -2**31 <= int(p) < 2**31:
        raise SqlError(INVALID_TEXT_REPRESENTATION, f'path element at position {level + 1} is not an integer: "{p}"')
    return int(p)


def _set_path(v: Json, path: list[str | None], level: int, new: Json, op: str) -> Json:
    """The value v with the path's element at `level` on set / created / deleted / inserted."""
    p = path[level]
    if p is None:
        raise SqlError("22004", f"path element at position {level + 1} is null")
    last = level == len(path) - 1
    if isinstance(v, dict):
        if p in v:
            if not last:
                return {**v, p: _set_path(v[p], path, level + 1, new, op)}
            if op in (INSERT_BEFORE, INSERT_AFTER):
                raise SqlError(INVALID_PARAMETER, "cannot replace existing key",
                               hint="Try using the function jsonb_set to replace key value.")
            if op == DELETE:
                return {k: x for k, x in v.items() if k != p}
            return {**v, p: new}
        if last and op in (CREATE, INSERT_BEFORE, INSERT_AFTER):
            return {**v, p: new}
        return v
    if isinstance(v, list):
        return _set_array(v, path, level, new, op, _path_index(p, level), last)
    return v  # a scalar inside the path: unchanged


def _set_array(v: list, path: list[str | None], level: int, new: Json, op: str, i: int, last: bool) -> list:
    n = len(v)
    creating = op in (CREATE, INSERT_BEFORE, INSERT_AFTER)
    if i < 0:
        i = i + n if -i <= n else None  # type: ignore[assignment]
    elif i > n:
        i = n
    if (i is None or n == 0) and last and creating:
        return [new] + v  # before the start (or into an empty array)
    if i is not None and i < n:
        if not last:
            return v[:i] + [_set_path(v[i], path, level + 1, new, op)] + v[i + 1:]
        if op == DELETE:
            return v[:i] + v[i + 1:]
        if op == INSERT_BEFORE:
            return v[:i] + [new, v[i]] + v[i + 1:]
        if op == INSERT_AFTER:
            return v[:i + 1] + [new] + v[i + 1:]
        return v[:i] + [new] + v[i + 1:]
    if creating and last:
        return v + [new]
    return v


def _scalar_root(j: str, what: str) -> Json:
    v = parse(j)
    if not isinstance(v, (dict, list)):
        raise SqlError(INVALID_PARAMETER, f"cannot {what} scalar")
    return v


def set_path(j: str | None, path: list[str | None] | None, new: str | None, create: bool | None = True) -> str | None:
    """jsonb_set(j, path, new [, create_missing]): the value at path replaced by `new`; a
    missing last key / an index past either end is added when create_missing."""
    if j is None or path is None or new is None or create is None:
        return None
    v = _scalar_root(j, "set path in")
    if not path or (not v and not create):
        return dumps(v)
    return dumps(_set_path(v, path, 0, parse(new), CREATE if create else REPLACE))


def insert(j: str | None, path: list[str | None] | None, new: str | None, after: bool | None = False) -> str | None:
    """jsonb_insert(j, path, new [, insert_after]): `new` inserted before (after) the array
    element at path, or as a new object key (an existing key is an error)."""
    if j is None or path is None or new is None or after is None:
        return None
    v = _scalar_root(j, "set path in")
    if not path:
        return dumps(v)
    return dumps(_set_path(v, path, 0, parse(new), INSERT_AFTER if after else INSERT_BEFORE))


def delete_path(j: str | None, path: list[str | None] | None) -> str | None:
    """j #- path: the element at path removed."""
    if j is None or path is None:
        return None
    v = _scalar_root(j, "delete path in")
    if not v or not path:
        return dumps(v)
    return dumps(_set_path(v, path, 0, None, DELETE))


def _strip(v: Json) -> Json:
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def strip_nulls(j: str | None) -> str | None:
    """jsonb_strip_nulls(j): object fields whose value is null removed, at every depth."""
    return None if j is None else dumps(_strip(parse(j)))


def _pretty(v: Json, level: int) -> str:
    if isinstance(v, dict):
        items = [f"{dumps(k)}: {_pretty(v[k], level + 1)}" for k in sorted(v, key=lambda k: (len(k.encode()), k.encode()))]
        opening, closing = "{", "}"
    elif isinstance(v, list):
        items = [_pretty(x, level + 1) for x in v]
        opening, closing = "[", "]"
    else:
        return dumps(v)
    pad = "\n" + "    " * (level + 1)
    return opening + ",".join(pad + x for x in items) + "\n" + "    " * level + closing


def pretty(j: str | None) -> str | None:
    """jsonb_pretty(j): one element per line, indented by four spaces a level."""
    return None if j is None else _pretty(parse(j), 0)


def _object_key(k: str | None) -> str:
    if k is None:
        raise SqlError("22004", "null value not allowed for object key")
    return k


def object_from_array(a: list[str | None] | None) -> str | None:
    """jsonb_object(text[]): alternating keys and values (string values; NULL is null)."""
    if a is None:
        return None
    if len(a) % 2:
        raise SqlError("2202E", "array must have even number of elements")
    return dumps({_object_key(a[i]): a[i + 1] for i in range(0, len(a), 2)})


def object_from_arrays(keys: list[str | None] | None, values: list[str | None] | None) -> str | None:
    """jsonb_object(keys text[], values text[]): keys paired with values by position."""
    if keys is None or values is None:
        return None
    if len(keys) != len(values):
        raise SqlError("2202E", "mismatched array dimensions")
    return dumps({_object_key(k): v for k, v in zip(keys, values, strict=True)})
