"""The session context a catalog rewrite may inline, and the detection of catalog-only queries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from catalog.system.relations import RELATIONS_BY_NAME, SYSTEM_RELATIONS, SysRelation
from server.system_sql_ast import _CATALOG_CAST_TYPES, SYSTEM_SCHEMAS, _type_key
from server.system_sql_functions import _is_catalog_function


class NotCatalog(Exception):
    """The query reads a user relation: not ours."""


# ---- session context ------------------------------------------------------------------------------

@dataclass
class Context:
    """What a rewrite may inline about the session and the server."""

    user: str
    database: str
    pid: int
    search_path: tuple[str, ...]  # the session's search_path entries
    setting: Callable[[str], str | None]  # current_setting(name) or None if unknown
    settings: Callable[[], dict[str, str]]  # every setting current_setting() knows
    lookups: Any  # catalog.system.db.Lookups
    schema_exists: Callable[[str], bool]
    user_relation: Callable[[tuple[str, ...]], bool]  # does this name resolve to a user item?
    session_rows: Callable[[str], list[tuple[Any, ...]]]  # rows of a session relation
    visible_key: Callable[[tuple[str, ...]], str]  # key of the visibility rows of a path
    started_at: Any
    version: str
    environment_id: str = ""

    @property
    def visibility_path(self) -> tuple[str, ...]:
        """The effective search path for visibility: pg_catalog first unless listed."""
        sp = tuple(s for s in self.search_path if self.schema_exists(s))
        return sp if "pg_catalog" in sp else ("pg_catalog", *sp)

    @property
    def implicit_path(self) -> tuple[str, ...]:
        """current_schemas(true), and where types and functions are visible: Materialize
        searches mz_catalog and pg_catalog implicitly."""
        sp = tuple(s for s in self.search_path if self.schema_exists(s))
        return tuple(s for s in ("mz_catalog", "pg_catalog") if s not in sp) + sp

    @property
    def relation_path(self) -> tuple[str, ...]:
        """Where unqualified relations are looked up (DESIGN §4.1): the search path, then
        mz_catalog, pg_catalog, mz_internal."""
        sp = list(self.search_path)
        for s in ("mz_catalog", "pg_catalog", "mz_internal"):
            if s not in sp:
                sp.append(s)
        return tuple(sp)


# ---- detection ------------------------------------------------------------------------------------

_TABLE_FUNCTIONS = {"generate_series", "unnest", "generate_subscripts", "pg_get_keywords", "_pg_expandarray",
                    "pg_options_to_table", "pg_show_all_settings"}


def _table_parts(t: exp.Table) -> tuple[str, ...]:
    return tuple(p.name for p in (t.args.get("catalog"), t.args.get("db"), t.this) if p is not None and not isinstance(p, exp.Func))


def _cte_names(ast: exp.Expression) -> set[str]:
    return {c.alias_or_name for c in ast.find_all(exp.CTE)}


def is_catalog_query(ast: exp.Expression, ctx: Context) -> bool:
    """Every relation the query reads is a system relation (or a CTE / table function), and
    it reads at least one system relation or calls a catalog function."""
    if not isinstance(ast, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
        return False
    ctes = _cte_names(ast)
    saw_system = False
    for t in ast.find_all(exp.Table):
        if isinstance(t.this, exp.Func):
            if t.this.name.lower() in ("pg_get_keywords", "_pg_expandarray", "pg_show_all_settings"):
                saw_system = True
            continue
        parts = _table_parts(t)
        if len(parts) == 1 and parts[0] in ctes:
            continue
        if _system_relation(parts, ctx) is None:
            if len(parts) >= 2 and parts[-2] in SYSTEM_SCHEMAS:
                saw_system = True  # unknown system relation: ours to report 42P01
                continue
            return False
        saw_system = True
    if saw_system:
        return True
    return any(_is_catalog_function(f) for f in ast.find_all(exp.Func)) or any(
        isinstance(c, exp.Cast) and _type_key(c.to) in _CATALOG_CAST_TYPES for c in ast.find_all(exp.Cast))


def _system_relation(parts: tuple[str, ...], ctx: Context) -> SysRelation | None:
    if len(parts) == 3:
        if parts[0] != ctx.database and parts[0] != "materialize":
            return None
        parts = parts[1:]
    if len(parts) == 2:
        return SYSTEM_RELATIONS.get((parts[0], parts[1]))
    name = parts[0]
    if ctx.user_relation(parts):
        return None
    cands = RELATIONS_BY_NAME.get(name)
    if not cands:
        return None
    for schema in ctx.relation_path:
        for rel in cands:
            if rel.schema == schema:
                return rel
    return None
