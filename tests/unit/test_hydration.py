"""compute.hydration: statuses per node per worker from observed result tasks (pure)."""

from __future__ import annotations

import threading
import time

from compute.hydration import Tracker, parse_tag, tag_of


class Sink:
    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[int, int, bool]]] = {}
        self.changed = threading.Event()

    def __call__(self, oid: str, rows) -> None:
        self.rows[oid] = list(rows)
        self.changed.set()


def wait_rows(sink: Sink, oid: str, want) -> None:
    deadline = time.monotonic() + 5
    while sink.rows.get(oid) != want:
        assert time.monotonic() < deadline, (sink.rows.get(oid), want)
        time.sleep(0.01)


# plan: 2 Reduce <- 1 Mfp <- 0 Get
PARENTS = {0: 1, 1: 2, 2: None}


def test_tags_round_trip() -> None:
    assert parse_tag(tag_of("u12", 3, 7)) == ("u12", 3, 7)
    assert parse_tag("other") is None


def test_bound_nodes_flip_per_worker_and_fused_nodes_inherit() -> None:
    sink = Sink()
    t = Tracker(sink)
    obs = t.install("u1", PARENTS, 2)
    assert obs is not None
    wait_rows(sink, "u1", [(n, w, False) for n in range(3) for w in range(2)])
    t1 = obs.tag(1)  # the Reduce's input arrangement = the Mfp's output
    assert t1 is not None and obs.tag(1) is None  # bound once
    t.task_succeeded(t1, 1, 2, 0)
    # worker 1 of the Mfp, and of the Get fused below it; the Reduce is not bound yet and
    # its ancestors are none: false
    wait_rows(sink, "u1", [(0, 0, False), (0, 1, True), (1, 0, False), (1, 1, True), (2, 0, False), (2, 1, False)])
    t.task_succeeded(t1, 0, 2, 0)
    t2 = obs.tag(2)
    assert t2 is not None
    t.task_succeeded(t2, 0, 2, 0)
    wait_rows(sink, "u1", [(0, 0, True), (0, 1, True), (1, 0, True), (1, 1, True), (2, 0, True), (2, 1, False)])
    t.task_succeeded(t2, 1, 2, 0)
    wait_rows(sink, "u1", [(n, w, True) for n in range(3) for w in range(2)])
    t.close()


def test_fewer_partitions_than_workers_needs_the_stage_and_old_generations_are_ignored() -> None:
    sink = Sink()
    t = Tracker(sink)
    obs = t.install("u1", {0: None}, 2)
    assert obs is not None
    tag = obs.tag(0)
    assert tag is not None
    t.task_succeeded(tag, 0, 1, 0)
    wait_rows(sink, "u1", [(0, 0, True), (0, 1, False)])
    t.stage_completed(tag, 1)
    wait_rows(sink, "u1", [(0, 0, True), (0, 1, True)])
    obs2 = t.install("u1", {0: None}, 2)  # a re-hydration: all false again
    wait_rows(sink, "u1", [(0, 0, False), (0, 1, False)])
    t.task_succeeded(tag, 1, 2, 0)  # an event of the old hydration
    t.stage_completed(tag, 2)
    time.sleep(0.05)
    assert sink.rows["u1"] == [(0, 0, False), (0, 1, False)]
    assert obs2 is not None
    t.drop("u1")
    assert t.statuses("u1") == []
    t.close()


def test_reporting_off_writes_no_rows() -> None:
    sink = Sink()
    t = Tracker(sink, enabled=lambda: False)
    assert t.install("u1", PARENTS, 2) is None
    wait_rows(sink, "u1", [])
    t.close()


def test_explain_analyze_statement() -> None:
    import pytest

    from sql import statements as st
    from sql.errors import SqlError

    e = st.classify("EXPLAIN ANALYZE MEMORY, CPU WITH SKEW FOR INDEX s.i")
    assert e == st.ExplainAnalyzeObject(("memory", "cpu"), True, "index", ("s", "i"), False)
    e = st.classify("explain analyze cpu for materialized view mv as sql")
    assert e == st.ExplainAnalyzeObject(("cpu",), False, "materialized view", ("mv",), True)
    for bad in ("EXPLAIN ANALYZE HINTS FOR INDEX i", "EXPLAIN ANALYZE CLUSTER MEMORY"):
        with pytest.raises(SqlError) as err:
            st.classify(bad)
        assert err.value.sqlstate == "0A000"
