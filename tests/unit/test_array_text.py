"""The text form of a one-dimensional array (sql.text_input.split_array_text), as PostgreSQL 15's
array_in reads it (each case checked against PostgreSQL: arrays.sql's `'{}}'::text[]` is 22P02)."""

from __future__ import annotations

import pytest

from sql.errors import SqlError
from sql.text_input import split_array_text
from sql.types import SqlType

TEXT_ARRAY = SqlType("_text")


@pytest.mark.parametrize(("text", "elements"), [
    ("{}", []),
    ("{ }", []),
    ("{a,b}", ["a", "b"]),
    ("{ab }", ["ab"]),
    ('{"a,}",NULL}', ["a,}", None]),
    ("{a\\}b}", ["a}b"]),
])
def test_elements(text: str, elements: list[str | None]) -> None:
    assert split_array_text(text, TEXT_ARRAY) == elements


@pytest.mark.parametrize("text", ["{}}", "{ }}", '{a"b}', "{a}b}", "{a{b}", '{"a"b}'])
def test_unescaped_brace_or_quote_inside_an_element_is_malformed(text: str) -> None:
    """(was: `{}}` read as the one element `}`)"""
    with pytest.raises(SqlError) as e:
        split_array_text(text, TEXT_ARRAY)
    assert e.value.sqlstate == "22P02"
