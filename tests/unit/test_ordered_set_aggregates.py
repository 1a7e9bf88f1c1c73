"""Ordered-set and hypothetical-set aggregates (`WITHIN GROUP`) bound to plans, without Spark:
the sorted-values aggregate and its final function, the counting aggregates of the
hypothetical-set functions, and PostgreSQL's binding errors.
tests/integration/test_aggregates_vs_postgres.py compares their results with PostgreSQL 15."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.test_binder import Planner


@pytest.fixture(scope="module")
def planner() -> Iterator[Planner]:
    p = Planner()
    p.ddl("CREATE TABLE t (x int, y float8, s text, g int)")
    yield p
    p.close()


def test_percentile_is_a_final_function_over_the_sorted_non_null_values(planner: Planner) -> None:
    plan = planner.explain("SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC) FROM t")
    assert "array_agg[order_by=[#0 desc nulls_first]](case when (float8(#0)) IS NOT NULL then row(float8(#0))" in plan
    assert "percentile_cont(#0, 0.25)" in plan
    assert planner.names("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY s), mode() WITHIN GROUP (ORDER BY y) FROM t") \
        == ("percentile_disc", "mode")


def test_array_of_fractions_maps_every_element(planner: Planner) -> None:
    plan = planner.explain("SELECT percentile_disc(array[0.1, 0.5]) WITHIN GROUP (ORDER BY s) FROM t GROUP BY g")
    assert "percentile_disc_multi(" in plan


def test_direct_argument_may_use_a_grouping_column(planner: Planner) -> None:
    plan = planner.explain("SELECT percentile_cont(y) WITHIN GROUP (ORDER BY x) FROM t GROUP BY y")
    assert "Map (percentile_cont(#1, #0))" in plan  # the group key #0 is the fraction


def test_hypothetical_rank_counts_the_rows_sorting_before(planner: Planner) -> None:
    plan = planner.explain("SELECT rank(3) WITHIN GROUP (ORDER BY x), cume_dist(3) WITHIN GROUP (ORDER BY x DESC) FROM t")
    assert "count(case when ((#0 < 3) OR ((#0) IS NOT NULL AND (3) IS NULL)) then true else null end)" in plan
    assert "(#0 > 3) OR ((#0) IS NULL AND (3) IS NOT NULL)" in plan  # DESC: NULLS FIRST
    assert "count(*)" in plan


def test_dense_rank_counts_distinct_rows(planner: Planner) -> None:
    assert "count(distinct case when" in planner.explain("SELECT dense_rank(3, 'a') WITHIN GROUP (ORDER BY x, s) FROM t")


@pytest.mark.parametrize(("sql", "state", "message"), [
    # direct arguments are evaluated after aggregation
    ("SELECT rank(x) WITHIN GROUP (ORDER BY x) FROM t", "42803", "must appear in the GROUP BY clause"),
    ("SELECT rank(sum(x)) WITHIN GROUP (ORDER BY x) FROM t", "42803", "cannot be nested"),
    ("SELECT rank(3) WITHIN GROUP (ORDER BY s) FROM t", "42804", "WITHIN GROUP types text and integer cannot be matched"),
    ("SELECT rank('fred') WITHIN GROUP (ORDER BY x) FROM t", "22P02", "integer"),
    ("SELECT rank(1, 2) WITHIN GROUP (ORDER BY x) FROM t", "42883", "does not exist"),
    ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM t", "42883", "does not exist"),
    ("SELECT percentile_cont(0.5) FROM t", "42883", "does not exist"),
    ("SELECT sum(x) WITHIN GROUP (ORDER BY x) FROM t", "42883", "does not exist"),
    # the aggregated argument is of the outer query: a direct argument may not read the inner one
    ("SELECT (SELECT percentile_disc(a) WITHIN GROUP (ORDER BY t.x) FROM (VALUES (0.5)) v(a)) FROM t", "42803",
     "outer-level aggregate cannot contain a lower-level variable in its direct arguments"),
])
def test_binding_errors(planner: Planner, sql: str, state: str, message: str) -> None:
    e = planner.error(sql)
    assert e.sqlstate == state and message in e.message


# ---- subqueries inside aggregate arguments: applied to the input before the Reduce ----------

def test_subquery_in_an_aggregate_argument_is_applied_before_the_reduce(planner: Planner) -> None:
    plan = planner.explain("SELECT sum((SELECT 1)), max((SELECT i.x FROM t i WHERE i.g = o.x)) FROM t o")
    reduce_line = next(line for line in plan.splitlines() if "Reduce" in line)
    assert "sum(#4)" in reduce_line and "max(#5)" in reduce_line  # the two appended subquery columns
    assert "subqueries" not in plan


def test_subquery_in_filter_of_an_aggregate(planner: Planner) -> None:
    assert planner.names("SELECT sum(x) FILTER (WHERE x IN (SELECT g FROM t)) FROM t") == ("sum",)


def test_aggregate_of_the_outer_level_inside_an_ignored_order_by_is_nested(planner: Planner) -> None:
    # the ORDER BY of avg() changes nothing but is bound: it holds an aggregate of the level
    # whose aggregate argument it is in (Postgres: 42803)
    e = planner.error("SELECT avg((SELECT avg(a1.x ORDER BY (SELECT avg(a2.g) FROM t a3)) FROM t a1)) FROM t a2")
    assert e.sqlstate == "42803"
    assert planner.error("SELECT sum(x ORDER BY nope) FROM t").sqlstate == "42703"


def test_distinct_order_by_matches_the_arguments_as_written() -> None:
    p = Planner()
    try:
        p.ddl("CREATE TABLE vc (f1 varchar)")
        # the argument is coerced to text; the ORDER BY names it as written (Postgres accepts)
        assert p.names("SELECT string_agg(DISTINCT f1, ',' ORDER BY f1) FROM vc") == ("string_agg",)
        # f1::text is not an argument as written (Postgres: 42P10)
        assert p.error("SELECT string_agg(DISTINCT f1, ',' ORDER BY f1::text) FROM vc").sqlstate == "42P10"
    finally:
        p.close()


def test_order_by_inside_the_direct_arguments_is_a_syntax_error(planner: Planner) -> None:
    e = planner.error("SELECT percentile_cont(y ORDER BY y) WITHIN GROUP (ORDER BY x) FROM t GROUP BY y")
    assert e.sqlstate == "42601"


def test_aggregate_reading_only_outer_columns_through_a_subquery_is_refused(planner: Planner) -> None:
    # Postgres: max() belongs to the outer query o; not bound yet: 0A000, never per-row results
    e = planner.error("SELECT (SELECT max((SELECT i.x FROM t i WHERE i.g = o.x))) FROM t o")
    assert e.sqlstate == "0A000"
