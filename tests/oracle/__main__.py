"""python -m tests.oracle --seed-start S --count N [--minimize] [--out findings.jsonl]

Starts a throwaway PostgreSQL 15 and an mzspark server (unless --mz-dsn / --pg-dsn point at
running ones), runs seeds S … S+N-1 and prints every discrepancy with its seed, SQL and both
outcomes, then a summary with queries/s. Exit status 1 when there were unexplained
discrepancies."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

from tests.oracle.gen import TIERS
from tests.oracle.runner import Finding, Oracle
from tests.pgref import reference_postgres

NOT_DISCREPANCIES = ("unsupported",)


@contextlib.contextmanager
def postgres_c_collation() -> Iterator[str]:
    """A throwaway PostgreSQL with a C-collated database (mzspark orders text by bytes)."""
    with reference_postgres("oracle-pg-") as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE oracle TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        yield dsn.replace("dbname=postgres", "dbname=oracle")


@contextlib.contextmanager
def mzspark_server() -> Iterator[str]:
    from tests.integration.harness import MzServer
    base = Path(tempfile.mkdtemp(prefix="oracle-mz-"))
    server = MzServer(base / "mzdata", base / "server.log")
    server.start()
    try:
        yield server.dsn
    finally:
        server.stop()


def is_discrepancy(f: Finding) -> bool:
    return f.kind not in NOT_DISCREPANCIES and not f.known


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracle")
    ap.add_argument("--seed-start", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--tier", choices=TIERS, default="full",
                    help="full: nested queries; light: one or two tables, no nesting (faster on Spark)")
    ap.add_argument("--mz-dsn")
    ap.add_argument("--pg-dsn")
    ap.add_argument("--minimize", action="store_true", help="shrink each discrepancy (delta debugging)")
    ap.add_argument("--out", help="append findings as JSON lines here")
    ap.add_argument("--show-unsupported", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=0, help="stop (with the summary) after this long")
    ap.add_argument("--progress", type=int, default=500, help="print a summary every N seeds")
    args = ap.parse_args(argv)

    with contextlib.ExitStack() as stack:
        pg_dsn = args.pg_dsn or stack.enter_context(postgres_c_collation())
        mz_dsn = args.mz_dsn or stack.enter_context(mzspark_server())
        mz = stack.enter_context(psycopg.connect(mz_dsn, autocommit=True))
        pg = stack.enter_context(psycopg.connect(pg_dsn, autocommit=True))
        oracle = Oracle(mz, pg, tier=args.tier)
        out = open(args.out, "a") if args.out else None  # noqa: SIM115
        bad = 0
        t0 = time.monotonic()
        try:
            last = args.seed_start - 1
            for i, seed in enumerate(range(args.seed_start, args.seed_start + args.count)):
                if args.max_seconds and time.monotonic() - t0 > args.max_seconds:
                    break
                last = seed
                t_seed = time.monotonic()
                found = oracle.run_seed(seed, args.minimize)
                if time.monotonic() - t_seed > 30:
                    print(f"-- slow seed {seed}: {time.monotonic() - t_seed:.0f} s", flush=True)
                for f in found:
                    if is_discrepancy(f):
                        bad += 1
                    if is_discrepancy(f) or args.show_unsupported:
                        print(f.report(), flush=True)
                    if out:
                        out.write(json.dumps({"seed": f.seed, "tier": f.tier, "mode": f.mode, "kind": f.kind, "known": f.known,
                                              "sql": f.sql, "minimized": f.minimized,
                                              "pg": f.pg.show(), "mz": f.mz.show(),
                                              "other_sql": f.other_sql,
                                              "other_mz": f.other_mz.show() if f.other_mz else None}) + "\n")
                        out.flush()
                if args.progress and (i + 1) % args.progress == 0:
                    print(f"-- seed {seed}: {oracle.stats.summary(time.monotonic() - t0)}", flush=True)
        finally:
            oracle.close()
            if out:
                out.close()
        print(f"SUMMARY {args.tier} seeds {args.seed_start}..{last}: "
              f"{oracle.stats.summary(time.monotonic() - t0)}; discrepancies={bad}", flush=True)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
