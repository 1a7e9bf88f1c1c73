"""EXPLAIN ... WITH (cardinality) (sql/transforms/cardinality.py): each MIR operator carries
its estimate, `// { cardinality: "N" }` as Materialize prints it, from the tables' record
counts in the catalog (no Spark): a filter keeps a tenth per predicate, a join on a unique key
of one side is bounded by the other side, a global aggregate is one row, a recursion unknown."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from sql.errors import SqlError
from tests.golden_runner import GoldenSession


@pytest.fixture(scope="module")
def gs() -> Iterator[GoldenSession]:
    s = GoldenSession()
    try:
        s.run("CREATE TABLE a (x int, y int)")
        s.run("INSERT INTO a VALUES " + ", ".join(f"({i}, {i % 4})" for i in range(200)))
        s.run("CREATE TABLE b (z int)")
        s.run("INSERT INTO b VALUES (1), (2), (3), (3), (NULL)")
        yield s
    finally:
        s.close()


def estimates(gs: GoldenSession, sql: str) -> list[tuple[str, str]]:
    """(operator, estimate) per plan line, top down."""
    text = "\n".join(r[0] for r in gs.run(f"EXPLAIN OPTIMIZED PLAN WITH (cardinality) FOR {sql}"))
    return [(m.group(1).strip().split(" ")[0], m.group(2)) for m in re.finditer(r"^(.*?) // \{ cardinality: \"([^\"]+)\" \}$", text, re.M)]


def test_reads_and_filters(gs: GoldenSession) -> None:
    assert estimates(gs, "SELECT * FROM a WHERE x > 5 AND y < 3") == [("Filter", "2"), ("ReadStorage", "200")]
    assert estimates(gs, "SELECT x FROM a UNION ALL SELECT z FROM b")[0] == ("Union", "205")


def test_joins(gs: GoldenSession) -> None:
    # no unique key on either side: the product (of the filtered inputs)
    plan = estimates(gs, "SELECT * FROM a JOIN b ON a.y = b.z")
    assert plan[0] == ("Join", "100"), plan
    # b's distinct values are unique on the join column: each row of a meets at most one
    plan = estimates(gs, "SELECT * FROM a, (SELECT DISTINCT z FROM b) d WHERE a.y = d.z")
    assert plan[0] == ("Join", "20"), plan


def test_aggregates_limits_and_recursion(gs: GoldenSession) -> None:
    plan = estimates(gs, "SELECT y, count(*) FROM a GROUP BY y")
    assert plan[0] == ("Reduce", "200"), plan
    assert ("Reduce", "1") in estimates(gs, "SELECT count(*) FROM a")
    plan = estimates(gs, "SELECT x FROM (SELECT x FROM a ORDER BY x LIMIT 7) t WHERE x > 0")
    assert ("TopK", "7") in plan, plan
    plan = estimates(gs, "WITH MUTUALLY RECURSIVE r (n int) AS (SELECT x FROM a UNION SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r")
    assert ("<UNKNOWN>" in {e for _, e in plan}), plan


def test_other_outputs_refuse_it(gs: GoldenSession) -> None:
    with pytest.raises(SqlError) as e:
        gs.run("EXPLAIN PHYSICAL PLAN WITH (cardinality) FOR SELECT * FROM a")
    assert e.value.sqlstate == "0A000"


def test_maintained_objects_too(gs: GoldenSession) -> None:
    text = "\n".join(r[0] for r in gs.run(
        "EXPLAIN OPTIMIZED PLAN WITH (cardinality) FOR CREATE MATERIALIZED VIEW mv AS SELECT y, count(*) FROM a WHERE x > 1 GROUP BY y"))
    assert 'ReadStorage materialize.public.a // { cardinality: "200" }' in text, text
    assert 'Filter (#0 > 1) // { cardinality: "20" }' in text, text
