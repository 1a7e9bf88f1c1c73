"""sqllogictest `--auto-index-selects`: the view statements derived from a SELECT (Materialize's
`generate_view_sql` rules) and the runner's handling of a record that passes as a plain query
but not through the indexed view (no server: a fake connection answers)."""

from __future__ import annotations

import re

import pytest

from tests.slt.auto_index import is_select, view_sql
from tests.slt.parser import parse_text
from tests.slt.runner import DbError, QueryResult, RunOptions, format_table, run_records

INT4 = 23


@pytest.mark.parametrize("sql,cols,order", [
    ("SELECT a, b AS x FROM t ORDER BY x DESC, 1", " (a1, a2)", " ORDER BY 2 DESC, 1"),
    # an ORDER BY item matching no output column ends the derived ORDER BY (a prefix)
    ("SELECT a, b FROM t ORDER BY b, c, a", " (a1, a2)", " ORDER BY 2"),
    ("SELECT a + b, c FROM t ORDER BY a + b DESC NULLS LAST, c LIMIT 3", " (a1, a2)", " ORDER BY 1 DESC NULLS LAST, 2"),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", " (a1)", " ORDER BY 1"),
    ("SELECT * FROM t ORDER BY a", "", ""),
    ("SELECT t.*, a FROM t", "", ""),
    ("SELECT col2 AS a, col1 FROM tab0 WHERE col1 > 3", " (a1, a2)", ""),
])
def test_view_statements(sql: str, cols: str, order: str) -> None:
    v = view_sql(sql, "v")
    assert v is not None
    assert v.create_view == f"CREATE VIEW v{cols} AS {sql}"   # the query is kept whole (LIMIT too)
    assert v.create_index == "CREATE DEFAULT INDEX ON v"
    assert v.select == f"SELECT * FROM v{order}"
    assert v.drop == "DROP VIEW IF EXISTS v"


def test_star_columns_named_by_the_record() -> None:
    v = view_sql("SELECT * FROM t, t AS u ORDER BY 1", "v", ncols=4)
    assert v is not None and v.create_view.startswith("CREATE VIEW v (a1, a2, a3, a4) AS SELECT *")
    assert v.select == "SELECT * FROM v ORDER BY 1"
    # a projection without `*` is counted from the query itself
    assert view_sql("SELECT a, b FROM t", "v", ncols=7).create_view.startswith("CREATE VIEW v (a1, a2) AS")  # type: ignore[union-attr]


@pytest.mark.parametrize("sql", ["INSERT INTO t VALUES (1)", "VALUES (1)", "CREATE TABLE t (a int)", "SELECT (((", ""])
def test_not_a_select(sql: str) -> None:
    assert view_sql(sql) is None and not is_select(sql)


class ViewConn:
    """Plain SELECTs answer `plain`; the view's SELECT answers `through_view` (or raises it)."""

    def __init__(self, plain: QueryResult, through_view: QueryResult | DbError) -> None:
        self.plain, self.through_view = plain, through_view
        self.executed: list[str] = []
        self.broken = False

    def execute(self, sql: str) -> QueryResult:
        self.executed.append(sql)
        if re.match(r"SELECT \* FROM v[0-9a-f]{32}", sql):
            if isinstance(self.through_view, DbError):
                raise self.through_view
            return self.through_view
        if sql.startswith("SELECT"):
            return self.plain
        return QueryResult([], [], 0)

    def close(self) -> None:
        pass


TEXT = "query I rowsort\nSELECT a FROM t\n----\n1\n2\n"


def _run(conn: ViewConn, auto: bool = True):  # type: ignore[no-untyped-def]
    return run_records(parse_text(TEXT), lambda: conn, "x.test", RunOptions(auto_index_selects=auto))  # type: ignore[arg-type,return-value]


def test_view_agrees() -> None:
    ok = QueryResult([INT4], [("2",), ("1",)], 2)
    conn = ViewConn(ok, QueryResult([INT4], [("1",), ("2",)], 2))
    res = _run(conn)
    assert (res.passed, res.failed, res.view_checked, res.view_failed) == (1, 0, 1, 0)
    kinds = [s.split()[0] + " " + s.split()[1] for s in conn.executed]
    assert kinds == ["SELECT a", "CREATE VIEW", "CREATE DEFAULT", "SELECT *", "DROP VIEW"]


@pytest.mark.parametrize("through_view,reason", [
    (QueryResult([INT4], [("1",)], 1), "view wrong result"),                  # a lost row
    (QueryResult([INT4], [("1",), ("2",), ("2",)], 3), "view wrong result"),  # a duplicated row
    (DbError("XX000", "internal error"), "XX000"),
])
def test_view_only_failure_is_caught(through_view: QueryResult | DbError, reason: str) -> None:
    conn = ViewConn(QueryResult([INT4], [("1",), ("2",)], 2), through_view)
    res = _run(conn)
    assert (res.passed, res.failed, res.view_checked, res.view_failed) == (0, 1, 1, 1)
    assert res.failed_lines == {1: reason}
    assert "through an indexed view" in res.failures[0].actual
    assert conn.executed[-1].startswith("DROP VIEW")     # cleaned up after a failure too
    table = format_table([res], compare_pg=False)
    assert "view-only" in table and "1 of them passed as a plain query but failed through the view" in table
    # without the flag the same record passes
    assert _run(ViewConn(QueryResult([INT4], [("1",), ("2",)], 2), through_view), auto=False).passed == 1
