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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from catalog.system.relations import DUCK_SCHEMAS, SysRelation
from server.system_sql_ast import (
    BOOL,
    INT4,
    INT8,
    SYSTEM_SCHEMAS,
    TEXT,
    Scope,
    Source,
    _cast,
    _figure_colname,
    _fn,
    _func_args,
    _func_display,
    _Param,
    _rename,
    _typed_lit,
)
from server.system_sql_context import Context, NotCatalog, _system_relation, _table_parts
from server.system_sql_expr import ExprMixin
from server.system_sql_functions import _FUNCTIONS, _TYPED, _TYPED_PASSTHROUGH, _verify
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_FUNCTION,
    UNDEFINED_TABLE,
    SqlError,
)
from sql.types import SqlType


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


class Rewriter(ExprMixin):
    def __init__(self, ctx: Context, declared: Sequence[SqlType | None]) -> None:
        self.ctx: Context = ctx
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
            if _table_function_name(node.this) == "pg_show_all_settings" and not _func_args(node.this):
                # pg_catalog.pg_settings = SELECT * FROM pg_show_all_settings() (PostgreSQL's view)
                node = exp.Table(this=exp.to_identifier("pg_settings"), db=exp.to_identifier("pg_catalog"),
                                 alias=alias_node)
                return self._source(node, scope)
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
        name = _table_function_name(f)
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


_VOLATILE = {"now", "clock_timestamp", "statement_timestamp", "transaction_timestamp", "random", "timeofday",
             "txid_current", "pg_current_xact_id", "age"}
_VOLATILE_TYPED = tuple(getattr(exp, n) for n in ("CurrentTimestamp", "CurrentDate", "CurrentTime", "Localtimestamp",
                                                   "Rand", "Random") if hasattr(exp, n))


def _table_function_name(f: exp.Func) -> str:
    return (f.name if isinstance(f, exp.Anonymous) else f.key).lower()
