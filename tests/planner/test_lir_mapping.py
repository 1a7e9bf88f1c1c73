"""mz_lir_mapping rows equal the annotated lines of EXPLAIN PHYSICAL PLAN WITH (node_ids)."""

from __future__ import annotations

from compute.plan import lir
from compute.plan.explain import explain_dataflow
from compute.plan.lir_mapping import LirRow, lir_mapping, parents
from sql.types import SqlType

INT = SqlType("int4")


def get(nid: int, name: str, local: bool = False) -> lir.Plan:
    return lir.Plan(nid, lir.Get(name, f"materialize.public.{name}" if not local else name, (INT,),
                                 "PassArrangements", lir.Mfp(1, projection=(0,)), local))


def test_rows_follow_the_explained_tree() -> None:
    # With cte l0 = t; Return Union(Negate(Get l0), Get l0, Get s)
    plan = lir.Plan(5, lir.Let("l0", get(0, "t"), lir.Plan(4, lir.Union((
        lir.Plan(2, lir.Negate(get(1, "l0", local=True))), get(3, "l0", local=True), get(6, "s"))))))
    df = lir.Dataflow("materialize.public.i", plan, (INT,), False, sources=(("u1", "t"), ("u2", "s")))
    rows = lir_mapping(df)
    assert rows == (
        LirRow(5, "With", None, 0),
        LirRow(0, "Get::PassArrangements materialize.public.t", 5, 1),
        LirRow(4, "Union", 5, 1),
        LirRow(2, "Negate", 4, 2),
        LirRow(1, "Get::PassArrangements l0", 2, 3),
        LirRow(3, "Get::PassArrangements l0", 4, 2),
        LirRow(6, "Get::PassArrangements materialize.public.s", 4, 2),
    )
    text = explain_dataflow(df, node_ids=True)
    annotated = [ln.strip() for ln in text.splitlines() if "// { node_id:" in ln]
    assert annotated == [f"{r.operator} // {{ node_id: {r.lir_id} }}" for r in rows]
    assert parents(df) == {5: None, 0: 5, 4: 5, 2: 4, 1: 2, 3: 4, 6: 4}
