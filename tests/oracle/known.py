"""Classes of differences the oracle knows about, each with its reason (KNOWN.md).

A finding matching one is counted separately, never as a discrepancy. The goal is to fix,
not to list: each entry names the branch that fixes it and goes once that fix is merged."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tests.oracle.compare import NUMERIC_OID, Outcome, compare_rows

INTERVAL_OID = 1186


@dataclass(frozen=True)
class Known:
    name: str
    reason: str
    matches: Callable[[Any], bool]


# an identifier the generator spelled with upper case (A1, T0, Iv0), outside string literals
_UPPER_IDENT = re.compile(r"\b[A-Z][A-Za-z]*\d+\b")


def _upper_identifier(f: Any) -> bool:
    return (f.kind == "mz-error" and f.mz.sqlstate in ("42P01", "42703")
            and _UPPER_IDENT.search(re.sub(r"'[^']*'", "''", f.sql)) is not None)


def _using_scope(f: Any) -> bool:
    return (f.kind == "mz-error" and f.mz.sqlstate == "42702" and " USING (" in f.sql
            and re.search(r"AS a\d+, ", f.sql) is not None)


def _without_intervals(o: Outcome) -> Outcome:
    keep = [j for j, oid in enumerate(o.oids) if oid != INTERVAL_OID]
    return replace(o, rows=tuple(tuple(r[j] for j in keep) for r in o.rows), oids=tuple(o.oids[j] for j in keep))


def _interval_text(f: Any) -> bool:
    if f.kind not in ("rows", "numeric-text") or not f.pg.ok or INTERVAL_OID not in f.pg.oids:
        return False
    return compare_rows(_without_intervals(f.pg), _without_intervals(f.mz)) in ("", "numeric-text")


def _numeric_division(f: Any) -> bool:
    """Rows equal once numerics are compared to 5 significant digits (mzspark's numeric
    division keeps 6 decimal places where PostgreSQL keeps at least 16 significant digits)."""
    if f.kind != "rows" or not (f.pg.ok and f.mz.ok) or NUMERIC_OID not in f.pg.oids or "/" not in f.sql:
        return False

    def coarse(o: Outcome) -> Outcome:
        def cell(v: str | None, oid: int) -> str | None:
            return f"{float(v):.5g}" if v is not None and oid == NUMERIC_OID else v
        return replace(o, rows=tuple(tuple(cell(v, oid) for v, oid in zip(r, o.oids, strict=True)) for r in o.rows))

    return compare_rows(coarse(f.pg), coarse(f.mz)) in ("", "numeric-text")


KNOWN: list[Known] = [
    Known("identifier-case", "unquoted identifiers are not folded to lower case (branch binder)", _upper_identifier),
    Known("using-scope", "JOIN USING column in a comma/JOIN mix reported ambiguous (branch binder)", _using_scope),
    Known("interval-text", "interval text output drops the time of day-and-time intervals (branch datetime)", _interval_text),
    Known("numeric-division", "numeric division keeps 6 decimal places (branch functions)", _numeric_division),
    Known("numeric-text", "numeric results printed with another scale (branch functions)", lambda f: f.kind == "numeric-text"),
]


def known_reason(finding: Any) -> str:
    for k in KNOWN:
        if k.matches(finding):
            return k.name
    return ""
