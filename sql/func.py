"""Postgres-style type resolution for operators, functions, casts and unification.

Only the typing lives here (pure); evaluation is in compute/render (Spark) and, for
literal folding, in sql.literal.
"""

from __future__ import annotations

from dataclasses import replace

from sql import regex
from sql.errors import (
    DATATYPE_MISMATCH,
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_FUNCTION,
    SqlError,
    unsupported,
)
from sql.types import (
    BOOL,
    DATE,
    FLOAT8,
    INT4,
    INT8,
    INTERVAL,
    MZ_TIMESTAMP,
    NUMERIC,
    TEXT,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    SqlType,
)

JSONB = SqlType("jsonb")
BYTEA = SqlType("bytea")
TEXT_ARRAY = SqlType("_text")

# Implicit numeric promotion order (Postgres' preferred-type ladder, simplified).
_NUM_RANK = {"int2": 0, "int4": 1, "oid": 1, "int8": 2, "uint8": 3, "numeric": 4, "float4": 5, "float8": 6}
_DATETIME_RANK = {"date": 0, "timestamp": 1, "timestamptz": 2}


def unify(types: list[SqlType], context: str = "UNION") -> SqlType:
    """The common supertype of `types` (unknown literals adapt); 42804 if none."""
    known = [t for t in types if t.name != "unknown"]
    if not known:
        return TEXT
    first = known[0]
    # a typmod is kept only when every input has it (select_common_typmod): an unknown
    # literal has none, so `'abc'::varchar(3) UNION ALL SELECT '0123456789'` is varchar
    # (was: varchar(3), truncating the literal to '012' or failing with 22001). Not for
    # bpchar: its comparisons here rely on the literals padded to the length (`c IN ('a')`)
    if all(t == first for t in known) and (len(known) == len(types) or first.typmod == -1 or first.name == "bpchar"):
        return first
    if first.name == "record" and all(t.name == "record" for t in known):
        return _unify_records(known, context)
    if all(t.name == first.name for t in known):
        return SqlType(first.name)
    if all(is_array(t) for t in known):
        return array_of(unify([t.element for t in known], context))  # type: ignore[misc]
    if all(t.name in _NUM_RANK for t in known):
        top = max(known, key=lambda t: _NUM_RANK[t.name])
        return SqlType(top.name) if top.name != "oid" else INT8
    if all(t.is_string for t in known):
        return TEXT
    if all(t.name in _DATETIME_RANK for t in known):
        return SqlType(max(known, key=lambda t: _DATETIME_RANK[t.name]).name)
    a, b = known[0], next(t for t in known if t.name != known[0].name)
    raise SqlError(DATATYPE_MISMATCH, f"{context} types {a.pg_format()} and {b.pg_format()} cannot be matched")


def _unify_records(types: list[SqlType], context: str) -> SqlType:
    """Records unify field by field (a record's type is its fields' types here); records of
    other shapes, or fields of no common type, are 0A000 (Postgres keeps each row's own
    anonymous record type, which mzspark's struct columns cannot)."""
    from sql.errors import unsupported

    arity = len(types[0].fields)
    if any(len(t.fields) != arity for t in types) or arity == 0:
        raise unsupported(f"{context} of records with different numbers of fields")
    try:
        fields = tuple(unify([t.fields[i] for t in types], context) for i in range(arity))
    except SqlError:
        raise unsupported(f"{context} of records with fields of different types") from None
    return SqlType("record", fields=fields)


def can_cast(src: SqlType, dst: SqlType) -> bool:
    """Explicit casts that are allowed (Postgres' pg_cast, simplified)."""
    if src.name == dst.name or src.name == "unknown":
        return True
    s, d = src.name, dst.name
    if s in _NUM_RANK and d in _NUM_RANK:
        return True
    if src.is_string or dst.is_string:
        return True
    if s == "bool" and d in ("int4",) or s == "int4" and d == "bool":
        return True
    if s in _DATETIME_RANK and d in _DATETIME_RANK:
        return True
    if s in ("timestamp", "timestamptz") and d == "time":
        return True
    if s == "interval" and d == "time" or s == "time" and d == "interval":
        return True
    if {s, d} == {"jsonb", "text"}:
        return True
    if is_array(src) and is_array(dst):
        return can_cast(src.element, dst.element)  # type: ignore[arg-type]
    if "mz_timestamp" in (s, d) and (s in _NUM_RANK or d in _NUM_RANK or s in _DATETIME_RANK or d in _DATETIME_RANK):
        return True
    return False


def check_cast(src: SqlType, dst: SqlType) -> None:
    if not can_cast(src, dst):
        raise SqlError(
            "42846", f"cannot cast type {src.pg_format()} to {dst.pg_format()}"
        )


ARITH = {"add", "sub", "mul", "div", "mod"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
_OP_SYMBOL = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "eq": "=", "ne": "<>",
    "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "concat": "||", "like": "~~", "ilike": "~~*",
    "not_like": "!~~", "not_ilike": "!~~*", "pow": "^",
}


def op_error(op: str, a: SqlType, b: SqlType | None = None) -> SqlError:
    sym = _OP_SYMBOL.get(op, op)
    if b is None:
        msg = f"operator does not exist: {sym} {a.pg_format()}"
    else:
        msg = f"operator does not exist: {a.pg_format()} {sym} {b.pg_format()}"
    return SqlError(
        UNDEFINED_FUNCTION, msg,
        hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
    )


def binary_op(op: str, a: SqlType, b: SqlType) -> tuple[SqlType, SqlType, SqlType]:
    """(left operand type, right operand type, result type) for `a op b`.

    Operands are cast to the returned operand types before the call. Unknown (string
    literal) operands take the other side's type.
    """
    if a.name == "unknown" and b.name == "unknown":
        a = b = TEXT
    elif op == "concat" and "unknown" in (a.name, b.name) and not _concat_peer(b if a.name == "unknown" else a):
        # text || anynonarray (and anynonarray || text): 'r' || 5 = 'r5'
        a, b = (TEXT, b) if a.name == "unknown" else (a, TEXT)
    elif a.name == "unknown":
        a = b if op not in ARITH or b.name in _NUM_RANK else a
        if a.name == "unknown":
            a = _unknown_peer(op, b)
    elif b.name == "unknown":
        b = a if op not in ARITH or a.name in _NUM_RANK else b
        if b.name == "unknown":
            b = _unknown_peer(op, a)
    na, nb = a.name, b.name
    if op in ARRAY_OPS and na == nb == "jsonb" and op != "array_overlap":
        return JSONB, JSONB, BOOL
    if is_array(a) or is_array(b):
        return _array_op(op, a, b)
    if op in ARRAY_OPS:
        raise op_error(op, a, b)
    if op in COMPARE and na == nb == "jsonb" and op not in ("eq", "ne"):
        from sql.errors import unsupported

        raise unsupported(f"jsonb ordering ({_OP_SYMBOL[op]})")
    if (op in ("add", "sub", "mul", "div") or op in COMPARE) and "float4" in (na, nb) and na != nb \
            and na in _NUM_RANK and nb in _NUM_RANK:
        # real (op) integer/numeric resolves to Postgres' float48 operators: double precision
        return (FLOAT8, FLOAT8, FLOAT8) if op not in COMPARE else (FLOAT8, FLOAT8, BOOL)
    if op in ARITH:
        if na in _NUM_RANK and nb in _NUM_RANK:
            # Postgres' numeric operators take and return numeric without a typmod:
            # numeric(10,2) * numeric(10,2) keeps all four fractional digits
            t = SqlType(unify([a, b]).name)
            return t, t, t
        dt = _datetime_arith(op, a, b)
        if dt is not None:
            return dt
        raise op_error(op, a, b)
    if op == "pow":
        if na in _NUM_RANK and nb in _NUM_RANK:
            t = NUMERIC if "numeric" in (na, nb) else FLOAT8
            return t, t, t
        raise op_error(op, a, b)
    if op in COMPARE and "mz_timestamp" in (na, nb):
        other = b if na == "mz_timestamp" else a
        if other.name in _NUM_RANK or other.name in _DATETIME_RANK or other.name == "mz_timestamp":
            return MZ_TIMESTAMP, MZ_TIMESTAMP, BOOL
        raise op_error(op, a, b)
    if op in COMPARE:
        try:
            # PostgreSQL's comparison operators take their types without a typmod: an unknown
            # literal compared with a varchar(3) is not cut to 3 characters ('abcdef' =
            # x::varchar(3) is false, not 22001), nor rounded to a numeric(p, s)
            t = replace(unify([a, b]), typmod=-1)
        except SqlError:
            raise op_error(op, a, b) from None
        if t.name in ("interval",) or t.name in _NUM_RANK or t.is_string or t.name in _DATETIME_RANK or t.name in ("bool", "time", "uuid", "bytea", "jsonb"):
            return t, t, BOOL
        raise op_error(op, a, b)
    if op == "concat":
        if {a.name, b.name} in ({"bytea"}, {"bytea", "unknown"}):
            return BYTEA, BYTEA, BYTEA  # byteacat
        if a.is_string or b.is_string:
            return TEXT, TEXT, TEXT
        raise op_error(op, a, b)
    if op in ("like", "ilike", "not_like", "not_ilike"):
        if op in ("like", "not_like") and "bytea" in (a.name, b.name) and {a.name, b.name} <= {"bytea", "unknown"}:
            return BYTEA, BYTEA, BOOL  # bytealike / byteanlike
        if a.is_string and b.is_string:
            return TEXT, TEXT, BOOL
        raise op_error(op, a, b)
    raise op_error(op, a, b)


ARRAY_OPS = {"array_contains", "array_contained", "array_overlap"}
_OP_SYMBOL.update({"array_contains": "@>", "array_contained": "<@", "array_overlap": "&&"})


def is_array(t: SqlType) -> bool:
    """A one-dimensional Postgres array type (not int2vector/oidvector)."""
    return t.name.startswith("_") and t.element is not None


def _array_op(op: str, a: SqlType, b: SqlType) -> tuple[SqlType, SqlType, SqlType]:
    """Array operators: comparisons, @>, <@, && (same array type on both sides) and ||
    (array || array, array || element, element || array; an unknown side is an array)."""
    if op == "concat":
        if is_array(a) and (is_array(b) or b.name == "unknown"):
            t = unify([a, b if b.name != "unknown" else a], "ARRAY")
            return t, t, t
        if is_array(b) and a.name == "unknown":
            return b, b, b
        arr, elem = (a, b) if is_array(a) else (b, a)
        e = unify([arr.element, elem], "ARRAY")  # type: ignore[list-item]
        t = array_of(e)
        return (t, e, t) if is_array(a) else (e, t, t)
    if op in COMPARE or op in ARRAY_OPS:
        a2 = a if a.name != "unknown" else b
        b2 = b if b.name != "unknown" else a
        if is_array(a2) and is_array(b2):
            try:
                t = unify([a2, b2])
            except SqlError:
                raise op_error(op, a, b) from None
            return t, t, BOOL
    raise op_error(op, a, b)


def _concat_peer(t: SqlType) -> bool:
    """Types whose own || takes an unknown operand as the same type."""
    return t.is_string or is_array(t) or t.name in ("jsonb", "bytea")


def _unknown_peer(op: str, other: SqlType) -> SqlType:
    if op in ("add", "sub") and other.name in _DATETIME_RANK:
        return INTERVAL if op == "add" or other.name != "date" else INT4
    if op in ("add", "sub") and other.name == "interval":
        return INTERVAL
    return other


def _time_arith(op: str, na: str, nb: str) -> tuple[SqlType, SqlType, SqlType] | None:
    """PostgreSQL's time operators: time +- interval = time (modulo a day), interval + time,
    time - time = interval, date + time = time + date = timestamp."""
    match op, na, nb:
        case ("add" | "sub"), "time", "interval":
            return TIME, INTERVAL, TIME
        case "add", "interval", "time":
            return INTERVAL, TIME, TIME
        case "sub", "time", "time":
            return TIME, TIME, INTERVAL
        case "add", "date", "time":
            return DATE, TIME, TIMESTAMP
        case "add", "time", "date":
            return TIME, DATE, TIMESTAMP
    return None


def _datetime_arith(op: str, a: SqlType, b: SqlType) -> tuple[SqlType, SqlType, SqlType] | None:
    na, nb = a.name, b.name
    if (tm := _time_arith(op, na, nb)) is not None:
        return tm
    if op == "add":
        if na == "date" and nb in ("int2", "int4"):
            return DATE, INT4, DATE
        if nb == "date" and na in ("int2", "int4"):
            return INT4, DATE, DATE
        if na in _DATETIME_RANK and nb == "interval":
            r = TIMESTAMP if na == "date" else a
            return a, INTERVAL, r
        if nb in _DATETIME_RANK and na == "interval":
            r = TIMESTAMP if nb == "date" else b
            return INTERVAL, b, r
        if na == nb == "interval":
            return INTERVAL, INTERVAL, INTERVAL
    if op == "sub":
        if na == "date" and nb in ("int2", "int4"):
            return DATE, INT4, DATE
        if na == nb == "date":
            return DATE, DATE, INT4
        if na in _DATETIME_RANK and nb == "interval":
            r = TIMESTAMP if na == "date" else a
            return a, INTERVAL, r
        if na in ("timestamp", "timestamptz") and nb in ("timestamp", "timestamptz"):
            t = TIMESTAMPTZ if "timestamptz" in (na, nb) else TIMESTAMP
            return t, t, INTERVAL
        if na == nb == "interval":
            return INTERVAL, INTERVAL, INTERVAL
    if op in ("mul", "div") and na == "interval" and nb in _NUM_RANK:
        return INTERVAL, FLOAT8, INTERVAL
    if op == "mul" and nb == "interval" and na in _NUM_RANK:
        return FLOAT8, INTERVAL, INTERVAL
    return None


def unary_op(op: str, a: SqlType) -> SqlType:
    if op == "neg":
        if a.name == "unknown":
            return NUMERIC
        if a.name in _NUM_RANK or a.name == "interval":
            return a
        raise op_error("-", a)
    if op == "not":
        if a.name in ("bool", "unknown"):
            return BOOL
        raise SqlError(DATATYPE_MISMATCH, f"argument of NOT must be type boolean, not type {a.pg_format()}")
    raise op_error(op, a)


# Scalar functions: name -> (arity range, typing rule)
# the one integer argument of these string functions (the others are text)
_INT_ARG = {"split_part": 2, "lpad": 1, "rpad": 1}
# sha224(bytea) .. sha512(bytea) -> bytea: the digest's bits
SHA2_FUNCS = {"sha224": 224, "sha256": 256, "sha384": 384, "sha512": 512}
_STRING_FUNCS_TEXT = {"lower", "upper", "btrim", "ltrim", "rtrim", "replace", "substr", "lpad", "rpad", "repeat", "reverse", "initcap", "left", "right", "split_part", "translate", "md5", "concat", "concat_ws", "chr", "to_hex"}
_INT_FUNCS = {"length", "char_length", "character_length", "octet_length", "bit_length", "strpos", "position", "ascii"}


def function_type(name: str, args: list[SqlType]) -> tuple[list[SqlType], SqlType]:
    """(argument types to cast to, result type) for a scalar function call; 42883 if none."""
    n = len(args)
    if name in ("abs",) and n == 1:
        t = args[0] if args[0].name != "unknown" else NUMERIC
        if t.name in _NUM_RANK:
            return [t], t
    if name in ("round", "trunc") and n in (1, 2):
        t = args[0] if args[0].name != "unknown" else NUMERIC
        if t.name in _NUM_RANK:
            if n == 2:
                return [NUMERIC, INT4], NUMERIC
            t = t if t.name in ("float4", "float8", "numeric") else (FLOAT8 if t.name in _NUM_RANK and t.name != "numeric" else t)
            if args[0].name in ("int2", "int4", "int8"):
                t = FLOAT8 if name != "round" else NUMERIC
            return [t], NUMERIC if t.name == "numeric" else t  # numeric(p, s) in, plain numeric out
    if name in ("ceil", "ceiling", "floor", "sign") and n == 1:
        t = args[0] if args[0].name != "unknown" else NUMERIC
        if t.name in ("int2", "int4", "int8"):
            t = FLOAT8  # Postgres has no integer ceil/floor/sign: double precision is preferred
        if t.name in _NUM_RANK:
            # floor(numeric(p, s)) is a plain numeric (its value's scale is 0), not numeric(p, s)
            return [t], NUMERIC if t.name == "numeric" else t
    if name in ("min_scale", "trim_scale") and n == 1 and (args[0].name in _NUM_RANK and args[0].name not in ("float4", "float8")
                                                         or args[0].name == "unknown"):
        # numeric_min_scale / numeric_trim_scale: of the value (an integer is numeric)
        return [NUMERIC], INT4 if name == "min_scale" else NUMERIC
    if name in ("sqrt", "exp", "ln", "log10", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "radians", "degrees") and n == 1:
        t = NUMERIC if args[0].name == "numeric" and name in ("sqrt", "exp", "ln", "log10") else FLOAT8
        if args[0].name in _NUM_RANK or args[0].name == "unknown":
            return [t], t
    if name == "log" and n == 2:
        # log(b, x): Postgres only has the numeric version
        if all(a.name in _NUM_RANK or a.name == "unknown" for a in args):
            return [NUMERIC, NUMERIC], NUMERIC
    if name in ("gcd", "lcm") and n == 2 and all(a.name in ("int2", "int4", "int8", "unknown") for a in args):
        t = unify([a if a.name != "unknown" else INT4 for a in args])
        t = INT4 if t.name == "int2" else t
        return [t, t], t
    if name == "intdiv" and n == 2 and all(a.name in _NUM_RANK or a.name == "unknown" for a in args):
        return [NUMERIC, NUMERIC], NUMERIC
    if name == "width_bucket" and n == 4 and all(a.name in _NUM_RANK or a.name == "unknown" for a in args[:3]):
        t = NUMERIC if any(a.name == "numeric" for a in args[:3]) else FLOAT8
        return [t, t, t, INT4], INT4
    if name == "unistr" and n == 1 and (args[0].is_string or args[0].name == "unknown"):
        return [TEXT], TEXT
    if name == "starts_with" and n == 2 and all(a.is_string or a.name == "unknown" for a in args):
        return [TEXT, TEXT], BOOL
    if name == "decode" and n == 2 and all(a.is_string or a.name == "unknown" for a in args):
        return [TEXT, TEXT], BYTEA
    if name == "encode" and n == 2 and args[0].name in ("bytea", "unknown") and (args[1].is_string or args[1].name == "unknown"):
        return [BYTEA, TEXT], TEXT
    if name in regex.REGEX_FUNCTIONS or name == "regexp_replace":
        typed = regex.function_type(name, args)
        if typed is not None:
            return typed
    if name in ("regexp_replace", "regexp_match") and all(a.is_string or a.name == "unknown" for a in args):
        if name == "regexp_replace" and n in (3, 4):
            return [TEXT] * n, TEXT
        if name == "regexp_match" and n in (2, 3):
            return [TEXT] * n, SqlType("_text")
    if name in ("power", "pow", "atan2") and n == 2:
        t = NUMERIC if "numeric" in (args[0].name, args[1].name) and name != "atan2" else FLOAT8
        return [t, t], t
    if name == "mod" and n == 2:
        t = unify(args)
        return [t, t], t
    if name in SHA2_FUNCS and n == 1 and args[0].name in ("bytea", "unknown"):
        return [BYTEA], BYTEA
    if name in _INT_FUNCS:
        if all(a.is_string or a.name in ("unknown", "bytea") for a in args):
            # octet_length(character) counts the blank padding (bpcharoctetlen); the others
            # see char(n) as text, without trailing blanks (length(character) is bpcharlen)
            keep = ("bytea", "bpchar") if name == "octet_length" else ("bytea",)
            return [a if a.name in keep else TEXT for a in args], INT4
    if (typed := _bytea_function(name, args)) is not None:
        return typed
    if name in _STRING_FUNCS_TEXT and any(a.name == "bytea" for a in args):
        # Postgres has no implicit bytea -> text cast: only the bytea versions apply
        if name == "md5" and n == 1:
            return [BYTEA], TEXT
        if name == "substr" and n in (2, 3) and args[0].name == "bytea":
            return [BYTEA] + [INT4] * (n - 1), BYTEA
        raise _no_function(name, args)
    if name in _STRING_FUNCS_TEXT:
        casts = []
        for i in range(len(args)):
            if name in ("substr", "repeat", "left", "right", "chr") and i >= 1 or i == _INT_ARG.get(name):
                casts.append(INT4)
            elif name == "chr" or name == "to_hex":
                casts.append(INT8)
            else:
                casts.append(TEXT)
        return casts, TEXT
    if name in ("greatest", "least") and n >= 1:
        t = unify(args, name.upper())
        return [t] * n, t
    if name in _ARRAY_FUNCS:
        return _array_function(name, args)
    if name in _DATETIME_FUNCS:
        return _datetime_function(name, args)
    if name in ("jsonb_typeof", "jsonb_array_length") and n == 1 and args[0].name in ("jsonb", "unknown"):
        return [JSONB], TEXT if name == "jsonb_typeof" else INT4
    if name == "to_number" and n == 2 and all(a.name in ("text", "unknown", "varchar", "bpchar") for a in args):
        return [TEXT, TEXT], NUMERIC
    if name == "to_timestamp" and n == 2 and all(a.name in ("text", "unknown", "varchar", "bpchar") for a in args):
        return [TEXT, TEXT], TIMESTAMPTZ
    if name == "to_timestamp" and n == 1 and (args[0].is_numeric or args[0].name == "unknown"):
        raise unsupported("to_timestamp(double precision)")
    if name == "now" and n == 0:
        return [], TIMESTAMPTZ
    if name == "mz_now" and n == 0:
        return [], MZ_TIMESTAMP
    raise SqlError(
        UNDEFINED_FUNCTION,
        f"function {name}({', '.join(a.pg_format() for a in args)}) does not exist",
        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
    )


# PostgreSQL's bytea functions: name -> (parameter types, result type)
BYTEA_FUNCS: dict[str, tuple[tuple[SqlType, ...], SqlType]] = {
    "get_byte": ((BYTEA, INT4), INT4), "set_byte": ((BYTEA, INT4, INT4), BYTEA), "get_bit": ((BYTEA, INT8), INT4),
    "set_bit": ((BYTEA, INT8, INT4), BYTEA), "bit_count": ((BYTEA,), INT8), "btrim": ((BYTEA, BYTEA), BYTEA),
    "ltrim": ((BYTEA, BYTEA), BYTEA), "rtrim": ((BYTEA, BYTEA), BYTEA)}
# implicit casts of an argument to a bytea function's parameter
_IMPLICIT_TO = {"bytea": ("bytea", "unknown"), "int4": ("int2", "int4", "unknown"), "int8": ("int2", "int4", "int8", "unknown")}


def _bytea_function(name: str, args: list[SqlType]) -> tuple[list[SqlType], SqlType] | None:
    """Typing of BYTEA_FUNCS (the trims only where an argument is bytea: else the text ones);
    42883 for other argument types (no implicit bigint -> integer: get_byte(b, 1::int8))."""
    if name not in BYTEA_FUNCS or name in ("btrim", "ltrim", "rtrim") and all(a.name != "bytea" for a in args):
        return None
    params, result = BYTEA_FUNCS[name]
    if len(args) != len(params) or any(a.name not in _IMPLICIT_TO[p.name] for a, p in zip(args, params, strict=False)):
        raise _no_function(name, args)
    return list(params), result


_ARRAY_FUNCS = {"array_length", "cardinality", "array_to_string", "array_position", "array_cat", "array_append",
                "array_prepend", "array_remove", "array_upper", "array_lower", "array_ndims"}


def _no_function(name: str, args: list[SqlType]) -> SqlError:
    return SqlError(
        UNDEFINED_FUNCTION,
        f"function {name}({', '.join(a.pg_format() for a in args)}) does not exist",
        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
    )


def _array_function(name: str, args: list[SqlType]) -> tuple[list[SqlType], SqlType]:
    """Typing of the array functions (anyarray / anyelement resolved from the arguments)."""
    n = len(args)
    arrs = [a for a in args if is_array(a)]
    if not arrs:
        raise _no_function(name, args)
    arr = arrs[0]
    elem = arr.element
    assert elem is not None
    if name in ("array_length", "array_upper", "array_lower") and n == 2 and is_array(args[0]):
        return [arr, INT4], INT4
    if name in ("cardinality", "array_ndims") and n == 1:
        return [arr], INT4
    if name == "array_to_string" and n in (2, 3) and is_array(args[0]):
        return [arr] + [TEXT] * (n - 1), TEXT
    if name == "array_position" and n == 2 and is_array(args[0]):
        e = unify([elem, args[1]], "array_position")
        t = array_of(e)
        return [t, e], INT4
    if name == "array_cat" and n == 2:
        t = unify([a if a.name != "unknown" else arr for a in args], "array_cat")
        return [t, t], t
    if name in ("array_append", "array_remove") and n == 2 and is_array(args[0]):
        e = unify([elem, args[1]], name)
        t = array_of(e)
        return [t, e], t
    if name == "array_prepend" and n == 2 and is_array(args[1]):
        e = unify([elem, args[0]], name)
        t = array_of(e)
        return [e, t], t
    raise _no_function(name, args)


# to_char's number overloads (formatting.c: int4_to_char, int8_to_char, numeric_to_char)
NUMBER_FORMAT_TYPES = frozenset({"int2", "int4", "int8", "numeric"})

_DATETIME_FUNCS = {"extract", "date_part", "date_trunc", "make_date", "make_timestamp", "make_timestamptz", "justify_days",
                   "justify_hours", "justify_interval", "to_char", "age"}

def _datetime_function(name: str, args: list[SqlType]) -> tuple[list[SqlType], SqlType]:
    """Typing of date/time functions (a date argument of date_part/date_trunc/to_char is a
    timestamp / timestamptz, as Postgres' implicit casts make it)."""
    n = len(args)
    ts_like = ("timestamp", "timestamptz", "date", "time", "interval")
    if name in ("extract", "date_part") and n == 2 and args[1].name in ts_like + ("unknown",):
        x = args[1] if args[1].name != "unknown" else TIMESTAMPTZ
        if name == "date_part" and x.name == "date":
            x = TIMESTAMP
        return [TEXT, x], NUMERIC if name == "extract" else FLOAT8
    if name == "date_trunc" and n == 2 and args[1].name in ("timestamp", "timestamptz", "date", "interval", "unknown"):
        x = args[1] if args[1].name not in ("date", "unknown") else TIMESTAMPTZ
        return [TEXT, x], x
    if name == "make_date" and n == 3:
        return [INT4] * 3, DATE
    if name in ("make_timestamp", "make_timestamptz") and n == 6:
        return [INT4] * 5 + [FLOAT8], TIMESTAMP if name == "make_timestamp" else TIMESTAMPTZ
    if name in ("justify_days", "justify_hours", "justify_interval") and n == 1 and args[0].name in ("interval", "unknown"):
        return [INTERVAL], INTERVAL
    if name == "to_char" and n == 2 and args[0].name in ("timestamp", "timestamptz", "date"):
        return [args[0] if args[0].name != "date" else TIMESTAMP, TEXT], TEXT
    if name == "to_char" and n == 2 and args[0].name in NUMBER_FORMAT_TYPES and args[1].name in ("text", "unknown"):
        # to_char(int4 | int8 | numeric, text) (sql.numfmt); int2 is int4 as Postgres casts it
        return [INT4 if args[0].name == "int2" else args[0], TEXT], TEXT
    if name == "to_char" and n == 2 and args[0].name in ("float4", "float8"):
        raise SqlError(FEATURE_NOT_SUPPORTED, f"to_char({args[0].pg_format()}, text) not yet supported")
    if name == "age" and n in (1, 2) and all(a.name in ("timestamp", "timestamptz", "date", "unknown") for a in args):
        t = TIMESTAMPTZ if any(a.name == "timestamptz" for a in args) else TIMESTAMP
        return [t] * n, INTERVAL
    raise _no_function(name, args)


AGGREGATES = {"count", "sum", "avg", "min", "max", "bool_or", "bool_and", "any_value",
              "stddev_samp", "stddev_pop", "var_samp", "var_pop", "string_agg", "array_agg"}
# Postgres' spellings that are another aggregate
AGGREGATE_ALIASES = {"every": "bool_and", "stddev": "stddev_samp", "variance": "var_samp"}
STATISTICAL_AGGREGATES = frozenset({"stddev_samp", "stddev_pop", "var_samp", "var_pop"})
# two-argument float8 statistics (Postgres' float8_regr_accum family), `f(y, x)`
REGRESSION_AGGREGATES = frozenset({"regr_count", "regr_sxx", "regr_syy", "regr_sxy", "regr_avgx", "regr_avgy", "regr_r2",
                                   "regr_slope", "regr_intercept", "covar_pop", "covar_samp", "corr"})


def array_of(t: SqlType) -> SqlType:
    """The one-dimensional array type of element type `t`; 0A000 for arrays of arrays."""
    from sql.errors import unsupported
    from sql.types import TYPE_INFOS

    name = "_" + t.name
    if t.element is not None or name not in TYPE_INFOS:
        raise unsupported(f"arrays of type {t.pg_format()}")
    return SqlType(name)


def aggregate_type(name: str, arg: SqlType) -> SqlType:
    """Result type of an aggregate (Postgres rules: sum(int4) -> int8, sum(int8) -> numeric)."""
    if name == "count":
        return INT8
    if name in ("min", "max", "any_value"):
        return arg if arg.name != "unknown" else TEXT
    if name in STATISTICAL_AGGREGATES:
        if arg.name in ("int2", "int4", "int8", "numeric", "uint8", "unknown"):
            return NUMERIC
        if arg.name in ("float4", "float8"):
            return FLOAT8
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({arg.pg_format()}) does not exist")
    if name == "array_agg":
        return array_of(arg if arg.name != "unknown" else TEXT)
    if name in ("bool_or", "bool_and"):
        if arg.name in ("bool", "unknown"):
            return BOOL
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({arg.pg_format()}) does not exist")
    n = arg.name
    if name == "sum":
        if n in ("int2", "int4"):
            return INT8
        if n in ("int8", "numeric", "uint8"):
            return NUMERIC
        if n in ("float4", "float8"):
            return SqlType(n)
        if n == "interval":
            return INTERVAL
        if n == "unknown":
            return NUMERIC
    if name == "avg":
        if n in ("int2", "int4", "int8", "numeric", "uint8", "unknown"):
            return NUMERIC
        if n in ("float4", "float8"):
            return FLOAT8
        if n == "interval":
            return INTERVAL
    raise SqlError(UNDEFINED_FUNCTION, f"function {name}({arg.pg_format()}) does not exist")


# jsonb operators: symbol -> {right operand kind: (right type, function, result)}
_JSONB_OPS = {
    "->": {"text": (TEXT, "jsonb_get_field", JSONB), "int": (INT4, "jsonb_get_index", JSONB)},
    "->>": {"text": (TEXT, "jsonb_get_field_text", TEXT), "int": (INT4, "jsonb_get_index_text", TEXT)},
    "#>": {"text[]": (TEXT_ARRAY, "jsonb_get_path", JSONB)},
    "#>>": {"text[]": (TEXT_ARRAY, "jsonb_get_path_text", TEXT)},
    "?": {"text": (TEXT, "jsonb_exists", BOOL)},
    "?|": {"text[]": (TEXT_ARRAY, "jsonb_exists_any", BOOL)},
    "?&": {"text[]": (TEXT_ARRAY, "jsonb_exists_all", BOOL)},
    "#-": {"text[]": (TEXT_ARRAY, "jsonb_delete_path", JSONB)},
    "-": {"int": (INT4, "jsonb_delete_index", JSONB), "text": (TEXT, "jsonb_delete_key", JSONB),
          "text[]": (TEXT_ARRAY, "jsonb_delete_keys", JSONB)},
}


def jsonb_operator(op: str, a: SqlType, b: SqlType) -> tuple[SqlType, SqlType, SqlType, str]:
    """(left type, right type, result type, function) of `a op b` for the jsonb operators;
    an unknown right operand is text (or text[] for the path and key-set operators)."""
    if a.name not in ("jsonb", "unknown"):
        raise SqlError(UNDEFINED_FUNCTION, f"operator does not exist: {a.pg_format()} {op} {b.pg_format()}",
                       hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
    forms = _JSONB_OPS[op]
    if b.name in ("int2", "int4") and "int" in forms:
        kind = "int"
    elif b.name == "unknown" or (b.is_string and "text" in forms):
        kind = "text" if "text" in forms else "text[]"
    elif b == TEXT_ARRAY or is_array(b) and b.element is not None and b.element.is_string:
        kind = "text[]"
    else:
        kind = ""
    if kind not in forms:
        raise SqlError(UNDEFINED_FUNCTION, f"operator does not exist: jsonb {op} {b.pg_format()}",
                       hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
    rt, name, res = forms[kind]
    return JSONB, rt, res, name


# scalar types whose to_jsonb we render exactly (numeric needs its scale: a typmod)
TO_JSONB_TYPES = frozenset({"int2", "int4", "int8", "float8", "bool", "text", "varchar", "bpchar", "name", "jsonb"})


def to_jsonb_check(t: SqlType) -> None:
    """0A000 unless to_jsonb(<t>) renders exactly like Postgres."""
    from sql.errors import unsupported

    if t.name in TO_JSONB_TYPES:
        return
    if t.name == "numeric" and t.numeric_precision_scale() is not None:
        return
    raise unsupported(f"to_jsonb of {'unconstrained ' if t.name == 'numeric' else ''}{t.pg_format()} values")


# Every scalar function name `function_type` types (as the user writes it: `div`, not the
# internal `intdiv`); the binder adds the jsonb constructors and the SQL value functions.
SCALAR_FUNCTIONS = frozenset(
    {"abs", "round", "trunc", "ceil", "ceiling", "floor", "sign", "sqrt", "exp", "ln", "log", "log10", "cbrt", "sin",
     "cos", "tan", "asin", "acos", "atan", "atan2", "radians", "degrees", "gcd", "lcm", "div", "mod", "power", "pow",
     "width_bucket", "starts_with", "regexp_replace", "regexp_match", "greatest", "least", "jsonb_typeof",
     "jsonb_array_length", "now", "mz_now", "substring", "unistr"}
    | regex.REGEX_FUNCTIONS | _INT_FUNCS | _STRING_FUNCS_TEXT | _ARRAY_FUNCS | _DATETIME_FUNCS | set(BYTEA_FUNCS)
)
