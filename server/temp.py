"""Temporary items (CREATE TEMP TABLE / VIEW): where they live and who sees them.

A session's temporary items live in its own catalog schema `mz_temp_<pid>`, created on its
first temporary item and dropped (with everything in it) when the session ends; a catalog
drops leftovers when it opens (catalog.Catalog._drop_temp_schemas). Users name that schema
`mz_temp` (or Postgres' `pg_temp`). Name resolution searches it before `search_path`, so a
temporary item shadows same-named items; other sessions' temporary schemas are invisible.
"""

from __future__ import annotations

from catalog.catalog import TEMP_SCHEMA_PREFIX
from sql.errors import SqlError

TEMP_ALIASES = ("mz_temp", "pg_temp")


def temp_schema(pid: int) -> str:
    """The catalog schema holding session `pid`'s temporary items."""
    return f"{TEMP_SCHEMA_PREFIX}{pid}"


def is_temp_name(schema: str) -> bool:
    """A schema name users may not create or drop: the temp alias or a temp schema."""
    return schema in TEMP_ALIASES or schema.startswith(TEMP_SCHEMA_PREFIX)


def lookup_schemas(pid: int, parts: list[str], search_path: list[str], *, with_temp: bool = True) -> list[str]:
    """Schemas to search, in order, for a name of `parts` (1 or 2 parts): a qualified
    `mz_temp.x` means the session's temp schema; another session's temp schema matches
    nothing; an unqualified name searches the temp schema first, then `search_path` (as in
    Postgres, a `pg_temp` / `mz_temp` named on `search_path` is searched at its place)."""
    own = temp_schema(pid)
    if len(parts) == 2:
        schema = parts[0]
        if schema in TEMP_ALIASES:
            return [own]
        if schema.startswith(TEMP_SCHEMA_PREFIX) and schema != own:
            return []
        return [schema]
    path: list[str] = []
    for s in search_path:
        if s in TEMP_ALIASES or s == own:  # named explicitly: searched where it stands
            if own not in path:
                path.append(own)
        elif not s.startswith(TEMP_SCHEMA_PREFIX):
            path.append(s)
    if own not in path:
        path.insert(0, own)
    return path if with_temp else [s for s in path if s != own]


def creation_schema(pid: int, parts: tuple[str, ...] | list[str], temporary: bool) -> tuple[str, bool] | None:
    """(schema, temporary) for a new item named `parts`: TEMP items and items qualified
    with `mz_temp` go to the session's temp schema (as `CREATE TABLE pg_temp.t` does in
    Postgres); None: the caller picks the ordinary schema."""
    qualified = parts[-2] if len(parts) >= 2 else None
    if qualified is not None and qualified in TEMP_ALIASES:
        return temp_schema(pid), True
    if qualified is not None and qualified.startswith(TEMP_SCHEMA_PREFIX):
        if qualified == temp_schema(pid):
            return qualified, True
        raise SqlError("42P01", f'schema "{qualified}" does not exist')
    if temporary:
        if qualified is not None:
            raise SqlError("42P16", "cannot create temporary relation in non-temporary schema")
        return temp_schema(pid), True
    return None
