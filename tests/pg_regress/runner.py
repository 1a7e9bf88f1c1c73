"""PostgreSQL's regression scripts as a differential test: every statement on PostgreSQL 15
and on mzspark, side by side, classified (tests/pg_regress/classify.py).

    python -m tests.pg_regress.runner [--files select,case] [--write-md] [--failures out.jsonl]
                                      [--timeout 30] [--mz-dsn DSN] [--pg-dsn DSN]

Without `--mz-dsn` / `--pg-dsn` it starts an mzspark server (temporary data directory) and a
throwaway PostgreSQL 15 (tests/pgref.py, C locale, UTF8) and stops both at the end.

Isolation (what pg_regress does, adapted to a server without CREATE DATABASE and temporary
tables): test_setup runs once into `public` on both servers (with the adaptations of
setup_adapt.py, identical on both). Each script then runs on a fresh session per server, in a
schema of its own (`pgr_<script>`, first on search_path, then `public`), dropped afterwards;
every table test_setup made that a script wrote to, dropped or altered (on either side) is
reloaded from test_setup's statements before the next script. So every script starts from
test_setup's state, as PostgreSQL's README for the corpus requires.

Session settings: PostgreSQL's session gets mzspark's values of TimeZone, DateStyle,
IntervalStyle and extra_float_digits (read from mzspark at start), so both print alike. When a
`SET` succeeds on PostgreSQL but fails on mzspark, PostgreSQL's previous value is restored so
that the two sessions stay comparable (the SET itself is counted as mzspark's failure).

A statement that runs longer than `--timeout` is cancelled and classified `internal`
(timeout); if the cancel does not end it within a grace period, or the server died, the
mzspark server is restarted (same data directory) and the script goes on in a new session.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.pg_regress import peers
from tests.pg_regress.classify import (
    Cls,
    Outcome,
    Verdict,
    classify,
    compare_rows,
    created_name,
    indirectly_written,
    normalize,
    static_na,
)
from tests.pg_regress.setup_adapt import SetupAdapter
from tests.pg_regress.splitter import Meta, Statement, split_script

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = (REPO_ROOT / ".." / "shared" / "pg_regress").resolve()
DEFAULT_TIMEOUT_S = 30.0
CANCEL_GRACE_S = 20.0
MIRRORED_SETTINGS = ("TimeZone", "DateStyle", "IntervalStyle", "extra_float_digits")
HANDLED_META = {"\\set", "\\getenv"}


# ---------------------------------------------------------------------------------------------
# one session on one server


def _adapters() -> Any:
    from psycopg.adapt import AdaptersMap
    from psycopg.postgres import types
    from psycopg.types.string import TextLoader

    m = AdaptersMap(types=types)
    m.register_loader(0, TextLoader)
    return m


class Session:
    """An autocommit psycopg 3 connection; values come back as PostgreSQL's text forms.
    Statements without parameters go over the simple query protocol."""

    def __init__(self, dsn: str, timeout_s: float, on_stuck: Callable[[], None] | None = None,
                 options: str = "") -> None:
        import psycopg

        self._psycopg = psycopg
        self.timeout_s = timeout_s
        self.on_stuck = on_stuck
        kw: dict[str, Any] = {}
        if options:
            kw["options"] = options
        self.conn = psycopg.connect(dsn, autocommit=True, context=_adapters(), connect_timeout=30, **kw)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()

    @property
    def broken(self) -> bool:
        return self.conn.closed or self.conn.broken

    def run(self, sql: str, copy_data: str | None = None) -> Outcome:
        psycopg = self._psycopg
        fired: list[str] = []

        def cancel() -> None:
            fired.append("timeout")
            with contextlib.suppress(Exception):
                self.conn.cancel_safe(timeout=10)

        def stuck() -> None:
            fired.append("stuck")
            if self.on_stuck is not None:
                self.on_stuck()

        timers = []
        if self.timeout_s:
            timers = [threading.Timer(self.timeout_s, cancel), threading.Timer(self.timeout_s + CANCEL_GRACE_S, stuck)]
            for t in timers:
                t.daemon = True
                t.start()
        try:
            cur = self.conn.cursor()
            if copy_data is not None:
                with cur.copy(sql) as cp:  # type: ignore[arg-type]
                    cp.write(copy_data.encode())
                return Outcome(True, rowcount=cur.rowcount)
            cur.execute(sql)  # type: ignore[arg-type]
            if cur.description is None:
                return Outcome(True, rowcount=cur.rowcount)
            cols = tuple(d.name for d in cur.description)
            oids = tuple(d.type_code for d in cur.description)
            rows = tuple(tuple(r) for r in cur.fetchall())
            return Outcome(True, cols, rows, cur.rowcount, has_rows=True, type_oids=oids)
        except psycopg.Error as e:
            state = getattr(e, "sqlstate", None) or ""
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            kind = ""
            if fired:
                kind = "timeout"
            elif self.broken:
                kind = "crash"
            return Outcome(False, sqlstate=state or "?????", message=msg, kind=kind)
        finally:
            for t in timers:
                t.cancel()


# ---------------------------------------------------------------------------------------------
# the two servers


class MzSide:
    """mzspark: our own server (restartable) or an external DSN."""

    def __init__(self, dsn: str | None, tmp: Path, spark_master: str, log: Path | None) -> None:
        self.server = None
        self.lock = threading.Lock()
        self.restarts = 0
        self.generation = 0  # incremented by every restart
        self.stuck_kills: set[int] = set()  # generations killed because a statement hung
        if dsn:
            self.dsn = dsn
            return
        from tests.integration.harness import MzServer

        self.server = MzServer(tmp / "mzdata", log or tmp / "server.log", spark_master=spark_master)
        print(f"starting mzspark (log: {self.server.log_path}) ...", file=sys.stderr, flush=True)
        self.server.start()
        self.dsn = self.server.dsn
        print(f"mzspark ready on {self.server.host}:{self.server.port}", file=sys.stderr, flush=True)

    def kill(self, generation: int) -> None:
        """The server hangs: kill it (the statement's connection then breaks) — only if it is
        still the server the stuck session connected to (not one restarted meanwhile)."""
        if self.server is None:
            return
        with self.lock:
            if generation == self.generation and self.server.running:
                print("mzspark stuck: killing it", file=sys.stderr, flush=True)
                self.stuck_kills.add(generation)
                self.server.kill()

    def ensure_up(self) -> None:
        if self.server is None:
            return
        with self.lock:
            alive = self.server.running
            if alive:
                try:
                    import psycopg

                    psycopg.connect(self.server.dsn, connect_timeout=10).close()
                except Exception:  # noqa: BLE001
                    alive = False
            if not alive:
                print("mzspark is down: restarting it", file=sys.stderr, flush=True)
                self.server.kill()
                self.server.start()
                self.restarts += 1
                self.generation += 1
                self.dsn = self.server.dsn

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class StmtResult:
    file: str
    line: int
    sql: str
    verdict: Verdict
    pg: Outcome | None = None
    mz: Outcome | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "line": self.line, "class": self.verdict.cls.value,
                             "reason": self.verdict.reason, "sql": self.sql}
        if self.pg is not None:
            d["pg"] = self.pg.short()
        if self.mz is not None:
            d["mz"] = self.mz.short()
            if not self.mz.ok:
                d["mz_sqlstate"] = self.mz.sqlstate
        d.update(self.verdict.details)
        return d


@dataclass
class FileResult:
    file: str
    counts: Counter = field(default_factory=Counter)
    results: list[StmtResult] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def statements(self) -> int:
        return sum(self.counts.values())

    @property
    def compared(self) -> int:
        return self.statements - self.counts[Cls.NA] - self.counts[Cls.BLOCKED]

    def add(self, r: StmtResult) -> None:
        self.counts[r.verdict.cls] += 1
        self.results.append(r)


# ---------------------------------------------------------------------------------------------
# running scripts

_COPY_FILE = re.compile(r"(?is)^(\s*copy\s+.+?\s+from\s+)'([^']*)'(.*)$")
_SET = re.compile(r"(?is)^\s*(set|reset)\s+(?:(session|local)\s+)?(.*)$")
_WRITES = re.compile(
    r"(?is)^\s*(?:with\b.*?\)\s*)?(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?|drop\s+table"
    r"(?:\s+if\s+exists)?|alter\s+table(?:\s+if\s+exists)?|copy)\s+(?:only\s+)?([\w\", .]+)"
)


def _setting_name(sql: str) -> tuple[str, bool] | None:
    """(parameter, is_local) of a SET / RESET statement."""
    m = _SET.match(sql)
    if not m:
        return None
    rest = m.group(3).strip()
    if re.match(r"(?i)time\s+zone\b", rest):
        return "timezone", m.group(2) is not None and m.group(2).lower() == "local"
    w = re.match(r"[\w.]+", rest)
    if not w or w.group(0).lower() in ("transaction", "session", "all", "role", "constraints"):
        return None
    return w.group(0).lower(), m.group(2) is not None and m.group(2).lower() == "local"


# a write inside a WITH clause (data-modifying CTE): WITH t AS (DELETE FROM y RETURNING *) …
_CTE_WRITES = re.compile(r"(?is)\b(?:insert\s+into|update|delete\s+from)\s+(?:only\s+)?([\w\".]+)")


def written_tables(sql: str) -> set[str]:
    """The tables a statement writes: its target, and in a WITH statement also the targets of
    its data-modifying CTEs (a write that fails on one side only diverges them all)."""
    names = set()
    m = _WRITES.match(sql)
    if m:
        for part in m.group(1).split(","):
            w = part.strip().split()
            if w:
                names.add(w[0].split(".")[-1].strip('"').lower())
    if re.match(r"(?is)^\s*with\b", sql):
        names |= {t.split(".")[-1].strip('"').lower() for t in _CTE_WRITES.findall(sql)}
    return names


@dataclass
class Context:
    mz: MzSide
    pg_dsn: str
    timeout_s: float
    pg_options: str
    variables: dict[str, str]
    adapt_setup: bool = True
    setup_tables: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    setup_diverged: set[str] = field(default_factory=set)
    adapted: list[tuple[int, str, str]] = field(default_factory=list)
    # run only the test_setup statements that build these tables (None: all of test_setup)
    setup_only: set[str] | None = None
    # statements not to run at all: script name -> 1-based lines (a CI sample leaves out
    # statements known to hang or to differ, see tests/integration/test_pg_regress_sample.py)
    skip_lines: dict[str, set[int]] = field(default_factory=dict)
    on_result: Callable[[StmtResult], None] | None = None


class Pair:
    """The two sessions of one script; reconnects mzspark after a crash / restart."""

    def __init__(self, ctx: Context, schema: str | None) -> None:
        self.ctx = ctx
        self.schema = schema
        self.pg = Session(ctx.pg_dsn, max(ctx.timeout_s * 2, 60), options=ctx.pg_options)
        self.mz = self._mz_session()
        if schema:
            for s in (self.pg, self.mz):
                s.run(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                s.run(f"CREATE SCHEMA {schema}")
        self._enter(self.pg)
        self._enter(self.mz)

    def _mz_session(self) -> Session:
        mz = self.ctx.mz
        mz.ensure_up()
        gen = self.mz_generation = mz.generation
        return Session(mz.dsn, self.ctx.timeout_s, on_stuck=lambda: mz.kill(gen))

    def _enter(self, s: Session) -> None:
        path = f"{self.schema}, public" if self.schema else "public"
        s.run(f"SET search_path TO {path}")

    def reconnect_mz(self) -> None:
        self.mz.close()
        self.mz = self._mz_session()
        self._enter(self.mz)

    def close(self, drop: bool = True) -> None:
        if drop and self.schema:
            for s in (self.pg, self.mz):
                if not s.broken:
                    s.run("ROLLBACK")
                    s.run(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        self.pg.close()
        self.mz.close()


def _prepare(sql: str, variables: dict[str, str]) -> tuple[str, str | None]:
    """`COPY t FROM '<file>'` -> `COPY t FROM STDIN` with the file's contents (psql's \\copy)."""
    m = _COPY_FILE.match(sql)
    if m and Path(m.group(2)).is_file():
        return f"{m.group(1)}STDIN{m.group(3)}", Path(m.group(2)).read_text()
    return sql, None


# INSERT … VALUES (constants): its outcome does not depend on the table's contents
_PLAIN_INSERT = re.compile(r"^insert into [\w\".]+ ?(\([^()]*\) ?)?values (?!.*\bselect\b)")


def run_statement(pair: Pair, ctx: Context, label: str, st: Statement, sql: str, copy_data: str | None,
                  diverged: set[str], dirty: set[str], data_diverged: set[str] | None = None) -> StmtResult:
    """Run one statement on both sides and classify it. `diverged`: objects that exist or
    have contents on one side only (updated here); `data_diverged` ⊆ diverged: those whose
    contents (not existence) differ; `dirty`: test_setup tables written to (updated here)."""
    if data_diverged is None:
        data_diverged = set()
    na = static_na(sql)
    setting = _setting_name(sql)
    prior = None
    if setting is not None and na is None:
        o = pair.pg.run(f"SELECT current_setting('{setting[0]}')")
        if o.ok and o.rows:
            prior = o.rows[0][0]
    pg = pair.pg.run(sql, copy_data)
    mz = pair.mz.run(sql, copy_data)
    if not mz.ok and pair.mz.broken:
        killed = pair.mz_generation in ctx.mz.stuck_kills
        pair.reconnect_mz()
        if killed:
            # the server was killed for a hung statement — maybe another session's (the
            # server runs one statement at a time): run this one again, once, on the new one
            mz = pair.mz.run(sql, copy_data)
            if not mz.ok and pair.mz.broken:
                pair.reconnect_mz()
    if na is not None:
        verdict = Verdict(Cls.NA, na)
    else:
        blocking = {n for n in diverged if n not in data_diverged} if _PLAIN_INSERT.match(normalize(sql)) else diverged
        verdict = classify(sql, pg, mz, blocking)
        if verdict.cls == Cls.DIFFERENT:
            verdict = _open_result(pair.pg, sql, pg, mz) or verdict
    # keep the sessions comparable
    if setting is not None and pg.ok and not mz.ok and prior is not None:
        pair.pg.run(f"SELECT set_config('{setting[0]}', '{prior.replace(chr(39), chr(39) * 2)}', {str(setting[1]).lower()})")
    name = created_name(sql)
    if name:
        data_diverged.discard(name)
        if na is not None and (pg.ok or mz.ok):
            # made by a statement outside the comparison (partitioned, with constraints, …):
            # it need not behave alike even where both sides accepted it
            diverged.add(name)
            for t in indirectly_written(sql) - diverged:
                diverged.add(t)
                data_diverged.add(t)
        elif pg.ok != mz.ok:
            diverged.add(name)
        elif pg.ok:
            diverged.discard(name)
    if pg.ok != mz.ok:
        # a write that happened on one side only: the table's contents differ from now on
        for t in written_tables(sql) - diverged:
            diverged.add(t)
            data_diverged.add(t)
    if pg.ok or mz.ok:
        dirty |= written_tables(sql) & set(ctx.setup_tables)
    return StmtResult(label, st.line, sql, verdict, pg, mz)


# physical orders of the tables' copies: reversed, two fixed scrambles, and sorted by the
# whole row both ways ({t}: the table's alias)
_PERMUTATIONS = ("ctid DESC", "md5(ctid::text)", "md5(ctid::text) DESC", "{t} ASC", "{t} DESC")


def _open_result(pg_session: Session, sql: str, pg: Outcome, mz: Outcome) -> Verdict | None:
    """A differing result where SQL leaves the answer open (tests/pg_regress/peers.py):
    LIMIT without ORDER BY, or an answer that depends on the order of rows among peers."""
    if not peers.is_query(sql):
        return None
    full_sql = peers.without_limit(sql)
    if full_sql is not None:
        v = peers.limit_verdict(pg, mz, pg_session.run(full_sql))
        if v is not None:
            return v
    keyed = peers.with_order_keys(sql)
    if keyed is not None:
        v = peers.peer_group_verdict(pg, mz, keyed, pg_session.run(keyed.sql))
        if v is not None:
            return v
    forms = [sql]
    rewritten = [x for x in (peers.without_inner_order(sql), peers.reversed_unions(sql)) if x is not None]
    printed = peers.round_trip(sql) if rewritten else None
    plain: list[Outcome] = []
    if printed is not None and compare_rows(sql, pg, pg_session.run(printed)) is None:
        forms += rewritten  # sqlglot printed the statement back with its meaning (and result)
        plain = [pg_session.run(f) for f in rewritten]  # (also over no tables at all)
    permuted = [_permuted_run(pg_session, f, order) for f in forms for order in _PERMUTATIONS]
    return peers.peer_order_verdict(sql, pg, mz, plain + permuted)


def _permuted_run(s: Session, sql: str, order: str) -> Outcome:
    """`sql` on PostgreSQL with every table it scans shadowed by a temporary copy whose rows
    are stored `ORDER BY order` (temporary tables come first on the search path; a temporary
    table is renamed first), rolled back afterwards. A permanent table referenced with its
    schema is left as it is."""
    import psycopg

    status = s.conn.info.transaction_status
    if status == psycopg.pq.TransactionStatus.INERROR:
        return Outcome(False, message="transaction aborted")
    nested = status == psycopg.pq.TransactionStatus.INTRANS
    plan = s.run(f"EXPLAIN (VERBOSE, FORMAT JSON) {sql}")
    if not plan.ok or not plan.rows:
        return plan
    tables: set[tuple[str, str]] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            schema = str(node.get("Schema", ""))
            if "Relation Name" in node and (not schema.startswith("pg_") or schema.startswith("pg_temp")):
                tables.add((schema, node["Relation Name"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(plan.rows[0][0]))
    if not tables:
        return Outcome(False, message="no tables to permute")
    s.run("SAVEPOINT pgr_permuted" if nested else "BEGIN")
    try:
        for schema, name in sorted(tables):
            source = f'"{schema}"."{name}"'
            if schema.startswith("pg_temp"):
                moved = s.run(f'ALTER TABLE {source} RENAME TO "{name}__pgr_permuted"')
                if not moved.ok:
                    return moved
                source = f'"{schema}"."{name}__pgr_permuted"'
            made = s.run(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM {source} AS __pgr ORDER BY {order.format(t="__pgr")}')
            if not made.ok:
                return made
        return s.run(sql)
    finally:
        s.run("ROLLBACK TO SAVEPOINT pgr_permuted" if nested else "ROLLBACK")
        if nested:
            s.run("RELEASE SAVEPOINT pgr_permuted")


def iter_items(path: Path, variables: dict[str, str]) -> Iterator[Statement | Meta]:
    for item in split_script(path.read_text(), variables):
        if isinstance(item, Meta):
            if item.command == "\\getenv" and len(item.args) >= 1:
                variables.setdefault(item.args[0], "")
                continue
            if item.command == "\\set" and item.args and item.args[0] != "VERBOSITY":
                variables[item.args[0]] = "".join(item.args[1:])
                continue
        yield item


def run_script(path: Path, ctx: Context, setup: bool = False) -> tuple[FileResult, set[str]]:
    """Run one script; returns its results and the test_setup tables it dirtied."""
    label = path.stem
    res = FileResult(label)
    t0 = time.monotonic()
    variables = dict(ctx.variables)
    diverged = set(ctx.setup_diverged)
    data_diverged: set[str] = set()
    dirty: set[str] = set()
    adapter = SetupAdapter() if setup and ctx.adapt_setup else None
    pair = Pair(ctx, None if setup else f"pgr_{label}")
    try:
        for item in iter_items(path, variables):
            if isinstance(item, Meta):
                if item.command in HANDLED_META:
                    continue
                r = StmtResult(label, item.line, item.text, Verdict(Cls.NA, "psql meta-command"))
                res.add(r)
                continue
            if item.line in ctx.skip_lines.get(label, ()):
                continue
            sqls = adapter.adapt(item.sql, item.line) if adapter else [item.sql]
            for sql in sqls:
                if setup and ctx.setup_only is not None and not (_setup_targets(sql) & ctx.setup_only):
                    continue
                sql2, data = _prepare(sql, variables)
                copy_data = item.copy_data if item.copy_data is not None else data
                r = run_statement(pair, ctx, label, item, sql2, copy_data, diverged, dirty, data_diverged)
                res.add(r)
                if ctx.on_result is not None:
                    ctx.on_result(r)
                if setup:
                    _record_setup(ctx, sql2, copy_data, r)
    finally:
        pair.close(drop=not setup)
    if setup:
        ctx.setup_diverged = diverged
        if adapter:
            ctx.adapted = adapter.applied
            res.note = f"{len(adapter.applied)} statements adapted (tests/pg_regress/setup_adapt.py)"
    res.seconds = time.monotonic() - t0
    return res, dirty


def _setup_targets(sql: str) -> set[str]:
    """The tables a test_setup statement creates or fills."""
    name = created_name(sql)
    if name and re.match(r"(?is)^\s*create\s+table", sql):
        return {name}
    return written_tables(sql)


def _record_setup(ctx: Context, sql: str, copy_data: str | None, r: StmtResult) -> None:
    """Remember which test_setup statements build each table (to reload it later)."""
    targets = _setup_targets(sql)
    if re.match(r"(?is)^\s*create\s+table", sql):
        for t in targets:
            ctx.setup_tables.setdefault(t, [])
    targets &= set(ctx.setup_tables)
    for t in targets:
        ctx.setup_tables[t].append((sql, copy_data))


def reload_tables(ctx: Context, names: set[str]) -> None:
    """Drop and rebuild test_setup tables (and the tables built from them) on both servers."""
    order = [t for t in ctx.setup_tables if t in names]
    # tables whose statements read a reloaded table are rebuilt as well (onek2 from onek)
    for t, stmts in ctx.setup_tables.items():
        if t not in order and any(re.search(rf"(?i)\bfrom\s+{re.escape(x)}\b", s) for x in order for s, _ in stmts):
            order.append(t)
    if not order:
        return
    pair = Pair(ctx, None)
    try:
        for t in order:
            written = {t}
            for sql, _ in ctx.setup_tables[t]:
                m = re.match(r"(?is)^\s*create\s+table\s+(\w+)", sql)
                if m:
                    written.add(f'"{m.group(1)}"')
            for s in (pair.pg, pair.mz):
                for w in sorted(written):
                    s.run(f"DROP TABLE IF EXISTS public.{w} CASCADE")
        for t in order:
            for sql, data in ctx.setup_tables[t]:
                pair.pg.run(sql, data)
                pair.mz.run(sql, data)
    finally:
        pair.close(drop=False)


# ---------------------------------------------------------------------------------------------
# reports

COLUMNS = [
    ("stmts", None), ("same", Cls.SAME), ("same %", None), ("documented", Cls.DOCUMENTED), ("different", Cls.DIFFERENT),
    ("internal", Cls.INTERNAL), ("0A000", Cls.UNSUPPORTED), ("other err", Cls.OTHER_ERROR),
    ("mz ok/pg err", Cls.MZ_OK_PG_ERROR), ("blocked", Cls.BLOCKED), ("n/a", Cls.NA),
]


def _row(name: str, counts: Counter, seconds: float | None) -> list[str]:
    stmts = sum(counts.values())
    compared = stmts - counts[Cls.NA] - counts[Cls.BLOCKED]
    same = counts[Cls.SAME] + counts[Cls.DOCUMENTED]
    share = f"{100.0 * same / compared:.1f}" if compared else "-"
    cells = [name, str(stmts), str(counts[Cls.SAME]), share]
    cells += [str(counts[c]) for _, c in COLUMNS[3:]]
    cells.append(f"{seconds:.0f}" if seconds is not None else "")
    return cells


def format_table(results: list[FileResult], markdown: bool = False, total_seconds: float | None = None) -> str:
    head = ["file"] + [h for h, _ in COLUMNS] + ["s"]
    rows = [_row(r.file, r.counts, r.seconds) for r in results]
    total: Counter = Counter()
    for r in results:
        if r.file != "test_setup":
            total.update(r.counts)
    rows.append(_row("total (without test_setup)", total, total_seconds))
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
        out += ["| " + " | ".join(c) + " |" for c in rows]
        return "\n".join(out)
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*x) for x in [head, *rows])


def overall(results: list[FileResult]) -> tuple[int, int, float]:
    total: Counter = Counter()
    for r in results:
        if r.file != "test_setup":
            total.update(r.counts)
    stmts = sum(total.values())
    compared = stmts - total[Cls.NA] - total[Cls.BLOCKED]
    same = total[Cls.SAME] + total[Cls.DOCUMENTED]
    return same, compared, (100.0 * same / compared if compared else 0.0)


def write_markdown(path: Path, results: list[FileResult], seconds: float, mz_restarts: int,
                   adapted: list[tuple[int, str, str]]) -> None:
    same, compared, share = overall(results)
    na = Counter(r.verdict.reason for f in results for r in f.results if r.verdict.cls is Cls.NA)
    blocked = Counter(r.verdict.reason.split(" diverged object ")[0] for f in results for r in f.results
                      if r.verdict.cls is Cls.BLOCKED)
    diff = Counter(r.verdict.reason for f in results for r in f.results if r.verdict.cls is Cls.DIFFERENT)
    lines = [
        "# PostgreSQL 15 regression scripts, statement by statement: mzspark vs PostgreSQL",
        "",
        "Generated by `make pg-regress` (`python -m tests.pg_regress.runner --write-md`); see",
        "`tests/pg_regress/README.md` for the classes and the isolation. Corpus: `../shared/pg_regress`",
        f"(PostgreSQL 15.18). Wall time {seconds / 60:.0f} min; mzspark restarts: {mz_restarts}.",
        "",
        f"**Same outcome: {same} of {compared} compared statements ({share:.1f}%)** "
        "(compared = all statements except n/a and blocked; test_setup not included).",
        "",
        format_table(results, markdown=True, total_seconds=seconds),
        "",
        "## Different results by kind",
        "",
        *[f"- {k}: {v}" for k, v in diff.most_common()],
        "",
        "## Not applicable, by reason",
        "",
        *[f"- {k}: {v}" for k, v in na.most_common()],
        "",
        "## Blocked, by reason",
        "",
        *[f"- {k}: {v}" for k, v in blocked.most_common()],
        "",
        "## test_setup adaptations (applied to both servers)",
        "",
        *[f"- line {ln}: `{' '.join(o.split())[:100]}` → `{' '.join(n.split())[:160]}`" for ln, o, n in adapted],
        "",
    ]
    path.write_text("\n".join(lines))


# ---------------------------------------------------------------------------------------------
# CLI


def pg_session_options(mz_dsn: str) -> str:
    """`-c` options giving PostgreSQL's sessions mzspark's display settings."""
    s = Session(mz_dsn, 60)
    opts = ["-c lc_messages=C", "-c statement_timeout=120000"]
    try:
        for name in MIRRORED_SETTINGS:
            o = s.run(f"SHOW {name}")
            if o.ok and o.rows:
                val = str(o.rows[0][0]).replace(" ", "")
                opts.append(f"-c {name}={val}")
    finally:
        s.close()
    return " ".join(opts)


def make_context(mz: MzSide, pg_dsn: str, timeout_s: float, corpus: Path, adapt_setup: bool = True) -> Context:
    from tests.pgref import pg_bindir

    variables = {"abs_srcdir": str(corpus), "libdir": str(pg_bindir().parent / "lib"), "dlsuffix": ".so"}
    return Context(mz, pg_dsn, timeout_s, pg_session_options(mz.dsn), variables, adapt_setup)


def preclean(ctx: Context, setup_path: Path) -> None:
    """Drop what an earlier run's test_setup left in `public` (when reusing a server)."""
    names = []
    for item in iter_items(setup_path, dict(ctx.variables)):
        if isinstance(item, Statement) and re.match(r"(?is)^\s*create\s+table\s+(\w+)", item.sql):
            written = re.match(r"(?is)^\s*create\s+table\s+(\w+)", item.sql).group(1)  # type: ignore[union-attr]
            names += [written.lower(), f'"{written}"']
    pair = Pair(ctx, None)
    try:
        for s in (pair.pg, pair.mz):
            for n in names:
                s.run(f"DROP TABLE IF EXISTS public.{n} CASCADE")
    finally:
        pair.close(drop=False)


def writes_setup_tables(path: Path, ctx: Context) -> bool:
    """Whether a script has a statement that writes, drops or alters a test_setup table."""
    names = set(ctx.setup_tables)
    return any(isinstance(it, Statement) and written_tables(it.sql) & names
               for it in iter_items(path, dict(ctx.variables)))


def run_all(ctx: Context, corpus: Path, files: list[str], progress: bool = True, jobs: int = 1) -> list[FileResult]:
    """test_setup, then the scripts. With `jobs` > 1, scripts that never write a test_setup
    table run that many at a time (biggest first), the others one by one afterwards (their
    writes are undone by reloading the tables before the next script)."""
    sql_dir = corpus / "sql"
    preclean(ctx, sql_dir / "test_setup.sql")
    setup_res, _ = run_script(sql_dir / "test_setup.sql", ctx, setup=True)
    results: dict[str, FileResult] = {}
    if progress:
        print(f"[setup] {setup_res.counts.most_common()} ({setup_res.seconds:.0f}s); diverged on mzspark: "
              f"{sorted(ctx.setup_diverged)}", file=sys.stderr, flush=True)
    lock = threading.Lock()
    done = [0]

    def one(name: str) -> None:
        try:
            res, dirty = run_script(sql_dir / f"{name}.sql", ctx)
        except Exception as e:  # noqa: BLE001 - report and go on with the next script
            res, dirty = FileResult(name, note=f"aborted: {type(e).__name__}: {e}"), set(ctx.setup_tables)
            ctx.mz.ensure_up()
        if dirty:
            reload_tables(ctx, dirty)
        with lock:
            results[name] = res
            done[0] += 1
            if progress:
                print(f"[{done[0]}/{len(files)}] {name}: {res.statements} stmts, same {res.counts[Cls.SAME]}/"
                      f"{res.compared}, different {res.counts[Cls.DIFFERENT]}, internal {res.counts[Cls.INTERNAL]} "
                      f"({res.seconds:.0f}s){' reloaded ' + ','.join(sorted(dirty)) if dirty else ''} {res.note}",
                      file=sys.stderr, flush=True)

    if jobs > 1:
        serial = [f for f in files if writes_setup_tables(sql_dir / f"{f}.sql", ctx)]
        parallel = sorted((f for f in files if f not in serial), key=lambda f: -(sql_dir / f"{f}.sql").stat().st_size)
        with ThreadPoolExecutor(jobs) as ex:
            list(ex.map(one, parallel))
    else:
        serial = list(files)
    for name in serial:
        one(name)
    return [setup_res, *(results[f] for f in files)]


def all_scripts(corpus: Path) -> list[str]:
    return sorted(p.stem for p in (corpus / "sql").glob("*.sql") if p.stem != "test_setup")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.pg_regress.runner", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--files", help="comma-separated script names (default: all but test_setup)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="per-statement timeout, seconds")
    ap.add_argument("--mz-dsn", help="use this mzspark instead of starting one")
    ap.add_argument("--pg-dsn", help="use this PostgreSQL 15 instead of starting one")
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--server-log", type=Path)
    ap.add_argument("--no-adapt-setup", action="store_true", help="run test_setup exactly as written")
    ap.add_argument("--write-md", nargs="?", const=REPO_ROOT / "tests" / "pg_regress" / "RESULTS.md", type=Path,
                    help="write the table to this file (default tests/pg_regress/RESULTS.md)")
    ap.add_argument("--failures", type=Path, help="JSON lines of every statement not classified same")
    ap.add_argument("--jobs", type=int, default=1, help="scripts run at a time (those not writing test_setup tables)")
    args = ap.parse_args(argv)

    files = [f.strip() for f in args.files.split(",")] if args.files else all_scripts(args.corpus)
    tmp = Path(tempfile.mkdtemp(prefix="pgregress_"))
    lock = threading.Lock()
    fail_f = open(args.failures, "w") if args.failures else None  # noqa: SIM115

    def on_result(r: StmtResult) -> None:
        if fail_f is not None and r.verdict.cls is not Cls.SAME:
            with lock:
                fail_f.write(json.dumps(r.to_json()) + "\n")
                fail_f.flush()

    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        pg_dsn = args.pg_dsn
        if not pg_dsn:
            from tests.pgref import reference_postgres

            pg_dsn = stack.enter_context(reference_postgres("pgregress-", initdb_args=("--locale=C", "-E", "UTF8")))
        mz = MzSide(args.mz_dsn, tmp, args.spark_master, args.server_log)
        stack.callback(mz.stop)
        ctx = make_context(mz, pg_dsn, args.timeout, args.corpus, adapt_setup=not args.no_adapt_setup)
        ctx.on_result = on_result
        results = run_all(ctx, args.corpus, files, jobs=args.jobs)
        adapted = ctx.adapted
    elapsed = time.monotonic() - t0
    if fail_f is not None:
        fail_f.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(format_table(results, total_seconds=elapsed))
    same, compared, share = overall(results)
    print(f"same outcome: {same} of {compared} compared statements ({share:.1f}%); mzspark restarts: {mz.restarts}")
    if args.write_md:
        write_markdown(args.write_md, results, elapsed, mz.restarts, adapted)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
