"""PostgreSQL 15 set up like mzspark (a `materialize` superuser owning a `materialize`
database), for tests that compare catalog answers with the real thing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg

from tests.pgref import reference_postgres


@contextlib.contextmanager
def materialize_reference(prefix: str = "pgref-bi-") -> Iterator[tuple[str, int]]:
    with reference_postgres(prefix) as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE ROLE materialize SUPERUSER CREATEDB CREATEROLE REPLICATION BYPASSRLS LOGIN")
            conn.execute("CREATE DATABASE materialize OWNER materialize")
        info = psycopg.conninfo.conninfo_to_dict(dsn)
        yield str(info["host"]), int(str(info["port"]))


def connect(reference: tuple[str, int]) -> psycopg.Connection:
    return psycopg.connect(host=reference[0], port=reference[1], user="materialize", dbname="materialize",
                           autocommit=True)
