"""The utility statements tools send (issue 5 point 3): transaction characteristics,
DISCARD / CLOSE / UNLISTEN / RESET, pg_advisory_unlock_all(), cursors (DECLARE, FETCH,
MOVE, CLOSE, WITH HOLD; psycopg2's named cursors), savepoints and
BEGIN READ ONLY."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import psycopg2
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def sqlstate(conn: psycopg.Connection, sql: str) -> str | None:
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e.sqlstate
    return None


def test_transaction_characteristics(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        assert conn.execute("SHOW TRANSACTION ISOLATION LEVEL").fetchall() == [("strict serializable",)]
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        assert conn.execute("SHOW transaction_isolation").fetchall() == [("serializable",)]
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE")
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        assert sqlstate(conn, "SET SESSION CHARACTERISTICS AS TRANSACTION BANANAS") == "42601"
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        conn.execute("SET TRANSACTION READ ONLY")  # outside a transaction: a warning, like Postgres
        assert any("transaction blocks" in n for n in notices)
        for sql in ("SET extra_float_digits = 3", "SET application_name = 'bi-tool'", "SET client_min_messages TO warning",
                    "SET TIME ZONE 'UTC'", "SET timezone = 'UTC'"):
            conn.execute(sql)
        assert conn.execute("SHOW application_name").fetchall() == [("bi-tool",)]
        # a setting a client may SET is kept and shown (was: SET refused, SHOW a static 'on')
        conn.execute("SET escape_string_warning = off")
        assert conn.execute("SHOW escape_string_warning").fetchall() == [("off",)]
        assert conn.execute("SELECT current_setting('escape_string_warning')").fetchall() == [("off",)]
        assert sqlstate(conn, "SET escape_string_warning = maybe") == "22023"


def test_begin_read_only(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        conn.execute("BEGIN READ ONLY")
        assert conn.execute("SELECT count(*) > 0 FROM pg_catalog.pg_class").fetchall() == [(True,)]
        conn.execute("COMMIT")
        conn.execute("START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY")
        conn.execute("SET TRANSACTION READ ONLY")
        conn.execute("COMMIT")


def test_reset_statements(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        cur = conn.execute("SELECT pg_advisory_unlock_all()")
        assert cur.description is not None and cur.description[0].type_code == 2278  # void
        assert cur.fetchall() == [("",)]
        conn.execute("SET application_name = 'x'")
        for sql, tag in (("CLOSE ALL", "CLOSE CURSOR ALL"), ("UNLISTEN *", "UNLISTEN"), ("RESET ALL", "RESET")):
            assert conn.execute(sql).statusmessage == tag
        assert conn.execute("SHOW application_name").fetchall() == [("",)]
        conn.execute("SET application_name = 'y'")
        assert conn.execute("DISCARD ALL").statusmessage == "DISCARD ALL"
        assert conn.execute("SHOW application_name").fetchall() == [("",)]
        conn.execute("BEGIN")
        assert sqlstate(conn, "DISCARD ALL") == "25001"
        conn.execute("ROLLBACK")


def test_cursors(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (n int)")
        conn.execute(f"INSERT INTO {t} VALUES (1), (2), (3), (4), (5)")
        assert sqlstate(conn, f"DECLARE c CURSOR FOR SELECT n FROM {t}") == "25P01"  # needs a transaction
        conn.execute("BEGIN")
        assert conn.execute(f"DECLARE c CURSOR FOR SELECT n FROM {t} ORDER BY n").statusmessage == "DECLARE CURSOR"
        cur = conn.execute("FETCH 2 FROM c")
        assert cur.fetchall() == [(1,), (2,)] and cur.statusmessage == "FETCH 2"
        assert conn.execute("FETCH NEXT c").fetchall() == [(3,)]
        assert conn.execute("MOVE 1 IN c").statusmessage == "MOVE 1"
        assert conn.execute("FETCH FORWARD ALL FROM c").fetchall() == [(5,)]
        assert conn.execute("FETCH c").fetchall() == []
        assert conn.execute("CLOSE c").statusmessage == "CLOSE CURSOR"
        conn.execute("DECLARE c2 CURSOR FOR SELECT relname FROM pg_catalog.pg_class ORDER BY relname")
        assert len(conn.execute("FETCH 10 IN c2").fetchall()) == 10
        assert sqlstate(conn, "DECLARE c2 CURSOR FOR SELECT 1") == "42P03"
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        conn.execute("DECLARE c3 CURSOR FOR SELECT oid FROM pg_catalog.pg_namespace")
        conn.execute("COMMIT")
        assert sqlstate(conn, "FETCH 1 FROM c3") == "34000"  # closed at the end of its transaction
        conn.execute(f"DECLARE h CURSOR WITH HOLD FOR SELECT n FROM {t} ORDER BY n")
        assert conn.execute("FETCH 4 FROM h").fetchall() == [(1,), (2,), (3,), (4,)]
        assert sqlstate(conn, "FETCH BACKWARD 1 FROM h") == "0A000"
        assert sqlstate(conn, "CLOSE nosuchcursor") == "34000"
        conn.execute("CLOSE ALL")
        assert sqlstate(conn, "FETCH 1 FROM h") == "34000"


def test_psycopg2_named_cursor(mz_server: MzServer) -> None:
    with psycopg2.connect(mz_server.dsn) as conn:  # DECLARE ... then FETCH FORWARD n FROM ...
        with conn.cursor(name="named_cur") as cur:
            cur.itersize = 50
            cur.execute("SELECT attrelid, attname FROM pg_catalog.pg_attribute ORDER BY attrelid, attnum")
            rows = list(cur)
        with conn.cursor() as plain:
            plain.execute("SELECT count(*) FROM pg_catalog.pg_attribute")
            assert len(rows) == plain.fetchone()[0] > 100
    conn.close()


def test_savepoints(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (n int)")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        assert conn.execute("SAVEPOINT s1").statusmessage == "SAVEPOINT"
        conn.execute(f"INSERT INTO {t} VALUES (2)")
        assert conn.execute("ROLLBACK TO SAVEPOINT s1").statusmessage == "ROLLBACK"
        conn.execute("SAVEPOINT s2")
        assert sqlstate(conn, "SELECT * FROM pg_catalog.no_such_relation") == "42P01"
        assert sqlstate(conn, "SELECT 1 FROM pg_catalog.pg_class LIMIT 1") == "25P02"  # aborted
        conn.execute("ROLLBACK TO s2")  # ... until rolled back to the savepoint
        conn.execute(f"INSERT INTO {t} VALUES (3)")
        assert conn.execute("RELEASE SAVEPOINT s2").statusmessage == "RELEASE"
        assert sqlstate(conn, "RELEASE s2") == "3B001"
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {t} VALUES (2)")
        conn.execute("ROLLBACK TO a")
        conn.execute(f"INSERT INTO {t} VALUES (3)")
        conn.execute("COMMIT")
        assert sorted(conn.execute(f"SELECT n FROM {t}").fetchall()) == [(1,), (3,)]
        assert sqlstate(conn, "SAVEPOINT outside") == "25P01"
