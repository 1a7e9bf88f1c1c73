"""Runs generated queries on mzspark and PostgreSQL 15 over one connection each and checks
them: differential (same multiset of rows, or errors of the same SQLSTATE class) and, with no
second engine needed, TLP and NoREC on mzspark."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import psycopg
from psycopg import pq

from tests.oracle.ast import N
from tests.oracle.compare import Outcome, classify, compare_rows
from tests.oracle.gen import Query, generate
from tests.oracle.known import known_reason
from tests.oracle.minimize import minimize
from tests.oracle.schema import random_schema, setup_sql

SCHEMA_BLOCK = 250   # seeds sharing one random schema: seed // SCHEMA_BLOCK picks it


def _unref(message: str) -> str:
    """An error message without the per-occurrence reference of internal errors."""
    return re.sub(r"\[[0-9a-f]{12}\]", "[…]", message)


def execute(conn: psycopg.Connection, sql: str) -> Outcome:
    """One simple-protocol statement; the cells as the server's text."""
    res = conn.pgconn.exec_(sql.encode())
    if conn.pgconn.status != pq.ConnStatus.OK:
        raise ConnectionError(f"connection lost: {conn.pgconn.error_message.decode(errors='replace')}")
    match res.status:
        case pq.ExecStatus.TUPLES_OK:
            nf = res.nfields
            oids = tuple(res.ftype(j) for j in range(nf))
            rows = tuple(tuple(None if (v := res.get_value(i, j)) is None else v.decode() for j in range(nf))
                         for i in range(res.ntuples))
            return Outcome(True, rows, oids)
        case pq.ExecStatus.COMMAND_OK | pq.ExecStatus.EMPTY_QUERY:
            return Outcome(True)
        case _:
            state = res.error_field(pq.DiagnosticField.SQLSTATE) or b"?????"
            msg = res.error_field(pq.DiagnosticField.MESSAGE_PRIMARY) or b""
            return Outcome(False, sqlstate=state.decode(), message=msg.decode(errors="replace"))


@dataclass
class Finding:
    seed: int
    mode: str
    kind: str
    sql: str
    pg: Outcome
    mz: Outcome
    other_sql: str | None = None
    other_mz: Outcome | None = None
    known: str = ""
    minimized: str | None = None
    tier: str = "full"

    def report(self) -> str:
        lines = [f"=== seed {self.seed} {self.tier} [{self.mode}] {self.kind}" + (f" (known: {self.known})" if self.known else ""),
                 f"SQL: {self.sql}"]
        if self.minimized:
            lines.append(f"MINIMIZED: {self.minimized}")
        if self.other_sql is not None and self.other_mz is not None:
            lines += [f"PARTNER SQL: {self.other_sql}", f"mzspark Q: {self.mz.show()}",
                      f"mzspark partner: {self.other_mz.show()}"]
        else:
            lines += [f"PostgreSQL: {self.pg.show()}", f"mzspark: {self.mz.show()}"]
        return "\n".join(lines)


@dataclass
class Stats:
    seeds: int = 0
    queries: int = 0          # statements run on mzspark (not counting schema setup)
    mz_seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)

    def summary(self, wall: float) -> str:
        qps = self.queries / wall if wall else 0.0
        parts = ", ".join(f"{k}={v}" for k, v in sorted(self.outcomes.items()))
        return (f"{self.seeds} seeds, {self.queries} mzspark queries in {wall:.0f} s "
                f"({qps:.1f} queries/s; {self.mz_seconds / max(self.queries, 1) * 1000:.0f} ms per query on mzspark); {parts}")


class Oracle:
    def __init__(self, mz: psycopg.Connection, pg: psycopg.Connection, *, block: int = SCHEMA_BLOCK,
                 prefix: str = "o", tier: str = "full") -> None:
        self.tier = tier
        self.mz, self.pg = mz, pg
        self.block_size = block
        self.prefix = prefix
        self.block: int | None = None
        self.pool = ThreadPoolExecutor(1)
        self.stats = Stats()
        for conn, timeout in ((mz, "120s"), (pg, "20s")):
            execute(conn, f"SET statement_timeout = '{timeout}'")

    def close(self) -> None:
        self.drop_schema()
        self.pool.shutdown()

    # ---- schema -----------------------------------------------------------------------

    def schema_name(self, block: int) -> str:
        return f"{self.prefix}{block}"

    def drop_schema(self) -> None:
        if self.block is not None:
            for conn in (self.mz, self.pg):
                execute(conn, "SET search_path = public")
                execute(conn, f"DROP SCHEMA IF EXISTS {self.schema_name(self.block)} CASCADE")
            self.block = None

    def use_block(self, block: int) -> None:
        if block == self.block:
            return
        self.drop_schema()
        name = self.schema_name(block)
        for conn in (self.mz, self.pg):
            execute(conn, f"DROP SCHEMA IF EXISTS {name} CASCADE")
            for st in setup_sql(name, random_schema(block)):
                o = execute(conn, st)
                if not o.ok:
                    raise RuntimeError(f"schema setup failed: {st}: {o.sqlstate} {o.message}")
            execute(conn, f"SET search_path = {name}")
        self.block = block

    # ---- running ----------------------------------------------------------------------

    def run_mz(self, sql: str) -> Outcome:
        return execute(self.mz, sql)

    def both(self, sql: str) -> tuple[Outcome, Outcome]:
        fut = self.pool.submit(execute, self.pg, sql)
        t0 = time.monotonic()
        mz = self.run_mz(sql)
        self.stats.mz_seconds += time.monotonic() - t0
        self.stats.queries += 1
        return fut.result(), mz

    def query_for(self, seed: int) -> Query:
        return generate(seed, random_schema(seed // self.block_size), self.tier)

    def check(self, seed: int, q: Query) -> list[Finding]:
        """Run `q`; the findings (discrepancies, unsupported, known) it produced."""
        sql = q.sql()
        pg, mz = self.both(sql)
        found = []
        kind = classify(pg, mz)
        if kind:
            found.append(Finding(seed, q.mode, kind, sql, pg, mz))
        other = q.other_sql()
        if other is not None:
            opg, omz = self.both(other)
            okind = classify(opg, omz)
            if okind:
                found.append(Finding(seed, q.mode, okind, other, opg, omz))
            # The metamorphic relation, where PostgreSQL confirms it holds for this query.
            if mz.ok and omz.ok and pg.ok and opg.ok and not compare_rows(pg, opg):
                if compare_rows(mz, omz) == "rows":
                    found.append(Finding(seed, q.mode, q.mode, sql, pg, mz, other, omz))
        for f in found:
            f.known = known_reason(f)
            f.tier = self.tier
        return found

    def run_seed(self, seed: int, do_minimize: bool = False) -> list[Finding]:
        self.use_block(seed // self.block_size)
        q = self.query_for(seed)
        found = self.check(seed, q)
        self.stats.seeds += 1
        if not found:
            self.stats.outcomes["ok"] += 1
        for f in found:
            self.stats.outcomes[f"known:{f.kind}" if f.known else f.kind] += 1
        if do_minimize:
            for f in found:
                if f.kind not in ("unsupported",) and not f.known:
                    f.minimized = self.minimize(seed, q, f.kind)
        return found

    def planning_error(self, sql: str) -> Outcome | None:
        """mzspark's error for `sql` when planning alone raises it (EXPLAIN runs no Spark job);
        None when the plan is fine or PostgreSQL cannot plan it."""
        o = self.run_mz(f"EXPLAIN PHYSICAL PLAN FOR {sql}")
        if o.ok or o.sqlstate == "0A000":
            return None
        return o if execute(self.pg, f"EXPLAIN {sql}").ok else None

    def minimize(self, seed: int, q: Query, kind: str, budget: int = 250) -> str:
        def fails(tree: N) -> bool:
            cand = q.with_tree(tree)
            return any(f.kind == kind for f in self.check(seed, cand))

        if kind == "mz-error" and q.other_fmt is None:
            first = self.planning_error(q.sql())
            if first is not None:
                def fails(tree: N) -> bool:  # noqa: F811  (cheap: planning only)
                    o = self.planning_error(tree.render())
                    return o is not None and (o.sqlstate, _unref(o.message)) == (first.sqlstate, _unref(first.message))

        small = minimize(q.tree, fails, budget=budget, keep_root=q.other_fmt is not None)
        return q.with_tree(small).sql() + ("" if q.other_fmt is None else "  /  " + (q.with_tree(small).other_sql() or ""))


def run_range(oracle: Oracle, seeds: range, *, do_minimize: bool, on_finding: Callable[[Finding], None]) -> None:
    for seed in seeds:
        for f in oracle.run_seed(seed, do_minimize):
            on_finding(f)
