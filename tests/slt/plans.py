"""Planner walk over the sqllogictest corpus, in process, without Spark.

For every file: a fresh `server.coordinator.Coordinator` on a temporary data directory (it only
starts Spark lazily; we never execute anything that needs it). Records run in order:
- `statement` records: INSERT/UPDATE/DELETE/REPLACE are only planned (`Coordinator.prepare`);
  anything else (CREATE TABLE/VIEW/INDEX, DROP, ...) is catalog-only and is prepared and executed.
- `query` records: `EXPLAIN OPTIMIZED PLAN FOR <q>` and `EXPLAIN PHYSICAL PLAN FOR <q>` are
  prepared and executed (planning is pure Python).

Each record is checked against PostgreSQL 15's outcome (`tests/slt/pg_expected/`):
- PostgreSQL accepted it -> both plans (or the statement) must succeed;
- PostgreSQL rejected a query with a class-42 SQLSTATE (syntax, undefined function/operator,
  datatype mismatch, grouping, ...) -> planning must fail with that SQLSTATE;
- PostgreSQL failed it at run time (any other SQLSTATE, e.g. 22012) -> planning may succeed or
  fail with the same SQLSTATE.
`statement error` records that PostgreSQL passes are run but not judged (their errors are
mostly run-time ones that planning cannot see, e.g. constraint violations).

    python -m tests.slt.plans [--every K] [--write-md tests/slt/PLAN_FAILURES.md] [FILES/DIRS...]
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.slt.expected import load_expected
from tests.slt.parser import parse_file
from tests.slt.runner import DEFAULT_CORPUS, DEFAULT_ENGINES, collect_files, file_label

WRITE_PREFIXES = ("insert", "update", "delete", "replace")


@dataclass
class PlanProblem:
    file: str
    line: int
    kind: str  # query | statement
    sql: str
    pg: str  # "ok" or PostgreSQL's SQLSTATE
    got: str  # "ok" or our SQLSTATE
    message: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PlanFileResult:
    file: str
    queries: int = 0
    statements: int = 0
    ok: int = 0
    problems: list[PlanProblem] = field(default_factory=list)
    seconds: float = 0.0
    slowest: tuple[float, int] = (0.0, 0)  # (seconds, line) of the slowest query
    spark_started: bool = False


def is_typing_state(state: str) -> bool:
    """SQLSTATEs that PostgreSQL raises while parsing/analysing (planning) a statement."""
    return state.startswith("42")


def _coordinator(tmp: str):
    from server.coordinator import Coordinator

    coord = Coordinator(tmp)
    session = coord.new_session("materialize", "materialize", {})
    return coord, session


def _run_sql(coord, session, sql: str, execute: bool = True) -> None:
    p = coord.prepare(session, sql, [])
    if execute:
        r = coord.execute(session, p, [])
        for _ in getattr(r, "batches", ()):
            pass


def walk_file(path: Path, every: int = 1, label: str | None = None) -> PlanFileResult:
    """Plan every query (or every `every`-th one) of one corpus file; see the module doc."""
    from sql.errors import SqlError

    label = label or file_label(path)
    pg = load_expected(label)
    pg_errors: dict[str, str] = pg.get("errors", {})
    pg_failed: dict[str, str] = pg.get("failed", {})
    records = parse_file(path)
    res = PlanFileResult(label)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="slt_plans_") as tmp:
        coord, session = _coordinator(tmp)
        try:
            qn = 0
            for rec in records:
                if rec.skipped_for(DEFAULT_ENGINES):
                    continue
                if rec.kind == "halt":
                    break
                if rec.kind not in ("statement", "query"):
                    continue
                key = str(rec.line)
                pg_state = pg_errors.get(key, "ok")
                if rec.kind == "statement":
                    res.statements += 1
                    is_write = rec.sql.lstrip().lower().startswith(WRITE_PREFIXES)
                    try:
                        _run_sql(coord, session, rec.sql, execute=not is_write)
                        got, msg = "ok", ""
                    except SqlError as e:
                        got, msg = e.sqlstate, e.message
                    except Exception as e:  # noqa: BLE001 - an internal error is a finding
                        got, msg = "XX000", f"{type(e).__name__}: {e}"
                    # judged only when PostgreSQL ran it fine and it was meant to succeed
                    if rec.expect == "ok" and key not in pg_failed and got != "ok":
                        res.problems.append(PlanProblem(label, rec.line, "statement", rec.sql, "ok", got, msg))
                    else:
                        res.ok += 1
                    continue
                qn += 1
                if every > 1 and (qn - 1) % every:
                    continue
                res.queries += 1
                got, msg = "ok", ""
                q0 = time.monotonic()
                try:
                    for stage in ("OPTIMIZED", "PHYSICAL"):
                        _run_sql(coord, session, f"EXPLAIN {stage} PLAN FOR {rec.sql}")
                except SqlError as e:
                    got, msg = e.sqlstate, e.message
                except RecursionError as e:
                    got, msg = "XX000", f"RecursionError: {e}"
                except Exception as e:  # noqa: BLE001
                    got, msg = "XX000", f"{type(e).__name__}: {e}"
                dt = time.monotonic() - q0
                if dt > res.slowest[0]:
                    res.slowest = (dt, rec.line)
                if pg_state == "ok":
                    bad = got != "ok"
                elif is_typing_state(pg_state):
                    bad = got != pg_state
                else:
                    bad = got not in ("ok", pg_state)
                if bad:
                    res.problems.append(PlanProblem(label, rec.line, "query", rec.sql, pg_state, got, msg))
                else:
                    res.ok += 1
        finally:
            res.spark_started = coord.compute.current is not None
            coord.close()
    res.seconds = time.monotonic() - t0
    return res


# ---------------------------------------------------------------------------------------------
# grouping and reporting

_QUOTED = re.compile(r'"[^"]*"')
_SQUOTED = re.compile(r"'[^']*'")
_NUM = re.compile(r"\b\d+(\.\d+)?\b")
_QUALIFIED = re.compile(r"\b[A-Za-z_]\w*(\.[A-Za-z_]\w*){1,2}\b")


def normalize_message(msg: str) -> str:
    """Group key of an error message: first line, identifiers/literals/numbers abstracted,
    but function and operator names kept (they name the missing construct)."""
    first = msg.strip().split("\n")[0]
    if len(first) > 160:
        first = first[:160] + "..."
    keep_names = re.search(r"function|operator|aggregate|type|cast", first, re.I) is not None
    if not keep_names:
        first = _QUOTED.sub('"?"', first)
        first = _QUALIFIED.sub("?", first)
    first = _SQUOTED.sub("'?'", first)
    first = _NUM.sub("N", first)
    return first


def group_problems(problems: list[PlanProblem]) -> list[tuple[tuple[str, str, str], list[PlanProblem]]]:
    groups: dict[tuple[str, str, str], list[PlanProblem]] = defaultdict(list)
    for p in problems:
        what = "PG ok" if p.pg == "ok" else f"PG {p.pg}"
        groups[(what, p.got, normalize_message(p.message) if p.got != "ok" else "(planned fine)")].append(p)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def render_markdown(results: list[PlanFileResult], every: int, seconds: float) -> str:
    problems = [p for r in results for p in r.problems]
    nq = sum(r.queries for r in results)
    ns = sum(r.statements for r in results)
    bad_q = sum(1 for p in problems if p.kind == "query")
    bad_s = sum(1 for p in problems if p.kind == "statement")
    out = [
        "# Planner walk over the sqllogictest corpus: failures",
        "",
        "Generated by `python -m tests.slt.plans --write-md tests/slt/PLAN_FAILURES.md` "
        "(`make slt-plans`); the test is `tests/planner/test_corpus_plans.py`.",
        "Each non-skipped `query` record of `../shared/slt/sqlite/` is planned with EXPLAIN OPTIMIZED "
        "and EXPLAIN PHYSICAL through the in-process Coordinator (no Spark) and compared with "
        "PostgreSQL 15's outcome (`tests/slt/pg_expected/`): accepted by PG -> must plan; "
        "rejected by PG with a class-42 SQLSTATE -> must be rejected with that SQLSTATE.",
        "",
        f"Queries planned: {nq}" + (f" (every {every}th)" if every > 1 else "") +
        f"; failing: {bad_q}. Statements run: {ns}; failing: {bad_s}. Time: {seconds:.0f} s.",
        "",
        "## Failures grouped by error (PostgreSQL's outcome, ours, normalized message)",
        "",
        "| count | PG | mzspark | message | example (file:line) |",
        "|---:|---|---|---|---|",
    ]
    for (what, got, msg), ps in group_problems(problems):
        ex = ps[0]
        out.append(f"| {len(ps)} | {what} | {got} | {_md(msg)} | {ex.file}:{ex.line} |")
    out += ["", "## Examples (first 2 per group, up to 60 groups)", ""]
    for (what, got, msg), ps in group_problems(problems)[:60]:
        out.append(f"### {len(ps)} x {what} / {got}: {msg}")
        out.append("")
        for p in ps[:2]:
            sql = p.sql.replace("\n", " ")
            out.append(f"- `{p.file}:{p.line}` ({p.kind}): `{_md(sql[:300])}`")
            if p.got != "ok" and p.message.strip().split("\n")[0] != msg:
                out.append(f"  - message: {_md(p.message.strip().split(chr(10))[0][:300])}")
        out.append("")
    out += ["## Per file", "", "| file | queries | statements | failing | seconds | slowest query |",
            "|---|---:|---:|---:|---:|---|"]
    for r in results:
        out.append(f"| {r.file} | {r.queries} | {r.statements} | {len(r.problems)} | {r.seconds:.1f} | "
                   f"{r.slowest[0] * 1000:.0f} ms (line {r.slowest[1]}) |")
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("`", "'")


def summary_lines(results: list[PlanFileResult], top: int = 40) -> list[str]:
    problems = [p for r in results for p in r.problems]
    lines = []
    for (what, got, msg), ps in group_problems(problems)[:top]:
        lines.append(f"{len(ps):6d}  {what:9s} -> {got:6s} {msg}   e.g. {ps[0].file}:{ps[0].line}")
    return lines


NOTES_BEGIN = "<!-- notes: kept when the file is regenerated -->"
NOTES_END = "<!-- /notes -->"


def _kept_notes(path: Path) -> str:
    """The hand-written analysis between the notes markers of an existing file."""
    if not path.exists():
        return ""
    text = path.read_text()
    start = text.find(NOTES_BEGIN)
    end = text.find(NOTES_END)
    if start < 0 or end < start:
        return ""
    return text[start:end + len(NOTES_END)]


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to parsing as a Command"
    ap = argparse.ArgumentParser(prog="python -m tests.slt.plans", description="Plan every corpus query without Spark")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--every", type=int, default=1, help="plan only every K-th query of each file")
    ap.add_argument("--write-md", type=Path, help="write the grouped failures (markdown) here")
    ap.add_argument("--failures", type=Path, help="write every failing record (JSON lines)")
    args = ap.parse_args(argv)
    files = collect_files(args.paths or [str(DEFAULT_CORPUS)])
    t0 = time.monotonic()
    results = []
    for f in files:
        r = walk_file(f, args.every)
        results.append(r)
        print(f"{r.file}: {r.queries} queries, {r.statements} statements, {len(r.problems)} failing, "
              f"{r.seconds:.1f}s (slowest {r.slowest[0] * 1000:.0f} ms at line {r.slowest[1]})",
              file=sys.stderr, flush=True)
    elapsed = time.monotonic() - t0
    print("\n".join(summary_lines(results)))
    total = Counter()
    for r in results:
        total["queries"] += r.queries
        total["failing"] += len(r.problems)
    print(f"total: {total['queries']} queries planned, {total['failing']} failing records, {elapsed:.0f} s")
    if args.write_md:
        text = render_markdown(results, args.every, elapsed)
        notes = _kept_notes(args.write_md)
        if notes:
            head, _, rest = text.partition("## Failures grouped")
            text = head + notes + "\n\n## Failures grouped" + rest
        args.write_md.write_text(text)
    if args.failures:
        with open(args.failures, "w") as fh:
            for r in results:
                for p in r.problems:
                    fh.write(json.dumps(p.to_json()) + "\n")
    if any(r.spark_started for r in results):
        print("error: Spark was started during the planner walk", file=sys.stderr)
        return 1
    return 0 if total["failing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
