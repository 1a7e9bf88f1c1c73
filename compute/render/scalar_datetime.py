"""Spark SQL for the datetime typmods: a cast to timestamp(p) / time(p) / interval
[qualifier] [(p)] rounds like Postgres' Adjust*ForTypmod (sql.interval, sql.literal)."""

from __future__ import annotations

from collections.abc import Callable

from sql.interval_typmod import (
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


_BC = "[0A000] dates before year 1 (BC) are not supported"


def make_date(y: str, m: str, d: str, raise_error: Callable[[str, str], str]) -> str:
    """make_date(y, m, d): 22008 for a day that does not exist (Spark would fail with its own
    message), 0A000 for a BC year (negative; there is no year 0)."""
    bad = raise_error("[22008] date field value out of range", "date")
    return (f"(CASE WHEN {y} IS NULL OR {m} IS NULL OR {d} IS NULL THEN NULL"
            f" WHEN {y} < 0 THEN {raise_error(_BC, 'date')}"
            f" WHEN {y} = 0 OR {m} < 1 OR {m} > 12 OR {d} < 1 OR {d} > day(last_day(make_date({y}, {m}, 1))) THEN {bad}"
            f" ELSE make_date({y}, {m}, {d}) END)")


def year_start(start: str, t: str, raise_error: Callable[[str, str], str]) -> str:
    """The first instant of year `start` (date_trunc to a decade, century, millennium);
    0A000 when that is before year 1 (Postgres' decade of year 1-9 starts in 1 BC)."""
    return f"(CASE WHEN {start} < 1 THEN {raise_error(_BC, t)} ELSE make_timestamp_ntz({start}, 1, 1, 0, 0, 0) END)"


def make_timestamp(xs: tuple[str, ...] | list[str], raise_error: Callable[[str, str], str]) -> str:
    """make_timestamp(y, mo, d, h, mi, s): the date part checked like make_date, the time of
    day like Postgres (0 <= s <= 60, 24:00:00 is the next midnight), else 22008 (Spark would
    fail with its own message)."""
    y, mo, d, h, mi, sec = xs[:6]
    bad = raise_error("[22008] time field value out of range", "timestamp_ntz")
    ts = f"make_timestamp_ntz({y}, {mo}, {d}, {h}, {mi}, CAST({sec} AS DECIMAL(16,6)))"
    midnight = f"timestampadd(DAY, 1, make_timestamp_ntz({y}, {mo}, {d}, 0, 0, 0))"
    return (f"(CASE WHEN {make_date(y, mo, d, raise_error)} IS NULL OR {h} IS NULL OR {mi} IS NULL OR {sec} IS NULL THEN NULL"
            f" WHEN {h} < 0 OR {h} > 24 OR {mi} < 0 OR {mi} > 59 OR {sec} < 0 OR {sec} > 60"
            f" OR ({h} = 24 AND ({mi} > 0 OR {sec} > 0)) THEN {bad}"
            f" WHEN {h} = 24 THEN {midnight} ELSE {ts} END)")


def at_time_zone(zone: str, x: str, to_local: bool) -> str:
    """timezone(zone, x) for a literal zone id (sql.timezones). timestamptz -> timestamp: the
    wall clock in `zone` at instant x. timestamp -> timestamptz: the instant whose wall clock
    in `zone` is x; in a spring-forward gap with the offset before the transition, in a
    fall-back overlap with the one after it (Postgres' DetermineTimeZoneOffset) — the offset
    a day later if it gives back x, else the offset a day earlier."""
    if to_local:
        return f"CAST(from_utc_timestamp({x}, {zone}) AS TIMESTAMP_NTZ)"
    lu = f"CAST({x} AS TIMESTAMP)"

    def off(instant: str) -> str:
        return f"(unix_micros(from_utc_timestamp({instant}, {zone})) - unix_micros({instant}))"

    def at(offset: str) -> str:
        return f"timestamp_micros(unix_micros({lu}) - {offset})"

    later, earlier = off(f"({lu} + INTERVAL 1 DAY)"), off(f"({lu} - INTERVAL 1 DAY)")
    return f"(CASE WHEN {off(at(later))} = {later} THEN {at(later)} ELSE {at(earlier)} END)"
