"""Latency of catalog-only queries (DESIGN §2 step 2): psql's `\\d t` and JDBC getColumns.

    .venv/bin/python benches/catalog_queries.py [--repeat 200] [--tables 50]

Starts a server on a fresh data directory (like the integration fixture), creates a table
`t` with a primary key, an index and a view on it, plus `--tables` other tables so the
catalog is not trivially small, then measures:

* psql `\\d t`: the exact statements psql 15 sends for `\\d t` to this server (captured
  with `psql -E`), replayed back to back over one connection with the simple query
  protocol, as psql sends them; one sample = the whole sequence;
* JDBC `DatabaseMetaData.getColumns(null, "public", "t", "%")` with the Debian pgjdbc
  driver (a Java program timing each call with System.nanoTime);

each in two conditions: "warm" (the same catalog state as the previous call: plans and
results are served from the catalog-versioned caches) and "after DDL" (a CREATE/DROP of an
unrelated table before each sample, untimed, so the system relations' snapshot is rebuilt
and every query really runs in DuckDB). Reports p50 / p95 in milliseconds; the goal for the
warm case is p50 <= 10 ms. Also checks that no Spark job ran for any of it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import psycopg  # noqa: E402

from tests.integration.harness import MzServer  # noqa: E402

JAR = Path("/usr/share/java/postgresql.jar")
JAVA_SOURCE = REPO_ROOT / "benches" / "java" / "JdbcGetColumnsBench.java"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def capture_psql_queries(server: MzServer, command: str) -> list[str]:
    env = dict(os.environ, PGCONNECT_TIMEOUT="30")
    out = subprocess.run(["psql", "-X", "-E", "-h", server.host, "-p", str(server.port), "-U", "materialize",
                          "materialize", "-c", command], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    queries = re.findall(r"\*{9} QUERY \*{10}\n(.*?)\n\*{26}", out.stdout, re.S)
    assert queries, out.stdout
    return queries


def spark_jobs(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT jobs_started FROM mz_internal.mzspark_spark_jobs").fetchone()
    assert row is not None
    return int(row[0])


def bench_psql(server: MzServer, queries: list[str], repeat: int) -> tuple[list[float], list[float]]:
    warm, ddl = [], []
    with psycopg.connect(server.dsn, autocommit=True) as conn, psycopg.ClientCursor(conn) as cur, \
            psycopg.connect(server.dsn, autocommit=True) as other:
        def sequence() -> float:
            t0 = time.perf_counter()
            for q in queries:
                cur.execute(q)
                cur.fetchall()
            return (time.perf_counter() - t0) * 1000

        for _ in range(5):
            sequence()
        for _ in range(repeat):
            warm.append(sequence())
        for i in range(repeat):
            other.execute("CREATE TABLE bench_scratch (x int)" if i % 2 == 0 else "DROP TABLE bench_scratch")
            ddl.append(sequence())
    return warm, ddl


def bench_jdbc(server: MzServer, repeat: int) -> tuple[list[float], list[float]] | None:
    javac, java = shutil.which("javac"), shutil.which("java")
    if not (javac and java and JAR.exists()):
        log("JDBC bench skipped: javac/java or the pgjdbc jar is missing")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([javac, "-cp", str(JAR), "-d", tmp, str(JAVA_SOURCE)], check=True, timeout=180)
        url = f"jdbc:postgresql://{server.host}:{server.port}/materialize?user=materialize"
        out = subprocess.run([java, "-cp", f"{JAR}:{tmp}", "JdbcGetColumnsBench", url, "t", str(repeat)],
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
    warm = [float(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("warm ")]
    ddl = [float(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("ddl ")]
    return warm, ddl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--tables", type=int, default=50)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mzspark-bench-catalog-"))
    server = MzServer(base / "mzdata", base / "server.log")
    log("starting server ...")
    server.start()
    try:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (id int PRIMARY KEY, name varchar(40) NOT NULL, amount numeric(12,2), "
                         "created timestamptz, note text DEFAULT 'none')")
            conn.execute("CREATE INDEX t_name ON t (name)")
            conn.execute("CREATE VIEW t_view AS SELECT id, name FROM t")
            for i in range(args.tables):
                conn.execute(f"CREATE TABLE other_{i} (a int, b text, c bigint)")
            jobs_before = spark_jobs(conn)
        queries = capture_psql_queries(server, "\\d t")
        log(f"psql \\d t sends {len(queries)} statements; timing {args.repeat} samples per condition ...")
        psql_warm, psql_ddl = bench_psql(server, queries, args.repeat)
        jdbc = bench_jdbc(server, args.repeat)
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            jobs_after = spark_jobs(conn)
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)

    rows = [(f"psql \\d t ({len(queries)} statements), warm", psql_warm),
            (f"psql \\d t ({len(queries)} statements), after DDL", psql_ddl)]
    if jdbc is not None:
        rows += [("JDBC getColumns, warm", jdbc[0]), ("JDBC getColumns, after DDL", jdbc[1])]
    print(f"catalog queries ({args.tables + 1} user tables, {args.repeat} samples each)")
    print(f"{'measurement':<44} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for name, samples in rows:
        print(f"{name:<44} {pct(samples, 50):8.2f} {pct(samples, 95):8.2f} {statistics.mean(samples):8.2f}")
    print(f"goal: warm p50 <= 10 ms -> psql {'met' if pct(psql_warm, 50) <= 10 else 'MISSED'}"
          + (f", JDBC {'met' if pct(jdbc[0], 50) <= 10 else 'MISSED'}" if jdbc is not None else ""))
    print(f"Spark jobs started by all of the above: {jobs_after - jobs_before}")


if __name__ == "__main__":
    main()
