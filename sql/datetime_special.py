"""The special datetime input words that name the current time: `now`, `today`, `tomorrow`,
`yesterday` (Postgres reads them as of the transaction start). A literal spelled so becomes an
expression over now() instead of a value folded while planning, so that
`timestamptz 'now' = now()` and `date 'today' = current_date` hold:

    timestamptz 'now'       = now()
    <t> 'now'               = CAST(now() AS <t>)
    <t> 'today'             = CAST(date_trunc('day', now()) AS <t>)
    <t> 'tomorrow'          = CAST(date_trunc('day', now()) + interval '1 day' AS <t>)
"""

from __future__ import annotations

from sql.hir import HirScalar
from sql.scalar import CallBinary, CallUnary, CallVariadic, Literal
from sql.types import INTERVAL, TEXT, TIMESTAMPTZ, Interval, SqlType

_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}
_TYPES = ("timestamptz", "timestamp", "date")


def special_now(text: str, t: SqlType) -> HirScalar | None:
    """The expression a special word stands for as a value of t, else None."""
    word = text.strip().lower()
    if t.name not in _TYPES or (word != "now" and word not in _DAYS):
        return None
    x: HirScalar = CallVariadic("now", (), TIMESTAMPTZ)
    if word in _DAYS:
        x = CallBinary("date_trunc", Literal("day", TEXT), x, TIMESTAMPTZ)
        if _DAYS[word]:
            x = CallBinary("add", x, Literal(Interval(0, _DAYS[word], 0), INTERVAL), TIMESTAMPTZ)
    return x if t.name == "timestamptz" else CallUnary("cast", x, t)
