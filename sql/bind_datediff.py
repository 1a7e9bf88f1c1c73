"""Materialize's `datediff(datepart, start, end)`: the number of `datepart` boundaries crossed
from start to end (bigint), for date, time, timestamp and timestamptz; bound as the identity
over Postgres functions (A, B = start, end cast to their common type; dates as timestamps):

    millennium | century | decade | year  = extract(part FROM B) - extract(part FROM A)
    quarter = 4 * (year(B) - year(A)) + quarter(B) - quarter(A)       (month alike, 12)
    week | day | hour | minute | second    = trunc((epoch(B) - epoch(A)) / seconds per part)
    milliseconds | microseconds            = (epoch(B) - epoch(A)) * 10^3 | 10^6

(times are taken on one day: their year-based parts never differ). The datepart must be a
literal (0A000 otherwise); an unknown one is 22023 `invalid datepart`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql.errors import FEATURE_NOT_SUPPORTED, INVALID_PARAMETER_VALUE, UNDEFINED_FUNCTION, SqlError

if TYPE_CHECKING:
    from sql.bind import Binder
    from sql.hir import HirScalar
    from sql.scope import Scope

_PARTS = {
    "millennium": ("millenniums", "millennium", "millennia", "mil"),
    "century": ("centuries", "century", "cent", "c"),
    "decade": ("decades", "decade", "decs", "dec"),
    "year": ("years", "year", "yrs", "yr", "y"),
    "quarter": ("quarter", "qtr"),
    "month": ("months", "month", "mons", "mon"),
    "week": ("weeks", "week", "w"),
    "day": ("days", "day", "d"),
    "hour": ("hours", "hour", "hrs", "hr", "h"),
    "minute": ("minutes", "minute", "mins", "min", "m"),
    "second": ("seconds", "second", "secs", "sec", "s"),
    "milliseconds": ("milliseconds", "millisecond", "mseconds", "msecs", "msec", "ms"),
    "microseconds": ("microseconds", "microsecond", "useconds", "usecs", "usec", "us"),
}
_PART_OF = {alias: part for part, aliases in _PARTS.items() for alias in aliases}
_SECONDS = {"week": 604800, "day": 86400, "hour": 3600, "minute": 60, "second": 1}
_TEMPORAL = ("date", "time", "timestamp", "timestamptz")


def bind_datediff(binder: Binder, raw_args: list[exp.Expression], scope: Scope) -> HirScalar:
    if len(raw_args) != 3:
        raise SqlError(UNDEFINED_FUNCTION, f"function datediff() with {len(raw_args)} arguments does not exist")
    unit_ast, a_ast, b_ast = raw_args
    if not (isinstance(unit_ast, exp.Literal) and unit_ast.is_string):
        raise SqlError(FEATURE_NOT_SUPPORTED, "datediff with a datepart that is not a literal is not supported")
    unit = unit_ast.this.strip().lower()
    part = _PART_OF.get(unit)
    if part is None:
        raise SqlError(INVALID_PARAMETER_VALUE, f"invalid datepart {unit_ast.this}")
    common = _common_type(binder.scalar(a_ast, scope).typ.name, binder.scalar(b_ast, scope).typ.name)
    as_type = "timestamp" if common == "date" else common
    a = exp.Cast(this=a_ast.copy(), to=exp.DataType.build(as_type, dialect="postgres"))
    b = exp.Cast(this=b_ast.copy(), to=exp.DataType.build(as_type, dialect="postgres"))
    expr = _difference(part, a, b, common == "time")
    return binder.scalar(exp.Cast(this=expr, to=exp.DataType.build("bigint")), scope)


def _common_type(x: str, y: str) -> str:
    known = {t for t in (x, y) if t != "unknown"}
    if not known:
        return "timestamptz"  # the preferred type of the datetime category
    if not known <= set(_TEMPORAL) or ("time" in known and len(known) > 1):
        raise SqlError(UNDEFINED_FUNCTION, f"function datediff(unknown, {x}, {y}) does not exist",
                       hint="No function matches the given name and argument types.")
    for t in ("timestamptz", "timestamp", "date", "time"):
        if t in known:
            return t
    raise AssertionError(known)


def _extract(part: str, x: exp.Expression) -> exp.Expression:
    return exp.Extract(this=exp.Var(this=part.upper()), expression=x.copy())


def _difference(part: str, a: exp.Expression, b: exp.Expression, is_time: bool) -> exp.Expression:
    epochs = exp.Paren(this=exp.Sub(this=_extract("epoch", b), expression=_extract("epoch", a)))
    if part in ("millennium", "century", "decade", "year", "quarter", "month"):
        if is_time:  # one day: no year-based boundary is crossed (NULL stays NULL)
            return exp.Mul(this=epochs, expression=exp.Literal.number(0))
        years = exp.Paren(this=exp.Sub(this=_extract("year" if part in ("quarter", "month") else part, b),
                                        expression=_extract("year" if part in ("quarter", "month") else part, a)))
        if part not in ("quarter", "month"):
            return years
        within = exp.Paren(this=exp.Sub(this=_extract(part, b), expression=_extract(part, a)))
        per_year = exp.Literal.number(4 if part == "quarter" else 12)
        return exp.Add(this=exp.Mul(this=years, expression=per_year), expression=within)
    if part in _SECONDS:
        return exp.Anonymous(this="trunc", expressions=[exp.Div(this=epochs, expression=exp.Literal.number(_SECONDS[part]))])
    scale = 1000 if part == "milliseconds" else 1000000
    return exp.Anonymous(this="trunc", expressions=[exp.Mul(this=epochs, expression=exp.Literal.number(scale))])
