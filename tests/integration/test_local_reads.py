"""Filters over small tables read as local relations (compute/render/sources.py): answered
without a Spark job once the table's rows are in the driver, equal to PostgreSQL 15 for many
column types, and never stale: every write, UPDATE / DELETE (retractions) and a table passing
LOCAL_ROWS rows changes what the next read sees, as on PostgreSQL."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import spark_jobs
from tests.pgref import reference_postgres

pytestmark = pytest.mark.integration

TYPES = ("k int, b boolean, s smallint, i bigint, r real, d double precision, n numeric(12, 3), t text, "
         "dt date, ts timestamp, tz timestamptz, iv interval, ia int[], ta text[], j jsonb, u uuid, by bytea")
ROWS = [
    "(1, true, 1, 10000000000, 1.5, 2.25, 12.345, 'a', '2024-01-02', '2024-01-02 03:04:05.123456', "
    "'2024-01-02 03:04:05+02', '1 day 02:03:04', '{1,NULL,3}', '{\"x\",NULL}', '{\"a\": [1, 2]}', "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x0102')",
    "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(3, false, -1, -5, 'NaN'::real, '-Infinity'::float8, -0.001, '', '1999-12-31', '1999-12-31 23:59:59', "
    "'1999-12-31 23:59:59+00', '-3 months', '{}', '{}', 'null', '00000000-0000-0000-0000-000000000000', '\\x')",
]
QUERIES = [
    "SELECT * FROM {t} WHERE k = {k}",
    "SELECT k, n * 2, t || 'x', ts FROM {t} WHERE k = {k} OR b IS NULL",
    "SELECT * FROM {t} WHERE i > 0 LIMIT 5",
    "SELECT k, ia, j FROM {t}",
]


def _rows(conn: psycopg.Connection, sql: str, params: tuple = ()) -> list[tuple]:
    """The rows, sorted, a float NaN as the string 'NaN' (so that it equals itself)."""
    rows = (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in r)
            for r in conn.execute(sql, params).fetchall())
    return sorted(rows, key=repr)


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("localreads-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        yield conn


def test_small_table_filters_equal_postgres_without_jobs(mz_server: MzServer, pg: psycopg.Connection,
                                                         uniq: Callable[[str], str]) -> None:
    t = uniq("lr")
    mz = mz_server.connect(autocommit=True)
    for c in (mz, pg):
        c.execute(f"CREATE TABLE {t} ({TYPES})")
        c.execute(f"INSERT INTO {t} VALUES {', '.join(ROWS)}")
    for q in QUERIES:
        for k in (1, 2, 3, 4):
            sql = q.format(t=t, k=k)
            assert _rows(mz, sql) == _rows(pg, sql), sql
    # the rows are in the driver now: a bound lookup is planning only
    before = spark_jobs(mz)
    for k in range(6):
        assert _rows(mz, f"SELECT * FROM {t} WHERE k = %s", (k,)) == _rows(pg, f"SELECT * FROM {t} WHERE k = %s", (k,))
    assert spark_jobs(mz) == before
    # an aggregate over the same table is a Spark job, with the same answer as PostgreSQL
    sql = f"SELECT count(*), sum(n), max(t) FROM {t}"
    assert _rows(mz, sql) == _rows(pg, sql)
    assert spark_jobs(mz) > before


def test_local_reads_see_every_write(mz_server: MzServer, pg: psycopg.Connection, uniq: Callable[[str], str]) -> None:
    t = uniq("lw")
    mz = mz_server.connect(autocommit=True)
    writes = [
        f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (2, 'b')",
        f"INSERT INTO {t} VALUES (3, 'c')",
        f"UPDATE {t} SET v = 'bb' WHERE k = 2",
        f"DELETE FROM {t} WHERE k = 1",
        f"INSERT INTO {t} VALUES (1, 'again')",
        f"INSERT INTO {t} SELECT g % 7, 'g' || g FROM generate_series(1, 1200) AS g",  # past LOCAL_ROWS
        f"DELETE FROM {t} WHERE k > 0",
        f"INSERT INTO {t} VALUES (5, 'last')",
    ]
    for c in (mz, pg):
        c.execute(f"CREATE TABLE {t} (k int, v text)")
    for w in writes:
        mz.execute(w)
        pg.execute(w)
        for k in (0, 1, 2, 3, 5):
            sql = f"SELECT * FROM {t} WHERE k = %s"
            assert _rows(mz, sql, (k,)) == _rows(pg, sql, (k,)), (w, k)
        assert _rows(mz, f"SELECT v FROM {t}") == _rows(pg, f"SELECT v FROM {t}"), w
    # from another session too: a read sees every write acknowledged before it began
    other = mz_server.connect(autocommit=True)
    other.execute(f"INSERT INTO {t} VALUES (6, 'other')")
    assert _rows(mz, f"SELECT v FROM {t} WHERE k = 6") == [("other",)]
    other.execute(f"DROP TABLE {t}")
    with pytest.raises(psycopg.errors.UndefinedTable):
        mz.execute(f"SELECT * FROM {t} WHERE k = 6")
    other.execute(f"CREATE TABLE {t} (k int, v text)")  # the same name, a new (empty) table
    assert _rows(mz, f"SELECT * FROM {t} WHERE k = 6") == []
