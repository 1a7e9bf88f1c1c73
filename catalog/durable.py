"""The catalog's DuckDB file (durable tables, counters, locked config) and its transactions."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb

from catalog.storage.shard import Storage
from sql.errors import INTERNAL_ERROR, SqlError

CATALOG_FILE = "catalog.duckdb"
SCHEMA_VERSION = 1

# The only DuckDB configuration the catalog ever uses; locked at connect time.
DUCKDB_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}

# DuckDB schema holding the durable tables.
D = "durable"

DDL = f"""
CREATE SCHEMA IF NOT EXISTS {D};
CREATE TABLE IF NOT EXISTS {D}.meta (key VARCHAR NOT NULL, value BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.schemas (
    oid BIGINT NOT NULL, name VARCHAR NOT NULL, system BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.items (
    id VARCHAR NOT NULL, id_num BIGINT NOT NULL, oid BIGINT NOT NULL,
    schema_name VARCHAR NOT NULL, name VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    create_sql VARCHAR NOT NULL, shard_id VARCHAR, on_id VARCHAR,
    index_keys VARCHAR[] NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.columns (
    item_id VARCHAR NOT NULL, position INTEGER NOT NULL, name VARCHAR NOT NULL,
    type_name VARCHAR NOT NULL, typmod INTEGER NOT NULL, type_oid BIGINT NOT NULL,
    nullable BOOLEAN NOT NULL, default_sql VARCHAR);
CREATE TABLE IF NOT EXISTS {D}.dependencies (
    item_id VARCHAR NOT NULL, position INTEGER NOT NULL, depends_on VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.clusters (id VARCHAR NOT NULL, name VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.cluster_replicas (
    id VARCHAR NOT NULL, name VARCHAR NOT NULL, cluster_id VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.system_vars (name VARCHAR NOT NULL, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.shards (
    shard_id VARCHAR NOT NULL, item_id VARCHAR NOT NULL, since BIGINT NOT NULL,
    dropped BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.batches (
    shard_id VARCHAR NOT NULL, seq BIGINT NOT NULL, path VARCHAR NOT NULL,
    rows BIGINT NOT NULL, min_time BIGINT NOT NULL, max_time BIGINT NOT NULL,
    has_retractions BOOLEAN NOT NULL, compacted BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.uppers (shard_id VARCHAR NOT NULL, upper BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS {D}.comments (
    item_id VARCHAR NOT NULL, sub_id INTEGER NOT NULL, comment VARCHAR NOT NULL);
"""

# Counters in durable.meta.
COUNTERS = (
    "schema_version",
    "next_item_id",
    "next_oid",
    "next_shard_id",
    "next_batch_seq",
    "catalog_version",
    "oracle_write_ts",
)


class CatalogStore:
    """The DuckDB connection, lock and counters shared by the parts of `Catalog` (which
    sets them up)."""

    data_dir: Path
    path: Path
    storage: Storage
    _lock: threading.RLock
    _con: duckdb.DuckDBPyConnection | None
    _meta: dict[str, int]

    def _c(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise SqlError(INTERNAL_ERROR, "catalog is closed")
        return self._con

    @contextlib.contextmanager
    def _txn(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One DuckDB transaction; the caller holds `self._lock`."""
        con = self._c()
        con.begin()
        try:
            yield con
        except BaseException:
            con.rollback()
            raise
        con.commit()

    def _set_meta(self, con: duckdb.DuckDBPyConnection, updates: Mapping[str, int]) -> None:
        """One UPDATE for every counter (each statement costs DuckDB ~0.5 ms)."""
        if not updates:
            return
        cases = " ".join("WHEN ? THEN ?" for _ in updates)
        marks = ", ".join("?" for _ in updates)
        args: list[object] = [x for kv in updates.items() for x in kv]
        con.execute(f"UPDATE {D}.meta SET value = CASE key {cases} END WHERE key IN ({marks})", [*args, *updates])

    def _bump_version(self) -> dict[str, int]:
        return {"catalog_version": self._meta["catalog_version"] + 1}

    @property
    def version(self) -> int:
        """Incremented by every DDL change (items, schemas, system variables)."""
        return self._meta["catalog_version"]
