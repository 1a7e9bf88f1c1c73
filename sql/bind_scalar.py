"""Scalar expressions: columns, operators, CASE, function calls, arrays, literals and casts (subqueries: sql.bind_subqueries)."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql import datetime_typmods, datetime_units, func, func_names, regex, srf
from sql.bind_aggregates import _is_agg
from sql.bind_datediff import bind_datediff
from sql.bind_jsonb import (
    _JSONB_NODES,
    JSONB_FUNCTIONS,
    jsonb_build,
    jsonb_function,
    jsonb_operator,
    jsonb_subscript,
    jsonb_variadic,
    record_to_jsonb,
    to_jsonb,
)
from sql.bind_make_timestamptz import make_timestamptz_at
from sql.bind_names import sql_type_of
from sql.bind_operators import _at_time_zone, _collate, _like, _regex_match, _similar_to
from sql.bind_rows import is_row, row_comparison, row_fields, row_not_distinct
from sql.bind_subqueries import (
    array_subquery,
    operand_fields,
    quantified_subquery,
    row_subquery,
    scalar_subquery,
    semijoin,
    subquery,
)
from sql.errors import (
    DATATYPE_MISMATCH,
    GROUPING_ERROR,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_TABLE,
    SqlError,
    unsupported,
)
from sql.func_names import pg_function_name
from sql.func_similar import similar_substring_regex
from sql.hir import (
    Exists,
    HirScalar,
    OuterColumn,
    Param,
)
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    record_get,
)
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn, whole_row  # noqa: F401 (re-exported)
from sql.to_timestamp import bind_to_timestamp
from sql.types import (
    BOOL,
    INT4,
    INT8,
    JSONB,
    NUMERIC,
    TEXT,
    TYPE_ALIASES,
    UNKNOWN,
    SqlType,
    record_type,
)

if TYPE_CHECKING:
    from sql.bind import Binder


_BINARY: dict[type[exp.Expression], str] = {
    exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div", exp.Mod: "mod",
    exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge",
    exp.DPipe: "concat", exp.Like: "like", exp.ILike: "ilike", exp.Pow: "pow",
    exp.ArrayContainsAll: "array_contains", exp.ArrayContainedBy: "array_contained", exp.ArrayOverlaps: "array_overlap",
}
# operators the parser models as nodes of their own, with no binding here
_UNSUPPORTED_OPERATORS: dict[type[exp.Expression], str] = {
    exp.MatchAgainst: "@@", exp.JSONBPathExists: "@?", exp.Distance: "<->", exp.Adjacent: "-|-",
}
# functions that stay variadic calls at any arity: a binary call named concat is the operator
# || (NULL-strict, while concat(a, b) skips NULLs)
_VARIADIC_ONLY = frozenset({"concat"})

_CMP_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _column(binder: Binder, e: exp.Column, scope: Scope) -> HirScalar:
    """A column of the current scope, else of the nearest enclosing scope that has it."""
    h = _column_ref(binder, e, scope)
    start = e.this.meta.get("start") if isinstance(e.this, exp.Identifier) else None
    if start is not None and start in binder.unary_plus and not (h.typ.is_numeric or h.typ.name in ("interval", "unknown")):
        raise func.op_error("+", h.typ)
    return h


def _column_ref(binder: Binder, e: exp.Column, scope: Scope) -> HirScalar:
    table = e.table or None
    if table is None and isinstance(e.this, exp.Identifier) and not e.this.quoted and e.name.lower() == "current_role":
        # a reserved word in Postgres, never a column (sqlglot reads it as one): current_user
        session_value = getattr(binder.catalog, "session_value", None)
        if session_value is None:
            raise unsupported("current_role")
        return Literal(session_value("current_role"), SqlType("name"))
    try:
        i = scope.lookup(e.name, table)
        return Column(i, scope.columns[i].typ)
    except SqlError as err:
        if err.sqlstate not in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
            raise
        for level, outer in enumerate(reversed(binder.outer), start=1):
            try:
                i = outer.lookup(e.name, table)
            except SqlError as err2:
                if err2.sqlstate in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
                    continue
                raise
            return OuterColumn(level, i, outer.columns[i].typ)
        if table is None and (row := whole_row_ref(binder, e.name, scope)) is not None:
            return row
        raise


def whole_row_ref(binder: Binder, name: str, scope: Scope) -> HirScalar | None:
    """A FROM item's name used as a value (`t`, `t.*` in an expression) is its row: the
    record row(t.c1, .., t.cn), from the innermost query level that has an item so called;
    the item of a function returning a base type is that value itself (its one column).
    Postgres tries column names of every level first (the caller has). None if no level
    has such an item."""
    for level, sc in enumerate([scope, *reversed(binder.outer)]):
        positions = whole_row(sc, name)
        if positions is None:
            continue
        if len(positions) == 1 and sc.columns[positions[0]].scalar_item:
            i = positions[0]
            return Column(i, sc.columns[i].typ) if level == 0 else OuterColumn(level, i, sc.columns[i].typ)
        if any(sc.columns[i].outer_nullable for i in positions):
            raise unsupported("a whole-row reference to the nullable side of an outer join")
        fields = tuple(Column(i, sc.columns[i].typ) if level == 0 else OuterColumn(level, i, sc.columns[i].typ)
                       for i in positions)
        return CallVariadic("row", fields, record_type(tuple(f.typ for f in fields)))
    return None


# type names that are SQL keywords: never function names (`numeric(7)` is a syntax error)
_TYPE_KEYWORDS = frozenset({"numeric", "varchar", "time", "timestamp", "interval"})


def scalar_expr(binder: Binder, e: exp.Expression, scope: Scope) -> HirScalar:
    if isinstance(e, exp.Paren):
        return binder.scalar(e.this, scope)
    if isinstance(e, exp.Column):
        if isinstance(e.this, exp.Star):
            if e.table and (row := whole_row_ref(binder, e.table, scope)) is not None:
                return row
            if e.table:
                raise SqlError(UNDEFINED_TABLE, f'missing FROM-clause entry for table "{e.table}"')
            raise unsupported("* in this position")
        return _column(binder, e, scope)
    if isinstance(e, exp.Tuple):
        # (a, b, ..) outside a row comparison: the row constructor ROW(a, b, ..)
        return _function(binder, exp.Anonymous(this="row", expressions=list(e.expressions)), scope)
    if isinstance(e, exp.Literal):
        return _literal(e)
    if isinstance(e, exp.RawString):  # $tag$...$tag$: a string constant taken as written
        return Literal(e.this, UNKNOWN)
    if isinstance(e, exp.Null):
        return Literal(None, UNKNOWN)
    if isinstance(e, exp.Boolean):
        return Literal(bool(e.this), BOOL)
    if isinstance(e, exp.Parameter) or isinstance(e, exp.Placeholder):
        n = int(e.this.this if isinstance(e.this, exp.Literal) else e.name)
        return Param(n, binder.params.get(n, UNKNOWN))
    if type(e) in _BINARY and isinstance(e.expression, exp.Anonymous) and e.expression.name.upper() == "ALL" \
            and len(e.expression.expressions) == 1:
        return _array_quantified(binder, _BINARY[type(e)], binder.scalar(e.this, scope), e.expression.expressions[0], scope, "all")
    if type(e) in _BINARY and isinstance(e.expression, (exp.Any, exp.All)):
        op = _BINARY[type(e)]
        q = e.expression.this
        quant = "any" if isinstance(e.expression, exp.Any) else "all"
        if isinstance(q, exp.Paren) and isinstance(q.this, (exp.Subquery, exp.Select)):
            q = q.this
        if not isinstance(q, (exp.Subquery, exp.Select)):
            return _array_quantified(binder, op, binder.scalar(e.this, scope), q, scope, quant)
        return quantified_subquery(binder, op, operand_fields(binder, e.this, scope), q, scope, quant)
    if type(e) in _BINARY and is_row(e.this) and isinstance(e.expression, exp.Subquery):
        return row_subquery(binder, _BINARY[type(e)], row_fields(binder, e.this, scope), e.expression, scope)
    if type(e) in _BINARY and is_row(e.this) and is_row(e.expression):
        # two row constructors compare field by field (other records: record_comparison)
        return row_comparison(binder, _BINARY[type(e)], e.this, e.expression, scope)
    if isinstance(e, (exp.Like, exp.ILike)) or isinstance(e, exp.Escape) and isinstance(e.this, (exp.Like, exp.ILike)):
        return _like(binder, e, scope)
    if type(e) in _BINARY:
        op = _BINARY[type(e)]
        a = binder.scalar(e.this, scope)
        b = binder.scalar(e.expression, scope)
        return binder._binary(op, a, b)
    if isinstance(e, exp.And) or isinstance(e, exp.Or):
        f = "and" if isinstance(e, exp.And) else "or"
        args = tuple(binder.coerce_bool(binder.scalar(x, scope), f.upper()) for x in _flatten(e, type(e)))
        return CallVariadic(f, args, BOOL)
    if isinstance(e, exp.Not):
        x = binder.scalar(e.this, scope)
        x = binder.coerce_bool(x, "NOT")
        return CallUnary("not", x, BOOL)
    if isinstance(e, exp.Neg):
        x = binder.scalar(e.this, scope)
        if isinstance(x, Literal) and x.value is not None and x.typ.is_numeric:
            folded = _negate_literal(x)
            if folded is not None:
                return folded
        if x.typ.name == "unknown":
            x = binder.coerce(x, NUMERIC)
        return CallUnary("neg", x, func.unary_op("neg", x.typ))
    if isinstance(e, exp.Is):
        x = binder.scalar(e.this, scope)
        rhs = e.expression
        if isinstance(rhs, exp.Null):
            if x.typ.name == "record" and (x.typ.fields or x == CallVariadic("row", (), x.typ)):
                return _record_is_null(x, bool(e.args.get("negate")))
            r: HirScalar = CallUnary("is_null", x, BOOL)
        elif isinstance(rhs, exp.Boolean):
            x = binder.coerce_bool(x, "IS")
            r = CallUnary("is_true" if rhs.this else "is_false", x, BOOL)
        else:
            raise unsupported(f"IS {rhs.sql()}")
        return CallUnary("not", r, BOOL) if e.args.get("negate") else r
    if isinstance(e, (exp.NullSafeEQ, exp.NullSafeNEQ)):
        return _not_distinct(binder, e, scope)
    if isinstance(e, exp.Between):
        x = binder.scalar(e.this, scope)
        lo = binder.scalar(e.args["low"], scope)
        hi = binder.scalar(e.args["high"], scope)
        res: HirScalar = CallVariadic("and", (binder._binary("ge", x, lo), binder._binary("le", x, hi)), BOOL)
        return CallUnary("not", res, BOOL) if e.args.get("negate") else res
    if isinstance(e, exp.In):
        if not e.expressions and e.args.get("query") is None and e.args.get("unnest") is None:
            raise SqlError(SYNTAX_ERROR, 'syntax error at or near ")"')
        if e.args.get("unnest") is not None:
            raise unsupported("IN (UNNEST ...)")
        query = e.args.get("query")
        if query is None and len(e.expressions) == 1 and isinstance(e.expressions[0], exp.Values):
            query = e.expressions[0]  # x IN (VALUES ..) is x IN (a subquery)
        if query is not None:
            xs = operand_fields(binder, e.this, scope)
            if binder._semijoin_ok and not e.args.get("negate"):
                return semijoin(binder, xs, query, scope)
            res = quantified_subquery(binder, "eq", xs, query, scope, "any")
            return CallUnary("not", res, BOOL) if e.args.get("negate") else res
        if is_row(e.this):
            # (a, b) IN ((1, 2), ..) = (a, b) = (1, 2) OR ..
            rows = tuple(row_comparison(binder, "eq", e.this, v, scope) for v in e.expressions)
            res = rows[0] if len(rows) == 1 else CallVariadic("or", rows, BOOL)
            return CallUnary("not", res, BOOL) if e.args.get("negate") else res
        x = binder.scalar(e.this, scope)
        elems = [binder.scalar(v, scope) for v in e.expressions]
        t = func.unify([x.typ] + [v.typ for v in elems], "IN")
        xc = binder.coerce(x, t)
        ors = tuple(binder._binary("eq", xc, binder.coerce(v, t)) for v in elems)
        res = ors[0] if len(ors) == 1 else CallVariadic("or", ors, BOOL)
        return CallUnary("not", res, BOOL) if e.args.get("negate") else res
    if isinstance(e, exp.SimilarTo) or isinstance(e, exp.Escape) and isinstance(e.this, exp.SimilarTo):
        return _similar_to(binder, e, scope)
    if isinstance(e, exp.Collate):
        return _collate(binder, e, scope)
    if isinstance(e, exp.AtTimeZone):
        return _at_time_zone(binder, e.this, e.args["zone"], scope)
    if isinstance(e, (exp.RegexpLike, exp.RegexpILike)):
        return _regex_match(binder, e, scope)
    if isinstance(e, exp.StartsWith):  # a ^@ b = starts_with(a, b)
        return _function(binder, exp.Anonymous(this="starts_with", expressions=[e.this, e.expression]), scope)
    if isinstance(e, exp.Case):
        return _case(binder, e, scope)
    if isinstance(e, exp.If):
        c = binder.coerce_bool(binder.scalar(e.this, scope), "CASE")
        a = binder.scalar(e.args["true"], scope)
        b = binder.scalar(e.args["false"], scope) if e.args.get("false") is not None else Literal(None, UNKNOWN)
        t = func.unify([a.typ, b.typ], "CASE")
        return If(c, binder.coerce(a, t), binder.coerce(b, t), t)
    if isinstance(e, exp.Coalesce):
        operands = [binder.scalar(x, scope) for x in [e.this, *e.expressions]]
        t = func.unify([a.typ for a in operands], "COALESCE")
        return CallVariadic("coalesce", tuple(binder.coerce(a, t) for a in operands), t)
    if isinstance(e, exp.Nullif):
        a = binder.scalar(e.this, scope)
        b = binder.scalar(e.expression, scope)
        t = func.unify([a.typ, b.typ], "NULLIF")
        ac = binder.coerce(a, t)
        return If(binder._binary("eq", ac, binder.coerce(b, t)), Literal(None, t), ac, t)
    if isinstance(e, (exp.Cast, exp.TryCast)):
        t = sql_type_of(e.args["to"])
        if isinstance(e.this, exp.Array) and not e.this.expressions:
            if not func.is_array(t):
                raise SqlError("42846", f"cannot cast type {UNKNOWN.pg_format()}[] to {t.pg_format()}")
            return Literal([], t)
        x = binder.scalar(e.this, scope)
        return binder.coerce(x, t, explicit=True)
    if isinstance(e, exp.Array):
        return _array(binder, e, scope)
    if isinstance(e, exp.Bracket):
        return _subscript(binder, e, scope)
    if isinstance(e, exp.Interval):
        text = e.this.this if isinstance(e.this, exp.Literal) else None
        if text is None:
            raise unsupported("non-literal INTERVAL")
        typ = SqlType("interval", datetime_typmods.qualifier_typmod(e.args.get("unit")))
        return binder.coerce(Literal(text, UNKNOWN), typ, explicit=True)
    if isinstance(e, exp.Exists):
        bq = subquery(binder, e.this, scope)
        return Exists(binder._finish_nested(bq), BOOL)
    if isinstance(e, exp.Subquery) or isinstance(e, exp.Select):
        return scalar_subquery(binder, e, scope)
    if type(e) in _JSONB_NODES:
        return jsonb_operator(binder, e, scope)
    if _is_agg(e):
        where = "WHERE" if binder._agg is None else "this context"
        raise SqlError(GROUPING_ERROR, f"aggregate functions are not allowed in {where}")
    if type(e) in _UNSUPPORTED_OPERATORS:
        # text search, jsonpath and geometric operators: named as written, never by the
        # parser's node name (`matchagainst`)
        left, right = (e.expressions[0], e.this) if isinstance(e, exp.MatchAgainst) else (e.this, e.expression)
        a, b = binder.scalar(left, scope), binder.scalar(right, scope)
        raise SqlError(UNDEFINED_FUNCTION,
                       f"operator does not exist: {a.typ.pg_format()} {_UNSUPPORTED_OPERATORS[type(e)]} {b.typ.pg_format()}",
                       hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
    if isinstance(e, exp.ParseJSON) and e.args.get("is_literal"):
        # json 'text': a typed literal of json, which is jsonb here (no text-preserving json)
        return binder.coerce(binder.scalar(e.this, scope), JSONB, explicit=True)
    if isinstance(e, exp.Func):
        return _function(binder, e, scope)
    if isinstance(e, exp.IntDiv):
        a, b = binder.scalar(e.this, scope), binder.scalar(e.expression, scope)
        arg_types, rtype = func.function_type("intdiv", [a.typ, b.typ])
        return CallBinary("intdiv", binder.coerce(a, arg_types[0]), binder.coerce(b, arg_types[1]), rtype)
    if isinstance(e, (exp.Unnest, exp.Explode)):
        raise unsupported("set-returning functions in the select list (use unnest in FROM)")
    if isinstance(e, exp.HexString):
        return Literal(bytes.fromhex(e.this), SqlType("bytea"))
    if isinstance(e, exp.WithinGroup):
        raise unsupported(f"ordered-set aggregate {pg_function_name(e.this)}(...) WITHIN GROUP")
    raise unsupported(f"expression {e.key.upper()}")


def _array(binder: Binder, e: exp.Array, scope: Scope) -> HirScalar:
    """ARRAY[x, ...]: the elements' common type; all-literal arrays fold to a literal."""
    if not e.args.get("value_constructor") and len(e.expressions) == 1 \
            and isinstance(e.expressions[0], (exp.Select, exp.SetOperation)):
        return array_subquery(binder, e.expressions[0], scope)
    elems = [binder.scalar(x, scope) for x in e.expressions]
    if not elems:
        raise SqlError("42P18", "cannot determine type of empty array",
                       hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].")
    et = func.unify([x.typ for x in elems], "ARRAY")
    t = func.array_of(et)
    coerced = tuple(binder.coerce(x, et) for x in elems)
    if all(isinstance(x, Literal) for x in coerced):
        return Literal([cast(Literal, x).value for x in coerced], t)
    return CallVariadic("array_create", coerced, t)


def _subscript(binder: Binder, e: exp.Bracket, scope: Scope) -> HirScalar:
    """a[i] (1-based; NULL out of range). sqlglot stores literal subscripts 0-based."""
    arr = binder.scalar(e.this, scope)
    if arr.typ.name == "jsonb":
        return _jsonb_subscript(binder, arr, e, scope)
    if not func.is_array(arr.typ):
        raise SqlError(DATATYPE_MISMATCH, f"cannot subscript type {arr.typ.pg_format()} because it does not support subscripting")
    if len(e.expressions) != 1 or isinstance(e.expressions[0], exp.Slice):
        raise unsupported("array slices and multi-dimensional subscripts")
    ix = e.expressions[0]
    if isinstance(ix, exp.Literal) and not ix.is_string:
        i: HirScalar = Literal(int(ix.this) + 1, INT4)
    else:
        i = binder.scalar(ix, scope)
    if not (i.typ.name in ("int2", "int4", "int8", "unknown") or i.typ.is_string):
        raise SqlError(DATATYPE_MISMATCH, f"array subscript must have type integer, not {i.typ.pg_format()}")
    elem = arr.typ.element
    assert elem is not None
    return CallBinary("array_index", arr, binder.coerce(i, INT4, explicit=True), elem)


def _jsonb_subscript(binder: Binder, j: HirScalar, e: exp.Bracket, scope: Scope) -> HirScalar:
    """j[s]. sqlglot shifts an integer literal subscript to 0-based (j[0] as j[-1]) unless
    it typed the subscripted expression as something other than an array (a jsonb cast)."""
    if len(e.expressions) != 1 or isinstance(e.expressions[0], exp.Slice):
        raise SqlError(DATATYPE_MISMATCH, "jsonb subscript does not support slices")
    ix = e.expressions[0]
    neg = isinstance(ix, exp.Neg) and isinstance(ix.this, exp.Literal) and not ix.this.is_string
    lit = ix.this if neg else ix
    seen = e.this.type.this if e.this.type is not None else exp.DataType.Type.UNKNOWN
    shift = 1 if seen in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.ARRAY) else 0
    if isinstance(lit, exp.Literal) and not lit.is_string and str(lit.this).lstrip("-").isdigit():
        sub: HirScalar = Literal((-int(str(lit.this)) if neg else int(str(lit.this))) + shift, INT4)
    else:
        sub = binder.scalar(ix, scope)
    return jsonb_subscript(binder, j, sub)


def _array_quantified(binder: Binder, op: str, lhs: HirScalar, arr_e: exp.Expression, scope: Scope, quantifier: str) -> HirScalar:
    """x op ANY(array) / x op ALL(array), with SQL's three-valued logic over the elements."""
    arr = binder.scalar(arr_e, scope)
    if arr.typ.name == "unknown":
        base = lhs.typ if lhs.typ.name != "unknown" else TEXT
        arr = binder.coerce(arr, func.array_of(base))
    if not func.is_array(arr.typ):
        raise SqlError(DATATYPE_MISMATCH, f"op {quantifier.upper()}/ALL (array) requires array on right side")
    elem = arr.typ.element
    assert elem is not None
    ta, tb, _ = func.binary_op(op, lhs.typ, elem)
    return CallBinary(f"{op}_{quantifier}", binder.coerce(lhs, ta), binder.coerce(arr, func.array_of(tb)), BOOL)


def _case(binder: Binder, e: exp.Case, scope: Scope) -> HirScalar:
    operand = binder.scalar(e.this, scope) if e.this is not None else None
    conds: list[HirScalar] = []
    results: list[HirScalar] = []
    for w in e.args.get("ifs") or []:
        if operand is not None:
            conds.append(binder._binary("eq", operand, binder.scalar(w.this, scope)))
        else:
            conds.append(binder.coerce_bool(binder.scalar(w.this, scope), "CASE"))
        results.append(binder.scalar(w.args["true"], scope))
    default = binder.scalar(e.args["default"], scope) if e.args.get("default") is not None else Literal(None, UNKNOWN)
    t = func.unify([r.typ for r in results] + [default.typ], "CASE")
    out = binder.coerce(default, t)
    for c, r in reversed(list(zip(conds, results, strict=True))):
        out = If(c, binder.coerce(r, t), out, t)
    return out


def _overlay(s: exp.Expression, p: exp.Expression, start: exp.Expression, n: exp.Expression | None = None) -> exp.Expression:
    """overlay(s PLACING p FROM start [FOR n]) = substr(s, 1, start - 1) || p || substr(s, start + n),
    n = length(p) by default (PostgreSQL's textoverlay / byteaoverlay; every part NULL-strict)."""
    count = n if n is not None else exp.Anonymous(this="length", expressions=[p.copy()])
    head = exp.Anonymous(this="substr", expressions=[s.copy(), exp.Literal.number(1),
                                                     exp.Sub(this=start.copy(), expression=exp.Literal.number(1))])
    tail = exp.Anonymous(this="substr", expressions=[s.copy(), exp.Add(this=start.copy(), expression=count.copy())])
    return exp.DPipe(this=exp.DPipe(this=head, expression=p.copy()), expression=tail)


_TEXTUAL = frozenset({"text", "varchar", "bpchar", "unknown"})


def _substring_regex(source: exp.Expression, pattern: HirScalar) -> exp.Expression:
    """substring(s FROM p) with a text p (PostgreSQL's textregexsubstr; an unknown literal is
    text, so substring('abc' FROM '2') is a regex too) = regexp_substr(s, p, 1, 1, '', k), k = 1
    when p has a parenthesized subexpression (its match, NULL when it took no part), else 0
    (the whole match); NULL without a match."""
    if not isinstance(pattern, Literal):
        raise unsupported("substring(.. FROM pattern) with a pattern that is not a literal")
    if pattern.value is None:
        return exp.Null()
    k = 1 if regex.body(str(pattern.value)).groups else 0
    return exp.Anonymous(this="regexp_substr", expressions=[
        source.copy(), exp.Literal.string(str(pattern.value)), exp.Literal.number(1), exp.Literal.number(1),
        exp.Literal.string(""), exp.Literal.number(k)])


def _substring_similar(source: HirScalar, pattern: HirScalar, escape: HirScalar) -> HirScalar:
    """substring(s SIMILAR p ESCAPE e) = substring(s FROM p FOR e): group 1 of the full match of
    sql.func_similar.similar_substring_regex(p, e), NULL without a match (p, e literals)."""
    if not (isinstance(pattern, Literal) and isinstance(escape, Literal)):
        raise unsupported("SUBSTRING(.. SIMILAR ..) with a pattern or escape that is not a literal")
    if pattern.value is None or escape.value is None:
        return Literal(None, TEXT)
    return CallBinary("similar_substring", source, Literal(similar_substring_regex(pattern.value, escape.value), TEXT), TEXT)


def _function(binder: Binder, e: exp.Func, scope: Scope) -> HirScalar:
    written = pg_function_name(e)
    name = func_names.canonical(written)
    if isinstance(e, exp.Anonymous):
        raw_args = list(e.expressions)
    elif isinstance(e, exp.ArrayPrepend):
        raw_args = [e.expression, e.this]  # sqlglot keeps the array first
    elif isinstance(e, exp.Extract):
        raw_args = [_unit_literal(e.this), e.expression]
    elif isinstance(e, exp.TimestampTrunc):
        unit = e.args.get("unit")
        if e.args.get("zone") is not None or unit is None:
            raise unsupported("date_trunc with a time zone")
        raw_args = [_unit_literal(unit), e.this]
    elif isinstance(e, exp.Trim):
        if e.args.get("position") or e.args.get("collation"):
            pos = (e.args.get("position") or "BOTH").upper()
            name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(pos, "btrim")
        raw_args = [e.this] + ([e.expression] if e.expression is not None else [])
    elif isinstance(e, exp.Pad):  # sqlglot parses lpad/rpad as one Pad node
        name = "lpad" if e.args.get("is_left") else "rpad"
        raw_args = [e.this, e.expression] + ([e.args["fill_pattern"]] if e.args.get("fill_pattern") is not None else [])
    else:
        raw_args = []
        for k in type(e).arg_types:
            v = e.args.get(k)
            if v is None or isinstance(v, bool):
                continue
            if isinstance(v, list):
                raw_args.extend(v)
            elif isinstance(v, exp.Expression):
                raw_args.append(v)
    if name == "timezone" and len(raw_args) == 2:
        return _at_time_zone(binder, raw_args[1], raw_args[0], scope)
    if name == "overlay" and len(raw_args) in (3, 4):
        return binder.scalar(_overlay(*raw_args), scope)
    if name in func_names.SESSION_FUNCTIONS and not raw_args:
        session_value = getattr(binder.catalog, "session_value", None)
        if session_value is None:
            raise unsupported(f"{written}()")
        return Literal(session_value(name), SqlType("text" if name in func_names.TEXT_SESSION_FUNCTIONS else "name"))
    if name == "datediff":  # Materialize's; bound as Postgres functions (sql/bind_datediff.py)
        return bind_datediff(binder, raw_args, scope)
    if name in ("currenttimestamp", "current_timestamp", "now", "transaction_timestamp", "statement_timestamp"):
        return CallVariadic("now", (), SqlType("timestamptz"))
    if name in ("currentdate", "current_date"):
        return CallUnary("cast", CallVariadic("now", (), SqlType("timestamptz")), SqlType("date"))
    if name in ("current_time", "currenttime", "localtimestamp", "localtime", "clock_timestamp"):
        raise unsupported(f"{name}()")
    if isinstance(e, exp.Anonymous) and srf.is_srf_call(e):
        raise srf.not_allowed(written)
    if name in _KNOWN_UNSUPPORTED_FUNCTIONS:
        raise unsupported(f"function {name}")
    if raw_args and isinstance(raw_args[-1], exp.Variadic):
        fixed = [binder.scalar(a, scope) for a in raw_args[:-1]]
        return jsonb_variadic(binder, name, fixed, binder.scalar(raw_args[-1].this, scope))
    args = [binder.scalar(a, scope) for a in raw_args]
    if written == "substring" and len(args) == 2 and args[0].typ.name in _TEXTUAL and args[1].typ.name in _TEXTUAL:
        return binder.scalar(_substring_regex(raw_args[0], args[1]), scope)
    if written == "substring" and len(args) == 3 and all(a.typ.name in _TEXTUAL for a in args):
        return _substring_similar(binder.coerce(args[0], TEXT), args[1], args[2])
    if name == "make_timestamptz" and len(args) == 7:
        return make_timestamptz_at(binder, args)
    if name == "pg_typeof" and len(args) == 1:
        # pg_typeof(x) = the name of x's type, without its modifier (a regtype, sent as text)
        return Literal(SqlType(args[0].typ.name).pg_format(), TEXT)
    if name in ("jsonb_build_object", "jsonb_build_array"):
        return jsonb_build(binder, name, args)
    if name in ("to_jsonb", "row_to_json") and args and args[0].typ.name == "record":
        return record_to_jsonb(binder, name, raw_args[0], args, scope)
    if name == "to_jsonb" and len(args) == 1:
        return to_jsonb(binder, args[0])
    if name in JSONB_FUNCTIONS:
        return jsonb_function(binder, name, args)
    if name == "row" and isinstance(e, exp.Anonymous):
        # ROW(a, b, ...): an anonymous record (unknown literals are text, as in Postgres)
        fields = tuple(binder.coerce(a, TEXT) if a.typ.name == "unknown" else a for a in args)
        binder.empty_row = binder.empty_row or not fields
        return CallVariadic("row", fields, record_type(tuple(f.typ for f in fields)))
    if written == "log" and len(args) == 2:
        name = "log"  # log(b, x)
    if name == "age" and len(args) == 1:
        # age(x) = age(today's midnight, x)
        today: HirScalar = CallUnary("cast", CallVariadic("now", (), SqlType("timestamptz")), SqlType("date"))
        args.insert(0, CallUnary("cast", today, SqlType("timestamptz" if args[0].typ.name == "timestamptz" else "timestamp")))
    try:
        arg_types, rtype = func_names.as_written(written, func.function_type, name, [a.typ for a in args])
    except SqlError as err:
        if err.sqlstate != UNDEFINED_FUNCTION or len(args) != 1 or not isinstance(e, exp.Anonymous) \
                or TYPE_ALIASES.get(written) != written:
            raise
        if written in _TYPE_KEYWORDS:
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{written}"') from None
        # typname(x) = x::typname: Postgres reads a one-argument call named after a type
        # as that type's cast (its cast functions float8(int8), int4(float8), .. share the
        # name; other casts coerce through the type's text I/O)
        return binder.coerce(args[0], SqlType(written), explicit=True)
    cargs = tuple(binder.coerce(a, t) for a, t in zip(args, arg_types, strict=True))
    if name in func_names.LITERAL_ARGUMENT_FUNCTIONS and any(isinstance(a, Literal) and a.value is None for a in cargs):
        return Literal(None, rtype)  # strict: a NULL unit / pattern / format makes the call NULL
    if name in regex.REGEX_FUNCTIONS or (name == "regexp_replace" and len(cargs) > 3 and cargs[3].typ.name == "int4"):
        return regex.bind_call(name, cargs)  # type: ignore[return-value]
    if name in ("regexp_replace", "regexp_match"):
        lits = cargs[1:]
        if not all(isinstance(x, Literal) and x.value is not None for x in lits):
            raise unsupported(f"{name} with a pattern, replacement or flags that is not a literal")
        regex.regex_call(name, *[x.value for x in lits])  # type: ignore[union-attr]
    if name in ("extract", "date_part", "date_trunc"):
        if not isinstance(cargs[0], Literal) or cargs[0].value is None:
            raise unsupported(f"{name} with a unit that is not a literal")
        cargs = (Literal(datetime_units.datetime_unit(name, cargs[0].value, cargs[1].typ), TEXT), cargs[1])
    if name == "to_char" and cargs[0].typ.name not in func.NUMBER_FORMAT_TYPES:
        if not isinstance(cargs[1], Literal) or cargs[1].value is None:
            raise unsupported("to_char with a pattern that is not a literal")
        datetime_units.to_char_pattern(cargs[1].value)
    if name == "to_timestamp":
        return bind_to_timestamp(cargs)
    if name == "encode":
        # encode(bytea, 'hex' | 'base64' | 'escape')
        fmt = cargs[1]
        if not isinstance(fmt, Literal):
            raise unsupported("encode with a format that is not a literal")
        if fmt.value is None:
            return Literal(None, rtype)
        if str(fmt.value).lower() not in ("hex", "base64", "escape"):
            raise SqlError("22023", f'unrecognized encoding: "{fmt.value}"')
        cargs = (cargs[0], Literal(str(fmt.value).lower(), TEXT))
    if name == "decode":
        # decode(text, 'hex' | 'base64' | 'escape')
        fmt = cargs[1]
        if not isinstance(fmt, Literal):
            raise unsupported("decode with a format that is not a literal")
        if fmt.value is None:
            return Literal(None, rtype)
        if str(fmt.value).lower() not in ("hex", "base64", "escape"):
            raise SqlError("22023", f'unrecognized encoding: "{fmt.value}"')
        cargs = (cargs[0], Literal(str(fmt.value).lower(), TEXT))
    if name in _VARIADIC_ONLY:
        return CallVariadic(name, cargs, rtype)
    if len(cargs) == 1:
        return CallUnary(name, cargs[0], rtype)
    if len(cargs) == 2:
        return CallBinary(name, cargs[0], cargs[1], rtype)
    return CallVariadic(name, cargs, rtype)


def _not_distinct(binder: Binder, e: exp.NullSafeEQ | exp.NullSafeNEQ, scope: Scope) -> HirScalar:
    """a IS NOT DISTINCT FROM b = coalesce(a = b, a IS NULL AND b IS NULL) (never NULL:
    a = b is NULL exactly when an operand is); IS DISTINCT FROM is its negation."""
    if is_row(e.this) or is_row(e.expression):
        return row_not_distinct(binder, e.this, e.expression, scope, isinstance(e, exp.NullSafeNEQ))
    same = binder._same(binder.scalar(e.this, scope), binder.scalar(e.expression, scope))
    return CallUnary("not", same, BOOL) if isinstance(e, exp.NullSafeNEQ) else same


def assignment_castable(src: SqlType, t: SqlType) -> bool:
    """Is there an implicit assignment cast src -> t (numeric <-> numeric, to text, ...)?"""
    return (src == t or (src.is_numeric and t.is_numeric) or (src.is_string and t.is_string) or t.is_string
            or (src.name in ("date", "timestamp", "timestamptz") and t.name in ("date", "timestamp", "timestamptz"))
            or src.name == t.name)


def _unit_literal(unit: exp.Expression) -> exp.Expression:
    """The datetime unit of EXTRACT / date_trunc as a string literal (a keyword or a string);
    0A000 for a computed unit."""
    if isinstance(unit, exp.Var):
        return exp.Literal.string(unit.name)
    if isinstance(unit, exp.Literal) and unit.is_string:
        return unit
    raise unsupported("a datetime unit that is not a literal")


def _flatten(e: exp.Expression, cls: type[exp.Expression]) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, cls):
            stack.append(x.expression)
            stack.append(x.this)
        elif isinstance(x, exp.Paren) and isinstance(x.this, cls):
            stack.append(x.this)
        else:
            out.append(x)
    return out


_KNOWN_UNSUPPORTED_FUNCTIONS = {
    "jsonb_agg", "json_agg", "jsonb_object_agg",
    "string_to_array", "unnest", "list_agg",
    "make_interval",
    "percentile_cont", "percentile_disc", "mode", "string_agg", "array_agg",
}


def _literal(e: exp.Literal) -> Literal:
    if e.is_string:
        return Literal(e.this, UNKNOWN)
    text = e.this
    if all(c.isdigit() for c in text):
        v = int(text)
        if v <= 2**31 - 1:
            return Literal(v, INT4)
        if v <= 2**63 - 1:
            return Literal(v, INT8)
        return Literal(Decimal(text), NUMERIC)
    return Literal(Decimal(text), NUMERIC)


_INT_BOUND = {"int2": 2**15, "int4": 2**31, "int8": 2**63}


def _negate_literal(x: Literal) -> Literal | None:
    """-literal as a literal (Postgres' doNegate: -2147483648 is an integer), or None when the
    negation leaves the type's range (-(-2147483648)::int4: the renderer raises 22003)."""
    # copy_negate is exact (unary minus rounds to the thread's 28-digit decimal context)
    v = x.value.copy_negate() if isinstance(x.value, Decimal) else -x.value
    if isinstance(v, Decimal) and v.is_zero():
        v = v.copy_abs()  # numeric has no negative zero: -0.0 is 0.0
    bound = _INT_BOUND.get(x.typ.name)
    if bound is not None and not -bound <= v < bound:
        return None
    if x.typ == INT8 and v == -(2**31):
        return Literal(v, INT4)
    if x.typ == NUMERIC and x.value == 2**63:
        return Literal(-(2**63), INT8)
    return Literal(v, x.typ)


def _record_is_null(x: HirScalar, negate: bool) -> HirScalar:
    """Postgres' row tests: r IS NULL = every field IS NULL; r IS NOT NULL = every field IS NOT
    NULL (not the negation: ROW(1, NULL) is neither); a NULL record IS NULL."""
    tests: list[HirScalar] = []
    for i, t in enumerate(x.typ.fields):
        test: HirScalar = CallUnary("is_null", record_get(x, i, t), BOOL)
        tests.append(CallUnary("not", test, BOOL) if negate else test)
    whole: HirScalar = CallUnary("is_null", x, BOOL)
    if negate:
        return CallVariadic("and", (CallUnary("not", whole, BOOL), *tests), BOOL)
    if not tests:
        return Literal(True, BOOL)  # ROW() IS NULL: every one of no fields is NULL
    return CallVariadic("or", (whole, CallVariadic("and", tuple(tests), BOOL)), BOOL)
