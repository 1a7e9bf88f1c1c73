"""Datetime input, typmods and output compared row for row with a real PostgreSQL 15:
interval literals as interval_in reads them (qualifiers, ISO 8601, fractions spilling into
lower units), timestamp(p) / time(p) / interval(p) rounding of literals, casts and stored
columns, time zones in timestamptz input, IntervalStyle output, justify_*.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, text_loaded

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.one (x int)",
    "INSERT INTO {s}.one VALUES (1)",
    "CREATE TABLE {s}.d (id int, ts timestamp, tz timestamptz, t text, iv interval)",
    "INSERT INTO {s}.d VALUES"
    " (1, '2020-01-01 00:00:00.666666', '2020-01-01 00:00:00.55+00', '2020-01-01 00:00:00.125', '1 day 01:23:45.6789'),"
    " (2, '1999-12-31 23:59:59.5', '1999-12-31 23:59:59.95+00', '1999-12-31 23:59:59.995', '-1 day -01:23:45.5'),"
    " (3, '2000-01-01 00:00:00.5', '2000-01-01 00:00:00.05+00', '2000-01-01 00:00:00.005', '1 mon 2 days 00:00:00.000005'),"
    " (4, NULL, NULL, NULL, NULL),"
    " (5, '1970-01-01 12:00:00', '1970-01-01 12:00:00+00', '1970-01-01 12:00:00', '-1 mons 40 days -30:00:00')",
    "CREATE TABLE {s}.tm (id int, t time)",
    "INSERT INTO {s}.tm VALUES (1, '00:00:00'), (2, '12:34:56.5'), (3, '00:00:00.00001'), (4, NULL), (5, '23:59:59.999999'), (6, '01:02:03')",
    "CREATE TABLE {s}.tt (id int, t text, f text)",
    "INSERT INTO {s}.tt VALUES (1, '2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US'),"
    " (2, '05 Mar 2024 3:04 PM', 'DD Mon YYYY HH:MI AM'), (3, '2024-1-2 03:04:05+05:30', 'YYYY-FMMM-FMDD HH24:MI:SSTZH:TZM'),"
    " (4, NULL, 'YYYY'), (5, '2024-02-30', 'YYYY-MM-DD'), (6, '2024-01-02 13:00 PM', 'YYYY-MM-DD HH:MI AM')",
    "CREATE TABLE {s}.p (id int, a timestamp(2), b timestamptz(0), c interval minute, e interval(1))",
    "INSERT INTO {s}.p VALUES (1, '2020-01-01 00:00:00.666666', '2020-01-01 00:00:00.5+00', '1 day 01:02:03', '00:00:01.25'),"
    " (2, '1999-12-31 23:59:59.995', '1999-12-31 23:59:59.5+00', '-1 day -01:02:59', '-00:00:01.25')",
    "CREATE TABLE {s}.dd (id int, x date)",
    "INSERT INTO {s}.dd VALUES (1, '1993-12-31'), (2, '1994-01-01'), (3, '1994-01-02'), (4, NULL), (5, '1995-01-01'),"
    " (6, '0044-03-15'), (7, '1994-12-31')",
]

# a date compared with a timestamp literal (folded: compared as a date, sql.transforms.fold_constants
# _unwrap_date_cast): every operator, midnight and not, the literal on either side
DATE_VS_TIMESTAMP = [
    f"SELECT id FROM dd WHERE {c} ORDER BY id" for c in [
        f"x {op} {t}" for op in ("=", "<>", "<", "<=", ">", ">=")
        for t in ("date '1994-01-01' + interval '1' year", "timestamp '1994-01-01 00:00:00'", "timestamp '1994-01-01 12:30:00'")
    ] + [f"timestamp '1994-01-01 00:00:01' {op} x" for op in ("<", "<=", ">", ">=")]
]

QUERIES = [
    # interval_in
    "SELECT INTERVAL '.001 second', INTERVAL '1-2 3:4 5 day', INTERVAL '1 2' DAY TO HOUR, INTERVAL '10' MONTH FROM one",
    "SELECT INTERVAL 'P1Y2M3DT4H', INTERVAL 'P0001-02-03T04:05:06', INTERVAL '@ 1 hour ago', INTERVAL '1.5 months',"
    " INTERVAL '0.5 day', INTERVAL '-1 +02:03', INTERVAL '1 2:03:04.5678' DAY TO SECOND(2) FROM one",
    "SELECT '1.5 weeks'::interval, '3 4:05:06'::interval, '1 day 2 hours'::interval(0), '2:03.5'::interval minute to second FROM one",
    "SELECT INTERVAL '2147483648 days' FROM one",
    "SELECT INTERVAL '1 hour 1 hour' FROM one",
    # timestamp(p) / time(p) / interval(p): literals, casts of columns, stored columns
    "SELECT '2020-01-01 00:00:00.6666666'::timestamp(3), timestamptz(2) '2020-01-01 00:00:00.555+01', time(1) '1:2:3.789',"
    " '1999-12-31 23:59:59.5'::timestamp(0) FROM one",
    "SELECT id, ts::timestamp(0), ts::timestamp(3), tz::timestamptz(1), t::timestamp(2), iv::interval(2), iv::interval day to hour,"
    " iv::interval minute FROM d",
    "SELECT id, a, b, c, e FROM p",
    # input forms and time zones
    "SELECT date '2020/01/02', timestamp '2020-01-02T03:04', time '1:2:3.789', time '2020-05-26 13:30:25.575401' FROM one",
    "SELECT timestamptz '2050-07-10 17:32:01 Europe/Helsinki', timestamptz '2050-01-10 17:32:01 Europe/Helsinki',"
    " timestamptz '2020-01-02 03:04:05-07:30', timestamptz '2020-01-02 03:04:05Z' FROM one",
    "SELECT date 'epoch', timestamp 'epoch', date 'today' = current_date, timestamptz 'now' <= now() FROM one",
    "SELECT make_date(2013, 2, 30) FROM one",
    "SELECT make_timestamp(2013, 2, 28, 24, 0, 0), make_timestamp(2013, 2, 28, 23, 59, 60), make_timestamp(2013, 2, 28, 1, 2, 3.5) FROM one",
    "SELECT make_timestamp(2013, 2, 28, 24, 0, 1) FROM one",
    "SELECT make_timestamp(0, 7, 15, 12, 30, 15) FROM one",
    "SELECT interval(2) '1 day 01:23:45.6789', interval(0) '1 day 01:23:45.6789' FROM one",
    "SELECT interval '1.234' second(2), interval '12:34.5678' minute to second(2), interval '1 2:03:04.5678' day to second(2) FROM one",
    "SELECT make_date(2020, 2, 29), make_date(2024, 12, 31) FROM one",
    "SELECT date 'January 8, 1999', timestamptz 'Mon Feb 10 17:32:01 1997 PST', timestamp '19970210 173201' FROM one",
    "SELECT time '11:59:59.99 PM', time '02:03 PST', timestamptz '2020-01-02 03:04:05 EST' FROM one",
    # interval and time output as text (casts of computed values, not folded literals)
    "SELECT id, CAST(iv AS text), iv::varchar(9), iv::char(20), CAST(-iv AS text), (iv * 3.5)::text FROM d",
    "SELECT id, CAST(t AS text), t::varchar(5), t::char(10), CAST(t AS name) FROM tm",
    # time operators over columns (rendered, not folded): time +- interval wraps at midnight
    # and ignores months / days; time - time; date + time and time + date
    "SELECT tm.id, d.id, t + iv, t - iv, iv + t, t - t, t - time '12:00', date '2020-02-29' + t, t + date '1999-12-31' FROM tm, d",
    "SELECT time '23:00' + interval '2 hours', time '01:00' - interval '1 day 3 hours', time '01:00' - time '03:00',"
    " date '2000-01-01' + time '01:02:03.5' FROM one",
    # interval and time arrays as text (casts of computed arrays, NULL elements) and in results
    "SELECT id, ARRAY[iv, NULL, -iv]::text, ARRAY[iv]::varchar, ARRAY[iv * 2, justify_hours(iv)]::text FROM d",
    "SELECT id, ARRAY[t, NULL, t]::text, ARRAY[t]::varchar FROM tm",
    "SELECT array_agg(iv ORDER BY id)::text, array_agg(iv ORDER BY id) FROM d",
    "SELECT array_agg(t ORDER BY id)::text, array_agg(t ORDER BY id) FROM tm",
    "SELECT id, ARRAY[iv, NULL], ARRAY[NULL::interval] FROM d",
    "SELECT id, ARRAY[t, NULL] FROM tm",
    "SELECT ARRAY[INTERVAL '1 day', INTERVAL '2 hours']::text, ARRAY[TIME '01:02:03', NULL]::text,"
    " ARRAY[INTERVAL '-1 mons 40 days -30:00:00.5']::text FROM one",
    "SELECT INTERVAL '-1 mons 40 days -30:00:00.5'::text, INTERVAL '-1 year -1 mon'::text, INTERVAL '14 mons -3 days'::text FROM one",
    # to_timestamp(text, text): computed (a Python UDF), a literal format, Superset's constant filter
    "SELECT id, to_timestamp(t, f), to_timestamp(t, 'YYYY-MM-DD HH24:MI:SS.US') FROM tt WHERE id < 3",
    "SELECT id, to_timestamp(t, f) FROM tt WHERE id IN (3, 4)",
    "SELECT to_timestamp(t, f) FROM tt WHERE id = 5",
    "SELECT to_timestamp(t, f) FROM tt WHERE id = 6",
    "SELECT id FROM d WHERE tz >= TO_TIMESTAMP('2000-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')",
    # greatest / least of intervals by their total (was Spark's field order: least('40 days',
    # '1 mon') = '40 days'), NULLs skipped, the first of equal values kept
    "SELECT id, least(iv, interval '1 day'), greatest(iv, interval '25 hours', NULL), least(interval '1 mon', interval '30 days', iv) FROM d",
    "SELECT least(interval '40 days', interval '1 mon'), greatest(interval '40 days', interval '1 mon'),"
    " greatest(interval '30 days', interval '1 mon') FROM one",
    # justify_*
    "SELECT id, justify_interval(iv), justify_days(iv), justify_hours(iv) FROM d",
    "SELECT justify_interval(interval '2147483647 days 24 hrs'), justify_interval(interval '-2147483648 days -24 hrs') FROM one",
]

# IntervalStyle output: (style, query)
STYLED = [(style, sql) for style in ("postgres_verbose", "iso_8601")
          for sql in ("SELECT id, iv FROM d", "SELECT id, ARRAY[iv, NULL] FROM d")]
# an interval cast to text is rendered in IntervalStyle postgres only (Materialize has no other)
STYLED_REFUSED = [(style, sql) for style in ("postgres_verbose", "iso_8601")
                  for sql in ("SELECT CAST(iv AS text) FROM d", "SELECT ARRAY[iv]::text FROM d")]

# what we refuse (0A000) instead of answering differently from Postgres
REFUSED = ["SELECT date 'infinity'", "SELECT DATE_TRUNC('DECADE', DATE '0004-12-25') FROM one",
           "SELECT make_date(-44, 3, 15) FROM one", "SELECT to_char(ts, 'HH24 SSSS') FROM d", "SELECT date '0044-03-15 BC'", "SELECT date '01/02/03'", "SET DateStyle = 'German'",
           "SET IntervalStyle = 'sql_standard'"]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        return sorted(conn.execute(sql).fetchall(), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    configure = text_loaded("interval", "timestamp", "timestamptz", "date", "time")
    with paired_with_postgres(mz_server.connect(), "datetime-", "dtm", SETUP, configure) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES + DATE_VS_TIMESTAMP)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert _rows(mz, sql) == _rows(pg, sql)


@pytest.mark.parametrize(("style", "sql"), STYLED)
def test_interval_style_output(both: tuple[psycopg.Connection, psycopg.Connection], style: str, sql: str) -> None:
    mz, pg = both
    for conn in both:
        conn.execute(f"SET IntervalStyle = {style}")
    try:
        assert _rows(mz, sql) == _rows(pg, sql)
    finally:
        for conn in both:
            conn.execute("SET IntervalStyle = postgres")


@pytest.mark.parametrize(("style", "sql"), STYLED_REFUSED)
def test_interval_text_in_another_style_is_refused(both: tuple[psycopg.Connection, psycopg.Connection], style: str, sql: str) -> None:
    mz, _ = both
    mz.execute(f"SET IntervalStyle = {style}")
    try:
        assert _rows(mz, sql) == "error 0A000"
    finally:
        mz.execute("SET IntervalStyle = postgres")


@pytest.mark.parametrize("sql", REFUSED)
def test_refused_not_wrong(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, _ = both
    assert _rows(mz, sql) == "error 0A000"


def test_justify_interval_is_fast(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """It took 10-36 s per call when its Spark expression grew exponentially."""
    mz, _ = both
    start = time.monotonic()
    mz.execute("SELECT justify_interval(iv) FROM d").fetchall()
    assert time.monotonic() - start < 8
