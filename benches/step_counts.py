"""Load-independent costs of one maintained step: Spark jobs, DataFrame analyses and py4j
round trips per 1-row step, and the driver's Python time (wall minus the time spent waiting
for the JVM in py4j calls). Timings on a loaded machine mislead; these counts do not.

    PYTHONPATH=. python benches/step_counts.py [--rows 100000] [--steps 6] [--mode flow,server] [--profile 15]

flow   — the join + aggregate view of benches/maintained_step.py (issue 10 (a)) on the delta
         renderer in-process: per 1-row step (insert / delete of one f row, read back from a
         batch file as the controller does), `flow.step` plus collecting its output.
server — issue 10 (b) in-process: a Coordinator with its compute controller (as
         tests/integration/test_read_inside_step.py), an index on the filter + join +
         aggregate view of benches/maintained.py; per step one 1-row INSERT followed by the
         SELECT that must see it; the controller's step (on its thread) and the whole
         INSERT -> visible path are counted apart.

Counted: Spark jobs by the DAG scheduler's next job id; `spark.sql` calls (and
compute.render.driver_calls.sql_frame's); DataFrames built (each Python DataFrame is one
analyzed plan: spark.sql, select, drop, createDataFrame, ...); py4j round trips (the
connections' send_command, every thread; not py4j's asynchronous releases of Java
references). `py4j ms`: the measuring thread's time in py4j calls (JVM work, Spark jobs
included); `python ms`: the rest of its wall time (the driver's Python work). `--profile N`: the N
functions with the most Python self time over the steps (cProfile, the calling thread).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@dataclass
class Counts:
    jobs: int = 0
    sql: int = 0
    frames: int = 0
    py4j: int = 0
    py4j_s: float = 0.0  # the measuring thread's time in py4j calls (JVM work, Spark jobs included)
    wall_s: float = 0.0
    rules: int = 0  # analyzer / optimizer rule runs (RuleExecutor's metrics, every thread)
    rules_s: float = 0.0  # ... and their time
    jvm_cpu_s: float = 0.0  # CPU time of the JVM thread serving the measuring thread's py4j calls
    phases: tuple = (0.0, 0.0, 0.0, 0.0)  # QueryExecution tracker ms: parsing, analysis, optimization, planning

    def row(self) -> tuple:
        return (self.jobs, self.sql, self.frames, self.py4j, self.py4j_s, self.wall_s, self.rules, self.rules_s, self.jvm_cpu_s,
                *self.phases)


@dataclass
class Meter:
    """Global counters (every thread): py4j round trips and their time, spark.sql calls,
    DataFrames built."""

    py4j: int = 0
    waited: dict[int, float] = field(default_factory=dict)  # by thread: time in py4j calls
    released: int = 0  # py4j's releases of Java references (not in py4j)
    sql: int = 0
    frames: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    installed: bool = False
    counting_off: set[int] = field(default_factory=set)  # threads reading the job id
    # --trace: py4j calls by (the project's innermost caller, Java method)
    trace: dict[tuple[str, str], int] | None = None
    trace_rules: dict[tuple[str, str], int] = field(default_factory=dict)  # ... and the rule runs they ran
    # the Java Datasets of the DataFrames built while measuring (their QueryExecution trackers)
    plans: list[Any] | None = None

    def traced(self, command: str) -> None:
        parts = command.split("\n")
        method = parts[2] if len(parts) > 2 and parts[0] == "c" else parts[0]
        f: Any = sys._getframe(2)
        where = "?"
        while f is not None:
            fn = f.f_code.co_filename
            if "/site-packages/" not in fn and "step_counts" not in fn and "/lib/python3" not in fn:
                where = f"{Path(fn).name}:{f.f_code.co_name}:{f.f_lineno}"
                break
            f = f.f_back
        with self.lock:
            assert self.trace is not None
            self.trace[(where, method)] = self.trace.get((where, method), 0) + 1

    def rule_runs(self) -> int:
        """Analyzer / optimizer rule runs so far (every thread); its own calls not counted."""
        from pyspark import SparkContext

        me = threading.get_ident()
        with self.lock:
            self.counting_off.add(me)
        try:
            return int(SparkContext._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor.getCurrentMetrics().numRuns())  # type: ignore[union-attr]
        finally:
            with self.lock:
                self.counting_off.discard(me)

    def traced_rules(self, command: str, runs: int) -> None:
        parts = command.split("\n")
        method = parts[2] if len(parts) > 2 and parts[0] == "c" else parts[0]
        key = (self.caller(), method)
        with self.lock:
            self.trace_rules[key] = self.trace_rules.get(key, 0) + runs

    @staticmethod
    def caller() -> str:
        f: Any = sys._getframe(3)
        while f is not None:
            fn = f.f_code.co_filename
            if "/site-packages/" not in fn and "step_counts" not in fn and "/lib/python3" not in fn:
                return f"{Path(fn).name}:{f.f_code.co_name}:{f.f_lineno}"
            f = f.f_back
        return "?"

    def print_trace(self, steps: int) -> None:
        assert self.trace is not None
        print(f"\npy4j calls per step by caller and Java method ({sum(self.trace.values()) / steps:.1f} per step)")
        for (where, method), n in sorted(self.trace.items(), key=lambda kv: -kv[1]):
            print(f"{n / steps:>7.1f}  {where:<55} {method}  ({self.trace_rules.get((where, method), 0) / steps:.0f} rule runs)")
        self.trace = None
        self.trace_rules = {}

    def install(self) -> None:
        if self.installed:
            return
        self.installed = True
        from py4j import clientserver, java_gateway
        from pyspark.sql import SparkSession
        from pyspark.sql.classic.dataframe import DataFrame

        meter = self

        def wrap_send(cls: Any) -> None:
            orig = cls.send_command

            def send_command(self: Any, *a: Any, **k: Any) -> Any:
                command = a[0] if a else k.get("command", "")
                if command.startswith("m\nd\n"):
                    # a Java reference released (py4j's finalizer thread, asynchronous)
                    with meter.lock:
                        meter.released += 1
                    return orig(self, *a, **k)
                if threading.get_ident() in meter.counting_off:
                    return orig(self, *a, **k)
                if meter.trace is not None:
                    meter.traced(command)
                before = meter.rule_runs() if meter.trace is not None else 0
                t = time.perf_counter()
                try:
                    return orig(self, *a, **k)
                finally:
                    if meter.trace is not None:
                        meter.traced_rules(command, meter.rule_runs() - before)
                    me = threading.get_ident()
                    with meter.lock:
                        meter.py4j += 1
                        meter.waited[me] = meter.waited.get(me, 0.0) + time.perf_counter() - t

            cls.send_command = send_command

        wrap_send(clientserver.ClientServerConnection)
        wrap_send(java_gateway.GatewayConnection)
        orig_sql = SparkSession.sql

        def sql(self: Any, *a: Any, **k: Any) -> Any:
            with meter.lock:
                meter.sql += 1
            return orig_sql(self, *a, **k)

        SparkSession.sql = sql  # type: ignore[method-assign]
        # compute.render.driver_calls.sql_frame: spark.sql in one py4j call (bound by name
        # in the modules importing it)
        try:
            from compute.render import driver_calls

            orig_frame = driver_calls.sql_frame

            def sql_frame(spark: Any, q: str) -> Any:
                with meter.lock:
                    meter.sql += 1
                return orig_frame(spark, q)

            for mod in list(sys.modules.values()):
                if getattr(mod, "sql_frame", None) is orig_frame:
                    mod.sql_frame = sql_frame  # type: ignore[attr-defined]
        except ImportError:  # (an earlier version)
            pass
        orig_init = DataFrame.__init__

        def init(self: Any, *a: Any, **k: Any) -> None:
            with meter.lock:
                meter.frames += 1
                if meter.plans is not None and a:
                    meter.plans.append(a[0])
            orig_init(self, *a, **k)

        DataFrame.__init__ = init  # type: ignore[method-assign]

    def snapshot(self, spark: Any) -> tuple:
        """(next job id, spark.sql calls, DataFrames, py4j calls, this thread's time in
        py4j calls, rule runs, rule ns, JVM thread CPU ns); the snapshot's own calls are not
        counted."""
        me = threading.get_ident()
        with self.lock:
            py4j, py4j_s, sql, frames = self.py4j, self.waited.get(me, 0.0), self.sql, self.frames
            self.counting_off.add(me)
        try:
            jvm = spark._jvm
            jobs = int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())
            m = jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor.getCurrentMetrics()
            cpu = jvm.java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime()
        finally:
            with self.lock:
                self.counting_off.discard(me)
        return jobs, sql, frames, py4j, py4j_s, int(m.numRuns()), int(m.time()), int(cpu)

    def phases(self, spark: Any, jdfs: list[Any]) -> tuple:
        """Summed QueryExecution tracker phases (ms) of the Datasets `jdfs`."""
        me = threading.get_ident()
        with self.lock:
            self.counting_off.add(me)
        out = dict.fromkeys(("parsing", "analysis", "optimization", "planning"), 0.0)
        try:
            for j in jdfs:
                try:
                    ph = j.queryExecution().tracker().phases()
                except Exception:  # noqa: BLE001 - not a Dataset
                    continue
                it = ph.iterator()
                while it.hasNext():
                    kv = it.next()
                    name = kv._1()
                    if name in out:
                        out[name] += kv._2().durationMs()
        finally:
            with self.lock:
                self.counting_off.discard(me)
        return tuple(out.values())

    @contextmanager
    def measure(self, spark: Any, into: list[Counts]):
        outer, self.plans = self.plans, []
        a = self.snapshot(spark)
        t = time.perf_counter()
        yield
        wall = time.perf_counter() - t
        b = self.snapshot(spark)
        jdfs = self.plans or []
        self.plans = None if outer is None else outer + jdfs
        into.append(Counts(b[0] - a[0], b[1] - a[1], b[2] - a[2], b[3] - a[3], b[4] - a[4], wall, b[5] - a[5], (b[6] - a[6]) / 1e9,
                           (b[7] - a[7]) / 1e9, self.phases(spark, jdfs)))


METER = Meter()


def print_table(title: str, rows: list[Counts]) -> None:
    print(f"\n{title}")
    print(f"{'step':>5} {'jobs':>5} {'spark.sql':>9} {'DataFrames':>10} {'py4j':>6} {'py4j ms':>8} {'python ms':>9} {'wall ms':>8}"
          f" {'rule runs':>9} {'rule ms':>8} {'jvm cpu ms':>10} {'parse':>6} {'analyze':>7} {'optimize':>8} {'plan':>6}")

    def line(label: str, r: tuple) -> str:
        jobs, sql, frames, py4j, py4j_s, wall, rules, rules_s, cpu, *ph = r
        return (f"{label:>5} {jobs:>5g} {sql:>9g} {frames:>10g} {py4j:>6g} {py4j_s * 1000:>8.0f} {(wall - py4j_s) * 1000:>9.0f}"
                f" {wall * 1000:>8.0f} {rules:>9g} {rules_s * 1000:>8.0f} {cpu * 1000:>10.0f}"
                f" {ph[0]:>6.0f} {ph[1]:>7.0f} {ph[2]:>8.0f} {ph[3]:>6.0f}")

    for i, c in enumerate(rows):
        print(line(str(i), c.row()))
    if rows:
        print(line("med", tuple(statistics.median(x) for x in zip(*(c.row() for c in rows), strict=True))))


@contextmanager
def profiled(top: int):
    if not top:
        yield
        return
    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
        print(out.getvalue())


# -- flow: the delta renderer in-process (issue 10 (a)) ------------------------------------------

def bench_flow(rows: int, steps: int, top: int, trace: bool = False) -> None:
    from benches.maintained_step import VIEW, _delta_batch, _plan
    from compute.render.delta import DeltaDataflow
    from compute.render.spark import collect_arrow, spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    gs.run("CREATE TABLE f (k int, v int)")
    gs.run("CREATE TABLE d (k int, g int)")
    spark = spark_session()
    METER.install()
    keys, groups = max(rows // 16, 1), max(rows // 160, 1)
    df = _plan(gs, VIEW)
    ids = {qn.split(".")[-1]: sid for sid, qn in df.sources}
    f = spark.sql(f"SELECT CAST(id % {keys} AS INT) AS c0, CAST(id % 100 AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({rows})").cache()
    d = spark.sql(f"SELECT CAST(id AS INT) AS c0, CAST(id % {groups} AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({keys})").cache()
    f.count(), d.count()
    tmp = tempfile.mkdtemp(prefix="step-counts-")
    flow = DeltaDataflow(spark, df)
    flow.hydrate({ids["f"]: f, ids["d"]: d})
    # warm-up steps (first-use costs: sessions, code paths), not counted
    for s in range(2):
        collect_arrow(flow.step({ids["f"]: _delta_batch(spark, tmp, 1000 + s, s, 1 - 2 * (s % 2))}), small=False)
    read: list[Counts] = []
    step: list[Counts] = []
    with profiled(top):
        for s in range(steps):
            with METER.measure(spark, read):
                batch = _delta_batch(spark, tmp, s, (s * 7919) % keys, 1 if s % 2 == 0 else -1)
            METER.trace = {} if trace else None
            with METER.measure(spark, step):
                collect_arrow(flow.step({ids["f"]: batch}), small=False)
            if trace:
                METER.print_trace(1)
    print_table(f"flow: read a 1-row delta (read_shard_range), {rows} rows of f", read)
    print_table(f"flow: 1-row step of {VIEW} + collect of its output, {rows} rows of f", step)
    flow.close()
    f.unpersist(), d.unpersist()
    gs.coord.close()
    gs.tmp.cleanup()


# -- server: INSERT -> visible through an indexed view (issue 10 (b)) --------------------------

def bench_server(rows: int, steps: int, top: int, trace: bool = False) -> None:
    from compute.controller import Controller
    from server.api import RowsResult
    from server.coordinator import Coordinator

    tmp = tempfile.TemporaryDirectory()
    c = Coordinator(str(Path(tmp.name) / "data"))
    c.start_controller()
    METER.install()
    s = c.new_session("materialize", "materialize", {})

    def run(sql: str) -> list[tuple]:
        r = c.execute(s, c.prepare(s, sql, []), [])
        return [row for batch in r.batches for row in batch] if isinstance(r, RowsResult) else []

    keys, groups = max(rows // 16, 1), max(rows // 160, 1)
    run("CREATE TABLE f (k int, v int)")
    run("CREATE TABLE d (k int, g int)")
    run(f"INSERT INTO f SELECT g % {keys}, g % 100 FROM generate_series(0, {rows - 1}) AS g")
    run(f"INSERT INTO d SELECT g, g % {groups} FROM generate_series(0, {keys - 1}) AS g")
    run("CREATE VIEW v3 AS SELECT d.g, count(*) AS n, sum(f.v) AS s FROM f JOIN d ON f.k = d.k WHERE f.v > 0 GROUP BY d.g")
    run("CREATE INDEX v3_g ON v3 (g)")
    spark = c.spark()
    ctrl_steps: list[Counts] = []
    orig_step = Controller._step
    recording = [False]

    def step(self: Any, m: Any) -> None:
        if not recording[0]:
            return orig_step(self, m)
        before = m.frontier
        box: list[Counts] = []
        with METER.measure(spark, box):
            orig_step(self, m)
        if m.frontier != before and box[0].py4j:  # stepped (not a pass with nothing new)
            ctrl_steps.append(box[0])

    Controller._step = step  # type: ignore[method-assign]
    whole: list[Counts] = []
    reads: list[Counts] = []
    try:
        for k in range(2):  # warm-up
            run(f"INSERT INTO f VALUES ({k}, 1)")
            run(f"SELECT n FROM v3 WHERE g = {k % groups}")
        recording[0] = True
        with profiled(top):
            for i in range(steps):
                k = (i * 7919) % keys
                before = run(f"SELECT n FROM v3 WHERE g = {k % groups}")
                METER.trace = {} if trace else None
                with METER.measure(spark, whole):
                    run(f"INSERT INTO f VALUES ({k}, 1)")
                    box: list[Counts] = []
                    with METER.measure(spark, box):
                        got = run(f"SELECT n FROM v3 WHERE g = {k % groups}")
                    reads.append(box[0])
                assert got[0][0] == (before[0][0] if before else 0) + 1, (before, got)
                if trace:
                    METER.print_trace(1)
        recording[0] = False
    finally:
        Controller._step = orig_step  # type: ignore[method-assign]
    print_table(f"server: the controller's step of the index (its thread), {rows} rows of f", ctrl_steps)
    print_table("server: the SELECT through the index (waits for the step)", reads)
    print_table("server: INSERT -> visible (INSERT + SELECT; every thread's calls)", whole)
    c.close()
    tmp.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000, help="rows of f (the state)")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--mode", default="flow", help="flow, server or flow,server")
    ap.add_argument("--trace", action="store_true", help="print each step's py4j calls by caller")
    ap.add_argument("--profile", type=int, default=0, help="print the N functions with the most Python self time")
    args = ap.parse_args()
    modes = args.mode.split(",")
    if "flow" in modes:
        bench_flow(args.rows, args.steps, args.profile, args.trace)
    if "server" in modes:
        bench_server(args.rows, args.steps, args.profile, args.trace)


if __name__ == "__main__":
    main()
