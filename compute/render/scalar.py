"""MIR scalar -> Spark SQL expression text, with Postgres semantics where Spark's differ.

Expressions are rendered as text (one JVM parse per query instead of one py4j round trip per
expression node). Every rendered expression is fully parenthesised so composing texts never
depends on Spark's operator precedence; `cols` are the texts of the input columns.
"""

from __future__ import annotations

import re
from typing import assert_never

from compute.render import limits, numeric_udfs, numfmt_udfs, ordered_set, scalar_bytea, templates
from compute.render import regex as regex_udfs
from compute.render.jsonb import GUARDED, checked
from compute.render.regex import render_find, render_regex
from compute.render.scalar_bytea import render_bytea
from compute.render.scalar_datetime import (
    at_time_zone,
    fit_typmod,
    make_date,
    make_timestamp,
)
from compute.render.scalar_intervals import (
    age_of,
    datetime_unit_call,
    interval_arith,
    interval_extreme,
    interval_struct,
    justify,
)
from compute.render.scalar_text import chr_text, like_pattern, like_pattern_escape, trim_chars
from compute.render.spark_sql import (
    COMPARISONS,
    INTS,
    cast,
    fresh_var,
    let_bind,
    lit,
    quote,
    raise_error,
)
from sql import func, func_names
from sql.errors import unsupported
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    ParamLiteral,
    Scalar,
    record_get_index,
)
from sql.types import SqlType

_STRICT = func_names.strict_functions(func.SCALAR_FUNCTIONS)
_LONG_ARGUMENT = 400


def render_scalar(e: Scalar, cols: list[str]) -> str:
    """Spark SQL for `e`. A strict function of a NULL argument is NULL, whatever Spark's
    function of that name does with one (greatest() skips NULLs, so substr(s, NULL) was s)."""
    match e:
        case CallBinary(func=f, expr1=a, expr2=b) if f in _STRICT:
            return _strict(e, [a, b], cols)
        case CallVariadic(func=f, exprs=xs) if f in _STRICT:
            return _strict(e, list(xs), cols)
    return _render(e, cols, lambda x: render_scalar(x, cols))


def _numeric_udf(e: Scalar) -> bool:
    """Is `e` computed by compute.render.numeric_udfs' Python UDF?"""
    match e:
        case CallUnary(func=f, typ=t):
            return f in numeric_udfs.UNARY_FUNCTIONS and numeric_udfs.python_udf(f) and t.name == "numeric"
        case CallBinary(func=f, typ=t) | CallVariadic(func=f, typ=t):
            return f in numeric_udfs.BINARY_FUNCTIONS and numeric_udfs.python_udf(f) and t.name == "numeric"
    return False


def _strict(e: Scalar, args: list[Scalar], cols: list[str]) -> str:
    """`e` with its arguments rendered once, NULL when one that may be NULL is (a long one is
    bound once with let_bind, so nested strict calls do not repeat their text)."""
    rendered = [render_scalar(a, cols) for a in args]
    nullable = [i for i, a in enumerate(args) if not (isinstance(a, Literal) and a.value is not None)]

    def body(texts: list[str]) -> str:
        by_id = {id(a): t for a, t in zip(args, texts, strict=True)}
        return _render(e, cols, lambda x: by_id[id(x)] if id(x) in by_id else render_scalar(x, cols))

    def guarded(texts: list[str]) -> str:
        if not nullable:
            return body(texts)
        long = [i for i in nullable if len(texts[i]) > _LONG_ARGUMENT and not texts[i].startswith("_v")]
        if _numeric_udf(e):
            long = []  # Spark refuses a Python UDF inside a lambda (let_bind's binding)
        if long:
            k = long[0]
            return let_bind(texts[k], lambda v: guarded([*texts[:k], v, *texts[k + 1:]]))
        test = " OR ".join(f"{texts[i]} IS NULL" for i in nullable)
        return f"(CASE WHEN {test} THEN NULL ELSE {body(texts)} END)"

    return guarded(rendered)


def _render(e: Scalar, cols: list[str], r) -> str:
    """The Spark SQL of one scalar node; `r` renders a child."""
    match e:
        case Column(index=i):
            return cols[i]
        case ParamLiteral(value=v, typ=t):
            return templates.marked(lit(v, t))
        case Literal(value=v, typ=t):
            return lit(v, t)
        case CallUnary(func=f, expr=x, typ=t):
            if (i := record_get_index(f)) is not None:
                return f"({r(x)}).f{i}"
            return _unary(f, r(x), x.typ, t)
        case CallBinary(func=("extract" | "date_part" | "date_trunc") as f, expr1=Literal(value=unit), expr2=b, typ=t):
            return datetime_unit_call(f, unit, r(b), b.typ, t)
        case CallBinary(func="to_char" | "to_number" as f, expr1=a, expr2=b) if f == "to_number" or a.typ.name in func.NUMBER_FORMAT_TYPES:
            return numfmt_udfs.call(f, r(a), r(b), a.typ)
        case CallBinary(func="to_timestamp", expr1=a, expr2=b):  # text_udfs: epoch microseconds or an error
            return f"timestamp_micros({checked(f'mz_to_timestamp({r(a)}, {r(b)})', 'BIGINT')})"
        case CallBinary(func="to_char", expr1=a, expr2=Literal(value=str() as pattern)):
            return _to_char(r(a), pattern)
        case CallBinary(func="like_pattern_escape", expr1=p, expr2=Literal(value=str() as escape)):
            return like_pattern_escape(r(p), escape)
        case CallBinary(func="regexp_match", expr1=a, expr2=Literal(value=str() as pattern)):
            return _regexp_match(r(a), pattern)
        case CallVariadic(func=("regexp_count" | "regexp_instr" | "regexp_substr" | "regexp_like" | "regexp_split_to_array"
                                | "regexp_replace_from") as f, exprs=(a, *lits)):
            return render_regex(f, r(a), tuple(lits))
        case CallVariadic(func="regexp_match", exprs=(a, Literal(value=str() as pattern), Literal(value=str() as flags))):
            return _regexp_match(r(a), pattern, flags)
        case CallVariadic(func="regexp_replace", exprs=(a, Literal(value=str() as pat), Literal(value=str() as rep), *flags)):
            return _regexp_replace(r(a), pat, rep, *(f.value for f in flags if isinstance(f, Literal)))
        case CallBinary(func=("round" | "trunc") as f, expr1=a, expr2=b, typ=t) if t.name == "numeric" and not isinstance(b, Literal):
            return numeric_udfs.call(f, [r(a), r(b)], [a.typ, b.typ])
        case CallBinary(func=("eq" | "ne") as f, expr1=a, expr2=b) if (x_lit := _bpchar_and_literal(a, b)) is not None:
            x, value = x_lit
            return bpchar_equals_text(r(x), value, negate=f == "ne")
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return _binary(f, r(a), r(b), a.typ, b.typ, t)
        case CallVariadic(func="or", exprs=xs) if len(xs) > 1:
            texts = [r(x) for x in xs]
            return _or(texts, [_plain_eq_literal(x, t, r) for x, t in zip(xs, texts, strict=True)])
        case CallVariadic(func=f, exprs=xs, typ=t):
            return _variadic(f, [r(x) for x in xs], [x.typ for x in xs], t)
        case If(cond=c, then=a, els=b):
            return f"(CASE WHEN {r(c)} THEN {r(a)} ELSE {r(b)} END)"
        case _:
            assert_never(e)


def _bpchar_and_literal(a: Scalar, b: Scalar) -> tuple[Scalar, str] | None:
    """(x, v) when `a = b` compares a char(n) expression x with a non-NULL char literal v."""
    if a.typ.name != "bpchar" or b.typ.name != "bpchar":
        return None
    if isinstance(b, Literal) and isinstance(b.value, str):
        return a, b.value
    if isinstance(a, Literal) and isinstance(a.value, str):
        return b, a.value
    return None


def bpchar_equals_text(x: str, value: str, negate: bool = False) -> str:
    """x = 'v' over char(n), trailing blanks insignificant (bpchareq), with v' = v without
    its trailing blanks:

        rtrim(x) = v'  =  startswith(x, v') AND rtrim(x) = v'

    (the prefix test is implied). Spark pushes the prefix test down to the Parquet scan and
    evaluates it without copying the value, so only the rows that start with v' are
    trimmed (TPC-H's `l_shipmode IN ('MAIL', 'SHIP')` over 6M rows)."""
    v = lit(value.rstrip(" "), SqlType("text"))
    test = f"(startswith({x}, {v}) AND rtrim({x}) = {v})"
    return f"(NOT {test})" if negate else test


def _cast(x: str, src: SqlType, dst: SqlType) -> str:
    s, d = src.name, dst.name
    if s in ("interval", "time") and dst.is_string:
        # their text output first (an interval in IntervalStyle postgres: the binder refuses
        # the cast under another style), then text -> the string type
        x, src, s = (_interval_text(x) if s == "interval" else _time_text(x)), SqlType("text"), "text"
        if d == "text":
            return x
    if d == "jsonb" and s != "jsonb":
        return checked(f"mz_jsonb_in({x})")  # parse and canonicalise like jsonb_in
    if _is_array(src) and d in ("text", "varchar"):
        if src.element is not None and src.element.name == "interval":
            return f"mz_interval_array_out({x})"  # its elements' text is a Python UDF (text_udfs)
        return _array_text(x, src)
    if s == "record" and d in ("text", "varchar"):
        return _record_text(x, src)
    if _is_array(src) and _is_array(dst):
        v = fresh_var()
        return f"transform({x}, {v} -> {_cast(v, src.element, dst.element)})"  # type: ignore[arg-type]
    if d in INTS and s in ("float4", "float8"):
        return cast(f"bround({x}, 0)", dst)  # rint(): half to even
    if d in INTS and s == "numeric":
        return cast(f"round({x}, 0)", dst)  # half away from zero
    if d == s == "numeric" and dst.numeric_precision_scale() is None:
        return x  # numeric -> numeric without a typmod keeps every digit
    if d == "numeric" and s in ("float4", "float8"):
        # float8_numeric / float4_numeric: the value printed to 15 / 6 significant digits
        # (Java's %g rounds the exact binary value half up, as C's printf does but for exact ties)
        # NaN is 0A000 and +-Infinity 22003 as for a literal (sql.literal): Spark's decimal has
        # neither, and its CAST makes them NULL (was: NULL, stored by INSERT)
        digits = 6 if s == "float4" else 15
        printed = f"format_string('%.{digits}g', CAST({x} AS DOUBLE))"
        nan = raise_error("[0A000] numeric value NaN not yet supported", dst)
        inf = raise_error("[22003] cannot convert infinity to numeric", dst)
        # (a NULL first: format_string prints it as the text 'null')
        return (f"(CASE WHEN {x} IS NULL THEN {cast(x, dst)} WHEN isnan({x}) THEN {nan}"
                f" WHEN abs({x}) = CAST('Infinity' AS DOUBLE) THEN {inf} ELSE {cast(printed, dst)} END)")
    if d == "name" and s != "name":
        # at most 63 bytes of UTF-8, cut at a character boundary
        y, k = f"CAST({x} AS STRING)", fresh_var()
        longest = f"try_element_at(filter(transform(sequence(63, 1, -1), {k} -> left({y}, {k})), {k} -> octet_length({k}) <= 63), 1)"
        return f"(CASE WHEN octet_length({y}) <= 63 THEN {y} ELSE {longest} END)"
    if d == "varchar" and s == "bpchar":
        x = f"rtrim({x})"  # char(n) -> varchar drops the blank padding (rtrim1), then fits
    if d in ("varchar", "bpchar") and (n := dst.char_length()) is not None:
        y = f"substring(CAST({x} AS STRING), 1, {n})"
        return f"rpad({y}, {n}, ' ')" if d == "bpchar" else y
    if d == "uuid" and s in ("text", "varchar", "bpchar", "name"):
        # Postgres' uuid input: 32 hex digits, optionally in braces and hyphen-separated in
        # groups of 4; stored in the canonical lower-case 8-4-4-4-12 form
        h = f"lower(regexp_replace({x}, '[{{}}-]', ''))"
        ok = f"({x} RLIKE {_UUID_RE})"
        canon = f"concat_ws('-', substr({h}, 1, 8), substr({h}, 9, 4), substr({h}, 13, 4), substr({h}, 17, 4), substr({h}, 21, 12))"
        bad = raise_error("[22P02] invalid input syntax for type uuid")
        return f"(CASE WHEN {x} IS NULL THEN NULL WHEN {ok} THEN {canon} ELSE {bad} END)"
    if d == "bytea" and s in ("text", "varchar", "bpchar", "name"):
        return _bytea_in(x)
    if d == "interval" and s in ("text", "varchar", "bpchar", "name"):
        # interval_in as a UDF (compute.render.text_udfs): "months days micros"
        v = fresh_var()
        parts = f"split({v}, ' ')"
        fields = (f"CAST(element_at({parts}, {i}) AS {t})" for i, t in ((1, "INT"), (2, "INT"), (3, "BIGINT")))
        parsed = checked(f"mz_interval_in(CAST({x} AS STRING), {dst.typmod})")
        return f"(CASE WHEN {x} IS NULL THEN NULL ELSE element_at(transform(array({parsed}), {v} -> {interval_struct(*fields)}), 1) END)"
    if d == "mz_timestamp" and s in ("timestamptz", "timestamp", "date"):
        return f"unix_millis(CAST({x} AS TIMESTAMP))"
    if s == "mz_timestamp" and d in ("timestamptz", "timestamp"):
        return cast(f"timestamp_millis({x})", dst)
    if d == "bool" and s in INTS:
        return f"({x} <> 0)"
    if d in INTS and s == "bool":
        return cast(f"(CASE WHEN {x} THEN 1 WHEN NOT {x} THEN 0 END)", dst)  # NULL stays NULL
    if d in ("text", "varchar") and s == "bool":
        return f"(CASE WHEN {x} THEN 'true' WHEN NOT {x} THEN 'false' END)"
    if d in ("text", "varchar") and s == "bpchar":
        return x if d == "varchar" else f"rtrim({x})"
    if d in ("text", "varchar") and s in ("float4", "float8"):
        return f"mz_{s}_text({x})"
    if d == "numeric" and s in ("text", "varchar", "bpchar", "name"):
        # numeric_in's NaN / Infinity spellings: 0A000 as for a literal (Spark would say 22P02)
        special = f"lower(trim({x})) IN ('nan', 'infinity', '+infinity', '-infinity', 'inf', '+inf', '-inf')"
        return f"(CASE WHEN {special} THEN {raise_error('[0A000] numeric value NaN or Infinity not yet supported', dst)} ELSE {cast(x, dst)} END)"
    if d in ("text", "varchar") and s == "numeric" and src.numeric_precision_scale() is None:
        # as results are sent (compute.render.types): without the storage scale's zeros
        return f"regexp_replace(regexp_replace(CAST({x} AS STRING), '([.][0-9]*?)0+$', '$1'), '[.]$', '')"
    return cast(x, dst)


def _bytea_in(x: str) -> str:
    """byteain of a computed text: '\\x' and pairs of hex digits (decode(.., 'hex') of the
    rest), else the escape format (decode(.., 'escape'))."""
    return (f"(CASE WHEN {x} IS NULL THEN CAST(NULL AS BINARY) WHEN startswith({x}, {quote(chr(92) + 'x')})"
            f" THEN {scalar_bytea.decode_hex(f'substr({x}, 3)')} ELSE {scalar_bytea.decode_escape(x)} END)")


def _interval_text(x: str) -> str:
    """interval_out (IntervalStyle postgres), by compute.render.text_udfs."""
    return f"mz_interval_out({x}.months, {x}.days, {x}.micros)"  # NULL fields: NULL


def _time_text(x: str) -> str:
    """time_out of microseconds since midnight: HH:MM:SS, then the fraction without its
    trailing zeros."""
    def two(e: str) -> str:
        return f"lpad(CAST({e} AS STRING), 2, '0')"
    frac = f"CASE WHEN {x} % 1000000 = 0 THEN '' ELSE concat('.', regexp_replace(lpad(CAST({x} % 1000000 AS STRING), 6, '0'), '0+$', '')) END"
    return f"concat({two(f'div({x}, 3600000000)')}, ':', {two(f'div({x}, 60000000) % 60')}, ':', {two(f'div({x}, 1000000) % 60')}, {frac})"


def _regexp_replace(x: str, pattern: str, repl: str, *flags: str) -> str:
    """Postgres regexp_replace: the first match only, unless flag g."""
    from sql.regex import regex_call

    jp, jr, glob = regex_call("regexp_replace", pattern, repl, *flags)
    assert jr is not None
    if glob:
        return regex_udfs.replace(x, quote(jp), quote(jr))
    # the first match: a lazy prefix group before it, the match group 2, its groups' references
    # shifted by two (\& = $0, the whole match, is group 2)
    shifted = re.sub(r"(?<!\\)\$(\d)", lambda m: f"${int(m.group(1)) + 2}", jr)
    mode = "(?i)" if jp.startswith("(?i)") else ""
    body = jp[4:] if mode else jp
    return regex_udfs.replace(x, quote(f'{mode}(?s)^(.*?)({body})'), quote('$1' + shifted))


def _regexp_match(x: str, pattern: str, *flags: str) -> str:
    """Postgres regexp_match: the capture groups of the first match (the whole match when the
    pattern has none), NULL when nothing matches."""
    from sql.regex import regex_call

    jp, _, _ = regex_call("regexp_match", pattern, *flags)
    groups = len(re.findall(r"(?<!\\)\((?!\?)", jp))
    idx = range(1, groups + 1) if groups else [0]
    elems = ", ".join(regex_udfs.extract(x, quote(jp), i) for i in idx)
    return f"(CASE WHEN {render_find(x, quote(jp))} THEN array({elems}) END)"


def _gcd(a: str, b: str) -> str:
    """Euclid's algorithm, unrolled by `aggregate` (93 steps bound any 64-bit pair)."""
    v = fresh_var()
    step = f"CASE WHEN {v}.b = 0 THEN {v} ELSE named_struct('a', {v}.b, 'b', {v}.a % {v}.b) END"
    return f"aggregate(sequence(1, 93), named_struct('a', abs({a}), 'b', abs({b})), ({v}, _i) -> {step}).a"


def _to_char(x: str, pattern: str) -> str:
    from sql.datetime_units import to_char_pattern

    return f"date_format({x}, {quote(to_char_pattern(pattern))})"


_SAME_NAME_UNARY = ("abs", "lower", "upper", "octet_length", "bit_length", "ltrim", "rtrim", "reverse", "initcap", "md5",
                    "ascii", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "radians", "degrees")
_TYPED_UNARY = {"ceil": "ceil", "floor": "floor", "sign": "signum", "sqrt": "sqrt", "exp": "exp", "ln": "ln", "log10": "log10"}


_UUID_RE = quote(r"^(\{[0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7}\}|[0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7})$")


def _is_array(t: SqlType) -> bool:
    return t.name.startswith("_") and t.element is not None


_ARRAY_SPECIAL = quote(r'[{},"\\\s]')
_BACKSLASH, _BACKSLASH2, _DQUOTE, _DQUOTE_ESC = quote("\\"), quote("\\\\"), quote('"'), quote('\\"')


def _array_text(x: str, t: SqlType) -> str:
    """An array's Postgres text form: {a,"b c",NULL} (elements quoted when they must be)."""
    v, e = fresh_var(), t.element
    assert e is not None
    txt = _cast(v, e, SqlType("text"))
    escaped = f"replace(replace({txt}, {_BACKSLASH}, {_BACKSLASH2}), {_DQUOTE}, {_DQUOTE_ESC})"
    quoted = (f"(CASE WHEN {txt} = '' OR upper({txt}) = 'NULL' OR {txt} RLIKE {_ARRAY_SPECIAL}"
              f" THEN concat({_DQUOTE}, {escaped}, {_DQUOTE}) ELSE {txt} END)")
    return f"concat('{{', array_join(transform({x}, {v} -> CASE WHEN {v} IS NULL THEN 'NULL' ELSE {quoted} END), ','), '}}')"


_RECORD_SPECIAL = quote(r'[",\\()\s]')


def _record_text(x: str, t: SqlType) -> str:
    """A record's Postgres text form (record_out): (a,"b c",) -- a NULL field is empty, a field
    that is empty or holds a quote, backslash, comma, parenthesis or space is quoted, with
    quotes and backslashes doubled."""
    if not t.fields:
        raise unsupported("casting a record of unknown field types to text")
    parts, x = [], f"({x})"
    for i, ft in enumerate(t.fields):
        txt = _cast(f"{x}.f{i}", ft, SqlType("text"))
        doubled = f"replace(replace({txt}, {_BACKSLASH}, {_BACKSLASH2}), {_DQUOTE}, '\"\"')"
        parts.append(f"(CASE WHEN {x}.f{i} IS NULL THEN '' WHEN {txt} = '' OR {txt} RLIKE {_RECORD_SPECIAL}"
                     f" THEN concat({_DQUOTE}, {doubled}, {_DQUOTE}) ELSE {txt} END)")
    return f"(CASE WHEN {x} IS NULL THEN NULL ELSE concat('(', concat_ws(',', {', '.join(parts)}), ')') END)"


def array_order_key(a: str) -> str:
    """An array whose Spark ordering is Postgres' array ordering: element by element, a NULL
    element after every value (Spark puts NULL first), then the shorter array first."""
    v = fresh_var()
    return f"transform({a}, {v} -> named_struct('n', {v} IS NULL, 'v', {v}))"


def _array_binary(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str | None:
    """Array functions and operators of two arguments (None: not one of them)."""
    match f:
        case "array_index":
            return f"(CASE WHEN {b} >= 1 THEN try_element_at({a}, {b}) END)"
        case "array_length" | "array_upper":
            return f"(CASE WHEN {b} = 1 AND size({a}) > 0 THEN size({a}) END)"
        case "array_lower":
            return f"(CASE WHEN {b} = 1 AND size({a}) > 0 THEN 1 END)"
        case "array_to_string":
            v = fresh_var()
            return f"array_join(transform({a}, {v} -> {_cast(v, at.element, SqlType('text'))}), {b})"  # type: ignore[arg-type]
        case "array_position":
            v = fresh_var()
            return f"CAST(nullif(array_position(transform({a}, {v} -> {v} <=> {b}), TRUE), 0) AS INT)"
        case "array_remove":
            v = fresh_var()
            return f"filter({a}, {v} -> NOT ({v} <=> {b}))"
        case "array_cat":
            return f"(CASE WHEN {a} IS NULL THEN {b} WHEN {b} IS NULL THEN {a} ELSE concat({a}, {b}) END)"
        case "array_append":
            return f"(CASE WHEN {a} IS NULL THEN array({b}) ELSE concat({a}, array({b})) END)"
        case "array_prepend":
            return f"(CASE WHEN {b} IS NULL THEN array({a}) ELSE concat(array({a}), {b}) END)"
        case "concat" if _is_array(at) and _is_array(bt):
            return _array_binary("array_cat", a, b, at, bt, t)
        case "concat" if _is_array(at):
            return _array_binary("array_append", a, b, at, bt, t)
        case "concat" if _is_array(bt):
            return _array_binary("array_prepend", a, b, at, bt, t)
        case "array_contains" | "array_contained":
            big, small = (a, b) if f == "array_contains" else (b, a)
            x, y = fresh_var(), fresh_var()
            return (f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN"
                    f" forall({small}, {y} -> exists({big}, {x} -> coalesce({x} = {y}, FALSE))) END)")
        case "array_overlap":
            x, y = fresh_var(), fresh_var()
            return (f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN"
                    f" exists({a}, {x} -> exists({b}, {y} -> coalesce({x} = {y}, FALSE))) END)")
    if f in ("lt", "le", "gt", "ge") and _is_array(at) and _is_array(bt):
        return f"({array_order_key(a)} {COMPARISONS[f]} {array_order_key(b)})"
    if f.endswith(("_any", "_all")) and f[:-4] in COMPARISONS:
        v = fresh_var()
        test = _binary(f[:-4], a, v, at, bt.element, SqlType("bool"))  # type: ignore[arg-type]
        return f"{'exists' if f.endswith('_any') else 'forall'}({b}, {v} -> {test})"
    return None


def _jsonb_unary(f: str, x: str, xt: SqlType) -> str | None:
    """to_jsonb, jsonb_typeof, jsonb_array_length (None: not one of them)."""
    if f in GUARDED:
        return checked(f"mz_{f}({x})")
    match f:
        case "to_jsonb":
            n = xt.name
            if n in INTS:
                return f"CAST({x} AS STRING)"
            if n == "bool":
                return f"(CASE WHEN {x} THEN 'true' WHEN NOT {x} THEN 'false' END)"
            if n == "numeric":
                return f"mz_jsonb_numeric({x})"
            if n == "float8":
                return f"mz_jsonb_float({x})"
            if xt.is_string:
                return f"mz_jsonb_quote({x})"
            if n == "jsonb":
                return x
            raise unsupported(f"to_jsonb of type {xt.pg_format()}")
        case "jsonb_typeof":
            # canonical text: the first character tells the type
            c = f"substr({x}, 1, 1)"
            return (f"(CASE {c} WHEN '{{' THEN 'object' WHEN '[' THEN 'array' WHEN '\"' THEN 'string'"
                    f" WHEN 't' THEN 'boolean' WHEN 'f' THEN 'boolean' WHEN 'n' THEN 'null' WHEN '' THEN NULL"
                    f" ELSE nvl2({x}, 'number', NULL) END)")
        case "jsonb_array_length":
            return checked(f"mz_jsonb_array_length({x})", "INT")
    return None


def _jsonb_binary(f: str, a: str, b: str, at: SqlType) -> str | None:
    """jsonb operators of two operands (None: not one of them)."""
    if f in GUARDED:
        return checked(f"mz_{f}({a}, {b})")
    if f.startswith(("jsonb_get_", "jsonb_exists", "jsonb_contains")):
        return f"mz_{f}({a}, {b})"
    if f in ("eq", "ne") and at.name == "jsonb":
        # equal texts are equal values; different texts can be equal values only when
        # numbers differ in scale (1.0 vs 1), which needs a '.' in one of them
        eq = (f"(CASE WHEN {a} = {b} THEN TRUE WHEN instr({a}, '.') = 0 AND instr({b}, '.') = 0 THEN"
              f" FALSE ELSE mz_jsonb_eq({a}, {b}) END)")
        return eq if f == "eq" else f"(NOT {eq})"
    return None


def _unary(f: str, x: str, xt: SqlType, t: SqlType) -> str:
    if (j := _jsonb_unary(f, x, xt)) is not None:
        return j
    if f == "mode_final":
        return ordered_set.mode(x, t)
    if f == "like_pattern":
        return like_pattern(x, xt.name == "bytea")
    if f == "cardinality":
        return f"(CASE WHEN {x} IS NOT NULL THEN size({x}) END)"
    if f in ("justify_days", "justify_hours", "justify_interval"):
        return f"(CASE WHEN {x} IS NOT NULL THEN {justify(f, x)} END)"
    if f == "neg" and xt.name == "interval":
        return f"(CASE WHEN {x} IS NOT NULL THEN {interval_struct(f'(- {x}.months)', f'(- {x}.days)', f'(- {x}.micros)')} END)"
    if f == "array_ndims":
        return f"(CASE WHEN size({x}) > 0 THEN 1 END)"
    if f in _SAME_NAME_UNARY:
        return f"{f}({x})"
    if xt.name == "bytea" and f in func.BYTEA_FUNCS and (out := render_bytea(f, [x])) is not None:
        return out
    if f == "chr":
        return chr_text(x)
    if f in func.SHA2_FUNCS:
        return f"unhex(sha2({x}, {func.SHA2_FUNCS[f]}))"
    if f == "min_scale":
        return cast(numeric_udfs.call(f, [x], [xt]), t)
    if f in numeric_udfs.UNARY_FUNCTIONS and t.name == xt.name == "numeric":
        return numeric_udfs.call(f, [x], [xt])
    if f in _TYPED_UNARY:
        return cast(f"{_TYPED_UNARY[f]}({x})", t)
    match f:
        case "not":
            return f"(NOT {x})"
        case "neg":
            return f"(- {x})"
        case "is_null":
            return f"({x} IS NULL)"
        case "is_true":
            return f"coalesce({x}, FALSE)"
        case "is_false":
            return f"coalesce(NOT {x}, FALSE)"
        case "cast":
            return fit_typmod(_cast(x, xt, t), t)
        case "length" | "char_length":
            return f"length({x})"
        case "btrim":
            return f"trim({x})"
        case "round":
            return f"bround({x}, 0)" if xt.name in ("float4", "float8") else f"round({x}, 0)"
        case "trunc":
            return cast(f"(CASE WHEN {x} >= 0 THEN floor({x}) ELSE ceil({x}) END)", t)
        case "to_hex":
            return f"lower(hex({x}))"
        case "unistr":
            return checked(f"mz_unistr({x})")
    raise unsupported(f"function {f}")




def _binary(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str:
    if at.name == "bytea" and f in func.BYTEA_FUNCS and (out := render_bytea(f, [a, b])) is not None:
        return out
    if (j := _jsonb_binary(f, a, b, at)) is not None:
        return j
    if f in numeric_udfs.FUNCTIONS and f not in ("round", "trunc") and t.name == "numeric" and at.name == "numeric" \
            and (bt.name == "numeric" or f == "div_avg" and bt.name in INTS):
        return numeric_udfs.call(f, [a, b], [at, bt])
    if f.startswith(("percentile_cont", "percentile_disc")):
        return ordered_set.percentile(f, a, b, t)
    if (arr := _array_binary(f, a, b, at, bt, t)) is not None:
        return arr
    if "interval" in (at.name, bt.name) or "time" in (at.name, bt.name) or (f == "sub" and at.name in ("timestamp", "timestamptz")):
        if (iv := interval_arith(f, a, b, at, bt, t)) is not None:
            return iv
    if f in COMPARISONS:
        if at.name == bt.name == "bpchar":
            # char(n) compares with trailing blanks insignificant (bpcharcmp): a padded value
            # equals the unpadded literal it was written as (c = 'cd' for char(5) 'cd   ')
            return f"(rtrim({a}) {COMPARISONS[f]} rtrim({b}))"
        return f"({a} {COMPARISONS[f]} {b})"
    match f:
        case "timezone":
            return at_time_zone(a, b, to_local=t.name == "timestamp")
        case "add" | "sub" | "mul":
            if f == "sub" and at.name == "date" and bt.name == "date":
                return f"datediff({a}, {b})"
            if f == "mul" and t.name == at.name == bt.name == "numeric" \
                    and (exact := numeric_udfs.exact_product(a, b, at, bt)) is not None:
                return exact
            e = f"({a} {'+' if f == 'add' else '-' if f == 'sub' else '*'} {b})"
            return cast(e, t) if t.name in INTS else e
        case "div":
            if t.name in INTS:
                # Spark's integral `div` truncates toward zero like Postgres; ANSI raises on 0
                return cast(f"div({a}, {b})", t)
            return f"({a} / {b})"
        case "age":
            return age_of(a, b)
        case "gcd":
            return cast(_gcd(a, b), t)
        case "lcm":
            return cast(f"(CASE WHEN {a} = 0 OR {b} = 0 THEN 0 ELSE abs({a} * {b}) / {_gcd(a, b)} END)", t)
        case "intdiv":
            return cast(f"div({a}, {b})", t)
        case "starts_with":
            return f"startswith({a}, {b})"
        case "encode":
            # the binder admits the literal formats 'hex', 'base64' and 'escape' (PostgreSQL's
            # base64 breaks lines after 76 characters)
            if "'hex'" in b:
                return f"lower(hex({a}))"
            if "'escape'" in b:
                return scalar_bytea.encode_escape(a)
            return f"regexp_replace(regexp_replace(base64({a}), '[\\r\\n]', ''), '(.{{76}})(?=.)', '$1\\n')"
        case "decode" if "'escape'" in b:
            return scalar_bytea.decode_escape(a)
        case "decode" if "'base64'" in b:
            return scalar_bytea.decode_base64(a)
        case "decode":
            return scalar_bytea.decode_hex(a)
        case "log":
            return cast(f"log({a}, {b})", t)
        case "div_avg":
            if t.name == "interval":
                return interval_arith("div", a, b, at, bt, t)  # type: ignore[return-value]
            return f"({a} / {b})"
        case "mod" | "mod_fn":
            return f"({a} % {b})"
        case "pow" | "power":
            return _power(a, b, t)
        case "concat":
            return f"concat({a}, {b})"
        case "like" if at.name == "bytea":
            return f"like(decode({a}, 'ISO-8859-1'), decode({b}, 'ISO-8859-1'))"  # a character per byte
        case "like" | "ilike" | "round":
            return f"{f}({a}, {b})"
        case "trunc":
            return f"round({a} - {a} % CAST(power(10, - {b}) AS DECIMAL(38,10)), {b})"
        case "substr":
            return f"substr({a}, greatest({b}, 1))"
        case "regex_full_match":
            return render_find(a, b)
        case "similar_substring":  # b: a literal Java regex whose group 1 is the result
            return f"(CASE WHEN {render_find(a, b)} THEN {regex_udfs.extract(a, b, 1)} END)"
        case "strpos" | "position":
            return f"instr({a}, {b})"
        case "repeat":
            return limits.repeat(a, b)
        case "lpad" | "rpad":
            return limits.pad(f, a, b, quote(" "))
        case "left":
            # a negative n: all but the last |n| characters (Spark: '')
            return f"(CASE WHEN {b} >= 0 THEN left({a}, {b}) ELSE substr({a}, 1, greatest(char_length({a}) + {b}, 0)) END)"
        case "right":
            # a negative n: all but the first |n| characters
            return f"(CASE WHEN {b} >= 0 THEN right({a}, {b}) ELSE substr({a}, 1 - {b}) END)"
        case "greatest" | "least" if at.name == "interval":
            return interval_extreme(f, [a, b])
        case "atan2" | "greatest" | "least":
            return f"{f}({a}, {b})"
        case "btrim":
            return trim_chars(a, b, leading=True, trailing=True)
        case "ltrim":
            return trim_chars(a, b, leading=True, trailing=False)
        case "rtrim":
            return trim_chars(a, b, leading=False, trailing=True)
        case "raise_error":
            # a [SQLSTATE] prefix lets compute.render.errors recover the state
            return cast(f"raise_error(concat('[', {a}, '] ', {b}))", t)
    raise unsupported(f"function {f}")


def _power(a: str, b: str, t: SqlType) -> str:
    """Postgres' power(): 2201F for 0 ^ negative and negative ^ non-integer (Spark: Infinity,
    NaN); a result beyond the type's range is 22003, not NULL (numeric: one that does not fit
    Materialize's 39 digits fails where Postgres' arbitrary precision has a value)."""
    p = f"power({a}, {b})"
    overflow = "value overflows numeric format" if t.name == "numeric" else "value out of range: overflow"
    # 1 ^ anything and anything ^ 0 are 1, NaN and infinities included (C's pow(); Spark: NaN)
    return (f"(CASE WHEN {a} = 1 OR {b} = 0 THEN {cast('1', t)}"
            f" WHEN {a} = 0 AND {b} < 0 THEN {raise_error('[2201F] zero raised to a negative power is undefined', t)}"
            f" WHEN {a} < 0 AND {b} <> floor({b}) THEN"
            f" {raise_error('[2201F] a negative number raised to a non-integer power yields a complex result', t)}"
            f" WHEN abs({p}) = CAST('Infinity' AS DOUBLE) THEN {raise_error(f'[22003] {overflow}', t)}"
            f" ELSE {cast(p, t)} END)")


def _substr3(a: str, b: str, n: str) -> str:
    """Postgres substr(s, start, len): a start below 1 shortens the length; start + len is
    taken in bigint (a length running past the end of the value is the rest of it, not 22003)."""
    start = f"greatest({b}, 1)"
    length = f"CAST(least(greatest(CAST({b} AS BIGINT) + {n} - {start}, 0), 2147483647) AS INT)"
    return f"(CASE WHEN {n} < 0 THEN {raise_error('negative substring length not allowed')} ELSE substr({a}, {start}, {length}) END)"


def _plain_eq_literal(x: Scalar, text: str, r) -> tuple[str, str] | None:  # type: ignore[no-untyped-def]
    """(e, v) when `x`, an equality of an expression and a literal rendered as `text`, is
    Spark's plain `(e = v)` (no type-specific comparison), else None."""
    if not (isinstance(x, CallBinary) and x.func == "eq"):
        return None
    a, b = (x.expr1, x.expr2) if isinstance(x.expr2, Literal) else (x.expr2, x.expr1)
    if not isinstance(b, Literal) or isinstance(a, Literal):
        return None
    ea, vb = r(a), r(b)
    plain = f"({ea} = {vb})" if a is x.expr1 else f"({vb} = {ea})"
    return (ea, vb) if text == plain else None


def _or(xs: list[str], eqs: list[tuple[str, str] | None]) -> str:
    """A disjunction, its equalities of one expression with literals as one IN list:
    (e = v1) OR .. OR (e = vn) = e IN (v1, .., vn) (both NULL when no value matches and e or
    some vi is NULL). The list takes the place of its first equality, so e is evaluated where
    it was first (TPC-H q22: `substring(c_phone, 1, 2) IN (7 codes)` computed the substring
    once per row instead of 7 times)."""
    groups: dict[str, list[str]] = {}
    for eq in eqs:
        if eq is not None:
            groups.setdefault(eq[0], []).append(eq[1])
    out: list[str] = []
    done: set[str] = set()
    for x, eq in zip(xs, eqs, strict=True):
        if eq is None or len(groups[eq[0]]) < 2:
            out.append(x)
        elif eq[0] not in done:
            done.add(eq[0])
            out.append(f"({eq[0]} IN ({', '.join(groups[eq[0]])}))")
    return out[0] if len(out) == 1 else "(" + " OR ".join(out) + ")"


def _variadic(f: str, xs: list[str], ts: list[SqlType], t: SqlType) -> str:
    if ts and ts[0].name == "bytea" and f in func.BYTEA_FUNCS and (out := render_bytea(f, xs)) is not None:
        return out
    match f:
        case "row":
            return "named_struct(" + ", ".join(f"'f{i}', {x}" for i, x in enumerate(xs)) + ")"
        case "list_create":
            return f"array({', '.join(xs)})" if xs else cast("array()", t)
        case "and" | "or":
            return "(" + f" {f.upper()} ".join(xs) + ")"
        case "array_create":
            return f"array({', '.join(xs)})"
        case "jsonb_set" | "jsonb_insert":
            return checked(f"mz_{f}({', '.join(xs)})")
        case "jsonb_build_array":
            return f"concat('[', array_join(array({', '.join(xs)}), ', ', 'null'), ']')" if xs else "'[]'"
        case "jsonb_build_object":
            if not xs:
                return "'{}'"
            ks, vs = ", ".join(xs[0::2]), ", ".join(xs[1::2])
            return checked(f"mz_jsonb_build_object(array({ks}), array({vs}))")
        case "make_date":
            return make_date(*xs, raise_error)
        case "width_bucket":
            v, lo, hi, n = xs
            bad = raise_error("[2201G] count must be greater than zero", "int")
            same = raise_error("[2201G] lower bound cannot equal upper bound", "int")
            checks = f"WHEN {n} <= 0 THEN {bad}"
            if ts[0].name == "float8":  # Postgres' errors where Spark's width_bucket is NULL
                nan = raise_error("[2201G] operand, lower bound, and upper bound cannot be NaN", "int")
                inf = raise_error("[2201G] lower and upper bounds must be finite", "int")
                checks += (f" WHEN isnan({v}) OR isnan({lo}) OR isnan({hi}) THEN {nan}"
                           f" WHEN abs({lo}) = double('Infinity') OR abs({hi}) = double('Infinity') THEN {inf}")
            return cast(f"(CASE {checks} WHEN {lo} = {hi} THEN {same} ELSE width_bucket({v}, {lo}, {hi}, {n}) END)", t)
        case "make_timestamp" | "make_timestamptz":
            return cast(make_timestamp(xs, raise_error), t)
        case "array_to_string":
            # a NULL null-string is array_to_string(a, sep): NULL elements are skipped
            v = fresh_var()
            elems = f"transform({xs[0]}, {v} -> {_cast(v, ts[0].element, SqlType('text'))})"  # type: ignore[arg-type]
            return f"(CASE WHEN {xs[2]} IS NULL THEN array_join({elems}, {xs[1]}) ELSE array_join({elems}, {xs[1]}, {xs[2]}) END)"
        case "greatest" | "least" if ts and ts[0].name == "interval":
            return interval_extreme(f, xs)
        case "coalesce" | "greatest" | "least" | "concat_ws" | "replace" | "split_part" | "translate":
            return f"{f}({', '.join(xs)})"
        case "concat":
            return "concat(" + ", ".join(f"coalesce({x}, '')" for x in xs) + ")"
        case "mz_now" | "now":
            raise unsupported("mz_now() outside a one-shot SELECT's WHERE/HAVING (temporal filters in maintained dataflows)")
        case "substr":
            return _substr3(xs[0], xs[1], xs[2])
        case "lpad" | "rpad":
            return limits.pad(f, xs[0], xs[1], xs[2] if len(xs) == 3 else quote(" "))
    raise unsupported(f"function {f}")
