"""sql.timezones: the zone a literal of AT TIME ZONE names (pure; PostgreSQL's reading)."""

from __future__ import annotations

import pytest

from sql.errors import SqlError
from sql.timezones import interval_zone_id, zone_id
from sql.types import Interval


@pytest.mark.parametrize(("spec", "zone"), [
    ("UTC", "UTC"), ("gmt", "UTC"), ("America/New_York", "America/New_York"), ("america/new_york", "America/New_York"),
    ("+05", "-05:00:00"), ("-3", "+03:00:00"), ("05:30", "-05:30:00"), ("EST", "EST"),
])
def test_zone_names(spec: str, zone: str) -> None:
    """IANA names match case-insensitively; a bare number is POSIX (hours WEST of UTC)."""
    assert zone_id(spec) == zone


@pytest.mark.parametrize(("spec", "state"), [("MSK", "0A000"), ("America/Does_not_exist", "22023"), ("+16", "22023")])
def test_zone_errors(spec: str, state: str) -> None:
    with pytest.raises(SqlError) as e:
        zone_id(spec)
    assert e.value.sqlstate == state


def test_interval_zones_are_offsets_east() -> None:
    assert interval_zone_id(Interval(0, 0, -8 * 3_600_000_000)) == "-08:00:00"
    assert interval_zone_id(Interval(0, 0, 5 * 3_600_000_000 + 30 * 60_000_000)) == "+05:30:00"
    with pytest.raises(SqlError):
        interval_zone_id(Interval(0, 1, 0))
