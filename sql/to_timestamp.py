"""to_timestamp(text, format) as PostgreSQL 15 computes it (formatting.c: parse_format,
DCH_from_char, do_to_timestamp), for the patterns YYYY MM DD HH24 HH12 HH MI SS MS US AM PM
A.M. P.M. Mon Month DY Day TZH TZM (each in its spellings, the FM prefix allowed) with the
session time zone UTC (the only one the project runs with). Every other pattern of
PostgreSQL's keyword table (YY, DDD, J, TZ, FX, TH, ...) is 0A000 naming it, never read as
text; a result PostgreSQL would give outside years 1..9999 (no year given: 1 BC) is 0A000.
Errors keep PostgreSQL's SQLSTATEs: 22007 (bad format input), 22008 (field out of range).
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sql.errors import SqlError, unsupported
from sql.numfmt import quoted_text
from sql.scalar import CallBinary, Literal
from sql.types import TIMESTAMPTZ

INVALID_DATETIME_FORMAT = "22007"
DATETIME_FIELD_OVERFLOW = "22008"

# PostgreSQL's DCH keyword table, in its search order (first match by prefix wins), with
# each keyword's is_digit flag; None: a keyword this module does not implement (0A000)
_KEYWORDS: tuple[tuple[str, str | None, bool], ...] = (
    ("A.D.", None, False), ("A.M.", "ampm_long", False), ("AD", None, False), ("AM", "ampm", False),
    ("B.C.", None, False), ("BC", None, False), ("CC", None, True),
    ("DAY", "day", False), ("DDD", None, True), ("DD", "dd", True), ("DY", "dy", False), ("Day", "day", False),
    ("Dy", "dy", False), ("D", None, True),
    ("FF1", None, False), ("FF2", None, False), ("FF3", None, False), ("FF4", None, False), ("FF5", None, False),
    ("FF6", None, False), ("FX", None, False),
    ("HH24", "hh24", True), ("HH12", "hh12", True), ("HH", "hh12", True),
    ("IDDD", None, True), ("ID", None, True), ("IW", None, True), ("IYYY", None, True), ("IYY", None, True),
    ("IY", None, True), ("I", None, True), ("J", None, True),
    ("MI", "mi", True), ("MM", "mm", True), ("MONTH", "month", False), ("MON", "mon", False), ("MS", "ms", True),
    ("Month", "month", False), ("Mon", "mon", False), ("OF", None, False),
    ("P.M.", "ampm_long", False), ("PM", "ampm", False), ("Q", None, True), ("RM", None, False),
    ("SSSSS", None, True), ("SSSS", None, True), ("SS", "ss", True),
    ("TZH", "tzh", False), ("TZM", "tzm", True), ("TZ", None, False), ("US", "us", True),
    ("WW", None, True), ("W", None, True),
    ("Y,YYY", None, True), ("YYYY", "yyyy", True), ("YYY", None, True), ("YY", None, True), ("Y", None, True),
    ("a.d.", None, False), ("a.m.", "ampm_long", False), ("ad", None, False), ("am", "ampm", False),
    ("b.c.", None, False), ("bc", None, False), ("cc", None, True),
    ("day", "day", False), ("ddd", None, True), ("dd", "dd", True), ("dy", "dy", False), ("d", None, True),
    ("ff1", None, False), ("ff2", None, False), ("ff3", None, False), ("ff4", None, False), ("ff5", None, False),
    ("ff6", None, False), ("fx", None, False),
    ("hh24", "hh24", True), ("hh12", "hh12", True), ("hh", "hh12", True),
    ("iddd", None, True), ("id", None, True), ("iw", None, True), ("iyyy", None, True), ("iyy", None, True),
    ("iy", None, True), ("i", None, True), ("j", None, True),
    ("mi", "mi", True), ("mm", "mm", True), ("month", "month", False), ("mon", "mon", False), ("ms", "ms", True),
    ("of", None, False), ("p.m.", "ampm_long", False), ("pm", "ampm", False), ("q", None, True), ("rm", None, False),
    ("sssss", None, True), ("ssss", None, True), ("ss", "ss", True),
    ("tzh", "tzh", False), ("tzm", "tzm", True), ("tz", None, False), ("us", "us", True),
    ("ww", None, True), ("w", None, True),
    ("y,yyy", None, True), ("yyyy", "yyyy", True), ("yyy", None, True), ("yy", None, True), ("y", None, True),
)
_PREFIXES = ("FM", "fm", "TM", "tm")
_POSTFIXES = ("TH", "th", "SP")

_MONTHS = tuple(calendar.month_abbr[i] for i in range(1, 13))
_MONTHS_FULL = tuple(calendar.month_name[i] for i in range(1, 13))
_DAYS_FULL = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_DAYS = tuple(d[:3] for d in _DAYS_FULL)
_AMPM = ("am", "pm", "AM", "PM")
_AMPM_LONG = ("a.m.", "p.m.", "A.M.", "P.M.")
_SPACE = " \t\n\r\f\v"


@dataclass(frozen=True, slots=True)
class Node:
    kind: str  # action | space | separator | char
    text: str  # the keyword, or the character
    action: str = ""
    is_digit: bool = False
    fm: bool = False


def _is_separator(c: str) -> bool:
    """ASCII printable, not a letter or digit (formatting.c's is_separator_char)."""
    return 0x20 < ord(c) < 0x7F and not c.isalnum()


@cache
def parse_format(fmt: str) -> tuple[Node, ...]:
    """The format's nodes; 0A000 for a pattern or modifier this module does not implement."""
    out: list[Node] = []
    i = 0
    while i < len(fmt):
        fm = False
        prefix = next((p for p in _PREFIXES if fmt.startswith(p, i)), None)
        if prefix is not None:
            if prefix.upper() == "TM":
                raise unsupported("to_timestamp with the TM modifier")
            fm, i = True, i + 2
        kw = next((k for k in _KEYWORDS if fmt.startswith(k[0], i)), None) if i < len(fmt) else None
        if kw is not None:
            name, action, digit = kw
            if action is None:
                raise unsupported(f'to_timestamp format pattern "{name}"')
            i += len(name)
            if any(fmt.startswith(p, i) for p in _POSTFIXES):
                raise unsupported(f'to_timestamp with the "{fmt[i:i + 2]}" suffix')
            out.append(Node("action", name, action, digit, fm))
            continue
        if fm:
            raise unsupported("to_timestamp with FM not followed by a pattern")
        if i >= len(fmt):
            break
        if fmt[i] == '"':
            chars, i = quoted_text(fmt, i)
            out += [Node("char", c) for c in chars]
            continue
        if fmt[i] == "\\" and fmt[i + 1: i + 2] == '"':
            i += 1
        c = fmt[i]
        out.append(Node("separator" if _is_separator(c) else "space" if c in _SPACE else "char", c))
        i += 1
    return tuple(out)


@dataclass(slots=True)
class _Fields:
    values: dict[str, int] = field(default_factory=dict)
    clock12: bool = False
    tzsign: int = 0

    def set(self, name: str, v: int, node: Node) -> None:
        """from_char_set_int: a second, different non-zero value of a field is an error."""
        old = self.values.get(name, 0)
        if old != 0 and old != v:
            raise SqlError(INVALID_DATETIME_FORMAT, f'conflicting values for "{node.text}" field in formatting string',
                           detail="This value contradicts a previous setting for the same field type.")
        self.values[name] = v

    def get(self, name: str) -> int:
        return self.values.get(name, 0)


def _next_is_separator(nodes: tuple[Node, ...], k: int) -> bool:
    """formatting.c's is_next_separator: the field after node k cannot be digits."""
    if k + 1 >= len(nodes):
        return True
    n = nodes[k + 1]
    if n.kind == "action":
        return not n.is_digit
    return not ("0" <= n.text <= "9")


def _strtol(s: str, i: int) -> tuple[int | None, int]:
    """C strtol from s[i]: (value or None when no digits, end index)."""
    j = i
    while j < len(s) and s[j] in _SPACE:
        j += 1
    sign = 1
    if j < len(s) and s[j] in "+-":
        sign = -1 if s[j] == "-" else 1
        j += 1
    k = j
    while k < len(s) and "0" <= s[k] <= "9":
        k += 1
    if k == j:
        return None, i
    return sign * int(s[j:k]), k


def _parse_int(s: str, pos: int, length: int, nodes: tuple[Node, ...], k: int) -> tuple[int, int, int]:
    """from_char_parse_int_len: (value, new position, characters consumed incl. leading space)."""
    node, init = nodes[k], pos
    while pos < len(s) and s[pos] in _SPACE:
        pos += 1
    copy = s[pos: pos + length]
    if node.fm or _next_is_separator(nodes, k):
        value, pos = _strtol(s, init)
    else:
        if len(copy) < length:
            raise SqlError(INVALID_DATETIME_FORMAT, f'source string too short for "{node.text}" formatting field',
                           detail=f"Field requires {length} characters, but only {len(copy)} remain.",
                           hint='If your source string is not fixed-width, try using the "FM" modifier.')
        value, end = _strtol(copy, 0)
        used = end if value is not None else 0
        if 0 < used < length:
            raise SqlError(INVALID_DATETIME_FORMAT, f'invalid value "{copy}" for "{node.text}"',
                           detail=f"Field requires {length} characters, but only {used} could be parsed.",
                           hint='If your source string is not fixed-width, try using the "FM" modifier.')
        pos += used
    if pos == init:
        raise SqlError(INVALID_DATETIME_FORMAT, f'invalid value "{copy}" for "{node.text}"', detail="Value must be an integer.")
    if value is None:
        value = 0
    if not -(2**31) <= value <= 2**31 - 1:
        raise SqlError(DATETIME_FIELD_OVERFLOW, f'value for "{node.text}" in source string is out of range',
                       detail=f"Value must be in the range {-(2**31)} to {2**31 - 1}.")
    return value, pos, pos - init


def _seq_search(s: str, pos: int, names: tuple[str, ...], node: Node) -> tuple[int, int]:
    """The first name that the input continues with, ASCII case-insensitively: (index, end)."""
    for idx, name in enumerate(names):
        if s[pos: pos + len(name)].lower() == name.lower():
            return idx, pos + len(name)
    raise SqlError(INVALID_DATETIME_FORMAT, f'invalid value "{s[pos:pos + len(max(names, key=len))]}" for "{node.text}"',
                   detail="The given value did not match any of the allowed values for this field.")


def _from_char(s: str, nodes: tuple[Node, ...]) -> _Fields:
    """DCH_from_char outside FX mode."""
    out = _Fields()
    pos = extra_skip = 0
    for k, n in enumerate(nodes):
        if pos >= len(s):
            break
        if n.kind == "action" or k == 0:
            while pos < len(s) and s[pos] in _SPACE:
                pos += 1
                extra_skip += 1
        if n.kind in ("space", "separator"):
            extra_skip -= 1
            if pos < len(s) and (s[pos] in _SPACE or _is_separator(s[pos])):
                pos += 1
                extra_skip += 1
            continue
        if n.kind == "char":
            if extra_skip > 0:
                extra_skip -= 1
            else:
                pos += 1
            continue
        pos = _action(s, pos, nodes, k, out, extra_skip)
        extra_skip = 0
        while pos < len(s) and s[pos] in _SPACE:
            pos += 1
            extra_skip += 1
    return out


def _action(s: str, pos: int, nodes: tuple[Node, ...], k: int, out: _Fields, extra_skip: int) -> int:
    n = nodes[k]
    match n.action:
        case "yyyy" | "mm" | "dd" | "mi" | "ss":
            v, pos, _ = _parse_int(s, pos, len(n.text), nodes, k)
            out.set(n.action, v, n)
        case "hh24" | "hh12":
            v, pos, _ = _parse_int(s, pos, 2, nodes, k)
            out.set("hh", v, n)
            out.clock12 = out.clock12 or n.action == "hh12"
        case "ms":
            v, pos, used = _parse_int(s, pos, 3, nodes, k)
            out.set("ms", v, n)
            out.values["ms"] = v * {1: 100, 2: 10}.get(used, 1)
        case "us":
            v, pos, used = _parse_int(s, pos, 6, nodes, k)
            out.set("us", v, n)
            out.values["us"] = v * {1: 100000, 2: 10000, 3: 1000, 4: 100, 5: 10}.get(used, 1)
        case "ampm" | "ampm_long":
            idx, pos = _seq_search(s, pos, _AMPM if n.action == "ampm" else _AMPM_LONG, n)
            out.set("pm", idx % 2, n)
            out.clock12 = True
        case "mon" | "month":
            idx, pos = _seq_search(s, pos, _MONTHS if n.action == "mon" else _MONTHS_FULL, n)
            out.set("mm", idx + 1, n)
        case "dy" | "day":
            idx, pos = _seq_search(s, pos, _DAYS if n.action == "dy" else _DAYS_FULL, n)
            out.set("d", idx, n)  # the day of the week is read, and not used;
            out.values["d"] = idx + 1  # stored one up after the check, as formatting.c does
        case "tzh":
            if s[pos] in "+- ":
                out.tzsign = -1 if s[pos] == "-" else 1
                pos += 1
            else:
                out.tzsign = -1 if extra_skip > 0 and pos > 0 and s[pos - 1] == "-" else 1
            v, pos, _ = _parse_int(s, pos, 2, nodes, k)
            out.set("tzh", v, n)
        case _:  # tzm
            if not out.tzsign:
                out.tzsign = 1
            v, pos, _ = _parse_int(s, pos, 2, nodes, k)
            out.set("tzm", v, n)
    return pos


def _overflow() -> SqlError:
    return SqlError(DATETIME_FIELD_OVERFLOW, 'date/time field value out of range: "timestamp"')


def to_timestamp(text: str, fmt: str) -> dt.datetime:
    """The timestamptz (an aware UTC datetime) to_timestamp(text, fmt) returns."""
    f = _from_char(text, parse_format(fmt))
    hour = f.get("hh")
    if f.clock12:
        if not 1 <= hour <= 12:
            raise SqlError(INVALID_DATETIME_FORMAT, f'hour "{hour}" is invalid for the 12-hour clock',
                           hint="Use the 24-hour clock, or give an hour between 1 and 12.")
        if f.get("pm") and hour < 12:
            hour += 12
        elif not f.get("pm") and hour == 12:
            hour = 0
    year, month, day = f.get("yyyy"), f.get("mm") or 1, f.get("dd") or 1
    if not 1 <= year <= 9999:  # no year given (or 0) is 1 BC in PostgreSQL
        raise unsupported(f"to_timestamp of the year {year if year else '1 BC'}")
    if f.get("mm") and not 1 <= month <= 12:
        raise _overflow()
    if f.get("dd") and not 1 <= day <= 31:
        raise _overflow()
    if f.get("mm") and f.get("dd") and day > calendar.monthrange(year, month)[1]:
        raise _overflow()
    fsec = f.get("ms") * 1000 + f.get("us")
    minute, second = f.get("mi"), f.get("ss")
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60 and 0 <= fsec < 1_000_000):
        raise _overflow()
    offset = 0
    if f.tzsign:
        tzh, tzm = f.get("tzh"), f.get("tzm")
        if not (0 <= tzh <= 15 and 0 <= tzm <= 59):
            raise unsupported("to_timestamp with a TZH / TZM value outside 00:00 .. 15:59")
        offset = f.tzsign * (tzh * 3600 + tzm * 60)
    local = dt.datetime(year, month, day, hour, minute, second, fsec)
    try:
        return (local - dt.timedelta(seconds=offset)).replace(tzinfo=dt.UTC)
    except OverflowError:
        raise unsupported("to_timestamp of a time outside years 1..9999") from None


def bind_to_timestamp(args: tuple[Any, ...]) -> Any:
    """The bound call: a literal format is checked at plan time (an unimplemented pattern is
    0A000 then); literal arguments fold when they evaluate (an error is raised where the
    value is computed, if it ever is)."""
    text, fmt = args
    if isinstance(fmt, Literal) and fmt.value is not None:
        parse_format(str(fmt.value))
        if isinstance(text, Literal) and text.value is not None:
            try:
                return Literal(to_timestamp(str(text.value), str(fmt.value)), TIMESTAMPTZ)
            except SqlError:
                pass
    return CallBinary("to_timestamp", text, fmt, TIMESTAMPTZ)
