"""Load-generator sources (Materialize's COUNTER and AUCTION), written by the server.

A generator ticks every TICK INTERVAL; each tick's rows are appended to its (sub)sources'
shards through the same durable write path as table writes (`WritesMixin._commit`: a
fsynced Parquet batch per shard, one catalog commit at a fresh oracle timestamp). Sources
only ever insert, so they are monotonic inputs (`SourcesMixin._monotonic_sources`).

- COUNTER: one column `counter bigint`; tick k (from 1) inserts k; with UP TO n it stops
  after n. Restarted, it resumes after the rows its shard holds.
- AUCTION FOR ALL TABLES: subsources `organizations(id, name)`, `users(id, org_id, name)`,
  `accounts(id, org_id, balance)` (written once, at the first tick), then per tick one
  auction `auctions(id, seller, item, end_time = now + 10 s)` and 2..9 `bids(id, buyer,
  auction_id, amount int 1..99, bid_time = now + i s)` (Materialize's quickstart columns
  and shapes; the names of people and companies are our own). Restarted, it resumes after
  the auctions its shard holds.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from catalog.catalog import Item

log = logging.getLogger("mzspark.sources")

ITEMS = ("Signed Memorabilia", "City Bar Crawl", "Best Pizza in Town", "Gift Basket", "Custom Art")
COMPANIES = ("Northwind", "Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark",
             "Wonka", "Tyrell", "Soylent", "Cyberdyne")
USERS = 64
MAX_BIDS = 10


@dataclass(eq=False)
class Generator:
    source: Item  # the CREATE SOURCE item
    kind: str  # counter | auction
    tick_ms: int
    up_to: int | None
    outputs: dict[str, Item]  # output name -> the (sub)source written
    counter: int = 0  # ticks done (COUNTER: last value; AUCTION: last auction id)
    next_at: float = 0.0

    def tick(self) -> list[tuple[Item, list[tuple]]]:
        """The rows of the next tick, by output."""
        if self.kind == "counter":
            if self.up_to is not None and self.counter >= self.up_to:
                return []
            self.counter += 1
            return [(self.outputs[self.source.name], [(self.counter,)])]
        out: list[tuple[Item, list[tuple]]] = []
        if self.counter == 0 and "organizations" in self.outputs:
            n = len(COMPANIES)
            out.append((self.outputs["organizations"], [(i + 1, name) for i, name in enumerate(COMPANIES)]))
            out.append((self.outputs["users"], [(i, i % n + 1, f"User {i}") for i in range(1, USERS + 1)]))
            out.append((self.outputs["accounts"], [(org + 42, org, 10000) for org in range(1, n + 1)]))
        self.counter += 1
        rng = random.Random(self.source.oid * 1_000_003 + self.counter)  # the same after a restart
        now = datetime.now(UTC)
        auction = (self.counter, rng.randint(1, USERS), rng.choice(ITEMS), now + timedelta(seconds=10))
        bids = [(self.counter * MAX_BIDS + i, rng.randint(1, USERS), self.counter, rng.randint(1, 99),
                 now + timedelta(seconds=i)) for i in range(rng.randint(2, MAX_BIDS - 1))]
        out += [(self.outputs["auctions"], [auction]), (self.outputs["bids"], bids)]
        return out


class LoadGenerators:
    """The server's generators: one thread ticking every source's generator when due."""

    def __init__(self, coord: Any) -> None:
        self.coord = coord
        self._gens: dict[str, Generator] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        for item in self.coord.catalog.items("source"):
            if item.shard_id is None or not item.depends_on:
                self.add(item)
        self._thread = threading.Thread(target=self._loop, name="load-generators", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def add(self, source: Item) -> None:
        """Start generating for a (new or existing) CREATE SOURCE item."""
        from sql.statements_stream import CreateSource, parse_create_source

        spec: CreateSource = parse_create_source(source.create_sql)
        cat = self.coord.catalog
        if spec.generator == "counter":
            outputs = {source.name: source}
        else:
            outputs = {d.name: d for d in cat.dependents(source.id) if d.kind == "source" and d.shard_id is not None}
        gen = Generator(source, spec.generator, spec.tick_ms, spec.up_to, outputs)
        main = outputs.get(source.name if gen.kind == "counter" else "auctions")
        if main is not None and main.shard_id is not None:  # resume after what is stored
            gen.counter = sum(b.rows for b in cat.shard_batches(main.shard_id))
        with self._lock:
            self._gens[source.id] = gen
        self._wake.set()

    def sync(self) -> None:
        """Forget the generators of dropped sources."""
        with self._lock:
            for sid in [s for s in self._gens if self.coord.catalog.get_item_by_id(s) is None]:
                del self._gens[sid]

    def _loop(self) -> None:
        while not self._closed.is_set():
            now = time.monotonic()
            with self._lock:
                due = [g for g in self._gens.values() if g.next_at <= now]
                nxt = min((g.next_at for g in self._gens.values()), default=now + 1.0)
            for g in due:
                g.next_at = max(g.next_at + g.tick_ms / 1000, now)
                try:
                    self._write(g)
                except Exception:  # noqa: BLE001 - a failed tick is retried at the next one
                    log.exception("load generator %s failed", g.source.qualified_name)
            if not due:
                self._wake.wait(max(0.0, min(nxt - time.monotonic(), 1.0)))
                self._wake.clear()

    def _write(self, g: Generator) -> None:
        coord = self.coord
        with coord.write_lock:
            if coord.catalog.get_item_by_id(g.source.id) is None:
                return
            rows = [(item, r, [1] * len(r)) for item, r in g.tick() if r]
            if rows:
                coord._commit(None, rows)
