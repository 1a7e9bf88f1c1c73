"""jsonb values and typing (pure planner, no Spark); the expected texts, results and
messages are PostgreSQL 15's."""

from __future__ import annotations

import pytest

from sql import func, jsonb
from sql.errors import SqlError
from sql.text_input import parse_text
from sql.types import SqlType

T = SqlType


@pytest.mark.parametrize(("text", "want"), [
    ('{"b": 1, "a": 2}', '{"a": 2, "b": 1}'),
    ('{"aa": 1, "b": 2, "a": 3}', '{"a": 3, "b": 2, "aa": 1}'),  # shorter keys first
    ('{"a": 1, "a": 2}', '{"a": 2}'),  # the last duplicate wins
    ('{"é": 1, "z": 2}', '{"z": 2, "é": 1}'),  # length in UTF-8 bytes
    ("[1e2, 1.50, -0, -0.0, 1E-3, 1.5e1]", "[100, 1.50, 0, 0.0, 0.001, 15]"),
    ('  {"a" :[ true,false ,null ] }  ', '{"a": [true, false, null]}'),
    ("{}", "{}"), ("[]", "[]"), ('"\\u00e9\\n\\t\\"\\/"', '"é\\n\\t\\"/"'), ('"\\u001f"', '"\\u001f"'),
])
def test_canonical_text(text: str, want: str) -> None:
    assert jsonb.canonical(text) == want
    assert parse_text(text, T("jsonb")) == want


@pytest.mark.parametrize("text", ["{", "NaN", "[Infinity]", "{'a': 1}", "[1,]", ""])
def test_invalid_input(text: str) -> None:
    with pytest.raises(SqlError) as e:
        jsonb.canonical(text)
    assert e.value.sqlstate == "22P02"


def test_nul_escape_is_rejected() -> None:
    with pytest.raises(SqlError) as e:
        jsonb.canonical('"a\\u0000"')
    assert e.value.sqlstate == "22P05"


J = '{"a": {"b": [10, 20, {"c": "x"}]}, "s": "str", "n": null}'


@pytest.mark.parametrize(("key", "as_text", "want"), [
    ("a", False, '{"b": [10, 20, {"c": "x"}]}'), ("s", False, '"str"'), ("s", True, "str"), ("n", False, "null"),
    ("n", True, None), ("zz", False, None), (0, False, None),
])
def test_get_field(key: str | int, as_text: bool, want: str | None) -> None:
    assert jsonb.get(J, key, as_text) == want


@pytest.mark.parametrize(("j", "i", "want"), [
    ("[1, 2, 3]", 0, "1"), ("[1, 2, 3]", -1, "3"), ("[1, 2, 3]", 3, None), ("[1, 2, 3]", -4, None),
    ('"a"', 0, '"a"'), ('"a"', -1, '"a"'), ('"a"', 1, None), ('{"0": 1}', 0, None),
])
def test_get_index(j: str, i: int, want: str | None) -> None:
    assert jsonb.get(j, i) == want


@pytest.mark.parametrize(("path", "as_text", "want"), [
    (["a", "b", "2", "c"], False, '"x"'), (["a", "b", "2", "c"], True, "x"), (["a", "b", "-1"], False, '{"c": "x"}'),
    ([], False, jsonb.canonical(J)), (["a", "b", "x"], False, None), (["a", None], False, None), (["s", "0"], False, None),
])
def test_get_path(path: list, as_text: bool, want: str | None) -> None:
    assert jsonb.get_path(J, path, as_text) == want


@pytest.mark.parametrize(("a", "b", "want"), [
    ('{"a": 1, "b": [1, 2]}', '{"b": [2]}', True), ('{"a": [1, 2]}', '{"a": 1}', False), ("[1, 2]", "1", True),
    ("1", "[1]", False), ("[[1, 2]]", "[1]", False), ("[1, [2]]", "[[2]]", True), ('{"a": 1.0}', '{"a": 1}', True),
    ("[1, 2, 2]", "[2, 2, 2]", True), ('{"a": {}}', '{"a": {}}', True), ("[]", "[]", True), ('{"a": null}', '{}', True),
    ('["a"]', '{"a": 1}', False), ("true", "1", False),
])
def test_contains(a: str, b: str, want: bool) -> None:
    assert jsonb.contains(jsonb.canonical(a), jsonb.canonical(b)) is want


@pytest.mark.parametrize(("a", "b", "want"), [
    ("1.0", "1", True), ('{"a": [1.50]}', '{"a": [1.5]}', True), ("true", "1", False), ("[1, 2]", "[2, 1]", False),
    ('"1"', "1", False), ("null", "null", True),
])
def test_equality_compares_numbers_by_value(a: str, b: str, want: bool) -> None:
    assert jsonb.equal(jsonb.canonical(a), jsonb.canonical(b)) is want


def test_exists_and_typeof() -> None:
    assert jsonb.exists('{"a": 1}', "a") and jsonb.exists('["a", 1]', "a") and jsonb.exists('"a"', "a")
    assert not jsonb.exists('[["a"]]', "a") and not jsonb.exists('{"b": "a"}', "a")
    assert jsonb.exists_any('{"a": 1}', ["x", "a"]) and not jsonb.exists_any('{"a": 1}', [])
    assert jsonb.exists_all('{"a": 1}', []) and not jsonb.exists_all('{"a": 1}', ["a", "b"])
    assert [jsonb.typeof(x) for x in ("{}", "[]", '"s"', "1.5", "true", "null")] == \
        ["object", "array", "string", "number", "boolean", "null"]


@pytest.mark.parametrize(("j", "msg"), [("{}", "cannot get array length of a non-array"),
                                        ("1", "cannot get array length of a scalar")])
def test_array_length_errors(j: str, msg: str) -> None:
    assert jsonb.array_length("[1, [2, 3]]") == 2
    with pytest.raises(SqlError) as e:
        jsonb.array_length(j)
    assert (e.value.sqlstate, e.value.message) == ("22023", msg)


@pytest.mark.parametrize(("x", "want"), [(1.0, "1"), (0.1, "0.1"), (1e20, "100000000000000000000"), (1e-5, "0.00001"),
                                         (-2.5, "-2.5"), (float("nan"), '"NaN"'), (float("-inf"), '"-Infinity"')])
def test_float_to_jsonb(x: float, want: str) -> None:
    assert jsonb.from_float(x) == want


def test_builders() -> None:
    assert jsonb.build_object(["b", "a", "b"], ["1", None, '"x"']) == '{"a": null, "b": "x"}'
    assert jsonb.object_agg(["k", "a"], ["[1]", None]) == '{"a": null, "k": [1]}'
    assert jsonb.object_agg([], []) is None
    with pytest.raises(SqlError) as e:
        jsonb.build_object(["a", None], ["1", "2"])
    assert e.value.message == "argument 3: key must not be null"


@pytest.mark.parametrize(("v", "t", "want"), [
    (1, "int4", "1"), (True, "bool", "true"), ("a\"b", "text", '"a\\"b"'), (None, "int4", None),
    (__import__("decimal").Decimal("-1.50"), "numeric", "-1.50"), (1.0, "float8", "1"),
])
def test_literal_to_jsonb(v: object, t: str, want: str | None) -> None:
    assert jsonb.literal_to_jsonb(v, T(t)) == want


@pytest.mark.parametrize(("op", "b", "want"), [
    ("->", "unknown", ("text", "jsonb", "jsonb_get_field")), ("->", "int4", ("int4", "jsonb", "jsonb_get_index")),
    ("->>", "int2", ("int4", "text", "jsonb_get_index_text")), ("->>", "text", ("text", "text", "jsonb_get_field_text")),
    ("#>", "unknown", ("_text", "jsonb", "jsonb_get_path")), ("#>>", "_text", ("_text", "text", "jsonb_get_path_text")),
    ("?", "unknown", ("text", "bool", "jsonb_exists")), ("?|", "_text", ("_text", "bool", "jsonb_exists_any")),
    ("?&", "unknown", ("_text", "bool", "jsonb_exists_all")),
])
def test_operator_typing(op: str, b: str, want: tuple[str, str, str]) -> None:
    _, rt, res, name = func.jsonb_operator(op, T("jsonb"), T(b))
    assert (rt.name, res.name, name) == want


@pytest.mark.parametrize(("op", "a", "b"), [("->", "jsonb", "int8"), ("->", "int4", "unknown"), ("#>", "jsonb", "int4"),
                                            ("?", "jsonb", "_text")])
def test_operator_does_not_exist(op: str, a: str, b: str) -> None:
    with pytest.raises(SqlError) as e:
        func.jsonb_operator(op, T(a), T(b))
    assert e.value.sqlstate == "42883"


def test_comparisons_and_containment_typing() -> None:
    assert func.binary_op("eq", T("jsonb"), T("unknown")) == (T("jsonb"), T("jsonb"), T("bool"))
    assert func.binary_op("array_contains", T("jsonb"), T("unknown")) == (T("jsonb"), T("jsonb"), T("bool"))
    with pytest.raises(SqlError) as e:
        func.binary_op("lt", T("jsonb"), T("jsonb"))
    assert e.value.sqlstate == "0A000"
    assert func.function_type("jsonb_typeof", [T("jsonb")])[1] == T("text")
    assert func.function_type("jsonb_array_length", [T("unknown")]) == ([T("jsonb")], T("int4"))


@pytest.mark.parametrize(("t", "ok"), [("int8", True), ("text", True), ("float8", True), ("numeric", False),
                                       ("float4", False), ("date", False), ("_int4", False)])
def test_to_jsonb_types(t: str, ok: bool) -> None:
    if ok:
        func.to_jsonb_check(T(t))
    else:
        with pytest.raises(SqlError) as e:
            func.to_jsonb_check(T(t))
        assert e.value.sqlstate == "0A000"


def test_table_function_rows() -> None:
    assert jsonb.elements('[1, "a", [2], null]') == ["1", '"a"', "[2]", "null"]
    assert [jsonb.as_text(x) for x in jsonb.elements('[1, "a", [2], null]')] == ["1", "a", "[2]", None]
    assert jsonb.each('{"bb": {"x": 1}, "a": null}') == [("a", "null"), ("bb", '{"x": 1}')]
    assert jsonb.object_keys('{"bb": 1, "a": 2, "c": 3}') == ["a", "c", "bb"]
    assert jsonb.elements(None) == [] and jsonb.each(None) == [] and jsonb.object_keys(None) == []
    for fn, j, msg in [(jsonb.elements, "{}", "cannot extract elements from an object"),
                       (jsonb.elements, "1", "cannot extract elements from a scalar"),
                       (jsonb.each, "[]", "cannot call jsonb_each on a non-object"),
                       (jsonb.object_keys, "[]", "cannot call jsonb_object_keys on an array"),
                       (jsonb.object_keys, '"s"', "cannot call jsonb_object_keys on a scalar")]:
        with pytest.raises(SqlError) as e:
            fn(j)
        assert (e.value.sqlstate, e.value.message) == ("22023", msg)
