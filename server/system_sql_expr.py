"""Expression rewriting of catalog queries (columns, operators, casts, reg*), as a mixin of Rewriter."""

from __future__ import annotations

import functools
import re
from typing import Any

import sqlglot
from sqlglot import exp

from catalog.system.relations import OID_LIKE
from server.system_sql_ast import (
    BOOL,
    INT4,
    INT8,
    NAME,
    OID,
    SYSTEM_SCHEMAS,
    TEXT,
    Scope,
    _array_literal,
    _cast,
    _coerce,
    _fn,
    _lit,
    _Param,
    _placeholder_index,
    _split_ident,
    _typed_lit,
    pg_type_of_cast,
)
from server.system_sql_context import _system_relation
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    UNDEFINED_TABLE,
    SqlError,
)
from sql.types import ARRAY_ELEMENT, TYPE_ALIASES, TYPE_INFOS, SqlType

UNDEFINED_SCHEMA_ERR = "3F000"
# Postgres' system columns, present on every catalog table.
_SYSTEM_COLUMNS = {"xmin": SqlType("xid"), "xmax": SqlType("xid"), "cmin": SqlType("cid"), "cmax": SqlType("cid"),
                   "ctid": SqlType("tid"), "tableoid": OID}


class ExprMixin:
    """Expression rewriting of `server.system_sql.Rewriter` (its context, scopes and params)."""

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
        if isinstance(right_node, exp.Anonymous) and right_node.name.upper() in ("ALL", "ANY", "SOME") \
                and len(right_node.expressions) == 1:  # sqlglot reads `ALL (<array>)` as a call
            cls = exp.All if right_node.name.upper() == "ALL" else exp.Any
            right_node = cls(this=exp.Paren(this=right_node.expressions[0]))
            node.set("expression", right_node)
        if isinstance(right_node, (exp.Any, exp.All)):
            inner = right_node.this
            while isinstance(inner, exp.Subquery | exp.Paren) and not inner.alias \
                    and isinstance(inner.this, exp.Subquery | exp.Paren | exp.Select | exp.Union):
                inner = inner.this  # `= ANY ((SELECT …))` is still the subquery form, as in PostgreSQL
            if isinstance(inner, exp.Subquery) and not inner.alias:
                inner = inner.this
            if isinstance(inner, (exp.Select, exp.Union)):  # the subquery form, as a Paren
                inner = exp.Paren(this=inner)
                right_node.set("this", inner)
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
            literal = isinstance(core, exp.Literal) and core.is_string
            if literal:  # '{a,b}': an array of the left's type
                at = SqlType("_" + lt.name) if lt is not None and "_" + lt.name in ARRAY_ELEMENT else SqlType("_text")
                core = _coerce(core, at)
            if isinstance(node, exp.EQ) and isinstance(right_node, exp.Any):
                fn = exp.Anonymous(this="list_contains", expressions=[core, _coerce(left, at.element if at is not None else None)])
                return exp.Paren(this=fn), BOOL
            return _quantified(type(node), left, core, isinstance(right_node, exp.Any)), BOOL
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
        if isinstance(n, _Param) and (t is None or t.name == target.name or target.name not in ("name", "_name")):
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
        if target.name in ("name", "_name") and (t is None or t.name != target.name):
            # a name holds at most 63 bytes (NAMEDATALEN - 1): longer text is cut, as PostgreSQL does
            fn = "truncate_name" if target.name == "name" else "truncate_names"
            return _cast(_fn(fn, _cast(n, TEXT if target.name == "name" else SqlType("_text"))), target), target
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


_QUANTIFIED = (
    "CASE WHEN __arr__ IS NULL THEN NULL ELSE (SELECT CASE WHEN count(*) = 0 THEN {empty} WHEN bool_or({decides}) THEN {decided} "
    "WHEN bool_or(_q._c IS NULL) THEN NULL ELSE {empty} END FROM (SELECT __cmp__ AS _c FROM unnest(__arr__) AS _u(_e)) AS _q) END")


@functools.cache
def _quantified_template(any_: bool) -> exp.Expression:
    """_QUANTIFIED for ANY or ALL, parsed once (callers fill in a copy)."""
    text = _QUANTIFIED.format(empty="false" if any_ else "true", decides="_q._c" if any_ else "NOT _q._c",
                              decided="true" if any_ else "false")
    return sqlglot.parse_one(text, read="duckdb")


def _quantified(cmp: type[exp.Expression], left: exp.Expression, arr: exp.Expression, any_: bool) -> exp.Expression:
    """x op ANY (array) / x op ALL (array) with PostgreSQL's three-valued result: ANY is true
    if some comparison is, else NULL if some is NULL, else false (an empty array: false); ALL
    is false if some comparison is, else NULL if some is NULL, else true (empty: true); a
    NULL array gives NULL."""
    element = exp.column("_e", table="_u")

    def put(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name == "__arr__":
            return arr.copy()
        if isinstance(n, exp.Column) and n.name == "__cmp__":
            return exp.Paren(this=cmp(this=left.copy(), expression=element.copy()))
        return n

    return exp.Paren(this=_quantified_template(any_).transform(put))
