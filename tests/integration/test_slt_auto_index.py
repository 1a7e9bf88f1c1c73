"""A small sample of the sqllogictest corpus with `--auto-index-selects` (Materialize's mode:
each SELECT record also through CREATE VIEW + CREATE DEFAULT INDEX + SELECT * FROM the view):
every record PostgreSQL 15 passes must pass both ways, and none may pass as a plain query but
fail through the view. `make slt-auto-index` runs the whole corpus this way."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.harness import MzServer
from tests.slt.expected import load_expected, worse_than_pg
from tests.slt.runner import DEFAULT_CORPUS, RunOptions, run_file

pytestmark = pytest.mark.integration

# corpus file -> (first N statement/query records, every k-th query): aggregates, IN lists,
# joins, ORDER BY … LIMIT (re-imposed on the view), DISTINCT, views over views, NULLs
SAMPLE = {
    "evidence/in1.test": (40, 1),
    "select1.test": (36, 1),
    "random/aggregates/slt_good_0.test": (None, 400),
    "index/orderby/10/slt_good_0.test": (None, 400),
}


@pytest.mark.parametrize("label", list(SAMPLE))
def test_slt_auto_index_sample(mz_server: MzServer, label: str) -> None:
    limit, every = SAMPLE[label]
    res = run_file(Path(DEFAULT_CORPUS / label), mz_server.dsn, RunOptions(timeout_s=120, auto_index_selects=True),
                   label, limit=limit, query_every=every)
    assert res.aborted is None, res.aborted
    assert res.view_checked >= 5
    view_only = [f for f in res.failures if f.actual.startswith("through an indexed view")]
    worse = worse_than_pg(res, load_expected(label))
    report = "\n".join(f"line {f.line}: {f.sql!r}\n    expected: {f.expected[:200]!r}\n    actual: {f.actual[:300]!r}"
                       for f in view_only + worse)
    assert not view_only and not worse, (
        f"{len(view_only)} records fail only through the view, {len(worse)} that PostgreSQL passes fail "
        f"(view checks {res.view_checked}):\n{report}")
