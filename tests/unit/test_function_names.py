"""Every function binds as the name the user wrote (pure planner, no Spark): sqlglot
normalizes many names to dialect-neutral nodes (lpad -> Pad, concat_ws -> ConcatWs, to_timestamp
-> UnixToTime, ...); none of those may leak into binding, errors or output column names."""

from __future__ import annotations

import re

import pytest

from sql import func
from sql.bind import Binder, ItemRef
from sql.errors import SqlError
from sql.parse import parse_sql
from tests.function_calls import CALLS, NOT_SAMPLED, call_sql


class _NoTables:
    def resolve(self, parts: list[str]) -> ItemRef | None:
        return None


def _bind(sql: str):
    return Binder(_NoTables()).bind_query(parse_sql(sql))


def test_samples_cover_the_function_table() -> None:
    sampled = {name for name, _ in CALLS}
    assert func.SCALAR_FUNCTIONS - NOT_SAMPLED - sampled == set()


@pytest.mark.parametrize(("name", "args"), CALLS, ids=[call_sql(n, a) for n, a in CALLS])
def test_function_binds_as_itself(name: str, args: list[str]) -> None:
    bq = _bind(f"SELECT {call_sql(name, args)}")
    assert bq.names == (name,)


# everyday Postgres functions (string, math, date/time, array, aggregates): whatever the
# arguments, an error names the function as written, never another one
COMMON = sorted(func.SCALAR_FUNCTIONS - {"now", "mz_now"} | {
    "to_timestamp", "date_bin", "bit_length", "concat_ws", "string_to_array", "array_fill", "format", "quote_ident",
    "quote_literal", "regexp_split_to_array", "regexp_matches", "encode", "decode", "sha256", "to_number", "to_date",
    "make_interval", "overlay", "trim", "unnest", "generate_series", "random", "pi", "factorial", "setseed",
    "array_dims", "array_replace", "isfinite", "timezone", "clock_timestamp", "parse_ident", "pg_typeof", "ceil",
    "nullif", "coalesce", "greatest", "char_length", "left", "strpos", "uuid_generate_v4", "gen_random_uuid", "levenshtein",
    "soundex", "ifnull", "nvl", "len", "instr", "charindex", "to_base64", "date_add", "datediff", "dateadd", "year",
    "month", "day", "hour", "unix_timestamp", "from_unixtime", "first", "last", "median", "listagg", "group_concat",
    "count_if", "approx_count_distinct", "array_size", "array_contains", "array_join", "split", "explode", "struct",
    "map", "sha1", "sha2", "hex", "unhex", "space", "lcase", "ucase", "locate", "rand", "truncate", "signum",
})
_BAD_ARGS = ["true", "true, true", "true, true, true", "true, true, true, true"]
_NAMED = re.compile(r"function ([a-z_0-9.]+)\(")


@pytest.mark.parametrize("name", COMMON)
def test_errors_name_the_function_written(name: str) -> None:
    for args in _BAD_ARGS:
        try:
            _bind(f"SELECT {name}({args})")
        except SqlError as e:
            for named in _NAMED.findall(e.message):
                assert named == name, f"{name}({args}): {e.sqlstate} {e.message}"
            assert re.search(r"[A-Z][a-z]+[A-Z]", e.message) is None, f"{name}({args}): {e.message}"


def test_aggregate_columns_are_named_as_written() -> None:
    bq = _bind("SELECT stddev(x), variance(x), stddev_samp(x), var_pop(x), every(x > 0), count(*), sum(x), "
               "trim(' a '), substring('abc' FROM 2), position('b' IN 'abc'), current_timestamp FROM (VALUES (1)) t(x)")
    assert bq.names == ("stddev", "variance", "stddev_samp", "var_pop", "every", "count", "sum", "btrim", "substring",
                        "position", "current_timestamp")
