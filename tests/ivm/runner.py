"""Runs an IVM oracle program on mzspark and PostgreSQL 15 and checks every maintained object
after its creation (hydration) and after every write:

  maintained   `SELECT * FROM obj` on mzspark (the MV, or the view through its index)
  PostgreSQL   `SELECT * FROM obj` where obj is a plain view of the definition (the oracle)
  one-shot     mzspark running the definition itself

maintained = PostgreSQL and maintained = one-shot, as multisets (the oracle's tolerances;
a numeric printed with another scale than PostgreSQL's is `numeric-text`, tolerated against
PostgreSQL — a known class — but not against mzspark's own one-shot result). An object is
reported once, at its first mismatch, and not checked after it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from tests.ivm.program import Obj, Program
from tests.ivm.schema import create_sql
from tests.oracle.compare import Outcome, classify, compare_rows
from tests.oracle.runner import execute

TOLERATED_VS_PG = ("", "numeric-text")


@dataclass
class Mismatch:
    label: str
    obj: Obj
    step: int                 # 0: after CREATE (hydration); i: after the i-th write
    against: str              # "postgres" | "oneshot" | "create" | "write"
    kind: str
    sql: str
    expected: Outcome
    got: Outcome
    repro: str = ""           # a minimized script, when minimized
    minimized_writes: int | None = None

    def report(self) -> str:
        where = "after CREATE" if self.step == 0 else f"after write {self.step}"
        lines = [f"=== {self.label}: {self.obj.name} ({self.obj.kind}, {self.obj.d.family}) {where}: "
                 f"{self.kind} vs {self.against}",
                 f"definition: {self.obj.d.sql}", f"statement: {self.sql}",
                 f"{self.against}: {self.expected.show()}", f"mzspark: {self.got.show()}"]
        if self.repro:
            lines += [f"minimized repro ({self.minimized_writes} writes):", self.repro]
        return "\n".join(lines)


@dataclass
class Stats:
    programs: int = 0
    objects: int = 0
    checks: int = 0
    writes: int = 0
    mz_seconds: float = 0.0
    unsupported: Counter = field(default_factory=Counter)   # family -> objects refused with 0A000
    families: Counter = field(default_factory=Counter)      # family -> objects checked

    def summary(self, wall: float) -> str:
        fam = ", ".join(f"{k}={v}" for k, v in sorted(self.families.items()))
        uns = ", ".join(f"{k}={v}" for k, v in sorted(self.unsupported.items())) or "none"
        return (f"{self.programs} programs, {self.objects} objects, {self.writes} writes, {self.checks} checks "
                f"in {wall:.0f} s ({self.mz_seconds:.0f} s on mzspark); families: {fam}; unsupported: {uns}")


class IvmOracle:
    """`mz_exec` is how statements reach mzspark, `read_exec` how maintained objects are read
    back: over `reader`, a second session when given (a read in another session after an
    acknowledged write must see it: strict serializability). Tests replace both to plant bugs."""

    def __init__(self, mz: psycopg.Connection, pg: psycopg.Connection, *, schema: str = "ivm",
                 oneshot: bool = True, reader: psycopg.Connection | None = None) -> None:
        self.mz, self.pg = mz, pg
        self.reader = reader or mz
        self.schema = schema
        self.oneshot = oneshot
        self.stats = Stats()
        self.mz_exec: Callable[[str], Outcome] = lambda sql: execute(self.mz, sql)
        self.read_exec: Callable[[str], Outcome] = lambda sql: execute(self.reader, sql)
        for conn, timeout in ((mz, "300s"), (self.reader, "300s"), (pg, "30s")):
            execute(conn, f"SET statement_timeout = '{timeout}'")

    # ---- plumbing ---------------------------------------------------------------------

    def run_mz(self, sql: str) -> Outcome:
        t0 = time.monotonic()
        try:
            return self.mz_exec(sql)
        finally:
            self.stats.mz_seconds += time.monotonic() - t0

    def read_mz(self, sql: str) -> Outcome:
        t0 = time.monotonic()
        try:
            return self.read_exec(sql)
        finally:
            self.stats.mz_seconds += time.monotonic() - t0

    def run_pg(self, sql: str) -> Outcome:
        return execute(self.pg, sql)

    def reset(self, p: Program) -> None:
        for run in (self.run_mz, self.run_pg):
            run("SET search_path = public")
            run(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
            for st in [f"CREATE SCHEMA {self.schema}", f"SET search_path = {self.schema}", *create_sql(p.tables)]:
                o = run(st)
                if not o.ok:
                    raise RuntimeError(f"setup failed: {st}: {o.sqlstate} {o.message}")
        if self.reader is not self.mz:
            self.read_mz(f"SET search_path = {self.schema}")

    def drop(self) -> None:
        for run in (self.run_mz, self.run_pg):
            run("SET search_path = public")
            run(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    # ---- one program ------------------------------------------------------------------

    def create(self, p: Program, o: Obj) -> Mismatch | str:
        """'' when created on both sides, 'unsupported' on mzspark's 0A000, 'harness' when
        PostgreSQL rejects the definition (a generator bug: reported, not an mzspark one),
        else the mismatch."""
        for st in o.pg_create():
            r = self.run_pg(st)
            if not r.ok:
                print(f"-- harness: PostgreSQL rejects {st}: {r.sqlstate} {r.message}", flush=True)
                return "harness"
        for st in o.mz_create():
            r = self.run_mz(st)
            if not r.ok:
                if r.sqlstate == "0A000":
                    return "unsupported"
                return Mismatch(p.label, o, 0, "create", "mz-error", st, Outcome(True), r)
        return ""

    def check(self, p: Program, o: Obj, step: int) -> Mismatch | None:
        self.stats.checks += 1
        read = f"SELECT * FROM {o.name}"
        got = self.read_mz(read)
        if o.d.pg_sql is not None:
            pg = self.run_pg(read)
            kind = classify(pg, got)
            if kind not in TOLERATED_VS_PG:
                return Mismatch(p.label, o, step, "postgres", kind, read, pg, got)
            if o.index_col and pg.ok and (m := self.check_lookup(p, o, step, pg)):
                return m
        if self.oneshot or o.d.pg_sql is None:
            one = self.run_mz(o.d.sql)
            if one.ok and got.ok:
                kind = compare_rows(one, got)
            else:
                kind = "" if (one.ok, one.sqlstate) == (got.ok, got.sqlstate) else "error"
            if kind:
                return Mismatch(p.label, o, step, "oneshot", kind, read, one, got)
        return None

    def check_lookup(self, p: Program, o: Obj, step: int, pg: Outcome) -> Mismatch | None:
        """A point lookup by the view's indexed column (a fast-path peek once reads use the
        index), for a value the view holds: the same rows as PostgreSQL's."""
        pos = int(o.index_col[1:]) - 1 if o.index_col else 0
        values = sorted({r[pos] for r in pg.rows if r[pos] is not None})
        if not values:
            return None
        v = values[step % len(values)].replace("'", "''")
        sql = f"SELECT * FROM {o.name} WHERE {o.index_col} = '{v}'"
        pgl, mzl = self.run_pg(sql), self.read_mz(sql)
        kind = classify(pgl, mzl)
        return Mismatch(p.label, o, step, "postgres", kind, sql, pgl, mzl) if kind not in TOLERATED_VS_PG else None

    def apply(self, p: Program, i: int) -> Mismatch | None:
        w = p.writes[i]
        for st in w.statements():
            pg = self.run_pg(st)
            mz = self.run_mz(st)
            if not mz.ok or not pg.ok:
                if pg.ok or mz.ok or pg.sqlstate[:2] != mz.sqlstate[:2]:
                    if w.txn:
                        self.run_pg("ROLLBACK")
                        self.run_mz("ROLLBACK")
                    return Mismatch(p.label, p.objects[0], i + 1, "write", "write-error", st, pg, mz)
        self.stats.writes += 1
        return None

    def run(self, p: Program, *, check_every: bool = True) -> list[Mismatch]:
        """All mismatches of `p` (one per object at most). With `check_every` off, objects
        are checked only after the last write (the minimizer's cheaper trial)."""
        self.stats.programs += 1
        self.reset(p)
        found: list[Mismatch] = []
        live: list[Obj] = []
        for o in p.objects:
            if any(d not in {x.name for x in live} for d in o.d.deps):
                continue   # reads an object that was refused
            r = self.create(p, o)
            if r in ("unsupported", "harness"):
                self.stats.unsupported[o.d.family if r == "unsupported" else f"harness:{o.d.family}"] += 1
            elif isinstance(r, Mismatch):
                found.append(r)
            else:
                live.append(o)
                self.stats.objects += 1
                self.stats.families[o.d.family] += 1

        def check_all(step: int) -> None:
            for o in list(live):
                m = self.check(p, o, step)
                if m is not None:
                    found.append(m)
                    live.remove(o)

        if check_every or not p.writes:
            check_all(0)
        for i in range(len(p.writes)):
            bad = self.apply(p, i)
            if bad is not None:
                found.append(bad)
                break
            if check_every or i == len(p.writes) - 1:
                check_all(i + 1)
            if not live:
                break
        return found
