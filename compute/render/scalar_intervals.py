"""Spark SQL of intervals (months/days/micros structs): arithmetic, extract, date_trunc, age, justify."""

from __future__ import annotations

from compute.render.scalar_datetime import (
    year_start,
)
from compute.render.spark_sql import (
    COMPARISONS,
    cast,
    let_bind,
    raise_error,
)
from sql.errors import unsupported
from sql.types import SqlType

# ---- date / time / interval ------------------------------------------------------------------
# An interval is a struct (months int, days int, micros bigint), like Postgres' three fields.
DAY_US = 86_400_000_000


def interval_struct(months: str, days: str, micros: str) -> str:
    # the cast makes every field nullable (a literal field is not, and Arrow then refuses a
    # NULL interval whose struct carries a non-nullable field)
    return (f"CAST(named_struct('months', {months}, 'days', {days}, 'micros', {micros})"
            " AS struct<months:int,days:int,micros:bigint>)")


def interval_key(x: str) -> str:
    """Postgres compares intervals as one total: (months * 30 + days) * 1 day + micros."""
    return f"((CAST({x}.months AS DECIMAL(38,0)) * 30 + {x}.days) * {DAY_US} + {x}.micros)"


def interval_extreme(f: str, xs: list[str]) -> str:
    """greatest / least of intervals by Postgres' total order (interval_key), NULLs skipped,
    the first of equal values kept (ExecEvalMinMax): Spark's own compares the struct's fields
    in order, so least('40 days', '1 mon') was '40 days'."""
    keep = ">=" if f == "greatest" else "<="
    out = xs[0]
    for x in xs[1:]:
        out = f"(CASE WHEN {x} IS NULL OR ({out} IS NOT NULL AND {interval_key(out)} {keep} {interval_key(x)}) THEN {out} ELSE {x} END)"
    return out


def add_interval(ts: str, iv: str, sign: int) -> str:
    """timestamp + interval: months first (clamped to the month's end), then days, then time."""
    s = "" if sign > 0 else "- "
    return (f"timestampadd(MICROSECOND, {s}{iv}.micros, timestampadd(DAY, {s}{iv}.days,"
            f" timestampadd(MONTH, {s}{iv}.months, {ts})))")


def ts_diff(a: str, b: str) -> str:
    """timestamp - timestamp: days and microseconds (never months), like Postgres."""
    d = f"timestampdiff(MICROSECOND, {b}, {a})"
    return interval_struct("0", f"div({d}, {DAY_US})", f"({d} % {DAY_US})")


def interval_times(iv: str, f: str) -> str:
    """interval * float8 (Postgres' interval_mul: fractional months spill into days at 30
    days a month, fractional days into microseconds)."""
    m = f"(CAST({iv}.months AS DOUBLE) * {f})"
    mi = f"CAST({m} AS INT)"  # truncates toward zero
    mrd = f"round(({m} - {mi}) * 30, 6)"  # month remainder days
    d = f"(CAST({iv}.days AS DOUBLE) * {f})"
    di = f"CAST({d} AS INT)"
    sec = f"round(({d} - {di} + {mrd} - CAST({mrd} AS INT)) * 86400, 6)"
    whole = f"CAST({sec} / 86400 AS INT)"
    sec2 = f"({sec} - {whole} * 86400)"
    days = f"({di} + {whole} + CAST({mrd} AS INT))"
    micros = let_bind(f"rint(CAST({iv}.micros AS DOUBLE) * {f} + {sec2} * 1000000)", _fits_int64)
    return interval_struct(f"(CASE WHEN {_fits_int32(m)} THEN {mi} ELSE {_OUT_OF_RANGE_INT} END)",
                           f"(CASE WHEN {_fits_int32(d)} THEN {days} ELSE {_OUT_OF_RANGE_INT} END)", micros)


_OUT_OF_RANGE = "[22008] interval out of range"
_OUT_OF_RANGE_INT = raise_error(_OUT_OF_RANGE, "int")


def _fits_int32(v: str) -> str:
    """Postgres' interval_mul check of a product's months or days (NaN fails it)."""
    return f"({v} >= -2147483648.0D AND {v} <= 2147483647.0D)"


def _fits_int64(v: str) -> str:
    """CAST(v AS BIGINT) of a double, or 22008 where Postgres' FLOAT8_FITS_IN_INT64 fails (2^63
    itself included: Spark's cast would clamp it)."""
    return (f"(CASE WHEN {v} >= -9223372036854775808.0D AND {v} < 9223372036854775808.0D THEN CAST({v} AS BIGINT)"
            f" ELSE {raise_error(_OUT_OF_RANGE, 'bigint')} END)")


def interval_arith(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str | None:
    """+, -, *, / and comparisons involving intervals and timestamps; None: none of them.
    (Interval results are structs: NULL operands must give a NULL struct, not NULL fields.)"""
    r = interval_arith_raw(f, a, b, at, bt, t)
    if r is None or t.name != "interval":
        return r
    return f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN {r} END)"


def time_arith(f: str, a: str, b: str, an: str, bn: str) -> str | None:
    """time +- interval = (time +- its microseconds) modulo a day (months and days ignored,
    PostgreSQL's time_pl_interval); time - time = an interval of microseconds; date + time =
    the timestamp at that time of day. time is microseconds since midnight (a bigint)."""
    match f, an, bn:
        case ("add" | "sub"), "time", "interval":
            return f"pmod({a} {'+' if f == 'add' else '-'} {b}.micros, {DAY_US})"
        case "add", "interval", "time":
            return time_arith("add", b, a, bn, an)
        case "sub", "time", "time":
            return interval_struct("0", "0", f"({a} - {b})")
        case "add", "date", "time":
            return f"timestampadd(MICROSECOND, {b}, CAST({a} AS TIMESTAMP_NTZ))"
        case "add", "time", "date":
            return time_arith("add", b, a, bn, an)
    return None


def interval_arith_raw(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str | None:
    an, bn = at.name, bt.name
    if "time" in (an, bn) and (tm := time_arith(f, a, b, an, bn)) is not None:
        return tm
    if f in COMPARISONS and an == bn == "interval":
        return f"({interval_key(a)} {COMPARISONS[f]} {interval_key(b)})"
    if f in ("add", "sub") and an == bn == "interval":
        op = "+" if f == "add" else "-"
        return interval_struct(f"({a}.months {op} {b}.months)", f"({a}.days {op} {b}.days)", f"({a}.micros {op} {b}.micros)")
    if f in ("add", "sub") and bn == "interval" and an in ("timestamp", "timestamptz", "date"):
        base = a if an != "date" else cast(a, "TIMESTAMP_NTZ")
        return add_interval(base, b, 1 if f == "add" else -1)
    if f == "add" and an == "interval" and bn in ("timestamp", "timestamptz", "date"):
        return interval_arith_raw("add", b, a, bt, at, t)
    if f == "sub" and an in ("timestamp", "timestamptz") and bn == an:
        return ts_diff(a, b)
    if f == "mul" and an == "interval":
        return interval_times(a, f"CAST({b} AS DOUBLE)")
    if f == "mul" and bn == "interval":
        return interval_times(b, f"CAST({a} AS DOUBLE)")
    if f == "div" and an == "interval":
        return interval_times(a, f"(1.0D / CAST({b} AS DOUBLE))")
    return None


EXTRACT_TS = {
    "year": "year({x})", "month": "month({x})", "day": "dayofmonth({x})", "hour": "hour({x})", "minute": "minute({x})",
    "quarter": "quarter({x})", "doy": "dayofyear({x})", "dow": "(dayofweek({x}) - 1)", "isodow": "(weekday({x}) + 1)",
    "week": "weekofyear({x})", "isoyear": "extract(YEAROFWEEK FROM {x})",
    "second": "extract(SECOND FROM {x})", "milliseconds": "(extract(SECOND FROM {x}) * 1000)",
    "microseconds": "CAST(extract(SECOND FROM {x}) * 1000000 AS BIGINT)",
    "decade": "floor(year({x}) / 10)", "century": "CAST(div(year({x}) + 99, 100) AS INT)",
    "millennium": "CAST(div(year({x}) + 999, 1000) AS INT)",
    "epoch": "(CAST(unix_micros(CAST({x} AS TIMESTAMP)) AS DECIMAL(38,6)) / 1000000)",
    "timezone": "0", "timezone_hour": "0", "timezone_minute": "0",
}


def extract_interval(u: str, x: str) -> str:
    """Fields of an interval as Postgres' interval2tm splits it (signs follow each field)."""
    years = f"div({x}.months, 12)"
    match u:
        case "year":
            return years
        case "month":
            return f"({x}.months % 12)"
        case "quarter":
            return f"(div({x}.months % 12, 3) + 1)"
        case "decade":
            return f"div({x}.months, 120)"
        case "century":
            return f"div({x}.months, 1200)"
        case "millennium":
            return f"div({x}.months, 12000)"
        case "day":
            return f"{x}.days"
        case "hour":
            return f"div({x}.micros, 3600000000)"
        case "minute":
            return f"(div({x}.micros, 60000000) % 60)"
        case "second":
            return f"(CAST({x}.micros % 60000000 AS DECIMAL(20,6)) / 1000000)"
        case "milliseconds":
            return f"(CAST({x}.micros % 60000000 AS DECIMAL(20,3)) / 1000)"
        case "microseconds":
            return f"({x}.micros % 60000000)"
        case "epoch":
            return (f"(CAST({x}.micros AS DECIMAL(38,6)) / 1000000 + CAST(div({x}.months, 12) AS DECIMAL(38,6)) * 31557600"
                    f" + CAST({x}.months % 12 AS DECIMAL(38,6)) * 2592000 + CAST({x}.days AS DECIMAL(38,6)) * 86400)")
    raise unsupported(f"extract({u} from interval)")


def extract_time(u: str, x: str) -> str:
    match u:
        case "hour":
            return f"div({x}, 3600000000)"
        case "minute":
            return f"(div({x}, 60000000) % 60)"
        case "second":
            return f"(CAST({x} % 60000000 AS DECIMAL(20,6)) / 1000000)"
        case "milliseconds":
            return f"(CAST({x} % 60000000 AS DECIMAL(20,3)) / 1000)"
        case "microseconds":
            return f"({x} % 60000000)"
        case "epoch":
            return f"(CAST({x} AS DECIMAL(38,6)) / 1000000)"
    raise unsupported(f"extract({u} from time)")


def trunc_interval(u: str, x: str) -> str:
    months = {"millennium": 12000, "century": 1200, "decade": 120, "year": 12}
    if u in months:
        return interval_struct(f"(div({x}.months, {months[u]}) * {months[u]})", "0", "0")
    if u == "quarter":
        return interval_struct(f"(div({x}.months, 12) * 12 + div({x}.months % 12, 3) * 3)", "0", "0")
    if u == "month":
        return interval_struct(f"{x}.months", "0", "0")
    if u == "day":
        return interval_struct(f"{x}.months", f"{x}.days", "0")
    us = {"hour": 3_600_000_000, "minute": 60_000_000, "second": 1_000_000, "milliseconds": 1000, "microseconds": 1}[u]
    return interval_struct(f"{x}.months", f"{x}.days", f"(div({x}.micros, {us}) * {us})")


def datetime_unit_call(f: str, unit: str, x: str, xt: SqlType, t: SqlType) -> str:
    """extract / date_part / date_trunc with a literal unit (validated by the planner)."""
    n = xt.name
    if f == "date_trunc":
        if n == "interval":
            return f"(CASE WHEN {x} IS NOT NULL THEN {trunc_interval(unit, x)} END)"
        spark_unit = {"milliseconds": "MILLISECOND", "microseconds": "MICROSECOND"}.get(unit, unit.upper())
        if unit in ("decade", "century", "millennium"):
            y = f"year({x})"
            start = {"decade": f"(div({y}, 10) * 10)", "century": f"(div({y} - 1, 100) * 100 + 1)",
                     "millennium": f"(div({y} - 1, 1000) * 1000 + 1)"}[unit]
            return cast(year_start(start, "timestamp_ntz", raise_error), t)
        return cast(f"date_trunc('{spark_unit}', {x})", t)
    if n == "interval" and unit == "epoch" and f == "date_part":
        # Postgres computes this one in float8, term by term
        v = (f"(CAST({x}.micros AS DOUBLE) / 1000000.0D + 31557600.0D * div({x}.months, 12)"
             f" + 2592000.0D * ({x}.months % 12) + 86400.0D * {x}.days)")
    elif n == "interval":
        v = extract_interval(unit, x)
    elif n == "time":
        v = extract_time(unit, x)
    else:
        if n == "date" and unit == "epoch":
            v = f"(CAST(unix_date({x}) AS DECIMAL(38,0)) * 86400)"
        else:
            v = EXTRACT_TS[unit].format(x=x)
    return cast(v, t)


def age_of(a: str, b: str) -> str:
    """age(a, b): Postgres' field-wise difference with borrows (timestamp_age): a day borrow
    adds the length of the month of the earlier timestamp's month (of b when a >= b)."""
    def fields(x: str) -> str:
        return (f"named_struct('y', year({x}), 'mo', month({x}), 'd', day({x}), 'h', hour({x}), 'mi', minute({x}),"
                f" 's', second({x}), 'us', CAST(extract(SECOND FROM {x}) * 1000000 AS BIGINT) % 1000000)")

    def body(p: str) -> str:
        # p.a / p.b: fields; p.neg: a < b (the difference is computed as b - a, then negated)
        def diff(f: str) -> str:
            return f"(CASE WHEN {p}.neg THEN {p}.b.{f} - {p}.a.{f} ELSE {p}.a.{f} - {p}.b.{f} END)"

        def step(q: str) -> str:
            us_b = f"CASE WHEN {q}.us < 0 THEN 1 ELSE 0 END"
            s1 = f"({q}.s - ({us_b}))"
            s_b = f"CASE WHEN {s1} < 0 THEN 1 ELSE 0 END"
            mi1 = f"({q}.mi - ({s_b}))"
            mi_b = f"CASE WHEN {mi1} < 0 THEN 1 ELSE 0 END"
            h1 = f"({q}.h - ({mi_b}))"
            h_b = f"CASE WHEN {h1} < 0 THEN 1 ELSE 0 END"
            d1 = f"({q}.d - ({h_b}))"
            ref = f"(CASE WHEN {p}.neg THEN {p}.a ELSE {p}.b END)"
            mlen = f"day(last_day(make_date({ref}.y, {ref}.mo, 1)))"
            k = f"(CASE WHEN {d1} < 0 THEN CAST(ceil(- {d1} / {mlen}) AS INT) ELSE 0 END)"
            mo1 = f"({q}.mo - {k})"
            ky = f"(CASE WHEN {mo1} < 0 THEN CAST(ceil(- {mo1} / 12.0) AS INT) ELSE 0 END)"
            sign = f"(CASE WHEN {p}.neg THEN -1 ELSE 1 END)"
            months = f"(({q}.y - {ky}) * 12 + {mo1} + {ky} * 12)"
            days = f"({d1} + {k} * {mlen})"
            micros = (f"CAST((({h1} + 24 * ({h_b})) * 60 + {mi1} + 60 * ({mi_b})) * 60 + {s1} + 60 * ({s_b}) AS BIGINT)"
                      f" * 1000000 + {q}.us + 1000000 * ({us_b})")
            return interval_struct(f"{sign} * {months}", f"{sign} * {days}", f"{sign} * ({micros})")

        diffs = "named_struct(" + ", ".join(f"'{f}', {diff(f)}" for f in ("y", "mo", "d", "h", "mi", "s", "us")) + ")"
        return let_bind(diffs, step)

    pair = f"named_struct('a', {fields(a)}, 'b', {fields(b)}, 'neg', {a} < {b})"
    return f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN {let_bind(pair, body)} END)"


def justify(f: str, x: str) -> str:
    """justify_days / justify_hours / justify_interval (Postgres 15's algorithms)."""
    if f == "justify_days":
        wm = f"div({x}.days, 30)"
        m, d = f"({x}.months + {wm})", f"({x}.days - {wm} * 30)"
        return interval_struct(f"(CASE WHEN {m} > 0 AND {d} < 0 THEN {m} - 1 WHEN {m} < 0 AND {d} > 0 THEN {m} + 1 ELSE {m} END)",
                         f"(CASE WHEN {m} > 0 AND {d} < 0 THEN {d} + 30 WHEN {m} < 0 AND {d} > 0 THEN {d} - 30 ELSE {d} END)",
                         f"{x}.micros")
    if f == "justify_hours":
        wd = f"div({x}.micros, {DAY_US})"
        d, us = f"({x}.days + {wd})", f"({x}.micros - {wd} * {DAY_US})"
        return interval_struct(f"{x}.months",
                         f"(CASE WHEN {d} > 0 AND {us} < 0 THEN {d} - 1 WHEN {d} < 0 AND {us} > 0 THEN {d} + 1 ELSE {d} END)",
                         f"(CASE WHEN {d} > 0 AND {us} < 0 THEN {us} + {DAY_US} WHEN {d} < 0 AND {us} > 0 THEN {us} - {DAY_US} ELSE {us} END)")
    # justify_interval = the truncating decomposition of the interval's total into 30-day
    # months, days and microseconds: Postgres' steps leave all three fields with the total's
    # sign, |days| < 30 and |micros| < 1 day, and that decomposition is unique. (One linear
    # expression: chaining the steps textually grows exponentially and took Spark seconds.)
    tot, mon_us = interval_key(x), 30 * DAY_US
    mo, rem = f"({tot} div {mon_us})", f"({tot} % {mon_us})"
    months = (f"(CASE WHEN {mo} BETWEEN {-(2**31)} AND {2**31 - 1} THEN CAST({mo} AS INT)"
              f" ELSE {raise_error('[22008] interval out of range', 'int')} END)")
    return interval_struct(months, f"CAST({rem} div {DAY_US} AS INT)", f"CAST({rem} % {DAY_US} AS BIGINT)")
