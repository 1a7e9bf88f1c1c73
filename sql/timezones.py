"""Time zones of `x AT TIME ZONE zone` / `timezone(zone, x)`, as PostgreSQL reads them: the
zone named by a literal becomes a zone id both Python's and Java's tz databases know (an IANA
name, or a fixed `±hh:mm:ss` offset east of UTC)."""

from __future__ import annotations

import re
import zoneinfo
from functools import cache

from sql.errors import FEATURE_NOT_SUPPORTED, SqlError
from sql.types import Interval

INVALID_PARAMETER_VALUE = "22023"

_NUMERIC = re.compile(r"(?P<sign>[+-]?)(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?::(?P<s>\d{2}))?")
_ABBREV = re.compile(r"[A-Za-z]{2,6}")


@cache
def _iana_names() -> dict[str, str]:
    """Lower-cased IANA zone name -> its spelling (Postgres matches zone names case-insensitively)."""
    return {n.lower(): n for n in zoneinfo.available_timezones()}


def _offset_id(seconds_east: int) -> str:
    sign = "-" if seconds_east < 0 else "+"
    h, rem = divmod(abs(seconds_east), 3600)
    m, s = divmod(rem, 60)
    return f"{sign}{h:02d}:{m:02d}:{s:02d}"


def zone_id(name: str) -> str:
    """The zone a text zone spec names. A bare number is POSIX-style (`'+05'` is five hours
    WEST of UTC, as in Postgres); `UTC`/`GMT`/`Z` are UTC; other names are IANA names."""
    spec = name.strip()
    if spec.upper() in ("UTC", "GMT", "Z", "ZULU", "UCT"):
        return "UTC"
    if m := _NUMERIC.fullmatch(spec):
        h, mi, s = int(m.group("h")), int(m.group("m") or 0), int(m.group("s") or 0)
        if h > 15 or mi > 59 or s > 59:
            raise SqlError(INVALID_PARAMETER_VALUE, f'time zone "{name}" not recognized')
        west = (h * 60 + mi) * 60 + s
        return _offset_id(west if m.group("sign") == "-" else -west)
    iana = _iana_names().get(spec.lower())
    if iana is not None:
        return iana
    if _ABBREV.fullmatch(spec):
        raise SqlError(FEATURE_NOT_SUPPORTED, f'time zone abbreviation "{name}" is not supported',
                       hint="Use a full time zone name (Europe/Moscow) or an interval offset.")
    raise SqlError(INVALID_PARAMETER_VALUE, f'time zone "{name}" not recognized')


def interval_zone_id(iv: Interval) -> str:
    """The fixed zone of `AT TIME ZONE INTERVAL '-08:00'` (an offset east of UTC, ISO sign)."""
    if iv.months or iv.days:
        raise SqlError(INVALID_PARAMETER_VALUE, "interval time zone must not include months or days")
    seconds, frac = divmod(iv.micros, 1_000_000)
    if frac:
        raise SqlError(FEATURE_NOT_SUPPORTED, "interval time zones with fractional seconds")
    if abs(seconds) > 15 * 3600 + 59 * 60 + 59:
        raise SqlError(INVALID_PARAMETER_VALUE, "interval time zone is out of range")
    return _offset_id(seconds)


_ISO_OFFSET = re.compile(r"(?P<sign>[+-])(?P<h>\d*)(?::(?P<m>\d*)(?::(?P<s>\d*))?)?")


def iso_zone_id(name: str) -> str:
    """The zone of make_timestamptz's zone argument (parse_sane_timezone): a number needs a
    sign and is ISO-style (`'+05'` is five hours EAST of UTC; `+hh`, `+hhmm`, `+hh:mm[:ss]`),
    anything else is a zone name as for AT TIME ZONE."""
    if name[:1].isdigit():
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid input syntax for type numeric time zone: "{name}"',
                       hint='Numeric time zones must have "-" or "+" as first character.')
    m = _ISO_OFFSET.fullmatch(name)
    if m is None:
        return zone_id(name)
    h, mi, s = (int(m.group(g) or 0) for g in ("h", "m", "s"))
    if m.group("m") is None and len(name) > 3:
        h, mi = divmod(h, 100)
    if h > 15 or mi > 59 or s > 59:
        raise SqlError(INVALID_PARAMETER_VALUE, f'numeric time zone "{name}" out of range')
    east = (h * 60 + mi) * 60 + s
    return _offset_id(-east if m.group("sign") == "-" else east)
