"""ALTER ... RENAME TO and COMMENT ON (issue 13): renamed items keep working, maintained
objects keep stepping, dependents' definitions follow the new name across a restart, and
comments reach pg_description / mz_internal.mz_comments / psql's \\d+ columns."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def _state(conn: psycopg.Connection, sql: str) -> str | None:
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e.sqlstate
    return None


def test_rename_and_comment_survive_restart(mz_server_factory: Callable[[], MzServer]) -> None:
    srv = mz_server_factory()
    with srv.connect(autocommit=True) as c:
        c.execute("CREATE TABLE t (a int, b text)")
        c.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
        c.execute("CREATE VIEW v AS SELECT t.a, b AS t FROM t WHERE a > 0")
        c.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM v")
        c.execute("CREATE INDEX vi ON v (a)")
        for sql in ("ALTER TABLE t RENAME TO t2", "ALTER VIEW v RENAME TO v2", "ALTER INDEX vi RENAME TO vi2",
                    'ALTER MATERIALIZED VIEW m RENAME TO "M m"'):
            c.execute(sql)
        assert _state(c, "SELECT * FROM t") == "42P01"
        c.execute("INSERT INTO t2 VALUES (3, 'z')")
        assert c.execute('SELECT n FROM "M m"').fetchall() == [(3,)]  # the MV still steps
        assert c.execute("SELECT a, t FROM v2 ORDER BY a").fetchall() == [(1, "x"), (2, "y"), (3, "z")]
        assert c.execute("SELECT name FROM mz_indexes WHERE on_id = (SELECT id FROM mz_views WHERE name = 'v2')").fetchall() == [("vi2",)]
        # wrong kind, unknown, taken name, ambiguous dependent: errors, nothing renamed
        assert _state(c, "ALTER VIEW t2 RENAME TO x") == "42809"
        assert _state(c, "ALTER TABLE nope RENAME TO x") == "42P01"
        c.execute("ALTER TABLE IF EXISTS nope RENAME TO x")
        assert _state(c, 'ALTER TABLE t2 RENAME TO "M m"') == "42P07"
        c.execute("CREATE VIEW amb AS SELECT x.a FROM t2 AS x JOIN (SELECT 1 AS a) AS t3 USING (a)")
        assert _state(c, "ALTER TABLE t2 RENAME TO t3") == "0A000"
        c.execute("DROP VIEW amb")
        c.execute("COMMENT ON TABLE t2 IS 'the table'")
        c.execute("COMMENT ON COLUMN t2.b IS 'a letter'")
        c.execute("COMMENT ON MATERIALIZED VIEW \"M m\" IS 'counted'")
        c.execute("COMMENT ON MATERIALIZED VIEW \"M m\" IS NULL")
        assert _state(c, "COMMENT ON COLUMN t2.nope IS 'x'") == "42703"
        assert _state(c, "COMMENT ON VIEW t2 IS 'x'") == "42809"
    srv.restart()
    with srv.connect(autocommit=True) as c:
        assert c.execute("SELECT a, t FROM v2 ORDER BY a").fetchall() == [(1, "x"), (2, "y"), (3, "z")]
        c.execute("INSERT INTO t2 VALUES (4, 'w')")
        assert c.execute('SELECT n FROM "M m"').fetchall() == [(4,)]
        assert c.execute("SELECT obj_description('t2'::regclass), col_description('t2'::regclass, 2), "
                         "col_description('t2'::regclass, 1)").fetchall() == [("the table", "a letter", None)]
        assert c.execute("SELECT object_type, object_sub_id, comment FROM mz_internal.mz_comments ORDER BY 2 NULLS FIRST").fetchall() == [
            ("table", None, "the table"), ("table", 2, "a letter")]
        c.execute("DROP TABLE t2 CASCADE")
        assert c.execute("SELECT count(*) FROM mz_internal.mz_comments").fetchall() == [(0,)]
        assert c.execute("SELECT mz_environment_id() LIKE 'local-mzspark-%', mz_version() = current_setting('mz_version')").fetchall() == [(True, True)]
