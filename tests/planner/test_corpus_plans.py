"""Planner walk over the sqllogictest corpus (pure: Spark is never started).

Every non-skipped `query` record of ../shared/slt/sqlite/ that PostgreSQL 15 accepts must
produce an OPTIMIZED and a PHYSICAL plan; the ones PostgreSQL rejects at analysis time
(class-42 SQLSTATEs: syntax, undefined function/operator, datatype mismatch, ...) must be
rejected with PostgreSQL's SQLSTATE; the statements PostgreSQL runs fine must plan (writes)
or run (catalog-only DDL). PostgreSQL's outcomes are in tests/slt/pg_expected/.

CI plans every SLT_PLANS_EVERY-th query of each file (default 3, deterministic: the 1st,
4th, 7th, ... query record); `make slt-plans` plans all of them and rewrites
tests/slt/PLAN_FAILURES.md (the failures grouped by error).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.slt.plans import group_problems, walk_file
from tests.slt.runner import DEFAULT_CORPUS, collect_files, file_label

EVERY = int(os.environ.get("SLT_PLANS_EVERY", "3"))
FILES = [file_label(p) for p in collect_files([DEFAULT_CORPUS])] if DEFAULT_CORPUS.is_dir() else []


def test_corpus_present() -> None:
    assert DEFAULT_CORPUS.is_dir(), f"sqllogictest corpus missing at {DEFAULT_CORPUS}"
    assert len(FILES) >= 25


@pytest.mark.parametrize("label", FILES)
def test_corpus_file_plans(label: str) -> None:
    res = walk_file(Path(DEFAULT_CORPUS / label), EVERY, label)
    assert not res.spark_started, "the planner walk must not start Spark"
    if not res.problems:
        return
    lines = [f"{len(res.problems)} of {res.queries} queries / {res.statements} statements disagree with PostgreSQL 15:"]
    for (what, got, msg), ps in group_problems(res.problems):
        lines.append(f"  {len(ps):5d} x {what} -> {got}: {msg}")
        for p in ps[:2]:
            lines.append(f"          line {p.line}: {p.sql[:200]!r}")
    pytest.fail("\n".join(lines), pytrace=False)
