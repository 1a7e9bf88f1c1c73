"""PostgreSQL 15's outcomes on the corpus (`tests/slt/pg_expected/`, see its README) and the
comparison "every record PostgreSQL passes must pass here"."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tests.slt.runner import Failure, FileResult

PG_EXPECTED_DIR = Path(__file__).resolve().parent / "pg_expected"


def expected_path(label: str) -> Path:
    return PG_EXPECTED_DIR / f"{label}.json"


def has_expected(label: str) -> bool:
    return expected_path(label).exists()


@lru_cache(maxsize=64)
def load_expected(label: str) -> dict[str, Any]:
    path = expected_path(label)
    if not path.exists():
        raise FileNotFoundError(f"no PostgreSQL expectations for {label} ({path})")
    return json.loads(path.read_text())


def worse_than_pg(result: FileResult, doc: dict[str, Any] | None = None) -> list[Failure]:
    """Failures of records that PostgreSQL passes (only records that ran are considered)."""
    doc = doc if doc is not None else load_expected(result.file)
    pg_failed = doc["failed"]
    pg_skipped = set(doc["skipped"])
    return [f for f in result.failures if str(f.line) not in pg_failed and f.line not in pg_skipped]


def skip_mismatches(result: FileResult, doc: dict[str, Any] | None = None) -> list[int]:
    """Lines whose skipped-ness differs from the PostgreSQL run (a runner bug if any); only
    the records this run reached count (it may have had a limit or sampled the queries)."""
    doc = doc if doc is not None else load_expected(result.file)
    ran = set(result.passed_lines) | {int(k) for k in result.failed_lines}
    ours = set(result.skipped_lines)
    pg = set(doc["skipped"])
    return sorted((ours - pg) | (ran & pg))
