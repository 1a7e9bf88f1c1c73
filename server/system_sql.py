"""Catalog-only queries: detection, and the sqlglot rewrite of a Postgres query onto the
DuckDB-served system relations (DESIGN §2 step 2).

The rewrite is a whitelist: every relation must resolve to a system relation, a CTE or a
known table function; every function must be one we implement (macros in `mzsys.fn`) or a
known-safe DuckDB builtin; every type must be one we know. Anything else is refused with a
Postgres error (42883 unknown function, 42P01 unknown relation, 42704 unknown type) before
DuckDB sees it. Session-dependent values (current_user, current_setting(), search path,
pg_backend_pid(), ...) are inlined as literals; session-dependent relations (pg_settings,
pg_stat_activity, mz_sessions) as VALUES. The result also carries the Postgres types of the
output columns (from the declared types of system relation columns, casts and function
signatures, else from DuckDB's result type) and of the `$n` parameters (declared by the
client, or inferred from the column they are compared with, else text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from catalog.system.relations import (
    DUCK_SCHEMAS,
    FN,
    OID_LIKE,
    RELATIONS_BY_NAME,
    SYSTEM_RELATIONS,
    SysRelation,
    duck_type,
)
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    INSUFFICIENT_PRIVILEGE,
    INVALID_TEXT_REPRESENTATION,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    UNDEFINED_TABLE,
    SqlError,
)
from sql.types import ARRAY_ELEMENT, TYPE_ALIASES, TYPE_INFOS, SqlType

SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "mz_catalog", "mz_internal")
TEXT = SqlType("text")
NAME = SqlType("name")
BOOL = SqlType("bool")
INT4 = SqlType("int4")
INT8 = SqlType("int8")
OID = SqlType("oid")


class NotCatalog(Exception):
    """The query reads a user relation: not ours."""


def deps_hold(deps: Sequence[tuple[Any, ...]], ctx: Context) -> bool:
    """Do a rewrite's catalog lookups still resolve the same way?"""
    for dep in deps:
        if dep[0] == "rel":
            rel = _system_relation((dep[1],), ctx)
            if (rel.schema if rel is not None else None) != dep[2]:
                return False
        elif dep[0] == "reg":
            try:
                if Rewriter(ctx, [])._resolve_reg(dep[1], dep[2]) != dep[3]:
                    return False
            except SqlError:
                return False
    return True


# ---- parsing -----------------------------------------------------------------------------------

_ARRAY_CAST = re.compile(r"::\s*((?:pg_catalog\s*\.\s*)?(?:\"char\"|[A-Za-z_][A-Za-z0-9_]*))\s*\[\s*\]")


def parse_pg(sql: str) -> exp.Expression:
    """Parse one Postgres statement with sqlglot (a few casts sqlglot cannot parse, like
    `$1::oid[]`, are spelled as the array type's name first)."""
    try:
        return _parse(sql)
    except (ParseError, TokenError):
        fixed = _ARRAY_CAST.sub(lambda m: "::" + _array_type_name(m.group(1)), sql)
        if fixed == sql:
            raise
        return _parse(fixed)


def _array_type_name(t: str) -> str:
    base = t.split(".")[-1].strip().strip('"')
    canon = TYPE_ALIASES.get(base.lower(), base.lower())
    return f'"_{canon}"'


def _parse(sql: str) -> exp.Expression:
    stmts = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    if len(stmts) != 1:
        raise SqlError(SYNTAX_ERROR, "syntax error: expected one statement")
    return stmts[0]


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
            if t.this.name.lower() == "pg_get_keywords" or t.this.name.lower() == "_pg_expandarray":
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


# ---- type helpers -------------------------------------------------------------------------------------

_DOMAIN_TYPES = {"sql_identifier": "name", "character_data": "varchar", "cardinal_number": "int4",
                 "yes_or_no": "varchar", "time_stamp": "timestamptz"}
_CATALOG_CAST_TYPES = {"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "oid"}


def _type_key(dt: exp.Expression) -> str:
    """Lower-case type name of a cast target without schema, modifiers or array brackets."""
    if isinstance(dt, exp.ObjectIdentifier) or (isinstance(dt, exp.DataType) and isinstance(dt.this, str)):
        return str(dt.this).lower()
    if isinstance(dt, exp.DataType):
        if dt.this == exp.DataType.Type.USERDEFINED:
            kind = dt.args.get("kind")
            name = kind.name if isinstance(kind, (exp.Identifier, exp.Dot)) else str(kind)
            if isinstance(kind, exp.Dot):
                name = kind.expression.name
            return name.lower() if not (isinstance(kind, exp.Identifier) and kind.quoted) else name
        return dt.this.value.lower()
    return dt.sql().lower()


_SQLGLOT_TYPES = {
    "int": "int4", "smallint": "int2", "bigint": "int8", "boolean": "bool", "float": "float4",
    "double": "float8", "decimal": "numeric", "text": "text", "varchar": "varchar", "char": "bpchar",
    "nchar": "bpchar", "nvarchar": "varchar", "name": "name", "date": "date", "time": "time",
    "timestamp": "timestamp", "timestamptz": "timestamptz", "interval": "interval", "json": "json",
    "jsonb": "jsonb", "uuid": "uuid", "varbinary": "bytea", "binary": "bytea", "blob": "bytea",
    "bytea": "bytea", "tinyint": "int2", "bit": "bool", "money": "numeric", "inet": "inet",
    "ubigint": "uint8", "xid": "xid",
}


def pg_type_of_cast(dt: exp.Expression) -> SqlType:
    """The Postgres type a cast target names (42704 if unknown)."""
    if isinstance(dt, exp.DataType) and dt.this == exp.DataType.Type.ARRAY:
        inner = dt.expressions[0] if dt.expressions else None
        elem = pg_type_of_cast(inner) if inner is not None else TEXT
        name = "_" + elem.name
        if name not in ARRAY_ELEMENT:
            raise SqlError(UNDEFINED_OBJECT, f'type "{elem.name}[]" does not exist')
        return SqlType(name)
    key = _type_key(dt)
    key = _DOMAIN_TYPES.get(key, key)
    name = _SQLGLOT_TYPES.get(key) or TYPE_ALIASES.get(key) or (key if key in TYPE_INFOS else None)
    if key == "char" and isinstance(dt, exp.DataType) and dt.this == exp.DataType.Type.USERDEFINED:
        name = "char"  # "char" (quoted): the one-byte type
    if name is None:
        raise SqlError(UNDEFINED_OBJECT, f'type "{key}" does not exist')
    typmod = -1
    if isinstance(dt, exp.DataType) and dt.expressions:
        nums = [int(p.this.this) if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal) else None
                for p in dt.expressions]
        if name in ("varchar", "bpchar") and nums and nums[0] is not None:
            typmod = nums[0] + 4
        elif name == "numeric" and nums and nums[0] is not None:
            typmod = ((nums[0] << 16) | (nums[1] if len(nums) > 1 and nums[1] is not None else 0)) + 4
    return SqlType(name, typmod)


def _duck_dt(t: SqlType) -> exp.DataType:
    return exp.DataType.build(duck_type(t), dialect="duckdb")


def _cast(e: exp.Expression, t: SqlType) -> exp.Expression:
    return exp.Cast(this=e, to=_duck_dt(t))


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=f"{FN}.{name}", expressions=list(args))


def _lit(v: Any) -> exp.Expression:
    if v is None:
        return exp.Null()
    if isinstance(v, bool):
        return exp.Boolean(this=v)
    if isinstance(v, (int, float)):
        return exp.Literal.number(v)
    if isinstance(v, (list, tuple)):
        return exp.Array(expressions=[_lit(x) for x in v])
    return exp.Literal.string(str(v))


def _typed_lit(v: Any, t: SqlType) -> exp.Expression:
    return _cast(_lit(v), t)


# ---- scopes ----------------------------------------------------------------------------------------

@dataclass
class Source:
    alias: str
    columns: list[tuple[str, SqlType | None]]
    relation: SysRelation | None = None  # a system relation (it has system columns)


@dataclass
class Scope:
    parent: Scope | None = None
    sources: list[Source] = field(default_factory=list)
    ctes: dict[str, list[tuple[str, SqlType | None]]] = field(default_factory=dict)
    aliases: dict[str, SqlType | None] = field(default_factory=dict)  # output aliases (ORDER BY)

    def cte(self, name: str) -> list[tuple[str, SqlType | None]] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.ctes:
                return s.ctes[name]
            s = s.parent
        return None

    def column(self, table: str | None, name: str) -> tuple[bool, SqlType | None]:
        found, t, _alias = self.resolve(table, name)
        return found, t

    def resolve(self, table: str | None, name: str) -> tuple[bool, SqlType | None, str | None]:
        """(found, type, alias of the source it comes from; None for an output alias)."""
        s: Scope | None = self
        while s is not None:
            for src in s.sources:
                if table is not None and src.alias != table:
                    continue
                for c, t in src.columns:
                    if c == name:
                        return True, t, src.alias
                if table is not None:
                    return False, None, None
            if table is None and name in s.aliases:
                return True, s.aliases[name], None
            s = s.parent
        return False, None, None

    def has_source(self, alias: str) -> Source | None:
        s: Scope | None = self
        while s is not None:
            for src in s.sources:
                if src.alias == alias:
                    return src
            s = s.parent
        return None


# ---- the rewrite -----------------------------------------------------------------------------------

@dataclass
class Rewritten:
    sql: str  # DuckDB SQL over mzsys relations
    names: list[str]
    types: list[SqlType | None]  # None: take DuckDB's result type
    param_types: list[SqlType]
    volatile: bool  # reads live server state: never cache the result of the rewrite
    set_config: tuple[str, str, bool] | None = None  # SELECT set_config(...) side effect
    param_map: tuple[int, ...] = ()  # DuckDB parameter k+1 is client parameter param_map[k]
    # What the rewrite looked up in the catalog (unqualified relation names, reg* literals):
    # a cached rewrite stays valid while these resolve the same way.
    deps: tuple[tuple[Any, ...], ...] = ()


class _Param(exp.Expression):
    """A `$n` placeholder whose type is decided once the whole query has been seen."""

    arg_types = {"this": True}


def _placeholder_index(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Parameter):
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return int(inner.this)
        if isinstance(inner, exp.Var) and inner.name.isdigit():
            return int(inner.name)
    if isinstance(node, exp.Placeholder) and node.name and node.name.isdigit():
        return int(node.name)
    return None


class Rewriter:
    def __init__(self, ctx: Context, declared: Sequence[SqlType | None]) -> None:
        self.ctx = ctx
        self.declared = list(declared)
        self.inferred: dict[int, SqlType] = {}
        self.volatile = False
        self.set_config: tuple[str, str, bool] | None = None
        self._seen_params: set[int] = set()
        self.deps: list[tuple[Any, ...]] = []

    # -- entry ------------------------------------------------------------------------------------

    def rewrite(self, ast: exp.Expression) -> Rewritten:
        node, cols = self.query(ast, None)
        _verify(node)
        nparams = max([len(self.declared), *self.inferred, *self._seen_params], default=0)
        ptypes = []
        for i in range(1, nparams + 1):
            d = self.declared[i - 1] if i - 1 < len(self.declared) else None
            ptypes.append(d or self.inferred.get(i) or TEXT)

        # DuckDB wants exactly the parameters the SQL uses, numbered from 1.
        param_map: list[int] = []

        def bind(n: exp.Expression) -> exp.Expression:
            if isinstance(n, _Param):
                i = int(n.this)
                if i not in param_map:
                    param_map.append(i)
                k = param_map.index(i) + 1
                return _cast(exp.Parameter(this=exp.Literal.number(k)), ptypes[i - 1])
            return n

        node = node.transform(bind, copy=False)
        return Rewritten(node.sql(dialect="duckdb"), [c for c, _ in cols], [t for _, t in cols], ptypes,
                         self.volatile, self.set_config, tuple(i - 1 for i in param_map), tuple(dict.fromkeys(self.deps)))

    # -- queries ----------------------------------------------------------------------------------

    def query(self, node: exp.Expression, outer: Scope | None) -> tuple[exp.Expression, list[tuple[str, SqlType | None]]]:
        if isinstance(node, exp.Subquery):
            inner, cols = self.query(node.this, outer)
            node.set("this", inner)
            return node, cols
        if isinstance(node, exp.Paren):
            return self.query(node.this, outer)
        scope = Scope(parent=outer)
        w = node.args.get("with_") or node.args.get("with")
        if w is not None:
            recursive = bool(w.args.get("recursive"))
            for cte in w.expressions:
                name = cte.alias_or_name
                if recursive:
                    # a recursive CTE's columns come from its non-recursive part
                    body = cte.this
                    first = body.this if isinstance(body, exp.Union) else body
                    _, cols0 = self.query(first.copy(), scope)
                    declared = [c.name for c in (cte.args["alias"].columns if cte.args.get("alias") else [])]
                    if declared:
                        cols0 = [(n, t) for n, (_, t) in zip(declared, cols0, strict=False)]
                    scope.ctes[name] = cols0
                body, cols = self.query(cte.this, scope)
                declared = [c.name for c in (cte.args["alias"].columns if cte.args.get("alias") else [])]
                if declared:
                    cols = [(n, t) for n, (_, t) in zip(declared, cols, strict=False)]
                cte.set("this", body)
                scope.ctes[name] = cols
        if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
            left, lcols = self.query(node.this, scope)
            right, rcols = self.query(node.expression, scope)
            node.set("this", left)
            node.set("expression", right)
            cols = [(n, t if t is not None else (rcols[i][1] if i < len(rcols) else None)) for i, (n, t) in enumerate(lcols)]
            self._order_limit(node, scope)
            return node, cols
        if isinstance(node, exp.Values):
            cols = []
            for row in node.expressions:
                vals = row.expressions if isinstance(row, exp.Tuple) else [row]
                new = [self.expr(v, scope) for v in vals]
                if isinstance(row, exp.Tuple):
                    row.set("expressions", [n for n, _ in new])
                if not cols:
                    cols = [(f"column{i + 1}", t) for i, (_, t) in enumerate(new)]
            alias = node.args.get("alias")
            if alias is not None and alias.columns:
                cols = [(c.name, t) for c, (_, t) in zip(alias.columns, cols, strict=False)]
            return node, cols
        if not isinstance(node, exp.Select):
            raise SqlError(FEATURE_NOT_SUPPORTED, f"{node.key.upper()} is not supported in catalog queries")
        return self.select(node, scope)

    def select(self, node: exp.Select, scope: Scope) -> tuple[exp.Expression, list[tuple[str, SqlType | None]]]:
        if node.args.get("locks"):
            raise SqlError(FEATURE_NOT_SUPPORTED, "SELECT ... FOR UPDATE is not supported for system relations")
        if node.args.get("into"):
            raise SqlError(FEATURE_NOT_SUPPORTED, "SELECT INTO is not supported")
        frm = node.args.get("from_") or node.args.get("from")
        using_join = False
        if frm is not None:
            frm.set("this", self.source(frm.this, scope))
        for j in node.args.get("joins") or []:
            j.set("this", self.source(j.this, scope))
            if j.args.get("using"):
                using_join = True
        for j in node.args.get("joins") or []:
            if j.args.get("on") is not None:
                j.set("on", self.expr(j.args["on"], scope)[0])
        for key in ("where", "having", "qualify"):
            part = node.args.get(key)
            if part is not None:
                part.set("this", self.expr(part.this, scope)[0])
        group = node.args.get("group")
        if group is not None:
            group.set("expressions", [self.expr(e, scope)[0] for e in group.expressions])
        # projections (with * expanded), named as Postgres names them
        projections: list[exp.Expression] = []
        cols: list[tuple[str, SqlType | None]] = []
        for p in node.expressions:
            star_src = self._star(p, scope)
            if star_src is not None and not using_join:
                for alias, cname, ctype in star_src:
                    projections.append(exp.alias_(exp.column(cname, table=alias, quoted=True), cname, quoted=True))
                    cols.append((cname, ctype))
                continue
            if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                projections.append(p)
                cols.append(("*", None))
                continue
            name = p.alias if isinstance(p, exp.Alias) else _figure_colname(p)
            inner = p.this if isinstance(p, exp.Alias) else p
            new, t = self.expr(inner, scope)
            projections.append(exp.alias_(new, name, quoted=True))
            cols.append((name, t))
        node.set("expressions", projections)
        for name, t in cols:
            scope.aliases.setdefault(name, t)
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            on = distinct.args["on"]
            on.set("expressions", [self.expr(e, scope)[0] for e in on.expressions])
        self._order_limit(node, scope)
        for win in node.args.get("windows") or []:
            win.set("this", self.expr(win.this, scope)[0])
        return node, cols

    def _order_limit(self, node: exp.Expression, scope: Scope) -> None:
        order = node.args.get("order")
        if order is not None:
            for o in order.expressions:
                o.set("this", self.expr(o.this, scope, order_by=True)[0])
        for key in ("limit", "offset"):
            part = node.args.get(key)
            if part is not None:
                target = part.args.get("expression") if isinstance(part, (exp.Limit, exp.Offset)) else None
                if target is not None:
                    part.set("expression", self._expect(self.expr(target, scope), INT8))

    def _star(self, p: exp.Expression, scope: Scope) -> list[tuple[str, str, SqlType | None]] | None:
        if isinstance(p, exp.Star):
            if not scope.sources or any(c == "*" for s in scope.sources for c, _ in s.columns):
                return None
            return [(s.alias, c, t) for s in scope.sources for c, t in s.columns]
        if isinstance(p, exp.Column) and isinstance(p.this, exp.Star) and p.table:
            src = scope.has_source(p.table)
            if src is None or any(c == "*" for c, _ in src.columns):
                return None
            return [(src.alias, c, t) for c, t in src.columns]
        return None

    # -- FROM items -------------------------------------------------------------------------------

    def source(self, node: exp.Expression, scope: Scope) -> exp.Expression:
        """A FROM item; parenthesized joins `(a JOIN b ON ...)` put their items in `scope`."""
        joins = node.args.get("joins")
        if joins:
            node.set("joins", None)
        if isinstance(node, exp.Subquery) and not isinstance(node.this, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values)):
            node.set("this", self.source(node.this, scope))
            new = node
        else:
            new = self._source(node, scope)
        if joins:
            for j in joins:
                j.set("this", self.source(j.this, scope))
            for j in joins:
                if j.args.get("on") is not None:
                    j.set("on", self.expr(j.args["on"], scope)[0])
            new.set("joins", joins)
        return new

    def _source(self, node: exp.Expression, scope: Scope) -> exp.Expression:
        alias_node = node.args.get("alias")
        alias = alias_node.name if alias_node is not None and alias_node.name else None
        col_aliases = [c.name for c in alias_node.columns] if alias_node is not None and alias_node.columns else []
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
            return self.table_function(node, scope, alias, col_aliases)
        if isinstance(node, exp.Table):
            parts = _table_parts(node)
            if len(parts) == 1 and scope.cte(parts[0]) is not None:
                cols = scope.cte(parts[0]) or []
                scope.sources.append(Source(alias or parts[0], _rename(cols, col_aliases)))
                return node
            rel = _system_relation(parts, self.ctx)
            if len(parts) == 1:
                self.deps.append(("rel", parts[0], rel.schema if rel is not None else None))
            if rel is None:
                if len(parts) >= 2 and parts[-2] in SYSTEM_SCHEMAS or len(parts) == 1:
                    raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(parts)}" does not exist')
                raise NotCatalog()
            cols = list(rel.columns)
            scope.sources.append(Source(alias or rel.name, _rename(cols, col_aliases), rel))
            if rel.session:
                self.volatile = True
                return self._session_relation(rel, alias or rel.name, col_aliases)
            duck_schema = DUCK_SCHEMAS[rel.schema]
            new = exp.Table(this=exp.to_identifier(rel.name), db=exp.to_identifier(duck_schema),
                            catalog=exp.to_identifier("mzsys"),
                            alias=exp.TableAlias(this=exp.to_identifier(alias or rel.name, quoted=True),
                                                 columns=[exp.to_identifier(c, quoted=True) for c in col_aliases] or None))
            return new
        if isinstance(node, exp.Subquery):
            inner, cols = self.query(node.this, scope)
            node.set("this", inner)
            scope.sources.append(Source(alias or "?subquery?", _rename(cols, col_aliases)))
            return node
        if isinstance(node, exp.Unnest):
            new_exprs = []
            types = []
            for e in node.expressions:
                n, t = self.expr(e, scope)
                new_exprs.append(n)
                types.append(t.element if t is not None and t.element is not None else None)
            node.set("expressions", new_exprs)
            names = col_aliases or ["unnest"]
            cols = [(names[i] if i < len(names) else f"unnest{i}", types[i] if i < len(types) else None) for i in range(max(len(names), 1))]
            if node.args.get("offset"):
                off = node.args["offset"]
                cols.append((off.name if isinstance(off, exp.Identifier) else "ordinality", INT8))
            scope.sources.append(Source(alias or "unnest", cols))
            return node
        if isinstance(node, exp.Values):
            new, cols = self.query(node, scope)
            scope.sources.append(Source(alias or "*VALUES*", _rename(cols, col_aliases)))
            return new
        if isinstance(node, exp.Lateral):
            inner = node.this
            if isinstance(inner, exp.Subquery):
                q, cols = self.query(inner.this, scope)
                inner.set("this", q)
                scope.sources.append(Source(alias or "?lateral?", _rename(cols, col_aliases)))
                return node
        raise SqlError(FEATURE_NOT_SUPPORTED, f"{node.key} in FROM is not supported in catalog queries")

    def table_function(self, node: exp.Table, scope: Scope, alias: str | None, col_aliases: list[str]) -> exp.Expression:
        f = node.this
        name = (f.name if isinstance(f, exp.Anonymous) else f.key).lower()
        if isinstance(f, (exp.ExplodingGenerateSeries, exp.GenerateSeries)) or name == "generate_series":
            args = [self.expr(a, scope)[0] for a in _func_args(f)]
            col = (col_aliases or [alias or "generate_series"])[0]
            scope.sources.append(Source(alias or "generate_series", [(col, INT8)]))
            call = exp.Anonymous(this="generate_series", expressions=args)
            return exp.Subquery(this=exp.select(exp.alias_(exp.Explode(this=call), col, quoted=True)),
                                alias=exp.TableAlias(this=exp.to_identifier(alias or "generate_series", quoted=True)))
        if name == "pg_get_keywords":
            cols = [("word", TEXT), ("catcode", SqlType("char")), ("barelabel", BOOL), ("catdesc", TEXT), ("baredesc", TEXT)]
            scope.sources.append(Source(alias or "pg_get_keywords", _rename(cols, col_aliases)))
            return exp.Table(this=exp.to_identifier("keywords"), db=exp.to_identifier("static"),
                             catalog=exp.to_identifier("mzsys"),
                             alias=exp.TableAlias(this=exp.to_identifier(alias or "pg_get_keywords", quoted=True),
                                                  columns=[exp.to_identifier(c, quoted=True) for c in col_aliases] or None))
        if name == "_pg_expandarray":
            (arg,) = _func_args(f)
            a, t = self.expr(arg, scope)
            elem = t.element if t is not None else None
            names = col_aliases or ["x", "n"]
            scope.sources.append(Source(alias or "_pg_expandarray", [(names[0], elem), (names[1], INT4)]))
            e = exp.alias_(exp.Explode(this=_fn("expandarray", a)), "_e")
            inner = exp.select(exp.column("_e").dot("x").as_(names[0], quoted=True),
                               exp.column("_e").dot("n").as_(names[1], quoted=True)).from_(
                exp.Subquery(this=exp.select(e), alias=exp.TableAlias(this=exp.to_identifier("_x"))))
            return exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias or "_pg_expandarray", quoted=True)))
        if name in ("generate_subscripts",):
            args = _func_args(f)
            a, t = self.expr(args[0], scope)
            col = (col_aliases or [alias or "generate_subscripts"])[0]
            vec = t is not None and t.name in ("int2vector", "oidvector")
            call = exp.Anonymous(this="generate_subscripts", expressions=[a, exp.Literal.number(1)])
            if vec:
                call = exp.Sub(this=call, expression=exp.Literal.number(1))
            scope.sources.append(Source(alias or "generate_subscripts", [(col, INT4)]))
            return exp.Subquery(this=exp.select(exp.alias_(call, col, quoted=True)),
                                alias=exp.TableAlias(this=exp.to_identifier(alias or "generate_subscripts", quoted=True)))
        if name in ("unnest", "explode"):
            alias_node = node.args.get("alias")
            if alias_node is not None and not alias_node.columns:
                # a one-column function's alias names its column too
                alias_node = exp.TableAlias(this=alias_node.this, columns=[alias_node.this.copy()])
            return self.source(exp.Unnest(expressions=_func_args(f), alias=alias_node), scope)
        if isinstance(f, exp.Anonymous) and name in _FUNCTIONS or type(f) in _TYPED or type(f) in _TYPED_PASSTHROUGH:
            # a function returning one value in FROM: a one-row relation named by its alias
            value, t = self.expr(f, scope)
            col = (col_aliases or [alias or name])[0]
            scope.sources.append(Source(alias or name, [(col, t)]))
            return exp.Subquery(this=exp.select(exp.alias_(value, col, quoted=True)),
                                alias=exp.TableAlias(this=exp.to_identifier(alias or name, quoted=True)))
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}() does not exist",
                       hint="No function matches the given name and argument types.")

    def _session_relation(self, rel: SysRelation, alias: str, col_aliases: list[str]) -> exp.Expression:
        rows = self.ctx.session_rows(f"{rel.schema}.{rel.name}")
        names = [c for c, _ in rel.columns]
        if rows:
            tuples = [exp.Tuple(expressions=[_typed_lit(v, t) for v, (_, t) in zip(r, rel.columns, strict=True)]) for r in rows]
            values = exp.Values(expressions=tuples, alias=exp.TableAlias(this=exp.to_identifier("_v"),
                                columns=[exp.to_identifier(n, quoted=True) for n in names]))
            body = exp.select("*").from_(values)
        else:
            body = exp.select(*[exp.alias_(_typed_lit(None, t), c, quoted=True) for c, t in rel.columns]).where(exp.false())
        return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True),
                            columns=[exp.to_identifier(c, quoted=True) for c in col_aliases] or None))

    # -- expressions ------------------------------------------------------------------------------

    def _expect(self, r: tuple[exp.Expression, SqlType | None], t: SqlType) -> exp.Expression:
        node, _ = r
        if isinstance(node, _Param):
            self._infer_param(node, t)
        return node

    def _infer_param(self, node: exp.Expression, t: SqlType | None) -> None:
        if isinstance(node, _Param) and t is not None:
            self.inferred.setdefault(int(node.this), t)

    def expr(self, node: exp.Expression, scope: Scope, order_by: bool = False) -> tuple[exp.Expression, SqlType | None]:
        idx = _placeholder_index(node)
        if idx is not None:
            self._seen_params.add(idx)
            d = self.declared[idx - 1] if idx - 1 < len(self.declared) else None
            return _Param(this=str(idx)), d
        if isinstance(node, exp.Column):
            return self.column(node, scope, order_by)
        if isinstance(node, (exp.ByteString, exp.RawString, exp.National, exp.UnicodeString)):
            node = exp.Literal.string(node.this if isinstance(node.this, str) else node.name)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return node, None  # unknown: takes the type of its context
            text = node.this
            if re.fullmatch(r"\d+", text):
                return node, INT4 if int(text) < 2**31 else INT8
            return node, SqlType("numeric")
        if isinstance(node, exp.Boolean):
            return node, BOOL
        if isinstance(node, exp.Null):
            return node, None
        if isinstance(node, (exp.Subquery,)) and not isinstance(node.this, exp.Values):
            q, cols = self.query(node.this, scope)
            node.set("this", q)
            return node, cols[0][1] if cols else None
        if isinstance(node, exp.Exists):
            q, _ = self.query(node.this, scope)
            node.set("this", q)
            return node, BOOL
        if isinstance(node, exp.Array):
            items = node.expressions
            if len(items) == 1 and isinstance(items[0], (exp.Select, exp.Union, exp.Subquery)):
                q, cols = self.query(items[0], scope)
                t = cols[0][1] if cols else None
                arr = SqlType("_" + t.name) if t is not None and "_" + t.name in ARRAY_ELEMENT else None
                # ARRAY(subquery) keeps the subquery's ORDER BY in DuckDB
                return exp.Array(expressions=[q]), arr
            new = [self.expr(e, scope) for e in items]
            t = next((x for _, x in new if x is not None), TEXT)
            node.set("expressions", [n for n, _ in new])
            arr = SqlType("_" + t.name) if "_" + t.name in ARRAY_ELEMENT else SqlType("_text")
            return node, arr
        if isinstance(node, exp.Paren):
            inner, t = self.expr(node.this, scope, order_by)
            node.set("this", inner)
            return node, t
        if isinstance(node, exp.Collate):
            return self.expr(node.this, scope, order_by)
        if isinstance(node, exp.Alias):
            inner, t = self.expr(node.this, scope)
            node.set("this", inner)
            return node, t
        if isinstance(node, exp.Cast):
            return self.cast(node, scope)
        if isinstance(node, exp.Dot):
            return self.dot(node, scope)
        if isinstance(node, exp.Operator):
            return self.operator(node, scope)
        if isinstance(node, exp.Bracket):
            return self.subscript(node, scope)
        if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)):
            return self.comparison(node, scope)
        if isinstance(node, (exp.And, exp.Or, exp.Not, exp.Is, exp.Like, exp.ILike, exp.SimilarTo, exp.RegexpLike,
                             exp.RegexpILike, exp.Between, exp.In, exp.Xor)):
            if isinstance(node, exp.In):
                left, lt = self.expr(node.this, scope)
                node.set("this", left)
                if node.args.get("query") is not None:
                    q, _ = self.query(node.args["query"].this if isinstance(node.args["query"], exp.Subquery) else node.args["query"], scope)
                    sub = node.args["query"]
                    if isinstance(sub, exp.Subquery):
                        sub.set("this", q)
                    else:
                        node.set("query", q)
                new = []
                for e in node.expressions:
                    n, t = self.expr(e, scope)
                    self._infer_param(n, lt)
                    self._infer_param(left, t)
                    new.append(_coerce(n, lt))
                node.set("expressions", new)
                return node, BOOL
            self._children(node, scope)
            if isinstance(node, (exp.Like, exp.ILike, exp.SimilarTo, exp.RegexpLike, exp.RegexpILike)):
                for k in ("this", "expression"):
                    child = node.args.get(k)
                    if isinstance(child, _Param):
                        self._infer_param(child, TEXT)
                    if isinstance(child, exp.Expression) and not isinstance(child, _Param):
                        node.set(k, child)
            if isinstance(node, exp.RegexpILike):
                return exp.Anonymous(this="regexp_matches", expressions=[node.this, node.expression, exp.Literal.string("i")]), BOOL
            return node, BOOL
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.BitwiseAnd, exp.BitwiseOr,
                             exp.BitwiseXor, exp.BitwiseLeftShift, exp.BitwiseRightShift, exp.Neg, exp.Pow)):
            ts = self._children(node, scope)
            left = node.args.get("this")
            right = node.args.get("expression")
            if isinstance(left, _Param):
                self._infer_param(left, ts.get("expression"))
            if isinstance(right, _Param):
                self._infer_param(right, ts.get("this"))
            lt, rt = ts.get("this"), ts.get("expression")
            ints = ("int2", "int4", "int8")
            if lt is not None and rt is not None and lt.name in ints and rt.name in ints:
                wide = max(lt.name, rt.name, key=ints.index)
                if isinstance(node, exp.Div):  # Postgres divides integers as integers
                    return exp.IntDiv(this=left, expression=right), SqlType(wide)
                if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Mod)):
                    return node, SqlType(wide)
            return node, None
        if isinstance(node, exp.DPipe):
            ts = self._children(node, scope)
            arrays = [t for t in ts.values() if t is not None and t.name in ARRAY_ELEMENT]
            if arrays:
                return node, arrays[0]
            for k in ("this", "expression"):
                c = node.args.get(k)
                if isinstance(c, _Param):
                    self._infer_param(c, TEXT)
                    node.set(k, _cast(c, TEXT))
            return node, TEXT
        if isinstance(node, exp.Case):
            ts = []
            if node.this is not None:
                node.set("this", self.expr(node.this, scope)[0])
            for i in node.args.get("ifs") or []:
                i.set("this", self.expr(i.this, scope)[0])
                n, t = self.expr(i.args["true"], scope)
                i.set("true", n)
                ts.append(t)
            if node.args.get("default") is not None:
                n, t = self.expr(node.args["default"], scope)
                node.set("default", n)
                ts.append(t)
            return node, next((t for t in ts if t is not None), None)
        if isinstance(node, exp.Interval):
            return node, SqlType("interval")
        if isinstance(node, exp.Escape):
            self._children(node, scope)
            return node, BOOL
        if isinstance(node, (exp.Window, exp.Filter, exp.Order, exp.Ordered, exp.Distinct, exp.Tuple,
                             exp.WithinGroup, exp.Slice, exp.IgnoreNulls, exp.RespectNulls, exp.Where)):
            ts = self._children(node, scope)
            return node, ts.get("this")
        if isinstance(node, exp.Func):
            return self.function(node, scope)
        if isinstance(node, exp.Star):
            return node, None
        if isinstance(node, (exp.Var, exp.Identifier)):
            # a bare keyword like CURRENT_USER parsed as a variable
            return self.keyword(node.name, scope)
        if isinstance(node, exp.Any | exp.All):
            inner, t = self.expr(node.this, scope)
            node.set("this", inner)
            return node, t
        raise SqlError(FEATURE_NOT_SUPPORTED, f"expression {node.key} is not supported in catalog queries")

    def _children(self, node: exp.Expression, scope: Scope) -> dict[str, SqlType | None]:
        types: dict[str, SqlType | None] = {}
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                if isinstance(value, (exp.Identifier,)) and key != "this":
                    continue
                n, t = self.expr(value, scope)
                node.set(key, n)
                types[key] = t
            elif isinstance(value, list):
                out = []
                for v in value:
                    if isinstance(v, exp.Expression) and not isinstance(v, exp.Identifier):
                        n, _ = self.expr(v, scope)
                        out.append(n)
                    else:
                        out.append(v)
                node.set(key, out)
        return types

    def column(self, node: exp.Column, scope: Scope, order_by: bool) -> tuple[exp.Expression, SqlType | None]:
        table = node.table or None
        name = node.name
        if node.args.get("db"):
            # schema.table.column: sources are aliased by their relation name
            node = exp.Column(this=node.this, table=node.args.get("table"))
        found, t, alias = scope.resolve(table, name)
        if found:
            if table is None and alias is not None and not order_by:
                # qualify it: macros expand inline, and an unqualified name could be captured
                # by a table inside a macro body
                return exp.Column(this=node.this, table=exp.to_identifier(alias, quoted=True)), t
            return node, t
        if name in _SYSTEM_COLUMNS:
            src = scope.has_source(table) if table else next((x for x in scope.sources if x.relation is not None), None)
            if src is not None and src.relation is not None:
                t = _SYSTEM_COLUMNS[name]
                value: Any = src.relation.oid if name == "tableoid" else ("(0,0)" if name == "ctid" else 0)
                return _typed_lit(value, t), t
        if table is None:
            kw = self.keyword(name, scope, strict=False)
            if kw is not None:
                return kw
            src = scope.has_source(name)
            if src is not None:
                return node, SqlType("record")  # a whole-row reference
        if order_by:
            return node, None
        if table is not None and scope.has_source(table) is None:
            raise SqlError(UNDEFINED_TABLE, f'missing FROM-clause entry for table "{table}"')
        raise SqlError(UNDEFINED_COLUMN, f'column "{f"{table}." if table else ""}{name}" does not exist')

    def keyword(self, name: str, scope: Scope, strict: bool = True) -> Any:
        low = name.lower()
        ctx = self.ctx
        if low in ("current_user", "session_user", "user", "current_role"):
            return _typed_lit(ctx.user, NAME), NAME
        if low == "current_catalog":
            return _typed_lit(ctx.database, NAME), NAME
        if low == "current_schema":
            return self._current_schema(), NAME
        if strict:
            raise SqlError(UNDEFINED_COLUMN, f'column "{name}" does not exist')
        return None

    def _current_schema(self) -> exp.Expression:
        for s in self.ctx.search_path:
            if self.ctx.schema_exists(s):
                return _typed_lit(s, NAME)
        return _typed_lit(None, NAME)

    def comparison(self, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        left, lt = self.expr(node.this, scope)
        right_node = node.expression
        if isinstance(right_node, (exp.Any, exp.All)):
            inner = right_node.this
            if isinstance(inner, exp.Paren) and isinstance(inner.this, (exp.Select, exp.Union)):
                q, _ = self.query(inner.this, scope)
                inner.set("this", q)
                node.set("this", left)
                return node, BOOL
            arr, at = self.expr(inner, scope)
            if isinstance(arr, exp.Paren):
                core = arr.this
            else:
                core = arr
            if isinstance(core, _Param) and lt is not None and "_" + lt.name in ARRAY_ELEMENT:
                self._infer_param(core, SqlType("_" + lt.name))
            if isinstance(left, _Param) and at is not None and at.element is not None:
                self._infer_param(left, at.element)
            fn = exp.Anonymous(this="list_contains", expressions=[core, _coerce(left, at.element if at is not None else None)])
            if isinstance(node, exp.EQ) and isinstance(right_node, exp.Any):
                return exp.Paren(this=fn), BOOL
            right_node.set("this", arr)
            node.set("this", left)
            return node, BOOL
        right, rt = self.expr(right_node, scope)
        self._infer_param(left, rt)
        self._infer_param(right, lt)
        node.set("this", _coerce(left, rt))
        node.set("expression", _coerce(right, lt))
        return node, BOOL

    def operator(self, node: exp.Operator, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        op = str(node.args.get("operator") or "").split(".")[-1].strip()
        cls = {"=": exp.EQ, "<>": exp.NEQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE,
               "~~": exp.Like, "~~*": exp.ILike, "||": exp.DPipe, "+": exp.Add, "-": exp.Sub}.get(op)
        if cls is not None:
            return self.expr(cls(this=node.this, expression=node.expression), scope)
        if op in ("~", "~*", "!~", "!~*"):
            new: exp.Expression = (exp.RegexpILike if "*" in op else exp.RegexpLike)(this=node.this, expression=node.expression)
            if op.startswith("!"):
                new = exp.Not(this=new)
            return self.expr(new, scope)
        raise SqlError(UNDEFINED_FUNCTION, f"operator does not exist: {op}")

    def subscript(self, node: exp.Bracket, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        base, t = self.expr(node.this, scope)
        node.set("this", base)
        idx = []
        for e in node.expressions:
            n, _ = self.expr(e, scope)
            self._infer_param(n, INT4)
            if t is not None and t.name in ("int2vector", "oidvector") and not isinstance(n, exp.Slice):
                n = exp.Add(this=exp.Paren(this=n), expression=exp.Literal.number(1))
            idx.append(n)
        node.set("expressions", idx)
        return node, (t.element if t is not None else None)

    def dot(self, node: exp.Dot, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        # schema-qualified function: pg_catalog.f(...)
        if isinstance(node.this, exp.Identifier) and isinstance(node.expression, exp.Func):
            schema = node.this.name.lower()
            if schema not in SYSTEM_SCHEMAS:
                raise SqlError(UNDEFINED_FUNCTION, f"function {schema}.{node.expression.name}() does not exist")
            return self.function(node.expression, scope)
        # field of a composite: (expr).field
        base, t = self.expr(node.this, scope)
        node.set("this", base)
        return node, None

    def cast(self, node: exp.Cast, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        target = pg_type_of_cast(node.to)
        inner = node.this
        if target.name in ("regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole"):
            if isinstance(inner, exp.Literal) and inner.is_string:
                return _typed_lit(self.resolve_reg(target.name, inner.this), target), target
            n, t = self.expr(inner, scope)
            if isinstance(n, _Param):
                self._infer_param(n, target)
                return n, target
            if t is not None and (t.name in OID_LIKE or t.name in ("int4", "int8", "int2")):
                return _cast(n, OID), target
            fn = {"regclass": "regclass_in", "regtype": "regtype_in", "regproc": "regproc_in",
                  "regprocedure": "regproc_in", "regnamespace": "regnamespace_in", "regrole": "regrole_in"}[target.name]
            args = [_cast(n, TEXT)] + ([self._visible()] if fn == "regclass_in" else [])
            return _fn(fn, *args), target
        n, t = self.expr(inner, scope)
        if isinstance(n, _Param):
            self._infer_param(n, target)
            return _cast(n, target), target
        if target.name in ("text", "varchar", "name", "bpchar") and t is not None and t.name in (
                "regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole"):
            return self.reg_out(n, t), target
        if target.name in ("text", "varchar", "name", "bpchar") and t is not None and t.name in ARRAY_ELEMENT:
            return _fn("vector_text" if t.name in ("int2vector", "oidvector") else "array_text", n), target
        if target.name == "bool" and isinstance(n, exp.Literal) and n.is_string:
            return _lit(n.this.strip().lower() in ("t", "true", "yes", "on", "1")), BOOL
        if target.name in ARRAY_ELEMENT and isinstance(n, exp.Literal) and n.is_string:
            return _typed_lit(_array_literal(n.this), target), target
        if target.name == "char":
            return exp.Anonymous(this="left", expressions=[_cast(n, TEXT), exp.Literal.number(1)]), target
        return _cast(n, target), target

    def reg_out(self, n: exp.Expression, t: SqlType) -> exp.Expression:
        name = t.name
        if name == "regclass":
            return _fn("regclass_out", n, self._visible())
        if name == "regtype":
            return _fn("regtype_out", n)
        if name in ("regproc", "regprocedure"):
            return _fn("regproc_out", n)
        if name == "regnamespace":
            return _fn("regnamespace_out", n)
        return _fn("regrole_out", n)

    def _visible(self) -> exp.Expression:
        return _lit(self.ctx.visible_key(self.ctx.visibility_path))

    def resolve_reg(self, kind: str, text: str) -> int:
        """A reg* literal: the OID its name denotes (errors like Postgres' input functions)."""
        oid = self._resolve_reg(kind, text)
        self.deps.append(("reg", kind, text, oid))
        return oid

    def _resolve_reg(self, kind: str, text: str) -> int:
        s = text.strip()
        if re.fullmatch(r"\d+", s):
            return int(s)
        lk = self.ctx.lookups
        if kind == "regclass":
            parts = _split_ident(s)
            if len(parts) == 3:
                parts = parts[1:]
            if len(parts) == 2:
                oid = lk.class_oids.get((parts[0], parts[1]))
            else:
                oid = None
                for schema in self.ctx.visibility_path:
                    oid = lk.class_oids.get((schema, parts[0]))
                    if oid is not None:
                        break
                if oid is None and (ctx_rel := _system_relation((parts[0],), self.ctx)) is not None:
                    oid = ctx_rel.oid
            if oid is None:
                raise SqlError(UNDEFINED_TABLE, f'relation "{s}" does not exist')
            return oid
        if kind == "regtype":
            key = s.lower().removeprefix("pg_catalog.").strip('"')
            arr = key.endswith("[]")
            base = key[:-2].strip() if arr else key
            base = re.sub(r"\s*\(.*\)$", "", base)
            canon = TYPE_ALIASES.get(base, base)
            oid = lk.type_oids.get(canon) or lk.type_oids.get(base)
            if oid is not None and arr:
                info = TYPE_INFOS.get(lk.type_names.get(oid, ("", ""))[1])
                oid = info.array_oid if info is not None else None
            if oid is None:
                raise SqlError(UNDEFINED_OBJECT, f'type "{s}" does not exist')
            return oid
        if kind in ("regproc", "regprocedure"):
            name = s.split("(")[0].strip().removeprefix("pg_catalog.")
            oid = lk.proc_oids.get(name)
            if oid is None:
                raise SqlError(UNDEFINED_FUNCTION, f'function "{s}" does not exist')
            return oid
        if kind == "regnamespace":
            oid = lk.namespace_oids.get(_split_ident(s)[0])
            if oid is None:
                raise SqlError(UNDEFINED_SCHEMA_ERR, f'schema "{s}" does not exist')
            return oid
        oid = lk.role_oids.get(_split_ident(s)[0])
        if oid is None:
            raise SqlError(UNDEFINED_OBJECT, f'role "{s}" does not exist')
        return oid

    # -- functions --------------------------------------------------------------------------------

    def function(self, node: exp.Func, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        name = (node.name if isinstance(node, exp.Anonymous) else "").lower()
        if name in _VOLATILE or isinstance(node, _VOLATILE_TYPED):
            self.volatile = True  # its result changes from one execution to the next
        handler = _FUNCTIONS.get(name) if name else _TYPED.get(type(node))
        if handler is None and not name:
            if type(node) in _TYPED_PASSTHROUGH:
                ts = self._children(node, scope)
                declared = _TYPED_PASSTHROUGH[type(node)]
                return node, declared if declared is not None else ts.get("this")
            raise SqlError(UNDEFINED_FUNCTION, f"function {_func_display(node)} does not exist",
                           hint="No function matches the given name and argument types.")
        if handler is None:
            raise SqlError(UNDEFINED_FUNCTION, f"function {_func_display(node)} does not exist",
                           hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        args = _func_args(node)
        return handler(self, node, args, scope)

    def args(self, args: list[exp.Expression], scope: Scope) -> list[tuple[exp.Expression, SqlType | None]]:
        return [self.expr(a, scope) for a in args]


UNDEFINED_SCHEMA_ERR = "3F000"
_VOLATILE = {"now", "clock_timestamp", "statement_timestamp", "transaction_timestamp", "random", "timeofday",
             "txid_current", "pg_current_xact_id", "age"}
_VOLATILE_TYPED = tuple(getattr(exp, n) for n in ("CurrentTimestamp", "CurrentDate", "CurrentTime", "Localtimestamp",
                                                   "Rand", "Random") if hasattr(exp, n))
# Postgres' system columns, present on every catalog table.
_SYSTEM_COLUMNS = {"xmin": SqlType("xid"), "xmax": SqlType("xid"), "cmin": SqlType("cid"), "cmax": SqlType("cid"),
                   "ctid": SqlType("tid"), "tableoid": OID}


def _coerce(n: exp.Expression, other: SqlType | None) -> exp.Expression:
    """Comparing a string literal (Postgres' unknown) with a typed value: type the literal."""
    if other is not None and isinstance(n, exp.Literal) and n.is_string:
        if other.name in ("bool",):
            return _lit(n.this.strip().lower() in ("t", "true", "yes", "on", "1"))
        if other.name in ARRAY_ELEMENT:
            return _typed_lit(_array_literal(n.this), other)
        return _cast(n, other)
    return n


def _array_literal(text: str) -> list[Any]:
    """Elements of a Postgres array literal ('{a,b}'), as text."""
    from server.pgwire.codec import parse_text

    return parse_text(text, SqlType("_text"))


def _split_ident(s: str) -> list[str]:
    parts = []
    for m in re.finditer(r'"((?:[^"]|"")*)"|([^."]+)', s):
        if m.group(1) is not None:
            parts.append(m.group(1).replace('""', '"'))
        else:
            parts.append(m.group(2).strip().lower())
    return parts


def _rename(cols: list[tuple[str, SqlType | None]], names: list[str]) -> list[tuple[str, SqlType | None]]:
    if not names:
        return list(cols)
    return [(names[i] if i < len(names) else c, t) for i, (c, t) in enumerate(cols)]


def _func_args(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out = []
    for key in node.arg_types:
        v = node.args.get(key)
        if isinstance(v, exp.Expression):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, exp.Expression))
    return out


def _func_display(node: exp.Expression) -> str:
    name = node.name if isinstance(node, exp.Anonymous) else (node.sql_name() if hasattr(node, "sql_name") else node.key)
    n = len(_func_args(node))
    return f"{name.lower()}({', '.join(['unknown'] * n)})"


def _figure_colname(node: exp.Expression) -> str:
    """The column name Postgres gives an unaliased select-list expression (FigureColname)."""
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Dot):
        if isinstance(node.expression, exp.Func):
            return _figure_colname(node.expression)
        return node.expression.name if isinstance(node.expression, exp.Identifier) else "?column?"
    if isinstance(node, exp.Cast):
        inner = _figure_colname(node.this)
        if inner != "?column?":
            return inner
        key = _type_key(node.to)
        try:
            t = pg_type_of_cast(node.to)
        except SqlError:
            return key
        return {"int4": "int4", "int8": "int8", "bool": "bool", "float8": "float8"}.get(t.name, t.name if not t.name.startswith("_") else key)
    if isinstance(node, exp.Paren):
        return _figure_colname(node.this)
    if isinstance(node, (exp.Collate,)):
        return _figure_colname(node.this)
    if isinstance(node, exp.Case):
        return "case"
    if isinstance(node, exp.Exists):
        return "exists"
    if isinstance(node, exp.Array):
        return "array"
    if isinstance(node, exp.Subquery):
        sel = node.this
        if isinstance(sel, exp.Select) and sel.expressions:
            first = sel.expressions[0]
            return first.alias if isinstance(first, exp.Alias) else _figure_colname(first)
        return "?column?"
    if isinstance(node, (exp.Window,)):
        return _figure_colname(node.this)
    if isinstance(node, exp.Filter):
        return _figure_colname(node.this)
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, (exp.CurrentUser,)):
        return "current_user"
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Unary, exp.Connector)):
        name = _TYPED_NAMES.get(type(node))
        if name:
            return name
        sql_names = getattr(type(node), "_sql_names", None)
        if sql_names:
            return sql_names[0].lower()
        return type(node).__name__.lower()
    if isinstance(node, (exp.Var, exp.Identifier)):
        return node.name.lower()
    return "?column?"


# ---- function handlers ------------------------------------------------------------------------------

Handler = Callable[[Rewriter, exp.Expression, list[exp.Expression], Scope], tuple[exp.Expression, SqlType | None]]
_FUNCTIONS: dict[str, Handler] = {}


def _h(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            _FUNCTIONS[n] = fn
        return fn

    return deco


def _const(value: Callable[[Rewriter], Any], t: SqlType) -> Handler:
    def handler(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        for a in args:
            rw.expr(a, scope)  # validate arguments (columns exist, ...)
        return _typed_lit(value(rw), t), t

    return handler


def _macro(name: str, t: SqlType | None, nargs: tuple[int, ...], *, extra: Callable[[Rewriter], list[exp.Expression]] | None = None,
           arg_types: Sequence[SqlType | None] = (), constant: Callable[[Rewriter, list[Any]], Any] | None = None) -> Handler:
    def handler(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        if len(args) not in nargs:
            raise SqlError(UNDEFINED_FUNCTION, f"function {_func_display(node)} does not exist")
        if constant is not None and t is not None and all(_constant_value(a) is not _NOT_CONSTANT for a in args):
            return _typed_lit(constant(rw, [_constant_value(a) for a in args]), t), t
        new = []
        for i, a in enumerate(args):
            n, at = rw.expr(a, scope)
            want = arg_types[i] if i < len(arg_types) else None
            if want is not None:
                rw._infer_param(n, want)
                if isinstance(n, exp.Literal) and n.is_string and want.name in OID_LIKE:
                    n = _typed_lit(rw.resolve_reg(want.name, n.this) if want.name != "oid" else _oid_literal(n.this), want)
                elif isinstance(n, _Param) or (isinstance(n, exp.Literal) and n.is_string):
                    n = _cast(n, want)
            new.append(n)
        if extra is not None:
            new.extend(extra(rw))
        return _fn(name, *new), t

    return handler


def _oid_literal(text: str) -> int:
    """The value of an oid input literal (PG's oidin: 22P02 on anything but an unsigned integer)."""
    s = text.strip()
    if not re.fullmatch(r"\d+", s) or int(s) > 0xFFFFFFFF:
        raise SqlError(INVALID_TEXT_REPRESENTATION, f'invalid input syntax for type oid: "{text}"')
    return int(s)


_NOT_CONSTANT = object()


def _constant_value(e: exp.Expression) -> Any:
    """The value of a numeric or NULL literal (possibly negated / cast), else _NOT_CONSTANT."""
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Literal) and not e.is_string and re.fullmatch(r"-?\d+", e.this):
        return int(e.this)
    if isinstance(e, exp.Neg):
        v = _constant_value(e.this)
        return -v if isinstance(v, int) else _NOT_CONSTANT
    if isinstance(e, (exp.Cast, exp.Paren)):
        return _constant_value(e.this)
    return _NOT_CONSTANT


def _vis(rw: Rewriter) -> list[exp.Expression]:
    return [rw._visible()]


def _sp(rw: Rewriter) -> list[exp.Expression]:
    return [_lit(list(rw.ctx.implicit_path))]


_FUNCTIONS.update({
    "version": _const(lambda rw: rw.ctx.version, TEXT),
    "current_database": _const(lambda rw: rw.ctx.database, NAME),
    "current_catalog": _const(lambda rw: rw.ctx.database, NAME),
    "current_user": _const(lambda rw: rw.ctx.user, NAME),
    "session_user": _const(lambda rw: rw.ctx.user, NAME),
    "current_role": _const(lambda rw: rw.ctx.user, NAME),
    "user": _const(lambda rw: rw.ctx.user, NAME),
    "pg_backend_pid": _const(lambda rw: rw.ctx.pid, INT4),
    "pg_postmaster_start_time": _const(lambda rw: rw.ctx.started_at, SqlType("timestamptz")),
    "pg_conf_load_time": _const(lambda rw: rw.ctx.started_at, SqlType("timestamptz")),
    "pg_is_in_recovery": _const(lambda rw: False, BOOL),
    "pg_my_temp_schema": _const(lambda rw: 0, OID),
    "pg_is_other_temp_schema": _const(lambda rw: False, BOOL),
    "pg_relation_is_publishable": _const(lambda rw: False, BOOL),
    "inet_server_addr": _const(lambda rw: None, SqlType("inet")),
    "inet_server_port": _const(lambda rw: None, INT4),
    "inet_client_addr": _const(lambda rw: None, SqlType("inet")),
    "inet_client_port": _const(lambda rw: None, INT4),
    "pg_relation_size": _const(lambda rw: 0, INT8),
    "pg_total_relation_size": _const(lambda rw: 0, INT8),
    "pg_table_size": _const(lambda rw: 0, INT8),
    "pg_indexes_size": _const(lambda rw: 0, INT8),
    "pg_database_size": _const(lambda rw: 0, INT8),
    "pg_tablespace_location": _const(lambda rw: "", TEXT),
    "pg_encoding_max_length": _const(lambda rw: 4, INT4),
    "pg_get_serial_sequence": _const(lambda rw: None, TEXT),
    "pg_get_partkeydef": _const(lambda rw: None, TEXT),
    "pg_get_partition_constraintdef": _const(lambda rw: None, TEXT),
    "pg_get_ruledef": _const(lambda rw: None, TEXT),
    "pg_get_triggerdef": _const(lambda rw: None, TEXT),
    "pg_get_functiondef": _const(lambda rw: None, TEXT),
    "pg_get_statisticsobjdef_columns": _const(lambda rw: None, TEXT),
    "pg_stat_get_numscans": _const(lambda rw: 0, INT8),
    "pg_stat_get_tuples_returned": _const(lambda rw: 0, INT8),
    "pg_stat_get_live_tuples": _const(lambda rw: 0, INT8),
    "pg_client_encoding": _const(lambda rw: "UTF8", NAME),
    "getdatabaseencoding": _const(lambda rw: "UTF8", NAME),
    "pg_get_function_sqlbody": _const(lambda rw: None, TEXT),
    "pg_advisory_unlock_all": _const(lambda rw: "", SqlType("void")),
    "mz_version": _const(lambda rw: rw.ctx.setting("mz_version"), TEXT),
    "mz_version_num": _const(lambda rw: 100, INT4),
    "txid_current": _const(lambda rw: 1, INT8),
    "pg_current_xact_id": _const(lambda rw: 1, SqlType("xid8")),
    "format_type": _macro("format_type", TEXT, (2,), arg_types=(OID, INT4), constant=lambda rw, a: rw.ctx.lookups.format_type(*a)),
    "pg_get_userbyid": _macro("pg_get_userbyid", NAME, (1,), arg_types=(OID,)),
    "pg_table_is_visible": _macro("pg_table_is_visible", BOOL, (1,), extra=_vis, arg_types=(OID,)),
    "pg_type_is_visible": _macro("pg_type_is_visible", BOOL, (1,), extra=_sp, arg_types=(OID,)),
    "pg_function_is_visible": _macro("pg_function_is_visible", BOOL, (1,), extra=_sp, arg_types=(OID,)),
    "pg_collation_is_visible": _macro("pg_collation_is_visible", BOOL, (1,), extra=_sp, arg_types=(OID,)),
    "pg_opclass_is_visible": _const(lambda rw: True, BOOL),
    "pg_operator_is_visible": _const(lambda rw: True, BOOL),
    "pg_conversion_is_visible": _const(lambda rw: True, BOOL),
    "pg_ts_config_is_visible": _const(lambda rw: True, BOOL),
    "pg_get_expr": _macro("pg_get_expr", TEXT, (2, 3), arg_types=(TEXT, OID, BOOL)),
    "pg_get_indexdef": _macro("pg_get_indexdef", TEXT, (1, 3), arg_types=(OID, INT4, BOOL)),
    "pg_get_constraintdef": _macro("pg_get_constraintdef", TEXT, (1, 2), arg_types=(OID, BOOL)),
    # pg_get_viewdef(text) resolves a view name (PG's pg_get_viewdef_name); an unknown literal
    # resolves like a regclass input, so 'v1' and 'v1'::regclass are the same call.
    "pg_get_viewdef": _macro("pg_get_viewdef", TEXT, (1, 2), arg_types=(SqlType("regclass"), BOOL)),
    "obj_description": _macro("obj_description", TEXT, (1, 2), arg_types=(OID, NAME)),
    "col_description": _macro("col_description", TEXT, (2,), arg_types=(OID, INT4)),
    "shobj_description": _macro("shobj_description", TEXT, (2,), arg_types=(OID, NAME)),
    "pg_get_function_result": _macro("pg_get_function_result", TEXT, (1,), arg_types=(OID,)),
    "pg_get_function_arguments": _macro("pg_get_function_arguments", TEXT, (1,), arg_types=(OID,)),
    "pg_get_function_identity_arguments": _macro("pg_get_function_identity_arguments", TEXT, (1,), arg_types=(OID,)),
    "pg_encoding_to_char": _macro("pg_encoding_to_char", NAME, (1,), arg_types=(INT4,)),
    "pg_char_to_encoding": _macro("pg_char_to_encoding", INT4, (1,), arg_types=(NAME,)),
    "quote_ident": _macro("quote_ident", TEXT, (1,), arg_types=(TEXT,)),
    "quote_literal": _macro("quote_literal", TEXT, (1,), arg_types=(TEXT,)),
    "quote_nullable": _macro("quote_literal", TEXT, (1,), arg_types=(TEXT,)),
    "pg_size_pretty": _macro("size_pretty", TEXT, (1,), arg_types=(INT8,)),
    "cardinality": _macro("cardinality", INT4, (1,)),
    "to_regclass": _macro("regclass_in", SqlType("regclass"), (1,), extra=_vis, arg_types=(TEXT,)),
    "to_regtype": _macro("regtype_in", SqlType("regtype"), (1,), arg_types=(TEXT,)),
    "to_regnamespace": _macro("regnamespace_in", SqlType("regnamespace"), (1,), arg_types=(TEXT,)),
    "to_regproc": _macro("regproc_in", SqlType("regproc"), (1,), arg_types=(TEXT,)),
    "to_regrole": _macro("regrole_in", SqlType("regrole"), (1,), arg_types=(TEXT,)),
})


@_h("has_table_privilege", "has_schema_privilege", "has_database_privilege", "has_column_privilege",
    "has_any_column_privilege", "has_function_privilege", "has_sequence_privilege", "has_type_privilege",
    "has_language_privilege", "has_tablespace_privilege", "has_foreign_data_wrapper_privilege",
    "has_server_privilege", "pg_has_role")
def _privilege(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    for a in args:
        n, _ = rw.expr(a, scope)
        rw._infer_param(n, TEXT)
    return exp.Boolean(this=True), BOOL


@_h("age")
def _age(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope) for a in args]
    if len(new) == 1 and (new[0][1] is None or new[0][1].name in ("xid", "xid8")):
        return _typed_lit(0, INT4), INT4  # transaction ids never age: there is no wraparound
    return exp.Anonymous(this="age", expressions=[n for n, _ in new]), SqlType("interval")


@_h("current_schema")
def _current_schema(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    return rw._current_schema(), NAME


@_h("current_schemas")
def _current_schemas(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    implicit = True
    if args:
        a = args[0]
        if isinstance(a, exp.Boolean):
            implicit = bool(a.this)
    path = rw.ctx.implicit_path if implicit else tuple(s for s in rw.ctx.search_path if rw.ctx.schema_exists(s))
    return _typed_lit(list(path), SqlType("_name")), SqlType("_name")


@_h("current_setting")
def _current_setting(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    if not args:
        raise SqlError(UNDEFINED_FUNCTION, "function current_setting() does not exist")
    if not (isinstance(args[0], exp.Literal) and args[0].is_string):
        # a setting named at run time: look it up among all the session's settings
        arg, _ = rw.expr(args[0], scope)
        rw._infer_param(arg, TEXT)
        case = exp.Case(this=_cast(arg, TEXT), ifs=[exp.If(this=_lit(k), true=_lit(v)) for k, v in rw.ctx.settings().items()])
        return case, TEXT
    name = args[0].this
    missing_ok = len(args) > 1 and isinstance(args[1], exp.Boolean) and bool(args[1].this)
    value = rw.ctx.setting(name)
    if value is None and not missing_ok:
        raise SqlError(UNDEFINED_OBJECT, f'unrecognized configuration parameter "{name}"')
    return _typed_lit(value, TEXT), TEXT


@_h("set_config")
def _set_config(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    if len(args) != 3 or not all(isinstance(a, (exp.Literal, exp.Boolean)) for a in args):
        raise SqlError(FEATURE_NOT_SUPPORTED, "set_config() needs constant arguments")
    name, value = args[0].this, args[1].this
    rw.set_config = (str(name), str(value), bool(args[2].this) if isinstance(args[2], exp.Boolean) else False)
    return _typed_lit(value, TEXT), TEXT


def _array_bound(kind: str) -> Handler:
    def handler(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        if len(args) != 2:
            raise SqlError(UNDEFINED_FUNCTION, f"function {_func_display(node)} does not exist")
        a, t = rw.expr(args[0], scope)
        d, _ = rw.expr(args[1], scope)
        vec = t is not None and t.name in ("int2vector", "oidvector")
        name = {"lower": "vector_lower" if vec else "array_lower", "upper": "vector_upper" if vec else "array_upper",
                "length": "array_length"}[kind]
        return _fn(name, a, d), INT4

    return handler


_FUNCTIONS["array_lower"] = _array_bound("lower")
_FUNCTIONS["array_upper"] = _array_bound("upper")
_FUNCTIONS["array_length"] = _array_bound("length")


@_h("generate_subscripts")
def _generate_subscripts(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(args[0], scope)
    call: exp.Expression = exp.Anonymous(this="generate_subscripts", expressions=[a, exp.Literal.number(1)])
    if t is not None and t.name in ("int2vector", "oidvector"):
        call = exp.Sub(this=call, expression=exp.Literal.number(1))
    return call, INT4


@_h("_pg_expandarray")
def _expandarray(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, _ = rw.expr(args[0], scope)
    return exp.Explode(this=_fn("expandarray", a)), SqlType("record")


@_h("unnest")
def _unnest(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(args[0], scope)
    return exp.Explode(this=a), (t.element if t is not None else None)


@_h("array_to_string")
def _array_to_string(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope)[0] for a in args[:2]]
    fn = exp.Anonymous(this="array_to_string", expressions=[exp.Anonymous(this="list_transform", expressions=[
        new[0], exp.Lambda(this=_cast(exp.column("_x"), TEXT), expressions=[exp.to_identifier("_x")])]), new[1]])
    return fn, TEXT


@_h("string_to_array")
def _string_to_array(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope)[0] for a in args[:2]]
    return exp.Anonymous(this="string_split", expressions=[_cast(new[0], TEXT), _cast(new[1], TEXT)]), SqlType("_text")


def _passthrough(t: SqlType | None, duck_name: str | None = None) -> Handler:
    def handler(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        new = [rw.expr(a, scope) for a in args]
        if isinstance(node, exp.Anonymous):
            node.set("expressions", [n for n, _ in new])
            if duck_name:
                node.set("this", duck_name)
        return node, t if t is not None else (new[0][1] if new else None)

    return handler


# DuckDB builtins (by Postgres name) that are safe and mean the same thing.
_BUILTINS: dict[str, SqlType | None] = {
    "lower": TEXT, "upper": TEXT, "length": INT4, "char_length": INT4, "octet_length": INT4, "btrim": TEXT,
    "ltrim": TEXT, "rtrim": TEXT, "substr": TEXT, "substring": TEXT, "replace": TEXT, "translate": TEXT,
    "split_part": TEXT, "strpos": INT4, "lpad": TEXT, "rpad": TEXT, "left": TEXT, "right": TEXT,
    "concat": TEXT, "concat_ws": TEXT, "md5": TEXT, "regexp_replace": TEXT, "repeat": TEXT, "reverse": TEXT,
    "initcap": TEXT, "chr": TEXT, "ascii": INT4, "abs": None, "round": None, "floor": None, "ceil": None,
    "ceiling": None, "greatest": None, "least": None, "coalesce": None, "nullif": None, "sign": None,
    "mod": None, "power": None, "sqrt": None, "now": SqlType("timestamptz"), "date_trunc": None,
    "date_part": SqlType("float8"), "array_position": INT4, "array_append": None, "array_cat": None,
    "row_number": INT8, "rank": INT8, "dense_rank": INT8, "lag": None, "lead": None, "first_value": None,
    "last_value": None, "nth_value": None, "ntile": INT4, "percent_rank": SqlType("float8"),
    "cume_dist": SqlType("float8"), "count": INT8, "sum": None, "min": None, "max": None, "avg": None,
    "bool_and": BOOL, "bool_or": BOOL, "every": BOOL, "array_agg": None, "string_agg": TEXT,
    "clock_timestamp": SqlType("timestamptz"), "statement_timestamp": SqlType("timestamptz"),
    "transaction_timestamp": SqlType("timestamptz"), "starts_with": BOOL,
    "json_build_object": SqlType("json"), "to_json": SqlType("json"), "json_agg": SqlType("json"),
}
_BUILTIN_NAMES = frozenset(_BUILTINS)
for _n, _t in _BUILTINS.items():
    _FUNCTIONS.setdefault(_n, _passthrough(_t))
_FUNCTIONS["ceiling"] = _passthrough(None, "ceil")
_FUNCTIONS["char_length"] = _passthrough(INT4, "length")
_FUNCTIONS["every"] = _passthrough(BOOL, "bool_and")
_FUNCTIONS["json_build_object"] = _passthrough(SqlType("json"), "json_object")
_FUNCTIONS["json_agg"] = _passthrough(SqlType("json"), "json_group_array")


def _typed(fn: Callable[[Rewriter, exp.Expression, Scope], tuple[exp.Expression, SqlType | None]]) -> Handler:
    def handler(rw: Rewriter, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        return fn(rw, node, scope)

    return handler


def _typed_array_size(rw: Rewriter, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    return _array_bound("length")(rw, node, _func_args(node), scope)


def _typed_keyword(name: str) -> Callable[[Rewriter, exp.Expression, Scope], tuple[exp.Expression, SqlType | None]]:
    def fn(rw: Rewriter, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        return _FUNCTIONS[name](rw, node, _func_args(node), scope)

    return fn


_TYPED: dict[type, Handler] = {
    exp.ArraySize: _typed(_typed_array_size),
    exp.CurrentSchema: _typed(_typed_keyword("current_schema")),
    exp.CurrentUser: _typed(_typed_keyword("current_user")),
    exp.ArrayToString: _typed(_typed_keyword("array_to_string")),
    exp.StringToArray: _typed(_typed_keyword("string_to_array")),
}
for _cls_name, _kw in (("CurrentDatabase", "current_database"), ("CurrentCatalog", "current_catalog"),
                       ("CurrentSchemas", "current_schemas"), ("SessionUser", "session_user"),
                       ("CurrentRole", "current_role"), ("Version", "version"), ("CurrentVersion", "version")):
    _cls = getattr(exp, _cls_name, None)
    if _cls is not None:
        _TYPED[_cls] = _typed(_typed_keyword(_kw))


def _format(rw: Rewriter, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    """Postgres' format(fmt, args...): %s, %I (quote_ident), %L (quote_literal), %%, %n$s."""
    fmt = node.this
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise SqlError(FEATURE_NOT_SUPPORTED, "format() needs a constant format string")
    args = [rw.expr(a, scope)[0] for a in node.expressions]
    parts: list[exp.Expression] = []
    text = fmt.this
    i, nxt, buf = 0, 0, ""
    while i < len(text):
        ch = text[i]
        if ch != "%":
            buf += ch
            i += 1
            continue
        m = re.match(r"%(?:(\d+)\$)?([sIL%])", text[i:])
        if not m:
            raise SqlError("22023", "unrecognized format() type specifier")
        i += m.end()
        if m.group(2) == "%":
            buf += "%"
            continue
        k = int(m.group(1)) - 1 if m.group(1) else nxt
        nxt = k + 1
        if k >= len(args):
            raise SqlError("22023", "too few arguments for format()")
        if buf:
            parts.append(exp.Literal.string(buf))
            buf = ""
        arg = _cast(args[k], TEXT)
        parts.append(arg if m.group(2) == "s" else _fn("quote_ident" if m.group(2) == "I" else "quote_literal", arg))
    if buf or not parts:
        parts.append(exp.Literal.string(buf))
    return exp.Anonymous(this="concat", expressions=parts), TEXT


def _explode(rw: Rewriter, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(node.this, scope)
    node.set("this", a)
    return node, (t.element if t is not None else None)


def _gen_series(rw: Rewriter, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    args = [rw.expr(a, scope)[0] for a in _func_args(node)]
    return exp.Explode(this=exp.Anonymous(this="generate_series", expressions=args)), INT8


_TYPED[exp.Explode] = _typed(_explode)
_TYPED[exp.Format] = _typed(_format)
_TYPED[exp.ExplodingGenerateSeries] = _typed(_gen_series)
_TYPED[exp.GenerateSeries] = _typed(_gen_series)

# sqlglot's typed builtins we let through to DuckDB (type: result type, None = first argument's).
_TYPED_PASSTHROUGH: dict[type, SqlType | None] = {}
for _cls_name, _t in {
    "Count": INT8, "Sum": None, "Min": None, "Max": None, "Avg": SqlType("numeric"), "ArrayAgg": None,
    "GroupConcat": TEXT, "Coalesce": None, "Nullif": None, "Greatest": None, "Least": None, "Lower": TEXT,
    "Upper": TEXT, "Length": INT4, "Substring": TEXT, "Trim": TEXT, "Concat": TEXT, "ConcatWs": TEXT,
    "RegexpReplace": TEXT, "StrPosition": INT4, "Left": TEXT, "Right": TEXT, "Abs": None, "Round": None,
    "Floor": None, "Ceil": None, "CurrentTimestamp": SqlType("timestamptz"), "CurrentDate": SqlType("date"),
    "CurrentTime": SqlType("time"), "RowNumber": INT8, "Rank": INT8, "DenseRank": INT8, "Lag": None,
    "Lead": None, "FirstValue": None, "LastValue": None, "NthValue": None, "LogicalAnd": BOOL,
    "LogicalOr": BOOL, "If": None, "Pad": TEXT, "SplitPart": TEXT, "Replace": TEXT, "Repeat": TEXT,
    "Reverse": TEXT, "Initcap": TEXT, "StartsWith": BOOL, "MD5": TEXT, "Extract": SqlType("numeric"),
    "DateTrunc": None, "TimestampTrunc": None, "ArrayPosition": INT4, "ArrayAppend": None,
    "ArrayConcat": None, "Chr": TEXT, "Unicode": INT4, "Ascii": INT4, "Sign": None, "Mod": None, "Pow": None,
    "Sqrt": None, "Stddev": SqlType("numeric"), "Variance": SqlType("numeric"), "Translate": TEXT,
    "Ntile": INT4, "PercentRank": SqlType("float8"), "CumeDist": SqlType("float8"), "AnyValue": None,
    "ArrayContains": BOOL, "ToChar": TEXT, "Encode": TEXT, "Btrim": TEXT, "Localtimestamp": SqlType("timestamp"),
    "TimeToStr": TEXT,
}.items():
    _cls = getattr(exp, _cls_name, None)
    if _cls is not None:
        _TYPED_PASSTHROUGH[_cls] = _t

_TYPED_NAMES: dict[type, str] = {}
for _cls_name, _name in {"Count": "count", "Sum": "sum", "Min": "min", "Max": "max", "Avg": "avg",
                         "ArrayAgg": "array_agg", "GroupConcat": "string_agg", "Coalesce": "coalesce",
                         "Nullif": "nullif", "Greatest": "greatest", "Least": "least", "Lower": "lower",
                         "Upper": "upper", "Length": "length", "Substring": "substring", "Trim": "btrim",
                         "Concat": "concat", "LogicalAnd": "bool_and", "LogicalOr": "bool_or",
                         "RowNumber": "row_number", "CurrentTimestamp": "now", "ArraySize": "array_length",
                         "CurrentSchema": "current_schema", "CurrentUser": "current_user",
                         "ArrayToString": "array_to_string", "StringToArray": "string_to_array",
                         "Explode": "unnest", "ExplodingGenerateSeries": "generate_series",
                         "GenerateSeries": "generate_series", "StrPosition": "strpos", "Left": "left",
                         "Right": "right", "SplitPart": "split_part", "Replace": "replace",
                         "RegexpReplace": "regexp_replace", "CurrentDatabase": "current_database",
                         "CurrentSchemas": "current_schemas", "Version": "version", "CurrentVersion": "version",
                         "SessionUser": "session_user", "CurrentCatalog": "current_catalog"}.items():
    _cls = getattr(exp, _cls_name, None)
    if _cls is not None:
        _TYPED_NAMES[_cls] = _name


_GENERIC_FUNCTIONS = {"array_lower", "array_upper", "array_length", "generate_subscripts", "unnest",
                      "array_to_string", "string_to_array", "cardinality"}
_CATALOG_FUNCTIONS = frozenset(n for n in _FUNCTIONS if n not in _GENERIC_FUNCTIONS and n not in _BUILTIN_NAMES)
_CATALOG_TYPED = tuple(c for c in _TYPED if c not in (exp.ArraySize, exp.ArrayToString, exp.StringToArray, exp.Explode,
                                                       exp.ExplodingGenerateSeries, exp.GenerateSeries))


def _is_catalog_function(f: exp.Expression) -> bool:
    if isinstance(f, exp.Anonymous):
        return f.name.lower() in _CATALOG_FUNCTIONS
    return isinstance(f, _CATALOG_TYPED)


# ---- the final whitelist check --------------------------------------------------------------------

_DUCK_ALLOWED = {
    "list_contains", "regexp_matches", "generate_series", "generate_subscripts", "left", "array_to_string",
    "list_transform", "string_split", "json_object", "json_group_array", "ceil", "age", "concat",
    *(n for n in _FUNCTIONS if not n.startswith("pg_") and n not in ("version", "current_setting", "set_config")),
}


def _verify(node: exp.Expression) -> None:
    """Defense in depth: the rewritten query only reads mzsys relations and only calls
    whitelisted functions."""
    for n in node.walk():
        if isinstance(n, exp.Table):
            if isinstance(n.this, exp.Func):
                raise SqlError(INSUFFICIENT_PRIVILEGE, "table function not allowed in catalog queries")
            cat = n.args.get("catalog")
            if cat is not None and cat.name != "mzsys":
                raise SqlError(INSUFFICIENT_PRIVILEGE, f"relation {n.sql()} is not allowed in catalog queries")
        elif isinstance(n, exp.Anonymous):
            name = n.name
            if name.lower().startswith(f"{FN}."):
                continue
            if name.lower() not in _DUCK_ALLOWED:
                raise SqlError(UNDEFINED_FUNCTION, f"function {name}() does not exist")
        elif isinstance(n, exp.Func) and not isinstance(n, (exp.Cast, exp.Case, exp.If, exp.Explode, exp.Unnest, exp.Array, exp.Lambda,
                                                              exp.Binary, exp.Unary, exp.Connector, exp.Paren)):
            if type(n) not in _TYPED_PASSTHROUGH and type(n) not in _TYPED and not isinstance(n, (exp.Anonymous,)):
                if type(n).__name__ in ("Collate", "Interval", "Extract", "Window", "Filter", "Any", "All", "Exists"):
                    continue
                raise SqlError(UNDEFINED_FUNCTION, f"function {type(n).__name__.lower()}() does not exist")
