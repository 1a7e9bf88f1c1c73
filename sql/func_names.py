"""Function names as written: the Postgres name of a parsed call, its canonical spelling for
typing, and errors that name the function the user wrote.

The parser (sql.parse.PostgresDialect) keeps every ordinary call as exp.Anonymous under its
written name; the typed nodes left are aggregates / window functions (their written name is in
the node's meta) and the special-syntax forms, each of which is a Postgres function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlglot import exp

from sql.errors import UNDEFINED_FUNCTION, SqlError
from sql.parse import ORIGINAL_NAME_KEY
from sql.types import SqlType

# special-syntax nodes -> the Postgres function they call (gram.y: TRIM(...) is btrim)
SPECIAL_SYNTAX_NAMES: dict[type, str] = {
    exp.Substring: "substring", exp.Trim: "btrim", exp.Extract: "extract", exp.StrPosition: "position",
    exp.Overlay: "overlay", exp.GroupConcat: "string_agg", exp.CurrentDate: "current_date",
    exp.CurrentTimestamp: "now", exp.CurrentTime: "current_time", exp.Localtimestamp: "localtimestamp",
    exp.Localtime: "localtime", exp.IntDiv: "div", exp.SessionUser: "session_user", exp.CurrentUser: "current_user",
    exp.CurrentSchema: "current_schema", exp.CurrentCatalog: "current_catalog",
}

# functions of the session, constant within a statement: (the CatalogReader's session_value)
SESSION_FUNCTIONS = frozenset({"current_user", "session_user", "current_role", "current_schema", "current_catalog",
                               "current_database", "version", "mz_version", "mz_environment_id"})
# the session functions typed text (the others are `name`, as in PostgreSQL)
TEXT_SESSION_FUNCTIONS = frozenset({"version", "mz_version", "mz_environment_id"})

# Postgres spellings that type (and render) as another name; the written name stays for
# errors and output columns
CANONICAL: dict[str, str] = {
    "substring": "substr", "char_length": "length", "character_length": "length", "ceiling": "ceil",
    "pow": "power", "log": "log10", "div": "intdiv", "trim": "btrim",
    # json is read as jsonb (sql.types.TYPE_ALIASES; Materialize has no text-preserving json)
    "json_build_object": "jsonb_build_object", "json_build_array": "jsonb_build_array", "to_json": "to_jsonb",
    # (scalar functions whose result does not depend on the text jsonb normalizes away)
    "json_typeof": "jsonb_typeof", "json_array_length": "jsonb_array_length", "json_strip_nulls": "jsonb_strip_nulls",
    "json_extract_path": "jsonb_extract_path", "json_extract_path_text": "jsonb_extract_path_text",
}


def pg_function_name(e: exp.Expr) -> str:
    """The (lower-case) name of the function call `e` as written in the query."""
    if isinstance(e, exp.Anonymous):
        return e.name.lower()
    written = e.meta.get(ORIGINAL_NAME_KEY)
    if isinstance(written, str):
        return written.lower()
    special = SPECIAL_SYNTAX_NAMES.get(type(e))
    if special is not None:
        return special
    return e.key.lower()


def canonical(written: str) -> str:
    """The name `written` types as (the identity for all but Postgres' alias spellings)."""
    return CANONICAL.get(written, written)


def no_function(name: str, args: list[SqlType]) -> SqlError:
    """Postgres' 42883 for `name(args)`."""
    return SqlError(
        UNDEFINED_FUNCTION,
        f"function {name}({', '.join(a.pg_format() for a in args)}) does not exist",
        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
    )


T = TypeVar("T")


def as_written(written: str, typing: Callable[[str, list[SqlType]], T], name: str, args: list[SqlType]) -> T:
    """typing(name, args), with a 42883 naming `written(args)`: an error never names a
    function (or spelling) the user did not write."""
    try:
        return typing(name, args)
    except SqlError as err:
        if err.sqlstate == UNDEFINED_FUNCTION and err.message.startswith("function "):
            raise no_function(written, args) from None
        raise


# strict functions the binder needs a literal argument of (unit, pattern, format): a NULL
# literal there makes the whole call NULL
LITERAL_ARGUMENT_FUNCTIONS = frozenset({"regexp_replace", "regexp_match", "regexp_count", "regexp_instr",
                                        "regexp_substr", "regexp_like", "regexp_split_to_array", "extract", "date_part", "date_trunc",
                                        "to_char"})

# Scalar functions (by canonical name) that Postgres does not declare STRICT: NULL arguments
# have a meaning (skipped, compared, or printed as the null string)
NON_STRICT = frozenset({"concat", "concat_ws", "greatest", "least", "coalesce", "array_cat", "array_append",
                        "array_prepend", "array_position", "array_remove", "array_to_string"})


def strict_functions(names: frozenset[str]) -> frozenset[str]:
    """The strict functions among `names` (canonical spellings): NULL in any argument -> NULL."""
    return frozenset(names | {canonical(n) for n in names}) - NON_STRICT
