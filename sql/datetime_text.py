"""The date, time, timestamp and timestamptz input functions (pure Python, one copy for
literals and wire parameters).

Accepted, as Postgres reads them: ISO 8601 dates `Y-M-D` or `Y/M/D` with a year of three or
more digits, `T` or blank before the time, `H:M[:S[.f]]` (AM/PM) with fractions rounded half
away from zero to microseconds, a zone `Z`, `UTC`, `GMT`, `+HH[:MM[:SS]]`, a fixed-offset
abbreviation (`PST`) or an IANA name (`Europe/Helsinki`), and the special words `epoch`, `now`,
`today`, `tomorrow`, `yesterday` (`allballs` for time).

Refused with 0A000 instead of a wrong value: BC dates, `infinity` and years after 9999 (no
Spark / Python representation here), the orders that depend on DateStyle (a first field of
one or two digits: `01/02/03`, `99-01-08`), date-dependent zone abbreviations (`MSK`), time
`24:00:00`. Anything else is 22007; out-of-range fields are 22008.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from decimal import Decimal

from sql.errors import (
    DATETIME_FIELD_OVERFLOW,
    FEATURE_NOT_SUPPORTED,
    INVALID_DATETIME_FORMAT,
    SqlError,
)

_LABEL = {"date": "date", "time": "time", "timestamp": "timestamp", "timestamptz": "timestamp with time zone"}
_DATE = re.compile(r"(\d+)([-/])(\d{1,2})\2(\d{1,2})")
_TIME = re.compile(r"(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?")
_ZONE = re.compile(r"\s*(?:(?P<utc>Z|UTC|GMT|ZULU)|(?P<sign>[+-])(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?(?::?(?P<s>\d{2}))?"
                   r"|(?P<name>[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)+)|(?P<abbrev>[A-Za-z]{2,5}))\s*\Z", re.I)
_AMPM = re.compile(r"\s*(am|pm)\b", re.I)
# the fixed-offset time zone abbreviations of Postgres' default set (hours east of UTC); the
# others (MSK, ...) stand for a zone's offset at that date and are not accepted
_ABBREVS = {"est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7, "akst": -9,
            "akdt": -8, "hst": -10, "ut": 0, "wet": 0, "west": 1, "cet": 1, "cest": 2, "met": 1, "mest": 2, "eet": 2,
            "eest": 3}
_SPECIAL_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}


def _syntax(kind: str, s: str) -> SqlError:
    return SqlError(INVALID_DATETIME_FORMAT, f'invalid input syntax for type {_LABEL[kind]}: "{s}"')


def _overflow(s: str) -> SqlError:
    return SqlError(DATETIME_FIELD_OVERFLOW, f'date/time field value out of range: "{s}"')


def _frac_micros(frac: str | None) -> int:
    if not frac:
        return 0
    if len(frac) <= 6:
        return int(frac.ljust(6, "0"))
    return int(Decimal("0." + frac).quantize(Decimal("0.000001"), "ROUND_HALF_UP") * 10**6)


def _refuse_special(v: str, kind: str) -> None:
    low = v.lower()
    if low in ("infinity", "-infinity", "+infinity"):
        raise SqlError(FEATURE_NOT_SUPPORTED, f"{_LABEL[kind]} value {low} is not supported")
    if re.search(r"(?i)\s*\bbc\s*$", v):
        raise SqlError(FEATURE_NOT_SUPPORTED, "dates before year 1 (BC) are not supported")


def _now(now: dt.datetime | None) -> dt.datetime:
    return (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)


def _date_part(v: str, kind: str, s: str) -> tuple[dt.date, str]:
    """The leading date of v and the rest."""
    m = _DATE.match(v)
    if not m:
        raise _syntax(kind, s)
    y, _, mo, d = m.groups()
    year = int(y)
    if len(y) <= 2:  # month, day or two-digit year first: read by DateStyle's field order
        raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}" depends on DateStyle\'s field order, which is not supported',
                       hint="Write the year with at least three digits (YYYY-MM-DD).")
    if year == 0:
        raise _overflow(s)
    if year > (5874897 if kind == "date" else 294276):  # beyond Postgres' range too
        raise SqlError(DATETIME_FIELD_OVERFLOW, f'{_LABEL[kind]} out of range: "{s}"')
    if year > 9999:
        raise SqlError(FEATURE_NOT_SUPPORTED, f"{_LABEL[kind]} values after year 9999 are not supported")
    try:
        return dt.date(year, int(mo), int(d)), v[m.end():]
    except ValueError:
        raise _overflow(s) from None


def _time_part(v: str, kind: str, s: str) -> tuple[int, str]:
    """Microseconds since midnight of a leading H:M[:S[.f]] and the rest."""
    m = _TIME.match(v)
    if not m:
        raise _syntax(kind, s)
    hh, mm, ss, frac = m.groups()
    h, mi, sec = int(hh), int(mm), int(ss or 0)
    us = _frac_micros(frac)
    rest = v[m.end():]
    if ampm := _AMPM.match(rest):
        if h > 12:
            raise _overflow(s)
        h = (h % 12) + (12 if ampm.group(1).lower() == "pm" else 0)
        rest = rest[ampm.end():]
    if not (0 <= h <= 24 and 0 <= mi < 60 and 0 <= sec <= 60) or us > 1_000_000:
        raise _overflow(s)
    total = ((h * 60 + mi) * 60 + sec) * 1_000_000 + us
    if total > 86_400_000_000 or (h == 24 and total != 86_400_000_000):
        raise _overflow(s)
    if total == 86_400_000_000 and kind == "time":
        raise SqlError(FEATURE_NOT_SUPPORTED, "time value 24:00:00 is not supported")
    return total, rest


def _zone_offset(rest: str, local: dt.datetime, kind: str, s: str) -> dt.timedelta:
    z = _ZONE.match(rest)
    if not z:
        raise _syntax(kind, s)
    if z.group("utc"):
        return dt.timedelta(0)
    if z.group("abbrev"):
        if (hours := _ABBREVS.get(z.group("abbrev").lower())) is None:
            raise SqlError(FEATURE_NOT_SUPPORTED, f'time zone abbreviation "{z.group("abbrev")}" is not supported',
                           hint="Use a numeric offset or a full time zone name (Europe/Moscow).")
        return dt.timedelta(hours=hours)
    if z.group("name"):
        try:
            tz = zoneinfo.ZoneInfo(z.group("name"))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise SqlError("22023", f'time zone "{z.group("name")}" not recognized') from None
        # in a spring-forward gap the offset before the transition, in a fall-back overlap
        # the one after it (Postgres' DetermineTimeZoneOffset)
        before, after = local.replace(tzinfo=tz, fold=0).utcoffset(), local.replace(tzinfo=tz, fold=1).utcoffset()
        assert before is not None and after is not None
        return after if before > after else before
    h, mi, sec = int(z.group("h")), int(z.group("m") or 0), int(z.group("s") or 0)
    if h > 15 or mi > 59 or sec > 59:
        raise SqlError("22009", f'time zone displacement out of range: "{s}"')
    off = dt.timedelta(hours=h, minutes=mi, seconds=sec)
    return -off if z.group("sign") == "-" else off


_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_MONTH_NAMES = {**_MONTHS, "january": 1, "february": 2, "march": 3, "april": 4, "june": 6, "july": 7, "august": 8,
                "sept": 9, "september": 9, "october": 10, "november": 11, "december": 12}
_DAY_NAMES = frozenset("""sun mon tue tues wed weds thu thur thurs fri sat sunday monday tuesday wednesday thursday
friday saturday""".split())
_TEXT_TIME = re.compile(r"(\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?)(am|pm)?", re.I)


def _two_digit_year(y: int) -> int:
    return y + (2000 if y < 70 else 1900)


def _textual(v: str, kind: str, s: str) -> str | None:
    """A date with a month name ('Mon Feb 10 17:32:01 1997 PST', 'January 8, 1999',
    '1999-Jan-08') or in concatenated digits ('19990108', '990108 173201') rewritten as
    'YYYY-MM-DD [time] [zone]'; None when it is neither. A two-digit year beside a month name
    is read by DateStyle's field order: refused."""
    if re.fullmatch(r"(?i)\d+\.\d{3}|j\d+", v.split(" ")[0]):
        raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}" (day of year / Julian day) is not supported')
    month = None
    numbers: list[str] = []
    time = zone = ""
    for chunk in re.split(r"[\s,]+", v.strip()):
        if not chunk:
            continue
        if t := _TEXT_TIME.fullmatch(chunk):
            time = t.group(1) + (" " + t.group(2) if t.group(2) else "")
            continue
        if re.fullmatch(r"[+-]\d{1,4}(?::\d{2})?", chunk) or "/" in chunk and chunk[0].isalpha():
            zone = chunk
            continue
        if re.fullmatch(r"[A-Za-z]+[+-][\d:]+", chunk):  # POSIX 'GMT+8': the sign is reversed
            raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}": POSIX-style time zones are not supported')
        parts = re.findall(r"[A-Za-z]+|\d+", chunk) if re.search(r"[A-Za-z]", chunk) else [chunk]
        if len(parts) > 1 and "".join(parts) != re.sub(r"[-/.]", "", chunk):
            return None
        for part in parts:
            low = part.lower()
            if low in _MONTH_NAMES and month is None:
                month = _MONTH_NAMES[low]
            elif low in _DAY_NAMES or low == "ad":
                continue
            elif low in ("am", "pm") and time:
                time += " " + low
            elif part.isdigit():
                numbers.append(part)
            elif part.isalpha() and not zone and low not in _MONTH_NAMES:
                zone = part
            else:
                return None
    if month is not None:
        if len(numbers) != 2:
            return None
        long = [n for n in numbers if len(n) >= 3]
        if len(long) == 1:
            year, day = int(long[0]), int(next(n for n in numbers if n is not long[0]))
        else:
            raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}" depends on DateStyle\'s field order, which is not supported')
        if len(str(day)) > 2:
            return None
    elif len(numbers) == 3 and not zone:
        # 'Y M D' in blank-separated fields: read like 'Y-M-D' (a year of three or more
        # digits first); a first field of one or two digits is read by DateStyle's order
        if len(numbers[0]) < 3:
            raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}" depends on DateStyle\'s field order, which is not supported',
                           hint="Write the year with at least three digits (YYYY-MM-DD).")
        if len(numbers[1]) > 2 or len(numbers[2]) > 2:
            raise SqlError(FEATURE_NOT_SUPPORTED, f'{_LABEL[kind]} input "{s}" is not supported',
                           hint="Write the date as YYYY-MM-DD.")
        year, month, day = int(numbers[0]), int(numbers[1]), int(numbers[2])
    elif numbers and len(numbers[0]) in (6, 8) and len(numbers) <= 2:
        d = numbers[0]
        year = int(d[:4]) if len(d) == 8 else _two_digit_year(int(d[:2]))
        month, day = int(d[-4:-2]), int(d[-2:])
        if len(numbers) == 2:
            if time or len(numbers[1]) not in (4, 6):
                return None
            hms = numbers[1]
            time = f"{hms[:2]}:{hms[2:4]}" + (f":{hms[4:6]}" if len(hms) == 6 else "")
    else:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" + (f" {time}" if time else "") + (f" {zone}" if zone else "")


def parse_date(s: str, now: dt.datetime | None = None) -> dt.date:
    v = s.strip()
    low = v.lower()
    _refuse_special(v, "date")
    if low == "epoch":
        return dt.date(1970, 1, 1)
    if low in _SPECIAL_DAYS or low == "now":
        return _now(now).date() + dt.timedelta(days=_SPECIAL_DAYS.get(low, 0))
    if not re.match(r"\d+[-/]\d", v) and (alt := _textual(v, "date", s)) is not None:
        v = alt
    day, rest = _date_part(v, "date", s)
    if rest.strip():
        tail = rest[1:] if rest[0] in " T" else None
        if tail is None:
            raise _syntax("date", s)
        _, zone = _time_part(tail.strip(), "date", s)
        if zone.strip():
            _zone_offset(zone, dt.datetime(day.year, day.month, day.day), "date", s)
    return day


def parse_timestamp(s: str, tz: bool, now: dt.datetime | None = None) -> dt.datetime:
    """timestamp (naive) or timestamptz (aware, in UTC)."""
    kind = "timestamptz" if tz else "timestamp"
    v = s.strip()
    low = v.lower()
    _refuse_special(v, kind)
    word, _, zone_word = low.partition(" ")
    value: dt.datetime | None = None
    if word == "epoch" and not zone_word:
        value = dt.datetime(1970, 1, 1)
    elif word == "now" and not zone_word:
        n = _now(now)
        return n if tz else n.replace(tzinfo=None)
    elif word in _SPECIAL_DAYS:
        d = _now(now).date() + dt.timedelta(days=_SPECIAL_DAYS[word])
        value = dt.datetime(d.year, d.month, d.day)
        rest = zone_word
    if value is None:
        if not re.match(r"\d+[-/]\d", v) and (alt := _textual(v, kind, s)) is not None:
            v = alt
        day, rest = _date_part(v, kind, s)
        us = 0
        if rest and not rest[0].isspace() and rest[0] not in "Tt" and not _ZONE.match(rest):
            raise _syntax(kind, s)
        stripped = rest.lstrip(" Tt") if rest[:1] in (" ", "T", "t") else rest
        if stripped and _TIME.match(stripped):
            us, rest = _time_part(stripped, kind, s)
        else:
            rest = stripped
        try:
            value = dt.datetime(day.year, day.month, day.day) + dt.timedelta(microseconds=us)
        except OverflowError:
            raise _overflow(s) from None
    elif word in ("epoch",):
        rest = ""
    if not tz:
        if rest.strip():
            _zone_offset(rest, value, kind, s)  # validated, then ignored like Postgres
        return value
    off = _zone_offset(rest, value, kind, s) if rest.strip() else dt.timedelta(0)
    try:
        return (value - off).replace(tzinfo=dt.UTC)
    except OverflowError:
        raise _overflow(s) from None


def parse_time(s: str, now: dt.datetime | None = None) -> dt.time:
    v = s.strip()
    low = v.lower()
    if low == "allballs":
        return dt.time(0)
    if low == "now":
        return _now(now).time()
    if _DATE.match(v) and re.match(r"\d+-\d", v):  # a timestamp: its time of day
        _, rest = _date_part(v, "time", s)
        v = rest.lstrip(" Tt")
        if not v:
            return dt.time(0)
    us, rest = _time_part(v, "time", s)
    if rest.strip():
        _zone_offset(rest, dt.datetime(2000, 1, 1), "time", s)  # validated, then ignored like Postgres
    return (dt.datetime.min + dt.timedelta(microseconds=us)).time()
