"""Spark SQL for the datetime typmods: a cast to timestamp(p) / time(p) / interval
[qualifier] [(p)] rounds like Postgres' Adjust*ForTypmod (sql.interval, sql.literal)."""

from __future__ import annotations

from sql.interval import (
    DAY,
    FULL_PRECISION,
    HOUR,
    MINUTE,
    MONTH,
    YEAR,
    typmod_precision,
    typmod_range,
)
from sql.types import SqlType

_HOUR_US, _MINUTE_US = 3_600_000_000, 60_000_000
_PG_EPOCH = {"timestamp": "TIMESTAMP_NTZ '2000-01-01 00:00:00'", "timestamptz": "TIMESTAMP_LTZ '2000-01-01 00:00:00'"}


def _round_half_away(us: str, p: int) -> str:
    """us rounded to p fractional-second digits, half away from zero (a bigint expression)."""
    s = 10 ** (6 - p)
    return (f"(CASE WHEN {us} >= 0 THEN div({us} + {s // 2}, {s}) * {s}"
            f" ELSE - (div(- {us} + {s // 2}, {s}) * {s}) END)")


def _trunc(us: str, unit: int) -> str:
    return f"(div({us}, {unit}) * {unit})"  # div truncates toward zero, like C


def _mask(*fields: int) -> int:
    return sum(1 << f for f in fields)


def fit_typmod(x: str, t: SqlType) -> str:
    """x (already of t's base type) adjusted to t's typmod; x itself without one."""
    if t.typmod < 0 or t.name not in ("timestamp", "timestamptz", "time", "interval"):
        return x
    if t.name == "interval":
        return _fit_interval(x, t.typmod)
    p = t.typmod
    if p >= 6:
        return x
    if t.name == "time":  # microseconds since midnight, never negative
        return _round_half_away(x, p)
    us = f"timestampdiff(MICROSECOND, {_PG_EPOCH[t.name]}, {x})"
    return f"timestampadd(MICROSECOND, {_round_half_away(us, p)} - {us}, {x})"


def _fit_interval(x: str, typmod: int) -> str:
    rng, prec = typmod_range(typmod), typmod_precision(typmod)
    months, days, us = f"{x}.months", f"{x}.days", f"{x}.micros"
    if rng == _mask(YEAR):
        months, days, us = f"(div({x}.months, 12) * 12)", "0", "CAST(0 AS BIGINT)"
    elif rng in (_mask(MONTH), _mask(YEAR, MONTH)):
        days, us = "0", "CAST(0 AS BIGINT)"
    elif rng == _mask(DAY):
        us = "CAST(0 AS BIGINT)"
    elif rng in (_mask(HOUR), _mask(DAY, HOUR)):
        us = _trunc(us, _HOUR_US)
    elif rng in (_mask(MINUTE), _mask(DAY, HOUR, MINUTE), _mask(HOUR, MINUTE)):
        us = _trunc(us, _MINUTE_US)
    if prec != FULL_PRECISION and prec < 6:
        us = _round_half_away(us, prec)
    return (f"(CASE WHEN {x} IS NOT NULL THEN CAST(named_struct('months', {months}, 'days', {days}, 'micros', {us})"
            " AS struct<months:int,days:int,micros:bigint>) END)")
