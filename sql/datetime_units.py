"""PostgreSQL's datetime units (extract / date_part / date_trunc) and to_char's datetime
patterns: pure spelling tables and checks, shared by the binder and the Spark renderer."""

from __future__ import annotations

from sql.errors import SqlError, unsupported
from sql.types import SqlType

# Postgres' spellings of datetime units -> the canonical name
DATETIME_UNITS = {
    **{k: "microseconds" for k in ("microsecond", "microseconds", "us", "usec", "usecs", "useconds")},
    **{k: "milliseconds" for k in ("millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds")},
    **{k: "second" for k in ("second", "seconds", "s", "sec", "secs")},
    **{k: "minute" for k in ("minute", "minutes", "m", "min", "mins")},
    **{k: "hour" for k in ("hour", "hours", "h", "hr", "hrs")},
    **{k: "day" for k in ("day", "days", "d")},
    **{k: "week" for k in ("week", "weeks", "w")},
    **{k: "month" for k in ("month", "months", "mon", "mons")},
    **{k: "quarter" for k in ("quarter", "qtr")},
    **{k: "year" for k in ("year", "years", "y", "yr", "yrs")},
    **{k: "decade" for k in ("decade", "decades", "dec", "decs")},
    **{k: "century" for k in ("century", "centuries", "c", "cent")},
    **{k: "millennium" for k in ("millennium", "millennia", "millenniums", "mil", "mils")},
    "dow": "dow", "isodow": "isodow", "doy": "doy", "epoch": "epoch", "isoyear": "isoyear", "julian": "julian",
    "timezone": "timezone", "timezone_hour": "timezone_hour", "timezone_minute": "timezone_minute",
}
_TIME_UNITS = frozenset({"microseconds", "milliseconds", "second", "minute", "hour"})
_DATE_UNITS = frozenset({"day", "week", "month", "quarter", "year", "decade", "century", "millennium", "dow", "isodow",
                         "doy", "isoyear", "epoch"})
# units extract/date_part support per input type (others Postgres knows: 0A000)
EXTRACT_UNITS = {
    "timestamp": _TIME_UNITS | _DATE_UNITS,
    "timestamptz": _TIME_UNITS | _DATE_UNITS | {"timezone", "timezone_hour", "timezone_minute"},
    "date": _DATE_UNITS,
    "time": _TIME_UNITS | {"epoch"},
    "interval": (_TIME_UNITS | {"day", "month", "quarter", "year", "decade", "century", "millennium", "epoch"}),
}
TRUNC_UNITS = {
    "timestamp": _TIME_UNITS | {"day", "week", "month", "quarter", "year", "decade", "century", "millennium"},
    "interval": _TIME_UNITS | {"day", "month", "quarter", "year", "decade", "century", "millennium"},
}
TRUNC_UNITS["timestamptz"] = TRUNC_UNITS["timestamp"]


def datetime_unit(func_name: str, unit: str, t: SqlType) -> str:
    """The canonical unit of `func_name(unit, <t>)`: 22023 for a unit Postgres does not know,
    0A000 for one it knows that we do not support for `t`."""
    u = DATETIME_UNITS.get(unit.strip().lower())
    tname = "timestamp with time zone" if t.name == "timestamptz" else t.pg_format()
    if u is None:
        what = "unit" if t.name != "interval" else "interval units"
        raise SqlError("22023", f'{what} "{unit}" not recognized' if func_name == "date_trunc"
                       else f'unit "{unit}" not recognized for type {tname}')
    ok = (TRUNC_UNITS if func_name == "date_trunc" else EXTRACT_UNITS).get(t.name, frozenset())
    if u not in ok:
        raise unsupported(f'unit "{unit}" for type {tname} in {func_name}')
    return u


# to_char patterns -> Spark datetime patterns (longest first); anything else: 0A000
_TO_CHAR: list[tuple[str, str | None]] = [("SSSSS", None), ("SSSS", None), ("HH24", "HH"), ("HH12", "hh"), ("YYYY", "yyyy"), ("MS", "SSS"), ("US", "SSSSSS"), ("Mon", "MMM"),
            ("Dy", "EEE"), ("AM", "a"), ("PM", "a"), ("HH", "hh"), ("MM", "MM"), ("DD", "dd"), ("MI", "mm"),
            ("SS", "ss"), ("YY", "yy")]


def to_char_pattern(pg: str) -> str:
    """A Spark date_format pattern equivalent to the Postgres to_char pattern `pg`."""
    out: list[str] = []
    i = 0
    while i < len(pg):
        for p, sp in _TO_CHAR:
            if pg.startswith(p, i):
                # no Spark letter for it (SSSS: seconds past midnight), or the same letter as
                # the previous pattern (USMS would read as one 9-digit fraction)
                if sp is None or (out and out[-1][-1:] == sp[:1] and sp[:1].isalpha()):
                    raise unsupported(f"to_char pattern {pg!r}")
                out.append(sp)
                i += len(p)
                break
        else:
            c = pg[i]
            if c in " -:/.,":
                out.append(c)
            else:
                raise unsupported(f"to_char pattern {pg!r} (supported: YYYY YY MM DD HH24 HH12 HH MI SS MS US Mon Dy AM PM)")
            i += 1
    return "".join(out)
