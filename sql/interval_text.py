"""The interval output function in PostgreSQL 15's four IntervalStyles (EncodeInterval).

The fields are interval2itm's: years and months from the months (truncating), then days,
then hours, minutes, seconds and microseconds from the time, each carrying its own sign.
"""

from __future__ import annotations

from sql.types import Interval

STYLES = ("postgres", "postgres_verbose", "sql_standard", "iso_8601")


def _tdiv(a: int, b: int) -> tuple[int, int]:
    """C division: quotient truncated toward zero, remainder with a's sign."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


def _fields(iv: Interval) -> tuple[int, int, int, int, int, int, int]:
    year, mon = _tdiv(iv.months, 12)
    hour, rem = _tdiv(iv.micros, 3_600_000_000)
    minute, rem = _tdiv(rem, 60_000_000)
    sec, fsec = _tdiv(rem, 1_000_000)
    return year, mon, iv.days, hour, minute, sec, fsec


def _seconds(sec: int, fsec: int, fillzeros: bool) -> str:
    """AppendSeconds: |sec| (two digits with fillzeros) and |fsec| without trailing zeros."""
    out = f"{abs(sec):02d}" if fillzeros else str(abs(sec))
    if fsec:
        out += f".{abs(fsec):06d}".rstrip("0")
    return out


def format_interval(iv: Interval, style: str = "postgres") -> str:
    year, mon, mday, hour, minute, sec, fsec = _fields(iv)
    if style == "sql_standard":
        return _sql_standard(year, mon, mday, hour, minute, sec, fsec)
    if style == "iso_8601":
        return _iso_8601(year, mon, mday, hour, minute, sec, fsec)
    if style == "postgres_verbose":
        return _verbose(year, mon, mday, hour, minute, sec, fsec)
    return _postgres(year, mon, mday, hour, minute, sec, fsec)


def _postgres(year: int, mon: int, mday: int, hour: int, minute: int, sec: int, fsec: int) -> str:
    parts: list[str] = []
    is_before = False
    for value, unit in ((year, "year"), (mon, "mon"), (mday, "day")):
        if value == 0:
            continue
        plus = "+" if is_before and value > 0 else ""
        parts.append(f"{plus}{value} {unit}{'s' if value != 1 else ''}")
        is_before = value < 0
    if not parts or hour or minute or sec or fsec:
        minus = hour < 0 or minute < 0 or sec < 0 or fsec < 0
        sign = "-" if minus else ("+" if is_before else "")
        parts.append(f"{sign}{abs(hour):02d}:{abs(minute):02d}:{_seconds(sec, fsec, True)}")
    return " ".join(parts)


def _sql_standard(year: int, mon: int, mday: int, hour: int, minute: int, sec: int, fsec: int) -> str:
    vals = (year, mon, mday, hour, minute, sec, fsec)
    has_negative = any(v < 0 for v in vals)
    has_positive = any(v > 0 for v in vals)
    has_year_month = year != 0 or mon != 0
    has_day_time = any(v != 0 for v in vals[2:])
    standard = not (has_negative and has_positive) and not (has_year_month and has_day_time)
    out = ""
    if has_negative and standard:
        out = "-"
        year, mon, mday, hour, minute, sec, fsec = (-v for v in vals)
    if not has_negative and not has_positive:
        return "0"
    if not standard:
        year_sign = "-" if year < 0 or mon < 0 else "+"
        day_sign = "-" if mday < 0 else "+"
        sec_sign = "-" if hour < 0 or minute < 0 or sec < 0 or fsec < 0 else "+"
        return (f"{out}{year_sign}{abs(year)}-{abs(mon)} {day_sign}{abs(mday)} "
                f"{sec_sign}{abs(hour)}:{abs(minute):02d}:{_seconds(sec, fsec, True)}")
    if has_year_month:
        return f"{out}{year}-{mon}"
    if mday != 0:
        return f"{out}{mday} {hour}:{minute:02d}:{_seconds(sec, fsec, True)}"
    return f"{out}{hour}:{minute:02d}:{_seconds(sec, fsec, True)}"


def _iso_8601(year: int, mon: int, mday: int, hour: int, minute: int, sec: int, fsec: int) -> str:
    if not any((year, mon, mday, hour, minute, sec, fsec)):
        return "PT0S"
    out = "P" + "".join(f"{v}{u}" for v, u in ((year, "Y"), (mon, "M"), (mday, "D")) if v)
    if hour or minute or sec or fsec:
        out += "T" + "".join(f"{v}{u}" for v, u in ((hour, "H"), (minute, "M")) if v)
    if sec or fsec:
        out += ("-" if sec < 0 or fsec < 0 else "") + _seconds(sec, fsec, False) + "S"
    return out


def _verbose(year: int, mon: int, mday: int, hour: int, minute: int, sec: int, fsec: int) -> str:
    out = "@"
    is_zero, is_before = True, False
    for value, unit in ((year, "year"), (mon, "mon"), (mday, "day"), (hour, "hour"), (minute, "min")):
        if value == 0:
            continue
        if is_zero:
            is_before = value < 0
            value = abs(value)
        elif is_before:
            value = -value
        out += f" {value} {unit}{'' if value == 1 else 's'}"
        is_zero = False
    if sec or fsec:
        out += " "
        if sec < 0 or (sec == 0 and fsec < 0):
            if is_zero:
                is_before = True
            elif not is_before:
                out += "-"
        elif is_before:
            out += "-"
        out += _seconds(sec, fsec, False) + f" sec{'s' if abs(sec) != 1 or fsec != 0 else ''}"
        is_zero = False
    if is_zero:
        out += " 0"
    if is_before:
        out += " ago"
    return out
