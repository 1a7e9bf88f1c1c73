"""Typmods of the datetime types from their SQL spellings (pure).

`timestamp(p)`, `timestamptz(p)`, `time(p)`: the typmod is p; `interval [qualifier] [(p)]`:
Postgres' INTERVAL_TYPMOD(precision, range) (sql.interval). A precision above 6 is reduced
to 6 (Postgres warns), a negative one is an error.
"""

from __future__ import annotations

from sqlglot import exp

from sql.errors import INVALID_PARAMETER_VALUE, SqlError
from sql.interval_typmod import interval_typmod

_LABEL = {"timestamp": "TIMESTAMP", "timestamptz": "TIMESTAMP", "time": "TIME", "interval": "INTERVAL"}


def precision_typmod(name: str, p: int) -> int:
    """The typmod of `name(p)`."""
    if p < 0:
        raise SqlError(INVALID_PARAMETER_VALUE, f"{_LABEL[name]}({p}) precision must not be negative")
    p = min(p, 6)
    return interval_typmod(None, None, p) if name == "interval" else p


def _field(e: exp.Expression) -> tuple[str, int | None]:
    """A qualifier field and its seconds precision: Var(DAY) / Second(3)."""
    if isinstance(e, exp.Second):
        p = e.this
        return "SECOND", int(p.this) if isinstance(p, exp.Literal) else None
    if isinstance(e, exp.Anonymous) and str(e.this).upper() == "SECOND" and len(e.expressions) == 1:
        p = e.expressions[0]  # SECOND(p) as our dialect reads it (second is not a function here)
        if isinstance(p, exp.Literal) and not p.is_string:
            return "SECOND", int(p.this)
    if isinstance(e, exp.Var):
        return e.name.upper(), None
    raise SqlError("42601", f"syntax error at or near \"{e.sql(dialect='postgres')}\"")


def qualifier_typmod(unit: exp.Expression | None) -> int:
    """The typmod an interval qualifier (`DAY TO SECOND(3)`, `MONTH`, None) stands for."""
    if unit is None:
        return -1
    if isinstance(unit, exp.IntervalSpan):
        first, _ = _field(unit.this)
        last, p = _field(unit.expression)
    else:
        first, p = _field(unit)
        last = None
    if p is not None and p < 0:
        raise SqlError(INVALID_PARAMETER_VALUE, f"INTERVAL({p}) precision must not be negative")
    if first not in ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"):
        raise SqlError("42601", f'syntax error at or near "{first}"')
    return interval_typmod(first, last, None if p is None else min(p, 6))
