"""sqllogictest runner over pgwire (psycopg 3), for mzspark and for a reference PostgreSQL.

    python -m tests.slt.runner [--dsn DSN] [--engine materialize] [--limit N] [--jobs N]
                               [--failures out.jsonl] [--record-expected DIR] FILES/DIRS...

Without `--dsn` it starts an mzspark server of its own (`python -m server` on an ephemeral
loopback port, temporary data directory, `--spark-master local[2]`) and stops it at the end.

Semantics follow the reference implementation (sqllogictest.c) and POSTGRES_BASELINE.md:
- conditions: the engine is known under several names (`materialize` and `postgresql` by
  default); `skipif X` skips when X is one of them, `onlyif X` skips unless it is.
- values: I -> `%d` of the value (numbers are truncated toward zero like SQLite's
  sqlite3_column_int64, booleans are 1/0, text is parsed like SQLite parses a leading
  integer), R -> `%.3f`, T -> the text; NULL -> `NULL`, empty text -> `(empty)`, characters
  outside printable ASCII -> `@`.
- `rowsort` sorts rows (as tuples of formatted values), `valuesort` sorts all values;
  `N values hashing to H` compares the count and the md5 of the values each followed by "\\n".
- a query label ties results together: every query with the same label in one file must
  produce the same values (and the expected results are checked as well).
- the number of result columns must equal the number of type letters.
- `halt` stops the file; `hash-threshold` is accepted (the expected form decides whether a
  result is compared by value or by hash); `mode cockroach` compares one row per line.
- each file runs in a fresh schema of its own (created, put on search_path, dropped at the
  end), on its own connection, so files are independent and can run in parallel (`--jobs`).

Counting: records are `statement` and `query` records; skipped ones (by conditions) count as
skipped, records after a `halt` are not counted at all (as in the baseline).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from tests.slt.auto_index import view_sql
from tests.slt.parser import Record, parse_file

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = (REPO_ROOT / ".." / "shared" / "slt" / "sqlite").resolve()
DEFAULT_ENGINES = frozenset({"materialize", "postgresql"})
DEFAULT_TIMEOUT_S = 120.0

# Type oids (PostgreSQL's) that get special value formatting.
BOOL_OID = 16


# ---------------------------------------------------------------------------------------------
# value formatting


_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")
_REAL_PREFIX = re.compile(r"\s*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)")


def _text_to_int(s: str) -> int:
    try:
        return int(s)
    except ValueError:
        pass
    try:
        d = Decimal(s)
        if d.is_finite():
            return int(d)  # truncates toward zero, like a C cast of a double
    except InvalidOperation:
        pass
    m = _INT_PREFIX.match(s)
    return int(m.group(1)) if m else 0


def _text_to_float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        m = _REAL_PREFIX.match(s)
        return float(m.group(1)) if m else 0.0


def _printable(s: str) -> str:
    if s == "":
        return "(empty)"
    if s.isascii() and s.isprintable():
        return s
    return "".join(c if " " <= c <= "~" else "@" for c in s)


def format_value(v: str | None, type_char: str, oid: int = 0) -> str:
    """Format one value (PostgreSQL text form, or None) the way sqllogictest prints it."""
    if v is None:
        return "NULL"
    if oid == BOOL_OID and type_char in "IR":
        v = "1" if v in ("t", "true") else "0"
    if type_char == "I":
        return str(_text_to_int(v))
    if type_char == "R":
        return f"{_text_to_float(v):.3f}"
    return _printable(v)


def format_rows(rows: list[tuple], types: str, oids: list[int]) -> list[list[str]]:
    out = []
    ncol = len(types)
    for row in rows:
        out.append([
            format_value(v, types[i] if i < ncol else "T", oids[i] if i < len(oids) else 0)
            for i, v in enumerate(row)
        ])
    return out


def hash_values(values: list[str]) -> str:
    h = hashlib.md5()
    for v in values:
        h.update(v.encode("utf-8", "surrogateescape"))
        h.update(b"\n")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# executing against a server


class DbError(Exception):
    def __init__(self, sqlstate: str | None, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate or "?????"
        self.message = message


class ConnectionLost(DbError):
    pass


@dataclass
class QueryResult:
    oids: list[int]  # empty when the statement returns no rows
    rows: list[tuple]
    rowcount: int


def _adapters() -> Any:
    """An adapters map that loads every value as its text form (we format it ourselves)."""
    from psycopg.adapt import AdaptersMap
    from psycopg.postgres import types
    from psycopg.types.string import TextLoader

    m = AdaptersMap(types=types)
    m.register_loader(0, TextLoader)
    return m


class PgConnection:
    """One autocommit psycopg 3 connection; statements go over the simple query protocol."""

    def __init__(self, dsn: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        import psycopg

        self.dsn = dsn
        self.timeout_s = timeout_s
        self._psycopg = psycopg
        self.conn = psycopg.connect(dsn, autocommit=True, context=_adapters(), connect_timeout=30)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()

    @property
    def broken(self) -> bool:
        return self.conn.closed or self.conn.broken

    def execute(self, sql: str) -> QueryResult:
        psycopg = self._psycopg
        timer = None
        if self.timeout_s:
            timer = threading.Timer(self.timeout_s, self._cancel)
            timer.daemon = True
            timer.start()
        try:
            cur = self.conn.execute(sql)  # type: ignore[arg-type]  # no params: simple query
            if cur.description is None:
                return QueryResult([], [], cur.rowcount)
            oids = [d.type_code for d in cur.description]
            return QueryResult(oids, cur.fetchall(), cur.rowcount)
        except psycopg.Error as e:
            if self.broken:
                raise ConnectionLost(getattr(e, "sqlstate", None), f"connection lost: {e}") from e
            raise DbError(getattr(e, "sqlstate", None), str(e).strip()) from e
        finally:
            if timer is not None:
                timer.cancel()

    def _cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.cancel_safe(timeout=10)


# ---------------------------------------------------------------------------------------------
# running records


@dataclass
class Failure:
    file: str
    line: int
    sql: str
    kind: str
    expected: str
    actual: str
    sqlstate: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class FileResult:
    file: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    # 1-based line -> "pass" | "skip" | SQLSTATE of an error | short reason of a failure
    failures: list[Failure] = field(default_factory=list)
    failed_lines: dict[int, str] = field(default_factory=dict)
    skipped_lines: list[int] = field(default_factory=list)
    passed_lines: list[int] = field(default_factory=list)
    # SQLSTATE of every record that raised an error (passing `statement error` ones too)
    error_states: dict[int, str] = field(default_factory=dict)
    aborted: str | None = None  # why the file stopped early (connection lost, ...)
    # --auto-index-selects: SELECT records also run through an indexed view, and those of them
    # that passed as a plain query but failed through the view
    view_checked: int = 0
    view_failed: int = 0
    on_failure: Callable[[Failure], None] | None = field(default=None, repr=False, compare=False)

    @property
    def total(self) -> int:
        return self.passed + self.failed


@dataclass
class RunOptions:
    engines: frozenset[str] = DEFAULT_ENGINES
    limit: int | None = None  # first N statement/query records of each file
    # run every statement but only every k-th query record (the 1st, k+1-th, ...); the
    # others are not counted at all (sampling a file whose queries do not change state)
    query_every: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    keep_schema: bool = False
    label_check: bool = True
    # also run each SELECT record through CREATE VIEW + CREATE DEFAULT INDEX (auto_index.py)
    auto_index_selects: bool = False
    # called with every failure as it happens (a long run's failures can be read early)
    on_failure: Callable[[Failure], None] | None = None


def _expected_text(rec: Record) -> str:
    if rec.hash_value is not None:
        return f"{rec.hash_count} values hashing to {rec.hash_value}"
    return "\n".join(rec.expected_lines or [])


def _actual_text(values: list[str], expected_hash: bool) -> str:
    if expected_hash:
        return f"{len(values)} values hashing to {hash_values(values)}"
    return "\n".join(values)


def check_query(rec: Record, res: QueryResult, mode: str) -> str | None:
    """None when the result matches, else the actual result (as text) / a reason."""
    ncols = len(res.oids)
    if rec.multiline:
        vals = ["NULL" if v is None else v for row in res.rows for v in row]
        actual = "\n".join(vals)
        return None if actual == "\n".join(rec.expected_lines or []) else actual
    if ncols != len(rec.types):
        return f"wrong number of columns: expected {len(rec.types)}, got {ncols}"
    rows = format_rows(res.rows, rec.types, res.oids)
    if rec.sort == "rowsort":
        rows.sort()
    if rec.sort == "valuesort":
        values = sorted(v for row in rows for v in row)
    else:
        values = [v for row in rows for v in row]
    if rec.hash_value is not None:
        if len(values) == rec.hash_count and hash_values(values) == rec.hash_value:
            return None
        return _actual_text(values, True)
    expected = rec.expected_lines or []
    if mode == "cockroach" and len(expected) == len(rows) and rec.sort != "valuesort":
        got = [" ".join(r) for r in rows]
        exp = [" ".join(e.split()) for e in expected]
        return None if got == exp else "\n".join(got)
    return None if values == expected else _actual_text(values, False)


def run_records(
    records: list[Record],
    conn_factory: Callable[[], PgConnection],
    file_label: str,
    opts: RunOptions,
    setup: Callable[[PgConnection], None] | None = None,
) -> FileResult:
    res = FileResult(file_label, on_failure=opts.on_failure)
    t0 = time.monotonic()
    conn = conn_factory()
    if setup:
        setup(conn)
    mode = "standard"
    labels: dict[str, str] = {}
    seen = 0
    queries = 0
    try:
        for rec in records:
            if rec.kind in ("statement", "query"):
                seen += 1
                if opts.limit is not None and seen > opts.limit:
                    break
            if rec.kind == "query":
                queries += 1
                if opts.query_every > 1 and (queries - 1) % opts.query_every:
                    continue
            skip = rec.skipped_for(opts.engines)
            if rec.kind == "halt":
                if skip:
                    continue
                break
            if rec.kind == "mode":
                if not skip:
                    mode = rec.arg
                continue
            if rec.kind == "hash-threshold":
                continue
            if skip:
                res.skipped += 1
                res.skipped_lines.append(rec.line)
                continue
            if res.aborted:
                _fail(res, rec, file_label, "not run", res.aborted, "aborted")
                continue
            reason = _run_one(rec, conn, res, file_label, mode, labels if opts.label_check else None)
            if reason is None and opts.auto_index_selects and rec.kind == "query" and not conn.broken:
                reason = _run_through_view(rec, conn, res, file_label, mode)
            if reason is None:
                res.passed += 1
                res.passed_lines.append(rec.line)
            if conn.broken:
                # the server went away or the connection broke: try once to go on
                conn.close()
                try:
                    conn = conn_factory()
                    resume = getattr(setup, "resume", setup)
                    if resume:
                        resume(conn)
                except Exception as e:  # noqa: BLE001
                    res.aborted = f"connection lost and reconnect failed: {e}"
    finally:
        if setup and not opts.keep_schema and not conn.broken:
            with contextlib.suppress(Exception):
                teardown = getattr(setup, "teardown", None)
                if teardown:
                    teardown(conn)
        conn.close()
    res.seconds = time.monotonic() - t0
    return res


def _fail(res: FileResult, rec: Record, file_label: str, expected: str, actual: str, reason: str,
          sqlstate: str | None = None) -> str:
    res.failed += 1
    res.failed_lines[rec.line] = sqlstate or reason
    res.failures.append(Failure(file_label, rec.line, rec.sql, rec.kind, expected, actual, sqlstate))
    if res.on_failure is not None:
        res.on_failure(res.failures[-1])
    return reason


def _run_one(rec: Record, conn: PgConnection, res: FileResult, file_label: str, mode: str,
             labels: dict[str, str] | None) -> str | None:
    """Run one record; returns None when it passed, else a short failure reason."""
    try:
        out = conn.execute(rec.sql)
    except DbError as e:
        res.error_states[rec.line] = e.sqlstate
        if rec.expect == "error":
            if rec.error_regex and not re.search(rec.error_regex, e.message):
                return _fail(res, rec, file_label, f"error matching {rec.error_regex!r}",
                             f"{e.sqlstate}: {e.message}", "wrong error", e.sqlstate)
            return None
        return _fail(res, rec, file_label, "ok" if rec.kind == "statement" else _expected_text(rec),
                     f"error {e.sqlstate}: {e.message}", "error", e.sqlstate)
    if rec.expect == "error":
        return _fail(res, rec, file_label, "error", "ok", "no error")
    if rec.kind == "statement":
        if rec.expect == "count" and out.rowcount != rec.count:
            return _fail(res, rec, file_label, f"count {rec.count}", f"count {out.rowcount}", "wrong count")
        return None
    if not out.oids:
        return _fail(res, rec, file_label, _expected_text(rec), "statement returned no rows", "no rows")
    bad = check_query(rec, out, mode)
    if bad is not None:
        return _fail(res, rec, file_label, _expected_text(rec), bad, "wrong result")
    if labels is not None and rec.label:
        vals = format_rows(out.rows, rec.types, out.oids)
        if rec.sort == "rowsort":
            vals.sort()
        flat = [v for r in vals for v in r]
        if rec.sort == "valuesort":
            flat.sort()
        h = hash_values(flat)
        prev = labels.setdefault(rec.label, h)
        if prev != h:
            return _fail(res, rec, file_label, f"same values as earlier {rec.label}",
                         _actual_text(flat, True), "label mismatch")
    return None


def _run_through_view(rec: Record, conn: PgConnection, res: FileResult, file_label: str, mode: str) -> str | None:
    """--auto-index-selects for a record that passed: the same check through an indexed view
    (tests/slt/auto_index.py). None when it passes there too (or is not a SELECT)."""
    v = view_sql(rec.sql, ncols=None if rec.multiline else len(rec.types))
    if v is None:
        return None
    res.view_checked += 1
    what = "ok" if rec.expect == "error" else _expected_text(rec)
    try:
        try:
            conn.execute(v.create_view)
            conn.execute(v.create_index)
            out = conn.execute(v.select)
        finally:
            with contextlib.suppress(DbError):
                if not conn.broken:
                    conn.execute(v.drop)
    except DbError as e:
        if rec.expect == "error" and (not rec.error_regex or re.search(rec.error_regex, e.message)):
            return None
        res.view_failed += 1
        return _fail(res, rec, file_label, what, f"through an indexed view: error {e.sqlstate}: {e.message}",
                     "view error", e.sqlstate)
    bad = "ok" if rec.expect == "error" else check_query(rec, out, mode)
    if bad is None:
        return None
    res.view_failed += 1
    return _fail(res, rec, file_label, what, f"through an indexed view: {bad}", "view wrong result")


class SchemaSetup:
    """Fresh schema per file: DROP ... CASCADE, CREATE, SET search_path; dropped afterwards."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, conn: PgConnection) -> None:
        conn.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")
        conn.execute(f"CREATE SCHEMA {self.name}")
        conn.execute(f"SET search_path TO {self.name}")

    def resume(self, conn: PgConnection) -> None:
        """After a reconnect: back into the file's schema, keeping its objects."""
        conn.execute(f"SET search_path TO {self.name}")

    def teardown(self, conn: PgConnection) -> None:
        conn.execute("SET search_path TO public")
        conn.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")


def schema_name(file_label: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", file_label.lower()).strip("_")
    return f"slt_{stem[-40:]}_{uuid.uuid4().hex[:6]}"


# ---------------------------------------------------------------------------------------------
# files, tables, CLI


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.test") if q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(p)
    return out


def file_label(path: Path, root: Path | None = None) -> str:
    path = path.resolve()
    for base in [DEFAULT_CORPUS, root]:
        if base is None:
            continue
        with contextlib.suppress(ValueError):
            return str(path.relative_to(base.resolve()))
    return str(path)


def run_file(path: Path, dsn: str, opts: RunOptions, label: str | None = None,
             limit: int | None = None, query_every: int | None = None) -> FileResult:
    label = label or file_label(path)
    records = parse_file(path)
    o = opts
    if limit is not None:
        o = RunOptions(**{**o.__dict__, "limit": limit})
    if query_every is not None:
        o = RunOptions(**{**o.__dict__, "query_every": query_every})
    return run_records(
        records,
        lambda: PgConnection(dsn, o.timeout_s),
        label,
        o,
        setup=SchemaSetup(schema_name(label)),
    )


def run_files(files: list[Path], dsn: str, opts: RunOptions, jobs: int = 1,
              root: Path | None = None, progress: Callable[[FileResult], None] | None = None,
              limits: dict[Path, int | None] | None = None) -> list[FileResult]:
    # biggest files first so that parallel workers finish together
    order = sorted(range(len(files)), key=lambda i: -files[i].stat().st_size) if jobs > 1 else list(range(len(files)))
    results: dict[int, FileResult] = {}

    def one(i: int) -> None:
        f = files[i]
        label = file_label(f, root)
        lim = (limits or {}).get(f, opts.limit)
        try:
            r = run_file(f, dsn, opts, label, lim)
        except Exception as e:  # noqa: BLE001 - report and go on with the other files
            r = FileResult(label, aborted=f"{type(e).__name__}: {e}")
        results[i] = r
        if progress:
            progress(r)

    if jobs <= 1:
        for i in order:
            one(i)
    else:
        with ThreadPoolExecutor(jobs) as ex:
            list(ex.map(one, order))
    return [results[i] for i in range(len(files))]


def worse_than_pg_count(r: FileResult) -> int | None:
    """Failed records that PostgreSQL 15 passes (None when there are no expectations)."""
    from tests.slt.expected import has_expected, worse_than_pg

    if not has_expected(r.file):
        return None
    return len(worse_than_pg(r))


def format_table(results: list[FileResult], total_seconds: float | None = None,
                 compare_pg: bool = True) -> str:
    """The per-file table; `PG-passes` = failed records that PostgreSQL 15 passes."""
    w = max([len("file"), *(len(r.file) for r in results)])
    worse = [worse_than_pg_count(r) if compare_pg else None for r in results]
    show = any(x is not None for x in worse)
    views = any(r.view_checked for r in results)
    extra_h = (f" | {'PG-passes':>9}" if show else "") + (f" | {'view-only':>9}" if views else "")
    extra_l = (f"-+-{'-' * 9}" if show else "") + (f"-+-{'-' * 9}" if views else "")
    sep = f"{'-' * w}-+-{'-' * 7}-+-{'-' * 7}-+-{'-' * 7}-+-{'-' * 8}{extra_l}"
    lines = [f"{'file':<{w}} | {'passed':>7} | {'failed':>7} | {'skipped':>7} | {'seconds':>8}{extra_h}", sep]
    for r, x in zip(results, worse, strict=True):
        note = f"  ({r.aborted})" if r.aborted else ""
        extra = (f" | {'-' if x is None else x:>9}" if show else "") + (f" | {r.view_failed:>9}" if views else "")
        lines.append(f"{r.file:<{w}} | {r.passed:>7} | {r.failed:>7} | {r.skipped:>7} | {r.seconds:>8.1f}{extra}{note}")
    p = sum(r.passed for r in results)
    f = sum(r.failed for r in results)
    s = sum(r.skipped for r in results)
    wt = sum(x or 0 for x in worse)
    secs = total_seconds if total_seconds is not None else sum(r.seconds for r in results)
    lines.append(sep)
    vf = sum(r.view_failed for r in results)
    extra = (f" | {wt:>9}" if show else "") + (f" | {vf:>9}" if views else "")
    lines.append(f"{'total':<{w}} | {p:>7} | {f:>7} | {s:>7} | {secs:>8.1f}{extra}")
    rate = 100.0 * p / (p + f) if p + f else 0.0
    lines.append(f"total: {p} passed, {f} failed, {s} skipped; pass rate {rate:.2f}%")
    if show:
        lines.append(f"failed records that PostgreSQL 15 passes (tests/slt/pg_expected): {wt}"
                     + (f" ({100.0 * wt / (p + f):.2f}% of the records run)" if p + f else ""))
    if views:
        lines.append(f"--auto-index-selects: {sum(r.view_checked for r in results)} SELECT records also run through "
                     f"an indexed view; {vf} of them passed as a plain query but failed through the view (view-only)")
    return "\n".join(lines)


def write_expected(results: list[FileResult], out_dir: Path, engine: str) -> None:
    """The compact per-file expectations (see tests/slt/pg_expected/README.md)."""
    for r in results:
        if r.aborted:
            raise RuntimeError(f"{r.file}: aborted ({r.aborted}); not writing expectations")
        path = out_dir / f"{r.file}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "file": r.file,
            "engine": engine,
            "totals": {"passed": r.passed, "failed": r.failed, "skipped": r.skipped},
            "failed": {str(k): v for k, v in sorted(r.failed_lines.items())},
            "skipped": r.skipped_lines,
            "errors": {str(k): v for k, v in sorted(r.error_states.items())},
        }
        path.write_text(_compact_json(doc) + "\n")


def _compact_json(doc: dict[str, Any]) -> str:
    parts = [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in doc.items()]
    return "{\n" + ",\n".join(parts) + "\n}"


def start_mzspark(tmp: Path, spark_master: str, log: Path) -> Any:
    from tests.integration.harness import MzServer

    server = MzServer(tmp / "mzdata", log, spark_master=spark_master)
    server.start()
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.slt.runner", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="files or directories of *.test files (default: the shared corpus)")
    ap.add_argument("--dsn", help="connect here instead of starting an mzspark server")
    ap.add_argument("--engine", default="materialize",
                    help="engine name for skipif/onlyif; 'materialize' (default) also answers to 'postgresql'")
    ap.add_argument("--limit", type=int, help="run only the first N statement/query records of each file")
    ap.add_argument("--query-every", type=int, default=1, metavar="K",
                    help="run every statement but only every K-th query record (a sample)")
    ap.add_argument("--jobs", type=int, default=1, help="files run in parallel (one connection each)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="per-statement timeout, seconds (0 = none)")
    ap.add_argument("--failures", type=Path, help="write failures (JSON lines: file, line, sql, expected, actual)")
    ap.add_argument("--record-expected", type=Path, metavar="DIR",
                    help="write per-file expectations (the pg_expected format) into DIR")
    ap.add_argument("--spark-master", default="local[2]", help="for the server started by the runner")
    ap.add_argument("--server-log", type=Path, help="log file of the server started by the runner")
    ap.add_argument("--auto-index-selects", action="store_true",
                    help="also run each SELECT record as CREATE VIEW + CREATE DEFAULT INDEX + SELECT * FROM the view")
    ap.add_argument("--check-pg", action="store_true",
                    help="exit 1 when a record that PostgreSQL 15 passes (tests/slt/pg_expected) failed")
    ap.add_argument("--quiet", action="store_true", help="no per-file progress on stderr")
    args = ap.parse_args(argv)

    engines = DEFAULT_ENGINES if args.engine == "materialize" else frozenset({args.engine})
    paths = args.paths or [str(DEFAULT_CORPUS)]
    files = collect_files(paths)
    if not files:
        print("no .test files found", file=sys.stderr)
        return 2
    root = Path(paths[0]).resolve() if len(paths) == 1 and Path(paths[0]).is_dir() else None
    opts = RunOptions(engines=engines, limit=args.limit, timeout_s=args.timeout,
                      query_every=args.query_every, auto_index_selects=args.auto_index_selects)
    lock = threading.Lock()
    if args.failures:
        args.failures.write_text("")

        def log_failure(fl: Failure) -> None:
            with lock, open(args.failures, "a") as f:
                f.write(json.dumps(fl.to_json()) + "\n")
        opts.on_failure = log_failure

    server = None
    tmp = None
    dsn = args.dsn
    if not dsn:
        tmp = Path(tempfile.mkdtemp(prefix="slt_mzspark_"))
        log = args.server_log or tmp / "server.log"
        print(f"starting mzspark (log: {log}) ...", file=sys.stderr, flush=True)
        server = start_mzspark(tmp, args.spark_master, log)
        dsn = server.dsn
        print(f"mzspark ready on {server.host}:{server.port}", file=sys.stderr, flush=True)
    done = [0]

    def progress(r: FileResult) -> None:
        if args.quiet:
            return
        with lock:
            done[0] += 1
            note = f" ABORTED: {r.aborted}" if r.aborted else ""
            views = f" view-only-failed {r.view_failed}/{r.view_checked}" if r.view_checked else ""
            print(f"[{done[0]}/{len(files)}] {r.file}: passed {r.passed} failed {r.failed} "
                  f"skipped {r.skipped}{views} ({r.seconds:.1f}s){note}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    try:
        results = run_files(files, dsn, opts, jobs=args.jobs, root=root, progress=progress)
    finally:
        if server is not None:
            server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.monotonic() - t0
    print(format_table(results, elapsed, compare_pg=not args.record_expected))
    if args.record_expected:
        engine = _server_version(dsn)
        write_expected(results, args.record_expected, engine)
    if any(r.aborted for r in results):
        return 1
    if args.check_pg and any(worse_than_pg_count(r) for r in results):
        return 1
    return 0


def _server_version(dsn: str) -> str:
    c = PgConnection(dsn)
    try:
        return str(c.execute("SELECT version()").rows[0][0])
    finally:
        c.close()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
