"""to_timestamp(text, text) (sql.to_timestamp, no Spark) against a real PostgreSQL 15 over
many (input, format) pairs: the same timestamptz, or the same SQLSTATE (22007 / 22008); the
patterns it does not implement are 0A000 naming them, never a different answer. The
planner: a literal format is checked at plan time, literal arguments fold."""

from __future__ import annotations

import calendar
import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

import pytest

from sql.errors import SqlError
from sql.to_timestamp import to_timestamp

SUPERSET = "YYYY-MM-DD HH24:MI:SS.US"

CASES: list[tuple[str, str]] = [
    # Superset's date filters and the common ISO layouts
    ("2024-01-01 00:00:00.000000", SUPERSET), ("2024-02-29 23:59:59.999999", SUPERSET),
    ("2023-12-31 12:34:56.5", SUPERSET), ("2024-01-01 00:00:00", "YYYY-MM-DD HH24:MI:SS"),
    ("2024-01-01", "YYYY-MM-DD"), ("2024-07", "YYYY-MM"), ("1999", "YYYY"), ("20240102", "YYYYMMDD"),
    ("20240102 030405", "YYYYMMDD HH24MISS"), ("2024/1/2 3:4:5", "YYYY/MM/DD HH24:MI:SS"),
    ("2024-01-02T03:04:05", 'YYYY-MM-DD"T"HH24:MI:SS'),
    ("  2024-01-02", "YYYY-MM-DD"), ("2024 - 01 - 02", "YYYY-MM-DD"), ("2024-01-02", "YYYY MM DD"),
    ("2024-01-02 03:04:05.123", "YYYY-MM-DD HH24:MI:SS.MS"), ("2024-01-02 03:04:05.1", "YYYY-MM-DD HH24:MI:SS.MS"),
    ("2024-01-02 03:04:05.12", "YYYY-MM-DD HH24:MI:SS.MS"), ("2024-01-02 03:04:05.12345", SUPERSET),
    ("2024-01-02 03:04:05.123.456", "YYYY-MM-DD HH24:MI:SS.MS.US"),
    ("2024-01-02 03:04:05 extra", "YYYY-MM-DD HH24:MI:SS"), ("2024-01-02", "YYYY-MM-DD HH24:MI:SS"),
    ("2024-01-02 3:04 PM", "YYYY-MM-DD HH:MI AM"), ("2024-01-02 12:04 AM", "YYYY-MM-DD HH12:MI PM"),
    ("2024-01-02 12:04 pm", "YYYY-MM-DD HH12:MI AM"), ("2024-01-02 11:04 p.m.", "YYYY-MM-DD HH:MI A.M."),
    ("2024-01-02 11:04 a.m.", "YYYY-MM-DD hh:mi p.m."), ("2024-01-02 09", "yyyy-mm-dd hh24"),
    ("05 Mar 2024", "DD Mon YYYY"), ("05 MARCH 2024", "DD Month YYYY"), ("05 march 2024", "DD MONTH YYYY"),
    ("March 5, 2024", "Month DD, YYYY"), ("Tue 05 Mar 2024", "Dy DD Mon YYYY"),
    ("Tuesday 05 Mar 2024", "Day DD Mon YYYY"), ("sept 5 2024", "Mon DD YYYY"),
    ("2024-01-02 03:04:05+05", "YYYY-MM-DD HH24:MI:SSTZH"), ("2024-01-02 03:04:05-05:30", "YYYY-MM-DD HH24:MI:SSTZH:TZM"),
    ("2024-01-02 03:04:05 +02:15", "YYYY-MM-DD HH24:MI:SS TZH:TZM"), ("2024-01-02 00:30 -01", "YYYY-MM-DD HH24:MI TZH"),
    ("2024-1-2", "FMYYYY-FMMM-FMDD"), ("2024-1-2", "YYYY-FMMM-FMDD"), ("24-1-2", "FMYYYY-MM-DD"),
    ("2024-00-10", "YYYY-MM-DD"), ("2024-03-00", "YYYY-MM-DD"),
    ("2024-01-02 00:00:00.1234567", SUPERSET), ("2024x01x02", "YYYYxMMxDD"), ("2024a01b02", "YYYY-MM-DD"),
    ("2024-01-02", "YYYY-MM-DD "), ("2024-01-02 03", "YYYY-MM-DD  HH24"),
    ("2024-+1-02", "YYYY-MM-DD"), ("2024--1-02", "YYYY-MM-DD"), ("2024-1 -02", "YYYY-MM-DD"),
    ("2024 01 02", "YYYY-MM-DD"), ('2024-01-02', 'YYYY"-"MM"-"DD'), ("9999-12-31 23:59:59.999999", SUPERSET),
    ("0001-01-01 00:00:00", "YYYY-MM-DD HH24:MI:SS"),
    # errors: 22007 (the input does not fit the format), 22008 (a field out of range)
    ("2024-13-01", "YYYY-MM-DD"), ("2024-02-30", "YYYY-MM-DD"), ("2023-02-29", "YYYY-MM-DD"),
    ("2024-01-32", "YYYY-MM-DD"), ("2024-01-02 24:00:00", "YYYY-MM-DD HH24:MI:SS"),
    ("2024-01-02 23:60:00", "YYYY-MM-DD HH24:MI:SS"), ("2024-01-02 23:59:60", "YYYY-MM-DD HH24:MI:SS"),
    ("2024-01-02 13:00 PM", "YYYY-MM-DD HH:MI AM"), ("2024-01-02 00:00 AM", "YYYY-MM-DD HH12:MI AM"),
    ("2024-01-02 00:00", "YYYY-MM-DD HH12:MI"), ("abcd-01-02", "YYYY-MM-DD"), ("2024-ab-02", "YYYY-MM-DD"),
    ("2024-01-02 03:04 XM", "YYYY-MM-DD HH:MI AM"), ("05 Foo 2024", "DD Mon YYYY"),
    ("202", "YYYYMMDD"), ("2024011", "YYYYMMDD"), ("2024-01-02 03:04:05.1234", "YYYY-MM-DD HH24:MI:SS.MS"),
    ("2024-01-02 03:04:05.1234567", "YYYY-MM-DD HH24:MI:SS.US"), ("2024-01 Mar", "YYYY-MM Mon"),
    ("2024-01-02 99999999999", "YYYY-MM-DD HH24"),
    # formatting.c checks a repeated day name against the previous one's index plus one
    ("Mon Tue 2024", "Dy Dy YYYY"), ("Mon Wed 2024", "Dy Dy YYYY"), ("Monday Mon 2024", "Day Dy YYYY"),
]

# what sql.to_timestamp refuses (0A000) rather than risk a different answer
REFUSED: list[tuple[str, str]] = [
    ("24-01-02", "YY-MM-DD"), ("2024-123", "YYYY-DDD"), ("2460000", "J"), ("2024 Q1", "YYYY Q"),
    ("10:00", "HH24:MI"), ("", "YYYY"), ("0000-01-01", "YYYY-MM-DD"), ("2024-01-02 UTC", "YYYY-MM-DD TZ"),
    ("2024-01-02", "FXYYYY-MM-DD"), ("2024th", "YYYYTH"), ("2024-01-02 AD", "YYYY-MM-DD AD"),
    ("2024-01-02 00:00 +16", "YYYY-MM-DD HH24:MI TZH"), ("2024 IV", "YYYY RM"), ("2024-W01", "IYYY-WIW"),
    ("2024-01-02T03:04:05", "YYYY-MM-DDTHH24:MI:SS"),  # DD with the TH suffix, then "H24" as text
    ("12024-01-01", "YYYY-MM-DD"), ("20240102", "YYYY-MM-DD"),  # years past 9999 (22008 for the second)
]


@pytest.fixture(scope="module")
def pg() -> Iterator[Any]:
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("to-timestamp-") as dsn:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET TimeZone = 'UTC'")
        yield conn
        conn.close()


def _pg(pg: Any, text: str, fmt: str) -> dt.datetime | str:
    import psycopg

    try:
        return pg.execute("SELECT to_timestamp(%s, %s)", (text, fmt)).fetchone()[0]  # type: ignore[no-any-return]
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


def _ours(text: str, fmt: str) -> dt.datetime | str:
    try:
        return to_timestamp(text, fmt)
    except SqlError as e:
        return f"error {e.sqlstate}"


@pytest.mark.parametrize(("text", "fmt"), CASES)
def test_same_as_postgres(pg: Any, text: str, fmt: str) -> None:
    ours, theirs = _ours(text, fmt), _pg(pg, text, fmt)
    assert ours == theirs, (text, fmt)
    assert ours != "error 0A000"


@pytest.mark.parametrize(("text", "fmt"), REFUSED)
def test_refused_not_wrong(text: str, fmt: str) -> None:
    assert _ours(text, fmt) == "error 0A000"


FORMATS = [SUPERSET, "YYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD HH12:MI:SS AM", "DD Mon YYYY HH24:MI", "Month DD, YYYY",
           "YYYYMMDDHH24MISS", "FMMM/FMDD/YYYY HH:MI PM", "YYYY-MM-DD HH24:MI:SS.MS TZH:TZM", "Dy, DD Mon YYYY HH24:MI:SS"]


def _random_pairs(n: int) -> list[tuple[str, str]]:
    """Values of every field range (some out of it) written in the formats above, some with
    a character changed, dropped or doubled."""
    rng = random.Random(13)
    out = []
    for _ in range(n):
        y, mo, d = rng.randint(1, 9999), rng.randint(0, 13), rng.randint(0, 32)
        h, mi, se, us = rng.randint(0, 25), rng.randint(0, 61), rng.randint(0, 61), rng.randint(0, 999999)
        h12, ampm = rng.randint(0, 13), rng.choice(["AM", "PM", "am", "pm"])
        mon = calendar.month_abbr[rng.randint(1, 12)]
        tz = f"{rng.choice('+-')}{rng.randint(0, 14):02d}:{rng.randint(0, 59):02d}"
        fmt = rng.choice(FORMATS)
        text = {
            SUPERSET: f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{se:02d}.{us:06d}",
            "YYYY-MM-DD HH24:MI:SS": f"{y:04d}-{mo}-{d} {h}:{mi:02d}:{se}",
            "YYYY-MM-DD HH12:MI:SS AM": f"{y:04d}-{mo:02d}-{d:02d} {h12:02d}:{mi:02d}:{se:02d} {ampm}",
            "DD Mon YYYY HH24:MI": f"{d:02d} {mon} {y:04d} {h:02d}:{mi:02d}",
            "Month DD, YYYY": f"{calendar.month_name[rng.randint(1, 12)]} {d}, {y}",
            "YYYYMMDDHH24MISS": f"{y:04d}{mo:02d}{d:02d}{h:02d}{mi:02d}{se:02d}",
            "FMMM/FMDD/YYYY HH:MI PM": f"{mo}/{d}/{y:04d} {h12}:{mi:02d} {ampm}",
            "YYYY-MM-DD HH24:MI:SS.MS TZH:TZM": f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{se:02d}.{us // 1000} {tz}",
            "Dy, DD Mon YYYY HH24:MI:SS": f"{calendar.day_abbr[rng.randint(0, 6)]}, {d:02d} {mon} {y:04d} {h:02d}:{mi:02d}:{se:02d}",
        }[fmt]
        if rng.random() < 0.25 and text:
            i = rng.randrange(len(text))
            text = rng.choice([text[:i] + text[i + 1:], text[:i] + text[i] + text[i:], text[:i] + "x" + text[i + 1:]])
        out.append((text, fmt))
    return out


def test_random_pairs_same_as_postgres(pg: Any) -> None:
    pairs = _random_pairs(600)
    results = [(t, f, _ours(t, f), _pg(pg, t, f)) for t, f in pairs]
    diffs = [r for r in results if r[2] != r[3] and r[2] != "error 0A000"]
    assert not diffs, diffs[:10]
    refused = [r for r in results if r[2] == "error 0A000"]
    assert len(refused) < 30, refused[:10]  # only years PostgreSQL would put before 1 AD / after 9999
    assert sum(isinstance(r[2], dt.datetime) for r in results) > 200


def test_errors_cover_both_sqlstates(pg: Any) -> None:
    """The corpus exercises values and both error classes (the comparison is not vacuous)."""
    results = [_ours(t, f) for t, f in CASES]
    assert sum(isinstance(r, dt.datetime) for r in results) > 50
    assert "error 22007" in results and "error 22008" in results


def test_planner_checks_and_folds() -> None:
    """A literal format is checked at plan time; literal arguments fold to a timestamptz
    literal (Superset's filter is a constant in the plan, so it reaches the source read)."""
    from tests.golden_runner import GoldenSession

    s = GoldenSession()
    try:
        s.run("CREATE TABLE ev (at timestamptz, t text)")
        plan = "\n".join(r[0] for r in s.run(
            f"EXPLAIN OPTIMIZED PLAN FOR SELECT * FROM ev WHERE at >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', '{SUPERSET}')"))
        assert '(#0 >= "2024-01-01 00:00:00+00")' in plan, plan
        plan = "\n".join(r[0] for r in s.run(f"EXPLAIN OPTIMIZED PLAN FOR SELECT to_timestamp(t, '{SUPERSET}') FROM ev"))
        assert "to_timestamp(#1" in plan, plan
        for sql in ("SELECT to_timestamp(t, 'YY-MM-DD') FROM ev", "SELECT to_timestamp(1700000000)"):
            with pytest.raises(SqlError) as e:
                s.run(sql)
            assert e.value.sqlstate == "0A000", sql
    finally:
        s.close()
