"""The coordinator's plan cache (server/plan_cache.py): a statement prepared again reuses its
plan only while everything the plan was bound from is unchanged: DDL (DROP / CREATE of the
same name, ALTER ... RENAME, a new column), the session's search path, database and user, a
temporary item shadowing a name; plans reading session functions or catalog relations are
never cached. No Spark: preparing binds only."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest

from server.coordinator import Coordinator
from server.session import Session


@pytest.fixture
def coord() -> Iterator[Coordinator]:
    with tempfile.TemporaryDirectory() as d:
        c = Coordinator(d)
        try:
            yield c
        finally:
            c.close()


def _run(c: Coordinator, s: Session, sql: str) -> None:
    c.execute(s, c.prepare(s, sql, []), [])


def _hits(c: Coordinator, s: Session, sql: str, params: list | None = None) -> int:
    before = c.plans.hits
    c.prepare(s, sql, params or [])
    return c.plans.hits - before


def test_same_text_reuses_the_plan_across_sessions(coord: Coordinator) -> None:
    a = coord.new_session("materialize", "materialize", {})
    b = coord.new_session("materialize", "materialize", {})
    _run(coord, a, "CREATE TABLE t (k int, v text)")
    assert _hits(coord, a, "SELECT * FROM t WHERE k = $1", [None]) == 0
    assert _hits(coord, a, "SELECT * FROM t WHERE k = $1", [None]) == 1
    assert _hits(coord, b, "SELECT * FROM t WHERE k = $1", [None]) == 1
    assert _hits(coord, b, "INSERT INTO t VALUES ($1, $2)", [None, None]) == 0
    assert _hits(coord, a, "INSERT INTO t VALUES ($1, $2)", [None, None]) == 1
    # other parameter types: another plan
    from sql.types import INT8

    assert _hits(coord, a, "SELECT * FROM t WHERE k = $1", [INT8]) == 0


def test_ddl_invalidates(coord: Coordinator) -> None:
    s = coord.new_session("materialize", "materialize", {})
    _run(coord, s, "CREATE TABLE t (k int, v text)")
    q = "SELECT * FROM t"
    first = coord.prepare(s, q, [])
    assert [c.name for c in first.columns] == ["k", "v"]
    _run(coord, s, "DROP TABLE t")
    _run(coord, s, "CREATE TABLE t (a bigint, b bigint, c text)")
    again = coord.prepare(s, q, [])
    assert [c.name for c in again.columns] == ["a", "b", "c"]
    # ALTER ... RENAME: the name now means another table
    _run(coord, s, "ALTER TABLE t RENAME TO t_old")
    _run(coord, s, "CREATE TABLE t (z int)")
    assert [c.name for c in coord.prepare(s, q, []).columns] == ["z"]
    ins = "INSERT INTO t VALUES ($1)"
    item = coord.prepare(s, ins, [None]).plan.extra[0]
    _run(coord, s, "DROP TABLE t")
    _run(coord, s, "CREATE TABLE t (z int)")
    assert coord.prepare(s, ins, [None]).plan.extra[0].id != item.id


def test_search_path_and_temporary_items(coord: Coordinator) -> None:
    a = coord.new_session("materialize", "materialize", {})
    b = coord.new_session("materialize", "materialize", {})
    _run(coord, a, "CREATE SCHEMA s2")
    _run(coord, a, "CREATE TABLE t (k int)")
    _run(coord, a, "CREATE TABLE s2.t (other text, cols text)")
    q = "SELECT * FROM t"
    assert len(coord.prepare(a, q, []).columns) == 1
    _run(coord, a, "SET search_path = s2, public")
    assert len(coord.prepare(a, q, []).columns) == 2
    _run(coord, a, "SET search_path = public")
    assert len(coord.prepare(a, q, []).columns) == 1
    # b's temporary t shadows public.t for b only, though a's plan of the same text is cached
    _run(coord, b, "CREATE TEMPORARY TABLE t (x int, y int, z int)")
    assert len(coord.prepare(a, q, []).columns) == 1
    assert _hits(coord, a, q) == 1
    assert len(coord.prepare(b, q, []).columns) == 3
    assert _hits(coord, b, q) == 0


def test_plans_reading_session_state_are_not_cached(coord: Coordinator) -> None:
    s = coord.new_session("materialize", "materialize", {})
    _run(coord, s, "CREATE TABLE t (k int)")
    for q in ("SELECT current_user, k FROM t", "SELECT k FROM t WHERE current_schema() = 'public'",
              "SELECT count(*) FROM t, mz_catalog.mz_tables"):
        coord.prepare(s, q, [])
        assert _hits(coord, s, q) == 0, q
