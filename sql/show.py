"""SHOW of catalog objects as Materialize defines it: each form is a SELECT over the
`mz_catalog` relations (answered by the catalog-query path), with Materialize's columns;
`LIKE 'p'` = `WHERE name LIKE 'p'` and `WHERE e` filters that SELECT's rows:

    SHOW <objects> [FROM schema] [ON obj] [IN CLUSTER c] [LIKE 'p' | WHERE e]
      = SELECT * FROM (<the listing>) AS show WHERE <filter>

`SHOW CREATE <kind> name` is answered from the catalog item itself (server side)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sql.errors import SYNTAX_ERROR, SqlError

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QNAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"


@dataclass(frozen=True)
class ShowListing:
    """SHOW <what> with its scoping and filter clauses (names unquoted and folded)."""

    what: str  # objects | tables | views | materialized views | indexes | sources | sinks | ...
    schema: tuple[str, ...] | None = None  # FROM schema (database.schema)
    on: tuple[str, ...] | None = None  # SHOW INDEXES ON obj / SHOW COLUMNS FROM obj
    cluster: str | None = None  # IN CLUSTER c
    like: str | None = None  # LIKE 'pattern' (SQL text of the literal)
    where: str | None = None  # WHERE expression (SQL text)


@dataclass(frozen=True)
class ShowCreate:
    kind: str  # table | view | materialized view | index | source | sink | connection
    name: tuple[str, ...]


# the listings, their row sources (`o` is the object, `s` its schema) and columns
_IN_SCHEMA = {
    "objects": ("mz_catalog.mz_objects", "o.name, o.type", "o.type"),
    "tables": ("mz_catalog.mz_tables", "o.name", "'table'"),
    "views": ("mz_catalog.mz_views", "o.name", "'view'"),
    "materialized views": ("mz_catalog.mz_materialized_views", "o.name, cl.name AS cluster", "'materialized-view'"),
    "sources": ("mz_catalog.mz_sources", "o.name, o.type, cl.name AS cluster", "'source'"),
    "sinks": ("mz_catalog.mz_sinks", "o.name, o.type, cl.name AS cluster", "'sink'"),
    "secrets": ("mz_catalog.mz_secrets", "o.name", "'secret'"),
    "connections": ("mz_catalog.mz_connections", "o.name, o.type", "'connection'"),
    "types": ("mz_catalog.mz_types", "o.name", "'type'"),
}
_CLUSTERED = {"materialized views", "sources", "sinks", "indexes"}
# ids are unique per kind only (a table, a cluster and a role can all be u1): match the kind too
_COMMENT = ("COALESCE((SELECT c.comment FROM mz_internal.mz_comments c "
            "WHERE c.id = {id} AND c.object_type = {kind} AND c.object_sub_id IS NULL LIMIT 1), '') AS comment")

_WHAT = (r"objects|tables|views|materialized\s+views|indexes|index|keys|sources|sinks|clusters|"
         r"cluster\s+replicas|secrets|connections|roles|types|schemas|databases|columns")


def parse_show(text: str) -> ShowListing | ShowCreate | None:
    """The SHOW forms of this module, or None (SHOW <variable>, handled elsewhere)."""
    m = re.match(rf"(?is)^show\s+create\s+(table|view|materialized\s+view|index|source|sink|connection)\s+({_QNAME})\s*$", text)
    if m:
        return ShowCreate(" ".join(m.group(1).lower().split()), qname(m.group(2)))
    m = re.match(rf"(?is)^show\s+(?:full\s+)?({_WHAT})\b(.*)$", text)
    if not m:
        return None
    what = " ".join(m.group(1).lower().split())
    what = {"index": "indexes", "keys": "indexes"}.get(what, what)
    rest = m.group(2).strip()
    schema = on = cluster = like = where = None
    while rest:
        if mm := re.match(rf"(?is)^(?:from|in)\s+(?!cluster\b)({_QNAME})\s*(.*)$", rest):
            if what == "columns":
                on = qname(mm.group(1))
            else:
                schema = qname(mm.group(1))
            rest = mm.group(2)
        elif (mm := re.match(rf"(?is)^on\s+({_QNAME})\s*(.*)$", rest)) and what == "indexes":
            on, rest = qname(mm.group(1)), mm.group(2)
        elif (mm := re.match(rf"(?is)^in\s+cluster\s+({_IDENT})\s*(.*)$", rest)) and what in _CLUSTERED:
            cluster, rest = ident(mm.group(1)), mm.group(2)
        elif mm := re.match(r"(?is)^like\s+('(?:[^']|'')*')\s*$", rest):
            like, rest = mm.group(1), ""
        elif mm := re.match(r"(?is)^where\s+(.+)$", rest):
            where, rest = mm.group(1), ""
        else:
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{rest.split()[0]}"')
    if what == "columns" and on is None:
        raise SqlError(SYNTAX_ERROR, "SHOW COLUMNS needs FROM <relation>")
    return ShowListing(what, schema, on, cluster, like, where)


def listing_sql(s: ShowListing, schema: str | None, on_id: str | None) -> str:
    """The SELECT answering `s`, its schema (name) and ON / FROM object (id) resolved by the
    caller (which also checks that the schema and cluster exist)."""
    schema_id = None if schema is None else f"(SELECT id FROM mz_catalog.mz_schemas WHERE name = {_lit(schema)})"
    cluster_id = None if s.cluster is None else f"(SELECT id FROM mz_catalog.mz_clusters WHERE name = {_lit(s.cluster)})"
    body = _listing(s, schema_id, on_id, cluster_id)
    conds = []
    if s.like is not None:
        conds.append(f"{_name_column(s.what)} LIKE {s.like}")
    if s.where is not None:
        conds.append(f"({s.where})")
    if not conds:
        return body
    return f"SELECT * FROM ({body}) AS show WHERE {' AND '.join(conds)}"


def _name_column(what: str) -> str:
    return {"cluster replicas": "replica"}.get(what, "name")


def _kind(k: str) -> str:
    return f"'{k}'"


def _lit(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def _listing(s: ShowListing, schema_id: str | None, on_id: str | None, cluster_id: str | None) -> str:
    what = s.what
    if what in _IN_SCHEMA:
        rel, cols, kind = _IN_SCHEMA[what]
        joins = " LEFT JOIN mz_catalog.mz_clusters cl ON cl.id = o.cluster_id" if "cl." in cols else ""
        conds = [f"o.schema_id = {schema_id}"]
        if cluster_id is not None:
            conds.append(f"o.cluster_id = {cluster_id}")
        return (f"SELECT {cols}, {_COMMENT.format(id='o.id', kind=kind)} FROM {rel} o{joins} "
                f"WHERE {' AND '.join(conds)} ORDER BY o.name")
    if what == "indexes":
        conds = []
        if on_id is not None:
            conds.append(f"i.on_id = {_lit(on_id)}")
        elif schema_id is not None:
            conds.append(f"r.schema_id = {schema_id}")
        if cluster_id is not None:
            conds.append(f"i.cluster_id = {cluster_id}")
        key = ("(SELECT COALESCE(array_agg(COALESCE(c.name, ic.on_expression) ORDER BY ic.index_position), '{}'::text[]) "
               "FROM mz_catalog.mz_index_columns ic LEFT JOIN mz_catalog.mz_columns c "
               "ON c.id = i.on_id AND c.position = ic.on_position WHERE ic.index_id = i.id)")
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return (f"SELECT i.name, r.name AS on, cl.name AS cluster, {key} AS key, {_COMMENT.format(id='i.id', kind=_kind('index'))} "
                f"FROM mz_catalog.mz_indexes i JOIN mz_catalog.mz_objects r ON r.id = i.on_id "
                f"LEFT JOIN mz_catalog.mz_clusters cl ON cl.id = i.cluster_id{where} ORDER BY i.name")
    if what == "clusters":
        replicas = ("(SELECT string_agg(r.name || ' (' || r.size || ')', ', ' ORDER BY r.name) "
                    "FROM mz_catalog.mz_cluster_replicas r WHERE r.cluster_id = cl.id)")
        return (f"SELECT cl.name, {replicas} AS replicas, {_COMMENT.format(id='cl.id', kind=_kind('cluster'))} "
                "FROM mz_catalog.mz_clusters cl ORDER BY cl.name")
    if what == "cluster replicas":
        ready = ("EXISTS (SELECT 1 FROM mz_internal.mz_cluster_replica_statuses st "
                 "WHERE st.replica_id = r.id AND st.status = 'online')")
        return (f"SELECT cl.name AS cluster, r.name AS replica, r.size, {ready} AS ready, "
                f"{_COMMENT.format(id='r.id', kind=_kind('cluster-replica'))} FROM mz_catalog.mz_cluster_replicas r "
                "JOIN mz_catalog.mz_clusters cl ON cl.id = r.cluster_id ORDER BY cl.name, r.name")
    if what == "roles":
        return (f"SELECT r.name, {_COMMENT.format(id='r.id', kind=_kind('role'))} FROM mz_catalog.mz_roles r "
                "WHERE r.id LIKE 'u%' ORDER BY r.name")
    if what == "schemas":
        return (f"SELECT s.name, {_COMMENT.format(id='s.id', kind=_kind('schema'))} FROM mz_catalog.mz_schemas s "
                "WHERE s.name NOT LIKE 'mz_temp%' ORDER BY s.name")
    if what == "databases":
        return f"SELECT d.name, {_COMMENT.format(id='d.id', kind=_kind('database'))} FROM mz_catalog.mz_databases d ORDER BY d.name"
    if what == "columns":
        return ("SELECT c.name, c.nullable, c.type, COALESCE((SELECT m.comment FROM mz_internal.mz_comments m "
                "WHERE m.id = c.id AND m.object_sub_id = c.position LIMIT 1), '') AS comment "
                f"FROM mz_catalog.mz_columns c WHERE c.id = {_lit(on_id or '')} ORDER BY c.position")
    raise AssertionError(what)


def ident(s: str) -> str:
    return s[1:-1].replace('""', '"') if s.startswith('"') else s.lower()


def qname(s: str) -> tuple[str, ...]:
    return tuple(ident(p.strip()) for p in re.findall(rf"{_IDENT}", s))
