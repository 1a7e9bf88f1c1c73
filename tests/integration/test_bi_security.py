"""A client cannot read or write server files, load extensions or change DuckDB's
configuration through any statement (issue 5 point 4): every probe is refused with a
Postgres-style error, no file is created, and nothing of a server file leaks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

# statement -> acceptable SQLSTATEs
PROBES: list[tuple[str, set[str]]] = [
    ("SELECT * FROM read_csv('/etc/passwd')", {"42883", "42501", "0A000"}),
    ("SELECT * FROM read_csv_auto('/etc/passwd')", {"42883", "42501", "0A000"}),
    ("SELECT * FROM pg_catalog.pg_class, read_csv('/etc/passwd')", {"42883", "42501"}),
    ("SELECT * FROM pg_class c WHERE c.relname IN (SELECT column0 FROM read_csv('/etc/passwd'))", {"42883", "42501"}),
    ("SELECT read_text('/etc/passwd') FROM pg_catalog.pg_class", {"42883"}),
    ("SELECT * FROM read_text('/etc/passwd')", {"42883", "42501", "0A000"}),
    ("SELECT * FROM read_parquet('/etc/passwd')", {"42883", "42501", "0A000"}),
    ("SELECT * FROM glob('/etc/*')", {"42883", "42501", "0A000", "42601"}),
    ("SELECT * FROM '/etc/passwd'", {"42P01"}),
    ("SELECT * FROM pg_class, '/etc/passwd' AS f", {"42P01"}),
    ("SELECT getenv('HOME') FROM pg_catalog.pg_class", {"42883"}),
    ("SELECT * FROM duckdb_settings()", {"42883", "42501", "0A000"}),
    ("SELECT * FROM pg_catalog.pg_class, duckdb_tables()", {"42883", "42501"}),
    ("SELECT * FROM pg_catalog.pg_class, query('SELECT 1')", {"42883", "42501"}),
    ("SELECT current_setting('enable_external_access')", {"42704"}),
    ("SELECT current_setting('threads') FROM pg_catalog.pg_class", {"42704"}),
    ("SELECT * FROM mzsys.static.pg_authid", {"42P01", "3D000", "0A000"}),
    ("SELECT * FROM durable.items", {"42P01", "3F000"}),
    ("SELECT * FROM pg_catalog.durable", {"42P01"}),
    ("ATTACH '{tmp}/attached.db' AS x", {"42501"}),
    ("DETACH x", {"42501"}),
    ("INSTALL httpfs", {"42501"}),
    ("FORCE INSTALL httpfs", {"42501"}),
    ("LOAD httpfs", {"42501"}),
    ("LOAD '{tmp}/evil.so'", {"42501"}),
    ("EXPORT DATABASE '{tmp}/export'", {"42501"}),
    ("IMPORT DATABASE '{tmp}/export'", {"42501"}),
    ("PRAGMA database_list", {"0A000"}),
    ("CALL pragma_version()", {"0A000"}),
    ("CHECKPOINT", {"0A000"}),
    ("SET enable_external_access = true", {"42704"}),
    ("SET GLOBAL enable_external_access = true", {"42704", "42601"}),
    ("RESET enable_external_access", {"42704"}),
    ("SET lock_configuration = false", {"42704"}),
    ("COPY (SELECT * FROM pg_catalog.pg_class) TO '{tmp}/out.csv'", {"42501"}),
    ("COPY pg_catalog.pg_class TO '{tmp}/out.csv'", {"42501"}),
    ("COPY pg_catalog.pg_class FROM '/etc/passwd'", {"42501"}),
]


@pytest.mark.parametrize("sql, states", PROBES, ids=[p[0][:50] for p in PROBES])
def test_refused(mz_server: MzServer, tmp_path: Path, sql: str, states: set[str]) -> None:
    statement = sql.format(tmp=tmp_path)
    with mz_server.connect() as conn:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(statement).fetchall()
        assert info.value.sqlstate in states, (statement, info.value.sqlstate, str(info.value))
        assert "root:" not in str(info.value)
        # the session is still usable
        assert conn.execute("SELECT count(*) > 0 FROM pg_catalog.pg_namespace").fetchall() == [(True,)]
    assert list(tmp_path.iterdir()) == [], f"{statement} created files"


def test_catalog_functions_do_not_leak_duckdb(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """Session functions answer about the Postgres session, never about DuckDB."""
    with mz_server.connect() as conn:
        row = conn.execute("SELECT current_database(), current_schema(), current_setting('search_path'), "
                           "version() FROM pg_catalog.pg_database LIMIT 1").fetchone()
        assert row is not None
        assert row[:3] == ("materialize", "public", "public")
        assert "DuckDB" not in row[3] and "duckdb" not in row[3]
        names = {r[0] for r in conn.execute("SELECT name FROM pg_catalog.pg_settings").fetchall()}
        assert "enable_external_access" not in names and "threads" not in names
        assert "data_directory" not in names and "config_file" not in names
        schemas = {r[0] for r in conn.execute("SELECT nspname FROM pg_catalog.pg_namespace").fetchall()}
        # the system schemas are there and DuckDB's own (main, temp, system) are not; other
        # tests on this shared server may have created schemas of their own
        assert {"pg_catalog", "public", "mz_catalog", "mz_internal", "information_schema"} <= schemas
        assert not schemas & {"main", "temp", "system", "duckdb"}
