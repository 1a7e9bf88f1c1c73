"""EXISTS / IN / NOT EXISTS / NOT IN rendered as Spark semi- and anti-joins where the plan is a
join with a fully keyed set (compute.render.semijoin), answered as PostgreSQL 15 answers them:
NULL keys (null-safe equivalences inside, SQL `=` outside), duplicate outer rows (each kept
with its multiplicity), multi-column keys, and semi-joins inside larger joins."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.o (k int, v int, tag text)",
    "INSERT INTO {s}.o VALUES (1, 10, 'a'), (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (NULL, 40, 'd'), "
    "(NULL, NULL, 'e'), (5, 50, 'f'), (5, 51, 'f')",
    "CREATE TABLE {s}.i (k int, v int, w int)",
    "INSERT INTO {s}.i VALUES (1, 10, 0), (1, 11, 1), (1, 11, 1), (2, NULL, 2), (NULL, 40, 3), (4, 40, 4), (5, 50, 5)",
    "CREATE TABLE {s}.d (k int, name text)",
    "INSERT INTO {s}.d VALUES (1, 'one'), (2, 'two'), (3, 'three'), (5, 'five'), (NULL, 'none')",
]

QUERIES = [
    "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k = o.k)",
    "SELECT * FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.k)",
    "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.v = o.v)",
    "SELECT * FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.v = o.v)",
    "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.v <> o.v)",
    "SELECT * FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.w > 0 AND i.v <> o.v)",
    "SELECT * FROM o WHERE k IN (SELECT k FROM i)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM i WHERE k IS NOT NULL)",
    "SELECT * FROM o WHERE k NOT IN (SELECT k FROM i)",
    "SELECT * FROM o WHERE (k, v) IN (SELECT k, v FROM i)",
    "SELECT o.tag, d.name FROM o, d WHERE o.k = d.k AND EXISTS (SELECT 1 FROM i WHERE i.k = d.k AND i.w > 1)",
    "SELECT o.tag, d.name FROM o JOIN d ON o.k = d.k WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.v = o.v)",
    "SELECT d.name, count(*) FROM d, o WHERE d.k = o.k AND o.v IN (SELECT v FROM i) GROUP BY d.name",
    "SELECT o.tag, x.k FROM o, (SELECT DISTINCT k FROM i) x WHERE o.k = x.k",
    "SELECT count(*) FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k = o.k) AND NOT EXISTS (SELECT 1 FROM d WHERE d.k = o.k AND d.name > 'o')",
    # outer joins whose ON clause is key equalities and right-side predicates: the unmatched
    # left rows are those whose keys the join lacks (duplicates and NULL keys of o kept)
    "SELECT o.*, i.w FROM o LEFT JOIN i ON o.k = i.k",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON o.k = i.k AND i.w > 1",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON i.k = o.k AND i.v = o.v",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON o.k = i.k + 1 AND i.v IS NOT NULL",
    "SELECT o.*, i.w FROM o FULL JOIN i ON o.k = i.k AND i.w <> 2",
    "SELECT o.tag, count(i.w) FROM o LEFT JOIN i ON o.k = i.k AND i.w > 0 GROUP BY o.tag",
    "SELECT o.*, d.name FROM o LEFT JOIN i ON o.k = i.k LEFT JOIN d ON d.k = o.k AND d.name <> 'two'",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON true",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON i.w > 3",
    # a left-side predicate or a disjunction in ON: whole left rows decide
    "SELECT o.*, i.w FROM o LEFT JOIN i ON o.k = i.k AND o.v > 10",
    "SELECT o.*, i.w FROM o LEFT JOIN i ON o.k = i.k OR o.v = i.v",
    # inside a correlated subquery
    "SELECT d.name, (SELECT count(i.w) FROM o LEFT JOIN i ON o.k = i.k AND i.w > d.k WHERE o.k = d.k) FROM d",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "semianti-", "sa", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_semi_anti_answers_as_postgres(both, sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql), sql
