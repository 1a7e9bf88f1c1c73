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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from catalog.system.relations import DUCK_SCHEMAS, OID_LIKE, SysRelation
from server.system_sql_ast import (
    BOOL,
    INT4,
    INT8,
    NAME,
    OID,
    SYSTEM_SCHEMAS,
    TEXT,
    Scope,
    Source,
    _array_literal,
    _cast,
    _coerce,
    _figure_colname,
    _fn,
    _func_args,
    _func_display,
    _lit,
    _Param,
    _placeholder_index,
    _rename,
    _split_ident,
    _typed_lit,
    pg_type_of_cast,
)
from server.system_sql_context import Context, NotCatalog, _system_relation, _table_parts
from server.system_sql_functions import _FUNCTIONS, _TYPED, _TYPED_PASSTHROUGH, _verify
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    UNDEFINED_TABLE,
    SqlError,
)
from sql.types import ARRAY_ELEMENT, TYPE_ALIASES, TYPE_INFOS, SqlType


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


class Rewriter:
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
            if t.element is not None or t.name.startswith("_"):  # ARRAY[ARRAY[..], ..]: as the planner
                raise SqlError(FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
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
