"""One sample call of every scalar function in the function table (sql.func.SCALAR_FUNCTIONS),
written as a user writes it, every argument with an explicit type (`value::type`) so that a
NULL of the same type can stand in any position (tests/unit/test_function_names.py,
tests/integration/test_function_calls_vs_postgres.py)."""

from __future__ import annotations

import re

# (function name as written, arguments)
CALLS: list[tuple[str, list[str]]] = [
    ("abs", ["-1.5::numeric"]), ("abs", ["-3::int"]), ("round", ["2.5::numeric"]), ("round", ["2.567::numeric", "1::int"]),
    ("round", ["2.5::float8"]), ("trunc", ["-2.5::numeric"]), ("trunc", ["2.567::numeric", "2::int"]),
    ("ceil", ["1.2::numeric"]), ("ceiling", ["-1.2::float8"]), ("floor", ["-1.5::numeric"]), ("sign", ["-2::int"]),
    ("sign", ["0.5::numeric"]), ("sqrt", ["16::float8"]), ("exp", ["1::float8"]), ("ln", ["10::float8"]),
    ("log", ["100::float8"]), ("log10", ["1000::float8"]), ("log", ["2::numeric", "64::numeric"]),
    ("cbrt", ["27::float8"]), ("sin", ["1::float8"]), ("cos", ["1::float8"]), ("tan", ["1::float8"]),
    ("asin", ["0.5::float8"]), ("acos", ["0.5::float8"]), ("atan", ["0.5::float8"]), ("atan2", ["1::float8", "2::float8"]),
    ("radians", ["180::float8"]), ("degrees", ["1::float8"]), ("gcd", ["12::int", "18::int"]), ("lcm", ["4::int", "6::int"]),
    ("div", ["7::numeric", "2::numeric"]), ("mod", ["7::int", "3::int"]), ("power", ["2::float8", "10::float8"]),
    ("pow", ["2::numeric", "3::numeric"]), ("width_bucket", ["5.5::float8", "0::float8", "10::float8", "4::int"]),
    ("starts_with", ["'abc'::text", "'ab'::text"]), ("regexp_replace", ["'abcb'::text", "'b'::text", "'x'::text"]),
    ("regexp_replace", ["'abcb'::text", "'b'::text", "'x'::text", "'g'::text"]),
    ("regexp_match", ["'abc'::text", "'(b)(c)'::text"]),
    ("regexp_count", ["'abcb'::text", "'b'::text", "2::int"]), ("regexp_like", ["'abc'::text", "'B'::text", "'i'::text"]),
    ("regexp_instr", ["'abcb'::text", "'b'::text", "1::int", "2::int", "1::int"]), ("regexp_substr", ["'abcb'::text", "'b.'::text"]),
    ("regexp_split_to_array", ["'abcb'::text", "'b'::text"]),
    ("regexp_replace", ["'abcb'::text", "'b'::text", "'x'::text", "1::int", "2::int"]), ("greatest", ["1::int", "3::int", "2::int"]),
    ("least", ["1::int", "3::int", "2::int"]), ("jsonb_typeof", ["'[1]'::jsonb"]), ("jsonb_array_length", ["'[1,2]'::jsonb"]),
    ("length", ["'abc'::text"]), ("char_length", ["'abc'::text"]), ("character_length", ["'abc'::text"]),
    ("octet_length", ["'aé'::text"]), ("bit_length", ["'aé'::text"]), ("strpos", ["'hello'::text", "'l'::text"]),
    ("ascii", ["'A'::text"]), ("lower", ["'AbC'::text"]),
    ("upper", ["'AbC'::text"]), ("btrim", ["'xaxx'::text", "'x'::text"]), ("btrim", ["'  a  '::text"]),
    ("ltrim", ["'  a  '::text"]), ("rtrim", ["'  a  '::text"]), ("ltrim", ["'xxa'::text", "'x'::text"]),
    ("rtrim", ["'axx'::text", "'x'::text"]), ("replace", ["'abcb'::text", "'b'::text", "'x'::text"]),
    ("substr", ["'hello'::text", "2::int"]), ("substr", ["'hello'::text", "2::int", "3::int"]),
    ("substring", ["'hello'::text", "2::int", "3::int"]), ("lpad", ["'x'::text", "3::int", "'*'::text"]),
    ("lpad", ["'x'::text", "3::int"]), ("rpad", ["'x'::text", "3::int", "'*'::text"]), ("repeat", ["'ab'::text", "3::int"]),
    ("reverse", ["'abc'::text"]), ("initcap", ["'hello wORLD'::text"]), ("left", ["'abc'::text", "2::int"]),
    ("right", ["'abc'::text", "2::int"]), ("split_part", ["'a,b,c'::text", "','::text", "2::int"]),
    ("translate", ["'abc'::text", "'ab'::text", "'x'::text"]), ("md5", ["'abc'::text"]),
    ("concat", ["'a'::text", "1::int", "'b'::text"]), ("concat_ws", ["','::text", "'a'::text", "'b'::text"]),
    ("chr", ["65::int"]), ("to_hex", ["255::int"]), ("array_length", ["ARRAY[1,2]::int[]", "1::int"]),
    ("cardinality", ["ARRAY[1,2]::int[]"]), ("array_to_string", ["ARRAY['a','b']::text[]", "','::text"]),
    ("array_to_string", ["ARRAY['a',NULL]::text[]", "','::text", "'*'::text"]),
    ("array_position", ["ARRAY[1,2]::int[]", "2::int"]), ("array_cat", ["ARRAY[1]::int[]", "ARRAY[2]::int[]"]),
    ("array_append", ["ARRAY[1]::int[]", "2::int"]), ("array_prepend", ["0::int", "ARRAY[1]::int[]"]),
    ("array_remove", ["ARRAY[1,2,1]::int[]", "1::int"]), ("array_upper", ["ARRAY[1,2]::int[]", "1::int"]),
    ("array_lower", ["ARRAY[1,2]::int[]", "1::int"]), ("array_ndims", ["ARRAY[1,2]::int[]"]),
    ("date_part", ["'year'::text", "'2020-05-06 07:08:09'::timestamp"]),
    ("date_trunc", ["'month'::text", "'2020-05-06 07:08:09'::timestamp"]),
    ("make_date", ["2020::int", "2::int", "29::int"]),
    ("make_timestamp", ["2020::int", "2::int", "29::int", "1::int", "2::int", "3.5::float8"]),
    ("make_timestamptz", ["2020::int", "2::int", "29::int", "1::int", "2::int", "3.5::float8"]),
    ("justify_days", ["'35 days'::interval"]), ("justify_hours", ["'27 hours'::interval"]),
    ("justify_interval", ["'1 mon -1 hour'::interval"]), ("to_char", ["'2020-05-06 07:08:09'::timestamp", "'YYYY-MM-DD'::text"]),
    ("age", ["'2020-05-06'::timestamp", "'2020-05-01 12:00'::timestamp"]),
    ("get_byte", ["'\\x1234'::bytea", "1::int"]), ("set_byte", ["'\\x1234'::bytea", "0::int", "255::int"]),
    ("get_bit", ["'\\x1234'::bytea", "3::int8"]), ("set_bit", ["'\\x1234'::bytea", "3::int8", "1::int"]),
    ("bit_count", ["'\\x1234'::bytea"]), ("btrim", ["'\\x001200'::bytea", "'\\x00'::bytea"]),
    ("ltrim", ["'\\x001200'::bytea", "'\\x00'::bytea"]), ("rtrim", ["'\\x001200'::bytea", "'\\x00'::bytea"]),
    ("unistr", ["'d\\0061t\\+000061'::text"]),
]

# functions of the table a call cannot write with ordinary argument syntax (EXTRACT(f FROM x)),
# or whose value is the current time
NOT_SAMPLED = frozenset({"extract", "position", "now", "mz_now"})

_CAST = re.compile(r"::([a-z0-9 ]+(?:\[\])?)$")


def arg_type(arg: str) -> str:
    m = _CAST.search(arg)
    assert m is not None, f"sample argument {arg!r} has no explicit type"
    return m.group(1)


def call_sql(name: str, args: list[str]) -> str:
    return f"{name}({', '.join(args)})"


def null_variants(name: str, args: list[str]) -> list[str]:
    """The call with a NULL of the argument's type in each position in turn."""
    return [call_sql(name, [f"NULL::{arg_type(a)}" if j == i else a for j, a in enumerate(args)]) for i in range(len(args))]
