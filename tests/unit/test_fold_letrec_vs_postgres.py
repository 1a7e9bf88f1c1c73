"""Closed recursions folded while planning (sql/transforms/fold_letrec.py), compared with
PostgreSQL 15: every query below must be computed to a Constant (no Spark runs here) with
PostgreSQL's rows; a family of random recursions over integer expressions must fold exactly
when PostgreSQL succeeds (an overflow or a division by zero stays the renderer's error)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.golden_runner import GoldenSession

FOLDED = [
    # PostgreSQL's working table: UNION ALL keeps every round's rows, UNION removes repeats
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 500) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (VALUES (1), (1) UNION SELECT (n + 1) % 4 FROM t) SELECT * FROM t",
    "WITH RECURSIVE t(n) AS (VALUES (1), (NULL) UNION ALL SELECT n + 1 FROM t WHERE n < 3 OR n IS NULL AND false) "
    "SELECT * FROM t",
    # with.sql: the body filters the folded recursion
    "SELECT * FROM (WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 100) "
    "SELECT * FROM t WHERE n < 50000) AS t WHERE n < 100",
    # numeric and bigint arithmetic with PostgreSQL's scales and ranges
    "WITH RECURSIVE fib(a, b, i) AS (VALUES (0::numeric, 1::numeric, 0) UNION ALL "
    "SELECT b, a + b, i + 1 FROM fib WHERE i < 120) SELECT a, i FROM fib",
    "WITH RECURSIVE fib(a, b, i) AS (VALUES (0::int8, 1::int8, 0) UNION ALL "
    "SELECT b, a + b, i + 1 FROM fib WHERE i < 91) SELECT a, i FROM fib",
    "WITH RECURSIVE d(x, i) AS (VALUES (1000.0, 0) UNION ALL SELECT x / 3, i + 1 FROM d WHERE i < 12) SELECT * FROM d",
    "WITH RECURSIVE p(x) AS (VALUES (2::numeric) UNION ALL SELECT x * x FROM p WHERE x < 1e30) SELECT * FROM p",
    # joins with constant relations: a closure over text keys, a cross join
    "WITH RECURSIVE e(a, b) AS (VALUES ('x', 'y'), ('y', 'z'), ('z', 'x'), ('z', 'w')), "
    "r(a, b) AS (SELECT * FROM e UNION SELECT r.a, e.b FROM r JOIN e ON r.b = e.a) SELECT * FROM r",
    "WITH RECURSIVE t(n, m) AS (SELECT 1, 1 UNION ALL SELECT t.n + 1, x.m FROM t, (VALUES (1), (2), (3)) x(m) "
    "WHERE t.n < 4) SELECT * FROM t",
    # the step reads the working table in a set operation, its own WITH, a FROM subquery
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION (WITH i AS (SELECT 2) SELECT * FROM o UNION SELECT * FROM i)) "
    "SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 WHERE false UNION (WITH i AS (SELECT 2) SELECT * FROM o UNION "
    "SELECT * FROM i)) SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION ALL (WITH i AS (SELECT x + 1 AS y FROM o WHERE x < 4) "
    "SELECT y FROM i)) SELECT * FROM o",
    "WITH RECURSIVE o(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM (SELECT * FROM o) s WHERE x < 4) SELECT * FROM o",
    "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT i + 1 FROM f WHERE i < 6 EXCEPT SELECT 3)) SELECT * FROM f",
    # nested recursions; a forward reference
    "WITH RECURSIVE t(j) AS (WITH RECURSIVE s(i) AS (VALUES (1) UNION ALL SELECT i + 1 FROM s WHERE i < 4) "
    "SELECT i FROM s UNION ALL SELECT j + 1 FROM t WHERE j < 4) SELECT * FROM t",
    "WITH RECURSIVE x(id) AS (SELECT * FROM y UNION ALL SELECT id + 1 FROM x WHERE id < 5), y(id) AS (VALUES (1)) "
    "SELECT * FROM x",
]


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[GoldenSession, Any]]:
    import psycopg

    from tests.pgref import reference_postgres

    g = GoldenSession()
    try:
        with reference_postgres("foldrec-") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
            yield g, conn
    finally:
        g.close()


def _pg(conn: Any, sql: str) -> tuple[str, Any]:
    import psycopg

    try:
        return "ok", Counter(tuple(r) for r in conn.execute(sql).fetchall())
    except psycopg.Error as e:
        return "error", e.sqlstate


def _folded(g: GoldenSession, sql: str) -> bool:
    plan = "\n".join(r[0] for r in g.run(f"EXPLAIN OPTIMIZED PLAN FOR {sql}"))
    return "Mutually Recursive" not in plan


@pytest.mark.parametrize("sql", FOLDED)
def test_folded_like_postgres(engines: tuple[GoldenSession, Any], sql: str) -> None:
    g, pg = engines
    kind, want = _pg(pg, sql)
    assert kind == "ok", want
    assert _folded(g, sql), sql
    assert Counter(tuple(r) for r in g.run(sql)) == want


def _expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.1:
            return rng.choice(["2147483647", "(-2147483647)", "65536"])
        return rng.choice(["n", "n", "d", str(rng.randint(-9, 9))])
    return f"({_expr(rng, depth - 1)} {rng.choice(['+', '-', '*', '/', '%'])} {_expr(rng, depth - 1)})"


def _pred(rng: random.Random) -> str:
    return f"{_expr(rng, 1)} {rng.choice(['<', '<=', '<>', '>'])} {_expr(rng, 1)}"


@pytest.mark.parametrize("seed", range(3))
def test_random_recursions_fold_exactly_when_postgres_succeeds(engines: tuple[GoldenSession, Any], seed: int) -> None:
    g, pg = engines
    rng = random.Random(seed)
    folded = 0
    for _ in range(40):
        union = rng.choice(["UNION", "UNION ALL"])
        base = f"VALUES ({rng.randint(-5, 5)}, 0), ({rng.randint(-5, 5)}, 0)"
        bound, pred, expr = f"d < {rng.randint(1, 12)}", _pred(rng), _expr(rng, 2)
        sql = f"WITH RECURSIVE c(n, d) AS ({base} {union} SELECT {expr}, d + 1 FROM c WHERE {bound} AND {pred}) SELECT * FROM c"
        kind, want = _pg(pg, sql)
        if _folded(g, sql):
            if kind == "error":
                # PostgreSQL's planner evaluates constant subexpressions even where no row
                # reaches them (EXPLAIN raises too); Materialize evaluates them per row
                assert _pg(pg, f"EXPLAIN {sql}")[0] == "error", (sql, "folded, but PostgreSQL raises", want)
                continue
            folded += 1
            assert Counter(tuple(r) for r in g.run(sql)) == want, sql
        elif kind == "ok":
            # the folder evaluates both sides of AND: left to the renderer only where that fails
            eager = (f"WITH RECURSIVE c(n, d) AS ({base} {union} SELECT {expr}, d + 1 FROM c WHERE "
                     f"(CASE WHEN {bound} THEN 1 ELSE 0 END) + (CASE WHEN {pred} THEN 1 ELSE 0 END) = 2) SELECT * FROM c")
            assert _pg(pg, eager)[0] == "error", (sql, want)
    assert folded >= 20, folded
