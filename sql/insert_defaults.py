"""DEFAULT in INSERT's VALUES and UPDATE's SET, as PostgreSQL's rewriter expands it:

    INSERT INTO t (c1, .., cn) VALUES (.., DEFAULT, ..)  =  VALUES (.., CAST((default of ck) AS type of ck), ..)
    UPDATE t SET c = DEFAULT                             =  UPDATE t SET c = <default of c>

(the default of a column without one is NULL). Only a bare DEFAULT in a top-level VALUES row
or a SET is the keyword; anywhere else it stays as parsed and is refused by the binder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, SqlError
from sql.types import SqlType

INSERT_TOO_MANY = "INSERT has more expressions than target columns"


def is_default(e: exp.Expression) -> bool:
    """A bare DEFAULT (sqlglot: a Var in VALUES, an unquoted column `default` in SET)."""
    if isinstance(e, exp.Var):
        return e.name.upper() == "DEFAULT"
    if isinstance(e, exp.Column) and not e.table and isinstance(e.this, exp.Identifier):
        return not e.this.quoted and e.this.name.lower() == "default"
    return False


def default_expression(default_sql: str | None, t: SqlType, parse: Callable[[str], exp.Expression],
                       type_of: Callable[[exp.DataType], SqlType]) -> exp.Expression:
    """The column default as an expression of the column's type: CAST((default) AS type), when
    the type's name reads back as the same type (else the default as it is: the assignment
    cast of the INSERT still applies)."""
    value = parse(f"SELECT ({default_sql or 'NULL'})").expressions[0]
    try:
        dt = exp.DataType.build(t.pg_format(), dialect="postgres")
        if type_of(dt) == t:
            return exp.Cast(this=value, to=dt)
    except Exception:  # noqa: BLE001 - a type name sqlglot does not read back: no cast
        pass
    return value


def expand_values(values: exp.Values, defaults: Sequence[Callable[[], exp.Expression]]) -> exp.Values:
    """`values` with every bare DEFAULT of position k replaced by defaults[k]() (the k-th
    target column's default); 42601 for a DEFAULT beyond the target columns."""
    if not any(is_default(e) for row in values.expressions for e in _elements(row)):
        return values
    out = values.copy()
    for row in out.expressions:
        for k, e in enumerate(_elements(row)):
            if is_default(e):
                if k >= len(defaults):
                    raise SqlError(SYNTAX_ERROR, INSERT_TOO_MANY)
                e.replace(defaults[k]())
    return out


def _elements(row: exp.Expression) -> list[exp.Expression]:
    return list(row.expressions) if isinstance(row, exp.Tuple) else [row]
