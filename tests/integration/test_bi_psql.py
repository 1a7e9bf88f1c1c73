"""psql's describe commands against mzspark, compared with what PostgreSQL 15 prints for the
same objects (same names, same owner), and checked to run without a Spark job.

psql adapts its catalog queries to the server version (mzspark reports 9.5.0), so these
also exercise the 9.5-era columns psql reads (`pg_class.relhasoids`, `pg_proc.proisagg`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.reference import connect as reference_connect
from tests.integration.tools.reference import materialize_reference
from tests.integration.tools.replay import spark_jobs

pytestmark = pytest.mark.integration

PSQL = shutil.which("psql") or "psql"


def psql(host: str, port: int, *commands: str) -> str:
    env = dict(os.environ, PGCONNECT_TIMEOUT="30")
    env.pop("PGPASSWORD", None)
    cmd = [PSQL, "-X", "-h", host, "-p", str(port), "-U", "materialize", "materialize"]
    for c in commands:
        cmd += ["-c", c]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0 and "ERROR" not in res.stderr, f"{commands}: {res.stderr}"
    return res.stdout


def normalized(out: str) -> list[str]:
    """psql output with runs of blanks collapsed and, in index descriptions, the "Key?"
    column dropped (psql shows it only for servers >= 11; mzspark reports 9.5)."""
    lines = out.splitlines()
    out_lines: list[str] = []
    drop = False
    for line in lines:
        if "| Key? |" in line:
            drop = True
        if drop and line.strip() == "":
            drop = False
        if drop and ("|" in line or "+" in line):
            sep = "+" if set(line.strip()) <= {"-", "+"} else "|"
            cells = line.split(sep)
            if len(cells) >= 4:
                del cells[2]
            line = sep.join(cells)
        out_lines.append(" ".join(line.split()))
    return out_lines


def objects(prefix: str) -> list[str]:
    t, v, mv = f"{prefix}_t", f"{prefix}_v", f"{prefix}_mv"
    return [
        f"CREATE TABLE {t} (a int PRIMARY KEY, b text NOT NULL, c numeric(10,2), d varchar(20), e bigint DEFAULT 0)",
        f"CREATE VIEW {v} AS SELECT a, b FROM {t}",
        f"CREATE MATERIALIZED VIEW {mv} AS SELECT a FROM {t}",
        f"CREATE INDEX {t}_b_idx ON {t} (b)",
    ]


@pytest.fixture(scope="module")
def reference() -> Iterator[tuple[str, int]]:
    """PostgreSQL 15 with a `materialize` superuser and database, like mzspark's."""
    with materialize_reference("pgref-psql-") as ref:
        yield ref


def both(server: MzServer, reference: tuple[str, int], prefix: str) -> None:
    with server.connect() as conn:
        for sql in objects(prefix):
            conn.execute(sql)
    with reference_connect(reference) as conn:
        for sql in objects(prefix):
            conn.execute(sql)


def test_describe_like_postgres(mz_server: MzServer, reference: tuple[str, int], uniq: Callable[[str], str]) -> None:
    p = uniq("ps")
    both(mz_server, reference, p)
    with mz_server.connect() as conn:
        jobs = spark_jobs(conn)
    for cmd in (f"\\d {p}*", f"\\dt {p}*", f"\\dv {p}*", f"\\dm {p}*", f"\\di {p}*", f"\\d {p}_t", f"\\d {p}_v",
                f"\\d {p}_mv", f"\\d {p}_t_pkey"):
        ours = psql(mz_server.host, mz_server.port, cmd)
        theirs = psql(*reference, cmd)
        assert normalized(ours) == normalized(theirs), f"{cmd}\n--- mzspark ---\n{ours}\n--- postgres ---\n{theirs}"
    with mz_server.connect() as conn:
        assert spark_jobs(conn) == jobs, "psql's describe commands must not start Spark jobs"


def test_table_description(mz_server: MzServer, reference: tuple[str, int], uniq: Callable[[str], str]) -> None:
    p = uniq("pt")
    both(mz_server, reference, p)
    out = psql(mz_server.host, mz_server.port, f"\\d {p}_t")
    assert f'Table "public.{p}_t"' in out
    assert " a      | integer               |           | not null | " in out
    assert " c      | numeric(10,2)         |           |          | " in out
    assert " d      | character varying(20) |           |          | " in out
    assert " e      | bigint                |           |          | 0" in out
    assert f'"{p}_t_pkey" PRIMARY KEY, btree (a)' in out
    assert f'"{p}_t_b_idx" btree (b)' in out


def test_schemas_databases_roles_functions(mz_server: MzServer, reference: tuple[str, int]) -> None:
    ours = psql(mz_server.host, mz_server.port, "\\dn")
    assert "List of schemas" in ours and " public " in ours and "mz_catalog" in ours
    assert "pg_catalog" not in ours and "information_schema" not in ours
    ours_l = psql(mz_server.host, mz_server.port, "\\l")
    theirs_l = psql(*reference, "\\l")
    assert normalized(ours_l)[1] == normalized(theirs_l)[1]  # the same columns
    row = [line for line in ours_l.splitlines() if line.startswith(" materialize ")]
    assert len(row) == 1 and "| materialize | UTF8 " in row[0]
    ours_du = psql(mz_server.host, mz_server.port, "\\du")
    theirs_du = psql(*reference, "\\du materialize")
    assert [line for line in ours_du.splitlines() if "materialize" in line] == [
        line for line in theirs_du.splitlines() if line.startswith(" materialize")]
    assert psql(mz_server.host, mz_server.port, "\\df") == psql(*reference, "\\df")


def test_describe_system_relations(mz_server: MzServer) -> None:
    out = psql(mz_server.host, mz_server.port, "\\d pg_catalog.pg_index")
    assert 'Table "pg_catalog.pg_index"' in out
    assert " indkey              | int2vector   |" in out
    assert " indexprs            | pg_node_tree |" in out
    out = psql(mz_server.host, mz_server.port, "\\d mz_internal.mz_compute_operator_hydration_statuses")
    assert " plan_node_id | uint8   |" in out and " hydrated     | boolean |" in out
    out = psql(mz_server.host, mz_server.port, "\\dS pg_class")
    assert " relkind             | \"char\"       |" in out


def test_copy_catalog_query_to_stdout(mz_server: MzServer) -> None:
    out = psql(mz_server.host, mz_server.port,
               "\\copy (SELECT oid, typname FROM pg_catalog.pg_type WHERE oid IN (16, 23) ORDER BY oid) TO STDOUT WITH CSV HEADER")
    assert out.splitlines() == ["oid,typname", "16,bool", "23,int4"]
    out = psql(mz_server.host, mz_server.port, "COPY (SELECT nspname, nspacl FROM pg_namespace WHERE nspname = 'public') TO STDOUT")
    assert out.splitlines() == ["public\t\\N"]
