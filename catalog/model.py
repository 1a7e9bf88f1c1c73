"""Catalog objects (items, columns, clusters) and the fixed names and oids they use."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from sql.types import SqlType

DATABASE_NAME = "materialize"
DATABASE_OID = 16384
DATABASE_ID = "u1"
FIRST_USER_OID = 20000

# System schemas: reserved names with fixed oids; they hold no catalog items.
SYSTEM_SCHEMAS: dict[str, int] = {
    "pg_catalog": 11,
    "mz_catalog": 16656,
    "mz_internal": 16657,
    "information_schema": 16658,
    "mz_introspection": 16659,
}
# Each session's temporary items live in its own schema `mz_temp_<pid>` (shown to users as
# `mz_temp`); such schemas never outlive their session and are dropped when a catalog opens.
TEMP_SCHEMA_PREFIX = "mz_temp_"
PUBLIC_SCHEMA = "public"
PUBLIC_SCHEMA_OID = 2200

KINDS = ("table", "view", "materialized-view", "index", "source")
KIND_WORDS = {
    "table": "table",
    "view": "view",
    "materialized-view": "materialized view",
    "index": "index",
    "source": "source",
}

DEFAULT_CLUSTER_ID = "u1"
DEFAULT_CLUSTER = "quickstart"
DEFAULT_REPLICA_ID = "u1"
DEFAULT_REPLICA = "r1"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: SqlType
    nullable: bool = True
    default_sql: str | None = None


@dataclass(frozen=True, slots=True)
class Item:
    id: str  # "u1", "u2", ... (monotonic, never reused)
    oid: int  # >= 20000, unique, never reused
    schema: str  # database is always "materialize"
    name: str
    kind: str  # "table" | "view" | "materialized-view" | "index" | "source"
    create_sql: str
    columns: tuple[Column, ...]
    depends_on: tuple[str, ...]  # item ids
    shard_id: str | None  # for tables / MVs / sources: their storage shard
    on_id: str | None = None  # for indexes: the indexed item
    index_keys: tuple[str, ...] = ()  # for indexes: key expressions as SQL text

    @property
    def id_num(self) -> int:
        return int(self.id[1:])

    @property
    def qualified_name(self) -> str:
        if self.temporary:
            return f"mz_temp.{self.name}"
        return f"{DATABASE_NAME}.{self.schema}.{self.name}"

    @property
    def temporary(self) -> bool:
        return self.schema.startswith(TEMP_SCHEMA_PREFIX)

    @property
    def kind_word(self) -> str:
        return KIND_WORDS[self.kind]

    def all_dependencies(self) -> tuple[str, ...]:
        """`depends_on` plus the indexed item of an index."""
        if self.on_id is not None and self.on_id not in self.depends_on:
            return (*self.depends_on, self.on_id)
        return self.depends_on


@dataclass(frozen=True, slots=True)
class Cluster:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ClusterReplica:
    id: str
    name: str
    cluster_id: str


class CatalogReader(Protocol):
    """What the system relations (catalog.system.db) read from the catalog: its objects,
    the version that changes with every DDL, and the lock that makes a read consistent."""

    _lock: threading.RLock

    @property
    def version(self) -> int: ...

    def schemas(self) -> list[tuple[int, str]]: ...

    def is_system_schema(self, name: str) -> bool: ...

    def items(self, kind: str | None = None) -> list[Item]: ...

    def clusters(self) -> list[Cluster]: ...

    def cluster_replicas(self) -> list[ClusterReplica]: ...

    def comments(self) -> dict[tuple[str, int], str]: ...
