"""Durable catalog (DuckDB: metadata only), timestamp oracle and table storage."""

from catalog.catalog import Catalog, Cluster, ClusterReplica, Column, Item
from catalog.manifest import BatchLease
from catalog.oracle import TimestampOracle
from catalog.storage.shard import BatchFile, Storage

__all__ = [
    "BatchFile",
    "BatchLease",
    "Catalog",
    "Cluster",
    "ClusterReplica",
    "Column",
    "Item",
    "Storage",
    "TimestampOracle",
]
