"""Planner golden files (tests/goldens/*.golden): EXPLAIN output per transform/refinement.
Rewrite with REWRITE_GOLDENS=1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_runner import run_file

GOLDENS = sorted((Path(__file__).parent.parent / "goldens").glob("*.golden"))


@pytest.mark.parametrize("path", GOLDENS, ids=[p.stem for p in GOLDENS])
def test_golden(path: Path) -> None:
    failures = run_file(path)
    msgs = []
    for case, expected, actual in failures:
        msgs.append(f"{path.name}:{case.line}: {case.sql}\n--- expected\n{expected}\n--- actual\n{actual}")
    assert not failures, "\n\n".join(msgs)
