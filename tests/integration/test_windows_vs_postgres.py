"""Window functions compared row for row with a real PostgreSQL 15: frames (ROWS, RANGE with
offsets, GROUPS, EXCLUDE, empty frames), NULL ordering values and peers, ntile / nth_value /
percent_rank / cume_dist, the aggregates as window functions, and their errors. Only
results that do not depend on the order of peers are compared (Postgres' is arbitrary)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.w (i int, v int, d date, g int)",
    "INSERT INTO {s}.w VALUES (1, 10, '2020-01-01', 1), (2, 20, '2020-06-01', 1), (3, NULL, '2021-01-01', 1), "
    "(4, 20, NULL, 2), (5, 40, '2019-03-01', 2), (NULL, 7, '2020-02-02', 2), (NULL, 8, '2022-01-01', 2), (7, 20, '2020-06-01', 1)",
]

QUERIES = [
    # ntile, percent_rank, cume_dist, nth_value (constant and per-row n; nulls count)
    "SELECT i, ntile(3) OVER (ORDER BY i), percent_rank() OVER (ORDER BY v), cume_dist() OVER (ORDER BY v) FROM w",
    "SELECT i, ntile(NULL) OVER (ORDER BY i), ntile(2) OVER (PARTITION BY g ORDER BY i),"
    " percent_rank() OVER (PARTITION BY g ORDER BY v DESC), cume_dist() OVER () FROM w",
    "SELECT i, nth_value(v, 2) OVER (ORDER BY i, v ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),"
    " nth_value(v, 3) OVER (ORDER BY i NULLS FIRST) FROM w",
    "SELECT i, v, nth_value(v, i) OVER (ORDER BY i, v ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM w",
    # GROUPS frames (peer groups of v, NULLs one group)
    "SELECT i, v, sum(i) OVER (ORDER BY v GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT i, v, count(*) OVER (ORDER BY v NULLS FIRST GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING EXCLUDE GROUP),"
    " max(i) OVER (PARTITION BY g ORDER BY v GROUPS 1 PRECEDING) FROM w",
    "SELECT i, sum(i) OVER (ORDER BY v GROUPS BETWEEN 2 FOLLOWING AND 1 FOLLOWING),"
    " sum(i) OVER (ORDER BY v GROUPS BETWEEN 9223372036854775807 PRECEDING AND 0 FOLLOWING) FROM w",
    # RANGE offsets: ascending / descending, NULLs first / last, large offsets, dates
    "SELECT i, v, sum(i) OVER (ORDER BY v RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING) FROM w",
    "SELECT i, sum(v) OVER (ORDER BY i DESC NULLS FIRST RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING),"
    " sum(v) OVER (ORDER BY i NULLS FIRST RANGE BETWEEN 2 PRECEDING AND 1 PRECEDING),"
    " sum(v) OVER (ORDER BY i DESC RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT i, first_value(i) OVER w, last_value(i) OVER w, count(*) OVER w FROM w"
    " WINDOW w AS (ORDER BY i NULLS LAST RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING)",
    "SELECT i, sum(v) OVER (ORDER BY i RANGE BETWEEN 2147483647 PRECEDING AND 9223372036854775807 FOLLOWING),"
    " sum(v) OVER (ORDER BY i::int2 RANGE BETWEEN CURRENT ROW AND 32767 FOLLOWING) FROM w",
    "SELECT i, sum(v) OVER (ORDER BY i::float8 DESC RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING),"
    " sum(v) OVER (ORDER BY i::numeric RANGE BETWEEN 1.5 PRECEDING AND 0.5 PRECEDING) FROM w",
    "SELECT i, d, count(*) OVER (ORDER BY d RANGE BETWEEN '6 months'::interval PRECEDING AND '6 months' FOLLOWING),"
    " sum(i) OVER (ORDER BY d::timestamp DESC RANGE BETWEEN '1 year'::interval PRECEDING AND CURRENT ROW) FROM w",
    # EXCLUDE (peer-closed frames, or unique orders)
    "SELECT i, v, sum(i) OVER (ORDER BY v RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING EXCLUDE TIES),"
    " sum(i) OVER (ORDER BY v RANGE UNBOUNDED PRECEDING EXCLUDE CURRENT ROW) FROM w",
    "SELECT i, first_value(v) OVER w, last_value(v) OVER w, nth_value(v, 2) OVER w, avg(v) OVER w FROM w"
    " WINDOW w AS (ORDER BY i NULLS FIRST, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW)",
    "SELECT i, sum(i) OVER (ORDER BY v GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE GROUP),"
    " count(v) OVER (PARTITION BY g ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE GROUP) FROM w",
    # frames starting after they end are empty
    "SELECT i, sum(v) OVER (ORDER BY i, v ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING),"
    " count(v) OVER (ORDER BY i, v ROWS BETWEEN 9223372036854775807 FOLLOWING AND 1 FOLLOWING),"
    " avg(v) OVER (ORDER BY i, v ROWS BETWEEN 1 PRECEDING AND 2 PRECEDING) FROM w",
    # aggregates as window functions
    "SELECT i, bool_and(v > 9) OVER (ORDER BY i), bool_or(v > 30) OVER (ORDER BY i, v ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING),"
    " array_agg(v) OVER (ORDER BY i, v ROWS 2 PRECEDING) FROM w",
    "SELECT i, sum(v * interval '1 sec') OVER (ORDER BY i, v ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),"
    " avg(v * interval '1 sec') OVER (ORDER BY i, v ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM w",
    # the statistics as window functions: numeric results for integer / numeric inputs
    # (exact, Postgres' scale), float8 for real / double ones; Spark frames and joined ones
    "SELECT i, var_pop(v) OVER (ORDER BY i ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),"
    " var_samp(v::numeric * 0.25) OVER (ORDER BY i), stddev_pop(v::float8) OVER (ORDER BY i ROWS 1 PRECEDING),"
    " stddev(v::real) OVER (PARTITION BY g), variance(v::bigint) OVER (PARTITION BY g ORDER BY i) FROM w WHERE i IS NOT NULL",
    "SELECT i, variance(v) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW),"
    " stddev_samp(v::float8) OVER (ORDER BY v GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW),"
    " var_pop(i::numeric) OVER (ORDER BY v RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING),"
    " stddev_samp(v::smallint) OVER (ORDER BY i ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING) FROM w WHERE i IS NOT NULL",
    # lag / lead with a per-row offset (negative looks the other way; NULL gives NULL)
    "SELECT i, v, lag(v, g) OVER (ORDER BY i, v), lead(v, g - 2, -1) OVER (PARTITION BY g ORDER BY i, v),"
    " lag(v, CASE WHEN i > 2 THEN NULL ELSE 1 END, 0) OVER (ORDER BY i, v) FROM w",
    # subqueries in a window function's arguments and PARTITION BY (correlated and not)
    "SELECT i, v, lead(v, (SELECT count(*)::int FROM w w2 WHERE w2.i = w.i)) OVER (ORDER BY i, v) FROM w",
    "SELECT i, v, sum(v) OVER (PARTITION BY g > (SELECT min(g) FROM w) ORDER BY i, v),"
    " first_value(v + (SELECT max(v) FROM w)) OVER (ORDER BY i, v) FROM w",
    # ROWS / GROUPS offsets computed by the query (evaluated once; NULL and negative refused)
    "SELECT i, sum(v) OVER (ORDER BY i, v ROWS BETWEEN (SELECT min(g) FROM w) PRECEDING AND (('a' < 'b')::int) + 1 FOLLOWING) FROM w",
    "SELECT i, v, count(*) OVER (ORDER BY v GROUPS BETWEEN length('ab') PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM w",
    "SELECT i, sum(v) OVER (ORDER BY i, v ROWS BETWEEN CURRENT ROW AND (SELECT NULL::int) FOLLOWING) FROM w",
    "SELECT i, sum(v) OVER (ORDER BY i, v ROWS (SELECT -1) PRECEDING) FROM w",
    "SELECT i, sum(v) OVER (ORDER BY i, v ROWS (SELECT 'x') PRECEDING) FROM w",
    # a computed text cast to interval (interval_in at run time), as a window aggregate's input
    "SELECT i, sum(t::interval) OVER (ORDER BY i, v ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),"
    " avg(t::interval) OVER (ORDER BY i, v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
    " FROM (SELECT i, v, CASE WHEN v > 10 THEN v || ' sec' WHEN v > 7 THEN '1 day 02:03' END AS t FROM w) s",
    "SELECT i, (v || ' days 3 hours 4.5 minutes')::interval hour to minute, ('P' || v || 'Y2M')::interval FROM w",
    "SELECT i, (v || ' parsecs')::interval FROM w",
    "SELECT i, (i || ' years')::interval FROM w WHERE i < 3",
    # window functions without FROM, over constant ORDER BY values
    "SELECT rank() OVER (ORDER BY length('abc')), row_number() OVER (), sum(1) OVER ()",
    # errors
    "SELECT ntile(0) OVER (ORDER BY i) FROM w",
    "SELECT nth_value(i, 0) OVER (ORDER BY i) FROM w",
    "SELECT sum(v) OVER (ORDER BY i RANGE BETWEEN -1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT sum(v) OVER (ORDER BY d RANGE BETWEEN '-1 year'::interval PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(v) OVER (ORDER BY i, v RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT sum(v) OVER (ORDER BY d RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT sum(v) OVER (ORDER BY i GROUPS BETWEEN NULL PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT count() OVER () FROM w",
    "SELECT generate_series(1, 3) OVER () FROM w",
    "SELECT abs(i) OVER (ORDER BY v) FROM w",
    "SELECT rank() OVER (PARTITION BY i, ORDER BY v) FROM w",
]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "windows-", "win", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert _rows(mz, sql) == expected


def test_delete_returning_is_refused_before_writing(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """RETURNING on UPDATE / DELETE is not supported: refused with 0A000, nothing deleted."""
    mz, _ = both
    with pytest.raises(psycopg.Error) as e:
        mz.execute("DELETE FROM w RETURNING i")
    assert e.value.sqlstate == "0A000"
    assert mz.execute("SELECT count(*) FROM w").fetchone() == (8,)


def test_peers_are_numbered_in_one_order_mirrored_by_opposite_windows(
        both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """Rows tied on a window's ORDER BY get positions in one deterministic order (by the whole
    row, in the direction of the last ORDER BY key): windows of opposite orders number peers
    in mirror order, and ROWS frames / lead see the same order every time."""
    mz, _ = both
    rows = mz.execute(
        "SELECT v, row_number() OVER (PARTITION BY g ORDER BY v) + row_number() OVER (PARTITION BY g ORDER BY v DESC),"
        " count(*) OVER (PARTITION BY g) FROM w").fetchall()
    assert rows and all(total == n + 1 for _, total, n in rows)
    q = "SELECT i, lead(i) OVER (ORDER BY g), sum(i) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w"
    first = sorted(mz.execute(q).fetchall(), key=repr)
    assert all(sorted(mz.execute(q).fetchall(), key=repr) == first for _ in range(2))
