"""A representative part of the sqllogictest corpus (../shared/slt/sqlite/) against the real
server: every record that PostgreSQL 15 passes (tests/slt/pg_expected/) must pass here.

The part (`make slt` runs everything):
- evidence/*: whole files;
- files whose statements all come first (tables and data) and whose queries do not change
  state: every statement and a deterministic sample of the queries (every k-th, spread over
  the whole file);
- files that interleave writes/DDL with queries (index/delete, index/view) and select1: a
  prefix, long enough in index/delete to cover a DROP TABLE / CREATE TABLE / INSERT ... SELECT
  / DELETE cycle.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.harness import MzServer
from tests.slt.expected import load_expected, skip_mismatches, worse_than_pg
from tests.slt.runner import (
    DEFAULT_CORPUS,
    FileResult,
    RunOptions,
    collect_files,
    file_label,
    format_table,
    run_file,
)

# path prefix -> (first N statement/query records or None for all, run every k-th query)
SUBSET: dict[str, tuple[int | None, int]] = {
    "evidence/": (None, 1),
    "select1.test": (45, 1),
    "select2.test": (None, 50),
    "index/delete/": (364, 1),
    "index/view/": (100, 1),
    "index/between/": (None, 600),  # its queries are the slowest (deep OR/BETWEEN trees)
    "index/": (None, 300),
    "random/": (None, 250),
}


def _spec(label: str) -> tuple[int | None, int]:
    for prefix, spec in SUBSET.items():
        if label.startswith(prefix):
            return spec
    raise KeyError(f"no subset spec for corpus file {label}")


FILES = [file_label(p) for p in collect_files([DEFAULT_CORPUS])] if DEFAULT_CORPUS.is_dir() else []


def test_corpus_present() -> None:
    assert DEFAULT_CORPUS.is_dir(), f"sqllogictest corpus missing at {DEFAULT_CORPUS}"
    assert len(FILES) >= 25


@pytest.fixture(scope="module")
def subset_results(request: pytest.FixtureRequest) -> Iterator[list[FileResult]]:
    """Collects every file's result; prints the table (with the PG comparison) at the end."""
    results: list[FileResult] = []
    yield results
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if results and reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            reporter.write_line("sqllogictest CI subset against mzspark:")
            for line in format_table(results).splitlines():
                reporter.write_line(line)


@pytest.mark.parametrize("label", FILES)
def test_slt_subset(mz_server: MzServer, subset_results: list[FileResult], label: str) -> None:
    limit, every = _spec(label)
    res = run_file(Path(DEFAULT_CORPUS / label), mz_server.dsn, RunOptions(timeout_s=120), label,
                   limit=limit, query_every=every)
    subset_results.append(res)
    doc = load_expected(label)
    assert res.aborted is None, res.aborted
    assert skip_mismatches(res, doc) == []
    worse = worse_than_pg(res, doc)
    report = "\n".join(
        f"line {f.line}: {f.sql!r}\n    expected: {f.expected[:200]!r}\n    actual:   {f.actual[:300]!r}"
        for f in worse
    )
    assert not worse, (
        f"{len(worse)} of {res.passed + res.failed} records that PostgreSQL 15 passes fail "
        f"(passed {res.passed}, failed {res.failed}, skipped {res.skipped}):\n{report}"
    )
