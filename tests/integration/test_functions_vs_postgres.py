"""Aggregates and scalar functions compared row for row with a real PostgreSQL 15 on the same
data (NULLs, duplicates and empty groups included).

Numeric values compare by value (mzspark's unconstrained numeric does not keep Postgres'
display scale, DESIGN §12); everything else, arrays included, compares exactly as psycopg
decodes it from each server's own type OIDs.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.fa (g int, i2 smallint, i4 int, i8 bigint, n numeric, f4 real, f8 float8, s text, b bool)",
    "INSERT INTO {s}.fa VALUES (1, 1, 10, 100, 1.5, 1.5, 2.25, 'a', true), (1, 1, 10, 100, 1.5, 1.5, 2.25, 'a', true),"
    " (1, 4, 40, 400, 2.5, 2.5, 4.5, 'b', false), (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (2, 3, 30, 300, 10.25, 0.5, -1.0, 'c', true), (2, 5, 50, 500, -3.75, 8, 3.0, 'd', true),"
    " (3, 5, 50, 500, 0, 0, 0, 'e', false), (NULL, 6, 60, 600, 6, 6, 6, NULL, NULL)",
    "CREATE TABLE {s}.arr (id int, a int[], t text[])",
    "INSERT INTO {s}.arr VALUES (1, '{1,2,3}', '{x,y}'), (2, ARRAY[3, NULL, 5], ARRAY['a b', NULL, '', 'NULL']),"
    " (3, '{}', '{}'), (4, NULL, NULL), (5, '{2,2}', '{\"q\\\"\",z}')",
]

AGGREGATES = [
    # count/sum/avg over every numeric type, DISTINCT and FILTER
    "SELECT g, count(*), count(i2), sum(i2), sum(i4), sum(i8), sum(n), sum(f4), sum(f8) FROM fa GROUP BY g",
    "SELECT g, avg(i2), avg(i4), avg(i8), round(avg(n), 10), avg(f4), avg(f8) FROM fa GROUP BY g",
    "SELECT count(DISTINCT i2), sum(DISTINCT i4), avg(DISTINCT i8), sum(DISTINCT f8) FROM fa",
    "SELECT g, count(DISTINCT i2) FILTER (WHERE b), sum(i4) FILTER (WHERE s > 'a'), round(avg(n) FILTER (WHERE n > 0), 10) FROM fa GROUP BY g",
    "SELECT sum(i4), count(*), avg(f8) FROM fa WHERE g > 100",
    # statistics
    "SELECT g, stddev(f8), stddev_samp(f8), stddev_pop(f8), variance(f8), var_samp(f8), var_pop(f8) FROM fa GROUP BY g",
    "SELECT g, round(stddev(i4), 6), round(stddev_pop(i8), 6), round(variance(n), 6), round(var_pop(i2), 6) FROM fa GROUP BY g",
    # floats: the last bits depend on the summation algorithm and order (Postgres: Youngs-Cramer)
    "SELECT round(var_samp(DISTINCT f8)::numeric, 10), round(stddev_pop(f4)::numeric, 10) FROM fa",
    # booleans
    "SELECT g, bool_and(b), bool_or(b), every(b), every(i4 > 10) FROM fa GROUP BY g",
    # string_agg / array_agg with ORDER BY, DISTINCT, FILTER and duplicates
    "SELECT g, string_agg(s, ',' ORDER BY s) FROM fa GROUP BY g",
    "SELECT g, string_agg(s, ', ' ORDER BY i4 DESC, s) FROM fa GROUP BY g",
    "SELECT string_agg(s, '-' ORDER BY s NULLS FIRST), string_agg(DISTINCT s, ';'), string_agg(DISTINCT s, ';' ORDER BY s DESC) FROM fa",
    "SELECT g, string_agg(s, s ORDER BY s) FROM fa GROUP BY g",
    "SELECT g, string_agg(s, ',' ORDER BY s) FILTER (WHERE i4 > 10) FROM fa GROUP BY g",
    "SELECT g, array_agg(i4 ORDER BY i4), array_agg(s ORDER BY s DESC), array_agg(n ORDER BY n NULLS FIRST) FROM fa GROUP BY g",
    "SELECT array_agg(DISTINCT i2), array_agg(DISTINCT s ORDER BY s DESC), array_agg(b ORDER BY g, s) FROM fa",
    "SELECT g, array_agg(f8 ORDER BY f8) FILTER (WHERE f8 > 2), array_agg(i8 ORDER BY i8) FILTER (WHERE false) FROM fa GROUP BY g",
    "SELECT array_agg(i4 ORDER BY i4) FROM fa WHERE g > 100",
    "SELECT g, array_agg(i2 ORDER BY i2 DESC NULLS LAST), array_agg(f4 ORDER BY f4) FROM fa GROUP BY g",
    # order-sensitive aggregates next to accumulable ones in one reduction
    "SELECT g, count(*), sum(i4), string_agg(s, '' ORDER BY s), max(n) FROM fa GROUP BY g",
]

ARRAYS = [
    "SELECT id, a, t FROM arr",
    "SELECT ARRAY[1, 2], ARRAY['a', NULL], ARRAY[1.5, 2], '{4,5}'::int[], '{}'::text[], ARRAY[]::bigint[], ARRAY[id, id * 2] FROM arr",
    "SELECT id, a[1], a[2], a[0], a[4], a[-1], a[id], t[1] FROM arr",
    "SELECT id, array_length(a, 1), array_length(a, 2), cardinality(a), cardinality(t), array_upper(a, 1), array_lower(a, 1) FROM arr",
    "SELECT id, array_to_string(a, ','), array_to_string(a, '-', '*'), array_to_string(t, '|') FROM arr",
    "SELECT id, array_position(a, 2), array_position(a, NULL), array_position(t, 'y') FROM arr",
    "SELECT id, array_cat(a, ARRAY[9]), a || ARRAY[7, 8], a || 6, 0 || a, a || a, array_append(a, 1), array_prepend(1, a), array_remove(a, 2) FROM arr",
    "SELECT id, a @> ARRAY[2], a <@ ARRAY[1, 2, 3, 5], a && ARRAY[5, 9], ARRAY[3] <@ a, a @> '{}' FROM arr",
    "SELECT id, 2 = ANY(a), 2 <> ALL(a), id < ANY(a), id <= ALL(a), NULL::int = ANY(a), 'x' = ANY(t) FROM arr",
    "SELECT id, a = ARRAY[1, 2, 3], a = '{2,2}', a < ARRAY[2] FROM arr",
    "SELECT id FROM arr WHERE 3 = ANY(a)",
    "SELECT id, a::text, t::text, ARRAY[1.5, NULL]::text FROM arr",
    "SELECT id, x FROM arr, unnest(a) AS x",
    "SELECT id, x, n FROM arr, unnest(t) WITH ORDINALITY AS u(x, n)",
    "SELECT * FROM unnest(ARRAY['p', 'q', NULL]) WITH ORDINALITY",
    "SELECT id, u.x FROM arr CROSS JOIN LATERAL unnest(a) AS u(x) WHERE u.x > 1",
    "SELECT x, count(*) FROM arr, unnest(a) AS x GROUP BY x",
    "SELECT a, count(*) FROM arr GROUP BY a",
    "SELECT id, array_agg(x ORDER BY x DESC) FROM arr, unnest(a) AS x GROUP BY id",
]

QUERIES = AGGREGATES + ARRAYS


def _norm(v: object) -> object:
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
    with reference_postgres("functions-") as dsn:
        pg = psycopg.connect(dsn, autocommit=True)
        mz = mz_server.connect()
        for conn in (pg, mz):
            conn.execute("CREATE SCHEMA fn")
            conn.execute("SET search_path = fn")
            for st in SETUP:
                conn.execute(st.replace("{s}", "fn"))
        yield mz, pg
        mz.close()
        pg.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert not isinstance(expected, str), f"the reference rejects the query: {expected}"
    assert _rows(mz, sql) == expected
