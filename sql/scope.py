"""What the binder resolves names against: catalog items, FROM-clause scopes and the bound
form of a query (shared by sql.bind and its FROM / WITH parts)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from sql.errors import AMBIGUOUS_COLUMN, UNDEFINED_COLUMN, UNDEFINED_TABLE, SqlError
from sql.hir import Finishing, HirRel
from sql.scalar import Scalar, columns_used, permute
from sql.types import SqlType


@dataclass(frozen=True, slots=True)
class ItemRef:
    id: str
    schema: str
    name: str
    kind: str
    column_names: tuple[str, ...]
    column_types: tuple[SqlType, ...]
    oid: int = 0
    nullable: tuple[bool, ...] = ()
    # a (non-materialized) view: its definition, inlined where it is read
    hir: HirRel | None = None

    @property
    def qualified(self) -> str:
        return f"materialize.{self.schema}.{self.name}"


class CatalogReader(Protocol):
    def resolve(self, parts: list[str]) -> ItemRef | None:
        """Resolve a (possibly schema-qualified) relation name via the search path."""
        ...

    def session_value(self, name: str) -> str | None:
        """The value of a session function (func_names.SESSION_FUNCTIONS) for this statement."""
        ...


@dataclass(frozen=True, slots=True)
class ScopeColumn:
    table: str | None
    name: str
    typ: SqlType
    table_oid: int = 0
    attnum: int = 0
    # a join's USING column of one side: reachable only qualified (the unqualified name is
    # the merged column), and not in an unqualified `*`
    hidden: bool = False
    # on the NULL-extended side of an outer join (a whole-row reference there is NULL for
    # an extended row, which the binder cannot express: it refuses it)
    outer_nullable: bool = False
    # a table's or view's column: its own name, which a column alias does not change (the
    # field name of the item's whole-row value)
    attname: str | None = None
    # a join's merged USING column that is an expression of the sides' columns (a cast, or
    # FULL JOIN's coalesce), over this scope's positions: what PostgreSQL's grouping check
    # sees through (GROUP BY t1.c allows c = t1.c::bigint)
    defined_as: Scalar | None = None
    # the only column of a FROM function returning a base type (jsonb_array_elements,
    # generate_series, ...): a whole-row reference to its item is this column's value
    scalar_item: bool = False


@dataclass
class Scope:
    columns: list[ScopeColumn] = field(default_factory=list)
    # the positions an unqualified `*` expands to, in order (None: every column not hidden);
    # a USING join lists its merged columns first, as Postgres does
    star: list[int] | None = None

    def star_positions(self) -> list[int]:
        return list(self.star) if self.star is not None else [i for i, c in enumerate(self.columns) if not c.hidden]

    def extended(self, more: list[ScopeColumn]) -> Scope:
        """These columns followed by `more` (the layout of a join or FlatMap's output)."""
        return concat(self, Scope(list(more)))

    def lookup(self, name: str, table: str | None) -> int:
        hits = [i for i, c in enumerate(self.columns)
                if c.name == name and (c.table == table if table is not None else not c.hidden)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            ref = f"{table}.{name}" if table else name
            raise SqlError(AMBIGUOUS_COLUMN, f'column reference "{ref}" is ambiguous')
        if table is not None and not any(c.table == table for c in self.columns):
            raise SqlError(UNDEFINED_TABLE, f'missing FROM-clause entry for table "{table}"')
        ref = f"{table}.{name}" if table else name
        raise SqlError(UNDEFINED_COLUMN, f'column "{ref}" does not exist' if table is None else f"column {ref} does not exist")


def whole_row(scope: Scope, name: str) -> list[int] | None:
    """The positions of the columns of the FROM item called `name` (a whole-row reference
    `name` / `name.*` in an expression), in order; None if no item has that name."""
    hits = [i for i, c in enumerate(scope.columns) if c.table == name]
    return hits or None


@dataclass(frozen=True, slots=True)
class BoundQuery:
    rel: HirRel
    finishing: Finishing
    names: tuple[str, ...]
    types: tuple[SqlType, ...]
    # for RowDescription: (table oid, attnum) per output column
    origins: tuple[tuple[int, int], ...] = ()


def concat(a: Scope, b: Scope) -> Scope:
    """The scope of a's columns followed by b's: `*` expands to a's then b's."""
    n = len(a.columns)
    star = None if a.star is None and b.star is None else a.star_positions() + [n + i for i in b.star_positions()]
    return Scope(a.columns + [shifted(c, n) for c in b.columns], star)


def shifted(c: ScopeColumn, n: int) -> ScopeColumn:
    """`c` placed `n` columns further right (its definition's positions moved with it)."""
    d = c.defined_as
    if d is None or not n:
        return c
    return replace(c, defined_as=permute(d, {j: j + n for j in columns_used(d)}))


def aliased_names(names: list[str], aliases: list[str], what: str) -> list[str]:
    """A column alias list renames the first len(aliases) columns; naming more columns than
    the relation has is PG's 42P10 (`what` is e.g. 'table "t"' or 'WITH query "x"')."""
    if len(aliases) > len(names):
        raise SqlError("42P10", f"{what} has {len(names)} columns available but {len(aliases)} columns specified")
    return [*aliases, *names[len(aliases):]]
