"""Plans reused by statement text (server/plan_cache.py) end to end, side by side with
PostgreSQL 15: the same statement text, unnamed or prepared, keeps answering as PostgreSQL
does across DROP / CREATE of the same name, ALTER ... RENAME, a new column type (a prepared
statement whose result type changed: 0A000 on both), a temporary table of another session
shadowing the name, and writes made just before."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

pytestmark = pytest.mark.integration


def _outcome(conn: psycopg.Connection, sql: str, params: tuple = (), prepare: bool | None = None) -> object:
    """Sorted rows, or the SQLSTATE of the error."""
    try:
        cur = conn.execute(sql, params, prepare=prepare)
        return sorted(cur.fetchall(), key=repr) if cur.description is not None else cur.statusmessage
    except psycopg.Error as e:
        return e.sqlstate


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str]:
    with reference_postgres("plancache-") as dsn:
        yield dsn


def test_statements_follow_ddl_like_postgres(mz_server: MzServer, pg_dsn: str, uniq: Callable[[str], str]) -> None:
    t = uniq("pc")
    engines = []
    for dsn in (mz_server.dsn, pg_dsn):
        a = psycopg.connect(dsn, autocommit=True)
        b = psycopg.connect(dsn, autocommit=True)
        engines.append((a, b))
    lookup = f"SELECT * FROM {t} WHERE k = %s"
    steps: list[tuple[str, str, tuple, bool | None]] = [
        ("a", f"CREATE TABLE {t} (k int, v text)", (), None),
        ("a", f"INSERT INTO {t} VALUES (%s, %s)", (1, "one"), None),
        ("b", f"INSERT INTO {t} VALUES (%s, %s)", (2, "two"), None),
        *[(s, lookup, (k,), p) for s in "ab" for k in (1, 2) for p in (None, True)],
        ("a", f"DROP TABLE {t}", (), None),
        ("b", lookup, (1,), None),  # 42P01 on both
        ("a", f"CREATE TABLE {t} (k int, v text)", (), None),
        ("a", f"INSERT INTO {t} VALUES (%s, %s)", (1, "new one"), None),
        *[(s, lookup, (1,), p) for s in "ab" for p in (None, True)],
        ("a", f"ALTER TABLE {t} RENAME TO {t}_old", (), None),
        ("a", f"CREATE TABLE {t} (k int, v text)", (), None),
        ("b", f"INSERT INTO {t} VALUES (%s, %s)", (1, "after rename"), None),
        *[(s, lookup, (1,), p) for s in "ab" for p in (None, True)],
        ("a", f"SELECT * FROM {t}_old", (), None),
        # a new result type: the unnamed statement is planned afresh; a prepared one fails as on PostgreSQL
        ("a", f"DROP TABLE {t}", (), None),
        ("a", f"CREATE TABLE {t} (k int, v bigint, w text)", (), None),
        ("b", f"INSERT INTO {t} VALUES (%s, %s, %s)", (1, 10, "wide"), None),
        ("a", lookup, (1,), None),
        ("b", lookup, (1,), True),
        # b's temporary table shadows the name for b only
        ("b", f"CREATE TEMPORARY TABLE {t} (k int, temp_only text)", (), None),
        ("b", f"INSERT INTO {t} VALUES (%s, %s)", (1, "temp"), None),
        ("a", lookup, (1,), None),
        ("b", lookup, (1,), None),
        ("a", lookup, (1,), None),
    ]
    for i, (who, sql, params, prepare) in enumerate(steps):
        got = [_outcome(a if who == "a" else b, sql, params, prepare) for a, b in engines]
        assert got[0] == got[1], (i, who, sql, params, prepare)
    for a, b in engines:
        a.close()
        b.close()
