"""A CI sample of `make pg-regress`: a few PostgreSQL regression scripts, statement by
statement, against a real PostgreSQL 15 through the runner's own code
(tests/pg_regress/runner.py), plus checks that the runner classifies real outcomes correctly.

The sample scripts are ones with no different result and no internal error in the last full
run (tests/pg_regress/RESULTS.md); the test asserts exactly that, so a wrong answer or a
leaked Python/Spark error in any of their statements fails it. Other classes (0A000, other
errors, n/a) are allowed: they are the suite's figures, not regressions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.harness import MzServer
from tests.pg_regress.classify import Cls, classify
from tests.pg_regress.runner import (
    CORPUS,
    Context,
    MzSide,
    Pair,
    make_context,
    preclean,
    run_script,
)
from tests.pgref import reference_postgres

# scripts with 0 different / 0 internal in RESULTS.md (131 statements), and the test_setup
# tables they read (only those are loaded, to keep the test short; these read none)
SAMPLE = ["case", "select_having", "select_implicit"]
SETUP_TABLES: set[str] = set()


@pytest.fixture(scope="module")
def ctx(mz_server: MzServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Context]:
    assert (CORPUS / "sql" / "test_setup.sql").is_file(), f"pg_regress corpus missing at {CORPUS}"
    with reference_postgres("pgregress-sample-", initdb_args=("--locale=C", "-E", "UTF8")) as pg_dsn:
        mz = MzSide(mz_server.dsn, tmp_path_factory.mktemp("pgr"), "local[2]", None)
        c = make_context(mz, pg_dsn, 60.0, CORPUS)
        c.setup_only = SETUP_TABLES
        preclean(c, CORPUS / "sql" / "test_setup.sql")
        setup, _ = run_script(CORPUS / "sql" / "test_setup.sql", c, setup=True)
        assert setup.counts[Cls.SAME] == setup.statements, [
            r.to_json() for r in setup.results if r.verdict.cls is not Cls.SAME]
        yield c


@pytest.mark.parametrize("script", SAMPLE)
def test_sample_script_has_no_wrong_answers(ctx: Context, script: str) -> None:
    res, _ = run_script(Path(CORPUS / "sql" / f"{script}.sql"), ctx)
    bad = [r.to_json() for r in res.results if r.verdict.cls in (Cls.DIFFERENT, Cls.INTERNAL)]
    assert bad == []
    assert res.counts[Cls.SAME] > 0, res.counts


def _pair_outcomes(ctx: Context, pg_sql: str, mz_sql: str):  # type: ignore[no-untyped-def]
    pair = Pair(ctx, None)
    try:
        return pair.pg.run(pg_sql), pair.mz.run(mz_sql)
    finally:
        pair.close(drop=False)


@pytest.mark.parametrize("sql,pg_sql,mz_sql,expected", [
    # the same statement on both sides
    ("VALUES (1), (2), (2)", None, None, Cls.SAME),
    ("SELECT 1/0", None, None, Cls.SAME),  # both 22012
    # deliberately different statements: the runner must see the difference
    ("SELECT 1 AS a", "SELECT 1 AS a", "SELECT 2 AS a", Cls.DIFFERENT),
    ("SELECT 1, 2", "SELECT 1, 2", "SELECT 1", Cls.DIFFERENT),
    ("SELECT x FROM (VALUES (1), (2)) v(x) ORDER BY x",
     None, "SELECT x FROM (VALUES (1), (2)) v(x) ORDER BY x DESC", Cls.DIFFERENT),
    # rows tied on the ORDER BY key may come in any order
    ("SELECT x, y FROM (VALUES (1, 'a'), (1, 'b')) v(x, y) ORDER BY x",
     "SELECT x, y FROM (VALUES (1, 'a'), (1, 'b')) v(x, y) ORDER BY x, y",
     "SELECT x, y FROM (VALUES (1, 'a'), (1, 'b')) v(x, y) ORDER BY x, y DESC", Cls.SAME),
    ("SELECT 1/0", "SELECT 1/0", "SELECT 1", Cls.MZ_OK_PG_ERROR),
    ("SELECT 1", "SELECT 1", "SELECT * FROM pgr_no_such_table", Cls.OTHER_ERROR),
])
def test_runner_classifies_real_outcomes(ctx: Context, sql: str, pg_sql: str | None, mz_sql: str | None,
                                         expected: Cls) -> None:
    pg, mz = _pair_outcomes(ctx, pg_sql or sql, mz_sql or sql)
    assert classify(sql, pg, mz).cls is expected, (pg.short(), mz.short())
