"""The pure parts of temporal filters and dataflow expiration (no Spark): the validity bounds
each comparison gives (checked against evaluating the comparison itself at every time around
the bound), which dataflows the delta renderer takes, the expiration rules, and the system
variable's parsing."""

from __future__ import annotations

import pytest

from compute.expiration import Replica, dataflow_expiration, merged_until
from compute.plan import lir
from compute.plan.temporal import NotTemporal, bounds_of, split
from server.session import Session, format_offset_ms, parse_offset_ms
from sql.errors import SqlError
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal
from sql.types import BOOL, INT8, MZ_TIMESTAMP, TIMESTAMPTZ

MZ_NOW = CallVariadic("mz_now", (), MZ_TIMESTAMP)
OPS = {"eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
       "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _valid(bounds, value: int, t: int, micros: bool) -> bool:
    """lower <= t < upper with the bounds evaluated at `value` (the other side)."""
    ok = True
    for b in bounds:
        v = value
        if b.rounding == "floor":
            v = value // 1000
        elif b.rounding == "ceil":
            v = -((-value) // 1000)
        v += b.plus
        ok = ok and (t < v if b.upper else v <= t)
    return ok


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("flipped", [False, True])
def test_bounds_agree_with_the_comparison_at_every_time(op: str, flipped: bool) -> None:
    e = Column(0, MZ_TIMESTAMP)
    p = CallBinary(op, e, MZ_NOW, BOOL) if flipped else CallBinary(op, MZ_NOW, e, BOOL)
    bounds = bounds_of(p)
    for value in (-3, 0, 5, 1000):
        for t in range(value - 3, value + 4):
            expected = OPS[op](value, t) if flipped else OPS[op](t, value)
            assert _valid(bounds, value, t, False) == expected, (op, flipped, value, t)


@pytest.mark.parametrize("op", sorted(OPS))
def test_mz_now_cast_to_timestamptz_rounds_exactly(op: str) -> None:
    """mz_now()::timestamptz <op> e compares T·1000 with e in µs."""
    p = CallBinary(op, CallUnary("cast", MZ_NOW, TIMESTAMPTZ), Column(0, TIMESTAMPTZ), BOOL)
    bounds = bounds_of(p)
    for us in (-2500, -2000, -1, 0, 1, 999, 1000, 1001, 4500):
        for t in range(us // 1000 - 3, us // 1000 + 4):
            assert _valid(bounds, us, t, True) == OPS[op](t * 1000, us), (op, us, t)


def test_other_uses_of_mz_now_are_not_temporal() -> None:
    for p in (CallBinary("ne", MZ_NOW, Column(0, MZ_TIMESTAMP), BOOL),
              CallBinary("le", MZ_NOW, MZ_NOW, BOOL),
              CallBinary("le", CallUnary("cast", MZ_NOW, INT8), Column(0, INT8), BOOL)):
        with pytest.raises(NotTemporal):
            bounds_of(p)
    with pytest.raises(NotTemporal):
        split(lir.Mfp(1, (MZ_NOW,), ()))
    m = lir.Mfp(1, (), (CallBinary("le", MZ_NOW, Column(0, MZ_TIMESTAMP), BOOL),
                        CallBinary("gt", Column(0, MZ_TIMESTAMP), Literal(0, MZ_TIMESTAMP), BOOL)))
    t = split(m)
    assert t is not None and len(t.mfp.predicates) == 1 and len(t.uppers) == 1 and not t.lowers
    assert split(lir.Mfp(1)) is None


def test_expiration_rules() -> None:
    assert dataflow_expiration(None, True, 10) is None  # off
    assert dataflow_expiration(100, False, 10) is None  # no table / view input
    assert dataflow_expiration(100, True, None) is None  # inputs' upper empty
    assert dataflow_expiration(100, True, 10) == 100  # the replica's expiration
    assert dataflow_expiration(100, True, 150) == 150  # the upper, already beyond it
    assert merged_until(None, 5) == 5 and merged_until(3, 5) == 3 and merged_until(7, None) == 7
    r = Replica(1000)
    assert r.expiration(0) is None and r.expiration(500) == 1500
    r.restart(2000)
    assert r.expiration(500) == 2500 and r.restarts == 1


def test_expiration_offset_variable() -> None:
    assert parse_offset_ms("x", "1 day") == 86_400_000
    assert parse_offset_ms("x", "30s") == 30_000 == parse_offset_ms("x", "00:00:30")
    assert parse_offset_ms("x", "0") == 0
    assert [format_offset_ms(v) for v in (0, 86_400_000, 2 * 86_400_000 + 3_600_000, 30_000, 250)] == \
        ["0", "1day", "2days 1h", "30s", "250ms"]
    for bad in ("-1 day", "soon"):
        with pytest.raises(SqlError) as e:
            parse_offset_ms("x", bad)
        assert e.value.sqlstate == "22023"
    s = Session("u", "materialize", {})
    assert s.get("compute_replica_expiration_offset") == "0"
    with pytest.raises(SqlError) as e:
        s.set("compute_replica_expiration_offset", "1 day")
    assert e.value.sqlstate == "55P02"
    s.set("compute_replica_expiration_offset", "1 day", system=True)
    assert s.get("compute_replica_expiration_offset") == "1day"
