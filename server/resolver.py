"""The name resolver binding reads: catalog items on the session's search path, and catalog
(system) relations read as constant inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog.catalog import Catalog, Item
from server.session import SERVER_VERSION_TEXT, Session
from server.temp import lookup_schemas
from sql import statements as st
from sql.bind import Binder, ItemRef
from sql.errors import UNDEFINED_TABLE, WRONG_OBJECT_TYPE, SqlError
from sql.hir import HConstant, HirRel
from sql.types import TEXT, SqlType

_COMPUTE_TYPES = frozenset({
    "bool", "int2", "int4", "int8", "oid", "uint8", "mz_timestamp", "float4", "float8", "numeric", "text", "varchar",
    "bpchar", "name", "jsonb", "uuid", "date", "timestamp", "timestamptz", "time", "interval", "bytea",
})


def _as_text(v: Any, t: SqlType) -> str:
    from sql.literal import to_text

    if isinstance(v, (list, tuple)):
        return "{" + ",".join("NULL" if x is None else to_text(x, t) for x in v) + "}"
    return v if isinstance(v, str) else to_text(v, t)


class Resolver:
    """CatalogReader over the durable catalog with the session's search path."""

    def __init__(self, catalog: Catalog, session: Session, system: Any = None, with_temp: bool = True,
                 indexed: Callable[[str], bool] | None = None) -> None:
        self.catalog = catalog
        # a query's own reads: a view with an index is read from the index, not inlined
        self.indexed = indexed
        self.session = session
        self.system = system  # SystemHandler: system relations read as constant inputs
        # False while binding a permanent view's body: its names never mean temporary items
        self.with_temp = with_temp
        # the plan bound through this resolver depends on more than the statement's text, the
        # catalog version and the session's user, database and search path (a session
        # function's value, a temporary item, a catalog relation's rows): never cached
        self.volatile = False

    def item(self, parts: tuple[str, ...] | list[str]) -> Item | None:
        parts = list(parts)
        if len(parts) == 3:
            if parts[0] != "materialize":
                raise SqlError(UNDEFINED_TABLE, f'database "{parts[0]}" does not exist')
            parts = parts[1:]
        for schema in lookup_schemas(self.session.pid, parts, self.session.search_path(), with_temp=self.with_temp):
            it = self.catalog.get_item(schema, parts[-1])
            if it is not None:
                self.volatile |= it.temporary
                return it
        return None

    def session_value(self, name: str) -> str | None:
        """current_user / session_user / current_role: the session's user; current_database /
        current_catalog: its database; current_schema: the first existing schema of the search path."""
        self.volatile = True
        if name in ("current_user", "session_user", "current_role"):
            return self.session.user
        if name in ("current_database", "current_catalog"):
            return self.session.database
        if name == "current_schema":
            return next((s for s in self.session.search_path() if self.catalog.schema_exists(s)), None)
        if name == "mz_version":
            return self.session.vars["mz_version"]
        if name == "version":
            return SERVER_VERSION_TEXT
        if name == "mz_environment_id":
            return self.catalog.environment_id
        if name == "intervalstyle":
            return self.session.get("intervalstyle").lower()
        raise KeyError(name)

    def resolve(self, parts: list[str]) -> ItemRef | None:
        it = self.item(parts)
        if it is None:
            return self._system_relation(parts)
        if it.kind not in ("table", "view", "materialized-view", "source"):
            raise SqlError(WRONG_OBJECT_TYPE, f"{it.qualified_name} is a {it.kind_word}; it cannot be read")
        if it.kind == "source" and it.shard_id is None:
            raise SqlError("0A000", f"{it.qualified_name} is a load generator source without data of its own; read its subsources")
        hir = self.view_hir(it) if it.kind == "view" and not (self.indexed is not None and self.indexed(it.id)) else None
        return ItemRef(it.id, it.schema, it.name, it.kind, tuple(c.name for c in it.columns), tuple(c.type for c in it.columns),
                       it.oid, tuple(c.nullable for c in it.columns), hir)

    def _system_relation(self, parts: list[str]) -> ItemRef | None:
        """A catalog relation in a query that also reads user relations: its current rows
        become a constant input (DESIGN §2, mixed queries)."""
        if self.system is None:
            return None
        got = self.system.relation_rows(self.session, tuple(parts))
        if got is None:
            return None
        self.volatile = True
        columns, rows = got
        names = tuple(c for c, _ in columns)
        # columns of types the compute layer cannot carry (arrays, xid, …) enter as text
        textual = [t.name not in _COMPUTE_TYPES for _, t in columns]
        types = tuple(TEXT if tx else t for (_, t), tx in zip(columns, textual, strict=True))
        rows = [tuple(None if v is None else (_as_text(v, t) if tx else v) for v, (_, t), tx in zip(r, columns, textual, strict=True)) for r in rows]
        schema = parts[-2] if len(parts) >= 2 else "pg_catalog"
        return ItemRef(f"s:{schema}.{parts[-1]}", schema, parts[-1], "system", names, types, 0, (), HConstant(tuple(tuple(r) for r in rows), types))

    def view_hir(self, it: Item) -> HirRel:
        """A view's definition bound afresh (against the current catalog)."""
        stmt = st.classify(it.create_sql)
        assert isinstance(stmt, st.CreateView)
        inner = self if it.temporary else Resolver(self.catalog, self.session, self.system, with_temp=False)
        b = Binder(inner)
        bq = b.bind_query(stmt.query, top=False)
        self.volatile |= inner.volatile
        return b._finish_nested(bq)
