"""Statements from PostgreSQL's regression suite that used to end in XX000 with a Python, Spark
or py4j message (pg_regress triage, section B), compared with a real PostgreSQL 15: each must
give PostgreSQL's answer, or an error with PostgreSQL's SQLSTATE — never XX000.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE VIEW {s}.v1 AS SELECT 1 AS a",
    "CREATE TABLE {s}.tt (a int, n numeric, s text)",
    "INSERT INTO {s}.tt VALUES (1, 2.5, 'x'), (2, -1, 'y')",
    "CREATE TABLE {s}.tj (j jsonb)",
    "INSERT INTO {s}.tj VALUES ('{\"public\": 1}'), ('{\"public\": 1, \"disabled\": 2}'), ('[\"disabled\"]'), ('3')",
]

# (statement, the outcome both servers must agree on)
SAME_RESULT = [
    # a frame starting after its end is empty: NULL (was 0A000 before frames were rendered by join)
    "SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 9223372036854775807 FOLLOWING AND 1 FOLLOWING) FROM tt",
    # jsonb ?| / ?& with an array literal over a column (the plan hashes the array literal)
    "SELECT count(*) FROM tj WHERE j ?| ARRAY['public', 'disabled']",
    "SELECT count(*) FROM tj WHERE j ?& ARRAY['public', 'disabled']",
    # ROWS offsets beyond Spark's INT reach the partition's end (PG allows bigint offsets)
    "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN CURRENT ROW AND 9223372036854775807 FOLLOWING) FROM tt",
    "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 9223372036854775807 PRECEDING AND CURRENT ROW) FROM tt",
    # jsonb -> number/bool casts of constants (PG's jsonb_int4, jsonb_numeric, ...)
    "SELECT '12345.05'::jsonb::int4, '1.5e2'::jsonb::float8, 'true'::jsonb::bool, '-3.5'::jsonb::numeric, '12345.5'::jsonb::int2",
    "WITH x(n) AS (SELECT 1, 2) SELECT * FROM x",
    "SELECT * FROM tt t(b) ORDER BY b",
    # pg_get_viewdef(text): the name resolves like a regclass input
    "SELECT pg_get_viewdef('v1')",
    "SELECT pg_get_viewdef('v1', true)",
    "SELECT pg_get_viewdef('v1'::regclass)",
]

SAME_ERROR = [
    # a missing relation is 42P01, not a Python int() failure
    "SELECT pg_get_viewdef('nosuch')",
    "SELECT 'nosuch'::regclass",
    # oid input of a non-number is 22P02
    "SELECT pg_table_is_visible('tt')",
    # column alias lists longer than the relation: 42P10 (was a Python list index error)
    "WITH x(n, b) AS (SELECT 1) SELECT * FROM x",
    "SELECT * FROM (SELECT 1) t(a, b)",
    "SELECT * FROM (VALUES (1)) t(a, b)",
    "SELECT * FROM tt t(a, b, c, d)",
    "WITH x AS (SELECT 1) SELECT * FROM x y(a, b)",
    # jsonb casts of the wrong kind: 22023
    "SELECT '{}'::jsonb::numeric",
    "SELECT '[1.0]'::jsonb::float",
    "SELECT '\"x\"'::jsonb::bool",
    "SELECT '1e10'::jsonb::int4",
    # datetime/string field errors Spark reports in its own words (FROM tt: computed by Spark)
    "SELECT make_date(a - 1, 7, 15) FROM tt",
    "SELECT make_timestamp(a - 1, 7, 15, 12, 30, 15) FROM tt",
    "SELECT make_date(2013, a + 1, 30) FROM tt",
    "SELECT split_part('joeuser@mydatabase', '@', a - 1) FROM tt",
]

# statements where only the absence of an internal error is required (PostgreSQL may answer:
# mzspark has no such feature and must say so with a proper SQLSTATE)
NO_INTERNAL_ERROR = [
    # tableoid is a system column mzspark does not have (42703)
    "SELECT tableoid::regclass, * FROM tt",
]

# where mzspark deliberately differs from PostgreSQL (Materialize's numeric has 39 digits, PG's
# 131072): the SQLSTATE mzspark must give
MZ_ERROR = {
    "SELECT n * 1e37 * 1e37 FROM tt": "22003",
    "SELECT sqrt(8015491789940783531003294973900306::numeric * a) FROM tt": "22003",
}


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "interr-", "ie", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", SAME_RESULT)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = sorted_outcome(pg, sql)
    assert not isinstance(expected, str), f"the reference rejects the query: {expected}"
    assert sorted_outcome(mz, sql) == expected


@pytest.mark.parametrize("sql", SAME_ERROR)
def test_same_error_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = sorted_outcome(pg, sql)
    assert isinstance(expected, str), f"the reference accepts the query: {expected}"
    assert sorted_outcome(mz, sql) == expected


@pytest.mark.parametrize("sql", NO_INTERNAL_ERROR)
def test_no_internal_error(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, _ = both
    got = sorted_outcome(mz, sql)
    assert got != "error XX000"


@pytest.mark.parametrize("sql", sorted(MZ_ERROR))
def test_documented_divergence(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, _ = both
    assert sorted_outcome(mz, sql) == f"error {MZ_ERROR[sql]}"
