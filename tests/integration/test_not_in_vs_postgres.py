"""x NOT IN (S) answered as PostgreSQL 15 answers it. As a WHERE / HAVING conjunct over one
uncorrelated column it is a null-aware anti-join (sql.lowering `_not_in`, one Spark LEFT ANTI
JOIN on (x = s) OR isnull(x = s)): a NULL in S makes NOT IN null (false) for every row, a NULL
x gives NULL unless S is empty, an empty S keeps every row, duplicates of outer rows keep
their multiplicity. Elsewhere (select list, under OR / IS NULL, several columns, correlated
S) the bool_or plan answers, and both are checked here; the Spark plan is checked to hold
the null-aware anti-join."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.o (k int, v int, tag char(3))",
    "INSERT INTO {s}.o VALUES (1, 10, 'a'), (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (NULL, 40, 'd'), "
    "(NULL, NULL, 'e'), (5, 50, 'f'), (5, 51, 'f'), (6, 60, NULL)",
    "CREATE TABLE {s}.nn (k int, v int, name text)",  # no NULLs
    "INSERT INTO {s}.nn VALUES (1, 10, 'a'), (1, 11, 'x'), (4, 40, 'b'), (5, 50, 'c')",
    "CREATE TABLE {s}.wn (k int, v int, name text)",  # NULLs in every column
    "INSERT INTO {s}.wn VALUES (1, 10, 'a'), (NULL, 40, 'b'), (2, NULL, NULL)",
    "CREATE TABLE {s}.e (k int, v int)",  # empty
    "CREATE TABLE {s}.big (k bigint, n numeric)",
    "INSERT INTO {s}.big VALUES (2, 2.0), (3, 3.5)",
]

QUERIES = [
    # one column, as a filter: the null-aware anti-join
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM nn)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM wn)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM wn WHERE k IS NOT NULL)",
    "SELECT * FROM o WHERE v NOT IN (SELECT v FROM wn)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM e)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM nn WHERE k > 100)",
    "SELECT * FROM o WHERE k NOT IN (SELECT NULL::int)",
    "SELECT * FROM o WHERE k NOT IN (SELECT NULL::int WHERE false)",
    "SELECT * FROM o WHERE k NOT IN (VALUES (2), (7))",
    "SELECT * FROM o WHERE NOT (k IN (SELECT k FROM nn))",
    "SELECT * FROM o WHERE k + 1 NOT IN (SELECT k FROM nn)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM big)",
    "SELECT * FROM o WHERE k NOT IN (SELECT n FROM big)",
    "SELECT * FROM o WHERE tag NOT IN (SELECT name FROM nn)",
    "SELECT * FROM o WHERE tag NOT IN (SELECT name FROM wn)",
    "SELECT * FROM o WHERE v > 10 AND k NOT IN (SELECT k FROM nn WHERE v > 10) AND tag <> 'f'",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM nn) AND v NOT IN (SELECT v FROM wn WHERE v IS NOT NULL)",
    "SELECT o.tag, nn.name FROM o, nn WHERE o.k = nn.k AND o.v NOT IN (SELECT v FROM wn WHERE v IS NOT NULL)",
    "SELECT tag, count(*) FROM o WHERE k NOT IN (SELECT k FROM wn WHERE k IS NOT NULL) GROUP BY tag",
    "SELECT k, count(*) FROM o GROUP BY k HAVING k NOT IN (SELECT k FROM nn WHERE k > 1)",
    "SELECT k, count(*) FROM o GROUP BY k HAVING k NOT IN (SELECT k FROM wn)",
    # inside a correlated subquery: S uncorrelated, x an enclosing or a local value
    "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM nn WHERE nn.k = o.k AND nn.v NOT IN (SELECT v FROM wn WHERE v IS NOT NULL))",
    "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM nn WHERE nn.k = o.k AND o.v NOT IN (SELECT v FROM wn WHERE v IS NOT NULL))",
    "SELECT k, (SELECT count(*) FROM nn WHERE nn.v > o.k AND nn.k NOT IN (SELECT k FROM wn WHERE k IS NOT NULL)) FROM o",
    # not a filter of its own: the bool_or plan
    "SELECT k, k NOT IN (SELECT k FROM nn), k NOT IN (SELECT k FROM wn), k NOT IN (SELECT k FROM e) FROM o",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM wn) OR v = 40",
    "SELECT * FROM o WHERE (k NOT IN (SELECT k FROM wn)) IS NULL",
    "SELECT * FROM o WHERE NOT (k NOT IN (SELECT k FROM wn))",
    # several columns, correlated S: the bool_or plan
    "SELECT * FROM o WHERE (k, v) NOT IN (SELECT k, v FROM nn)",
    "SELECT * FROM o WHERE (k, v) NOT IN (SELECT k, v FROM wn)",
    "SELECT * FROM o WHERE (k, v) NOT IN (SELECT k, v FROM e)",
    "SELECT k, v, (k, v) NOT IN (SELECT k, v FROM wn) FROM o",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM wn WHERE wn.v = o.v)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM nn WHERE nn.v > o.v)",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "notin-", "ni", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_not_in_answers_as_postgres(both, sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql), sql


def test_spark_runs_one_null_aware_anti_join() -> None:
    """The rendered plan of a NOT IN filter is Spark's null-aware broadcast hash anti-join
    (`BroadcastHashJoin .. LeftAnti, BuildRight, true`: its isNullAwareAntiJoin flag), with
    no cross join, aggregate or Union left from the plan's Threshold / Negate."""
    from compute.plan import pipeline
    from compute.render import oneshot
    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    spark = spark_session()
    try:
        gs.run("CREATE TABLE x (a int, b int)")
        gs.run("CREATE TABLE y (c int, d int)")
        data = {"x": [((1, 10), 1), ((2, 20), 1), ((None, 30), 1), ((3, 40), 2)], "y": [((1, 1), 1), ((5, 1), 1), ((7, 0), 1)]}
        planned = gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR SELECT * FROM x WHERE a NOT IN (SELECT c FROM y WHERE d > 0)", []).plan
        df = pipeline.dataflow(pipeline.optimized_mir(planned.bound), None)  # type: ignore[union-attr]
        names = dict(df.sources)

        def read(i: str, ts: tuple) -> oneshot.Rel:
            return oneshot.Rel(ctx.view(oneshot.constant_df(spark, data[names[i].split(".")[-1]], ts), False), len(ts))

        ctx = oneshot.RenderContext(spark, read, source_mfps=dict(df.source_mfps))
        try:
            out = spark.sql(oneshot.render(df.plan, ctx).sql)
            plan = out._jdf.queryExecution().executedPlan().toString()
            assert "LeftAnti, BuildRight, true" in plan, plan
            assert "NestedLoop" not in plan and "Aggregate" not in plan and "Union" not in plan, plan
            assert sorted((tuple(r)[:2], r[-1]) for r in out.collect()) == [((2, 20), 1), ((3, 40), 2)]
        finally:
            ctx.release()
    finally:
        gs.close()
