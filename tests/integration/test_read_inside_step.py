"""Strict serializable reads of a materialized view when writes arrive faster than its steps
(compute.controller._upper): a step stamps all its updates with its upper, so a step
spanning a time a reader waits for would show that reader the view without the writes at or
before its timestamp. The controller is held (its work lock) while the writes and the read
timestamp interleave, then the reader must see exactly the writes before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.api import RowsResult
from server.coordinator import Coordinator

pytestmark = pytest.mark.integration


def run(c: Coordinator, s: Any, sql: str) -> list[tuple]:
    r = c.execute(s, c.prepare(s, sql, []), [])
    return [row for batch in r.batches for row in batch] if isinstance(r, RowsResult) else []


def test_a_read_inside_a_step_span_sees_exactly_the_writes_before_it(tmp_path: Path) -> None:
    c = Coordinator(str(tmp_path / "data"))
    c.start_controller()
    try:
        w = c.new_session("materialize", "materialize", {})
        r = c.new_session("materialize", "materialize", {})
        run(c, w, "CREATE TABLE t (a int)")
        run(c, w, "CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n, sum(a) AS s FROM t")
        run(c, w, "INSERT INTO t VALUES (1)")
        assert run(c, w, "SELECT n, s FROM m") == [(1, 1)]
        for k in range(2):  # twice: the second time the view is already caught up before
            with c.controller._work:  # no step can run meanwhile
                run(c, w, "INSERT INTO t VALUES (10)")
                run(c, r, "BEGIN")
                before = run(c, r, "SELECT count(*), sum(a) FROM t")  # fixes the reader's timestamp
                run(c, w, "INSERT INTO t VALUES (100)")  # a write after it, before any step
            assert run(c, r, "SELECT n, s FROM m") == before, k
            run(c, r, "COMMIT")
            assert run(c, w, "SELECT n, s FROM m") == run(c, w, "SELECT count(*), sum(a) FROM t")
    finally:
        c.close()
