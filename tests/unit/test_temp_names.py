"""Name resolution and placement of temporary items (server/temp.py), without a server."""

from __future__ import annotations

import pytest

from server.temp import creation_schema, lookup_schemas
from sql.errors import SqlError


def test_unqualified_names_search_the_temp_schema_first() -> None:
    assert lookup_schemas(7, ["t"], ["s", "public"]) == ["mz_temp_7", "s", "public"]
    # named on search_path, the temp schema is searched at its place; others' never
    assert lookup_schemas(7, ["t"], ["pg_temp", "mz_temp_8", "s"]) == ["mz_temp_7", "s"]
    assert lookup_schemas(7, ["t"], ["s", "pg_temp", "mz_temp"]) == ["s", "mz_temp_7"]
    assert lookup_schemas(7, ["t"], ["s"], with_temp=False) == ["s"]


def test_qualified_names() -> None:
    assert lookup_schemas(7, ["mz_temp", "t"], ["s"]) == ["mz_temp_7"]
    assert lookup_schemas(7, ["pg_temp", "t"], ["s"]) == ["mz_temp_7"]
    assert lookup_schemas(7, ["mz_temp_7", "t"], ["s"]) == ["mz_temp_7"]
    assert lookup_schemas(7, ["mz_temp_8", "t"], ["s"]) == []  # another session's
    assert lookup_schemas(7, ["public", "t"], ["s"]) == ["public"]


def test_creation_schema() -> None:
    assert creation_schema(7, ("t",), True) == ("mz_temp_7", True)
    assert creation_schema(7, ("pg_temp", "t"), False) == ("mz_temp_7", True)
    assert creation_schema(7, ("t",), False) is None
    assert creation_schema(7, ("public", "t"), False) is None
    with pytest.raises(SqlError) as e:
        creation_schema(7, ("public", "t"), True)
    assert e.value.sqlstate == "42P16"
