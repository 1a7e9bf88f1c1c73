"""CREATE SOURCE ... FROM LOAD GENERATOR for the coordinator (server/load_generator.py
writes them).

COUNTER is one source item with its own shard (`counter bigint`). AUCTION FOR ALL TABLES
is a source item without data (reading it is 0A000) plus one subsource item per table,
each with a shard, depending on it (so DROP SOURCE ... CASCADE drops them; `mz_sources`
lists them with type 'subsource'). Every source is append-only: its id is among the
optimizer's monotonic sources, so Reduce / TopK over it use the monotonic variants.
"""

from __future__ import annotations

from typing import Any

from catalog.catalog import Catalog, Column
from server.api import CommandResult, Result
from server.group_commit import WriteLock
from server.session import Session
from sql import statements as st
from sql.errors import SqlError
from sql.types import INT4, INT8, TEXT, TIMESTAMPTZ

AUCTION_TABLES: dict[str, tuple[tuple[str, Any], ...]] = {
    "organizations": (("id", INT8), ("name", TEXT)),
    "users": (("id", INT8), ("org_id", INT8), ("name", TEXT)),
    "accounts": (("id", INT8), ("org_id", INT8), ("balance", INT8)),
    "auctions": (("id", INT8), ("seller", INT8), ("item", TEXT), ("end_time", TIMESTAMPTZ)),
    "bids": (("id", INT8), ("buyer", INT8), ("auction_id", INT8), ("amount", INT4), ("bid_time", TIMESTAMPTZ)),
}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SourcesMixin:
    """The Coordinator's sources (mixed into server.coordinator.Coordinator)."""

    catalog: Catalog
    write_lock: WriteLock
    generators: Any  # server.load_generator.LoadGenerators, once compute runs
    _new_name: Any
    _check_cluster: Any

    def _monotonic_sources(self) -> frozenset[str]:
        """The append-only storage collections: every source."""
        return frozenset(i.id for i in self.catalog.items("source"))

    def _create_source(self, session: Session, s: st.CreateSource) -> Result:
        self._check_cluster(s.cluster or session.get("cluster"))
        if session.txn is not None and not session.txn.implicit:
            raise SqlError("25001", "CREATE SOURCE cannot be run inside a transaction block")
        schema, name = self._new_name(session, s.name)
        if self.catalog.get_item(schema, name) is not None:
            if s.if_not_exists:
                session.notice(f'source "{name}" already exists, skipping', "42P07")
                return CommandResult("CREATE SOURCE")
            raise SqlError("42710", f"source \"{name}\" already exists")
        if s.generator == "counter":
            with self.write_lock:
                item = self.catalog.create_item(schema=schema, name=name, kind="source", create_sql=s.sql,
                                                columns=[Column("counter", INT8, False)], with_shard=True)
        else:
            for sub in AUCTION_TABLES:
                taken = self.catalog.get_item(schema, sub)
                if taken is not None:
                    raise SqlError("42710", f'{taken.kind_word} "{schema}.{sub}" already exists',
                                   hint="The AUCTION load generator creates the subsources " + ", ".join(AUCTION_TABLES) + ".")
            with self.write_lock:
                item = self.catalog.create_item(schema=schema, name=name, kind="source", create_sql=s.sql, columns=[],
                                                with_shard=False)
                try:
                    for sub, cols in AUCTION_TABLES.items():
                        defs = ", ".join(f"{_q(c)} {t.pg_format()} NOT NULL" for c, t in cols)
                        sql = f"CREATE SUBSOURCE {_q(schema)}.{_q(sub)} ({defs}) OF SOURCE {_q(schema)}.{_q(name)}"
                        self.catalog.create_item(schema=schema, name=sub, kind="source", create_sql=sql,
                                                 columns=[Column(c, t, False) for c, t in cols], depends_on=(item.id,),
                                                 with_shard=True)
                except BaseException:
                    self.catalog.drop_items([item.id, *(d.id for d in self.catalog.dependents(item.id))])
                    raise
        if getattr(self, "generators", None) is not None:
            self.generators.add(item)
        return CommandResult("CREATE SOURCE")
