"""Queries that read user relations together with catalog relations (DESIGN §2): the catalog
relation enters the Spark plan as a constant input."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def test_user_table_joined_with_catalog_relations(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("mixed")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (name text, n int)")
        conn.execute(f"INSERT INTO {t} VALUES ('{t}', 1), ('nope', 2)")
        rows = conn.execute(
            f"SELECT x.n, mt.name FROM {t} AS x JOIN mz_catalog.mz_tables AS mt ON mt.name = x.name"
        ).fetchall()
        assert rows == [(1, t)]
        # an unqualified pg_catalog relation, and a column of an array type (read as text)
        rows = conn.execute(
            f"SELECT c.relname, c.relkind, x.n FROM pg_class AS c JOIN {t} AS x ON c.relname = x.name"
        ).fetchall()
        assert rows == [(t, "r", 1)]
        # the plan really contains the catalog relation as a constant
        plan = conn.execute(
            f"EXPLAIN OPTIMIZED PLAN FOR SELECT count(*) FROM {t} AS x, mz_catalog.mz_tables AS mt WHERE mt.name = x.name"
        ).fetchone()[0]
        assert "Constant" in plan and f"materialize.public.{t}" in plan
