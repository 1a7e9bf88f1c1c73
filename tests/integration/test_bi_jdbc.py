"""The PostgreSQL JDBC driver's DatabaseMetaData (what Metabase, DBeaver, DataGrip and every
Java BI tool call) against mzspark: a Java program compiled at test time prints what the
driver returns; this test checks it. Includes a setFetchSize(100) ResultSet read in a
transaction, which the driver runs through a named portal with row-limited Executes."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import spark_jobs

pytestmark = pytest.mark.integration

JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).resolve().parent / "java" / "JdbcMetadata.java"

# java.sql.Types
INTEGER, VARCHAR, NUMERIC, TIMESTAMP, BIT, BIGINT, OTHER = 4, 12, 2, 93, -7, -5, 1111


def run_java(server: MzServer, table: str, tmp_path: Path) -> list[list[str]]:
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "javac/java missing: `make test` installs default-jdk-headless"
    assert JAR.exists(), f"{JAR} missing: `make test` installs libpostgresql-jdbc-java"
    build = subprocess.run([javac, "-cp", str(JAR), "-d", str(tmp_path), str(SOURCE)],
                           capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stderr
    url = f"jdbc:postgresql://{server.host}:{server.port}/materialize?user=materialize&connectTimeout=30&socketTimeout=120"
    run = subprocess.run([java, "-cp", f"{JAR}:{tmp_path}", "JdbcMetadata", url, table],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    lines = [line.split("\t") for line in run.stdout.splitlines()]
    assert lines[-1] == ["OK"], run.stdout
    return lines


def facts(lines: list[list[str]], kind: str) -> list[list[str]]:
    return [line[1:] for line in lines if line[0] == kind]


def test_database_metadata(mz_server: MzServer, uniq: Callable[[str], str], tmp_path: Path) -> None:
    t = uniq("jt")
    with mz_server.connect() as conn:
        jobs = spark_jobs(conn)
    lines = run_java(mz_server, t, tmp_path)
    assert facts(lines, "PRODUCT") == [["PostgreSQL", "9.5.0"]]
    assert {"public", "pg_catalog", "information_schema", "mz_catalog", "mz_internal"} <= {s[0] for s in facts(lines, "SCHEMA")}
    tables = facts(lines, "TABLE")
    assert ["public", t, "TABLE"] in tables and ["public", f"{t}_pkey", "INDEX"] in tables
    assert facts(lines, "SYSTABLE") == [["pg_class", "SYSTEM TABLE"], ["pg_views", "SYSTEM VIEW"]]
    assert int(facts(lines, "SYSTABLES")[0][0]) > 50
    # name, java.sql.Types, type name, size, decimal digits, nullable, position, is_nullable
    assert facts(lines, "COLUMN") == [
        ["id", str(INTEGER), "int4", "10", "0", "0", "1", "NO"],
        ["name", str(VARCHAR), "varchar", "20", "0", "0", "2", "NO"],
        ["amount", str(NUMERIC), "numeric", "10", "2", "1", "3", "YES"],
        ["ts", str(TIMESTAMP), "timestamptz", "35", "6", "1", "4", "YES"],
        ["flag", str(BIT), "bool", "1", "0", "1", "5", "YES"],
        ["big", str(BIGINT), "int8", "19", "0", "1", "6", "YES"],
        ["note", str(VARCHAR), "text", "2147483647", "0", "1", "7", "YES"],
    ]
    assert facts(lines, "PK") == [["id", "1", f"{t}_pkey"]]
    assert facts(lines, "INDEX") == [[f"{t}_pkey", "false", "id", "1"]]
    typeinfo = {name: int(code) for name, code in facts(lines, "TYPEINFO")}
    assert typeinfo == {"int4": INTEGER, "text": VARCHAR, "numeric": NUMERIC, "uint8": OTHER}
    assert int(facts(lines, "TYPEINFOS")[0][0]) > 50
    assert facts(lines, "IMPORTEDKEYS") == [["0"]] and facts(lines, "FUNCTIONS") == [["0"]]
    assert facts(lines, "HYDRATION_COLUMN") == [
        ["object_id", "text"], ["plan_node_id", "uint8"], ["replica_id", "text"], ["worker_id", "uint8"],
        ["hydrated", "bool"]]
    assert facts(lines, "MZ_TABLES_COLUMN") == [["id", "text"], ["name", "text"], ["oid", "oid"]]
    (mz_table,) = facts(lines, "MZ_TABLE")
    assert mz_table[0].startswith("u") and mz_table[1] == t
    (fetched,) = facts(lines, "FETCHED")
    assert fetched[0] == fetched[1] and int(fetched[0]) > 1000  # > 10 batches of 100
    with mz_server.connect() as conn:
        # creating the table is the only statement that is not a catalog query; it runs no job
        assert spark_jobs(conn) == jobs, "metadata calls must not start Spark jobs"
