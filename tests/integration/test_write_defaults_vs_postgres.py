"""DEFAULT in INSERT … VALUES and UPDATE … SET, target-list arity errors, and numeric(p, s)
columns of a precision beyond Spark's 38 digits, compared statement by statement with a real
PostgreSQL 15 (PostgreSQL's insert.sql / update.sql / numeric.sql open with them)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.it (col1 int4, col2 int4 NOT NULL, col3 text DEFAULT 'testing', col4 numeric(6,2) DEFAULT 1.239)",
    "CREATE TABLE {s}.ut (a int DEFAULT 10, b int, c text)",
    "INSERT INTO {s}.ut VALUES (5, 10, 'foo'), (7, 15, 'bar')",
    "CREATE TABLE {s}.wide (id int4, val numeric(210,10))",
    "CREATE TABLE {s}.n39 (v numeric(39,2))",
]

# (statement, query showing the table afterwards); each runs in order on both servers
STEPS = [
    ("INSERT INTO it (col1, col2, col3) VALUES (DEFAULT, DEFAULT, DEFAULT)", "SELECT * FROM it"),  # 23502
    ("INSERT INTO it (col2, col3) VALUES (3, DEFAULT)", "SELECT * FROM it"),
    ("INSERT INTO it (col1, col2, col3) VALUES (DEFAULT, 5, DEFAULT)", "SELECT * FROM it"),
    ("INSERT INTO it VALUES (DEFAULT, 5, 'test', DEFAULT)", "SELECT * FROM it"),
    ("INSERT INTO it VALUES (DEFAULT, 7)", "SELECT * FROM it"),
    # a DEFAULT in one row of several: that row's column default, the others' values
    ("INSERT INTO it VALUES (10, 20, '40', 2.5), (-1, 2, DEFAULT, DEFAULT), ((SELECT 2), 3, 'fun', DEFAULT)", "SELECT * FROM it"),
    # 42601: more target columns than expressions (was: the missing ones took their defaults)
    ("INSERT INTO it (col1, col2, col3) VALUES (DEFAULT, DEFAULT)", "SELECT * FROM it"),
    ("INSERT INTO it (col1, col2, col3) VALUES (1, 2)", "SELECT * FROM it"),
    ("INSERT INTO it (col1, col2) SELECT 1", "SELECT * FROM it"),
    ("INSERT INTO it (col1) VALUES (1, 2)", "SELECT * FROM it"),
    ("INSERT INTO it (col1) VALUES (DEFAULT, DEFAULT)", "SELECT * FROM it"),
    ("UPDATE ut SET a = DEFAULT, b = DEFAULT WHERE c = 'foo'", "SELECT * FROM ut"),
    ("UPDATE ut SET c = DEFAULT, a = a + 1", "SELECT * FROM ut"),
    # numeric(210,10): values within Spark's 38 digits are exact, rounded to the scale
    ("INSERT INTO wide VALUES (1, '-34338492.215397047'), (2, 7799461.4119), (3, 0.00000000005), (4, -123456789012345678.12345678905)",
     "SELECT id, val, val + 1, val * 2, -val FROM wide"),
    ("INSERT INTO wide SELECT id + 10, val / 3 FROM wide WHERE id < 3", "SELECT id, val FROM wide"),
    ("SELECT 1", "SELECT stddev(val), stddev_pop(val) FROM wide WHERE id < 4"),
    # numeric(39, 2) is decimal(38, 2) (was: Spark's invalid decimal(39, 2), every read failed)
    ("INSERT INTO n39 VALUES (1.5), (-12345678901234567890.125)", "SELECT v, v * 2, v + 1 FROM n39"),
    # constant folding keeps every digit (was: 28, the thread's default decimal context)
    ("SELECT 1", "SELECT 0 - 123456789012345678.12345678905, -(123456789012345678.12345678905), 1.00000000000000000000000000005 + 1"),
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "writes-", "wd", SETUP) as pair:
        yield pair


def _run(conn: psycopg.Connection, sql: str) -> str:
    try:
        cur = conn.execute(sql)
        return f"ok {cur.rowcount}"
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


def test_steps_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    mz, pg = both
    for stmt, query in STEPS:
        assert _run(mz, stmt) == _run(pg, stmt), stmt
        assert sorted_outcome(mz, query) == sorted_outcome(pg, query), stmt


@pytest.mark.parametrize("sql", [
    "SELECT 1.5::numeric(1001, 2)",  # 22023 on both
    "SELECT 12.345::numeric(1000, 2), 0.000123::numeric(3, 6)",
])
def test_numeric_typmods_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql)


def test_numeric_scale_beyond_38_is_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """Spark's decimals hold 38 digits: numeric(50, 40) would round to another value."""
    mz, _ = both
    assert sorted_outcome(mz, "SELECT 1.5::numeric(50, 40)") == "error 0A000"
