"""Soak: the shared sqllogictest corpus from concurrent clients against one server for hours.

    .venv/bin/python benches/soak.py [--minutes 120] [--clients 3] [--every 60]
        [--spark-master local[2]] [--csv samples.csv] [--files select1.test,evidence]

Each of `--clients` workers (its own connection per file, as `make slt --jobs`) takes the next
corpus file (`../shared/slt/sqlite/`, biggest first) and runs it in a fresh schema; when the
corpus is done it starts over (round 2, ...). No file is started after the deadline; a file
whose previous run would end more than 10 minutes past it is passed over for the next one.
Every `--every` seconds a sampler records, from outside the server:
- JVM heap used after a full GC (`jcmd <jvm> GC.run`, then `GC.heap_info`);
- resident memory (VmRSS) of the server's Python process and of its JVM;
- open file descriptors of both;
- Spark storage memory and cached RDDs (`mz_internal.mzspark_spark_storage`, over pgwire).
Printed at the end: the samples (every tenth), each series' least-squares slope per hour
over the whole run and over its second half (the first half includes warm-up: class loading,
JIT, caches), and per round and file the records passed / failed / skipped, the failures of
records PostgreSQL 15 passes (`tests/slt/pg_expected/`) and the internal errors (SQLSTATE
XX000). Exit status 1 when a record PostgreSQL passes failed or an internal error occurred.
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benches.load import _children, fds  # noqa: E402

SERIES = ("heap_after_gc_mb", "server_rss_mb", "jvm_rss_mb", "server_fds", "jvm_fds", "spark_storage_mb", "cached_rdds")
OVERRUN_S = 600.0


def rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def heap_after_gc_mb(jvm: int | None) -> float | None:
    """Heap used right after a full collection (G1's `used` of GC.heap_info), in MB."""
    if jvm is None:
        return None
    try:
        subprocess.run(["jcmd", str(jvm), "GC.run"], capture_output=True, timeout=120, check=True)
        out = subprocess.run(["jcmd", str(jvm), "GC.heap_info"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"heap\s+total \d+K, used (\d+)K", out)
    return int(m.group(1)) / 1024 if m else None


def jvm_of(pid: int) -> int | None:
    """The server's JVM: its child process running java."""
    for c in _children(pid):
        try:
            if Path(f"/proc/{c}/comm").read_text().strip() == "java":
                return c
        except OSError:
            continue
    return None


def slope_per_hour(ts: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ys over ts (seconds), per hour."""
    if len(ts) < 3:
        return None
    mt, my = statistics.fmean(ts), statistics.fmean(ys)
    den = sum((t - mt) ** 2 for t in ts)
    return None if den == 0 else 3600 * sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / den


@dataclass
class Tally:
    runs: list[tuple[int, str, int, int, int, int, int, float, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=120.0)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--csv", type=Path, help="append every sample here as it is taken")
    ap.add_argument("--files", default="", help="comma-separated corpus paths (default: the whole corpus)")
    args = ap.parse_args()
    if args.csv:
        args.csv.unlink(missing_ok=True)

    import psycopg

    from tests.integration.harness import MzServer
    from tests.slt.expected import has_expected, worse_than_pg
    from tests.slt.runner import (
        DEFAULT_CORPUS,
        PgConnection,
        RunOptions,
        SchemaSetup,
        collect_files,
        file_label,
        parse_file,
        run_records,
        schema_name,
    )

    paths = [DEFAULT_CORPUS / p for p in args.files.split(",") if p] or [DEFAULT_CORPUS]
    files = sorted(collect_files(paths), key=lambda p: -p.stat().st_size)
    records = {f: parse_file(f) for f in files}
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    server.start(timeout=600)
    assert server.proc is not None
    pid = server.proc.pid
    jvm = jvm_of(pid)
    t0 = time.monotonic()
    deadline = t0 + args.minutes * 60
    samples: list[dict[str, float | None]] = []
    stop = threading.Event()
    tally = Tally()
    last: dict[Path, float] = {}
    queue_lock = threading.Lock()
    cursor = [0]  # files handed out so far, over all rounds
    opts = RunOptions(timeout_s=120)

    def sample() -> None:
        with psycopg.connect(server.dsn, autocommit=True) as c:
            while True:
                row = c.execute("SELECT memory_bytes, cached_rdds FROM mz_internal.mzspark_spark_storage").fetchone()
                samples.append(smp := {
                    "t_s": time.monotonic() - t0, "heap_after_gc_mb": heap_after_gc_mb(jvm),
                    "server_rss_mb": rss_mb(pid), "jvm_rss_mb": rss_mb(jvm),
                    "server_fds": fds(pid), "jvm_fds": fds(jvm),
                    "spark_storage_mb": (row[0] or 0) / 2**20 if row else None,
                    "cached_rdds": row[1] if row else None,
                })
                if args.csv:  # as it goes: a run cut short keeps its samples
                    with args.csv.open("a", newline="") as fh:
                        w = csv.DictWriter(fh, fieldnames=["t_s", *SERIES])
                        if fh.tell() == 0:
                            w.writeheader()
                        w.writerow(smp)
                if stop.wait(args.every):
                    return

    def worker() -> None:
        while True:
            with queue_lock:
                now = time.monotonic()
                if now >= deadline:
                    return
                # the next file whose last run would end in time (a long one is passed over)
                for _ in range(len(files)):
                    f = files[cursor[0] % len(files)]
                    rnd = cursor[0] // len(files) + 1
                    cursor[0] += 1
                    if now + last.get(f, 0.0) <= deadline + OVERRUN_S:
                        break
                else:
                    return
            label = file_label(f)
            s = time.monotonic()
            res = run_records(records[f], lambda: PgConnection(server.dsn, opts.timeout_s), label, opts,
                              setup=SchemaSetup(schema_name(label)))
            last[f] = time.monotonic() - s
            worse = len(worse_than_pg(res)) if has_expected(label) else 0
            internal = sum(1 for st in res.error_states.values() if st == "XX000")
            with tally.lock:
                tally.runs.append((rnd, label, res.passed, res.failed, res.skipped, worse, internal, last[f], res.aborted))
            print(f"[{(time.monotonic() - t0) / 60:6.1f} min] round {rnd} {label}: {res.passed} passed, {res.failed} failed, "
                  f"{res.skipped} skipped, PG-passes failed {worse}, internal {internal}, {last[f]:.0f} s"
                  + (f" ({res.aborted})" if res.aborted else ""), file=sys.stderr, flush=True)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    workers = [threading.Thread(target=worker, daemon=True) for _ in range(args.clients)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        stop.set()
        sampler.join(timeout=300)
        server.stop()
    elapsed = (time.monotonic() - t0) / 60
    shutil.rmtree(tmp, ignore_errors=True)

    print(f"\nsoak: {args.clients} clients, {elapsed:.1f} min, {len(tally.runs)} file runs, "
          f"{len(samples)} samples every {args.every:.0f} s, server {args.spark_master}\n")
    print("| min | " + " | ".join(SERIES) + " |")
    print("|---:|" + "---:|" * len(SERIES))
    for i, smp in enumerate(samples):
        if i % 10 == 0 or i == len(samples) - 1:
            print(f"| {smp['t_s'] / 60:.0f} | " + " | ".join("n/a" if smp[k] is None else f"{smp[k]:.1f}" for k in SERIES) + " |")
    print("\n| series | first | last | slope / hour (whole run) | slope / hour (second half) |")
    print("|---|---:|---:|---:|---:|")
    half = len(samples) // 2
    for k in SERIES:
        pts = [(float(s["t_s"] or 0), float(s[k])) for s in samples if s[k] is not None]
        late = [(float(s["t_s"] or 0), float(s[k])) for s in samples[half:] if s[k] is not None]
        whole = slope_per_hour([t for t, _ in pts], [y for _, y in pts])
        second = slope_per_hour([t for t, _ in late], [y for _, y in late])
        fmt = lambda x: "n/a" if x is None else f"{x:+.2f}"  # noqa: E731
        print(f"| {k} | {fmt(pts[0][1] if pts else None)} | {fmt(pts[-1][1] if pts else None)} | {fmt(whole)} | {fmt(second)} |")
    print("\n| round | files | passed | failed | skipped | failed that PostgreSQL passes | internal (XX000) | aborted |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    bad = 0
    for rnd in sorted({r[0] for r in tally.runs}):
        rs = [r for r in tally.runs if r[0] == rnd]
        worse, internal = sum(r[5] for r in rs), sum(r[6] for r in rs)
        bad += worse + internal
        print(f"| {rnd} | {len(rs)} | {sum(r[2] for r in rs)} | {sum(r[3] for r in rs)} | {sum(r[4] for r in rs)} "
              f"| {worse} | {internal} | {sum(1 for r in rs if r[8])} |")
    for r in tally.runs:
        if r[5] or r[6] or r[8]:
            print(f"  round {r[0]} {r[1]}: PG-passes failed {r[5]}, internal {r[6]}, aborted {r[8]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
