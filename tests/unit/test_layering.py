"""DESIGN §1 layering: sql/ and compute/plan/ never import pyspark or duckdb (directly or
indirectly); duckdb is imported only by catalog/; only server.pgwire imports server.pgwire. Enforced by import-linter's contracts in
pyproject.toml, plus a check that importing the whole planner loads neither library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_hold() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 kept, 0 broken" in r.stdout


def test_planner_imports_load_no_engine() -> None:
    code = (
        "import sys, pkgutil, importlib, sql, compute.plan\n"
        "for pkg in (sql, compute.plan):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = [m for m in ('pyspark', 'duckdb') if m in sys.modules]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
