"""Binder rules checked on plans and bound names only (no Spark is started): identifier
case folding, JOIN ... USING / NATURAL, FROM-clause scoping, WITH scoping, the query level of
aggregates, row comparisons. tests/integration/test_binder_vs_postgres.py runs the same
queries against PostgreSQL 15."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator

import pytest

from server.coordinator import Coordinator
from sql import statements as st
from sql.bind import BoundQuery
from sql.errors import SqlError
from sql.hir import HGet, HJoin, HLetRec, HReduce, OuterColumn
from sql.parse import parse_sql
from sql.scalar import CallVariadic, Column, Literal
from sql.types import BOOL, INT4


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
    # a tree that starts with a LATERAL item: its ON clauses do not see the earlier items either
    ("SELECT * FROM t, LATERAL (SELECT t.a) s JOIN r ON r.c = t.a", "42P01", 'invalid reference to FROM-clause entry for table "t"'),
    # an item that is not LATERAL names an earlier item: invalid; a later one: missing (PostgreSQL 15)
    ("SELECT * FROM t, (SELECT t.a) s", "42P01", 'invalid reference to FROM-clause entry for table "t"'),
    ("SELECT * FROM t, (SELECT 1 FROM r WHERE r.c = t.a) s", "42P01", 'invalid reference to FROM-clause entry for table "t"'),
    ("SELECT * FROM LATERAL (SELECT r.c) s, r", "42P01", 'missing FROM-clause entry for table "r"'),
    ("SELECT * FROM t, LATERAL (SELECT r.c + t.a) s, r", "42P01", 'missing FROM-clause entry for table "r"'),
    ("SELECT * FROM t JOIN LATERAL (SELECT r.c) s ON true JOIN r ON true", "42P01", 'missing FROM-clause entry for table "r"'),
])
def test_on_sees_only_its_join_tree(planner: Planner, sql: str, state: str, message: str) -> None:
    e = planner.error(sql)
    assert (e.sqlstate, e.message) == (state, message)


def test_parenthesized_join_tree_over_a_derived_table(planner: Planner) -> None:
    """( (SELECT …) d JOIN r ON … ) j: the tree joins both items (sqlglot hangs the JOIN on
    the derived table d), so j has the columns of d and r."""
    b = planner.bound("SELECT * FROM ((SELECT c AS h FROM l) d JOIN r ON h = r.c) j")
    assert list(b.names) == ["h", "y", "c"]
    assert _top_join(b.rel).kind == "inner"


# ---- 4. WITH scoping -------------------------------------------------------------------------

def test_inner_with_shadows_only_inside_its_query(planner: Planner) -> None:
    b = planner.bound("WITH foo AS (SELECT 1) (SELECT * FROM foo UNION ALL (WITH foo AS (SELECT 2) SELECT * FROM foo) "
                      "UNION ALL (SELECT * FROM foo))")
    assert [x.value for x in _walk(b.rel) if isinstance(x, Literal)] == [1, 2, 1]


def test_duplicate_with_name(planner: Planner) -> None:
    e = planner.error("WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x")
    assert (e.sqlstate, e.message) == ("42712", 'WITH query name "x" specified more than once')


def test_correlated_cte_read_deeper_reaches_the_right_scope(planner: Planner) -> None:
    """w is bound one scope inside t's query and read two scopes inside: its reference to
    t.a must point two levels out there."""
    b = planner.bound("SELECT (WITH w AS (SELECT t.a AS v) SELECT (SELECT v FROM w)) FROM t")
    outer = [x for x in _walk(b.rel) if isinstance(x, OuterColumn)]
    assert [o.level for o in outer] == [2]


@pytest.mark.parametrize("sql, names", [
    ("SELECT (SELECT max(c) FROM l)", ("max",)),
    ("SELECT (SELECT c AS k FROM l LIMIT 1), (VALUES (1)), EXISTS (SELECT 1)", ("k", "column1", "exists")),
])
def test_scalar_subquery_names(planner: Planner, sql: str, names: tuple[str, ...]) -> None:
    assert planner.names(sql) == names


def _walk(x: object) -> Iterator[object]:
    yield x
    if isinstance(x, tuple):
        for v in x:
            yield from _walk(v)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            yield from _walk(getattr(x, f.name))


# ---- 7. row comparisons, ORDER BY of set operations, CREATE TABLE AS, INHERITS ----------------

def test_row_comparison_is_lexicographic(planner: Planner) -> None:
    """(a, b) < (c, d) = a < c OR (a = c AND b < d)."""
    b = planner.bound("SELECT (c, x) < (x, c) FROM l")
    pred = next(x for x in _walk(b.rel) if isinstance(x, CallVariadic) and x.func == "or")
    a, rest = pred.exprs
    assert (a.func, a.expr1, a.expr2) == ("lt", Column(0, INT4), Column(1, INT4))
    assert rest.func == "and" and [(x.func, x.expr1.index, x.expr2.index) for x in rest.exprs] == [("eq", 0, 1), ("lt", 1, 0)]
    assert b.types == (BOOL,)


@pytest.mark.parametrize("sql, state", [
    ("SELECT (1, 2) = (1, 2, 3)", "42601"),
    ("SELECT 1 AS x UNION SELECT 2 ORDER BY x + 1", "0A000"),
    ("SELECT 1 AS x UNION SELECT 2 ORDER BY y", "42703"),
    ("SELECT 1 AS x UNION SELECT 2 ORDER BY t.x", "42P01"),
])
def test_row_and_set_operation_errors(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


def test_create_table_as_takes_the_query_columns(planner: Planner) -> None:
    planner.ddl("CREATE TABLE ctas AS SELECT 1 AS a, 'x' AS b, 2.5 AS \"C\" WITH NO DATA")
    planner.ddl("CREATE TABLE ctas2 (p) AS SELECT c, x FROM l WITH NO DATA")
    assert planner.names("SELECT * FROM ctas") == ("a", "b", "C")
    assert [str(c.type) for c in planner.coord.catalog.get_item("public", "ctas").columns] == ["integer", "text", "numeric"]
    assert planner.names("SELECT * FROM ctas2") == ("p", "x")
    with pytest.raises(SqlError) as e:
        planner.ddl("CREATE TABLE inh (y int) INHERITS (l)")
    assert e.value.sqlstate == "0A000"


# ---- 6. an aggregate belongs to the innermost query whose columns it reads ------------------

def test_aggregate_of_outer_columns_aggregates_the_outer_query(planner: Planner) -> None:
    b = planner.bound("SELECT (SELECT count(*) FILTER (WHERE t.a <> 0) FROM l) FROM t")
    reduces = [x for x in _walk(b.rel) if isinstance(x, HReduce)]
    # one Reduce, of t (the outer query), read by the subquery as an outer column
    assert len(reduces) == 1 and isinstance(reduces[0].input, HGet) and reduces[0].input.name.endswith(".t")
    assert any(isinstance(x, OuterColumn) and x.level == 1 for x in _walk(b.rel))
    assert b.names == ("count",)


def test_aggregate_of_own_columns_stays_inside(planner: Planner) -> None:
    b = planner.bound("SELECT (SELECT count(l.x) FILTER (WHERE t.a <> 0) FROM l) FROM t")
    reduces = [x for x in _walk(b.rel) if isinstance(x, HReduce)]
    assert len(reduces) == 1 and not (isinstance(reduces[0].input, HGet) and reduces[0].input.name.endswith(".t"))


@pytest.mark.parametrize("sql", [
    "SELECT a FROM t WHERE a > (SELECT max(t.a) FROM l)",
    "SELECT * FROM t, LATERAL (SELECT sum(t.a) FROM l) s",
])
def test_outer_aggregate_where_the_outer_query_cannot_aggregate(planner: Planner, sql: str) -> None:
    assert planner.error(sql).sqlstate == "42803"


# ---- WITH RECURSIVE ------------------------------------------------------------------------

def test_with_recursive_is_a_letrec_over_working_table_result_and_flag(planner: Planner) -> None:
    b = planner.bound("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t")
    lr = next(x for x in _walk(b.rel) if isinstance(x, HLetRec))
    assert lr.names == ("t_working", "t", "t_started") and b.names == ("n",)


def test_with_recursive_outer_join_with_the_reference_preserved(planner: Planner) -> None:
    b = planner.bound("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT t.n + 1 FROM t LEFT JOIN l ON l.c = t.n "
                      "WHERE t.n < 5) SELECT * FROM t")
    assert any(isinstance(x, HLetRec) for x in _walk(b.rel))


@pytest.mark.parametrize("sql, state", [
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t, t AS u) SELECT * FROM t", "42P19"),
    ("WITH RECURSIVE t(n) AS (SELECT n FROM t) SELECT * FROM t", "42P19"),
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT (SELECT max(n) FROM t)) SELECT * FROM t", "42P19"),
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT count(*) FROM t) SELECT * FROM t", "42P19"),
    # the recursive reference on the nullable side of an outer join (PostgreSQL's 42P19)
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM l LEFT JOIN t ON t.n = l.c) SELECT * FROM t", "42P19"),
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM t RIGHT JOIN l ON t.n = l.c) SELECT * FROM t", "42P19"),
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n FROM t FULL JOIN l ON t.n = l.c) SELECT * FROM t", "42P19"),
    # SEARCH / CYCLE (per CTE, any number of columns) are refused, never ignored
    ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SEARCH DEPTH FIRST BY n SET s SELECT * FROM t", "0A000"),
    ("WITH RECURSIVE t(n, m) AS (SELECT 1, 2 UNION ALL SELECT n + 1, m FROM t) SEARCH BREADTH FIRST BY n, m SET s "
     "CYCLE n, m SET c TO 'Y' DEFAULT 'N' USING p, u AS (SELECT 1) SELECT * FROM t", "0A000"),
    ("WITH t(n) AS (SELECT 1) CYCLE n SET c USING p SELECT * FROM t", "42601"),
    ("WITH RECURSIVE t(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET s SELECT * FROM t", "42601"),
])
def test_with_recursive_refusals(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


@pytest.mark.parametrize("sql", ["CREATE TABLE part1 PARTITION OF t FOR VALUES FROM (1) TO (10)"])
def test_create_table_without_column_list_is_unsupported(planner: Planner, sql: str) -> None:
    """CREATE TABLE with no column list other than AS query (PARTITION OF): 0A000, not a Python error."""
    with pytest.raises(SqlError) as e:
        planner.ddl(sql)
    assert e.value.sqlstate == "0A000"


@pytest.mark.parametrize("sql, desc, nulls_first", [
    ("SELECT c FROM l ORDER BY c USING <", False, False),
    ("SELECT c FROM l ORDER BY c USING >", True, True),
    ("SELECT c FROM l ORDER BY c USING > NULLS LAST", True, False),
    ("SELECT c FROM l ORDER BY c USING OPERATOR(pg_catalog.>)", True, True),
])
def test_order_by_using_is_asc_or_desc(sql: str, desc: bool, nulls_first: bool) -> None:
    """USING < / > order as the type's btree `<` / `>`: ASC / DESC with their NULLS default."""
    o = parse_sql(sql).args["order"].expressions[0]
    assert bool(o.args.get("desc")) == desc and bool(o.args.get("nulls_first")) == nulls_first


@pytest.mark.parametrize("sql, state", [
    ("SELECT c FROM l ORDER BY c USING =", "42809"),
    ("SELECT c FROM l ORDER BY c USING <=", "42809"),
    ("SELECT c FROM l ORDER BY c USING ~<~", "0A000"),
])
def test_order_by_using_other_operators(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


def test_whole_row_reference_is_a_record_of_the_items_columns(planner: Planner) -> None:
    b = planner.bound("SELECT l, (l.*), (SELECT l) FROM l")
    assert b.names == ("l", "l", "l")
    assert all(t.name == "record" and len(t.fields) == 2 for t in b.types)
    # a column of that name wins over the item's row (Postgres tries columns first)
    assert planner.bound("SELECT c FROM l AS c").types[0] == INT4


@pytest.mark.parametrize("sql", ["SELECT r FROM l LEFT JOIN r ON true", "SELECT l FROM l FULL JOIN r USING (c)"])
def test_whole_row_of_a_null_extended_side_is_refused(planner: Planner, sql: str) -> None:
    assert planner.error(sql).sqlstate == "0A000"


def test_row_in_subquery_is_a_semijoin_on_every_field(planner: Planner) -> None:
    plan = planner.explain("SELECT * FROM l WHERE (c, x) IN (SELECT y, c FROM r)")
    assert "Join on=(#0 = #2 AND #1 = #3)" in plan
    assert planner.bound("SELECT * FROM l WHERE (c, x) IN (SELECT y, c FROM r)").names == ("c", "x")


@pytest.mark.parametrize("sql", [
    "SELECT (c, x) NOT IN (SELECT y, c FROM r), (c, x) < ANY (SELECT y, c FROM r) FROM l",
    "SELECT (c, x) IN (VALUES (1, 2)), (c, x) IN ((1, 2), (3, 4)), (c, x) = (SELECT 1, 2) FROM l",
    "SELECT ROW(ROW(1)) = ANY (SELECT ROW(1)), l = ROW(1, 2) FROM l",
])
def test_row_constructors_against_subqueries_bind(planner: Planner, sql: str) -> None:
    assert all(t == BOOL for t in planner.bound(sql).types)


@pytest.mark.parametrize("sql, state", [
    ("SELECT * FROM l WHERE (c, x) IN (SELECT y FROM r)", "42601"),
    ("SELECT * FROM l WHERE (c, x) IN (SELECT y, c, c FROM r)", "42601"),
    ("SELECT (SELECT 1, 2) < (c, x) FROM l", "42601"),
    ("SELECT l = ROW(1, 'a') FROM l", "42804"),
    ("SELECT l = ROW(1) FROM l", "42804"),
])
def test_row_comparison_errors(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


def test_type_named_call_is_a_cast_and_derived_literals_are_text(planner: Planner) -> None:
    b = planner.bound("SELECT float8(count(*)), int4(2.5), s.k FROM l, (SELECT 'k' AS k) s GROUP BY s.k")
    assert b.names == ("float8", "int4", "k")
    assert [t.name for t in b.types] == ["float8", "int4", "text"]
    assert planner.error("SELECT numeric(7)").sqlstate == "42601"


def test_fetch_first_with_ties_filters_on_rank(planner: Planner) -> None:
    plan = planner.explain("SELECT c FROM l ORDER BY c OFFSET 1 FETCH FIRST 2 ROWS WITH TIES")
    assert "rank" in plan and "row_number" in plan
    b = planner.bound("SELECT c FROM l ORDER BY c FETCH FIRST 2 ROWS ONLY")
    assert b.finishing.limit == 2
    assert planner.bound("SELECT c FROM l ORDER BY c FETCH FIRST ROW ONLY").finishing.limit == 1


@pytest.mark.parametrize("sql, state", [
    ("SELECT c FROM l FETCH FIRST 2 ROWS WITH TIES", "42601"),
    ("SELECT c FROM l ORDER BY c FETCH FIRST NULL ROWS WITH TIES", "2201W"),
    ("SELECT c FROM l ORDER BY c FETCH FIRST (NULL + 1) ROWS WITH TIES", "2201W"),
])
def test_fetch_first_with_ties_errors(planner: Planner, sql: str, state: str) -> None:
    assert planner.error(sql).sqlstate == state


def test_session_functions_bind_to_the_sessions_values(planner: Planner) -> None:
    """current_user & co. are constants of the statement, read from the session (they were
    refused under parser-internal names like `sessionuser()`)."""
    for sql, value in (("current_user", "materialize"), ("session_user", "materialize"),
                       ("current_database()", "materialize"), ("current_schema", "public"),
                       ("current_schema()", "public")):
        bound = planner.bound(f"SELECT {sql} FROM t")
        assert bound.names == (sql.removesuffix("()"),)
        assert f'Map ("{value}")' in planner.explain(f"SELECT {sql} FROM t"), sql


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT x @@ 'a' FROM \"Q\"", "operator does not exist: integer @@ unknown"),
    ("SELECT '{}'::jsonb @? '$.a' FROM \"Q\"", "operator does not exist: jsonb @? unknown"),
    ("SELECT x <-> x FROM \"Q\"", "operator does not exist: integer <-> integer"),
    ("SELECT x ~ 'a' FROM \"Q\"", "operator does not exist: integer ~ unknown"),
])
def test_unsupported_operators_are_named_as_written(planner: Planner, sql: str, message: str) -> None:
    """An operator error names the operator the user wrote, never the parser's node name."""
    e = planner.error(sql)
    assert (e.sqlstate, e.message) == ("42883", message)


def test_collate_byte_order_collations_only(planner: Planner) -> None:
    """COLLATE "C" / "POSIX" / "default" keep the value (text compares by bytes here);
    other collations are refused, and non-text values have none."""
    assert planner.names('SELECT x::text COLLATE "C" FROM "Q"') == ("x",)
    assert planner.error('SELECT x::text COLLATE "de_DE" FROM "Q"').sqlstate == "0A000"
    assert planner.error('SELECT x COLLATE "C" FROM "Q"').sqlstate == "42804"


def test_numeric_arithmetic_drops_the_typmod() -> None:
    """numeric(p,s) op numeric(p,s) is plain numeric, as Postgres' numeric operators are."""
    from sql import func
    from sql.types import SqlType, numeric_typmod

    t = SqlType("numeric", numeric_typmod(10, 2))
    for op in ("add", "sub", "mul", "div"):
        assert func.binary_op(op, t, t) == (SqlType("numeric"),) * 3
