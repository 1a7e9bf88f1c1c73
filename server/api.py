"""The contract between the pgwire front end and the coordinator.

pgwire owns sockets, message framing, encoding of values (text/binary) and portals. The
coordinator owns sessions' SQL state, planning and execution. Every coordinator method may
raise `sql.errors.SqlError`; any other exception is reported to the client as XX000.

Threading: pgwire calls `prepare` and `execute` and iterates result batches in a worker
thread (never on the event loop); `cancel` may be called from any thread at any time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sql.types import SqlType

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True, slots=True)
class ColumnDesc:
    name: str
    type: SqlType
    # For RowDescription: table oid / attnum of a plain column reference, else 0.
    table_oid: int = 0
    column_attnum: int = 0


@dataclass
class Prepared:
    """A planned, not yet executed statement (what Parse + Describe need)."""

    sql: str
    param_types: tuple[SqlType, ...]
    # None -> the statement returns no rows (NoData on Describe).
    columns: tuple[ColumnDesc, ...] | None
    # Opaque coordinator state (the planned statement).
    plan: Any = None


@dataclass
class RowsResult:
    """A statement that returns rows. `batches` is lazy: iterating it runs the query."""

    columns: tuple[ColumnDesc, ...]
    batches: Iterator[list[tuple[Any, ...]]]
    # Command tag given the number of rows sent, e.g. lambda n: f"SELECT {n}".
    tag: Callable[[int], str] = field(default=lambda n: f"SELECT {n}")


@dataclass
class CommandResult:
    tag: str  # e.g. "INSERT 0 3", "CREATE TABLE"


@dataclass
class CopyOutResult:
    """COPY ... TO STDOUT: rows sent as CopyData in text format (or CSV when `csv`)."""

    columns: tuple[ColumnDesc, ...]
    batches: Iterator[list[tuple[Any, ...]]]
    tag: Callable[[int], str] = field(default=lambda n: f"COPY {n}")
    csv: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    header: bool = False


@dataclass
class CopyInResult:
    """COPY ... FROM STDIN: pgwire sends CopyInResponse, parses the text-format stream
    (tab-delimited, \\N nulls, backslash escapes, optional CSV when `csv` is set) into an
    Arrow table of `columns`' storage types (columns `c0..`, `server.pgwire.copy`), and
    calls `write(table)` once with all of it; `write` makes it durable and returns the
    command tag ("COPY n")."""

    columns: tuple[ColumnDesc, ...]
    write: Callable[[pa.Table], str]
    csv: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    header: bool = False


Result = RowsResult | CommandResult | CopyOutResult | CopyInResult


class Session(Protocol):
    pid: int
    secret: int
    user: str
    database: str

    def parameter_status(self) -> dict[str, str]:
        """ParameterStatus values to report (all at startup; later, the changed ones via
        `take_changed_parameters`)."""
        ...

    def take_changed_parameters(self) -> dict[str, str]: ...

    def take_notices(self) -> list[tuple[str, str, str]]:
        """(severity, sqlstate, message) notices raised since the last call."""
        ...

    @property
    def transaction_status(self) -> str:
        """'I' idle, 'T' in transaction block, 'E' failed transaction block."""
        ...

    # Optional: `abort_transaction()`, called when an error is sent to the client (an open
    # transaction block becomes failed, as in Postgres).


class Coordinator(Protocol):
    def new_session(self, user: str, database: str, options: dict[str, str]) -> Session: ...

    def end_session(self, session: Session) -> None: ...

    def split_statements(self, sql: str) -> list[str]:
        """Split a simple-query string into statements (empty list for an empty query)."""
        ...

    def prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared:
        """Plan one statement without executing it; infer unspecified parameter types."""
        ...

    def execute(self, session: Session, prepared: Prepared, params: list[Any]) -> Result: ...

    def cancel(self, session: Session) -> None:
        """Cancel whatever the session is running (its Spark jobs); the running statement
        then fails with 57014."""
        ...

    def check_password(self, user: str, password: str) -> bool: ...

    def begin_simple_query(self, session: Session, statements: int) -> None:
        """Called before the statements of one simple-query message run: several statements
        form one implicit transaction."""
        ...

    def end_simple_query(self, session: Session, ok: bool) -> None:
        """Called after them (ok = no statement failed): commits or discards the implicit
        transaction."""
        ...
