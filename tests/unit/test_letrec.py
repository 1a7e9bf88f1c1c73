"""WITH MUTUALLY RECURSIVE below the goldens: the text rewrite, MIR transforms in the
presence of LetRec, the LIR analyses, and the renderer's iteration driver `fixpoint` over
Python multisets (tests/goldens/letrec.golden pins the EXPLAIN output;
tests/integration/test_wmr.py runs it on Spark)."""

from __future__ import annotations

from collections import Counter

import pytest

from compute.plan import lir
from compute.plan.flags import PlanFlags
from compute.plan.lower import lower
from compute.plan.non_negative import non_negative
from compute.plan.pipeline import dataflow
from compute.plan.refinements.refine_single_time_consolidation import physically_monotonic
from compute.render.letrec import accumulation, fixpoint, non_negative_bindings
from sql import mir
from sql import statements as st
from sql.errors import SqlError
from sql.mir import RecursionLimit
from sql.optimize import optimize
from sql.scalar import CallBinary, Column, ColumnOrder, Literal
from sql.transforms.normalize_lets import normalize_lets
from sql.transforms.predicate_pushdown import predicate_pushdown
from sql.types import BOOL, INT4

T = (INT4,)
EDGES = mir.Get("u1", "materialize.public.t", T)


def rec_get(lid: str = "l0") -> mir.Get:
    return mir.Get(lid, lid, T, local=True)


def test_rewrite_keeps_offsets_of_nested_and_quoted_bindings() -> None:
    sql = ('WITH MUTUALLY RECURSIVE (RETURN AT RECURSION LIMIT 5) "Foo" (a int, b numeric(10, 2)) AS (SELECT 1, 2), '
           'bar (c timestamp with time zone) AS (SELECT * FROM (WITH MUTUALLY RECURSIVE z (q int8) AS (SELECT 1) '
           'SELECT * FROM z) s) SELECT 1')
    text, decls = st.rewrite_wmr(sql)
    assert "MUTUALLY" not in text and "numeric" not in text and "zone" not in text
    by_name = {d.name: (off, d) for off, d in decls.items()}
    assert set(by_name) == {"Foo", "bar", "z"}
    for name, (off, _) in by_name.items():
        quoted = f'"{name}"' if name == "Foo" else name
        assert text[off: off + len(quoted)] == quoted
    assert by_name["Foo"][1].limit == (5, True) and by_name["z"][1].limit is None
    assert by_name["Foo"][1].columns == ("a", "b")


def test_plain_with_recursive_is_not_marked() -> None:
    q = st.classify("WITH RECURSIVE x (a) AS (SELECT 1) SELECT * FROM x")
    assert isinstance(q, st.Query)
    assert all(st.WMR_META not in c.meta for c in q.ast.find_all(st.exp.CTE))


@pytest.mark.parametrize("sql, state", [
    ("SELECT 1 EXCEPT WITH MUTUALLY RECURSIVE x (a int) AS (SELECT 1) SELECT * FROM x", "42601"),
    ("WITH MUTUALLY RECURSIVE (RECURSION LIMIT -1) x (a int) AS (SELECT 1) SELECT * FROM x", "42601"),
    ("WITH MUTUALLY RECURSIVE (ERROR AT RECURSION LIMIT 1, RECURSION LIMIT 2) x (a int) AS (SELECT 1) SELECT 1", "22023"),
    ("WITH MUTUALLY RECURSIVE x (a int) SELECT 1", "42601"),
    ("WITH MUTUALLY RECURSIVE x (a nosuchtype) AS (SELECT 1) SELECT 1", "42704"),
])
def test_rewrite_errors(sql: str, state: str) -> None:
    with pytest.raises(SqlError) as e:
        st.classify(sql)
    assert e.value.sqlstate == state


def test_a_let_is_not_inlined_into_a_recursive_binding() -> None:
    """Let(l9, v, LetRec(l0 = v ∪ l0)) keeps the Let: the binding reads l9 once per iteration."""
    value = mir.Reduce(EDGES, (Column(0, INT4),), ())
    letrec = mir.LetRec(("l0",), (mir.Union((rec_get("l9"), rec_get())),), (T,), (None,), rec_get())
    r = mir.Let("l9", value, letrec)
    assert normalize_lets(r) == r


def test_a_let_read_once_by_the_letrec_body_is_inlined() -> None:
    value = mir.Reduce(EDGES, (Column(0, INT4),), ())
    letrec = mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), mir.Union((rec_get(), rec_get("l9"))))
    out = normalize_lets(mir.Let("l9", value, letrec))
    assert out == mir.LetRec(("l0",), letrec.values, (T,), (None,), mir.Union((rec_get(), value)))


def test_normalize_lets_keeps_a_letrec_even_when_nothing_recurses() -> None:
    r = mir.LetRec(("l0", "l1"), (EDGES, EDGES), (T, T), (None, None), rec_get())
    assert optimize(r) == r


def test_a_filter_over_a_letrec_reaches_only_its_body() -> None:
    cond = CallBinary("eq", Column(0, INT4), Literal(1, INT4), BOOL)
    letrec = mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), rec_get())
    out = predicate_pushdown(mir.Filter(letrec, (cond,)))
    assert isinstance(out, mir.LetRec)
    assert out.values == letrec.values
    assert out.body == mir.Filter(rec_get(), (cond,))


def _topk_letrec() -> mir.Mir:
    """LetRec(l0 = TopK(t ∪ l0)) with a TopK(l0) consumer."""
    inner = mir.TopK(mir.Union((EDGES, rec_get())), (), (ColumnOrder(0, False, True),), 3, 0)
    return mir.LetRec(("l0",), (inner,), (T,), (None,), mir.TopK(rec_get(), (), (ColumnOrder(0, False, True),), 2, 0))


def test_lir_ids_are_post_order_values_then_body() -> None:
    plan = lower(_topk_letrec())
    assert isinstance(plan.node, lir.LetRec)
    (value,) = plan.node.values
    assert value.node_id == 3 and plan.node.body.node_id == 5 and plan.node_id == 6


def test_one_shot_refinements_leave_recursion_alone() -> None:
    df = dataflow(_topk_letrec(), None, flags=PlanFlags())
    node = df.plan.node
    assert isinstance(node, lir.LetRec)
    assert isinstance(node.values[0].node, lir.TopK) and isinstance(node.values[0].node.plan, lir.TopKBasic)
    assert isinstance(node.body.node, lir.TopK) and node.body.node.plan == lir.TopKMonotonicTopK(must_consolidate=True)


def test_physical_monotonicity_around_recursion() -> None:
    plan = lower(_topk_letrec())
    assert physically_monotonic(plan, {}, frozenset())  # its body is a TopK
    reads = lower(mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), rec_get()))
    assert not physically_monotonic(reads, {}, frozenset())  # its body reads the binding
    value = plan.node.values[0]  # type: ignore[union-attr]
    assert physically_monotonic(value, {"l0": True}, frozenset())
    assert not physically_monotonic(value, {"l0": True}, frozenset(), in_recursion=True)
    assert not non_negative(reads)


class Bindings:
    """A fake of the renderer's step: bindings are Python multisets computed by functions of
    the current values (in `vals`), as `_letrec` evaluates Spark queries."""

    def __init__(self, *fns) -> None:
        self.fns = fns
        self.vals: list[Counter] = [Counter() for _ in fns]
        self.calls: list[int] = []

    def step(self, k: int) -> bool:
        self.calls.append(k)
        new = +self.fns[k](self.vals)  # consolidated: zero counts dropped
        new.update({r: d for r, d in self.fns[k](self.vals).items() if d < 0})  # negatives kept
        changed = new != self.vals[k]
        self.vals[k] = new
        return changed


def counter(bound: int | None, me: int = 0):
    """cnt = {1} ∪ {i + 1 | i ∈ cnt, i < bound} (cnt is binding `me`)."""
    return lambda v: Counter({1} | {i + 1 for i in v[me] if bound is None or i < bound})


def test_fixpoint_evaluates_bindings_in_order_reading_the_latest_values() -> None:
    def a(v):
        return Counter({1} | {n + 1 for n in v[1] if n < 5})

    def b(v):
        return Counter(set(v[0]) | set(v[1]))

    one = Bindings(a, b)
    assert fixpoint((RecursionLimit(1, True),) * 2, (frozenset({1}), frozenset({0, 1})), one.step) == 1
    assert one.vals == [Counter({1}), Counter({1})]  # b saw a's value of this iteration
    full = Bindings(a, b)
    fixpoint((None, None), (frozenset({1}), frozenset({0, 1})), full.step)
    assert full.vals == [Counter(range(1, 6)), Counter(range(1, 6))]


def test_error_at_recursion_limit_counts_the_evaluation_that_changes_nothing() -> None:
    ok = Bindings(counter(3))
    assert fixpoint((RecursionLimit(4),), (frozenset({0}),), ok.step) == 4
    assert ok.vals == [Counter({1, 2, 3})]
    with pytest.raises(SqlError) as e:
        fixpoint((RecursionLimit(3),), (frozenset({0}),), Bindings(counter(3)).step)
    assert e.value.sqlstate == "XX000"
    assert e.value.message.startswith("Evaluation error: Recursive query exceeded the recursion limit 3.")


def test_return_at_recursion_limit_keeps_the_values_of_n_iterations() -> None:
    b = Bindings(counter(None))
    assert fixpoint((RecursionLimit(5, True),), (frozenset({0}),), b.step) == 5
    assert b.vals == [Counter(range(1, 6))] and b.calls == [0] * 5


def test_a_binding_whose_inputs_did_not_change_is_not_reevaluated() -> None:
    b = Bindings(lambda v: Counter({7}), counter(3, me=1))
    fixpoint((None, None), (frozenset(), frozenset({1})), b.step)
    assert b.calls.count(0) == 1 and b.calls.count(1) == 4


def test_negative_multiplicities_are_values_like_any_other() -> None:
    b = Bindings(lambda v: Counter({"x": -1}), lambda v: Counter({r: 2 * d for r, d in v[0].items()}))
    fixpoint((None, None), (frozenset(), frozenset({0})), b.step)
    assert b.vals == [Counter({"x": -1}), Counter({"x": -2})]


def test_without_a_limit_a_divergent_block_fails_at_the_safety_limit() -> None:
    with pytest.raises(SqlError) as e:
        fixpoint((None,), (frozenset({0}),), Bindings(counter(None)).step, max_iterations=20)
    assert e.value.sqlstate == "54000" and "20 iterations" in e.value.message


def test_an_interrupt_stops_the_iteration_between_evaluations() -> None:
    b = Bindings(counter(None))

    def check() -> None:
        if len(b.calls) == 3:
            raise SqlError("57014", "canceling statement due to statement timeout")

    with pytest.raises(SqlError) as e:
        fixpoint((None,), (frozenset({0}),), b.step, check)
    assert e.value.sqlstate == "57014" and len(b.calls) == 3


def test_enough_ends_the_iteration_after_the_iteration_it_holds_in() -> None:
    b = Bindings(counter(None))
    assert fixpoint((None,), (frozenset({0}),), b.step, enough=lambda: len(b.vals[0]) >= 4) == 4
    assert b.vals == [Counter(range(1, 5))]


def _lget(lid: str, mfp: lir.Mfp | None = None) -> lir.Plan:
    return lir.Plan(0, lir.Get(lid, lid, T, "PassArrangements", mfp or lir.Mfp(1), local=True))


def test_accumulation_is_a_union_reading_the_binding_itself_once_as_it_is() -> None:
    w, acc = _lget("w"), _lget("acc")
    assert accumulation("acc", lir.Plan(1, lir.Union((w, acc)))) == (w,)
    assert accumulation("acc", lir.Plan(1, lir.Union((acc, w, w)))) == (w, w)
    filtered = _lget("acc", lir.Mfp(1, (), (Literal(True, BOOL),)))
    assert accumulation("acc", lir.Plan(1, lir.Union((w, filtered)))) is None  # not as it is
    assert accumulation("acc", lir.Plan(1, lir.Union((acc, acc)))) is None  # read twice
    assert accumulation("acc", lir.Plan(1, lir.Union((lir.Plan(2, lir.Negate(acc)), acc)))) is None
    assert accumulation("acc", w) is None


def test_non_negative_bindings_is_the_greatest_solution() -> None:
    w, acc = _lget("w"), _lget("acc")
    # w = w (never negative: it starts empty), acc = w + acc; neg = -w
    values = (w, lir.Plan(1, lir.Union((w, acc))), lir.Plan(2, lir.Negate(w)))
    assert non_negative_bindings(("w", "acc", "neg"), values) == {"w": True, "acc": True, "neg": False}
    # x = acc2 + x, acc2 = -x: neither
    x, acc2 = _lget("x"), _lget("acc2")
    values = (lir.Plan(1, lir.Union((acc2, x))), lir.Plan(2, lir.Negate(x)))
    assert non_negative_bindings(("x", "acc2"), values) == {"x": False, "acc2": False}
