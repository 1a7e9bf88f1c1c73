"""Aggregates compared row for row with a real PostgreSQL 15 on the same data: ordered-set
and hypothetical-set aggregates (WITHIN GROUP), float statistics (Youngs-Cramer) and the
regr_* / covar_* / corr family, found missing or different by PostgreSQL's aggregates.sql.

Numeric values compare by value (mzspark's unconstrained numeric does not keep Postgres'
display scale); everything else compares exactly as psycopg decodes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.os (g int, x int, y float8, s text, n numeric)",
    "INSERT INTO {s}.os VALUES (1, 1, 1.5, 'a', 1.25), (1, 2, 2.5, 'b', 2), (1, 3, NULL, 'b', NULL), (1, 2, 0.25, NULL, 7),"
    " (2, NULL, 4, NULL, 3), (2, 5, 5, 'c', 3), (2, 5, 6, 'c', -1), (3, NULL, NULL, NULL, NULL)",
    "CREATE TABLE {s}.regr (g int, x float8, y float8, r real, i int, n numeric)",
    "INSERT INTO {s}.regr VALUES (1, 10, 150, 7.8, 56, 0.09561), (1, 20, 250, 99.097, 100, 324.78), (1, 30, 350, 0.09561, 0, 7.8),"
    " (1, 80, 540, 324.78, 42, 99.097), (1, 100, 200, NULL, NULL, NULL), (1, NULL, 3, 1, 1, 1),"
    " (2, 100000003, 1, 1, 100000003, 100000003), (2, 100000004, 2, 2, 100000004, 100000004),"
    " (2, 100000006, 3, 3, 100000006, 100000006), (2, 100000007, 5, 4, 100000007, 100000007), (3, 5, 7, 1, 1, 1)",
    "CREATE TABLE {s}.one (x int)",
    "INSERT INTO {s}.one VALUES (1)",
    # large numerics, and rows whose multiplicity is not 1 (a duplicate deleted, one inserted again)
    "CREATE TABLE {s}.big (g int, n numeric, m numeric(30, 4))",
    "INSERT INTO {s}.big VALUES (1, 1e20, 12345678901234567890.1234), (1, 2.5, 0.0001), (2, 123456789012345678901234567.5, NULL),"
    " (2, 0.25, 5), (3, -1e25, -1e20), (3, 1e25, 1e20), (3, 0.5, 0.5), (3, 0.5, 0.5)",
    "DELETE FROM {s}.big WHERE g = 3 AND n = 0.5",
    "INSERT INTO {s}.big VALUES (3, 0.5, 0.5)",
]

ORDERED_SET = [
    # percentile_cont interpolates in float8 (integers and numerics are cast); NULLs are skipped
    "SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x), percentile_cont(0.25) WITHIN GROUP (ORDER BY y),"
    " percentile_cont(0.3) WITHIN GROUP (ORDER BY n DESC) FROM os GROUP BY g",
    "SELECT p, percentile_cont(p) WITHIN GROUP (ORDER BY x::float8), percentile_disc(p) WITHIN GROUP (ORDER BY x)"
    " FROM generate_series(1, 5) x, (VALUES (0::float8), (0.1), (0.25), (0.4), (0.5), (0.6), (0.75), (0.9), (1)) v(p) GROUP BY p",
    # percentile_disc keeps the input type; the array forms map each fraction (NULL: NULL)
    "SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY s), percentile_disc(0.75) WITHIN GROUP (ORDER BY n),"
    " percentile_disc(array[0, 0.5, NULL, 1]) WITHIN GROUP (ORDER BY s DESC) FROM os GROUP BY g",
    "SELECT percentile_cont(array[0, 1, 0.25, 0.75, 0.5, 0.3, 0.32]) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 6) x",
    # mode: the most frequent value, the first in the sort order on ties
    "SELECT g, mode() WITHIN GROUP (ORDER BY s), mode() WITHIN GROUP (ORDER BY x DESC), mode() WITHIN GROUP (ORDER BY y)"
    " FROM os GROUP BY g",
    # FILTER, no rows, NULL fraction
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY y) FILTER (WHERE g = 1), mode() WITHIN GROUP (ORDER BY x)"
    " FILTER (WHERE false), percentile_disc(NULL) WITHIN GROUP (ORDER BY x) FROM os",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), percentile_disc(array[0.5]) WITHIN GROUP (ORDER BY x) FROM os WHERE g > 9",
    # hypothetical-set functions: the rank the hypothetical row would have (NULLs placed as the
    # ORDER BY says), several columns compared lexicographically
    "SELECT g, rank(2) WITHIN GROUP (ORDER BY x), dense_rank(2) WITHIN GROUP (ORDER BY x),"
    " percent_rank(2) WITHIN GROUP (ORDER BY x), cume_dist(2) WITHIN GROUP (ORDER BY x) FROM os GROUP BY g",
    "SELECT rank(5) WITHIN GROUP (ORDER BY x DESC), rank(NULL::int) WITHIN GROUP (ORDER BY x),"
    " rank(3) WITHIN GROUP (ORDER BY x NULLS FIRST), cume_dist(5, 'c') WITHIN GROUP (ORDER BY x, s DESC),"
    " dense_rank(2, NULL) WITHIN GROUP (ORDER BY x, s) FROM os",
    "SELECT percent_rank(0) WITHIN GROUP (ORDER BY x), cume_dist(0) WITHIN GROUP (ORDER BY x),"
    " rank('3') WITHIN GROUP (ORDER BY x) FROM os WHERE g > 9",
    "SELECT x, dense_rank(x) WITHIN GROUP (ORDER BY x) FROM os GROUP BY x",
]

# float statistics as Postgres computes them (Youngs-Cramer: no cancellation with large
# values); two-argument ones over the rows where both are non-NULL. Their last bits depend on
# the order the values are folded in (Postgres: scan order), so they are compared as
# aggregates.sql prints them, with extra_float_digits = 0 (15 significant digits).
FLOAT_STATS = [
    "SELECT g, var_pop(x), var_samp(x), stddev_pop(x), stddev_samp(x), var_pop(r), stddev_samp(r) FROM regr GROUP BY g",
    "SELECT g, regr_count(y, x), regr_sxx(y, x), regr_syy(y, x), regr_sxy(y, x), regr_avgx(y, x), regr_avgy(y, x) FROM regr GROUP BY g",
    "SELECT g, regr_r2(y, x), regr_slope(y, x), regr_intercept(y, x), covar_pop(y, x), covar_samp(y, x), corr(y, x) FROM regr GROUP BY g",
    "SELECT regr_sxx(r, i), regr_syy(r, i), regr_sxy(r, i), corr(r, i), covar_samp(i, r), regr_slope(n, i) FROM regr",
    "SELECT covar_pop(y, x) FILTER (WHERE x > 10), var_samp(DISTINCT x), corr(x, x) FROM regr WHERE g = 1",
    "SELECT covar_pop(1::float8, 2::float8), covar_samp(3::float8, 4::float8), covar_pop(1::float8, 'inf'::float8),"
    " covar_samp(3::float8, 'nan'::float8), var_pop('inf'::float8), var_samp('nan'::float8), corr(1::float8, 1::float8) FROM one",
    "SELECT regr_count(y, x), regr_sxx(y, x), var_pop(x) FROM regr WHERE g > 9",
]

# numeric statistics are exact in Postgres (numeric arithmetic, at least 16 significant
# digits); mzspark keeps 10 fractional digits: both rounded to 10 must agree
NUMERIC_STATS = [
    "SELECT g, round(var_pop(n), 10), round(var_samp(n), 10), round(stddev_pop(n), 10), round(stddev_samp(n), 10) FROM regr GROUP BY g",
    "SELECT g, round(var_pop(i), 10), round(var_samp(i), 10), round(stddev_pop(i::int8), 10), round(stddev_samp(i::int8), 10),"
    " round(variance(DISTINCT n), 10) FROM regr GROUP BY g",
    "SELECT var_samp(n), stddev_pop(i) FROM regr WHERE g = 3",
    "SELECT round(var_pop(r::numeric), 10), round(stddev_samp(r::numeric), 10) FROM regr WHERE g = 1",
    # unrounded (exact to 24 fractional digits): without GROUP BY the statistic is unioned with
    # the NULL row of an empty input, which keeps its digits (was: cut to 10 by the union)
    "SELECT var_pop(n), var_samp(n), stddev_pop(n), stddev_samp(n) FROM regr WHERE g = 1",
    "SELECT var_pop(r::numeric), stddev_samp(r::numeric), NULL::numeric FROM regr WHERE g = 1",
    "SELECT g, var_pop(n), stddev_samp(n) FROM regr GROUP BY g",
]

# float -> numeric prints the float to 15 (float8) / 6 (float4) significant digits first
FLOAT_TO_NUMERIC = [
    "SELECT r::numeric, x::numeric, round((r::float8)::numeric, 10) FROM regr",
    "SELECT round(var_pop(r::numeric), 10), round(stddev_samp(x::numeric), 10) FROM regr GROUP BY g",
]

# subqueries inside aggregate arguments and FILTER (uncorrelated and correlated)
SUBQUERY_ARGS = [
    "SELECT sum((SELECT 1)), count((SELECT NULL::int)) FROM os",
    "SELECT g, max((SELECT min(o2.y) FROM os o2 WHERE o2.x = o.x AND o2.g = o.g)),"
    " sum(x) FILTER (WHERE x IN (SELECT x + 1 FROM os)) FROM os o GROUP BY g",
    "SELECT (SELECT sum((SELECT count(*) FROM os i WHERE i.x < v.a AND i.x > o.x)) FROM (VALUES (3), (6)) v(a)) FROM one o",
    "SELECT string_agg((SELECT s FROM os i WHERE i.x = o.x AND i.s IS NOT NULL LIMIT 1), ',' ORDER BY x) FROM os o",
]

BYTEA = [
    # string_agg(bytea, bytea): the values in order, each after its own row's separator
    "SELECT g, string_agg(decode(CASE WHEN x > 2 THEN 'ff' ELSE 'a0' END, 'hex'), decode('ee', 'hex') ORDER BY x DESC)"
    " FROM os GROUP BY g",
    "SELECT string_agg(decode('01', 'hex'), NULL), string_agg(NULL::bytea, ''), string_agg(decode('0a', 'hex'), '')"
    " FROM os WHERE g = 1",
    "SELECT decode(' 0a Ff\n', 'hex'), decode('', 'hex'), decode(NULL, 'hex')",
]

ERRORS = [
    "SELECT decode('abc', 'hex')",
    "SELECT decode(' a b', 'hex')",
    "SELECT decode('0g', 'hex')",
    "SELECT decode('ab', 'foo')",
    "SELECT string_agg(x, '') FROM os",
    "SELECT sum((SELECT x FROM os)) FROM os",
    "SELECT avg((SELECT avg(a1.x ORDER BY (SELECT avg(a2.x) FROM os a3)) FROM os a1)) FROM os a2",
    "SELECT var_pop(x) FROM (VALUES (1e300::float8), (-1e300)) v(x)",
    "SELECT regr_sxx(s, x) FROM os",
    "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM os",
    "SELECT percentile_disc(array[0.5, -1]) WITHIN GROUP (ORDER BY x) FROM os",
    "SELECT rank(x) WITHIN GROUP (ORDER BY x) FROM os",
    "SELECT rank(3) WITHIN GROUP (ORDER BY s) FROM os",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM os",
]

# sum of numerics past 18 integer digits (was 22003: each term times its diff was typed
# decimal(38, 20)), over whole tables and groups, with a retraction among the rows
NUMERIC_SUMS = [
    "SELECT sum(n), sum(m), count(*) FROM big",
    "SELECT g, sum(n), sum(m), sum(n * 2), count(n) FROM big GROUP BY g ORDER BY g",
    "SELECT sum(m) FILTER (WHERE g > 1), sum(DISTINCT n) FROM big",
    # a constrained numeric summed in its own scale (compute.render.aggregates.accumulated_sum)
    "SELECT g, sum(m), avg(m), count(m) FROM big WHERE abs(m) < 1e6 GROUP BY g ORDER BY g",
]

QUERIES = ORDERED_SET + NUMERIC_STATS + FLOAT_TO_NUMERIC + SUBQUERY_ARGS + BYTEA + ERRORS + NUMERIC_SUMS


def _norm(v: object) -> object:
    if isinstance(v, float) and v != v:
        return "NaN"  # NaN == NaN, as Postgres orders and compares it
    if isinstance(v, Decimal):
        return v.normalize() if v.is_finite() else v
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        rows = [tuple(_norm(v) for v in r) for r in conn.execute(sql).fetchall()]
        return sorted(rows, key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "aggregates-", "agg", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert not isinstance(expected, str) or sql in ERRORS, f"the reference rejects the query: {expected}"
    assert isinstance(expected, str) or sql not in ERRORS, "the reference accepts the query"
    assert _rows(mz, sql) == expected


@pytest.mark.parametrize("sql", FLOAT_STATS)
def test_float_statistics_with_extra_float_digits_0(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    for conn in both:
        conn.execute("SET extra_float_digits = 0")
    try:
        expected = _rows(pg, sql)
        assert not isinstance(expected, str), f"the reference rejects the query: {expected}"
        assert _rows(mz, sql) == expected
    finally:
        for conn in both:
            conn.execute("SET extra_float_digits = 1")


def test_outer_level_aggregate_through_a_subquery_is_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """max(..) reads only o (inside its subquery): Postgres aggregates it over o, one row;
    mzspark refuses it (0A000) rather than aggregating per row of the inner query."""
    mz, pg = both
    sql = "SELECT (SELECT max((SELECT i.x FROM os i WHERE i.x = o.x + 100))) FROM os o"
    assert _rows(pg, sql) == [(None,)]
    assert _rows(mz, sql) == "error 0A000"
