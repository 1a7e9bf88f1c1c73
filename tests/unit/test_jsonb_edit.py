"""jsonb values built from others (||, -, #-, jsonb_set, jsonb_insert, jsonb_strip_nulls,
jsonb_pretty) and their binding (pure planner, no Spark); the expected texts and messages
are PostgreSQL 15's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sql import jsonb_edit as je
from sql.errors import SqlError
from tests.unit.test_binder import Planner


@pytest.mark.parametrize(("a", "b", "want"), [
    ('{"a": 1, "b": 2}', '{"b": 3, "c": [1]}', '{"a": 1, "b": 3, "c": [1]}'),  # the right object wins
    ("[1, 2]", "[3]", "[1, 2, 3]"),
    ('"a"', "[1]", '["a", 1]'),  # a scalar is a one-element array
    ('{"a": 1}', "[1]", '[{"a": 1}, 1]'),  # so is an object beside an array
    ("[1]", '{"a": 1}', '[1, {"a": 1}]'),
    ("1", "2", "[1, 2]"),
    ("[]", "{}", "[{}]"),
])
def test_concat(a: str, b: str, want: str) -> None:
    assert je.concat(a, b) == want


def test_delete() -> None:
    assert je.delete_key('{"a": 1, "b": 2}', "a") == '{"b": 2}'
    assert je.delete_key('["a", "b", 1, ["a"]]', "a") == '["b", 1, ["a"]]'  # only string elements
    assert je.delete_keys('{"a": 1, "b": 2, "c": 3}', ["a", None, "c"]) == '{"b": 2}'
    assert je.delete_index("[1, 2, 3]", -1) == "[1, 2]"
    assert je.delete_index("[1, 2, 3]", 3) == "[1, 2, 3]"
    assert je.delete_index("[1, 2, 3]", -4) == "[1, 2, 3]"
    assert je.delete_path('{"a": {"b": [1, 2, 3]}}', ["a", "b", "-1"]) == '{"a": {"b": [1, 2]}}'
    assert je.delete_path('{"a": 1}', []) == '{"a": 1}'


@pytest.mark.parametrize(("call", "state", "message"), [
    (lambda: je.delete_key("1", "a"), "22023", "cannot delete from scalar"),
    (lambda: je.delete_index('{"a": 1}', 0), "22023", "cannot delete from object using integer index"),
    (lambda: je.delete_path("[1, 2]", ["x"]), "22P02", 'path element at position 1 is not an integer: "x"'),
    (lambda: je.delete_path('"a"', ["x"]), "22023", "cannot delete path in scalar"),
    (lambda: je.set_path('{"a": [1]}', ["a", None], "1"), "22004", "path element at position 2 is null"),
    (lambda: je.set_path("1", ["a"], "1"), "22023", "cannot set path in scalar"),
    (lambda: je.insert('{"a": 1}', ["a"], "2"), "22023", "cannot replace existing key"),
])
def test_errors(call, state: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SqlError) as e:
        call()
    assert (e.value.sqlstate, e.value.message) == (state, message)


@pytest.mark.parametrize(("args", "want"), [
    (('{"a": [1, 2, 3]}', ["a", "1"], '"x"'), '{"a": [1, "x", 3]}'),
    (('{"a": [1, 2, 3]}', ["a", "9"], '"x"'), '{"a": [1, 2, 3, "x"]}'),  # past the end: appended
    (('{"a": [1, 2, 3]}', ["a", "-9"], '"x"'), '{"a": ["x", 1, 2, 3]}'),  # before the start: prepended
    (('{"a": 1}', ["b"], "2", False), '{"a": 1}'),  # create_missing false
    (('{"a": 1}', ["b", "c"], "2"), '{"a": 1}'),  # only the last step is created
    (('{"a": "s"}', ["a", "0"], "2"), '{"a": "s"}'),  # a scalar inside the path stays
])
def test_set_path(args: tuple, want: str) -> None:
    assert je.set_path(*args) == want


def test_insert_and_strip_and_pretty() -> None:
    assert je.insert('{"a": [1, 2, 3]}', ["a", "1"], '"x"') == '{"a": [1, "x", 2, 3]}'
    assert je.insert('{"a": [1, 2, 3]}', ["a", "1"], '"x"', True) == '{"a": [1, 2, "x", 3]}'
    assert je.insert('{"a": 1}', ["b"], "2") == '{"a": 1, "b": 2}'
    assert je.strip_nulls('{"a": null, "b": [null, {"c": null}]}') == '{"b": [null, {}]}'
    assert je.pretty('{"a": {}, "b": [1, {"x": []}]}') == (
        '{\n    "a": {\n    },\n    "b": [\n        1,\n        {\n            "x": [\n            ]\n        }\n    ]\n}')
    assert je.pretty("1") == "1"


@pytest.fixture(scope="module")
def planner() -> Iterator[Planner]:
    p = Planner()
    p.ddl("CREATE TABLE jt (j jsonb, i int)")
    yield p
    p.close()


@pytest.mark.parametrize(("sql", "calls"), [
    ("SELECT j || '[1]' FROM jt", ("jsonb_concat",)),
    ("SELECT j - 'a', j - 1, j - '{a}'::text[] FROM jt", ("jsonb_delete_key", "jsonb_delete_index", "jsonb_delete_keys")),
    ("SELECT j #- '{a}' FROM jt", ("jsonb_delete_path",)),
    ("SELECT jsonb_set(j, '{a}', '1'), jsonb_insert(j, '{a}', '1', true) FROM jt", ("jsonb_set", "jsonb_insert")),
    ("SELECT j['a'][i] FROM jt", ("jsonb_get_path",)),
])
def test_operators_bind(planner: Planner, sql: str, calls: tuple[str, ...]) -> None:
    plan = planner.explain(sql)
    for c in calls:
        assert c in plan, plan


def test_integer_subscripts_are_as_written(planner: Planner) -> None:
    """j[0] is element 0 whether or not the parser shifted it to 0-based (it does for a
    column, not for a jsonb cast)."""
    assert '"0"' in planner.explain("SELECT j[0] FROM jt")
    assert '"-1"' in planner.explain("SELECT j[-1] FROM jt")
    assert '"0"' in planner.explain("SELECT ('[1]'::jsonb)[0] FROM jt")


@pytest.mark.parametrize(("sql", "state", "message"), [
    ("SELECT j - 1::bigint FROM jt", "42883", "operator does not exist: jsonb - bigint"),
    ("SELECT j[1.5] FROM jt", "42804", "subscript type numeric is not supported"),
    ("SELECT j[1:2] FROM jt", "42804", "jsonb subscript does not support slices"),
    ("SELECT jsonb_set(j, '{a}') FROM jt", "42883", "function jsonb_set(jsonb, unknown) does not exist"),
])
def test_binding_errors(planner: Planner, sql: str, state: str, message: str) -> None:
    e = planner.error(sql)
    assert (e.sqlstate, e.message) == (state, message)


def test_object_from_arrays() -> None:
    assert je.object_from_array(["a", "1", "b", "2", "3", None, "d e f", "a b c"]) == (
        '{"3": null, "a": "1", "b": "2", "d e f": "a b c"}')
    assert je.object_from_array([]) == "{}"
    assert je.object_from_arrays(["a", "b", "", "d e f"], ["1", "2", "3", "a b c"]) == (
        '{"": "3", "a": "1", "b": "2", "d e f": "a b c"}')
    for call, state, message in (
        (lambda: je.object_from_array(["a", "b", "c"]), "2202E", "array must have even number of elements"),
        (lambda: je.object_from_arrays(["a", "b"], ["1"]), "2202E", "mismatched array dimensions"),
        (lambda: je.object_from_arrays(["a", None], ["1", "2"]), "22004", "null value not allowed for object key"),
    ):
        with pytest.raises(SqlError) as e:
            call()
        assert (e.value.sqlstate, e.value.message) == (state, message)


@pytest.mark.parametrize(("sql", "shown"), [
    ("SELECT jsonb_build_array(VARIADIC NULL::text[]) FROM jt", "Map (null)"),
    ("SELECT jsonb_build_array(VARIADIC '{a,b}'::text[]) FROM jt", 'jsonb_build_array("\\"a\\"", "\\"b\\"")'),
    ("SELECT jsonb_build_object(VARIADIC ARRAY[1, 2]) FROM jt", 'jsonb_build_object("1", "2")'),
    ("SELECT jsonb_extract_path(j, VARIADIC ARRAY['a', 'b']) FROM jt", 'jsonb_get_path(#0, "{a,b}")'),
])
def test_variadic_arguments(planner: Planner, sql: str, shown: str) -> None:
    """f(VARIADIC arr): arr is the variadic parameter (the elements of an array known when
    planning become the arguments of jsonb_build_*)."""
    assert shown in planner.explain(sql)


@pytest.mark.parametrize(("sql", "state", "message"), [
    ("SELECT jsonb_build_object(VARIADIC '{a,b,c}'::text[]) FROM jt", "22023", "argument list must have even number of elements"),
    ("SELECT jsonb_build_object(VARIADIC ARRAY[NULL, 'a']) FROM jt", "22023", "argument 1: key must not be null"),
    ("SELECT jsonb_build_array(VARIADIC 1) FROM jt", "42804", "VARIADIC argument must be an array"),
    ("SELECT concat(VARIADIC ARRAY['a']) FROM jt", "0A000", "VARIADIC arguments of concat not yet supported"),
])
def test_variadic_errors(planner: Planner, sql: str, state: str, message: str) -> None:
    e = planner.error(sql)
    assert (e.sqlstate, e.message) == (state, message)


def test_subscripted_update_is_not_supported(planner: Planner) -> None:
    """UPDATE ... SET j['a'] = v (Postgres' subscript assignment) is 0A000, never an error
    about a column named \"\"."""
    with pytest.raises(SqlError) as e:
        planner.ddl("UPDATE jt SET j['a'] = '1' WHERE i = 1")
    assert (e.value.sqlstate, e.value.message) == ("0A000", "UPDATE of a subscripted column (SET col[...] = ...) not yet supported")


@pytest.mark.parametrize("key", ["'{a,b}'::text[]", "j", "row(1)"])
def test_object_keys_must_be_scalar(planner: Planner, key: str) -> None:
    e = planner.error(f"SELECT jsonb_build_object({key}, 2) FROM jt")
    assert (e.sqlstate, e.message) == ("22023", "key value must be scalar, not array, composite, or json")
