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
    # a typmod survives UNION / VALUES / CASE / COALESCE / IN only when every input has it: an
    # unknown literal has none (was: varchar(3), truncating '0123456789' to '012' or 22001)
    "SELECT 'abc'::varchar(3) UNION ALL SELECT '0123456789'",
    "SELECT * FROM (VALUES ('abc'::varchar(3), 1.5::numeric(2,1)), ('0123456789', 1.25)) v(x, y)",
    "SELECT coalesce(NULL::varchar(3), 'abcdef'), CASE WHEN a > 0 THEN 'abcdef' ELSE 'x'::varchar(1) END FROM ta",
    "SELECT 1.25::numeric(3,1) IN (1.25), 1.3::numeric(3,1) IN (1.25, 1.3) FROM ta",
    "SELECT 'a'::char(5) IN ('a', 'bc'), 'bc'::char(3) IN ('a', 'bc') FROM ta",
    # records in one VALUES column / UNION unify field by field (was a Spark struct mismatch, XX000)
    "SELECT b FROM (VALUES (1, ROW(1, 2)), (2, ROW(3::bigint, 4))) AS r(a, b)",
    "SELECT ROW(1, 2) UNION ALL SELECT ROW(3::bigint, 4)",
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
    # a parenthesized join tree whose first item is a derived table or another tree
    "SELECT * FROM ((SELECT c / 2 AS h FROM l) d JOIN s ON h = s.c) j",
    "SELECT * FROM ((SELECT c AS h FROM l) d JOIN s ON h = s.c)",
    "SELECT * FROM ((SELECT c AS h FROM l) d JOIN s ON h = s.c) j, LATERAL (SELECT h) t(k)",
    "SELECT * FROM (((SELECT c AS h FROM l) d JOIN s ON h = s.c) LEFT JOIN r ON r.c = h)",
    "SELECT c, count(*) FROM l FULL JOIN r USING (c) GROUP BY c",
    # grouping sees through a merged column: c = l.c::bigint is grouped by l.c (not the
    # reverse); an inner join's c is r.c, the side without a cast (was 42803 / l.c's values)
    "SELECT c FROM l LEFT JOIN r USING (c) GROUP BY l.c",
    "SELECT c, count(*) FROM l LEFT JOIN r USING (c) GROUP BY c",
    "SELECT l.c FROM l LEFT JOIN r USING (c) GROUP BY l.c",
    "SELECT l.c FROM l LEFT JOIN r USING (c) GROUP BY c",
    "SELECT c FROM l JOIN r USING (c) GROUP BY l.c",
    "SELECT c FROM l JOIN r USING (c) GROUP BY r.c",
    "SELECT c + 1 FROM r RIGHT JOIN l USING (c) GROUP BY l.c HAVING max(c) > 0",
    "SELECT c FROM l FULL JOIN r USING (c) GROUP BY l.c",
    "SELECT c FROM l FULL JOIN r USING (c) GROUP BY l.c, r.c",
    "SELECT c FROM s JOIN (l LEFT JOIN r USING (c)) USING (c) GROUP BY s.c",
    "SELECT c FROM (l LEFT JOIN r USING (c)) LEFT JOIN s USING (c) GROUP BY l.c",
    "SELECT c, y FROM l JOIN (SELECT y, c::numeric AS c FROM r) r USING (c)",
    # an unknown literal compared with a typmod'd value takes the type, not the typmod
    "SELECT 'abcdef' = 'abc'::varchar(3), 'abc'::varchar(3) < 'abcdef', 'abcdef' IN ('abc'::varchar(3)),"
    " 'abcdef' = 'abc'::char(3), '1.25' = 1.3::numeric(3, 1)",
    "SELECT * FROM l JOIN r USING (x)",
    "SELECT * FROM l JOIN r USING (c, c)",
    # 3. a comma binds looser than JOIN; ON sees only its own join tree
    "SELECT * FROM ta, tb RIGHT JOIN tc ON b = c",
    "SELECT * FROM ta, tb FULL JOIN tc ON b = c, l",
    "SELECT * FROM ta CROSS JOIN tb, tc",
    "SELECT * FROM ta, tb JOIN tc ON a = c",
    "SELECT * FROM ta, tb JOIN tc ON ta.a = c",
    "SELECT * FROM l, LATERAL (SELECT l.x + 1 AS q) t",
    # a LATERAL item inside a later join tree sees the earlier FROM items
    "SELECT * FROM ta, tb JOIN LATERAL (SELECT ta.a + tb.b AS q) t ON true",
    "SELECT * FROM l, r LEFT JOIN LATERAL (SELECT s.z FROM s WHERE s.c = l.c AND s.z > r.y - 300) t ON true",
    "SELECT * FROM l, r JOIN LATERAL (SELECT l.x + r.y AS q) t ON q > 100 JOIN s ON s.c = r.c",
    "SELECT * FROM LATERAL (SELECT 1 AS k) t RIGHT JOIN l ON l.c = t.k",
    # ... but the tree's ON clauses do not (was: accepted, reading ta / l)
    "SELECT * FROM ta, tb JOIN LATERAL (SELECT tb.b AS q) t ON ta.a = t.q",
    "SELECT * FROM ta, tb JOIN LATERAL (SELECT tb.b AS q) t ON t.q IN (SELECT ta.a)",
    "SELECT * FROM l, r LEFT JOIN LATERAL (SELECT l.x AS q) t ON true JOIN s ON s.c = l.c",
    "SELECT * FROM l, r JOIN LATERAL (SELECT l.x AS q, r.y) t ON c = t.y",
    "SELECT * FROM l, LATERAL (SELECT l.x AS q) t JOIN r ON r.y = l.x",
    "SELECT * FROM l, LATERAL (SELECT l.x AS q) t JOIN r ON r.y = t.q",
    "SELECT * FROM l, (SELECT l.x) t",
    "SELECT * FROM LATERAL (SELECT r.y) t, r",
    "SELECT * FROM l, LATERAL (SELECT s.z FROM s WHERE s.c = r.c) t, r",
    # 4. WITH scoping: an inner WITH shadows only inside its query; correlated CTEs
    "WITH foo AS (SELECT 1) (SELECT * FROM foo UNION ALL (WITH foo AS (SELECT 2) SELECT * FROM foo) "
    "UNION ALL (SELECT * FROM foo))",
    "WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x",
    "SELECT x, (WITH w AS (SELECT y FROM r WHERE r.c = l.c) SELECT max(y) FROM w) FROM l",
    "SELECT x FROM l WHERE EXISTS (WITH w AS (SELECT y FROM r WHERE r.c = l.c) SELECT * FROM w)",
    "SELECT x, (WITH w AS (SELECT l.x AS v) SELECT (SELECT v FROM w)) FROM l",
    "SELECT x, (WITH w AS (SELECT y FROM r WHERE r.c = l.c) SELECT (SELECT count(*) FROM w)) FROM l",
    "SELECT (SELECT c AS k FROM l ORDER BY x LIMIT 1), (VALUES (1)), EXISTS (SELECT 1)",
    # 6. an aggregate of outer columns only belongs to the outer query
    "SELECT (SELECT count(*) FILTER (WHERE outer_c <> 0) FROM (VALUES (1)) t0(inner_c)) FROM (VALUES (2), (3)) t1(outer_c)",
    "SELECT (SELECT count(*) FILTER (WHERE outer_c <> 0) FROM (VALUES (1), (2)) t0(inner_c)) FROM (VALUES (2), (3)) t1(outer_c)",
    "SELECT c, (SELECT sum(l.x) + count(*) FROM r WHERE r.c = 1) FROM l GROUP BY c",
    "SELECT (SELECT max(l.x) FROM r) FROM l",
    "SELECT c FROM l WHERE x > (SELECT max(l.x) FROM r)",
    # 7. row comparisons (NULLs decide where Postgres says they do)
    "SELECT (1, 2) < (3, 4), (1, NULL) < (1, 2), (NULL, 1) < (2, 0), (1, NULL) < (2, 0), ROW(1, 2) = ROW(1, 2), "
    "(1, NULL) = (2, 2), (1, NULL) <> (2, 2), (1, 2) <= (1, 2), (1, 2) > (1, 2), (2, 1, 0) >= (2, 1, NULL), "
    "(1, NULL) IS DISTINCT FROM (1, NULL), (1, 2) IS NOT DISTINCT FROM ROW(1, 3)",
    "SELECT l.c, l.x, r.y FROM l, r WHERE (l.c, l.x) <= (r.c, r.y)",
    "SELECT (1, 2) = (1, 2, 3)",
    # WITH RECURSIVE: Postgres' working-table iteration (UNION ALL accumulates, UNION dedups)
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION SELECT (n % 3) + 1 FROM t) SELECT * FROM t",
    "WITH RECURSIVE t(a, b) AS (SELECT c, x FROM l WHERE c = 1 UNION ALL SELECT t.a + 1, t.b + r.y FROM t JOIN r ON r.c = t.a) "
    "SELECT * FROM t",
    "WITH RECURSIVE x AS (SELECT 5 AS k), t(n) AS (SELECT k FROM x UNION ALL SELECT n - 1 FROM t WHERE n > 0) "
    "SELECT count(*), sum(n) FROM t",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t, t AS u WHERE n < 5) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (SELECT n FROM t) SELECT * FROM t",
    # a recursive reference inside an outer join: Postgres' 42P19
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM l LEFT JOIN t ON t.n = l.c WHERE n < 3) SELECT * FROM t",
    # an outer join in the recursive term, the recursive reference on its preserved side
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT t.n + 1 FROM t LEFT JOIN l ON l.c = t.n WHERE t.n < 4) SELECT * FROM t",
    "WITH RECURSIVE t(n, x) AS (SELECT 1, 0 UNION ALL SELECT t.n + 1, l.x FROM l RIGHT JOIN t ON l.c = t.n WHERE t.n < 4) "
    "SELECT * FROM t",
    # WITH .. VALUES: the VALUES list is the body (columns column1, ..), also in a subquery
    "WITH cte(foo) AS (VALUES (42)) VALUES ((SELECT foo FROM cte))",
    "WITH c AS (SELECT 1 AS a) VALUES (1, 'x'), (2, 'y') UNION ALL SELECT a, 'z' FROM c",
    "SELECT (WITH cte(foo) AS (VALUES (x)) VALUES ((SELECT foo FROM cte))) FROM l",
    # ORDER BY of a set operation: result column names or positions only
    "SELECT c FROM l UNION SELECT y FROM r ORDER BY c DESC",
    "SELECT c FROM l UNION SELECT y FROM r ORDER BY c + 1",
    "SELECT c FROM l UNION SELECT y FROM r ORDER BY nope",
    # whole-row references: a FROM item's name as a value is its row
    "SELECT l::text FROM l",  # a table's row type: compared as text
    "SELECT (SELECT l)::text FROM l",
    "SELECT (SELECT (SELECT l))::text FROM l",
    "SELECT (l.*)::text FROM l",
    "SELECT foo FROM (SELECT 1 OFFSET 0) AS foo",
    "SELECT foo FROM (SELECT NULL OFFSET 0) AS foo",
    "SELECT foo FROM (SELECT 'xyzzy', 1, NULL OFFSET 0) AS foo",
    "SELECT q FROM (SELECT max(x) FROM l GROUP BY c) q",
    "WITH q AS (SELECT max(x) FROM l GROUP BY c) SELECT q FROM q",
    "SELECT count(q), count(*) FROM (SELECT c FROM l) q",
    "SELECT q IS NULL, q IS NOT NULL FROM (SELECT c FROM l) q",
    "SELECT c FROM l q WHERE q = ROW(2, 20)",
    "SELECT l::text FROM l JOIN r USING (c)",
    "SELECT x FROM l WHERE c IN (SELECT c FROM r WHERE r = ROW(100, 1))",
    "SELECT x FROM l WHERE c IN (SELECT c FROM r WHERE r = ROW(100, 1::bigint))",
    "SELECT a::text, a = b, a < b, a >= b, a <> b FROM (SELECT c, x, ROW(c, x) AS a FROM l) p, "
    "(SELECT c, x, ROW(c, x + 0) AS b FROM l) q",
    "SELECT ROW(ROW(1, NULL::int)) = ROW(ROW(1, NULL::int)), ROW(1, NULL::int) = ROW(1, NULL::int), "
    "ROW(ROW(1, NULL::int)) < ROW(ROW(1, 2)), ROW(ROW(NULL::int, 1)) > ROW(ROW(2, 1))",
    # row constructors against subqueries and record comparisons
    "SELECT * FROM l WHERE (c, x) IN (SELECT c, y / 100 * 10 FROM r)",
    "SELECT * FROM l WHERE (c, x) NOT IN (SELECT c, y / 10 FROM r)",
    "SELECT * FROM l WHERE (c, x) NOT IN (SELECT c, y FROM r WHERE c IS NOT NULL)",
    "SELECT * FROM l WHERE (c, x) IN (VALUES (1, 10), (2, 0))",
    "SELECT c, (c, x) IN (VALUES (1, 10), (2, 0)), (c, x) IN ((1, 10), (NULL, 30)) FROM l",
    "SELECT c, (c, x) = (SELECT 1, 10), (c, x) <> (SELECT 1, 10), (c, x) < (SELECT 1, 10) FROM l",
    "SELECT (SELECT 1, 10) < (c, x) FROM l",
    "SELECT c, (c, x) < ANY (SELECT c, y FROM r), (c, x) = ALL (SELECT c, y FROM r WHERE y = 100) FROM l",
    "SELECT ROW(ROW(ROW(1))) = ANY (SELECT ROW(ROW(1))), ROW(ROW(1, 2)) = ROW(ROW(1, 3))",
    "SELECT * FROM l WHERE (c, x) IN (SELECT c FROM r)",
    "SELECT * FROM l WHERE (c, x) IN (SELECT c, y, y FROM r)",
    "SELECT * FROM l WHERE (c, x) = (SELECT c, y FROM r)",
    # a type's name called as a function is its cast
    "SELECT float8(count(*)) / 3, int4(2.5), text(12), int8(x), bool(1) FROM l GROUP BY x",
    # a derived table's literal columns are text
    "SELECT f1 = 1 FROM (SELECT '1' AS f1) ss",
    "WITH w AS (SELECT '1' AS f1) SELECT f1 = 1 FROM w",
    "SELECT f1 || 1 FROM (SELECT 'a' AS f1) ss",
    # FETCH FIRST: counts, ONLY, WITH TIES; their errors
    "SELECT count(*) FROM (SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v FETCH FIRST 3 ROWS WITH TIES) s",
    "SELECT v FROM (VALUES (1), (1), (2)) t(v) FETCH FIRST 2 ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2)) t(v) ORDER BY v FETCH FIRST NULL ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2)) t(v) ORDER BY v FETCH FIRST (NULL + 1) ROWS ONLY",
    "SELECT v FROM (VALUES (1), (1), (2)) t(v) ORDER BY v FETCH FIRST (-1) ROWS ONLY",
    "SELECT numeric(7)",
    "SELECT c FROM l ORDER BY c USING =",
]

# queries whose ORDER BY decides the order of the whole result (compared in order)
ORDERED = [
    "SELECT c, x FROM l ORDER BY c USING >, x USING <",
    "SELECT c, x FROM l ORDER BY c USING > NULLS LAST, x",
    "SELECT c, x FROM l ORDER BY c USING <",
    "SELECT c, x FROM l ORDER BY c USING OPERATOR(pg_catalog.>)",
    "SELECT DISTINCT ON (k) k, x FROM (SELECT c % 2 AS k, x FROM l) s ORDER BY k USING <, x USING >",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v FETCH FIRST 3 ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v OFFSET 1 FETCH FIRST 2 ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v DESC FETCH FIRST ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v FETCH FIRST 0 ROWS WITH TIES",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v FETCH FIRST 3 ROWS ONLY",
    "SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY",
    "(SELECT v FROM (VALUES (1), (1), (2)) t(v) UNION ALL SELECT 2) ORDER BY 1 FETCH FIRST 3 ROWS WITH TIES",
]

# statements whose effect is read back by the query after them
SCRIPTS = [
    ["CREATE TABLE ctas AS SELECT c, x * 2 AS x2, 'k' AS k FROM l WHERE c IS NOT NULL", "SELECT * FROM ctas"],
    ["CREATE TABLE ctas_cols (p, q) AS SELECT l.c, r.y FROM l JOIN r USING (c)", "SELECT * FROM ctas_cols"],
    ["CREATE TABLE ctas_none AS SELECT * FROM l WITH NO DATA", "SELECT * FROM ctas_none"],
    # a WITH on INSERT / UPDATE / DELETE is in scope in the whole statement, shadowing tables
    ["CREATE TABLE wins (i int)", "WITH w AS (SELECT 42) INSERT INTO wins SELECT * FROM w",
     "WITH wins AS (SELECT 7) INSERT INTO wins SELECT * FROM wins",
     "WITH d AS (SELECT 42 AS v) DELETE FROM wins WHERE i IN (SELECT v FROM d)",
     "WITH u AS (SELECT 7 AS v) UPDATE wins SET i = i + 1 WHERE i IN (SELECT v FROM u)", "SELECT * FROM wins"],
    # INSERT .. DEFAULT VALUES: every column its default (a table may have none)
    ["CREATE TABLE dv (a int, b text DEFAULT 'x')", "INSERT INTO dv DEFAULT VALUES", "INSERT INTO dv DEFAULT VALUES",
     "SELECT * FROM dv"],
    ["CREATE TABLE nocols ()", "INSERT INTO nocols DEFAULT VALUES", "SELECT count(*) FROM nocols"],
    # FETCH FIRST .. WITH TIES in a view
    ["CREATE VIEW ties_v AS SELECT v FROM (VALUES (1), (1), (2), (2), (3)) t(v) ORDER BY v OFFSET 1 FETCH FIRST 2 ROWS WITH TIES",
     "SELECT * FROM ties_v"],
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


# joins of a tree over earlier FROM items with a LATERAL item (once refused: the tree is now
# bound in a scope of its own, sql.bind_from._lateral_tree)
LATERAL_TREES = [
    "SELECT * FROM ta, tb RIGHT JOIN LATERAL (SELECT ta.a AS q) t ON true",
    "SELECT * FROM l, LATERAL (SELECT l.x AS y) t NATURAL JOIN r",
    "SELECT * FROM l, r JOIN LATERAL (SELECT l.x AS z) t ON true JOIN s USING (z)",
]


@pytest.mark.parametrize("sql", QUERIES + LATERAL_TREES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _result(pg, sql)
    assert _result(mz, sql) == expected


@pytest.mark.parametrize("sql", ORDERED)
def test_same_order_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows_in_order(pg, sql)
    assert _rows_in_order(mz, sql) == expected


def _rows_in_order(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s[0][:40])
def test_same_effect_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], script: list[str]) -> None:
    mz, pg = both
    for sql in script[:-1]:
        assert _result(mz, sql) == _result(pg, sql)
    expected = _result(pg, script[-1])
    assert _result(mz, script[-1]) == expected


@pytest.mark.parametrize("sql", [
    "CREATE TABLE inh (y int) INHERITS (l)",
    # a ROW of NULLs beside a ROW of ints: Postgres keeps each row's own record type
    "SELECT r FROM (VALUES (1, ROW(1, 2)), (1, ROW(NULL, NULL))) AS r(a, b)",
    # a whole-row reference to the NULL-extended side of an outer join is NULL there
    "SELECT r FROM l LEFT JOIN r ON l.c = r.c",
    "SELECT l FROM l FULL JOIN r USING (c)",
    "SELECT c FROM l ORDER BY c USING ~<~",
])
def test_refused(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    """Accepted by Postgres with a meaning we do not implement: refused, never ignored."""
    mz, _ = both
    assert _result(mz, sql) == "error 0A000"


# Unaliased select items are named as PostgreSQL's FigureColname names them: operators that the
# parser models as functions (`^`, `->`, `~`, `@>`, `AND`) are `?column?`, casts take the type's
# name unless their argument has a strong name, CASE takes its ELSE's strong name.
COLUMN_NAME_EXPRS = [
    "2 ^ 3", "power(2, 3)", "'{\"a\":1}'::jsonb -> 'a'", "'{\"a\":1}'::jsonb ->> 'a'", "'{\"a\":1}'::jsonb #> '{a}'",
    "'{\"a\":1}'::jsonb @> '{}'", "'{}'::jsonb <@ '{}'", "'x' ~ 'y'", "'x' ~* 'y'", "'{\"a\":1}'::jsonb ? 'a'",
    "'ab' ^@ 'a'", "ARRAY[1] && ARRAY[2]", "true AND false", "a > 0 OR a < 0",
    "INTERVAL '1 day'", "'1'::text::int", "a::text::int", "upper('x')::int", "'{1}'::int[]", "'x'::varchar(3)",
    "1::double precision", "CASE WHEN true THEN 1 ELSE a END", "CASE WHEN true THEN a ELSE 2 END",
    "session_user", "current_user", "current_schema", "current_date", "(SELECT 1)::int", "ARRAY[a]::text[]",
    "coalesce(a, 1)::text", "EXISTS (SELECT 1)", "count(*)", "sum(a) OVER ()", "substring('abc' FROM 2)",
]


def _column_name(conn: psycopg.Connection, sql: str) -> str:
    """The first output column's name from Describe (nothing is executed)."""
    pgc = conn.pgconn
    res = pgc.prepare(b"", sql.encode())
    assert res.status == psycopg.pq.ExecStatus.COMMAND_OK, res.error_message
    desc = pgc.describe_prepared(b"")
    assert desc.status == psycopg.pq.ExecStatus.COMMAND_OK, desc.error_message
    return (desc.fname(0) or b"").decode()


@pytest.mark.parametrize("expr", COLUMN_NAME_EXPRS)
def test_output_column_name_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], expr: str) -> None:
    mz, pg = both
    sql = f"SELECT {expr} FROM ta"
    assert _column_name(mz, sql) == _column_name(pg, sql)
