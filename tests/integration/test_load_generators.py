"""Load-generator sources (server/load_generator.py) and Materialize's quickstart on them.

COUNTER (UP TO n) holds exactly 1..n. AUCTION FOR ALL TABLES creates the subsources with the
quickstart's columns; they grow every tick. Sources are append-only, so maintained plans over
them use the monotonic variants (EXPLAIN: TopK::MonotonicTop1, Reduce ... monotonic) while
the same plans over tables do not. The quickstart's winning-bids view (DISTINCT ON), its
index and a SUBSCRIBE on it run end to end, and the subscription's snapshot at a timestamp T
equals PostgreSQL 15's answer for the same view over the auctions and bids of T (their own
subscriptions' snapshots, declared in the same transaction: one AS OF). (The quickstart's view also has the temporal filter
`mz_now() >= a.end_time`, left out here: mz_now() in maintained dataflows is another issue.)
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

WINNING_BIDS = """SELECT DISTINCT ON (a.id) b.*, a.item, a.seller
FROM auctions AS a
 JOIN bids AS b
   ON a.id = b.auction_id
WHERE b.bid_time < a.end_time
ORDER BY a.id,
  b.amount DESC,
  b.bid_time,
  b.buyer"""


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("loadgen-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        yield conn


def _plan(mz: psycopg.Connection, sql: str) -> str:
    return "\n".join(r[0] for r in mz.execute(sql).fetchall())


def test_counter_up_to(mz_server: MzServer, pg: psycopg.Connection, uniq: Callable[[str], str]) -> None:
    mz = mz_server.connect()
    c = uniq("counter")
    mz.execute(f"CREATE SOURCE {c} FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms', UP TO 7)")
    assert (c, "load-generator") in mz.execute("SELECT name, type FROM mz_catalog.mz_sources").fetchall()
    assert [(d.name, d.type_code) for d in mz.execute(f"SELECT * FROM {c}").description] == [("counter", 20)]
    deadline = time.monotonic() + 120
    while mz.execute(f"SELECT count(*) FROM {c}").fetchone()[0] < 7 and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(1)  # no tick after UP TO
    got = mz.execute(f"SELECT counter, count(*) FROM {c} GROUP BY counter ORDER BY 1").fetchall()
    assert got == pg.execute("SELECT g::bigint, 1::bigint FROM generate_series(1, 7) AS g").fetchall()
    with pytest.raises(psycopg.errors.WrongObjectType):
        mz.execute(f"INSERT INTO {c} VALUES (100)")
    mz.execute(f"DROP SOURCE {c}")
    assert c not in [r[0] for r in mz.execute("SHOW SOURCES").fetchall()]


@pytest.mark.slow
def test_quickstart_auction(mz_server: MzServer, pg: psycopg.Connection, uniq: Callable[[str], str]) -> None:
    schema = uniq("qs")
    mz = mz_server.connect()
    mz.execute(f"CREATE SCHEMA {schema}")
    mz.execute(f"SET search_path = {schema}")
    mz.execute("CREATE SOURCE auction_house FROM LOAD GENERATOR AUCTION (TICK INTERVAL '1s') FOR ALL TABLES")
    shown = dict((r[0], r[1]) for r in mz.execute("SHOW SOURCES").fetchall())
    assert shown == {"auction_house": "load-generator", **{s: "subsource" for s in ("accounts", "auctions", "bids", "organizations", "users")}}
    columns = {t: [(d.name, d.type_code) for d in mz.execute(f"SELECT * FROM {t} LIMIT 0").description]
               for t in ("auctions", "bids", "accounts", "organizations", "users")}
    assert columns == {
        "auctions": [("id", 20), ("seller", 20), ("item", 25), ("end_time", 1184)],
        "bids": [("id", 20), ("buyer", 20), ("auction_id", 20), ("amount", 23), ("bid_time", 1184)],
        "accounts": [("id", 20), ("org_id", 20), ("balance", 20)],
        "organizations": [("id", 20), ("name", 25)],
        "users": [("id", 20), ("org_id", 20), ("name", 25)],
    }
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        mz.execute("SELECT * FROM auction_house")

    mz.execute(f"CREATE VIEW winning_bids AS {WINNING_BIDS}")
    mz.execute("CREATE INDEX wins_by_item ON winning_bids (item)")
    plan = _plan(mz, "EXPLAIN PHYSICAL PLAN FOR INDEX wins_by_item")
    assert "TopK::MonotonicTop1" in plan, plan
    assert "monotonic" in _plan(mz, "EXPLAIN OPTIMIZED PLAN FOR VIEW winning_bids")
    mv = _plan(mz, "EXPLAIN PHYSICAL PLAN FOR CREATE MATERIALIZED VIEW x AS SELECT auction_id, max(amount) FROM bids GROUP BY auction_id")
    assert "Reduce::Hierarchical" in mv and "monotonic" in mv, mv
    # the same plans over tables (which may retract) are not monotonic
    mz.execute("CREATE TABLE tbids (id bigint, buyer bigint, auction_id bigint, amount int, bid_time timestamptz)")
    tplan = _plan(mz, "EXPLAIN PHYSICAL PLAN FOR CREATE MATERIALIZED VIEW y AS "
                  "SELECT DISTINCT ON (auction_id) * FROM tbids ORDER BY auction_id, amount DESC")
    assert "TopK::Basic" in tplan and "Monotonic" not in tplan, tplan

    # a SUBSCRIBE on it: its snapshot at T equals PostgreSQL's answer over the inputs at T,
    # then updates arrive as the generator ticks
    sub = mz_server.connect(autocommit=False)
    sub.execute(f"SET search_path = {schema}")
    snaps: dict[str, list[tuple]] = {}
    cursors = (("a", "auctions"), ("b", "bids"), ("w", "winning_bids"))
    for cursor, what in cursors:  # one transaction: one AS OF; each holds its inputs' compaction from here
        sub.execute(f"DECLARE {cursor} CURSOR FOR SUBSCRIBE {what} WITH (PROGRESS)")
    for cursor, what in cursors:
        rows: list[tuple] = []
        while not any(r[1] for r in rows):  # up to the first progress row: the snapshot
            rows += sub.execute(f"FETCH ALL {cursor}").fetchall()
        snaps[what] = rows
    ts = int(snaps["winning_bids"][0][0])
    assert {int(snaps[k][0][0]) for k in snaps} == {ts}, snaps  # every snapshot at the one AS OF
    assert all(int(r[0]) >= ts for k in snaps for r in snaps[k]), snaps
    auctions, bids, wins = ([tuple(r[3:]) for r in snaps[k] if not r[1] and int(r[0]) == ts for _ in range(r[2])]
                            for k in ("auctions", "bids", "winning_bids"))
    assert len(auctions) >= 1 and len(wins) >= 1
    assert len(set(auctions)) == len(auctions)  # append-only, every auction once
    pg.execute(f"CREATE SCHEMA {schema}")
    pg.execute(f"SET search_path = {schema}")
    pg.execute("CREATE TABLE auctions (id bigint, seller bigint, item text, end_time timestamptz)")
    pg.execute("CREATE TABLE bids (id bigint, buyer bigint, auction_id bigint, amount int, bid_time timestamptz)")
    with pg.cursor() as cur:
        cur.executemany("INSERT INTO auctions VALUES (%s, %s, %s, %s)", auctions)
        cur.executemany("INSERT INTO bids VALUES (%s, %s, %s, %s, %s)", bids)
    assert Counter(wins) == Counter(tuple(r) for r in pg.execute(WINNING_BIDS).fetchall())
    deadline = time.monotonic() + 900
    later: list[tuple] = []
    while not later and time.monotonic() < deadline:
        later = [r for r in sub.execute("FETCH ALL w WITH (timeout = '5s')").fetchall() if not r[1]]
    assert later and all(int(r[0]) > ts and r[2] in (1, -1) for r in later), later
    sub.rollback()

    with pytest.raises(psycopg.errors.DependentObjectsStillExist):
        mz.execute("DROP SOURCE auction_house")
    mz.execute("DROP SOURCE auction_house CASCADE")
    assert mz.execute("SHOW SOURCES").fetchall() == []
    assert mz.execute("SHOW VIEWS").fetchall() == []
    mz.execute(f"DROP SCHEMA {schema} CASCADE")
