"""Classes of differences the oracle knows about, each with its reason (KNOWN.md).

A finding matching one is counted separately, never as a discrepancy. The goal is to fix,
not to list: each entry names the branch that fixes it and goes once that fix is merged."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tests.oracle.compare import NUMERIC_OID, Outcome, compare_rows


@dataclass(frozen=True)
class Known:
    name: str
    reason: str
    matches: Callable[[Any], bool]


def _numeric_division(f: Any) -> bool:
    """Rows equal once numerics are rounded to 6 decimal places and compared to 5 significant
    digits (mzspark's numeric division keeps 6 decimal places where PostgreSQL keeps at least
    16 significant digits)."""
    if f.kind != "rows" or not (f.pg.ok and f.mz.ok) or NUMERIC_OID not in f.pg.oids or "/" not in f.sql:
        return False

    def coarse(o: Outcome) -> Outcome:
        def cell(v: str | None, oid: int) -> str | None:
            return f"{round(float(v), 6):.5g}" if v is not None and oid == NUMERIC_OID else v
        return replace(o, rows=tuple(tuple(cell(v, oid) for v, oid in zip(r, o.oids, strict=True)) for r in o.rows))

    return compare_rows(coarse(f.pg), coarse(f.mz)) in ("", "numeric-text")


_DECIMAL_TEXT = re.compile(r"-?\d+\.\d*0")


def _numeric_text_in_text(f: Any) -> bool:
    """Rows equal once PostgreSQL's text cells that spell a decimal with trailing fractional
    zeros lose them: a numeric cast to text (`CAST(avg(x) AS text)`), where mzspark, like
    Materialize, prints no display scale. Only that direction: mzspark printing more zeros
    than PostgreSQL stays a discrepancy."""
    if f.kind != "rows" or not (f.pg.ok and f.mz.ok) or "text" not in f.sql.lower():
        return False

    def trimmed(v: str | None) -> str | None:
        return v.rstrip("0").rstrip(".") if v is not None and _DECIMAL_TEXT.fullmatch(v) else v

    pg = replace(f.pg, rows=tuple(tuple(trimmed(v) for v in r) for r in f.pg.rows))
    return compare_rows(pg, f.mz) in ("", "numeric-text")


KNOWN: list[Known] = [
    Known("numeric-division", "numeric division keeps 6 decimal places (branch functions)", _numeric_division),
    Known("numeric-text", "numeric results printed with another scale (branch functions)", lambda f: f.kind == "numeric-text"),
    Known("numeric-text-in-text", "a numeric cast to text has no display scale, as in Materialize", _numeric_text_in_text),
]


def known_reason(finding: Any) -> str:
    for k in KNOWN:
        if k.matches(finding):
            return k.name
    return ""
