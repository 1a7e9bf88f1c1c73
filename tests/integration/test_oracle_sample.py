"""A fixed sample of the random-query oracle (tests/oracle) against the real server: every
query's rows equal PostgreSQL 15's (or both fail alike), and the TLP / NoREC relations hold.
Only the classes in tests/oracle/KNOWN.md are excluded (each names the branch fixing it).
`make oracle` runs the long version."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.oracle.__main__ import is_discrepancy, postgres_c_collation
from tests.oracle.runner import Oracle

pytestmark = pytest.mark.integration

# (tier, first seed, count): the light tier is one or two tables without nesting; the full
# tier nests derived tables, LATERAL, subqueries, CTEs and set operations.
SAMPLES = [("light", 500_000, 60), ("full", 900_000, 20)]


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str]:
    with postgres_c_collation() as dsn:
        yield dsn


@pytest.mark.parametrize("tier,start,count", SAMPLES)
def test_oracle_sample(mz_server: MzServer, pg_dsn: str, tier: str, start: int, count: int) -> None:
    with mz_server.connect() as mz, psycopg.connect(pg_dsn, autocommit=True) as pg:
        oracle = Oracle(mz, pg, block=count, prefix=f"oracle_{tier}_", tier=tier)
        bad = []
        try:
            for seed in range(start, start + count):
                bad += [f.report() for f in oracle.run_seed(seed) if is_discrepancy(f)]
        finally:
            oracle.close()
        assert bad == [], "\n\n".join(bad)
        assert oracle.stats.queries >= count
