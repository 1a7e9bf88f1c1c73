"""asyncpg and node-postgres against mzspark: connect, parameterised queries (catalog and
not), asyncpg's type introspection of a Materialize type (uint8), and connection pools
whose reset statements (`SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`)
succeed and really reset the session."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

NODE_DIR = Path(__file__).resolve().parent / "node"


def test_asyncpg(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")

    async def main() -> None:
        conn = await asyncpg.connect(host=mz_server.host, port=mz_server.port, user="materialize",
                                     database="materialize", timeout=30)
        try:
            await conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, name text)")
            rows = await conn.fetch(
                "SELECT c.relname, c.relkind, a.attname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
                "WHERE c.relname = $1 AND a.attnum > $2 ORDER BY a.attnum", t, 0)
            assert [tuple(r) for r in rows] == [(t, b"r", "id"), (t, b"r", "name")]  # "char" is bytes in asyncpg
            assert await conn.fetchval("SELECT $1::int * 2", 21) == 42
            assert await conn.fetchval("SELECT current_schema()") == "public"
            # uint8 is not one of Postgres' types: asyncpg introspects it through pg_type
            stmt = await conn.prepare("SELECT object_id, plan_node_id, hydrated FROM mz_internal.mz_compute_operator_hydration_statuses")
            types = [(a.name, a.type.name, a.type.schema) for a in stmt.get_attributes()]
            assert types == [("object_id", "text", "pg_catalog"), ("plan_node_id", "uint8", "mz_catalog"),
                             ("hydrated", "bool", "pg_catalog")]
            await stmt.fetch()
            # rows with uint8 values: asyncpg has no binary codec for it and reads its text form
            positions = await conn.fetch("SELECT name, position FROM mz_catalog.mz_columns WHERE id = "
                                         "(SELECT id FROM mz_catalog.mz_tables WHERE name = $1) ORDER BY position", t)
            assert [tuple(r) for r in positions] == [("id", "1"), ("name", "2")]
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(host=mz_server.host, port=mz_server.port, user="materialize",
                                         database="materialize", min_size=1, max_size=1, timeout=30)
        try:
            async with pool.acquire() as c:
                await c.execute("SET application_name = 'changed-in-pool'")
                async with c.transaction():
                    await c.execute("DECLARE pool_cursor CURSOR WITH HOLD FOR SELECT oid FROM pg_catalog.pg_type")
                assert await c.fetchval("SHOW application_name") == "changed-in-pool"
            # release ran the reset query; the same (only) connection is back to its defaults
            async with pool.acquire() as c:
                assert await c.fetchval("SHOW application_name") == ""
                with pytest.raises(asyncpg.InvalidCursorNameError):
                    await c.execute("FETCH 1 FROM pool_cursor")
                assert await c.fetchval("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = $1", "public") == 1
        finally:
            await pool.close()

    asyncio.run(main())


def _node_modules() -> Path:
    """node-postgres installed (once per package.json) in a cache directory with npm."""
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), "node and npm are needed for the node-postgres test"
    spec = (NODE_DIR / "package.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mzspark" / f"node-{hashlib.sha256(spec).hexdigest()[:12]}"
    if not (cache / "node_modules" / "pg").exists():
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "package.json").write_bytes(spec)
        res = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=cache,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    return cache / "node_modules"


def test_node_postgres(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (id int NOT NULL, label varchar(10))")
    env = dict(os.environ, NODE_PATH=str(_node_modules()))
    res = subprocess.run(["node", str(NODE_DIR / "catalog.js"), mz_server.host, str(mz_server.port), t],
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["version"].startswith("PostgreSQL 9.5")
    assert out["relation"] == [{"relname": t, "relkind": "r", "nspname": "public"}]
    assert out["columns"] == [
        {"column_name": "id", "data_type": "integer", "is_nullable": "NO"},
        {"column_name": "label", "data_type": "character varying", "is_nullable": "YES"},
    ]
    assert out["sum"] == 42
    assert out["hydrationFields"] == [["object_id", 25], ["plan_node_id", 16462], ["replica_id", 25], ["hydrated", 16]]
    assert {"public", "mz_catalog", "mz_internal", "pg_catalog", "information_schema"} <= set(out["poolSchemas"])
