"""Differential testing: hypothesis-generated tables and queries run on mzspark and on DuckDB
(a test oracle only), results compared as multisets.

The generated SQL stays inside the semantics both engines share with Postgres: no integer
division, explicit NULLS FIRST/LAST with a total order under LIMIT, averages compared as
numbers."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

VALUE = st.one_of(st.none(), st.integers(-3, 3))
ROWS = st.lists(st.tuples(VALUE, VALUE), min_size=0, max_size=7)

SCALAR = st.sampled_from([
    "a", "b", "a + b", "a * 2 - b", "-a", "coalesce(a, 0)", "CASE WHEN a > b THEN a ELSE b END",
    "nullif(a, b)", "abs(b)", "a % 2",
])
PRED = st.sampled_from([
    "a > 0", "b IS NULL", "a IN (1, 2, -1)", "a BETWEEN -1 AND 2", "NOT (a = b)", "a = b OR b > 1",
    "EXISTS (SELECT 1 FROM t2 WHERE t2.c = t1.a)", "a IN (SELECT c FROM t2)",
    "a NOT IN (SELECT c FROM t2 WHERE c IS NOT NULL)", "b > (SELECT min(d) FROM t2 WHERE t2.c = t1.a)",
    "(SELECT count(*) FROM t2 WHERE t2.d = t1.b) > 0", "true",
])


@st.composite
def queries(draw: Callable) -> str:
    kind = draw(st.sampled_from(["select", "group", "join", "left", "setop", "topk", "scalar"]))
    p = draw(PRED)
    if kind == "select":
        return f"SELECT {draw(SCALAR)}, {draw(SCALAR)} FROM t1 WHERE {p}"
    if kind == "group":
        agg = draw(st.sampled_from(["count(*)", "count(b)", "sum(b)", "min(b)", "max(a + b)", "count(DISTINCT b)"]))
        having = draw(st.sampled_from(["", " HAVING count(*) > 1", " HAVING sum(b) IS NOT NULL"]))
        return f"SELECT a, {agg} FROM t1 WHERE {p} GROUP BY a{having}"
    if kind == "join":
        return f"SELECT t1.a, t2.d FROM t1 JOIN t2 ON t1.a = t2.c WHERE {p}"
    if kind == "left":
        side = draw(st.sampled_from(["LEFT", "RIGHT", "FULL"]))
        return f"SELECT t1.a, t1.b, t2.c, t2.d FROM t1 {side} JOIN t2 ON t1.a = t2.c AND t2.d > -2"
    if kind == "setop":
        op = draw(st.sampled_from(["UNION", "UNION ALL", "EXCEPT", "EXCEPT ALL", "INTERSECT", "INTERSECT ALL"]))
        return f"SELECT a FROM t1 WHERE {p} {op} SELECT c FROM t2"
    if kind == "topk":
        k = draw(st.integers(0, 4))
        return (f"SELECT * FROM (SELECT a, b FROM t1 WHERE {p} "
                f"ORDER BY a DESC NULLS LAST, b ASC NULLS FIRST LIMIT {k}) s")
    return "SELECT a, (SELECT max(d) FROM t2 WHERE t2.c = t1.a), (SELECT count(*) FROM t2 WHERE t2.c > t1.b) FROM t1"


def _norm(v: object) -> object:
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _multiset(rows: list[tuple]) -> list[tuple]:
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(t1=ROWS, t2=ROWS, qs=st.lists(queries(), min_size=3, max_size=3))
def test_queries_agree_with_duckdb(mz_server: MzServer, t1: list, t2: list, qs: list[str]) -> None:
    ddb = duckdb.connect()
    with mz_server.connect() as mz:
        mz.execute("DROP SCHEMA IF EXISTS diffdb CASCADE")
        mz.execute("CREATE SCHEMA diffdb")
        mz.execute("SET search_path = diffdb")
        for conn in (mz, ddb):
            conn.execute("CREATE TABLE t1 (a int, b int)")
            conn.execute("CREATE TABLE t2 (c int, d int)")
        for name, rows in (("t1", t1), ("t2", t2)):
            for r in rows:
                vals = ", ".join("NULL" if v is None else str(v) for v in r)
                mz.execute(f"INSERT INTO {name} VALUES ({vals})")
                ddb.execute(f"INSERT INTO {name} VALUES ({vals})")
        for q in qs:
            expected = _multiset(ddb.execute(q).fetchall())
            got = _multiset(mz.execute(q).fetchall())
            assert got == expected, f"{q}\nt1={t1}\nt2={t2}"
    ddb.close()
