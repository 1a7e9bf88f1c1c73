"""PostgreSQL's date / timestamp arithmetic with intervals, in Python (plan-time folding):
timestamp + interval adds the months first (the day clamped to the month's last day), then
the days, then the microseconds (timestamp_pl_interval); date + integer adds days. Results
outside Python's years 1..9999 raise OverflowError (the caller leaves them to the renderer)."""

from __future__ import annotations

import calendar
import datetime as dt

from sql.types import Interval


def add_months(t: dt.datetime, months: int) -> dt.datetime:
    """t + months: the same day of the month, or the month's last day when it has fewer."""
    total = t.year * 12 + (t.month - 1) + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("year out of range")
    day = min(t.day, calendar.monthrange(year, month + 1)[1])
    return t.replace(year=year, month=month + 1, day=day)


def timestamp_plus_interval(t: dt.datetime, iv: Interval) -> dt.datetime:
    """timestamp + interval = ((t + months) + days) + microseconds."""
    if iv.months:
        t = add_months(t, iv.months)
    return t + dt.timedelta(days=iv.days) + dt.timedelta(microseconds=iv.micros)


def negate_interval(iv: Interval) -> Interval:
    return Interval(-iv.months, -iv.days, -iv.micros)
