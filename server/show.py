"""SHOW of catalog objects for the coordinator: listings become catalog queries (sql/show.py),
SHOW CREATE answers from the catalog item."""

from __future__ import annotations

from typing import Any

from catalog.catalog import Catalog
from server.api import ColumnDesc, Prepared
from server.resolver import Resolver
from server.session import Session
from sql.errors import (
    UNDEFINED_OBJECT,
    UNDEFINED_SCHEMA,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
)
from sql.show import ShowCreate, ShowListing, listing_sql
from sql.types import TEXT

SHOW_CREATE_COLUMNS = (ColumnDesc("name", TEXT), ColumnDesc("create_sql", TEXT))
_KINDS = {"table": ("table",), "view": ("view",), "materialized view": ("materialized-view",),
          "index": ("index",), "source": ("source",), "sink": ("sink",), "connection": ("connection",)}


class ShowMixin:
    """Mixed into server.coordinator.Coordinator."""

    catalog: Catalog
    system: Any

    def _prepare_listing(self, session: Session, sql: str, s: ShowListing) -> Prepared:
        schema: str | None = None
        on_id: str | None = None
        if s.schema is not None:
            schema = s.schema[-1]
            if not self.catalog.schema_exists(schema):
                raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
        elif s.on is None and not (s.what == "indexes" and s.cluster is not None):
            # the first schema of the search path that exists (Materialize's default)
            schema = next((p for p in session.search_path() if self.catalog.schema_exists(p)), None)
            if schema is None and s.what not in ("clusters", "cluster replicas", "roles", "schemas", "databases"):
                raise SqlError(UNDEFINED_SCHEMA, "no schema has been selected to create in")
        if s.on is not None:
            item = Resolver(self.catalog, session, self.system).item(s.on)
            if item is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.on)}'")
            on_id = item.id
        if s.cluster is not None and s.cluster not in {c.name for c in self.catalog.clusters()}:
            raise SqlError(UNDEFINED_OBJECT, f"unknown cluster '{s.cluster}'")
        prepared = self.system.prepare(session, listing_sql(s, schema, on_id), [])
        assert prepared is not None, "a SHOW listing is a catalog query"
        return Prepared(sql, prepared.param_types, prepared.columns, prepared.plan)

    def _show_create(self, session: Session, s: ShowCreate) -> list[tuple[Any, ...]]:
        item = Resolver(self.catalog, session, self.system).item(s.name)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.name)}'")
        if item.kind not in _KINDS[s.kind]:
            raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is not a {s.kind}")
        return [(item.qualified_name, item.create_sql)]
