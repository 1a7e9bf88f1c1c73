"""Postgres' format_type(oid, typmod) in Python (the rules of format_type_extended): used to
precompute the type names catalog queries ask for, and for constant arguments."""

from __future__ import annotations

from collections.abc import Mapping

# array oid -> element oid, for true arrays (not int2vector / oidvector)
ArrayElems = Mapping[int, int]


def _with_typmod(oid: int, typmod: int | None, base: str) -> str:
    m = -1 if typmod is None else typmod
    if oid == 1042:  # bpchar
        if m >= 4:
            return f"character({m - 4})"
        return "character" if typmod is None else "bpchar"
    if oid == 1043:
        return f"character varying({m - 4})" if m >= 4 else "character varying"
    if oid == 1700:
        if m >= 4:
            v = m - 4
            return f"numeric({(v >> 16) & 0xFFFF},{v & 0xFFFF})"
        return "numeric"
    if oid in (1083, 1114, 1184):
        prec = f"({m})" if m >= 0 else ""
        name = "time" if oid == 1083 else "timestamp"
        zone = " with time zone" if oid == 1184 else " without time zone"
        return f"{name}{prec}{zone}"
    return base


def format_type(oid: int | None, typmod: int | None, names: Mapping[int, str], elems: ArrayElems) -> str | None:
    """format_type(oid, typmod); `names` maps type oids to their unmodified names."""
    if oid is None:
        return None
    if oid == 0:
        return "-"
    elem = elems.get(oid)
    if elem:
        inner = format_type(elem, typmod, names, elems)
        return None if inner is None else inner + "[]"
    base = names.get(oid)
    if base is None:
        return "???"
    return _with_typmod(oid, typmod, base)
