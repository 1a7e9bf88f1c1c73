"""Replaying the catalog queries a BI tool or driver sends, as that tool sends them.

Queries come from the tools' public sources (each test file names where). `run_extended`
sends a statement with the extended protocol and server-side `$n` parameters (what JDBC,
Npgsql and pgx do); `run_simple` sends one simple-protocol message, possibly holding
several statements (what psqlODBC and Npgsql's type loader do).
"""

from __future__ import annotations

from typing import Any

import psycopg

from tests.integration.harness import MzServer


def connect(server: MzServer, **kwargs: Any) -> psycopg.Connection:
    return server.connect(**kwargs)


def run_extended(conn: psycopg.Connection, sql: str, params: tuple[Any, ...] | None = None) -> list[tuple[Any, ...]]:
    """One statement as a named prepared statement; `%s` placeholders become server-side
    `$n` parameters."""
    with conn.cursor() as cur:
        cur.execute(sql, params, prepare=True)
        return cur.fetchall() if cur.description is not None else []


def run_simple(conn: psycopg.Connection, sql: str) -> list[list[tuple[Any, ...]]]:
    """A simple-protocol query string (several statements allowed): every result set."""
    out: list[list[tuple[Any, ...]]] = []
    with psycopg.ClientCursor(conn) as cur:
        cur.execute(sql)
        while True:
            out.append(cur.fetchall() if cur.description is not None else [])
            if not cur.nextset():
                break
    return out


def spark_jobs(conn: psycopg.Connection) -> int:
    """Spark jobs the server has started so far (mzspark's own introspection relation)."""
    with conn.cursor() as cur:
        cur.execute("SELECT jobs_started FROM mz_internal.mzspark_spark_jobs")
        row = cur.fetchone()
        assert row is not None and int(row[0]) >= 0, row
        return int(row[0])
