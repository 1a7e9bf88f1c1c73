"""Window functions in the binder (no Spark): result types as Postgres 15 infers them
(checked against a real PostgreSQL 15), parameter inference, and the window aggregate's
input/output shapes that the renderer relies on (sql/scalar.py, AggregateExpr)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from compute.plan import lir
from compute.plan.pipeline import dataflow, optimized_mir
from sql.scalar import AggregateExpr, ColumnOrder, WindowSpec
from sql.types import FLOAT8, INT4, INT8, NUMERIC, TEXT, list_type, record_type
from tests.golden_runner import GoldenSession

DDL = "CREATE TABLE t (a int, b int, c text, d numeric, e bigint, f float8)"


@pytest.fixture(scope="module")
def gs() -> Iterator[GoldenSession]:
    s = GoldenSession()
    s.run(DDL)
    yield s
    s.close()


# (query, [(column name, type)], [parameter types])
CASES = [
    ("SELECT row_number() OVER (), rank() OVER (ORDER BY a), dense_rank() OVER (PARTITION BY a ORDER BY b) FROM t",
     [("row_number", "bigint"), ("rank", "bigint"), ("dense_rank", "bigint")], []),
    ("SELECT lag(a) OVER (ORDER BY b), lead(b, 2) OVER (), lag(a, 1, 0) OVER (), lag(a, 1, 1.5) OVER (), "
     "lag(c, 1, 'x') OVER (), lag(e, 1, a) OVER (), lag('x', 1, 'y') OVER () FROM t",
     [("lag", "integer"), ("lead", "integer"), ("lag", "integer"), ("lag", "numeric"), ("lag", "text"),
      ("lag", "bigint"), ("lag", "text")], []),
    ("SELECT first_value(c) OVER (ORDER BY a), last_value(d) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM t",
     [("first_value", "text"), ("last_value", "numeric")], []),
    ("SELECT sum(a) OVER (), sum(e) OVER (), sum(d) OVER (), sum(f) OVER (), count(*) OVER (), count(c) OVER (), "
     "avg(a) OVER (), avg(f) OVER (), min(c) OVER (), max(d) OVER () FROM t",
     [("sum", "bigint"), ("sum", "numeric"), ("sum", "numeric"), ("sum", "double precision"), ("count", "bigint"),
      ("count", "bigint"), ("avg", "numeric"), ("avg", "double precision"), ("min", "text"), ("max", "numeric")], []),
    ("SELECT a, sum(sum(b)) OVER (ORDER BY a), rank() OVER (ORDER BY count(*) DESC) FROM t GROUP BY a",
     [("a", "integer"), ("sum", "numeric"), ("rank", "bigint")], []),
    # parameters take their types from the window function's signature and context
    ("SELECT lag(a, $1, $2) OVER (PARTITION BY b + $3 ORDER BY c || $4) FROM t",
     [("lag", "integer")], ["integer", "integer", "integer", "text"]),
    ("SELECT sum(a) OVER (ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t WHERE a = $1",
     [("sum", "bigint")], ["integer"]),
]


@pytest.mark.parametrize(("sql", "columns", "params"), CASES, ids=range(len(CASES)))
def test_types_follow_postgres(gs: GoldenSession, sql: str, columns, params) -> None:
    p = gs.coord.prepare(gs.session, sql, [])
    assert [(c.name, c.type.pg_format()) for c in p.columns] == columns
    assert [t.pg_format() for t in p.param_types] == params


def _window_aggregates(p: lir.Plan) -> list[AggregateExpr]:
    from compute.plan.pipeline import lir_children

    out = [a for a in p.node.aggregates if a.window is not None] if isinstance(p.node, lir.Reduce) else []
    for c in lir_children(p.node):
        out.extend(_window_aggregates(c))
    return out


def test_window_aggregate_shapes_are_typed(gs: GoldenSession) -> None:
    """row_number's input is row(list[<row>], order values..); lag's is
    row(row(<row>, row(value, offset, default)), order values..); each result is a list of
    record(result, <row>), computed by a Reduce::Basic; later gadgets see earlier results."""
    p = gs.coord.prepare(gs.session, "SELECT row_number() OVER (PARTITION BY a ORDER BY c), lag(b, 2) OVER (ORDER BY a DESC) FROM t", [])
    df = dataflow(optimized_mir(p.plan.bound), p.plan.bound.finishing)
    lag, rn = _window_aggregates(df.plan)  # post-order: the outer gadget reads the inner one
    row6 = record_type((INT4, INT4, TEXT, NUMERIC, INT8, FLOAT8))
    row7 = record_type(row6.fields + (INT8,))
    assert rn.func == "row_number" and rn.window == WindowSpec((ColumnOrder(0),))
    assert rn.expr.typ == record_type((list_type(row6), TEXT))
    assert rn.typ == list_type(record_type((INT8, row6)))
    assert lag.func == "lag" and lag.window == WindowSpec((ColumnOrder(0, desc=True, nulls_last=False),))
    assert lag.expr.typ == record_type((record_type((row7, record_type((INT4, INT4, INT4)))), INT4))
    assert lag.typ == list_type(record_type((INT4, row7)))
