"""One-shot SELECTs through mzspark (pgwire) vs plain `spark.sql` on the same Parquet files.

    .venv/bin/python benches/oneshot_vs_spark.py [--rows 1000000] [--repeat 5]

Starts a server on a fresh data directory (like the integration fixture), loads
`bench(k int, g int, v double precision, s text)` with COPY FROM STDIN and a 1000-row
`dim(id int, name text)`, then times three queries both ways:

* mzspark: psycopg 3 over pgwire, `execute` + `fetchall` (planning, Spark job, encoding);
* spark.sql: a SparkSession in this process (same master) over the tables' shard files
  `<data-dir>/shards/<shard>/*.parquet` (columns c0..cN, time, diff), registered as views
  with the user's column names. Every diff is +1 in an insert-only table, so plain Spark
  can ignore time/diff; mzspark must not (it consolidates).

Each query runs once to warm up, then `--repeat` times; the median wall time is reported.
The result of both engines is compared (as sorted rows) so the numbers are for equal work.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.integration.harness import MzServer  # noqa: E402

QUERIES: list[tuple[str, str]] = [
    (
        "filter+project",
        "SELECT k, v * 2 AS v2, s FROM bench WHERE g = 7 AND v > 0.5",
    ),
    (
        "group-by count/sum/avg",
        "SELECT g, count(*) AS n, sum(v) AS total, avg(v) AS mean FROM bench GROUP BY g",
    ),
    (
        "join 1000-row dim + agg",
        "SELECT d.name, count(*) AS n, sum(b.v) AS total FROM bench b JOIN dim d ON b.g = d.id "
        "WHERE d.id % 10 = 0 GROUP BY d.name",
    ),
]

BENCH_COLUMNS = ["k", "g", "v", "s"]
DIM_COLUMNS = ["id", "name"]
DIM_ROWS = 1000
CHUNK = 100_000


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load(server: MzServer, rows: int, seed: int) -> None:
    rng = random.Random(seed)
    with server.connect() as conn:
        conn.execute("CREATE TABLE bench (k int, g int, v double precision, s text)")
        t0 = time.perf_counter()
        cur = conn.cursor()
        with cur.copy("COPY bench FROM STDIN") as copy:
            for start in range(0, rows, CHUNK):
                lines = [
                    f"{k}\t{rng.randrange(DIM_ROWS)}\t{rng.random()!r}\ts{k % 97}\n"
                    for k in range(start, min(rows, start + CHUNK))
                ]
                copy.write("".join(lines))
        log(f"loaded {rows} rows into bench in {time.perf_counter() - t0:.1f} s")
        conn.execute("CREATE TABLE dim (id int, name text)")
        with cur.copy("COPY dim FROM STDIN") as copy:
            copy.write("".join(f"{i}\tname{i:04d}\n" for i in range(DIM_ROWS)))
        (n,) = conn.execute("SELECT count(*) FROM bench").fetchone() or (0,)
        assert n == rows, f"bench has {n} rows, expected {rows}"


def shard_dirs(data_dir: Path) -> dict[int, Path]:
    """Shard directories keyed by their number of user columns (bench: 4, dim: 2)."""
    import pyarrow.parquet as pq

    out: dict[int, Path] = {}
    for d in sorted((data_dir / "shards").iterdir()):
        files = sorted(d.glob("*.parquet"))
        if not files:
            continue
        names = pq.read_schema(files[0]).names
        user = [c for c in names if c not in ("time", "diff")]
        out[len(user)] = d
    missing = {len(BENCH_COLUMNS), len(DIM_COLUMNS)} - set(out)
    if missing:
        raise SystemExit(f"no shard directory found with {missing} columns under {data_dir}")
    return out


def median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    result = fn()  # warm-up (and the result to compare)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), result


def normalize(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    def cell(x: Any) -> Any:
        if isinstance(x, float | Decimal):
            return round(float(x), 6)
        return x

    return sorted(tuple(cell(x) for x in r) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-dir", type=Path, help="default: a fresh temporary directory")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="mzspark-bench-"))
    data_dir = args.data_dir or tmp / "mzdata"
    server = MzServer(data_dir, tmp / "server.log", spark_master=args.spark_master)
    log(f"starting mzspark (log: {server.log_path})")
    server.start()
    results: list[tuple[str, float, float]] = []
    try:
        load(server, args.rows, args.seed)
        shards = shard_dirs(data_dir)
        mz_results = []
        with server.connect() as conn:
            for name, sql in QUERIES:

                def run_mz(sql: str = sql) -> list[tuple[Any, ...]]:
                    return conn.execute(sql).fetchall()

                ms, rows = median_ms(run_mz, args.repeat)
                log(f"mzspark   {name}: {ms:.0f} ms ({len(rows)} rows)")
                mz_results.append((ms, rows))
    finally:
        server.stop()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.spark_master)
        .appName("oneshot_vs_spark")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for cols, view in ((BENCH_COLUMNS, "bench"), (DIM_COLUMNS, "dim")):
            df = spark.read.parquet(str(shards[len(cols)] / "*.parquet"))
            df.selectExpr(*(f"c{i} AS {c}" for i, c in enumerate(cols))).createOrReplaceTempView(
                view
            )
        (n,) = spark.sql("SELECT count(*) FROM bench").collect()[0]
        if n != args.rows:
            raise SystemExit(f"the shard files hold {n} rows, expected {args.rows}")
        for (name, sql), (mz_ms, mz_rows) in zip(QUERIES, mz_results, strict=True):

            def run_spark(sql: str = sql) -> list[tuple[Any, ...]]:
                return [tuple(r) for r in spark.sql(sql).collect()]

            ms, rows = median_ms(run_spark, args.repeat)
            log(f"spark.sql {name}: {ms:.0f} ms ({len(rows)} rows)")
            if normalize(rows) != normalize(mz_rows):
                log(f"WARNING: results differ for {name!r}")
            results.append((name, mz_ms, ms))
    finally:
        spark.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"\n{args.rows} rows, {args.spark_master}, median of {args.repeat}\n")
    print("| query | mzspark ms | spark.sql ms | ratio |")
    print("|---|---:|---:|---:|")
    for name, mz_ms, sp_ms in results:
        print(f"| {name} | {mz_ms:.0f} | {sp_ms:.0f} | {mz_ms / sp_ms:.2f}x |")


if __name__ == "__main__":
    main()
