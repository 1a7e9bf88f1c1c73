"""python -m tests.ivm --seed-start S --count N [--objects K] [--writes W] [--minimize]

The IVM oracle: per seed a random schema of 2–3 tables, K maintained objects (materialized
views, and views with a default index) and W random writes, applied to mzspark and to a
throwaway PostgreSQL 15 (both started here unless --mz-dsn / --pg-dsn point at running ones);
after CREATE and after every write every object must equal PostgreSQL and mzspark's one-shot
SELECT of its definition (objects are read in a second session). Prints every mismatch (minimized with --minimize: a SQL script that
reproduces it) and a summary; exit status 1 when there was one."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time

import psycopg

from tests.ivm.minimize import minimize
from tests.ivm.program import from_seed
from tests.ivm.queries import FAMILIES
from tests.ivm.runner import IvmOracle
from tests.oracle.__main__ import mzspark_server, postgres_c_collation


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.ivm")
    ap.add_argument("--seed-start", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--objects", type=int, default=4, help="maintained objects per seed")
    ap.add_argument("--writes", type=int, default=8, help="writes per seed")
    ap.add_argument("--families", default="", help=f"comma-separated subset of: {', '.join(FAMILIES)}")
    ap.add_argument("--no-oneshot", action="store_true",
                    help="compare with PostgreSQL only (not also with mzspark's one-shot SELECT)")
    ap.add_argument("--minimize", action="store_true", help="shrink each mismatch to a small repro")
    ap.add_argument("--mz-dsn")
    ap.add_argument("--pg-dsn")
    ap.add_argument("--out", help="append mismatches as JSON lines here")
    ap.add_argument("--max-seconds", type=float, default=0, help="stop (with the summary) after this long")
    args = ap.parse_args(argv)
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        ap.error(f"unknown families: {', '.join(sorted(unknown))}")

    # a SIGTERM unwinds like ^C, so the servers this run started are stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        pg_dsn = args.pg_dsn or stack.enter_context(postgres_c_collation())
        mz_dsn = args.mz_dsn or stack.enter_context(mzspark_server())
        mz = stack.enter_context(psycopg.connect(mz_dsn, autocommit=True))
        reader = stack.enter_context(psycopg.connect(mz_dsn, autocommit=True))
        pg = stack.enter_context(psycopg.connect(pg_dsn, autocommit=True))
        oracle = IvmOracle(mz, pg, oneshot=not args.no_oneshot, reader=reader)
        out = open(args.out, "a") if args.out else None  # noqa: SIM115
        bad = 0
        t0 = time.monotonic()
        last = args.seed_start - 1
        try:
            for seed in range(args.seed_start, args.seed_start + args.count):
                if args.max_seconds and time.monotonic() - t0 > args.max_seconds:
                    break
                last = seed
                p = from_seed(seed, objects=args.objects, writes=args.writes, families=families)
                t_seed = time.monotonic()
                try:
                    found = oracle.run(p)
                except (ConnectionError, psycopg.OperationalError) as e:
                    print(f"=== seed {seed}: the connection to mzspark was lost ({e}); stopping\n{p.script()}", flush=True)
                    bad += 1
                    break
                print(f"-- seed {seed}: {len(found)} mismatches, {time.monotonic() - t_seed:.0f} s", flush=True)
                for m in found:
                    bad += 1
                    if args.minimize:
                        small = minimize(oracle, p, m)
                        if small is None:
                            m.repro = "(does not reproduce alone)"
                        else:
                            m.repro, m.minimized_writes = small.script(), len(small.writes)
                    print(m.report(), flush=True)
                    if out:
                        out.write(json.dumps({"seed": seed, "object": m.obj.name, "kind": m.obj.kind,
                                              "family": m.obj.d.family, "definition": m.obj.d.sql,
                                              "step": m.step, "against": m.against, "mismatch": m.kind,
                                              "expected": m.expected.show(), "got": m.got.show(),
                                              "repro": m.repro, "program": p.script()}) + "\n")
                        out.flush()
        finally:
            with contextlib.suppress(ConnectionError, psycopg.OperationalError):
                oracle.drop()
            if out:
                out.close()
            print(f"SUMMARY seeds {args.seed_start}..{last}: {oracle.stats.summary(time.monotonic() - t0)}; "
                  f"mismatches={bad}", flush=True)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
