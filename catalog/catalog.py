"""The durable catalog: items, schemas, clusters, system variables, shard manifests and the
timestamp oracle's state, stored in a DuckDB file `<data_dir>/catalog.duckdb`.

DuckDB holds metadata only (never a row of user data) and runs with external access
disabled and its configuration locked, so no SQL run on the connection can read or write
server files.

State model: every mutation runs as one DuckDB transaction under `self._lock`; the
in-memory mirror (which serves every read without touching DuckDB) is updated only after
the transaction commits. No method holds the lock across I/O of data files: Parquet files
are written before `commit_writes` and deleted after the manifest transaction commits.

Durability: DuckDB fsyncs its write-ahead log at every commit, so once a method returns,
its effects survive SIGKILL (and power loss of an fsync-honest disk); the WAL is replayed
when the file is reopened. `close()` checkpoints. DuckDB also auto-checkpoints when the
WAL exceeds 16 MiB.

Parts: `catalog.model` (items, columns, clusters, fixed names), `catalog.durable` (the
DuckDB layout and transactions), `catalog.manifest` (shard manifests, read leases,
compaction); this module holds the lifecycle, schemas, items and system variables.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from catalog.durable import CATALOG_FILE, COUNTERS, DDL, DUCKDB_CONFIG, SCHEMA_VERSION, D
from catalog.manifest import ShardManifests, _Batch, _Shard
from catalog.model import (
    DATABASE_NAME,
    DEFAULT_CLUSTER,
    DEFAULT_CLUSTER_ID,
    DEFAULT_REPLICA,
    DEFAULT_REPLICA_ID,
    FIRST_USER_OID,
    KINDS,
    PUBLIC_SCHEMA,
    PUBLIC_SCHEMA_OID,
    SYSTEM_SCHEMAS,
    TEMP_SCHEMA_PREFIX,
    Cluster,
    ClusterReplica,
    Column,
    Item,
)
from catalog.storage.shard import BatchFile, Storage
from sql.errors import (
    DEPENDENT_OBJECTS_STILL_EXIST,
    DUPLICATE_SCHEMA,
    DUPLICATE_TABLE,
    INSUFFICIENT_PRIVILEGE,
    INTERNAL_ERROR,
    UNDEFINED_SCHEMA,
    UNDEFINED_TABLE,
    SqlError,
)
from sql.types import SqlType

if TYPE_CHECKING:
    from catalog.system.db import SystemDb

# Catalog files open in this process: a second Catalog on the same file would share
# DuckDB's database instance but not our in-memory mirror, so it is refused.
_OPEN: set[str] = set()
_OPEN_LOCK = threading.Lock()


class Catalog(ShardManifests):
    """The durable catalog. Thread safe."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.data_dir / CATALOG_FILE
        self._lock = threading.RLock()
        self._commit_listeners: list[Callable[[int], None]] = []
        # Read leases: path -> count; paths retired while leased wait in _deferred.
        self._leases: dict[str, int] = {}
        self._deferred: set[str] = set()
        self._con: duckdb.DuckDBPyConnection | None = None
        with _OPEN_LOCK:
            if str(self.path) in _OPEN:
                raise SqlError(INTERNAL_ERROR, f"catalog {self.path} is already open")
            _OPEN.add(str(self.path))
        try:
            self.storage = Storage(self.data_dir)
            self._opened_at = time.time()
            self._con = duckdb.connect(str(self.path), config=dict(DUCKDB_CONFIG))
            self._bootstrap()
            self._load()
            self._drop_temp_schemas()
            self.orphans_cleaned = self.clean_orphans()
        except BaseException:
            self.close()
            raise

    # ----------------------------------------------------------------------------------
    # lifecycle
    @property
    def environment_id(self) -> str:
        """Materialize's `<cloud>-<region>-<organization uuid>-<ordinal>`, stable for this data
        directory (the uuid is derived from its path)."""
        import uuid

        return f"local-mzspark-{uuid.uuid5(uuid.NAMESPACE_URL, self.data_dir.as_uri())}-0"

    def close(self) -> None:
        """Checkpoint and close. Idempotent."""
        # Stop the system relations first and outside our lock: a rebuild in progress takes
        # our lock, and close() waits for it to finish.
        sysdb = getattr(self, "_system_db", None)
        if sysdb is not None:
            sysdb.close()
        with self._lock:
            if self._con is not None:
                with contextlib.suppress(duckdb.Error):
                    self._con.execute("CHECKPOINT")
                self._con.close()
                self._con = None
            with _OPEN_LOCK:
                _OPEN.discard(str(self.path))

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def system_db(self) -> SystemDb:
        """The system relations (pg_catalog, information_schema, mz_catalog, mz_internal)
        served from DuckDB, built on first use and kept in sync with this catalog."""
        with self._lock:
            sysdb = getattr(self, "_system_db", None)
            if sysdb is None:
                from catalog.system.db import SystemDb

                sysdb = SystemDb(self, self._c())
                self._system_db = sysdb
            return sysdb

    def execute_sql(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run SQL on the catalog connection (for the system relations and tests). The
        connection cannot reach files; callers must not pass client-controlled DDL/DML."""
        with self._lock:
            return self._c().execute(sql, params or []).fetchall()

    # ----------------------------------------------------------------------------------
    # bootstrap / load

    def _bootstrap(self) -> None:
        with self._lock:
            con = self._c()
            con.execute(DDL)
            have = {k for (k,) in con.execute(f"SELECT key FROM {D}.meta").fetchall()}
            if "schema_version" in have:
                (ver,) = con.execute(
                    f"SELECT value FROM {D}.meta WHERE key = 'schema_version'"
                ).fetchone()  # type: ignore[misc]
                if ver != SCHEMA_VERSION:
                    raise SqlError(INTERNAL_ERROR, f"catalog schema version {ver} is not supported")
                return
            with self._txn() as con:
                initial = {
                    "schema_version": SCHEMA_VERSION,
                    "next_item_id": 1,
                    "next_oid": FIRST_USER_OID,
                    "next_shard_id": 1,
                    "next_batch_seq": 1,
                    "catalog_version": 1,
                    "oracle_write_ts": 0,
                }
                con.executemany(f"INSERT INTO {D}.meta VALUES (?, ?)", list(initial.items()))
                rows = [(oid, name, True) for name, oid in SYSTEM_SCHEMAS.items()]
                rows.append((PUBLIC_SCHEMA_OID, PUBLIC_SCHEMA, False))
                con.executemany(f"INSERT INTO {D}.schemas VALUES (?, ?, ?)", rows)
                con.execute(
                    f"INSERT INTO {D}.clusters VALUES (?, ?)",
                    [DEFAULT_CLUSTER_ID, DEFAULT_CLUSTER],
                )
                con.execute(
                    f"INSERT INTO {D}.cluster_replicas VALUES (?, ?, ?)",
                    [DEFAULT_REPLICA_ID, DEFAULT_REPLICA, DEFAULT_CLUSTER_ID],
                )
            con.execute("CHECKPOINT")

    def _load(self) -> None:
        with self._lock:
            con = self._c()
            self._meta: dict[str, int] = dict(
                con.execute(f"SELECT key, value FROM {D}.meta").fetchall()
            )
            missing = [k for k in COUNTERS if k not in self._meta]
            if missing:
                raise SqlError(INTERNAL_ERROR, f"catalog is missing counters {missing}")
            self._schemas: dict[str, tuple[int, bool]] = {
                name: (oid, system)
                for oid, name, system in con.execute(
                    f"SELECT oid, name, system FROM {D}.schemas"
                ).fetchall()
            }
            cols: dict[str, list[Column]] = {}
            for item_id, _pos, name, tname, typmod, nullable, default in con.execute(
                f"SELECT item_id, position, name, type_name, typmod, nullable, default_sql "
                f"FROM {D}.columns ORDER BY item_id, position"
            ).fetchall():
                cols.setdefault(item_id, []).append(
                    Column(name, SqlType(tname, typmod), nullable, default)
                )
            deps: dict[str, list[str]] = {}
            for item_id, _pos, dep in con.execute(
                f"SELECT item_id, position, depends_on FROM {D}.dependencies "
                f"ORDER BY item_id, position"
            ).fetchall():
                deps.setdefault(item_id, []).append(dep)
            self._items: dict[str, Item] = {}
            self._by_name: dict[tuple[str, str], str] = {}
            for iid, oid, schema, name, kind, create_sql, shard_id, on_id, keys in con.execute(
                f"SELECT id, oid, schema_name, name, kind, create_sql, shard_id, on_id, "
                f"index_keys FROM {D}.items ORDER BY id_num"
            ).fetchall():
                item = Item(
                    id=iid,
                    oid=oid,
                    schema=schema,
                    name=name,
                    kind=kind,
                    create_sql=create_sql,
                    columns=tuple(cols.get(iid, ())),
                    depends_on=tuple(deps.get(iid, ())),
                    shard_id=shard_id,
                    on_id=on_id,
                    index_keys=tuple(keys),
                )
                self._items[iid] = item
                self._by_name[(schema, name)] = iid
            self._clusters = [
                Cluster(i, n)
                for i, n in con.execute(f"SELECT id, name FROM {D}.clusters").fetchall()
            ]
            self._replicas = [
                ClusterReplica(i, n, c)
                for i, n, c in con.execute(
                    f"SELECT id, name, cluster_id FROM {D}.cluster_replicas"
                ).fetchall()
            ]
            self._system_vars: dict[str, str] = dict(
                con.execute(f"SELECT name, value FROM {D}.system_vars").fetchall()
            )
            self._comments: dict[tuple[str, int], str] = {
                (iid, sub): text
                for iid, sub, text in con.execute(f"SELECT item_id, sub_id, comment FROM {D}.comments").fetchall()
            }
            self._shards: dict[str, _Shard] = {}
            for sid, item_id, since, dropped in con.execute(
                f"SELECT shard_id, item_id, since, dropped FROM {D}.shards"
            ).fetchall():
                self._shards[sid] = _Shard(sid, item_id, since, dropped)
            for sid, seq, rel, rows, mn, mx, retr, compacted in con.execute(
                f"SELECT shard_id, seq, path, rows, min_time, max_time, has_retractions, "
                f"compacted FROM {D}.batches ORDER BY seq"
            ).fetchall():
                bf = BatchFile(self.storage.absolute(rel), rows, mn, mx, retr)
                self._shards[sid].batches.append(_Batch(bf, rel, seq, compacted))
            for sid, up in con.execute(f"SELECT shard_id, upper FROM {D}.uppers").fetchall():
                if sid in self._shards:
                    self._shards[sid].upper = up

    # ----------------------------------------------------------------------------------
    # clusters

    def clusters(self) -> list[Cluster]:
        return list(self._clusters)

    def cluster_replicas(self) -> list[ClusterReplica]:
        return list(self._replicas)

    # ----------------------------------------------------------------------------------
    # schemas

    def _drop_temp_schemas(self) -> None:
        """Temporary schemas left by sessions of an earlier run (a crash, a kill) go."""
        for name in [n for n in self._schemas if n.startswith(TEMP_SCHEMA_PREFIX)]:
            self.drop_schema(name, cascade=True)

    def schemas(self) -> list[tuple[int, str]]:
        """(oid, name) of every schema, system schemas included, ordered by oid."""
        with self._lock:
            return sorted((oid, name) for name, (oid, _sys) in self._schemas.items())

    def schema_exists(self, name: str) -> bool:
        return name in self._schemas

    def schema_oid(self, name: str) -> int | None:
        s = self._schemas.get(name)
        return s[0] if s else None

    def is_system_schema(self, name: str) -> bool:
        return name in SYSTEM_SCHEMAS

    def create_schema(self, name: str, if_not_exists: bool = False) -> None:
        with self._lock:
            if name in self._schemas:
                if if_not_exists:
                    return
                raise SqlError(DUPLICATE_SCHEMA, f"schema '{name}' already exists")
            oid = self._meta["next_oid"]
            meta = {"next_oid": oid + 1, **self._bump_version()}
            with self._txn() as con:
                con.execute(f"INSERT INTO {D}.schemas VALUES (?, ?, false)", [oid, name])
                self._set_meta(con, meta)
            self._meta.update(meta)
            self._schemas[name] = (oid, False)

    def drop_schema(self, name: str, if_exists: bool = False, cascade: bool = False) -> list[Item]:
        """Drop a schema; with `cascade`, its items and everything depending on them (in
        any schema). Returns the dropped items in drop order."""
        with self._lock:
            if name not in self._schemas:
                if if_exists:
                    return []
                raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{name}'")
            if name in SYSTEM_SCHEMAS:
                raise SqlError(INSUFFICIENT_PRIVILEGE, f"system schema '{name}' cannot be modified")
            members = [i.id for i in self._items.values() if i.schema == name]
            if members and not cascade:
                raise SqlError(
                    DEPENDENT_OBJECTS_STILL_EXIST,
                    f"schema '{DATABASE_NAME}.{name}' cannot be dropped without CASCADE "
                    f"while it contains objects",
                )
            ids = self._closure(members)
            dropped = [self._items[i] for i in ids]
            meta = self._bump_version()
            with self._txn() as con:
                files = self._drop_items_txn(con, ids)
                con.execute(f"DELETE FROM {D}.schemas WHERE name = ?", [name])
                self._set_meta(con, meta)
            self._meta.update(meta)
            self._drop_items_apply(ids)
            del self._schemas[name]
            to_delete = self._retire(files)
        self._delete_now(to_delete)
        return dropped

    # ----------------------------------------------------------------------------------
    # items

    def get_item(self, schema: str, name: str) -> Item | None:
        iid = self._by_name.get((schema, name))
        return self._items.get(iid) if iid is not None else None

    def get_item_by_id(self, id: str) -> Item | None:
        return self._items.get(id)

    def get_item_by_oid(self, oid: int) -> Item | None:
        with self._lock:
            for item in self._items.values():
                if item.oid == oid:
                    return item
        return None

    def items(self, kind: str | None = None) -> list[Item]:
        """Items (of one kind, when given) in creation order."""
        with self._lock:
            return [i for i in self._items.values() if kind is None or i.kind == kind]

    def _require_item(self, id: str) -> Item:
        item = self._items.get(id)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{id}'")
        return item

    def _name_taken(self, schema: str, name: str) -> None:
        other = self.get_item(schema, name)
        if other is not None:
            raise SqlError(
                DUPLICATE_TABLE,
                f'{other.kind_word} "{other.qualified_name}" already exists',
            )

    def create_item(
        self,
        *,
        schema: str,
        name: str,
        kind: str,
        create_sql: str,
        columns: Sequence[Column],
        depends_on: Sequence[str] = (),
        with_shard: bool,
        on_id: str | None = None,
        index_keys: Sequence[str] = (),
    ) -> Item:
        if kind not in KINDS:
            raise ValueError(f"unknown item kind {kind!r}")
        with self._lock:
            if schema not in self._schemas:
                raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
            if schema in SYSTEM_SCHEMAS:
                raise SqlError(
                    INSUFFICIENT_PRIVILEGE, f"system schema '{schema}' cannot be modified"
                )
            self._name_taken(schema, name)
            for dep in (*depends_on, *([on_id] if on_id else [])):
                self._require_item(dep)
            num = self._meta["next_item_id"]
            oid = self._meta["next_oid"]
            item = Item(
                id=f"u{num}",
                oid=oid,
                schema=schema,
                name=name,
                kind=kind,
                create_sql=create_sql,
                columns=tuple(columns),
                depends_on=tuple(dict.fromkeys(depends_on)),
                shard_id=None,
                on_id=on_id,
                index_keys=tuple(index_keys),
            )
            meta = {"next_item_id": num + 1, "next_oid": oid + 1, **self._bump_version()}
            shard: _Shard | None = None
            if with_shard:
                snum = self._meta["next_shard_id"]
                shard = _Shard(f"s{snum}", item.id, 0, False)
                meta["next_shard_id"] = snum + 1
                item = replace(item, shard_id=shard.shard_id)
            with self._txn() as con:
                self._insert_item(con, item, num)
                if shard is not None:
                    con.execute(
                        f"INSERT INTO {D}.shards VALUES (?, ?, ?, false)",
                        [shard.shard_id, item.id, shard.since],
                    )
                self._set_meta(con, meta)
            self._meta.update(meta)
            self._items[item.id] = item
            self._by_name[(schema, name)] = item.id
            if shard is not None:
                self._shards[shard.shard_id] = shard
            return item

    def _insert_item(self, con: duckdb.DuckDBPyConnection, item: Item, num: int) -> None:
        con.execute(
            f"INSERT INTO {D}.items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                item.id,
                num,
                item.oid,
                item.schema,
                item.name,
                item.kind,
                item.create_sql,
                item.shard_id,
                item.on_id,
                list(item.index_keys),
            ],
        )
        if item.columns:
            con.executemany(
                f"INSERT INTO {D}.columns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        item.id,
                        pos,
                        c.name,
                        c.type.name,
                        c.type.typmod,
                        c.type.oid,
                        c.nullable,
                        c.default_sql,
                    )
                    for pos, c in enumerate(item.columns, start=1)
                ],
            )
        if item.depends_on:
            con.executemany(
                f"INSERT INTO {D}.dependencies VALUES (?, ?, ?)",
                [(item.id, pos, d) for pos, d in enumerate(item.depends_on)],
            )

    def _closure(self, ids: Sequence[str]) -> list[str]:
        """`ids` plus their transitive dependents, in drop order. An item can only depend on
        items created before it, so descending id order drops dependents first."""
        rdeps: dict[str, list[str]] = {}
        for item in self._items.values():
            for d in item.all_dependencies():
                rdeps.setdefault(d, []).append(item.id)
        seen: set[str] = set()
        stack = list(ids)
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            stack.extend(rdeps.get(i, ()))
        return sorted(seen, key=lambda i: self._items[i].id_num, reverse=True)

    def dependents(self, id: str) -> list[Item]:
        """Transitive dependents of `id` (not `id` itself) in drop order: every item comes
        before the items it depends on. Indexes on an item count as its dependents."""
        with self._lock:
            self._require_item(id)
            return [self._items[i] for i in self._closure([id]) if i != id]

    def drop_items(self, ids: list[str]) -> None:
        """Drop items in one catalog transaction. Every remaining item must not depend on a
        dropped one (2BP01). Their shards are marked dropped; their files are deleted after
        the commit (or, if a read lease holds them, when it is released)."""
        with self._lock:
            ids = list(dict.fromkeys(ids))
            for i in ids:
                self._require_item(i)
            gone = set(ids)
            for item in self._items.values():
                if item.id in gone:
                    continue
                for d in item.all_dependencies():
                    if d in gone:
                        dep = self._items[d]
                        raise SqlError(
                            DEPENDENT_OBJECTS_STILL_EXIST,
                            f'cannot drop {dep.kind_word} "{dep.qualified_name}": still '
                            f'depended upon by {item.kind_word} "{item.qualified_name}"',
                        )
            meta = self._bump_version()
            with self._txn() as con:
                files = self._drop_items_txn(con, ids)
                self._set_meta(con, meta)
            self._meta.update(meta)
            self._drop_items_apply(ids)
            to_delete = self._retire(files)
        self._delete_now(to_delete)

    def _drop_items_txn(self, con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> list[str]:
        files: list[str] = []
        for iid in ids:
            item = self._items[iid]
            con.execute(f"DELETE FROM {D}.items WHERE id = ?", [iid])
            con.execute(f"DELETE FROM {D}.columns WHERE item_id = ?", [iid])
            con.execute(f"DELETE FROM {D}.dependencies WHERE item_id = ?", [iid])
            con.execute(f"DELETE FROM {D}.comments WHERE item_id = ?", [iid])
            if item.shard_id is not None and item.shard_id in self._shards:
                sid = item.shard_id
                con.execute(f"UPDATE {D}.shards SET dropped = true WHERE shard_id = ?", [sid])
                con.execute(f"DELETE FROM {D}.batches WHERE shard_id = ?", [sid])
                con.execute(f"DELETE FROM {D}.uppers WHERE shard_id = ?", [sid])
                files.extend(b.file.path for b in self._shards[sid].batches)
        return files

    def _drop_items_apply(self, ids: Sequence[str]) -> None:
        for iid in ids:
            item = self._items.pop(iid)
            del self._by_name[(item.schema, item.name)]
            for key in [k for k in self._comments if k[0] == iid]:
                del self._comments[key]
            if item.shard_id is not None and item.shard_id in self._shards:
                st = self._shards[item.shard_id]
                st.dropped = True
                st.batches = []

    def rename_item(
        self, id: str, new_name: str, *, create_sql_updates: Mapping[str, str] | None = None
    ) -> Item:
        """Rename an item (same schema). `create_sql_updates` (item id -> new create_sql)
        rewrites the stored definitions of the item and of dependents that mention its
        name, in the same transaction."""
        with self._lock:
            item = self._require_item(id)
            updates = dict(create_sql_updates or {})
            for uid in updates:
                self._require_item(uid)
            if new_name != item.name:
                self._name_taken(item.schema, new_name)
            meta = self._bump_version()
            with self._txn() as con:
                con.execute(f"UPDATE {D}.items SET name = ? WHERE id = ?", [new_name, id])
                for uid, sql in updates.items():
                    con.execute(f"UPDATE {D}.items SET create_sql = ? WHERE id = ?", [sql, uid])
                self._set_meta(con, meta)
            self._meta.update(meta)
            for uid, sql in updates.items():
                self._items[uid] = replace(self._items[uid], create_sql=sql)
            renamed = replace(self._items[id], name=new_name)
            self._items[id] = renamed
            del self._by_name[(item.schema, item.name)]
            self._by_name[(item.schema, new_name)] = id
            return renamed

    # ----------------------------------------------------------------------------------
    # comments (COMMENT ON)

    def set_comment(self, id: str, sub_id: int, comment: str | None) -> None:
        """The comment on item `id` (sub_id 0) or on its column number `sub_id` (1-based);
        None removes it."""
        with self._lock:
            self._require_item(id)
            meta = self._bump_version()
            with self._txn() as con:
                con.execute(f"DELETE FROM {D}.comments WHERE item_id = ? AND sub_id = ?", [id, sub_id])
                if comment is not None:
                    con.execute(f"INSERT INTO {D}.comments VALUES (?, ?, ?)", [id, sub_id, comment])
                self._set_meta(con, meta)
            self._meta.update(meta)
            if comment is None:
                self._comments.pop((id, sub_id), None)
            else:
                self._comments[(id, sub_id)] = comment

    def comments(self) -> dict[tuple[str, int], str]:
        """(item id, column number or 0) -> comment."""
        with self._lock:
            return dict(self._comments)

    # ----------------------------------------------------------------------------------
    # system variables

    def get_system_vars(self) -> dict[str, str]:
        with self._lock:
            return dict(self._system_vars)

    def set_system_var(self, name: str, value: str | None) -> None:
        """ALTER SYSTEM SET name = value; `None` = ALTER SYSTEM RESET (back to default)."""
        with self._lock:
            meta = self._bump_version()
            with self._txn() as con:
                con.execute(f"DELETE FROM {D}.system_vars WHERE name = ?", [name])
                if value is not None:
                    con.execute(f"INSERT INTO {D}.system_vars VALUES (?, ?)", [name, value])
                self._set_meta(con, meta)
            self._meta.update(meta)
            if value is None:
                self._system_vars.pop(name, None)
            else:
                self._system_vars[name] = value
