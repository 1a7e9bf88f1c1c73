"""Data-driven golden files for the planner (no Spark is ever started).

Format of a `.golden` file: cases separated by blank lines; `#` lines are comments.

    statement ok                 statement error 42P01          explain
    CREATE TABLE t (a int)       SELECT * FROM nope             EXPLAIN ... FOR SELECT ...
                                                                ----
                                                                <expected output>
                                                                ====

A case's SQL may span several lines. `explain`/`query` cases compare the statement's rows
(one text cell each, joined by newlines) with the block between `----` and `====`.

A `transform` case runs one MIR transform on the decorrelated MIR of a SELECT (bound by the
real Coordinator) and shows the input, `=>`, then the output (or `unchanged`):

    transform <name> [after=<pipeline or transform>,..] [monotonic=<relation>,..] [lir]
    SELECT ...

`after=` first runs pipelines (`logical`, `physical`: to their fixpoint, less the transform
under test) or single transforms, so the case starts from a realistic plan; `monotonic=` names the storage
relations that are append-only (MonotonicFlag's parameter); `lir` adds the maintained LIR
lowering of the output. Transform names are those of `sql.optimize.TRANSFORMS`.
Set REWRITE_GOLDENS=1 to rewrite the expected blocks from the actual output.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from server.coordinator import Coordinator
from sql.errors import SqlError
from sql.literal import to_text


@dataclass
class Case:
    kind: str  # statement | explain | query
    arg: str  # ok | <sqlstate> for statements
    sql: str
    expected: str | None
    line: int
    head: tuple[str, ...] = ()


def parse_golden(text: str) -> list[Case]:
    lines = text.split("\n")
    cases: list[Case] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        start = i
        head = line.split()
        kind = head[0]
        arg = head[-1] if len(head) > 1 else ""
        if kind == "statement" and len(head) >= 3 and head[1] == "error":
            arg = head[2]
        i += 1
        sql_lines = []
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            sql_lines.append(lines[i])
            i += 1
        expected = None
        if i < len(lines) and lines[i] == "----":
            i += 1
            out = []
            while i < len(lines) and lines[i] != "====":
                out.append(lines[i])
                i += 1
            i += 1
            expected = "\n".join(out)
        cases.append(Case(kind, arg, "\n".join(sql_lines), expected, start + 1, tuple(head)))
    return cases


def render_golden(cases: list[Case], outputs: dict[int, str], original: str) -> str:
    """Rewrite expected blocks in place, keeping comments and spacing."""
    lines = original.split("\n")
    out: list[str] = []
    i = 0
    by_line = {c.line: c for c in cases}
    while i < len(lines):
        case = by_line.get(i + 1)
        if case is None or case.kind == "statement":
            out.append(lines[i])
            i += 1
            continue
        # copy header + sql
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            out.append(lines[i])
            i += 1
        if i < len(lines) and lines[i] == "----":
            i += 1
            while i < len(lines) and lines[i] != "====":
                i += 1
            i += 1
        out.append("----")
        out.append(outputs.get(case.line, ""))
        out.append("====")
    return "\n".join(out)


class GoldenSession:
    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.coord = Coordinator(self.tmp.name)
        self.session = self.coord.new_session("materialize", "materialize", {})

    def close(self) -> None:
        assert self.coord.compute.current is None, "planner goldens must not start Spark"
        self.coord.close()
        self.tmp.cleanup()

    def transform(self, case: Case) -> str:
        """A `transform` case: input MIR, `=>`, the transform's output MIR."""
        from functools import partial

        from compute.plan import pipeline
        from sql.mir_explain import explain_mir
        from sql.optimize import PIPELINES, TRANSFORMS, fixpoint

        name, opts = case.head[1], case.head[2:]
        after = [a for o in opts if o.startswith("after=") for a in o[6:].split(",")]
        mono = {a for o in opts if o.startswith("monotonic=") for a in o[10:].split(",")}
        planned = self.coord.prepare(self.session, "EXPLAIN DECORRELATED PLAN FOR " + case.sql, []).plan
        m = pipeline.to_mir(planned.bound)  # type: ignore[union-attr]
        for a in after:
            if a in PIPELINES:
                m = fixpoint(m, tuple(t for t in PIPELINES[a] if t.__name__ != name))
            else:
                m = TRANSFORMS[a](m)
        t = TRANSFORMS[name]
        if name == "monotonic_flag":
            ids = frozenset(g.id for g in _gets(m) if g.name.split(".")[-1] in mono or g.name in mono)
            t = partial(t, sources=ids)
        out = t(m)
        ji = name == "join_implementation"
        text = explain_mir(m, join_impls=ji) + "\n=>\n" + ("unchanged" if out == m else explain_mir(out, join_impls=ji))
        if "lir" in opts:
            df = pipeline.dataflow(out, None, name="Explained Query", single_time=False)
            text += "\n\n" + pipeline.explain_lir_text(df).rstrip("\n")
        return text

    def run(self, sql: str) -> list[tuple]:
        p = self.coord.prepare(self.session, sql, [])
        r = self.coord.execute(self.session, p, [])
        rows: list[tuple] = []
        for batch in getattr(r, "batches", []):
            rows.extend(batch)
        return rows


def run_file(path: Path) -> list[tuple[Case, str, str]]:
    """Returns the mismatches (case, expected, actual); rewrites the file if asked."""
    text = path.read_text()
    cases = parse_golden(text)
    gs = GoldenSession()
    failures: list[tuple[Case, str, str]] = []
    outputs: dict[int, str] = {}
    try:
        for c in cases:
            if c.kind == "statement":
                try:
                    gs.run(c.sql)
                    got = "ok"
                except SqlError as e:
                    got = e.sqlstate
                    if c.arg == "ok":
                        failures.append((c, "ok", f"{e.sqlstate}: {e.message}"))
                        continue
                if got != c.arg:
                    failures.append((c, c.arg, got))
                continue
            if c.kind == "transform":
                actual = gs.transform(c)
                outputs[c.line] = actual
                if (c.expected or "").rstrip("\n") != actual:
                    failures.append((c, c.expected or "", actual))
                continue
            try:
                rows = gs.run(c.sql)
                actual = "\n".join("|".join("NULL" if v is None else to_text(v, None) if not isinstance(v, str) else v for v in r) for r in rows).rstrip("\n")
            except SqlError as e:
                actual = f"error {e.sqlstate}: {e.message}"
            outputs[c.line] = actual
            if (c.expected or "").rstrip("\n") != actual:
                failures.append((c, c.expected or "", actual))
    finally:
        gs.close()
    if os.environ.get("REWRITE_GOLDENS") == "1":
        path.write_text(render_golden(cases, outputs, text))
        return [f for f in failures if f[0].kind == "statement"]
    return failures


def _gets(m):
    from sql import mir

    if isinstance(m, mir.Get) and not m.local:
        yield m
    for c in mir.mir_children(m):
        yield from _gets(c)
