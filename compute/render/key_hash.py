"""Spark's `xxhash64` of literal key values, computed in Python (no Spark call).

A fast-path lookup restricts an arrangement to the hashes of its literal keys; the literals
must hash exactly as Spark hashed the stored keys (`arrangement.key_hash`:
`xxhash64(42, k1, .., kn)`). Spark's XxHash64 chains the seed through its arguments: for each
non-NULL value v, seed := XXH64(bytes(v), seed) where bytes are the little-endian int32 of a
boolean (0/1) / int2 / int4 / date (days), the little-endian int64 of an int8, the UTF-8 of a
string; a NULL leaves the seed unchanged. Types whose bytes are less obvious (floats,
numeric, timestamps, ...) are hashed by Spark itself (`python_key_hash` returns None).
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Sequence
from typing import Any

from sql.types import SqlType

_M = (1 << 64) - 1
P1 = 0x9E3779B185EBCA87
P2 = 0xC2B2AE3D27D4EB4F
P3 = 0x165667B19E3779F9
P4 = 0x85EBCA77C2B2AE63
P5 = 0x27D4EB2F165667C5
SEED = 42


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * P2) & _M
    return (_rotl(acc, 31) * P1) & _M


def _merge(acc: int, val: int) -> int:
    acc ^= _round(0, val)
    return (acc * P1 + P4) & _M


def xxh64(data: bytes, seed: int) -> int:
    """The reference XXH64 of `data` (unsigned 64-bit result)."""
    seed &= _M
    n = len(data)
    i = 0
    if n >= 32:
        v1, v2, v3, v4 = (seed + P1 + P2) & _M, (seed + P2) & _M, seed, (seed - P1) & _M
        while i + 32 <= n:
            a, b, c, d = struct.unpack_from("<4Q", data, i)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            i += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        (k,) = struct.unpack_from("<Q", data, i)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * P1 + P4) & _M
        i += 8
    if i + 4 <= n:
        (k,) = struct.unpack_from("<I", data, i)
        h ^= (k * P1) & _M
        h = (_rotl(h, 23) * P2 + P3) & _M
        i += 4
    while i < n:
        h ^= (data[i] * P5) & _M
        h = (_rotl(h, 11) * P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * P2) & _M
    h ^= h >> 29
    h = (h * P3) & _M
    h ^= h >> 32
    return h


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


_EPOCH = datetime.date(1970, 1, 1)


def _bytes(v: Any, t: SqlType) -> bytes | None:
    match t.name:
        case "bool":
            return struct.pack("<i", 1 if v else 0)
        case "int2" | "int4":
            return struct.pack("<i", int(v))
        case "int8":
            return struct.pack("<q", int(v))
        case "text" | "varchar":
            return str(v).encode("utf-8")
        case "date" if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
            return struct.pack("<i", (v - _EPOCH).days)
    return None


def python_key_hash(values: Sequence[Any], types: Sequence[SqlType]) -> int | None:
    """Spark's `xxhash64(42, v1, .., vn)` of key values of these types (a signed 64-bit int),
    or None when a type's bytes are not known here (ask Spark)."""
    h = _signed(xxh64(struct.pack("<i", SEED), SEED))
    for v, t in zip(values, types, strict=True):
        if v is None:
            continue
        b = _bytes(v, t)
        if b is None:
            return None
        h = _signed(xxh64(b, h))
    return h
