"""Typing of aggregates, array, date/time and text functions (pure planner, no Spark); the
expected types and messages are PostgreSQL 15's."""

from __future__ import annotations

import pytest

from sql import datetime_units, func, regex
from sql.errors import SqlError
from sql.literal import to_text
from sql.text_input import parse_text
from sql.types import SqlType

T = SqlType


@pytest.mark.parametrize(("name", "arg", "want"), [
    ("stddev_samp", "int4", "numeric"), ("var_pop", "numeric", "numeric"), ("stddev_pop", "float4", "float8"),
    ("var_samp", "float8", "float8"), ("array_agg", "int4", "_int4"), ("array_agg", "text", "_text"),
    ("array_agg", "unknown", "_text"),
])
def test_aggregate_types(name: str, arg: str, want: str) -> None:
    assert func.aggregate_type(name, T(arg)) == T(want)


def test_array_of_arrays_is_unsupported() -> None:
    with pytest.raises(SqlError) as e:
        func.aggregate_type("array_agg", T("_int4"))
    assert e.value.sqlstate == "0A000"


@pytest.mark.parametrize(("name", "args", "want"), [
    ("array_length", ["_int4", "int4"], "int4"), ("cardinality", ["_text"], "int4"),
    ("array_to_string", ["_int8", "unknown"], "text"), ("array_position", ["_int4", "int8"], "int4"),
    ("array_cat", ["_int4", "unknown"], "_int4"), ("array_append", ["_int4", "int8"], "_int8"),
    ("array_prepend", ["int4", "_int4"], "_int4"), ("extract", ["unknown", "timestamp"], "numeric"),
    ("date_part", ["unknown", "interval"], "float8"), ("date_trunc", ["unknown", "date"], "timestamptz"),
    ("date_trunc", ["unknown", "interval"], "interval"), ("make_date", ["int4", "int4", "int4"], "date"),
    ("age", ["timestamptz", "timestamptz"], "interval"), ("justify_interval", ["unknown"], "interval"),
    ("to_char", ["date", "unknown"], "text"), ("log", ["int4", "int4"], "numeric"), ("gcd", ["int2", "int8"], "int8"),
    ("width_bucket", ["float8", "int4", "int4", "int4"], "int4"), ("regexp_match", ["text", "unknown"], "_text"),
    ("starts_with", ["text", "unknown"], "bool"),
])
def test_function_result_types(name: str, args: list[str], want: str) -> None:
    assert func.function_type(name, [T(a) for a in args])[1] == T(want)


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    ("concat", "_int4", "_int4", ("_int4", "_int4", "_int4")), ("concat", "_int4", "int8", ("_int8", "int8", "_int8")),
    ("concat", "int4", "_int4", ("int4", "_int4", "_int4")), ("concat", "_text", "unknown", ("_text", "_text", "_text")),
    ("array_contains", "_int4", "_int8", ("_int8", "_int8", "bool")), ("eq", "_int4", "unknown", ("_int4", "_int4", "bool")),
])
def test_array_operators(op: str, a: str, b: str, want: tuple[str, str, str]) -> None:
    assert func.binary_op(op, T(a), T(b)) == tuple(T(w) for w in want)


def test_array_operator_type_mismatch() -> None:
    with pytest.raises(SqlError) as e:
        func.binary_op("array_overlap", T("_int4"), T("_text"))
    assert e.value.sqlstate == "42883"


@pytest.mark.parametrize(("fn", "unit", "typ", "want"), [
    ("extract", "YEARS", "timestamp", "year"), ("date_part", "mon", "interval", "month"),
    ("date_trunc", "hr", "timestamptz", "hour"), ("extract", "epoch", "date", "epoch"),
    ("extract", "us", "time", "microseconds"),
])
def test_datetime_units(fn: str, unit: str, typ: str, want: str) -> None:
    assert datetime_units.datetime_unit(fn, unit, T(typ)) == want


@pytest.mark.parametrize(("fn", "unit", "typ", "state"), [
    ("extract", "fortnight", "timestamp", "22023"), ("date_trunc", "nope", "interval", "22023"),
    ("extract", "hour", "date", "0A000"), ("date_trunc", "week", "interval", "0A000"), ("extract", "julian", "timestamp", "0A000"),
])
def test_datetime_unit_errors(fn: str, unit: str, typ: str, state: str) -> None:
    with pytest.raises(SqlError) as e:
        datetime_units.datetime_unit(fn, unit, T(typ))
    assert e.value.sqlstate == state


@pytest.mark.parametrize(("pg", "spark"), [
    ("YYYY-MM-DD HH24:MI:SS", "yyyy-MM-dd HH:mm:ss"), ("Dy Mon DD HH12:MI:SS.MS AM", "EEE MMM dd hh:mm:ss.SSS a"),
    ("YY/MM/DD", "yy/MM/dd"), ("HH24:MI:SS.US", "HH:mm:ss.SSSSSS"),
])
def test_to_char_patterns(pg: str, spark: str) -> None:
    assert datetime_units.to_char_pattern(pg) == spark


@pytest.mark.parametrize("pg", ["FMMonth", "DDTH", "YYYY-MM-DDTHH24", "Q"])
def test_to_char_unsupported_patterns(pg: str) -> None:
    with pytest.raises(SqlError) as e:
        datetime_units.to_char_pattern(pg)
    assert e.value.sqlstate == "0A000"


@pytest.mark.parametrize(("args", "want"), [
    (("regexp_replace", "b(..)", "X\\1Y"), ("b(..)", "X$1Y", False)),
    (("regexp_replace", "[[:digit:]]+", "\\&$", "g"), ("[\\d]+", "$0\\$", True)),
    (("regexp_replace", "ab", "-", "gi"), ("(?i)ab", "-", True)),
    (("regexp_match", "(a)(b)"), ("(a)(b)", None, False)),
])
def test_regex_translation(args: tuple[str, ...], want: tuple) -> None:
    assert regex.regex_call(*args) == want


@pytest.mark.parametrize(("args", "state"), [
    (("regexp_replace", "a\\mb", "x"), "0A000"), (("regexp_replace", "a", "x", "n"), "0A000"),
    (("regexp_match", "a", "g"), "22023"), (("regexp_replace", "[[:foo:]]", "x"), "0A000"),
])
def test_regex_errors(args: tuple[str, ...], state: str) -> None:
    with pytest.raises(SqlError) as e:
        regex.regex_call(*args)
    assert e.value.sqlstate == state


@pytest.mark.parametrize(("text", "typ", "value", "out"), [
    ("{1, 2,NULL}", "_int4", [1, 2, None], "{1,2,NULL}"),
    ('{"a b",NULL,"",x,"NULL"}', "_text", ["a b", None, "", "x", "NULL"], '{"a b",NULL,"",x,"NULL"}'),
    ('{"q\\"",z}', "_text", ['q"', "z"], '{"q\\"",z}'),
    ("{}", "_float8", [], "{}"),
])
def test_array_literals(text: str, typ: str, value: list, out: str) -> None:
    assert parse_text(text, T(typ)) == value
    assert to_text(value, T(typ)) == out


@pytest.mark.parametrize("text", ["1,2", "{1,{2}}", '{"a}'])
def test_bad_array_literals(text: str) -> None:
    with pytest.raises(SqlError) as e:
        parse_text(text, T("_int4"))
    assert e.value.sqlstate in ("22P02", "0A000")
