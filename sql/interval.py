"""The interval input function, as PostgreSQL 15's interval_in (pure Python).

`parse_interval(text, typmod)` follows datetime.c step by step: ParseDateTime splits the text
into typed fields, DecodeInterval reads them right to left (a unit word sets the unit of the
number before it; with none, the typmod's last field, else seconds), DecodeISO8601Interval is
tried when that finds a bad format, and AdjustIntervalForTypmod truncates the fields to the
right of a qualifier (`INTERVAL '1 2' DAY TO HOUR`) and rounds fractional seconds to the
precision (`interval(3)`). What PostgreSQL rejects is rejected with its SQLSTATE: 22007 bad
format, 22015 field overflow, 22008 result overflow.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sql.errors import DATETIME_FIELD_OVERFLOW, INVALID_DATETIME_FORMAT, SqlError
from sql.interval_typmod import (
    DAY,
    FULL_PRECISION,
    HOUR,
    MINUTE,
    MONTH,
    SECOND,
    YEAR,
    field_mask,
    typmod_precision,
    typmod_range,
)
from sql.types import Interval

INTERVAL_FIELD_OVERFLOW = "22015"

USECS_PER_SEC = 1_000_000
USECS_PER_MINUTE = 60 * USECS_PER_SEC
USECS_PER_HOUR = 60 * USECS_PER_MINUTE
USECS_PER_DAY = 24 * USECS_PER_HOUR
_I32 = (-(2**31), 2**31 - 1)
_I64 = (-(2**63), 2**63 - 1)

# ---- errors -----------------------------------------------------------------------------
class _BadFormat(Exception):
    pass


class _FieldOverflow(Exception):
    pass


# ---- ParseDateTime ----------------------------------------------------------------------
NUMBER, STRING, DATE, TIME, TZ, SPECIAL = "number", "string", "date", "time", "tz", "special"
_MAXDATEFIELDS = 25
_WORKBUF = 256  # interval_in's work buffer

# datetktbl's tokens (a word followed by a digit or '+' is a date unless it is one of them)
_DATE_TOKENS = frozenset("""-infinity ad allballs am apr april at aug august bc d dec december dow doy dst
epoch feb february fri friday h infinity isodow isoyear j jan january jd jul julian july jun june m mar
march may mm mon monday nov november now oct october on pm s sat saturday sep sept september sun sunday
t thu thur thurs thursday today tomorrow tue tues tuesday wed wednesday weds y yesterday z zulu""".split())


def _tok10(s: str) -> str:
    return s[:10]


def parse_date_time_fields(s: str) -> list[tuple[str, str]]:
    """ParseDateTime: the (type, text) fields of a date/time/interval string."""
    fields: list[tuple[str, str]] = []
    used = 0
    i, n = 0, len(s)

    def isdigit(c: str) -> bool:
        return "0" <= c <= "9"

    def isalpha(c: str) -> bool:
        return ("a" <= c <= "z") or ("A" <= c <= "Z")

    def at(j: int) -> str:
        return s[j] if j < n else ""

    while i < n:
        c = s[i]
        if c.isspace() and c.isascii():
            i += 1
            continue
        if len(fields) >= _MAXDATEFIELDS:
            raise _BadFormat
        start = i
        buf: list[str] = []
        if isdigit(c):
            while isdigit(at(i)):
                buf.append(s[i])
                i += 1
            if at(i) == ":":
                ft = TIME
                buf.append(":")
                i += 1
                while isdigit(at(i)) or at(i) in (":", "."):
                    buf.append(s[i])
                    i += 1
            elif at(i) in ("-", "/", "."):
                delim = s[i]
                buf.append(delim)
                i += 1
                if isdigit(at(i)):
                    ft = NUMBER if delim == "." else DATE
                    while isdigit(at(i)):
                        buf.append(s[i])
                        i += 1
                    if at(i) == delim:
                        ft = DATE
                        buf.append(delim)
                        i += 1
                        while isdigit(at(i)) or at(i) == delim:
                            buf.append(s[i])
                            i += 1
                else:
                    ft = DATE
                    while (at(i) and (isdigit(at(i)) or isalpha(at(i)))) or at(i) == delim:
                        buf.append(s[i].lower())
                        i += 1
            else:
                ft = NUMBER
        elif c == ".":
            buf.append(".")
            i += 1
            while isdigit(at(i)):
                buf.append(s[i])
                i += 1
            ft = NUMBER
        elif isalpha(c):
            ft = STRING
            while isalpha(at(i)):
                buf.append(s[i].lower())
                i += 1
            is_date = at(i) in ("-", "/", ".")
            if not is_date and (at(i) == "+" or isdigit(at(i))):
                is_date = _tok10("".join(buf)) not in {_tok10(t) for t in _DATE_TOKENS}
            if is_date:
                ft = DATE
                while True:
                    buf.append(s[i].lower())
                    i += 1
                    nx = at(i)
                    if not (nx and (nx in "+-/_.:" or isdigit(nx) or isalpha(nx))):
                        break
        elif c in "+-":
            buf.append(c)
            i += 1
            while at(i) and at(i).isspace() and at(i).isascii():
                i += 1
            if isdigit(at(i)):
                ft = TZ
                buf.append(s[i])
                i += 1
                while isdigit(at(i)) or at(i) in (":", ".", "-"):
                    buf.append(s[i])
                    i += 1
            elif isalpha(at(i)):
                ft = SPECIAL
                while isalpha(at(i)):
                    buf.append(s[i].lower())
                    i += 1
            else:
                raise _BadFormat
        elif c.isascii() and not c.isalnum() and c.isprintable():  # ispunct
            i += 1
            continue
        else:
            raise _BadFormat
        del start
        used += len(buf) + 1
        if used > _WORKBUF:
            raise _BadFormat
        fields.append((ft, "".join(buf)))
    return fields


# ---- helpers of DecodeInterval ----------------------------------------------------------
@dataclass
class _Itm:
    usec: int = 0
    mday: int = 0
    mon: int = 0
    year: int = 0


def _check(v: int, rng: tuple[int, int]) -> int:
    if not rng[0] <= v <= rng[1]:
        raise _FieldOverflow
    return v


def _strtoi(s: str, pos: int, rng: tuple[int, int]) -> tuple[int, int]:
    """strtol: (value, end); end == pos when there are no digits; overflow -> field overflow."""
    m = re.compile(r"\s*[+-]?\d+").match(s, pos)
    if not m:
        return 0, pos
    v = int(m.group(0))
    if not rng[0] <= v <= rng[1]:
        raise _FieldOverflow
    return v, m.end()


_STRTOD = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][+-]?\d+)?"
                     r"|(?i:infinity|inf|nan))")


def _strtod(s: str, pos: int) -> tuple[float, int]:
    m = _STRTOD.match(s, pos)
    if not m:
        return 0.0, pos
    t = m.group(0).strip()
    try:
        v = float.fromhex(t) if "x" in t.lower() else float(t)
    except ValueError:
        return 0.0, pos
    return v, m.end()


def _parse_fraction(s: str) -> float:
    """ParseFraction: s starts with '.'."""
    if s == ".":
        return 0.0
    v, end = _strtod(s, 0)
    if end != len(s):
        raise _BadFormat
    return v


def _c_int(x: float) -> int:
    """(int) x: truncation toward zero."""
    return int(x)


def _rint(x: float) -> int:
    """rint(): round half to even."""
    return int(round(x))


def _adjust_fract_microseconds(frac: float, scale: int, itm: _Itm) -> None:
    if frac == 0:
        return
    frac *= scale
    usec = _c_int(frac)
    frac -= usec
    if frac > 0.5:
        usec += 1
    elif frac < -0.5:
        usec -= 1
    itm.usec = _check(itm.usec + usec, _I64)


def _adjust_fract_days(frac: float, scale: int, itm: _Itm) -> None:
    if frac == 0:
        return
    frac *= scale
    extra = _c_int(frac)
    itm.mday = _check(itm.mday + extra, _I32)
    _adjust_fract_microseconds(frac - extra, USECS_PER_DAY, itm)


def _adjust_fract_years(frac: float, scale: int, itm: _Itm) -> None:
    extra = _rint(frac * scale * 12)
    itm.mon = _check(itm.mon + extra, _I32)


def _adjust_microseconds(val: int, fval: float, scale: int, itm: _Itm) -> None:
    itm.usec = _check(itm.usec + _check(val * scale, _I64), _I64)
    _adjust_fract_microseconds(fval, scale, itm)


def _adjust_days(val: int, scale: int, itm: _Itm) -> None:
    _check(val, _I32)
    itm.mday = _check(itm.mday + _check(val * scale, _I32), _I32)


def _adjust_months(val: int, itm: _Itm) -> None:
    _check(val, _I32)
    itm.mon = _check(itm.mon + val, _I32)


def _adjust_years(val: int, scale: int, itm: _Itm) -> None:
    _check(val, _I32)
    itm.year = _check(itm.year + _check(val * scale, _I32), _I32)


# units (deltatktbl; matched on their first 10 characters like Postgres' TOKMAXLEN)
_UNITS: dict[str, str] = {}
for _unit, _names in {
    "century": "c cent centuries century", "day": "d day days", "decade": "dec decade decades decs",
    "hour": "h hour hours hr hrs", "minute": "m min mins minute minutes",
    "microsecond": "microsecon us usec usecond useconds usecs",
    "millennium": "mil millennia millennium mils", "millisecond": "millisecon ms msec msecond mseconds msecs",
    "month": "mon mons month months", "quarter": "qtr quarter", "second": "s sec second seconds secs",
    "timezone": "timezone timezone_h timezone_m", "week": "w week weeks", "year": "y year years yr yrs",
    "ago": "ago", "invalid": "invalid",
}.items():
    for _n in _names.split():
        _UNITS[_n] = _unit

_TIME_M = field_mask(HOUR, MINUTE, SECOND, 13, 14)
_ALL_SECS_M = field_mask(SECOND, 13, 14)
_UNIT_MASK = {"microsecond": field_mask(14), "millisecond": field_mask(13), "second": field_mask(SECOND), "minute": field_mask(MINUTE),
              "hour": field_mask(HOUR), "day": field_mask(DAY), "week": field_mask(24), "month": field_mask(MONTH), "year": field_mask(YEAR),
              "decade": field_mask(25), "century": field_mask(26), "millennium": field_mask(27)}


def _default_unit(rng: int) -> str:
    """The unit of a bare number that is the rightmost field, from the typmod's range."""
    if rng == field_mask(YEAR):
        return "year"
    if rng in (field_mask(MONTH), field_mask(YEAR, MONTH)):
        return "month"
    if rng == field_mask(DAY):
        return "day"
    if rng in (field_mask(HOUR), field_mask(DAY, HOUR)):
        return "hour"
    if rng in (field_mask(MINUTE), field_mask(HOUR, MINUTE), field_mask(DAY, HOUR, MINUTE)):
        return "minute"
    return "second"


def _decode_time(s: str, rng: int, itm: _Itm) -> None:
    """DecodeTimeForInterval: h:m[:s[.f]] (or m:s.f); sets (not adds) the microseconds."""
    hour, p = _strtoi(s, 0, _I64)
    if s[p : p + 1] != ":":
        raise _BadFormat
    minute, p = _strtoi(s, p + 1, _I32)
    fsec = 0
    if p == len(s):
        sec = 0
        if rng == field_mask(MINUTE, SECOND):
            _check(hour, _I32)
            hour, minute, sec = 0, hour, minute
    elif s[p] == ".":
        fsec = _rint(_parse_fraction(s[p:]) * 1_000_000)
        _check(hour, _I32)
        hour, minute, sec = 0, hour, minute
    elif s[p] == ":":
        sec, p = _strtoi(s, p + 1, _I32)
        if p < len(s) and s[p] == ".":
            fsec = _rint(_parse_fraction(s[p:]) * 1_000_000)
        elif p != len(s):
            raise _BadFormat
    else:
        raise _BadFormat
    if hour < 0 or not 0 <= minute <= 59 or not 0 <= sec <= 60 or not 0 <= fsec <= USECS_PER_SEC:
        raise _FieldOverflow
    us = fsec + hour * USECS_PER_HOUR
    _check(us, _I64)
    us += minute * USECS_PER_MINUTE
    _check(us, _I64)
    us += sec * USECS_PER_SEC
    itm.usec = _check(us, _I64)


def _add_number(unit: str, val: int, fval: float, itm: _Itm) -> None:
    match unit:
        case "microsecond":
            _adjust_microseconds(val, fval, 1, itm)
        case "millisecond":
            _adjust_microseconds(val, fval, 1000, itm)
        case "second":
            _adjust_microseconds(val, fval, USECS_PER_SEC, itm)
        case "minute":
            _adjust_microseconds(val, fval, USECS_PER_MINUTE, itm)
        case "hour":
            _adjust_microseconds(val, fval, USECS_PER_HOUR, itm)
        case "day":
            _adjust_days(val, 1, itm)
            _adjust_fract_microseconds(fval, USECS_PER_DAY, itm)
        case "week":
            _adjust_days(val, 7, itm)
            _adjust_fract_days(fval, 7, itm)
        case "month":
            _adjust_months(val, itm)
            _adjust_fract_days(fval, 30, itm)
        case "year" | "decade" | "century" | "millennium":
            scale = {"year": 1, "decade": 10, "century": 100, "millennium": 1000}[unit]
            _adjust_years(val, scale, itm)
            _adjust_fract_years(fval, scale, itm)
        case _:
            raise _BadFormat


def decode_interval(fields: list[tuple[str, str]], rng: int, sql_standard: bool = False) -> _Itm:
    """DecodeInterval: the fields right to left."""
    itm = _Itm()
    force_negative = False
    if sql_standard and fields and fields[0][1].startswith("-"):
        force_negative = not any(f[1][:1] in "+-" for f in fields[1:])
    is_before = False
    fmask = 0
    unit: str | None = None  # None: IGNORE_DTF (nothing to the right set a unit)
    for ft, f in reversed(fields):
        tmask = 0
        if ft == TIME or (ft == TZ and ":" in f[1:] and _try_time(f[1:], rng, itm)):
            if ft == TIME:
                _decode_time(f, rng, itm)
            elif f[0] == "-":
                itm.usec = -itm.usec
            if force_negative and itm.usec > 0:
                itm.usec = -itm.usec
            tmask = _TIME_M
            unit = "day"
        elif ft in (TZ, DATE, NUMBER):
            if unit is None:
                unit = _default_unit(rng)
            val, p = _strtoi(f, 0, _I64)
            if f[p : p + 1] == "-":  # SQL "years-months"
                val2, p2 = _strtoi(f, p + 1, _I32)
                if val2 < 0 or val2 >= 12:
                    raise _FieldOverflow
                if p2 != len(f):
                    raise _BadFormat
                unit = "month"
                if f[0] == "-":
                    val2 = -val2
                val = _check(_check(val * 12, _I64) + val2, _I64)
                fval = 0.0
            elif f[p : p + 1] == ".":
                fval = _parse_fraction(f[p:])
                if f[0] == "-":
                    fval = -fval
            elif p == len(f):
                fval = 0.0
            else:
                raise _BadFormat
            if force_negative:
                val, fval = -abs(val), -abs(fval)
            _add_number(unit, val, fval, itm)
            tmask = _UNIT_MASK[unit]
            if unit == "second" and fval != 0:
                tmask = _ALL_SECS_M
            if unit == "hour":
                unit = "day"
        elif ft in (STRING, SPECIAL):
            word = _UNITS.get(_tok10(f))
            if word is None:
                raise _BadFormat
            if word in ("quarter", "timezone"):
                unit = "unsupported"  # a unit DecodeInterval has no case for: a number before it fails
                continue
            if word == "ago":
                is_before = True
                unit = "ago"  # a number directly before 'ago' has no unit
            elif word == "invalid":
                raise _BadFormat
            else:
                unit = word
        else:
            raise _BadFormat
        if tmask & fmask:
            raise _BadFormat
        fmask |= tmask
    if fmask == 0:
        raise _BadFormat
    if is_before:
        itm.usec, itm.mday, itm.mon, itm.year = -itm.usec, -itm.mday, -itm.mon, -itm.year
        _check(itm.usec, _I64)
        _check(itm.mday, _I32)
        _check(itm.mon, _I32)
        _check(itm.year, _I32)
    return itm


def _try_time(s: str, rng: int, itm: _Itm) -> bool:
    try:
        _decode_time(s, rng, itm)
        return True
    except (_BadFormat, _FieldOverflow):
        return False


# ---- DecodeISO8601Interval --------------------------------------------------------------
def _iso_number(s: str, pos: int) -> tuple[int, float, int]:
    """ParseISO8601Number: (integer part, fraction, end)."""
    c = s[pos : pos + 1]
    if not (c.isdigit() and c.isascii() or c in ("-", ".")) or c == "":
        raise _BadFormat
    v, end = _strtod(s, pos)
    if end == pos:
        raise _BadFormat
    if math.isnan(v) or not -1.0e15 <= v <= 1.0e15:
        raise _FieldOverflow
    ip = math.floor(v) if v >= 0 else -math.floor(-v)
    return int(ip), v - ip, end


def _iso_width(s: str, pos: int) -> int:
    if s[pos : pos + 1] == "-":
        pos += 1
    m = re.compile(r"[0-9]*").match(s, pos)
    return len(m.group(0)) if m else 0


def decode_iso8601_interval(s: str) -> _Itm:
    itm = _Itm()
    if len(s) < 2 or s[0] != "P":
        raise _BadFormat
    pos, n = 1, len(s)
    datepart, havefield = True, False
    while pos < n:
        if s[pos] == "T":
            datepart, havefield = False, False
            pos += 1
            continue
        start = pos
        val, fval, pos = _iso_number(s, pos)
        unit = s[pos] if pos < n else ""
        pos += 1
        if datepart:
            if unit == "Y":
                _adjust_years(val, 1, itm)
                _adjust_fract_years(fval, 1, itm)
            elif unit == "M":
                _adjust_months(val, itm)
                _adjust_fract_days(fval, 30, itm)
            elif unit == "W":
                _adjust_days(val, 7, itm)
                _adjust_fract_days(fval, 7, itm)
            elif unit == "D":
                _adjust_days(val, 1, itm)
                _adjust_fract_microseconds(fval, USECS_PER_DAY, itm)
            elif unit in ("T", "", "-"):
                if unit != "-" and _iso_width(s, start) == 8 and not havefield:
                    _adjust_years(_ctrunc(val, 10000), 1, itm)
                    _adjust_months(_cmod(_ctrunc(val, 100), 100), itm)
                    _adjust_days(_cmod(val, 100), 1, itm)
                    _adjust_fract_microseconds(fval, USECS_PER_DAY, itm)
                    if unit == "":
                        return itm
                    datepart, havefield = False, False
                    continue
                if havefield:
                    raise _BadFormat
                _adjust_years(val, 1, itm)
                _adjust_fract_years(fval, 1, itm)
                if unit == "":
                    return itm
                if unit == "T":
                    datepart, havefield = False, False
                    continue
                val, fval, pos = _iso_number(s, pos)
                _adjust_months(val, itm)
                _adjust_fract_days(fval, 30, itm)
                if pos >= n:
                    return itm
                if s[pos] == "T":
                    datepart, havefield = False, False
                    pos += 1
                    continue
                if s[pos] != "-":
                    raise _BadFormat
                val, fval, pos = _iso_number(s, pos + 1)
                _adjust_days(val, 1, itm)
                _adjust_fract_microseconds(fval, USECS_PER_DAY, itm)
                if pos >= n:
                    return itm
                if s[pos] == "T":
                    datepart, havefield = False, False
                    pos += 1
                    continue
                raise _BadFormat
            else:
                raise _BadFormat
        else:
            if unit == "H":
                _adjust_microseconds(val, fval, USECS_PER_HOUR, itm)
            elif unit == "M":
                _adjust_microseconds(val, fval, USECS_PER_MINUTE, itm)
            elif unit == "S":
                _adjust_microseconds(val, fval, USECS_PER_SEC, itm)
            elif unit in ("", ":"):
                if unit == "" and _iso_width(s, start) == 6 and not havefield:
                    _adjust_microseconds(_ctrunc(val, 10000), 0, USECS_PER_HOUR, itm)
                    _adjust_microseconds(_cmod(_ctrunc(val, 100), 100), 0, USECS_PER_MINUTE, itm)
                    _adjust_microseconds(_cmod(val, 100), 0, USECS_PER_SEC, itm)
                    _adjust_fract_microseconds(fval, 1, itm)
                    return itm
                if havefield:
                    raise _BadFormat
                _adjust_microseconds(val, fval, USECS_PER_HOUR, itm)
                if unit == "":
                    return itm
                val, fval, pos = _iso_number(s, pos)
                _adjust_microseconds(val, fval, USECS_PER_MINUTE, itm)
                if pos >= n:
                    return itm
                if s[pos] != ":":
                    raise _BadFormat
                val, fval, pos = _iso_number(s, pos + 1)
                _adjust_microseconds(val, fval, USECS_PER_SEC, itm)
                if pos >= n:
                    return itm
                raise _BadFormat
            else:
                raise _BadFormat
        havefield = True
    return itm


def _ctrunc(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - _ctrunc(a, b) * b


# ---- interval_in ------------------------------------------------------------------------
def parse_interval(s: str, typmod: int = -1, sql_standard: bool = False) -> Interval:
    """interval_in(s, typmod): text -> Interval, rejecting what PostgreSQL 15 rejects."""
    rng = typmod_range(typmod)
    try:
        try:
            itm = decode_interval(parse_date_time_fields(s), rng, sql_standard)
        except _BadFormat:
            itm = decode_iso8601_interval(s)
    except _BadFormat:
        raise SqlError(INVALID_DATETIME_FORMAT, f'invalid input syntax for type interval: "{s}"') from None
    except _FieldOverflow:
        raise SqlError(INTERVAL_FIELD_OVERFLOW, f'interval field value out of range: "{s}"') from None
    months = itm.year * 12 + itm.mon
    if not _I32[0] <= months <= _I32[1]:
        raise SqlError(DATETIME_FIELD_OVERFLOW, "interval out of range")
    return adjust_interval(Interval(months, itm.mday, itm.usec), typmod)


_SCALES = [1_000_000, 100_000, 10_000, 1000, 100, 10, 1]


def adjust_interval(iv: Interval, typmod: int) -> Interval:
    """AdjustIntervalForTypmod: zero the fields right of the qualifier's last field, round
    the microseconds to the precision (half away from zero)."""
    if typmod < 0:
        return iv
    rng, prec = typmod_range(typmod), typmod_precision(typmod)
    months, days, us = iv.months, iv.days, iv.micros
    if rng == field_mask(YEAR):
        months, days, us = _ctrunc(months, 12) * 12, 0, 0
    elif rng in (field_mask(MONTH), field_mask(YEAR, MONTH)):
        days, us = 0, 0
    elif rng == field_mask(DAY):
        us = 0
    elif rng in (field_mask(HOUR), field_mask(DAY, HOUR)):
        us = _ctrunc(us, USECS_PER_HOUR) * USECS_PER_HOUR
    elif rng in (field_mask(MINUTE), field_mask(DAY, HOUR, MINUTE), field_mask(HOUR, MINUTE)):
        us = _ctrunc(us, USECS_PER_MINUTE) * USECS_PER_MINUTE
    if prec != FULL_PRECISION:
        us = round_micros(us, prec)
    return Interval(months, days, us)


def round_micros(us: int, precision: int) -> int:
    """Round microseconds to `precision` fractional digits, half away from zero."""
    if precision >= 6:
        return us
    scale = _SCALES[precision]
    r = (abs(us) + scale // 2) // scale * scale
    return r if us >= 0 else -r
