"""EXPLAIN FILTER PUSHDOWN: the statistics evaluation (pure, no Spark), and the real
coordinator's part selection over a table written in batches, checked part by part against
PostgreSQL 15 evaluating the same predicate over the part's rows: a part holding a row that
matches is always selected (the server-level test: tests/integration/test_surface_server.py)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

import pyarrow.parquet as pq
import pytest

from compute.plan.pushdown import ColumnStats, PartStats, may_match, part_selected, source_filters
from server import explain_pushdown
from server.api import RowsResult
from server.coordinator import Coordinator
from sql import mir
from sql.errors import SqlError
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal
from sql.types import BOOL, DATE, FLOAT8, INT4, INT8, TEXT, TIMESTAMPTZ

A, X = Column(0, INT4), Column(1, TEXT)


def cmp(op: str, a: Any, b: Any) -> CallBinary:
    return CallBinary(op, a, b, BOOL)


def lit(v: Any, t: Any = INT4) -> Literal:
    return Literal(v, t)


def part(rows: int = 10, **cols: ColumnStats) -> PartStats:
    return PartStats(rows, {int(k[1:]): v for k, v in cols.items()})


P = part(c0=ColumnStats(10, 19, 0), c1=ColumnStats("m", "p", 2))


@pytest.mark.parametrize(("pred", "expected"), [
    (cmp("eq", A, lit(15)), True), (cmp("eq", A, lit(20)), False), (cmp("eq", A, lit(9)), False),
    (cmp("lt", A, lit(10)), False), (cmp("lt", A, lit(11)), True), (cmp("le", A, lit(10)), True),
    (cmp("gt", A, lit(19)), False), (cmp("ge", A, lit(19)), True), (cmp("ne", A, lit(15)), True),
    (cmp("gt", lit(10), A), False), (cmp("gt", lit(11), A), True),  # literal on the left: 10 > a
    (cmp("eq", A, lit(None)), False),  # = NULL is never TRUE
    (cmp("eq", CallUnary("cast", A, INT8), lit(5_000_000_000, INT8)), False),  # int4 -> int8 widening
    (cmp("eq", X, lit("n", TEXT)), True), (cmp("lt", X, lit("m", TEXT)), False), (cmp("gt", X, lit("p", TEXT)), False),
    (CallUnary("is_null", A, BOOL), False), (CallUnary("is_null", X, BOOL), True),
    (CallUnary("not", CallUnary("is_null", A, BOOL), BOOL), True),
    (CallVariadic("and", (cmp("gt", A, lit(12)), cmp("lt", A, lit(5))), BOOL), False),
    # conjuncts are judged one by one (no range intersection): kept, never wrongly dropped
    (CallVariadic("and", (cmp("gt", A, lit(12)), cmp("lt", A, lit(11))), BOOL), True),
    (CallVariadic("or", (cmp("gt", A, lit(30)), cmp("lt", A, lit(5))), BOOL), False),
    (CallVariadic("or", (cmp("gt", A, lit(30)), cmp("lt", A, lit(12))), BOOL), True),
    (lit(False, BOOL), False), (lit(None, BOOL), False), (lit(True, BOOL), True),
    # what the module does not reason about keeps the part
    (cmp("gt", CallBinary("add", A, lit(1), INT4), lit(100)), True),
    (CallUnary("not", cmp("lt", A, lit(100)), BOOL), True),
    (cmp("eq", A, Column(2, INT4)), True),
    (cmp("eq", CallUnary("cast", A, TEXT), lit("5", TEXT)), True),
    (cmp("gt", Column(2, INT4), lit(100)), True),  # no statistics for the column
    (cmp("gt", Column(0, FLOAT8), lit(100.0, FLOAT8)), True),  # floats: NaN is greatest in SQL
    (cmp("eq", A, lit("15", TEXT)), True),  # literal of another type
])
def test_may_match(pred: Any, expected: bool) -> None:
    assert may_match(pred, P) is expected


def test_all_null_and_missing_statistics() -> None:
    nulls = part(rows=4, c0=ColumnStats(None, None, 4))
    assert not may_match(cmp("gt", A, lit(0)), nulls)
    assert not may_match(CallUnary("not", CallUnary("is_null", A, BOOL), BOOL), nulls)
    assert may_match(CallUnary("is_null", A, BOOL), nulls)
    unknown = part(rows=4, c0=ColumnStats(None, None, None))
    assert may_match(cmp("gt", A, lit(0)), unknown) and may_match(CallUnary("is_null", A, BOOL), unknown)
    ts = Column(0, TIMESTAMPTZ)
    day = part(rows=3, c0=ColumnStats(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2024, 1, 2, tzinfo=dt.UTC), 0))
    assert not may_match(cmp("gt", ts, lit(dt.datetime(2024, 1, 3, tzinfo=dt.UTC), TIMESTAMPTZ)), day)
    assert may_match(cmp("gt", ts, lit(dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC), TIMESTAMPTZ)), day)
    d = part(rows=3, c0=ColumnStats(dt.date(2024, 1, 1), dt.date(2024, 1, 9), 1))
    assert not may_match(cmp("lt", Column(0, DATE), lit(dt.date(2023, 12, 31), DATE)), d)


def _eval(pred: Any, v: int | None) -> bool | None:
    """SQL's value of a comparison / AND / OR / IS NULL tree over one int column."""
    match pred:
        case Literal(value=x):
            return x  # type: ignore[no-any-return]
        case CallUnary(func="is_null"):
            return v is None
        case CallUnary(func="not", expr=x):
            r = _eval(x, v)
            return None if r is None else not r
        case CallVariadic(func="and", exprs=xs):
            rs = [_eval(x, v) for x in xs]
            return False if False in rs else None if None in rs else True
        case CallVariadic(func="or", exprs=xs):
            rs = [_eval(x, v) for x in xs]
            return True if True in rs else None if None in rs else False
        case CallBinary(func=op, expr1=Column(), expr2=Literal(value=x)):
            if v is None or x is None:
                return None
            return {"eq": v == x, "ne": v != x, "lt": v < x, "le": v <= x, "gt": v > x, "ge": v >= x}[op]
    raise AssertionError(pred)


def test_never_drops_a_part_with_a_matching_row() -> None:
    """Random parts and predicates: whenever a row of the part makes the predicate TRUE, the
    part is selected."""
    rng = random.Random(7)
    ops = ["eq", "ne", "lt", "le", "gt", "ge"]

    def pred(depth: int) -> Any:
        r = rng.random()
        if depth > 0 and r < 0.3:
            return CallVariadic(rng.choice(["and", "or"]), (pred(depth - 1), pred(depth - 1)), BOOL)
        if r < 0.4:
            return CallUnary("is_null", A, BOOL) if rng.random() < 0.5 else \
                CallUnary("not", CallUnary("is_null", A, BOOL), BOOL)
        return cmp(rng.choice(ops), A, lit(rng.choice([None, *range(-3, 25)])))

    pruned = 0
    for _ in range(3000):
        values = [rng.choice([None, *range(rng.randint(0, 10), rng.randint(10, 20))]) for _ in range(rng.randint(1, 6))]
        present = [v for v in values if v is not None]
        stats = part(rows=len(values), c0=ColumnStats(min(present, default=None), max(present, default=None),
                                                      values.count(None)))
        p = pred(2)
        if not may_match(p, stats):
            pruned += 1
            assert not any(_eval(p, v) is True for v in values), (p, values)
    assert pruned > 300  # the check is not vacuous


def test_source_filters() -> None:
    t = mir.Get("u1", "t", (INT4, TEXT))
    keep = cmp("gt", Column(0, INT4), lit(3))
    mapped = cmp("gt", Column(2, INT4), lit(3))  # on a Map's new column: not pushed
    plan = mir.Union((mir.Filter(mir.Map(t, (CallBinary("add", Column(0, INT4), lit(1), INT4),)), (keep, mapped)), t))
    assert source_filters(plan) == {"u1": [(keep,), ()]}
    # one read without a filter reads every part
    assert part_selected([(keep,), ()], part(c0=ColumnStats(0, 1, 0)))
    assert not part_selected([(keep,)], part(c0=ColumnStats(0, 1, 0)))


# ---- the real coordinator over Parquet batches, part by part against PostgreSQL ---------------


@pytest.fixture(scope="module")
def coord(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Coordinator]:
    c = Coordinator(str(tmp_path_factory.mktemp("pushdown") / "data"))
    s = c.new_session("materialize", "materialize", {})
    run(c, s, "CREATE TABLE t (a int, b bigint, d date, x text, f float8)")
    for k in range(4):  # four batches with disjoint ranges of a, b, d and x; NULLs in the last one
        rows = [f"({g}, {g * 1000}, DATE '2024-01-{g + 1:02d}', 'k{k}-{g}', {g}.5::float8)" for g in range(k * 7, k * 7 + 7)]
        if k == 3:
            rows.append("(NULL, NULL, NULL, NULL, 'NaN'::float8)")
        run(c, s, "INSERT INTO t VALUES " + ", ".join(rows))
    run(c, s, "CREATE MATERIALIZED VIEW mv AS SELECT a, b FROM t WHERE b >= 14000 AND b < 15000")
    c.end_session(s)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def pg() -> Iterator[Any]:
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("pushdown-", initdb_args=("--locale=C",)) as dsn:
        conn = psycopg.connect(dsn, autocommit=True)
        yield conn
        conn.close()


def run(c: Coordinator, s: Any, sql: str) -> list[tuple[Any, ...]]:
    r = c.execute(s, c.prepare(s, sql, []), [])
    return [row for batch in r.batches for row in batch] if isinstance(r, RowsResult) else []


# (predicate, parts of the four selected by their statistics)
PREDICATES = [
    ("a >= 21", 1), ("a < 7", 1), ("a BETWEEN 5 AND 9", 2), ("a = 100", 0), ("a IN (1, 15)", 2),
    ("b > 20000", 1), ("d < DATE '2024-01-03'", 1), ("x = 'k2-16'", 1), ("x LIKE 'k2%'", 4),
    ("a IS NULL", 1), ("a IS NOT NULL", 4), ("a < 3 OR a > 26", 2), ("a > 3 AND b < 2000", 1), ("a > 10 AND b < 2000", 0),
    ("a + 1 > 27", 4), ("a::text = '5'", 4), ("f > 26.0", 4), ("a > 1000000000000", 0),
    ("true", 4),
]


@pytest.mark.parametrize(("where", "selected"), PREDICATES)
def test_parts_selected_vs_postgres(coord: Coordinator, pg: Any, where: str, selected: int) -> None:
    """Each part holding a row PostgreSQL says matches is selected; the statistics-based
    count is what the disjoint batches give; EXPLAIN's row adds the parts up."""
    s = coord.new_session("materialize", "materialize", {})
    try:
        p = coord.prepare(s, f"SELECT * FROM t WHERE {where}", [])
        m, ts, skip = explain_pushdown.select_plan(coord, s, p.plan.bound, [], ())
        ((item, parts),) = explain_pushdown.selection(coord, m, ts, skip)
        assert item.name == "t" and len(parts) == 4
        for rg, chosen in parts:
            table = pq.ParquetFile(rg.path).read_row_group(rg.index)
            pg.execute("DROP TABLE IF EXISTS part")
            pg.execute("CREATE TABLE part (a int, b bigint, d date, x text, f float8)")
            with pg.cursor() as cur:
                cur.executemany("INSERT INTO part VALUES (%s, %s, %s, %s, %s)",
                                list(zip(*(table.column(f"c{i}").to_pylist() for i in range(5)), strict=True)))
            ((matching,),) = pg.execute(f"SELECT count(*) FROM part WHERE {where}").fetchall()
            assert chosen or matching == 0, (where, rg.path, matching)
        assert sum(chosen for _, chosen in parts) == selected
        ((source, total_bytes, selected_bytes, total, chosen_parts),) = run(coord, s, f"EXPLAIN FILTER PUSHDOWN FOR SELECT * FROM t WHERE {where}")
        assert (source, total, chosen_parts) == ("materialize.public.t", 4, selected)
        assert total_bytes == sum(rg.bytes for rg, _ in parts) and selected_bytes == sum(rg.bytes for rg, yes in parts if yes)
        assert (selected_bytes < total_bytes) is (selected < 4)
    finally:
        coord.end_session(s)


def test_a_comparison_with_null_reads_nothing(coord: Coordinator, pg: Any) -> None:
    """`a = NULL` is NULL for every row, folded while planning (as PostgreSQL does): the query
    is an empty constant, no part of t is read and EXPLAIN FILTER PUSHDOWN lists no source."""
    s = coord.new_session("materialize", "materialize", {})
    try:
        p = coord.prepare(s, "SELECT * FROM t WHERE a = NULL", [])
        m, ts, skip = explain_pushdown.select_plan(coord, s, p.plan.bound, [], ())
        assert explain_pushdown.selection(coord, m, ts, skip) == []
        assert run(coord, s, "EXPLAIN FILTER PUSHDOWN FOR SELECT * FROM t WHERE a = NULL") == []
        assert run(coord, s, "SELECT * FROM t WHERE a = NULL") == pg.execute("SELECT * FROM (VALUES (1)) v(a) WHERE a = NULL").fetchall() == []
    finally:
        coord.end_session(s)


def test_materialized_view_and_joins(coord: Coordinator) -> None:
    s = coord.new_session("materialize", "materialize", {})
    try:
        # the view's maintained plan reads t with b in [14000, 15000): the third batch only
        assert run(coord, s, "EXPLAIN FILTER PUSHDOWN FOR MATERIALIZED VIEW mv")[0][::4] == ("materialize.public.t", 1)
        # a self-join: one read filtered, the other not -> every part
        assert run(coord, s, "EXPLAIN FILTER PUSHDOWN FOR SELECT * FROM t t1, t t2 WHERE t1.a = t2.a AND t1.a < 3")[0][3:] == (4, 4)
        # both reads filtered: a part is read when either read needs it
        rows = run(coord, s, "EXPLAIN FILTER PUSHDOWN FOR SELECT * FROM t t1, t t2 WHERE t1.a < 3 AND t2.a > 26")
        assert rows[0][3:] == (4, 2)
        assert run(coord, s, "EXPLAIN FILTER PUSHDOWN FOR SELECT 1") == []  # reads no storage
        for sql, state in [("EXPLAIN FILTER PUSHDOWN FOR MATERIALIZED VIEW t", "42809"),
                           ("EXPLAIN FILTER PUSHDOWN FOR MATERIALIZED VIEW nope", "42P01"),
                           ("EXPLAIN FILTER PUSHDOWN FOR INSERT INTO t VALUES (1)", "0A000")]:
            with pytest.raises(SqlError) as e:
                run(coord, s, sql)
            assert e.value.sqlstate == state, sql
        assert coord.compute._spark is None  # no Spark session was ever needed
    finally:
        coord.end_session(s)
