"""Temporary tables and views (CREATE TEMP TABLE / VIEW): visible only to their session,
searched before search_path, dropped when the session ends (also on an abrupt disconnect).
The two-session script runs on mzspark and on PostgreSQL 15 and must give the same rows or
the same SQLSTATE at every step."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

pytestmark = pytest.mark.integration

# (session, statement): session 0 creates the temp objects, session 1 is another client.
SCRIPT = [
    (0, "CREATE TABLE {s}.t (a int)"),
    (0, "INSERT INTO {s}.t VALUES (1)"),
    (0, "CREATE TEMP TABLE t (a int, b text)"),
    (0, "INSERT INTO t VALUES (10, 'x'), (20, 'y'), (30, NULL)"),
    (0, "SELECT * FROM t"),  # the temp table shadows {s}.t
    (0, "SELECT * FROM {s}.t"),
    (0, "SELECT a FROM pg_temp.t"),
    (1, "SELECT * FROM t"),  # the other session sees {s}.t
    (1, "SELECT * FROM pg_temp.t"),  # 42P01: it has no temp table t
    (0, "UPDATE t SET b = 'z' WHERE a = 10"),
    (0, "DELETE FROM t WHERE a = 20"),
    (0, "SELECT * FROM t"),
    (0, "CREATE TEMPORARY TABLE u AS SELECT a * 2 AS d FROM t"),
    (0, "SELECT * FROM u"),
    (1, "SELECT * FROM u"),
    (0, "CREATE TEMP VIEW tv AS SELECT a + 1 AS e FROM t"),
    (0, "SELECT * FROM tv"),
    (1, "SELECT * FROM tv"),
    (0, "SET search_path = {s}, pg_temp"),  # pg_temp named on the path: searched there
    (0, "SELECT * FROM t"),
    (0, "SET search_path = {s}"),
    (0, "CREATE VIEW {s}.pv AS SELECT a FROM {s}.t"),
    (0, "SELECT * FROM pv"),  # a permanent view keeps reading {s}.t
    (0, "CREATE VIEW v2 AS SELECT b FROM t"),  # reads a temp table: becomes temporary
    (0, "SELECT * FROM v2"),
    (1, "SELECT * FROM v2"),
    (0, "CREATE TEMP TABLE {s}.q (a int)"),  # 42P16
    (0, "CREATE TEMP TABLE t (a int)"),  # 42P07
    (0, "CREATE TEMP TABLE w (a int) ON COMMIT PRESERVE ROWS"),
    (0, "SELECT * FROM w"),
    (0, "DROP VIEW v2"),
    (0, "DROP TABLE t"),  # drops the temp table (with its view tv: CASCADE needed)
    (0, "DROP VIEW tv"),
    (0, "DROP TABLE t"),
    (0, "SELECT * FROM t"),  # {s}.t again
    (0, "DROP TABLE t"),  # now {s}.t (a permanent view depends on it)
    (1, "CREATE TEMP TABLE t (c int)"),  # session 1's own temp t
    (1, "INSERT INTO t VALUES (7)"),
    (1, "SELECT * FROM t"),
    (0, "SELECT * FROM t"),
]


def _outcome(conn: psycopg.Connection, sql: str):
    try:
        cur = conn.execute(sql)
        if cur.description is None:
            return ("ok",)
        return ("rows", sorted(cur.fetchall(), key=repr))
    except psycopg.Error as e:
        return ("error", e.sqlstate)


def _run_script(conns: list[psycopg.Connection], schema: str) -> list:
    return [(who, sql, _outcome(conns[who], sql.replace("{s}", schema))) for who, sql in SCRIPT]


def _sessions(connect: Callable[[], psycopg.Connection], schema: str, create_schema: bool) -> list[psycopg.Connection]:
    conns = [connect(), connect()]
    if create_schema:
        conns[0].execute(f"CREATE SCHEMA {schema}")
    for c in conns:
        c.execute(f"SET search_path = {schema}")
    return conns


def test_two_sessions_match_postgres(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    schema = uniq("s")
    mz = _sessions(mz_server.connect, schema, True)
    try:
        got = _run_script(mz, schema)
    finally:
        for c in mz:
            c.close()
    with reference_postgres("pgref-temp-") as dsn:
        pg = _sessions(lambda: psycopg.connect(dsn, autocommit=True), schema, True)
        try:
            want = _run_script(pg, schema)
        finally:
            for c in pg:
                c.close()
    assert got == want
    # and the script exercised both outcomes
    assert any(o[0] == "error" for _, _, o in want) and any(o[0] == "rows" and o[1] for _, _, o in want)


def _temp_relations(conn: psycopg.Connection, name: str) -> int:
    return conn.execute("SELECT count(*) FROM pg_class WHERE relname = %s", (name,)).fetchone()[0]


def _wait_gone(conn: psycopg.Connection, name: str) -> int:
    n = -1
    for _ in range(100):
        n = _temp_relations(conn, name)
        if n == 0:
            break
        time.sleep(0.1)
    return n


@pytest.mark.parametrize("abrupt", [False, True])
def test_temp_items_end_with_session(mz_server: MzServer, uniq: Callable[[str], str], abrupt: bool) -> None:
    """Closing the connection (Terminate, or a dropped socket without one) drops the
    session's temporary tables, views and their storage."""
    name = uniq("tmp")
    observer = mz_server.connect()
    a = mz_server.connect()
    try:
        a.execute(f"CREATE TEMP TABLE {name} (a int)")
        a.execute(f"INSERT INTO {name} VALUES (1), (2)")
        a.execute(f"CREATE TEMP VIEW {name}_v AS SELECT sum(a) FROM {name}")
        assert a.execute(f"SELECT * FROM {name}_v").fetchall() == [(3,)]
        assert _temp_relations(observer, name) == 1
        with pytest.raises(psycopg.errors.UndefinedTable):
            observer.execute(f"SELECT * FROM {name}")
        if abrupt:
            sock = socket.socket(fileno=os.dup(a.pgconn.socket))
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
    finally:
        a.close()
    try:
        assert _wait_gone(observer, name) == 0
        assert _wait_gone(observer, f"{name}_v") == 0
        # the name is free for another session's temporary (or permanent) table
        observer.execute(f"CREATE TEMP TABLE {name} (b text)")
        observer.execute(f"INSERT INTO {name} VALUES ('x')")
        assert observer.execute(f"SELECT * FROM {name}").fetchall() == [("x",)]
    finally:
        observer.close()


def test_temp_refusals(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """What Materialize does not support is refused with 0A000, not half done."""
    name = uniq("tmp")
    with mz_server.connect() as c:
        for sql in (f"CREATE TEMP TABLE {name} (a int) ON COMMIT DROP",
                    f"CREATE TEMP TABLE {name} (a int) ON COMMIT DELETE ROWS",
                    f"CREATE TEMP MATERIALIZED VIEW {name} AS SELECT 1",
                    f"CREATE TEMP SEQUENCE {name}"):
            with pytest.raises(psycopg.errors.FeatureNotSupported):
                c.execute(sql)
        c.execute(f"CREATE TEMP TABLE {name} (a int)")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            c.execute(f"CREATE MATERIALIZED VIEW {name}_mv AS SELECT * FROM {name}")
        with pytest.raises(psycopg.Error) as e:
            c.execute("CREATE SCHEMA mz_temp")
        assert e.value.sqlstate == "42939"
