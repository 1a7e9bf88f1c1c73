"""The catalog rewrite's function handlers (by name and by sqlglot node) and its final whitelist check."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeAlias

from sqlglot import exp

from catalog.system import idents
from catalog.system.relations import FN, OID_LIKE
from server.system_sql_ast import (
    BOOL,
    INT4,
    INT8,
    NAME,
    OID,
    TEXT,
    Scope,
    _cast,
    _fn,
    _func_args,
    _func_display,
    _lit,
    _Param,
    _typed_lit,
)
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    INSUFFICIENT_PRIVILEGE,
    INVALID_TEXT_REPRESENTATION,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    SqlError,
)
from sql.types import SqlType


class RewriterView(Protocol):
    """What a function handler uses of `server.system_sql.Rewriter` (a Protocol, so this
    module does not import system_sql, which dispatches to the handlers here)."""

    ctx: Any  # server.system_sql_context.Context
    set_config: tuple[str, str, bool] | None

    def expr(self, node: exp.Expression, scope: Scope, order_by: bool = False) -> tuple[exp.Expression, SqlType | None]: ...

    def _infer_param(self, node: exp.Expression, t: SqlType | None) -> None: ...

    def resolve_reg(self, kind: str, text: str) -> int: ...

    def _current_schema(self) -> exp.Expression: ...

    def _visible(self) -> exp.Expression: ...


# ---- function handlers ------------------------------------------------------------------------------

Handler: TypeAlias = Callable[[RewriterView, exp.Expression, list[exp.Expression], Scope], tuple[exp.Expression, SqlType | None]]

def _parse_ident(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    """parse_ident(text [, strict bool]) (catalog.system.idents, a Python function in DuckDB)."""
    if len(args) not in (1, 2):
        raise SqlError(UNDEFINED_FUNCTION, f"function {_func_display(node)} does not exist")
    out = []
    for a, want in zip(args, (TEXT, SqlType("bool")), strict=False):
        n, _t = rw.expr(a, scope)
        rw._infer_param(n, want)
        out.append(_cast(n, want))
    if len(out) == 1:
        out.append(exp.Boolean(this=True))
    return _fn("parse_ident", *out), SqlType("_text")

_FUNCTIONS: dict[str, Handler] = {}


def _h(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            _FUNCTIONS[n] = fn
        return fn

    return deco


def _const(value: Callable[[RewriterView], Any], t: SqlType) -> Handler:
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        for a in args:
            rw.expr(a, scope)  # validate arguments (columns exist, ...)
        return _typed_lit(value(rw), t), t

    return handler


RUNTIME_ERROR_TAG = idents.RUNTIME_ERROR_TAG


def _raises(code: str, message: str, t: SqlType) -> Handler:
    """A function whose every call is an error (SQLSTATE `code`), raised when DuckDB evaluates
    the call: a call in a branch no row takes (`CASE WHEN false THEN f() ...`) raises nothing,
    as in PostgreSQL."""
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        for a in args:
            rw.expr(a, scope)
        err = exp.Anonymous(this="error", expressions=[exp.Literal.string(f"{RUNTIME_ERROR_TAG} {code}: {message}")])
        return _cast(err, t), t

    return handler


def _macro(name: str, t: SqlType | None, nargs: tuple[int, ...], *, extra: Callable[[RewriterView], list[exp.Expression]] | None = None,
           arg_types: Sequence[SqlType | None] = (), constant: Callable[[RewriterView, list[Any]], Any] | None = None) -> Handler:
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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


def _vis(rw: RewriterView) -> list[exp.Expression]:
    return [rw._visible()]


def _sp(rw: RewriterView) -> list[exp.Expression]:
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
    # never in recovery: PostgreSQL's answer outside recovery
    "pg_is_wal_replay_paused": _raises("55000", "recovery is not in progress", BOOL),
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
    "mz_environment_id": _const(lambda rw: rw.ctx.environment_id, TEXT),
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
    "parse_ident": _parse_ident,
    "quote_literal": _macro("quote_literal", TEXT, (1,), arg_types=(TEXT,)),
    "quote_nullable": _macro("quote_nullable", TEXT, (1,), arg_types=(TEXT,)),
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
def _privilege(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    for a in args:
        n, _ = rw.expr(a, scope)
        rw._infer_param(n, TEXT)
    return exp.Boolean(this=True), BOOL


@_h("age")
def _age(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope) for a in args]
    if len(new) == 1 and (new[0][1] is None or new[0][1].name in ("xid", "xid8")):
        return _typed_lit(0, INT4), INT4  # transaction ids never age: there is no wraparound
    return exp.Anonymous(this="age", expressions=[n for n, _ in new]), SqlType("interval")


@_h("current_schema")
def _current_schema(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    return rw._current_schema(), NAME


@_h("current_schemas")
def _current_schemas(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    implicit = True
    if args:
        a = args[0]
        if isinstance(a, exp.Boolean):
            implicit = bool(a.this)
    path = rw.ctx.implicit_path if implicit else tuple(s for s in rw.ctx.search_path if rw.ctx.schema_exists(s))
    return _typed_lit(list(path), SqlType("_name")), SqlType("_name")


@_h("current_setting")
def _current_setting(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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
def _set_config(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    if len(args) != 3 or not all(isinstance(a, (exp.Literal, exp.Boolean)) for a in args):
        raise SqlError(FEATURE_NOT_SUPPORTED, "set_config() needs constant arguments")
    name, value = args[0].this, args[1].this
    rw.set_config = (str(name), str(value), bool(args[2].this) if isinstance(args[2], exp.Boolean) else False)
    return _typed_lit(value, TEXT), TEXT


def _array_bound(kind: str) -> Handler:
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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
def _generate_subscripts(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(args[0], scope)
    call: exp.Expression = exp.Anonymous(this="generate_subscripts", expressions=[a, exp.Literal.number(1)])
    if t is not None and t.name in ("int2vector", "oidvector"):
        call = exp.Sub(this=call, expression=exp.Literal.number(1))
    return call, INT4


@_h("_pg_expandarray")
def _expandarray(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, _ = rw.expr(args[0], scope)
    return exp.Explode(this=_fn("expandarray", a)), SqlType("record")


@_h("unnest")
def _unnest(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(args[0], scope)
    return exp.Explode(this=a), (t.element if t is not None else None)


@_h("array_to_string")
def _array_to_string(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope)[0] for a in args[:2]]
    fn = exp.Anonymous(this="array_to_string", expressions=[exp.Anonymous(this="list_transform", expressions=[
        new[0], exp.Lambda(this=_cast(exp.column("_x"), TEXT), expressions=[exp.to_identifier("_x")])]), new[1]])
    return fn, TEXT


@_h("string_to_array")
def _string_to_array(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    new = [rw.expr(a, scope)[0] for a in args[:2]]
    return exp.Anonymous(this="string_split", expressions=[_cast(new[0], TEXT), _cast(new[1], TEXT)]), SqlType("_text")


def _passthrough(t: SqlType | None, duck_name: str | None = None) -> Handler:
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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


def _typed(fn: Callable[[RewriterView, exp.Expression, Scope], tuple[exp.Expression, SqlType | None]]) -> Handler:
    def handler(rw: RewriterView, node: exp.Expression, args: list[exp.Expression], scope: Scope) -> tuple[exp.Expression, SqlType | None]:
        return fn(rw, node, scope)

    return handler


def _typed_array_size(rw: RewriterView, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    return _array_bound("length")(rw, node, _func_args(node), scope)


def _typed_keyword(name: str) -> Callable[[RewriterView, exp.Expression, Scope], tuple[exp.Expression, SqlType | None]]:
    def fn(rw: RewriterView, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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


def _format(rw: RewriterView, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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


def _explode(rw: RewriterView, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
    a, t = rw.expr(node.this, scope)
    node.set("this", a)
    return node, (t.element if t is not None else None)


def _gen_series(rw: RewriterView, node: exp.Expression, scope: Scope) -> tuple[exp.Expression, SqlType | None]:
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


def _tagged_error(n: exp.Anonymous) -> bool:
    """An `error(...)` call `_raises` wrote (its one argument a literal carrying the tag)."""
    args = n.expressions
    return (len(args) == 1 and isinstance(args[0], exp.Literal) and args[0].is_string
            and args[0].this.startswith(f"{RUNTIME_ERROR_TAG} "))


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
            if name == "error" and _tagged_error(n):
                continue
            if name.lower() not in _DUCK_ALLOWED:
                raise SqlError(UNDEFINED_FUNCTION, f"function {name}() does not exist")
        elif isinstance(n, exp.Func) and not isinstance(n, (exp.Cast, exp.Case, exp.If, exp.Explode, exp.Unnest, exp.Array, exp.Lambda,
                                                              exp.Binary, exp.Unary, exp.Connector, exp.Paren)):
            if type(n) not in _TYPED_PASSTHROUGH and type(n) not in _TYPED and not isinstance(n, (exp.Anonymous,)):
                if type(n).__name__ in ("Collate", "Interval", "Extract", "Window", "Filter", "Any", "All", "Exists"):
                    continue
                raise SqlError(UNDEFINED_FUNCTION, f"function {type(n).__name__.lower()}() does not exist")
