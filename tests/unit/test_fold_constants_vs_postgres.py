"""Constant folding (sql/transforms/fold_constants.py) evaluates integer arithmetic,
comparisons, three-valued logic and CASE while planning: 400 random expressions over
smallint / integer / bigint literals and NULLs, each folded to a Constant and compared with
PostgreSQL 15's answer, or left to the renderer exactly when PostgreSQL raises an error
(overflow, division by zero). No Spark runs here: a folded query never reaches it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from sql.errors import SqlError
from tests.golden_runner import GoldenSession

TYPES = ("int2", "int4", "int8")
EDGE = {"int2": [32767, -32768, 300], "int4": [2147483647, -2147483648, 70000], "int8": [9223372036854775807, -9223372036854775807, 5000000000]}


def _int(rng: random.Random, t: str, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        r = rng.random()
        if r < 0.1:
            return f"NULL::{t}"
        v = rng.choice(EDGE[t]) if r < 0.25 else rng.randint(-20, 20)
        return f"({v})::{t}"
    k = rng.random()
    if k < 0.7:
        op = rng.choice(["+", "-", "*", "/", "%"])
        return f"({_int(rng, t, depth - 1)} {op} {_int(rng, t, depth - 1)})"
    if k < 0.8:
        return f"(- {_int(rng, t, depth - 1)})"
    return f"(CASE WHEN {_bool(rng, depth - 1)} THEN {_int(rng, t, depth - 1)} ELSE {_int(rng, t, depth - 1)} END)"


def _bool(rng: random.Random, depth: int) -> str:
    k = rng.random()
    if depth == 0 or k < 0.2:
        return rng.choice(["true", "false", "NULL::bool"])
    if k < 0.6:
        t = rng.choice(TYPES)
        op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
        return f"({_int(rng, t, depth - 1)} {op} {_int(rng, t, depth - 1)})"
    if k < 0.85:
        return f"({_bool(rng, depth - 1)} {rng.choice(['AND', 'OR'])} {_bool(rng, depth - 1)})"
    if k < 0.95:
        return f"(NOT {_bool(rng, depth - 1)})"
    return f"({_int(rng, rng.choice(TYPES), depth - 1)} IS NULL)"


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[GoldenSession, Any]]:
    import psycopg

    from tests.pgref import reference_postgres

    g = GoldenSession()
    try:
        with reference_postgres("fold-") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
            yield g, conn
    finally:
        g.close()


def _pg(conn: Any, sql: str) -> tuple[str, Any]:
    import psycopg

    try:
        return "ok", conn.execute(sql).fetchone()[0]
    except psycopg.Error as e:
        return "error", e.sqlstate


def _plan(g: GoldenSession, expr: str) -> str:
    p = g.coord.prepare(g.session, f"EXPLAIN OPTIMIZED PLAN FOR SELECT {expr}", [])
    (text,) = next(iter(g.coord.execute(g.session, p, []).batches))[0]
    return text


def _value(g: GoldenSession, expr: str) -> Any:
    p = g.coord.prepare(g.session, f"SELECT {expr}", [])
    return next(iter(g.coord.execute(g.session, p, []).batches))[0][0]


@pytest.mark.parametrize("seed", range(4))
def test_folded_like_postgres(engines: tuple[GoldenSession, Any], seed: int) -> None:
    g, pg = engines
    rng = random.Random(seed)
    folded = 0
    for _ in range(100):
        expr = _int(rng, rng.choice(TYPES), 3) if rng.random() < 0.5 else _bool(rng, 3)
        kind, want = _pg(pg, f"SELECT {expr}")
        try:
            plan = _plan(g, expr)
        except SqlError as e:  # a binding error must be PostgreSQL's too
            assert kind == "error", (expr, e.sqlstate, want)
            continue
        if plan.startswith("Constant"):
            folded += 1
            assert kind == "ok", (expr, "folded, but PostgreSQL raises", want)
            assert _value(g, expr) == want, expr
        else:
            # left to the renderer only where PostgreSQL fails (or a CASE hides the failure)
            assert kind == "error" or "CASE" in expr.upper() or "AND" in expr or "OR" in expr, (expr, want, plan)
    assert folded >= 50


def test_explain_names_the_constant_strategy(engines: tuple[GoldenSession, Any]) -> None:
    """Materialize's EXPLAIN marks a query answered without a dataflow as the fast path."""
    g, _pg = engines
    for q, fast in (("SELECT 1 + 1", True), ("SELECT x FROM (VALUES (1), (2)) v(x) WHERE x > 1", True),
                    ("SELECT upper('a')", False)):
        p = g.coord.prepare(g.session, f"EXPLAIN PHYSICAL PLAN FOR {q}", [])
        (text,) = next(iter(g.coord.execute(g.session, p, []).batches))[0]
        assert text.startswith("Explained Query (fast path):\n  Constant") == fast, text


def _datetime_expr(rng: random.Random) -> str:
    import datetime as dt

    day = dt.date(rng.choice([1, 1999, 2000, 2024, 9998, 9999]), rng.randint(1, 12), 1) + dt.timedelta(days=rng.choice([0, 14, 27, 28, 29, 30]))
    if rng.random() < 0.5:
        base = f"timestamp '{day.isoformat()} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}'"
    else:
        base = f"date '{day.isoformat()}'"
        if rng.random() < 0.3:
            return f"({base} {rng.choice('+-')} {rng.randint(-400, 400)})"
    iv = f"interval '{rng.randint(-30, 30)} mons {rng.randint(-40, 40)} days {rng.randint(-100000, 100000)} seconds'"
    return f"({base} {rng.choice('+-')} {iv})"


@pytest.mark.parametrize("seed", range(2))
def test_datetime_arithmetic_folded_like_postgres(engines: tuple[GoldenSession, Any], seed: int) -> None:
    """date / timestamp +- interval and date +- integer, folded while planning (also over a
    table's rows: the same fold_scalar), equal PostgreSQL's value; out of Python's years the
    expression is left to the renderer."""
    g, pg = engines
    rng = random.Random(seed)
    folded = 0
    for _ in range(150):
        expr = _datetime_expr(rng)
        kind, want = _pg(pg, f"SELECT {expr}")
        plan = _plan(g, expr)
        if plan.startswith("Constant"):
            folded += 1
            assert kind == "ok", (expr, "folded, but PostgreSQL raises", want)
            assert _value(g, expr) == want, expr
    assert folded >= 100
