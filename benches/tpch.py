"""TPC-H side by side: mzspark, plain spark.sql, DuckDB and PostgreSQL 15, answers checked.

    make tpch SF=0.1                      # = .venv/bin/python benches/tpch.py --sf 0.1
    .venv/bin/python benches/tpch.py --sf 1 --runs 3 --queries 1,3,18 [--no-pg] [--no-spark]

1. Data: `tpchgen-cli parquet -s SF` (the `bench` extra of pyproject.toml) into
   `benches/.tpch-data/sf<SF>/` (kept and reused; delete it to regenerate).
2. mzspark: a server on a fresh data directory (tests/integration/harness.py); the eight
   tables created with the specification's column types (char(n), varchar(n),
   decimal(15,2), date, NOT NULL) and loaded through its own interface, one
   `COPY t FROM STDIN (DELIMITER '|')` per table (text format rendered from the Parquet
   files); the load rate is printed.
3. PostgreSQL 15: a throwaway server (tests/pgref.py), the same DDL and the same COPY streams.
4. spark.sql: a SparkSession made by mzspark's own `compute.render.spark.spark_session` (the
   same settings, same master) with the generated Parquet files as temporary views, the same
   query text through `spark.sql(q).collect()`.
5. DuckDB: views over the same Parquet files, the same query text; its answers are the
   reference.

The 22 queries are `benches/tpch_queries/qNN.sql`: the specification's text with its
default (validation) substitution parameters (Q11's fraction is the SF 1 value 0.0001; Q15's
view is a WITH clause, the specification's allowed variant). Each engine runs each query
once to warm up, then `--runs` times; the median wall time is reported (client side:
execute + fetch all rows).

Answers: every engine's rows are compared with DuckDB's, in order when the query orders
them (as a multiset when only the order of ties differs). Numbers (numeric, float, integer)
are equal when `math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)` after conversion to float;
strings are compared without trailing blanks (char(n) values are blank-padded in mzspark and
PostgreSQL, not in the Parquet files); dates exactly.

Prints a Markdown table: per query the medians (ms), mzspark / spark.sql, and whether each
answer matches DuckDB's; then the geometric means and the list of wrong answers.
"""

from __future__ import annotations

import argparse
import io
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

QUERY_DIR = REPO_ROOT / "benches" / "tpch_queries"
DATA_ROOT = REPO_ROOT / "benches" / ".tpch-data"
COPY_CHUNK = 1 << 20

# The specification's schema (clause 1.4), identifiers as integer.
SCHEMA: dict[str, list[tuple[str, str]]] = {
    "region": [("r_regionkey", "integer"), ("r_name", "char(25)"), ("r_comment", "varchar(152)")],
    "nation": [("n_nationkey", "integer"), ("n_name", "char(25)"), ("n_regionkey", "integer"),
               ("n_comment", "varchar(152)")],
    "part": [("p_partkey", "integer"), ("p_name", "varchar(55)"), ("p_mfgr", "char(25)"),
             ("p_brand", "char(10)"), ("p_type", "varchar(25)"), ("p_size", "integer"),
             ("p_container", "char(10)"), ("p_retailprice", "decimal(15,2)"), ("p_comment", "varchar(23)")],
    "supplier": [("s_suppkey", "integer"), ("s_name", "char(25)"), ("s_address", "varchar(40)"),
                 ("s_nationkey", "integer"), ("s_phone", "char(15)"), ("s_acctbal", "decimal(15,2)"),
                 ("s_comment", "varchar(101)")],
    "partsupp": [("ps_partkey", "integer"), ("ps_suppkey", "integer"), ("ps_availqty", "integer"),
                 ("ps_supplycost", "decimal(15,2)"), ("ps_comment", "varchar(199)")],
    "customer": [("c_custkey", "integer"), ("c_name", "varchar(25)"), ("c_address", "varchar(40)"),
                 ("c_nationkey", "integer"), ("c_phone", "char(15)"), ("c_acctbal", "decimal(15,2)"),
                 ("c_mktsegment", "char(10)"), ("c_comment", "varchar(117)")],
    "orders": [("o_orderkey", "integer"), ("o_custkey", "integer"), ("o_orderstatus", "char(1)"),
               ("o_totalprice", "decimal(15,2)"), ("o_orderdate", "date"), ("o_orderpriority", "char(15)"),
               ("o_clerk", "char(15)"), ("o_shippriority", "integer"), ("o_comment", "varchar(79)")],
    "lineitem": [("l_orderkey", "integer"), ("l_partkey", "integer"), ("l_suppkey", "integer"),
                 ("l_linenumber", "integer"), ("l_quantity", "decimal(15,2)"),
                 ("l_extendedprice", "decimal(15,2)"), ("l_discount", "decimal(15,2)"),
                 ("l_tax", "decimal(15,2)"), ("l_returnflag", "char(1)"), ("l_linestatus", "char(1)"),
                 ("l_shipdate", "date"), ("l_commitdate", "date"), ("l_receiptdate", "date"),
                 ("l_shipinstruct", "char(25)"), ("l_shipmode", "char(10)"), ("l_comment", "varchar(44)")],
}


# PostgreSQL gets the primary keys and the foreign-key indexes the specification allows
# (without them its correlated plans for Q17/Q20 rescan lineitem per outer row: hours at SF 1).
PG_INDEXES = [
    "ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
    "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)",
    "ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
    "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
    "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
    "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
    "CREATE INDEX ON lineitem (l_partkey, l_suppkey)",
    "CREATE INDEX ON orders (o_custkey)",
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ddl(table: str) -> str:
    cols = ", ".join(f"{c} {t} NOT NULL" for c, t in SCHEMA[table])
    return f"CREATE TABLE {table} ({cols})"


def fmt_sf(sf: float) -> str:
    return f"{sf:g}"


def generate(sf: float) -> Path:
    """The Parquet files of scale factor `sf` (generated once, then reused)."""
    out = DATA_ROOT / f"sf{fmt_sf(sf)}"
    if all((out / f"{t}.parquet").exists() for t in SCHEMA):
        return out
    exe = Path(sys.executable).parent / "tpchgen-cli"
    if not exe.exists():
        raise SystemExit("tpchgen-cli is missing: `make tpch` installs it (pip install -e '.[bench]')")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"generating TPC-H SF {fmt_sf(sf)} with tpchgen-cli into {out}")
    subprocess.run([str(exe), "parquet", "-s", fmt_sf(sf), f"--output-dir={tmp}"], check=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def copy_stream(parquet: Path) -> bytes:
    """A table's rows as a COPY text stream with delimiter `|` (TPC-H text holds no `|`,
    no backslash and no newline, so no field needs escaping)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    table = table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
                                  for f in table.schema]))
    buf = io.BytesIO()
    pacsv.write_csv(table, buf, pacsv.WriteOptions(include_header=False, delimiter="|", quoting_style="none"))
    return buf.getvalue()


def chunks(data: bytes) -> Iterator[bytes]:
    """The stream in pieces of about COPY_CHUNK bytes, cut after a newline."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", min(start + COPY_CHUNK, len(data) - 1))
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


def load(conn: Any, streams: dict[str, bytes]) -> tuple[int, float, float]:
    """Create and COPY every table; (rows, seconds for all, seconds for lineitem)."""
    total_rows, total_s, lineitem_s = 0, 0.0, 0.0
    for table in SCHEMA:
        conn.execute(ddl(table))
        t0 = time.perf_counter()
        with conn.cursor() as cur:
            with cur.copy(f"COPY {table} FROM STDIN WITH (DELIMITER '|')") as cp:
                for piece in chunks(streams[table]):
                    cp.write(piece)
            n = cur.rowcount
        dt = time.perf_counter() - t0
        total_rows += n
        total_s += dt
        if table == "lineitem":
            lineitem_s = dt
        log(f"  {table}: {n} rows in {dt:.2f} s")
    return total_rows, total_s, lineitem_s


def queries(selected: set[int] | None) -> list[tuple[str, str]]:
    out = []
    for p in sorted(QUERY_DIR.glob("q*.sql")):
        n = int(p.stem[1:])
        if selected is None or n in selected:
            out.append((p.stem, p.read_text().strip().rstrip(";")))
    return out


SLOW_MS = 20_000.0  # a query whose warm-up takes longer is timed by that run alone


def timed(fn: Callable[[], list[tuple]], runs: int) -> tuple[float | None, list[tuple] | str]:
    """(median ms of `runs` after one warm-up, rows of the warm-up or the error text); a
    query slower than SLOW_MS reports its warm-up time (the bench must stay re-runnable)."""
    try:
        t0 = time.perf_counter()
        rows = fn()
        first = (time.perf_counter() - t0) * 1000
        if first > SLOW_MS:
            return first, rows
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times), rows
    except Exception as e:  # noqa: BLE001 - a failing query is a result of the bench
        return None, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


# ---- answers ------------------------------------------------------------------------------


def _cell_equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    num = (int, float, Decimal)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, str) and isinstance(b, str):
        return a.rstrip(" ") == b.rstrip(" ")
    if isinstance(a, date) and isinstance(b, date):
        return a == b
    return a == b


def _rows_equal(xs: list[tuple], ys: list[tuple]) -> bool:
    return len(xs) == len(ys) and all(
        len(x) == len(y) and all(_cell_equal(a, b) for a, b in zip(x, y, strict=True))
        for x, y in zip(xs, ys, strict=True))


def _sort_key(row: tuple) -> tuple:
    def k(v: Any) -> tuple:
        if v is None:
            return (0, "")
        if isinstance(v, int | float | Decimal):
            return (1, round(float(v), 6))
        if isinstance(v, str):
            return (2, v.rstrip(" "))
        return (3, str(v))

    return tuple(k(v) for v in row)


def same_answer(got: list[tuple] | str, ref: list[tuple] | str) -> bool:
    """Equal to the reference, in order, or as a multiset (ties may come in another order)."""
    if isinstance(got, str) or isinstance(ref, str):
        return False
    got = [tuple(r) for r in got]
    ref = [tuple(r) for r in ref]
    return _rows_equal(got, ref) or _rows_equal(sorted(got, key=_sort_key), sorted(ref, key=_sort_key))


# ---- engines ----------------------------------------------------------------------------


def run_duckdb(data: Path, qs: list[tuple[str, str]], runs: int) -> dict[str, tuple[float | None, Any]]:
    import duckdb

    con = duckdb.connect()
    for t in SCHEMA:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{data / (t + '.parquet')}')")
    return {name: timed(lambda sql=sql: con.execute(sql).fetchall(), runs) for name, sql in qs}


def run_spark(data: Path, qs: list[tuple[str, str]], runs: int, master: str) -> dict[str, tuple[float | None, Any]]:
    from compute.render.spark import spark_session

    spark = spark_session(master)
    try:
        for t in SCHEMA:
            spark.read.parquet(str(data / f"{t}.parquet")).createOrReplaceTempView(t)
        out = {}
        for name, sql in qs:
            out[name] = timed(lambda sql=sql: [tuple(r) for r in spark.sql(sql).collect()], runs)
            log(f"  spark.sql {name}: {_ms(out[name][0])}")
        return out
    finally:
        spark.stop()


def run_interleaved(conn: Any, data: Path, qs: list[tuple[str, str]], runs: int, master: str
                    ) -> tuple[dict[str, tuple[float | None, Any]], dict[str, tuple[float | None, Any]]]:
    """mzspark and spark.sql query by query (both sessions open at once)."""
    from compute.render.spark import spark_session

    spark = spark_session(master)
    try:
        for t in SCHEMA:
            spark.read.parquet(str(data / f"{t}.parquet")).createOrReplaceTempView(t)
        mz, sp = {}, {}
        for name, sql in qs:
            mz[name] = timed(lambda sql=sql: conn.execute(sql).fetchall(), runs)
            sp[name] = timed(lambda sql=sql: [tuple(r) for r in spark.sql(sql).collect()], runs)
            log(f"  {name}: mzspark {_ms(mz[name][0])}, spark.sql {_ms(sp[name][0])}")
        return mz, sp
    finally:
        spark.stop()


def run_sql(conn: Any, label: str, qs: list[tuple[str, str]], runs: int) -> dict[str, tuple[float | None, Any]]:
    out = {}
    for name, sql in qs:
        out[name] = timed(lambda sql=sql: conn.execute(sql).fetchall(), runs)
        log(f"  {label} {name}: {_ms(out[name][0])}")
    return out


def _ms(v: float | None) -> str:
    return "error" if v is None else f"{v:.0f} ms"


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=3, help="timed runs per query after one warm-up")
    ap.add_argument("--queries", help="comma-separated query numbers (default: all 22)")
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--timeout", type=int, default=600, help="statement timeout (s) for mzspark and PostgreSQL")
    ap.add_argument("--no-pg", action="store_true")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--interleave", action="store_true",
                    help="run each query on mzspark then spark.sql before the next (on a shared, loaded "
                         "machine both then see the same load, so their ratio holds)")
    args = ap.parse_args()

    import psycopg

    from tests.integration.harness import MzServer
    from tests.pgref import reference_postgres

    selected = {int(x) for x in args.queries.split(",")} if args.queries else None
    qs = queries(selected)
    data = generate(args.sf)
    streams = {t: copy_stream(data / f"{t}.parquet") for t in SCHEMA}
    results: dict[str, dict[str, tuple[float | None, Any]]] = {}

    log("DuckDB")
    results["duckdb"] = run_duckdb(data, qs, args.runs)

    tmp = Path(tempfile.mkdtemp(prefix="mzspark-tpch-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    log(f"mzspark (log: {server.log_path})")
    server.start()
    try:
        with server.connect() as conn:
            rows, load_s, li_s = load(conn, streams)
            li_rows = conn.execute("SELECT count(*) FROM lineitem").fetchone()[0]
            log(f"  mzspark loaded {rows} rows in {load_s:.1f} s ({rows / load_s:,.0f} rows/s; "
                f"lineitem {li_rows / li_s:,.0f} rows/s)")
            mz_load = (rows, load_s, li_rows / li_s)
            conn.execute(f"SET statement_timeout = '{args.timeout}s'")
            if args.interleave and not args.no_spark:
                results["mzspark"], results["spark"] = run_interleaved(conn, data, qs, args.runs, args.spark_master)
            else:
                results["mzspark"] = run_sql(conn, "mzspark", qs, args.runs)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    pg_load = None
    if not args.no_pg:
        log("PostgreSQL")
        with reference_postgres("tpch-pg-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
            rows, load_s, li_s = load(pg, streams)
            pg_load = (rows, load_s, pg.execute("SELECT count(*) FROM lineitem").fetchone()[0] / li_s)
            for stmt in PG_INDEXES:
                pg.execute(stmt)
            pg.execute("ANALYZE")
            pg.execute(f"SET statement_timeout = '{args.timeout}s'")
            results["postgres"] = run_sql(pg, "postgres", qs, args.runs)

    if not args.no_spark and not args.interleave:
        log("spark.sql")
        results["spark"] = run_spark(data, qs, args.runs, args.spark_master)

    report(args, qs, results, mz_load, pg_load)


def report(args: argparse.Namespace, qs: list[tuple[str, str]], results: dict[str, dict[str, tuple[float | None, Any]]],
           mz_load: tuple[int, float, float], pg_load: tuple[int, float, float] | None) -> None:
    engines = [e for e in ("mzspark", "spark", "duckdb", "postgres") if e in results]
    ref = results["duckdb"]
    print(f"\nTPC-H SF {fmt_sf(args.sf)}, {args.spark_master}, median of {args.runs} runs (ms); "
          "answers checked against DuckDB\n")
    head = "| query | " + " | ".join(f"{e} ms" for e in engines) + " | mzspark / spark.sql | mzspark answer |"
    if "postgres" in results:
        head += " postgres answer |"
    print(head)
    print("|---" * (len(engines) + 3 + ("postgres" in results)) + "|")
    wrong, ratios = [], []
    for name, _ in qs:
        ok = same_answer(results["mzspark"][name][1], ref[name][1])
        if not ok:
            wrong.append(name)
        cells = [_ms(results[e][name][0]).removesuffix(" ms") for e in engines]
        mz_ms, sp_ms = results["mzspark"][name][0], results.get("spark", {}).get(name, (None,))[0]
        ratio = "" if mz_ms is None or sp_ms is None else f"{mz_ms / sp_ms:.2f}x"
        if ratio:
            ratios.append(mz_ms / sp_ms)
        line = f"| {name} | " + " | ".join(cells) + f" | {ratio} | {'ok' if ok else 'WRONG'} |"
        if "postgres" in results:
            line += f" {'ok' if same_answer(results['postgres'][name][1], ref[name][1]) else 'WRONG'} |"
        print(line)
    sums = {e: sum(v[0] for v in results[e].values() if v[0] is not None) for e in engines}
    print("\nsum of medians (s): " + ", ".join(f"{e} {sums[e] / 1000:.1f}" for e in engines))
    if ratios:
        print(f"geometric mean mzspark / spark.sql: {geomean(ratios):.2f}x over {len(ratios)} queries "
              f"(max {max(ratios):.1f}x)")
    print(f"mzspark answers equal to DuckDB's: {len(qs) - len(wrong)} / {len(qs)}"
          + (f"; wrong or failed: {', '.join(wrong)}" if wrong else ""))
    for name in wrong:
        got, want = results["mzspark"][name][1], ref[name][1]
        if isinstance(got, str):
            print(f"  {name}: {got}")
        else:
            print(f"  {name}: {len(got)} rows, DuckDB {len(want)}; first rows (mzspark | DuckDB):")
            for g, w in list(zip(got, want, strict=False))[:3]:
                print(f"    {tuple(g)} | {tuple(w)}")
    rows, s, li = mz_load
    print(f"load through COPY FROM STDIN: mzspark {rows:,} rows in {s:.1f} s (lineitem {li:,.0f} rows/s)"
          + (f"; PostgreSQL {pg_load[1]:.1f} s (lineitem {pg_load[2]:,.0f} rows/s)" if pg_load else ""))


if __name__ == "__main__":
    main()
