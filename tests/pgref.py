"""A throwaway PostgreSQL 15 server, the reference implementation for differential tests.

`make test` installs Debian's PostgreSQL when it is missing, so failing to start it is a
test failure, never a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg


def pg_bindir() -> Path:
    cands = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True) + [Path("/usr/local/bin")]
    for p in cands:
        if (p / "initdb").exists() and (p / "pg_ctl").exists() and (p / "postgres").exists():
            return p
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError("PostgreSQL server binaries not found (make test installs Debian's postgresql)")


@contextlib.contextmanager
def reference_postgres(prefix_name: str = "pgref-", initdb_args: tuple[str, ...] = (),
                       settings: tuple[str, ...] = ()) -> Iterator[str]:
    """Start PostgreSQL on a free loopback port; yields a psycopg conninfo string.
    `initdb_args` are added to initdb's (e.g. `--locale=C`), `settings` (`name=value`) to the
    server's command line."""
    bindir = pg_bindir()
    base = Path(tempfile.mkdtemp(prefix=prefix_name))
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        run_as = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")
    data = base / "data"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync",
                    *initdb_args],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(base / "log"), "-o",
                    f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
                    + "".join(f" -c {kv}" for kv in settings), "start"],
                   check=True, capture_output=True, timeout=120)
    dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    try:
        for _ in range(100):
            try:
                psycopg.connect(dsn).close()
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        else:
            raise RuntimeError("reference PostgreSQL did not accept connections")
        yield dsn
    finally:
        subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def text_loaded(*types: str):  # type: ignore[no-untyped-def]
    """A `configure` for paired_with_postgres: values of `types` come back as the text the
    server prints (psycopg's timedelta would fold an interval's months into days), in UTC."""
    from psycopg.types.string import TextLoader

    def configure(conn: psycopg.Connection) -> None:
        for name in types:
            conn.adapters.register_loader(name, TextLoader)
        conn.execute("SET TimeZone = 'UTC'")

    return configure


@contextlib.contextmanager
def paired_with_postgres(mz: psycopg.Connection, prefix_name: str, schema: str, setup: list[str],
                         configure=None) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    """(mzspark, PostgreSQL) connections, each with `schema` created, on the search path and
    filled by `setup` (statements with `{s}` for the schema); `configure(conn)` runs first."""
    with reference_postgres(prefix_name) as dsn:
        pg = psycopg.connect(dsn, autocommit=True)
        try:
            for conn in (pg, mz):
                if configure is not None:
                    configure(conn)
                conn.execute(f"CREATE SCHEMA {schema}")
                conn.execute(f"SET search_path = {schema}")
                for st in setup:
                    conn.execute(st.replace("{s}", schema))
            yield mz, pg
        finally:
            mz.close()
            pg.close()


def _norm(v: object) -> object:
    return v.normalize() if isinstance(v, Decimal) and v.is_finite() else v


def sorted_outcome(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    """A query's rows as a sorted list (numerics without trailing zeros), or `error SQLSTATE`."""
    try:
        return sorted((tuple(_norm(v) for v in r) for r in conn.execute(sql).fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"
