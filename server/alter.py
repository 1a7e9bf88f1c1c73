"""ALTER ... RENAME TO and COMMENT ON for the coordinator (catalog metadata only: no
dataflow changes, maintained objects are keyed by id)."""

from __future__ import annotations

from typing import Any

from catalog.catalog import Catalog, Item
from server.api import CommandResult, Result
from server.group_commit import WriteLock
from server.resolver import Resolver
from server.session import Session
from sql import statements as st
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_COLUMN,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
)
from sql.rename import rewrite

_KINDS = {"table": "table", "view": "view", "materialized view": "materialized-view", "index": "index", "source": "source"}


class AlterMixin:
    """The Coordinator's renames and comments (mixed into server.coordinator.Coordinator)."""

    catalog: Catalog
    system: Any
    write_lock: WriteLock

    def _named_item(self, session: Session, kind: str, parts: tuple[str, ...]) -> Item | None:
        item = Resolver(self.catalog, session, self.system).item(parts)
        if item is not None and kind != "column" and item.kind != _KINDS[kind]:
            raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is a {item.kind_word} not a {kind}")
        return item

    def _comment_on(self, session: Session, s: st.CommentOn) -> Result:
        """COMMENT ON: the comment is kept in the catalog (pg_description, mz_internal.mz_comments)."""
        parts = s.name[:-1] if s.kind == "column" else s.name
        item = self._named_item(session, s.kind, parts)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(parts)}'")
        sub = 0
        if s.kind == "column":
            if item.kind == "index":
                raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is an index; it has no columns to comment on")
            names = [c.name for c in item.columns]
            if s.name[-1] not in names:
                raise SqlError(UNDEFINED_COLUMN, f'column "{s.name[-1]}" of relation "{item.name}" does not exist')
            sub = names.index(s.name[-1]) + 1
        self.catalog.set_comment(item.id, sub, s.comment)
        return CommandResult("COMMENT")

    def _alter_rename(self, session: Session, s: st.AlterRename) -> Result:
        """ALTER {TABLE | VIEW | MATERIALIZED VIEW | INDEX | SOURCE} name RENAME TO new: the
        item's name and every definition that names it (sql.rename) change in one catalog
        transaction."""
        tag = f"ALTER {s.kind.upper()}"
        item = self._named_item(session, s.kind, s.name)
        if item is None:
            if s.if_exists:
                session.notice(f'{s.kind} "{".".join(s.name)}" does not exist, skipping')
                return CommandResult(tag)
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.name)}'")
        if s.new_name == item.name:
            return CommandResult(tag)
        updates = {item.id: rewrite(item.create_sql, old=item.name, new=s.new_name, schema=item.schema, own=True,
                                    where=f"{item.kind_word} {item.qualified_name}")}
        for d in self.catalog.dependents(item.id):
            if item.id not in d.all_dependencies():
                continue  # an indirect dependent does not name it
            where = f"{d.kind_word} {d.qualified_name}"
            for dep_id in d.all_dependencies():
                dep = self.catalog.get_item_by_id(dep_id)
                if dep is not None and dep.id != item.id and dep.name in (item.name, s.new_name):
                    raise SqlError(FEATURE_NOT_SUPPORTED, f'cannot rename: {where} also reads {dep.qualified_name}')
            updates[d.id] = rewrite(d.create_sql, old=item.name, new=s.new_name, schema=item.schema, own=False, where=where)
        with self.write_lock:
            self.catalog.rename_item(item.id, s.new_name, create_sql_updates=updates)
        return CommandResult(tag)
