"""WITH MUTUALLY RECURSIVE executed on Spark (compute/render/oneshot.py `_letrec`): fixpoints
compared with PostgreSQL's WITH RECURSIVE and with the least fixpoints computed here,
Materialize's in-order evaluation of the bindings, recursion limits (RETURN AT / ERROR AT,
exactly at the boundary), multiset bindings, TopK inside the recursion, WMR in views and
correlated subqueries, EXPLAIN ANALYZE, and statement timeouts interrupting a divergent
recursion."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

pytestmark = pytest.mark.integration

# two cycles, a chain into a cycle, a self loop, a duplicate edge, NULLs
EDGES = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (5, 6), (6, 4), (7, 7), (8, 1), (8, 1), (9, None), (None, 9), (10, 11)]
LIMIT_MSG = ("Evaluation error: Recursive query exceeded the recursion limit {}. (Use RETURN AT RECURSION LIMIT to not "
             "error, but return the current state as the final result when reaching the limit.)")


@pytest.fixture(scope="module")
def mz(mz_server: MzServer) -> Iterator[psycopg.Connection]:
    conn = mz_server.connect()
    conn.execute("CREATE SCHEMA wmr")
    conn.execute("SET search_path = wmr")
    _create_edges(conn)
    conn.execute("CREATE TABLE one (i int)")
    conn.execute("INSERT INTO one VALUES (1)")
    yield conn
    conn.close()


def _create_edges(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE edges (src int, dst int)")
    values = ", ".join(f"({'NULL' if a is None else a}, {'NULL' if b is None else b})" for a, b in EDGES)
    conn.execute(f"INSERT INTO edges VALUES {values}")


def rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)


def error(conn: psycopg.Connection, sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql).fetchall()
    return e.value


def closure(edges: list[tuple]) -> set[tuple]:
    """The transitive closure, as a least fixpoint computed in Python."""
    reach = {(a, b) for a, b in edges if a is not None and b is not None} | {(a, b) for a, b in edges}
    while True:
        more = reach | {(a, d) for a, b in reach for c, d in edges if b is not None and b == c}
        if more == reach:
            return reach
        reach = more


CLOSURE_MZ = """
WITH MUTUALLY RECURSIVE
  reach (src int, dst int) AS (
    SELECT src, dst FROM edges
    UNION
    SELECT r.src, e.dst FROM reach r JOIN edges e ON r.dst = e.src
  )
{select}"""
CLOSURE_PG = """
WITH RECURSIVE
  reach (src, dst) AS (
    SELECT src, dst FROM edges
    UNION
    SELECT r.src, e.dst FROM reach r JOIN edges e ON r.dst = e.src
  )
{select}"""


def test_transitive_closure_matches_postgres(mz: psycopg.Connection) -> None:
    selects = [
        "SELECT src, dst FROM reach",
        "SELECT src, count(*) FROM reach GROUP BY src",
        "SELECT r.src FROM reach r WHERE r.src = r.dst",  # the nodes on a cycle
    ]
    with reference_postgres("wmr-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        _create_edges(pg)
        for select in selects:
            expected = rows(pg, CLOSURE_PG.format(select=select))
            assert rows(mz, CLOSURE_MZ.format(select=select)) == expected, select
    assert set(rows(mz, CLOSURE_MZ.format(select="SELECT src, dst FROM reach"))) == closure(EDGES)


# A recursion over constants only is computed while planning (sql/transforms/fold_letrec.py);
# the same recursion seeded from a table runs on Spark: both must give the same answer.
SEEDS = {"folded": "SELECT {v}", "rendered": "SELECT i - 1 + {v} FROM one"}


def _check_path(mz: psycopg.Connection, sql: str, path: str) -> None:
    plan = "\n".join(r[0] for r in mz.execute("EXPLAIN OPTIMIZED PLAN FOR " + sql).fetchall())
    assert ("Mutually Recursive" in plan) == (path == "rendered"), plan


@pytest.mark.parametrize("path", SEEDS)
def test_mutually_recursive_even_odd(mz: psycopg.Connection, path: str) -> None:
    sql = """
    WITH MUTUALLY RECURSIVE
      evens (n bigint) AS (SEED UNION SELECT n + 1 FROM odds WHERE n < 15),
      odds (n bigint) AS (SELECT n + 1 FROM evens)
    SELECT 'even', n FROM evens UNION ALL SELECT 'odd', n FROM odds""".replace("SEED", SEEDS[path].format(v=0))
    _check_path(mz, sql, path)
    assert rows(mz, sql) == sorted([("even", n) for n in range(0, 15, 2)] + [("odd", n) for n in range(1, 16, 2)], key=repr)


@pytest.mark.parametrize("path", SEEDS)
def test_later_bindings_read_this_iterations_values(mz: psycopg.Connection, path: str) -> None:
    """In one iteration the bindings are evaluated in order, each reading the latest values:
    after one iteration `b` already holds what `a` got in that iteration, while `a` read
    `b`'s (empty) value of the previous one."""
    sql = """
    WITH MUTUALLY RECURSIVE (RETURN AT RECURSION LIMIT {n})
      a (n int) AS (SEED UNION SELECT n + 1 FROM b WHERE n < 5),
      b (n int) AS (SELECT n FROM a UNION SELECT n FROM b)
    SELECT 'a', n FROM a UNION ALL SELECT 'b', n FROM b""".replace("SEED", SEEDS[path].format(v=1))
    _check_path(mz, sql.format(n=2), path)
    assert rows(mz, sql.format(n=1)) == [("a", 1), ("b", 1)]
    assert rows(mz, sql.format(n=2)) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert rows(mz, sql.format(n=100)) == sorted([("a", n) for n in range(1, 6)] + [("b", n) for n in range(1, 6)], key=repr)


COUNTER = """
WITH MUTUALLY RECURSIVE {limit}
  cnt (i int) AS (SELECT 1 AS i UNION SELECT i + 1 FROM cnt {where})
SELECT i FROM cnt"""
COUNTERS = {"folded": COUNTER, "rendered": COUNTER.replace("SELECT 1 AS i", "SELECT i FROM one")}


@pytest.mark.parametrize("path", COUNTERS)
def test_return_at_recursion_limit_of_a_divergent_binding(mz: psycopg.Connection, path: str) -> None:
    _check_path(mz, COUNTERS[path].format(limit="(RETURN AT RECURSION LIMIT 3)", where=""), path)
    for n in (1, 3, 7):
        assert rows(mz, COUNTERS[path].format(limit=f"(RETURN AT RECURSION LIMIT {n})", where="")) == [(i,) for i in range(1, n + 1)]


def test_error_at_recursion_limit(mz: psycopg.Connection) -> None:
    e = error(mz, COUNTER.format(limit="(ERROR AT RECURSION LIMIT 5)", where=""))
    assert e.sqlstate == "XX000"
    assert e.diag.message_primary == LIMIT_MSG.format(5)
    # a bare RECURSION LIMIT errors too
    assert error(mz, COUNTER.format(limit="(RECURSION LIMIT 4)", where="")).diag.message_primary == LIMIT_MSG.format(4)


@pytest.mark.parametrize("path", COUNTERS)
def test_error_at_recursion_limit_exactly_at_the_boundary(mz: psycopg.Connection, path: str) -> None:
    """{1}, {1,2}, {1,2,3} then an unchanged 4th evaluation: the limit must allow the
    evaluation that finds nothing changed, and fails if the 3rd still changes the binding
    (the fold leaves that error to the renderer)."""
    converging = COUNTERS[path].format(limit="(ERROR AT RECURSION LIMIT {})", where="WHERE i < 3")
    _check_path(mz, converging.format(4), path)
    assert rows(mz, converging.format(4)) == [(1,), (2,), (3,)]
    assert error(mz, converging.format(3)).diag.message_primary == LIMIT_MSG.format(3)
    # without a limit it simply converges
    assert rows(mz, COUNTERS[path].format(limit="", where="WHERE i < 3")) == [(1,), (2,), (3,)]


def test_bindings_are_multisets(mz: psycopg.Connection) -> None:
    """UNION ALL re-adds the binding's rows every iteration (Materialize's docs example): after
    n iterations every edge is there n times, and it never converges."""
    sql = """
    WITH MUTUALLY RECURSIVE ({kind} AT RECURSION LIMIT {n})
      conn (src int, dst int) AS (
        SELECT DISTINCT src, dst FROM edges WHERE src < 3
        UNION ALL
        SELECT src, dst FROM conn
      )
    SELECT src, dst, count(*) FROM conn GROUP BY src, dst"""
    assert rows(mz, sql.format(kind="RETURN", n=3)) == [(1, 2, 3), (2, 3, 3)]
    assert error(mz, sql.format(kind="ERROR", n=20)).diag.message_primary == LIMIT_MSG.format(20)


def test_a_change_that_only_deletes_rows_is_a_change(mz: psycopg.Connection) -> None:
    """{1,2,3}, {1,2}, {1}, {1}: iterations two and three only retract rows."""
    sql = """
    WITH MUTUALLY RECURSIVE
      b (n int) AS (
        SELECT n FROM (VALUES (1), (2), (3)) AS v(n)
        WHERE NOT EXISTS (SELECT 1 FROM b) OR n < (SELECT max(n) FROM b) OR n = 1
      )
    SELECT n FROM b"""
    assert rows(mz, sql) == [(1,)]


def _topk_fixpoint(edges: list[tuple], k: int) -> set[tuple]:
    """best = the first k (src, dst) of edges ∪ one more hop from best, iterated."""
    clean = sorted({(a, b) for a, b in edges if a is not None and b is not None})
    best: set[tuple] = set()
    for _ in range(100):
        cand = set(clean) | {(a, d) for a, b in best for c, d in clean if b == c}
        new = set(sorted(cand)[:k])
        if new == best:
            return best
        best = new
    raise AssertionError("no fixpoint")


def test_topk_inside_the_recursion(mz: psycopg.Connection) -> None:
    sql = """
    WITH MUTUALLY RECURSIVE
      best (src int, dst int) AS (
        SELECT * FROM (
          SELECT src, dst FROM edges WHERE src IS NOT NULL AND dst IS NOT NULL
          UNION
          SELECT b.src, e.dst FROM best b JOIN edges e ON b.dst = e.src
        ) ORDER BY src, dst LIMIT 4
      )
    SELECT * FROM best"""
    plan = "\n".join(r[0] for r in mz.execute("EXPLAIN PHYSICAL PLAN FOR " + sql).fetchall())
    assert "TopK::Basic order_by=[#0 asc nulls_last, #1 asc nulls_last] limit=4" in plan
    expected = _topk_fixpoint(EDGES, 4)
    assert expected == {(1, 1), (1, 2), (1, 3), (1, 4)}  # what the fixpoint is, worked by hand
    assert rows(mz, sql) == sorted(expected, key=repr)


def test_wmr_in_a_view_and_a_materialized_view(mz: psycopg.Connection) -> None:
    body = CLOSURE_MZ.format(select="SELECT src, dst FROM reach")
    mz.execute(f"CREATE VIEW reach_v AS {body}")
    mz.execute(f"CREATE MATERIALIZED VIEW reach_mv AS {body}")
    want = sorted(closure(EDGES), key=repr)
    assert rows(mz, "SELECT * FROM reach_v") == want
    assert rows(mz, "SELECT * FROM reach_mv") == want
    both = sum(1 for a, b in want if a is not None and b is not None)
    assert rows(mz, "SELECT count(*) FROM reach_v v JOIN reach_mv m ON v.src = m.src AND v.dst = m.dst") == [(both,)]


def test_wmr_in_a_correlated_subquery(mz: psycopg.Connection) -> None:
    """Per outer row, count 1..dst (at least 1)."""
    sql = """
    SELECT src, dst, (
      WITH MUTUALLY RECURSIVE
        steps (n int) AS (VALUES (1) UNION SELECT n + 1 FROM steps WHERE n < e.dst)
      SELECT count(*) FROM steps
    ) FROM edges e"""
    assert rows(mz, sql) == sorted(((a, b, max(b, 1) if b is not None else 1) for a, b in EDGES), key=repr)


@pytest.mark.parametrize("path", SEEDS)
def test_nested_wmr(mz: psycopg.Connection, path: str) -> None:
    """foo: 1, +1 below 3, and for every foo value the inner block's +10 chain below 30."""
    sql = """
    WITH MUTUALLY RECURSIVE
      foo (a int) AS (
        SEED UNION SELECT a + 1 FROM foo WHERE a < 3
        UNION (
          WITH MUTUALLY RECURSIVE
            bar (b int) AS (SELECT a FROM foo UNION SELECT b + 10 FROM bar WHERE b < 20)
          SELECT b FROM bar
        )
      )
    SELECT a FROM foo""".replace("SEED", SEEDS[path].format(v=1))
    _check_path(mz, sql, path)
    assert rows(mz, sql) == sorted([(v,) for v in (1, 2, 3, 11, 12, 13, 21, 22, 23)], key=repr)


def test_explain_analyze(mz: psycopg.Connection) -> None:
    sql = CLOSURE_MZ.format(select="SELECT count(*) FROM reach")
    text = "\n".join(r[0] for r in mz.execute("EXPLAIN ANALYZE " + sql).fetchall())
    n = len(closure(EDGES))
    records = {m.group(1).strip().split(" //")[0]: int(m.group(2)) for m in re.finditer(r"^\s*(.*?) // \{ node_id: \d+, records: (\d+) \}$", text, re.M)}
    assert records["With Mutually Recursive"] == 1, text
    assert records["Reduce::Distinct"] == n, text  # the binding's last evaluation
    assert records["Reduce::Accumulable"] == 1, text
    assert rows(mz, sql) == [(n,)]  # and the query still runs as usual afterwards


def test_statement_timeout_interrupts_a_divergent_recursion(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        conn.execute("SET statement_timeout = '3s'")
        start = time.monotonic()
        e = error(conn, COUNTER.format(limit="", where=""))
        assert e.sqlstate == "57014" and "statement timeout" in str(e)
        assert time.monotonic() - start < 60
        conn.execute("SET statement_timeout = 0")
        assert rows(conn, "SELECT 1") == [(1,)]


RECURSIVE_VS_PG = [
    # the working-table recursion: an iteration costs its new rows (semi-naive), not the result
    "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t WHERE n < 150) SELECT sum(n), count(*) FROM t",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n+1 FROM t WHERE n < 60) SELECT sum(n), count(*) FROM t",
    # UNION ALL keeps duplicates from both branches, UNION removes them against the result so far
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION ALL SELECT n+1 FROM t WHERE n < 5) SELECT n, count(*) FROM t GROUP BY n",
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION SELECT (n+1) % 4 FROM t) SELECT n FROM t",
    # a LIMIT without ORDER BY directly over a recursion that never ends: stops with enough rows
    "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t) SELECT * FROM t LIMIT 10",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n+1 FROM t) SELECT * FROM t LIMIT 10",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n+1 FROM t) SELECT n * 2 FROM t LIMIT 3 OFFSET 4",
    # ... but a finite one with a LIMIT above its size runs to its end
    "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t WHERE n < 7) SELECT * FROM t LIMIT 100",
    # WITH RECURSIVE's items see each other: a forward reference; an inner WITH shadows a name
    "WITH RECURSIVE x(id) AS (SELECT * FROM y UNION ALL SELECT id+1 FROM x WHERE id < 5), y(id) AS (VALUES (1)) "
    "SELECT * FROM x",
    "WITH RECURSIVE w1(c1) AS (WITH RECURSIVE w6(c6) AS (WITH w6(c6) AS (SELECT 1) SELECT * FROM w6) SELECT * FROM w6) "
    "SELECT * FROM w1",
    # the recursive query's own WITH is in scope in both terms
    "WITH RECURSIVE t(j) AS (WITH RECURSIVE s(i) AS (VALUES (1) UNION ALL SELECT i+1 FROM s WHERE i < 4) "
    "SELECT i FROM s UNION ALL SELECT j+1 FROM t WHERE j < 4) SELECT j, count(*) FROM t GROUP BY j",
    # the step reads the working table in a set operation / its own WITH / a FROM subquery: it
    # yields rows from an empty working table, runs once even on an empty base, and the
    # recursion stops at the first round that yields nothing
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION (WITH i AS (SELECT 2) SELECT * FROM o UNION SELECT * FROM i)) SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 WHERE false UNION (WITH i AS (SELECT 2) SELECT * FROM o UNION SELECT * FROM i)) "
    "SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION ALL (WITH i AS (SELECT x + 1 AS y FROM o WHERE x < 4) SELECT y FROM i)) "
    "SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM (SELECT * FROM o) s WHERE x < 4) SELECT * FROM o",
    "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT i+1 FROM f WHERE i < 6 EXCEPT SELECT 3)) SELECT * FROM f",
]

# statements PostgreSQL rejects: the same SQLSTATE class
RECURSIVE_ERRORS_VS_PG = [
    "WITH RECURSIVE x(id) AS (SELECT 1 UNION ALL SELECT id+1 FROM y WHERE id < 5), "
    "y(id) AS (SELECT 1 UNION ALL SELECT id+1 FROM x WHERE id < 5) SELECT * FROM x",  # mutual recursion: 0A000
    "WITH RECURSIVE foo(i) AS (SELECT i FROM (VALUES (1), (2)) t(i) UNION ALL "
    "SELECT (i+1)::numeric(10,0) FROM foo WHERE i < 10) SELECT * FROM foo",  # step widens the type: 42804
    "WITH RECURSIVE foo(i) AS (SELECT i::numeric(3,0) FROM (VALUES (1), (2)) t(i) UNION ALL "
    "SELECT (i+1)::numeric(10,0) FROM foo WHERE i < 10) SELECT * FROM foo",  # ... or its modifier
    "WITH RECURSIVE x(n) AS (WITH x1 AS (SELECT 1 FROM x) SELECT 0 UNION SELECT * FROM x1) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM x WHERE n IN (SELECT * FROM x)) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT (SELECT n FROM x) FROM (VALUES (1)) v) SELECT * FROM x",
    "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT 3 EXCEPT SELECT i+1 FROM f WHERE i < 10)) SELECT * FROM f",
    "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT i+1 FROM f WHERE i < 10 EXCEPT ALL SELECT 3)) SELECT * FROM f",
]


@pytest.mark.parametrize("sql", RECURSIVE_ERRORS_VS_PG)
def test_with_recursive_errors_match_postgres(mz: psycopg.Connection, sql: str) -> None:
    with reference_postgres("wmr-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        want = error(pg, sql).sqlstate
    assert want is not None and error(mz, sql).sqlstate[:2] == want[:2]


@pytest.mark.parametrize("sql", RECURSIVE_VS_PG)
def test_with_recursive_matches_postgres(mz: psycopg.Connection, sql: str) -> None:
    with reference_postgres("wmr-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        expected = rows(pg, sql)
    assert rows(mz, sql) == expected


def test_a_limit_does_not_stop_a_recursion_it_filters(mz_server: MzServer) -> None:
    """A filter between the LIMIT and the recursion may need rows of later rounds: the
    recursion then runs to its end (here: never, until the statement timeout)."""
    with mz_server.connect() as conn:
        conn.execute("SET statement_timeout = '4s'")
        e = error(conn, "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t) SELECT * FROM t WHERE n < 0 LIMIT 1")
        assert e.sqlstate == "57014"
        e = error(conn, "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t) SELECT * FROM t ORDER BY n LIMIT 1")
        assert e.sqlstate == "57014"
        conn.execute("SET statement_timeout = 0")
        assert rows(conn, "SELECT 1") == [(1,)]


def test_search_and_cycle_clauses_are_not_ignored(mz: psycopg.Connection) -> None:
    for clause in ("SEARCH DEPTH FIRST BY n SET seq", "SEARCH BREADTH FIRST BY n, m SET seq", "CYCLE n SET c USING p",
                   "CYCLE n, m SET c TO 'Y' DEFAULT 'N' USING p"):
        e = error(mz, f"WITH RECURSIVE t(n, m) AS (SELECT 1, 2 UNION ALL SELECT n+1, m FROM t WHERE n < 3) {clause} SELECT * FROM t")
        assert e.sqlstate == "0A000", clause
