"""GROUP BY ROLLUP / CUBE / GROUPING SETS / DISTINCT and GROUPING(...) compared row for row
(as multisets) with a real PostgreSQL 15 on the same data, NULLs and duplicates included."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.g1 (a int, b int, v int)",
    "CREATE TABLE {s}.g2 (a int, b int, c int, d int)",
    "CREATE TABLE {s}.gempty (a int, b int, v int)",
    "INSERT INTO {s}.g1 VALUES (1,1,10),(1,1,11),(1,2,12),(1,2,13),(1,3,14),(2,3,15),(3,3,16),(3,4,17),(4,1,18),"
    "(4,1,19),(NULL,1,20),(NULL,NULL,21)",
    "INSERT INTO {s}.g2 VALUES (1,1,1,1),(1,1,1,2),(1,1,2,2),(1,2,2,2),(2,2,2,2),(2,2,NULL,3)",
]

QUERIES = [
    # ROLLUP / CUBE / GROUPING SETS with GROUPING() and several aggregates
    "SELECT a, b, grouping(a, b), sum(v), count(*), max(v) FROM g1 GROUP BY ROLLUP (a, b)",
    "SELECT a, b, grouping(b, a), grouping(a), sum(v) FROM g1 GROUP BY CUBE (a, b)",
    "SELECT a, b, grouping(a, b), count(*) FROM g1 GROUP BY GROUPING SETS ((a), (b), ())",
    "SELECT a, b, grouping(a, b), count(*) FROM g1 GROUP BY GROUPING SETS ((a), (b)) ORDER BY 3, 1, 2",
    # cartesian products of grouping items, composite units, nesting
    "SELECT a, b, c, d, count(*) FROM g2 GROUP BY ROLLUP (a, b), GROUPING SETS (c, d)",
    "SELECT a, b, c, count(*) FROM g2 GROUP BY a, ROLLUP (b, c)",
    "SELECT a, b, c, count(*) FROM g2 GROUP BY ROLLUP ((a, b), c)",
    "SELECT sum(c) FROM g2 GROUP BY GROUPING SETS (a, GROUPING SETS (a, CUBE (b)))",
    "SELECT sum(c) FROM g2 GROUP BY GROUPING SETS ((), GROUPING SETS ((), GROUPING SETS (())))",
    "SELECT a, b, sum(c), count(*) FROM g2 GROUP BY GROUPING SETS (ROLLUP (a, b), a)",
    # duplicate sets repeat their groups; GROUP BY DISTINCT removes them; SELECT DISTINCT differs
    "SELECT a, count(*) FROM g1 GROUP BY GROUPING SETS ((a), (a), ())",
    "SELECT a, b, c FROM g2 GROUP BY ALL ROLLUP (a, b), ROLLUP (a, c)",
    "SELECT a, b, c FROM g2 GROUP BY DISTINCT ROLLUP (a, b), ROLLUP (a, c)",
    "SELECT DISTINCT a, b, c FROM g2 GROUP BY ROLLUP (a, b), ROLLUP (a, c)",
    # an empty input: a set without keys still gives its one row, once per such set
    "SELECT a, b, sum(v), count(*) FROM gempty GROUP BY GROUPING SETS ((a, b), a)",
    "SELECT a, b, sum(v), count(*) FROM gempty GROUP BY GROUPING SETS ((a, b), (), (), ())",
    "SELECT sum(v), count(*) FROM gempty GROUP BY GROUPING SETS ((), (), ())",
    "SELECT count(*) FROM gempty GROUP BY ()",
    "SELECT t1.a, t2.b, sum(t1.v), count(*) FROM gempty t1, gempty t2 GROUP BY GROUPING SETS ((t1.a, t2.b), ())",
    # select-list expressions over a NULL-padded key read the padded value
    "SELECT a, a + 1, b * 10, count(*) FROM g1 GROUP BY ROLLUP (a, b)",
    "SELECT (a + b) * 1, sum(v) FROM g1 GROUP BY GROUPING SETS (a + b, a)",
    # keys named by output name or ordinal are kept apart even when equal
    "SELECT a AS x, a AS y FROM g1 GROUP BY x, ROLLUP (y)",
    "SELECT 1 AS x, a, sum(v) FROM g1 GROUP BY GROUPING SETS (1, 2)",
    # HAVING, ORDER BY, window functions and outer references above the union
    "SELECT a, count(*) FROM g1 GROUP BY ROLLUP (a) HAVING a IS DISTINCT FROM 1",
    "SELECT a, grouping(a) FROM g1 GROUP BY CUBE (a) HAVING grouping(a) > 0",
    "SELECT a, b, sum(v), sum(sum(v)) OVER (ORDER BY a, b) AS rsum FROM g1 GROUP BY ROLLUP (a, b) ORDER BY rsum, a, b",
    "SELECT a, b, sum(v) FROM g1 GROUP BY CUBE (a, b) ORDER BY a NULLS FIRST, b NULLS FIRST, 3 DESC LIMIT 5",
    "SELECT a, b, grouping(a, b), array_agg(v ORDER BY v), count(DISTINCT b) FROM g1 GROUP BY ROLLUP (a, b)",
    "SELECT a, sum(v) FILTER (WHERE v > 12) FROM g1 GROUP BY ROLLUP (a)",
    "SELECT a, percentile_disc(0.5) WITHIN GROUP (ORDER BY v), rank(12) WITHIN GROUP (ORDER BY v) FROM g1 GROUP BY ROLLUP (a)",
    "SELECT * FROM (VALUES (1), (2)) v(x) LEFT JOIN LATERAL (SELECT v.x, a, count(*) FROM g2 GROUP BY CUBE (a)) s ON true",
    "SELECT * FROM (VALUES (1), (2)) v(x), LATERAL (SELECT v.x, a, count(*) FROM g2 GROUP BY a) s",
    "SELECT v.c, (SELECT count(*) FROM g2 GROUP BY () HAVING v.c) FROM (VALUES (false), (true)) v(c)",
    # GROUPING of an outer query's key, in a subquery; GROUPING under a plain GROUP BY is 0
    "SELECT (SELECT grouping(a)) FROM g1 GROUP BY CUBE (a)",
    "SELECT a, (SELECT (SELECT grouping(a, b)) FROM (VALUES (1)) w(z)) FROM g1 GROUP BY ROLLUP (a, b)",
    "SELECT a, grouping(a) FROM g1 GROUP BY a",
    # errors: a GROUPING argument that is not a key of its query level; a CUBE too large
    "SELECT (SELECT grouping(a, b) FROM g2) FROM g2 GROUP BY a, b",
    "SELECT grouping(v) FROM g1 GROUP BY ROLLUP (a)",
    "SELECT count(*) FROM g2 GROUP BY CUBE (a, b, c, d, a, b, c, d, a, b, c, d, a)",
]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "gsets-", "gs", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert _rows(mz, sql) == expected
