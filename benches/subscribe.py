"""SUBSCRIBE latency and drain rate through pgwire (DESIGN §6; goal: p50 insert -> receive
<= 0.3 s).

    PYTHONPATH=. python benches/subscribe.py [--inserts 20] [--drain-rows 20000] [--spark-master local[2]]

1. Starts mzspark (the integration harness) on a fresh data directory.
2. Latency: one subscriber (`COPY (SUBSCRIBE t) TO STDOUT` in a thread, psycopg 3) and one
   writer; the writer inserts one row (its value = a sequence number), records the time
   the INSERT was acknowledged (the write is durable), and waits until the subscriber has
   received that row; `--inserts` times, one warm-up first. Reports the latency from the
   acknowledgement to the subscriber receiving the row: p50 / p95 / max, and the latency
   from sending the INSERT.
3. Drain: `--drain-rows` rows are inserted in one INSERT; the time from its
   acknowledgement until the subscriber has received all of them gives updates/s (one
   step renders them; the rest is collecting and streaming over pgwire).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inserts", type=int, default=20)
    ap.add_argument("--drain-rows", type=int, default=20000)
    ap.add_argument("--spark-master", default="local[2]")
    args = ap.parse_args()

    from tests.integration.harness import MzServer

    tmp = Path(tempfile.mkdtemp(prefix="bench-subscribe-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log")
    server.start()
    try:
        run(server, args)
    finally:
        server.stop()


def run(server, args) -> None:  # noqa: ANN001
    w = server.connect()
    w.execute("CREATE TABLE t (seq int, pad text)")
    received: dict[int, float] = {}
    cond = threading.Condition()
    sub = server.connect()

    def reader() -> None:
        import psycopg

        try:
            with sub.cursor() as cur, cur.copy("COPY (SUBSCRIBE t WITH (SNAPSHOT = false)) TO STDOUT") as cp:
                for row in cp.rows():
                    with cond:
                        received[int(row[2])] = time.perf_counter()
                        cond.notify_all()
        except psycopg.errors.QueryCanceled:
            pass

    th = threading.Thread(target=reader, daemon=True)
    th.start()

    def wait_for(seqs: range, timeout: float = 600) -> None:
        deadline = time.perf_counter() + timeout
        with cond:
            while not all(s in received for s in seqs):
                if not cond.wait(max(0.0, deadline - time.perf_counter())):
                    raise TimeoutError(f"rows {seqs} not received")

    acked, sent = [], []
    for i in range(args.inserts + 1):
        t0 = time.perf_counter()
        w.execute("INSERT INTO t VALUES (%s, 'x')", [i])
        t1 = time.perf_counter()
        wait_for(range(i, i + 1))
        if i > 0:  # the first is a warm-up
            acked.append(received[i] - t1)
            sent.append(received[i] - t0)
        print(f"insert {i}: ack {1000 * (t1 - t0):.0f} ms, received {1000 * (received[i] - t1):.0f} ms after", file=sys.stderr)
    base = 1_000_000
    t0 = time.perf_counter()
    w.execute(f"INSERT INTO t SELECT g, 'y' FROM generate_series({base}, {base + args.drain_rows - 1}) AS g")
    t1 = time.perf_counter()
    wait_for(range(base, base + args.drain_rows))
    last = max(received[s] for s in range(base, base + args.drain_rows))
    sub.cancel()
    th.join(30)
    print("| measure | value |")
    print("|---|---|")
    print(f"| insert ack -> subscriber receives, p50 | {1000 * statistics.median(acked):.0f} ms |")
    print(f"| insert ack -> subscriber receives, p95 | {1000 * _pct(acked, 0.95):.0f} ms |")
    print(f"| insert ack -> subscriber receives, max | {1000 * max(acked):.0f} ms |")
    print(f"| insert sent -> subscriber receives, p50 | {1000 * statistics.median(sent):.0f} ms |")
    print(f"| drain: {args.drain_rows} rows in one INSERT, ack -> last received | {1000 * (last - t1):.0f} ms "
          f"({args.drain_rows / (last - t1):.0f} updates/s) |")


if __name__ == "__main__":
    main()
