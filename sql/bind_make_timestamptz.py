"""make_timestamptz(y, mo, d, h, mi, s, zone) bound as the identity

    make_timestamptz(y, mo, d, h, mi, s, zone) = timezone(zone', make_timestamp(y, mo, d, h, mi, s))

where zone' is the zone read as make_timestamptz reads it (sql.timezones.iso_zone_id: a
signed number is an ISO offset east of UTC, unlike AT TIME ZONE's POSIX one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sql import func, func_names, timezones
from sql.errors import FEATURE_NOT_SUPPORTED, SqlError
from sql.scalar import CallBinary, CallVariadic, Literal
from sql.types import TEXT, TIMESTAMP, TIMESTAMPTZ

if TYPE_CHECKING:
    from sql.bind import Binder
    from sql.hir import HirScalar


def make_timestamptz_at(binder: Binder, args: list[HirScalar]) -> HirScalar:
    """make_timestamptz(y, mo, d, h, mi, s, zone) = make_timestamp(y, mo, d, h, mi, s) AT TIME
    ZONE zone, the zone read as make_timestamptz reads it (sql.timezones.iso_zone_id)."""
    zone = args[6]
    if not (zone.typ.is_string or zone.typ.name == "unknown"):
        raise func_names.no_function("make_timestamptz", [a.typ for a in args])
    if not isinstance(zone, Literal):
        raise SqlError(FEATURE_NOT_SUPPORTED, "make_timestamptz with a time zone that is not a literal not yet supported")
    types, _ = func.function_type("make_timestamp", [a.typ for a in args[:6]])
    ts = CallVariadic("make_timestamp", tuple(binder.coerce(a, t) for a, t in zip(args[:6], types, strict=True)), TIMESTAMP)
    if zone.value is None:
        return Literal(None, TIMESTAMPTZ)
    return CallBinary("timezone", Literal(timezones.iso_zone_id(str(zone.value)), TEXT), ts, TIMESTAMPTZ)
