"""Binder rules checked on plans and bound names only (no Spark is started): identifier
case folding, JOIN ... USING / NATURAL, FROM-clause scoping, WITH scoping, the query level of
aggregates, row comparisons. tests/integration/test_binder_vs_postgres.py runs the same
queries against PostgreSQL 15."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest

from server.coordinator import Coordinator
from sql import statements as st
from sql.bind import BoundQuery
from sql.errors import SqlError
from sql.hir import HGet, HJoin


class Planner:
    """A Coordinator used for DDL and planning only."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.coord = Coordinator(self.tmp.name)
        self.session = self.coord.new_session("materialize", "materialize", {})

    def ddl(self, sql: str) -> None:
        self.coord.execute(self.session, self.coord.prepare(self.session, sql, []), [])

    def bound(self, sql: str) -> BoundQuery:
        return self.coord.prepare(self.session, sql, []).plan.bound

    def names(self, sql: str) -> tuple[str, ...]:
        return self.bound(sql).names

    def explain(self, sql: str) -> str:
        r = self.coord.execute(self.session, self.coord.prepare(self.session, "EXPLAIN DECORRELATED PLAN FOR " + sql, []), [])
        return "\n".join(row[0] for b in r.batches for row in b)

    def error(self, sql: str) -> SqlError:
        with pytest.raises(SqlError) as e:
            self.coord.prepare(self.session, sql, [])
        return e.value

    def close(self) -> None:
        assert self.coord.compute.current is None, "binder unit tests must not start Spark"
        self.coord.close()
        self.tmp.cleanup()


@pytest.fixture(scope="module")
def planner() -> Iterator[Planner]:
    p = Planner()
    for ddl in ("CREATE TABLE T (A int, \"B\" int)", 'CREATE TABLE "Q" (x int)', "CREATE SCHEMA Sch",
                "CREATE TABLE SCH.TT (z int)", "CREATE TABLE l (c int, x int)", "CREATE TABLE r (y int, c int)"):
        p.ddl(ddl)
    yield p
    p.close()


# ---- 1. unquoted identifiers fold to lower case ------------------------------------------

def test_parser_folds_unquoted_identifiers_only() -> None:
    q = st.classify('SELECT A, "B", Foo(Y) AS Z, "X"."Y" FROM S.T AS Q')
    assert isinstance(q, st.Query)
    assert q.ast.sql(dialect="postgres") == 'SELECT a, "B", FOO(y) AS z, "X"."Y" FROM s.t AS q'


@pytest.mark.parametrize("sql, names", [
    ("SELECT A, \"B\", T.a FROM t", ("a", "B", "a")),
    ("SELECT * FROM Sch.Tt", ("z",)),
    ("SELECT a AS \"X\", a AS Y FROM T", ("X", "y")),
    ("SELECT * FROM \"Q\"", ("x",)),
    ("WITH Foo AS (SELECT 1 AS K) SELECT FOO.k FROM foo", ("k",)),
    ("SELECT ABS(-1)", ("abs",)),
])
def test_names_fold_to_lower_case(planner: Planner, sql: str, names: tuple[str, ...]) -> None:
    assert planner.names(sql) == names


def test_quoted_names_keep_their_case(planner: Planner) -> None:
    assert planner.error("SELECT * FROM q").sqlstate == "42P01"
    assert planner.error("SELECT b FROM t").sqlstate == "42703"


# ---- 2. JOIN ... USING and NATURAL JOIN ----------------------------------------------------

@pytest.mark.parametrize("sql, names", [
    ("SELECT c FROM l JOIN r USING (c)", ("c",)),
    ("SELECT * FROM l JOIN r USING (c)", ("c", "x", "y")),
    ("SELECT * FROM l FULL JOIN r USING (c)", ("c", "x", "y")),
    ("SELECT c, l.c, r.c FROM l LEFT JOIN r USING (c)", ("c", "c", "c")),
    ("SELECT l.*, r.* FROM l JOIN r USING (c)", ("c", "x", "y", "c")),
    ("SELECT * FROM l NATURAL JOIN r", ("c", "x", "y")),
    ("SELECT * FROM (l JOIN r USING (c)) AS j", ("c", "x", "y")),
    ("SELECT j.c, j.y FROM (l JOIN r USING (c)) AS j", ("c", "y")),
    ("SELECT * FROM l JOIN r USING (c) JOIN l AS l2 USING (c)", ("c", "x", "y", "x")),
])
def test_using_columns_merge(planner: Planner, sql: str, names: tuple[str, ...]) -> None:
    assert planner.names(sql) == names


def test_full_join_using_merges_with_coalesce(planner: Planner) -> None:
    plan = planner.explain("SELECT c FROM l FULL JOIN r USING (c)")
    assert "coalesce(#0, #3)" in plan


@pytest.mark.parametrize("sql, state", [
    ("SELECT * FROM l JOIN r USING (x)", "42703"),
    ("SELECT * FROM l JOIN r USING (c, c)", "42701"),
    ("SELECT j.x FROM (l JOIN r USING (c)) AS j WHERE l.c = 1", "42P01"),
])
def test_using_errors(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


# ---- 3. comma binds looser than JOIN; ON sees only its own join tree -----------------------

def _top_join(rel: object) -> HJoin:
    while not isinstance(rel, HJoin):
        rel = rel.input  # type: ignore[attr-defined]
    return rel


def test_comma_binds_looser_than_join(planner: Planner) -> None:
    """FROM t, l RIGHT JOIN r ON .. = t CROSS JOIN (l RIGHT JOIN r ON ..)."""
    j = _top_join(planner.bound("SELECT * FROM t, l RIGHT JOIN r ON l.c = r.c").rel)
    assert j.kind == "inner" and isinstance(j.left, HGet) and j.left.name.endswith(".t")
    assert isinstance(j.right, HJoin) and j.right.kind == "right"


@pytest.mark.parametrize("sql, state, message", [
    ("SELECT * FROM t, l JOIN r ON t.a = r.c", "42P01", 'invalid reference to FROM-clause entry for table "t"'),
    ("SELECT * FROM t, l JOIN r ON a = r.c", "42703", 'column "a" does not exist'),
])
def test_on_sees_only_its_join_tree(planner: Planner, sql: str, state: str, message: str) -> None:
    e = planner.error(sql)
    assert (e.sqlstate, e.message) == (state, message)


@pytest.mark.parametrize("sql", ["CREATE TABLE ctas AS SELECT 1 AS k",
                                 "CREATE TABLE part1 PARTITION OF t FOR VALUES FROM (1) TO (10)"])
def test_create_table_without_column_list_is_unsupported(planner: Planner, sql: str) -> None:
    """CREATE TABLE with no column list (AS query, PARTITION OF): 0A000, not a Python error."""
    with pytest.raises(SqlError) as e:
        planner.ddl(sql)
    assert e.value.sqlstate == "0A000"
