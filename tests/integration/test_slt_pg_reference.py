"""The sqllogictest runner against a real PostgreSQL 15 reproduces the checked-in PostgreSQL
outcomes (tests/slt/pg_expected/, which match ../shared/slt/sqlite/POSTGRES_BASELINE.md)
record by record: a check of the runner itself (parsing, conditions, formatting, hashing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pgref import reference_postgres
from tests.slt.expected import load_expected
from tests.slt.runner import DEFAULT_CORPUS, RunOptions, run_file

FILES = [
    "select1.test",
    *sorted(str(p.relative_to(DEFAULT_CORPUS)) for p in (DEFAULT_CORPUS / "evidence").glob("*.test")),
    "index/between/1/slt_good_0.test",
    "index/random/10/slt_good_0.test",
]


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str]:
    with reference_postgres("slt-pgref-") as dsn:
        yield dsn


def test_corpus_present() -> None:
    assert (DEFAULT_CORPUS / "select1.test").is_file(), f"sqllogictest corpus missing at {DEFAULT_CORPUS}"
    assert len(FILES) >= 14


@pytest.mark.parametrize("label", FILES)
def test_runner_reproduces_postgres_outcomes(pg_dsn: str, label: str) -> None:
    res = run_file(Path(DEFAULT_CORPUS / label), pg_dsn, RunOptions(), label)
    doc = load_expected(label)
    assert res.aborted is None
    assert {"passed": res.passed, "failed": res.failed, "skipped": res.skipped} == doc["totals"]
    assert {str(k): v for k, v in res.failed_lines.items()} == doc["failed"]
    assert res.skipped_lines == doc["skipped"]
    assert {str(k): v for k, v in res.error_states.items()} == doc["errors"]
