"""LATERAL items that only pass an outer column on (`JOIN LATERAL (VALUES (a.x)) ss(y) ON
b.z = ss.y`, `CROSS JOIN LATERAL (SELECT a.x AS y)`) join like the equality they stand for
(a.x = b.z), answered as PostgreSQL 15 answers them. Before, the lateral side was applied to
the distinct rows of every earlier FROM item (a × b, all columns) and the equality stayed a
filter over a cross join: pg_regress join.sql's `tenk1 a, tenk1 b JOIN LATERAL (VALUES
(a.unique1)) ..` (10k × 10k) timed out after 60 s. Also: LATERAL sides that are not a plain
row-wise map (a Union, a TopK, an aggregate) are decorrelated on the columns they read only."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

ROWS = 3000

SETUP = [
    "CREATE TABLE {s}.tk (unique1 int, unique2 int, ten int, s text)",
    # unique1 and unique2 are two permutations of 0..ROWS-1; a few NULLs in ten
    f"INSERT INTO {{s}}.tk SELECT g, (g * 7919) % {ROWS}, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 10 END, 'r' || g "
    f"FROM generate_series(0, {ROWS - 1}) g",
    "CREATE TABLE {s}.small (k int, v int)",
    "INSERT INTO {s}.small VALUES (1, 10), (2, 20), (2, 21), (NULL, 30), (-1, 40)",
]

QUERIES = [
    # pg_regress join.sql 1860 and 1867
    "SELECT count(*) FROM tk a, tk b JOIN LATERAL (VALUES (a.unique1)) ss(x) ON b.unique2 = ss.x",
    "SELECT count(*) FROM tk a, tk b JOIN LATERAL (VALUES (a.unique1), (-1)) ss(x) ON b.unique2 = ss.x",
    "SELECT count(*) FROM tk a CROSS JOIN LATERAL (SELECT a.unique1 AS y) s, tk b WHERE b.unique2 = s.y",
    "SELECT sum(b.ten), count(*) FROM tk a, tk b CROSS JOIN LATERAL (SELECT a.unique2 AS y) s WHERE b.unique1 = s.y AND a.ten = 3",
    "SELECT a.unique1, b.unique1, s.y FROM tk a, small b, LATERAL (SELECT a.ten AS y) s WHERE b.k = s.y",
    "SELECT a.unique1, b.v FROM tk a, small b LEFT JOIN LATERAL (SELECT a.ten AS y) s ON b.k = s.y WHERE a.unique1 < 20",
    "SELECT a.unique1, b.k, s.y FROM small b, tk a JOIN LATERAL (SELECT a.ten + 1 AS y) s ON s.y > 0 WHERE b.k = s.y AND a.unique1 < 40",
    # not row-wise: keyed on the columns read
    "SELECT a.unique1, t.v FROM tk a, LATERAL (SELECT v FROM small WHERE small.k = a.ten ORDER BY v DESC LIMIT 1) t",
    "SELECT a.ten, t.n FROM tk a, LATERAL (SELECT count(*) AS n FROM small WHERE small.k <= a.ten) t WHERE a.unique1 < 30",
    "SELECT count(*), sum(ss.x) FROM tk a, small b JOIN LATERAL (VALUES (a.ten), (b.k)) ss(x) ON b.v = ss.x + 9",
    # duplicates on the left are kept (row-wise application, no Distinct)
    "SELECT b.k, s.y FROM small b, LATERAL (SELECT b.v * 2 AS y) s",
    "SELECT b.k, s.y FROM small b, small c, LATERAL (SELECT b.k AS y) s WHERE c.k = s.y",
    # row-wise LEFT JOIN LATERAL with rows filtered out; a lateral inside a correlated subquery
    "SELECT b.k, b.v, s.y FROM small b LEFT JOIN LATERAL (SELECT b.v + 1 AS y WHERE b.k > 1) s ON true",
    "SELECT c.k, (SELECT sum(s.y) FROM small b, LATERAL (SELECT b.v + c.k AS y) s WHERE b.k = c.k) FROM small c",
    "SELECT c.k, EXISTS (SELECT 1 FROM tk a, tk b JOIN LATERAL (VALUES (a.unique1)) ss(x) ON b.unique2 = ss.x "
    "WHERE a.unique1 = c.v) FROM small c",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "lateral-", "lat", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_lateral_answers_as_postgres(both, sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql), sql


@pytest.mark.parametrize("sql", QUERIES[:4])
def test_lateral_column_is_a_join_equality(both, sql: str) -> None:
    """The plan joins a and b on the equality through the lateral column: no cross_join."""
    mz, _ = both
    plan = "\n".join(r[0] for r in mz.execute("EXPLAIN PHYSICAL PLAN FOR " + sql).fetchall())
    assert "cross_join" not in plan, plan
