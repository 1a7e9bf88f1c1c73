"""The one error type that reaches clients: every failure carries a SQLSTATE."""

from __future__ import annotations


class SqlError(Exception):
    """An error with a Postgres SQLSTATE, sent to the client as an ErrorResponse."""

    def __init__(
        self,
        sqlstate: str,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        severity: str = "ERROR",
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        self.severity = severity

    def __repr__(self) -> str:
        return f"SqlError({self.sqlstate!r}, {self.message!r})"


# SQLSTATEs used across the code base (Postgres names).
SYNTAX_ERROR = "42601"
UNDEFINED_TABLE = "42P01"
UNDEFINED_COLUMN = "42703"
UNDEFINED_FUNCTION = "42883"
UNDEFINED_OBJECT = "42704"
UNDEFINED_SCHEMA = "3F000"
DUPLICATE_TABLE = "42P07"
DUPLICATE_SCHEMA = "42P06"
DUPLICATE_COLUMN = "42701"
AMBIGUOUS_COLUMN = "42702"
DATATYPE_MISMATCH = "42804"
GROUPING_ERROR = "42803"
INVALID_TEXT_REPRESENTATION = "22P02"
NUMERIC_VALUE_OUT_OF_RANGE = "22003"
DIVISION_BY_ZERO = "22012"
CHARACTER_NOT_IN_REPERTOIRE = "22021"
STRING_DATA_RIGHT_TRUNCATION = "22001"
NOT_NULL_VIOLATION = "23502"
CARDINALITY_VIOLATION = "21000"
FEATURE_NOT_SUPPORTED = "0A000"
PROTOCOL_VIOLATION = "08P01"
QUERY_CANCELED = "57014"
INTERNAL_ERROR = "XX000"
INVALID_PARAMETER_VALUE = "22023"
UNDEFINED_PARAMETER = "42704"
CANT_CHANGE_RUNTIME_PARAM = "55P02"
INVALID_TRANSACTION_STATE = "25000"
ACTIVE_SQL_TRANSACTION = "25001"
IN_FAILED_SQL_TRANSACTION = "25P02"
INVALID_PASSWORD = "28P01"
INVALID_CATALOG_NAME = "3D000"
DEPENDENT_OBJECTS_STILL_EXIST = "2BP01"
WRONG_OBJECT_TYPE = "42809"
INSUFFICIENT_PRIVILEGE = "42501"
PROGRAM_LIMIT_EXCEEDED = "54000"
OUT_OF_MEMORY = "53200"
INVALID_CURSOR_NAME = "34000"
INVALID_SQL_STATEMENT_NAME = "26000"
DUPLICATE_PREPARED_STATEMENT = "42P05"
DUPLICATE_CURSOR = "42P03"
INVALID_DATETIME_FORMAT = "22007"
DATETIME_FIELD_OVERFLOW = "22008"
INVALID_BINARY_REPRESENTATION = "22P03"


def unsupported(what: str) -> SqlError:
    """0A000 naming the construct that is not supported yet."""
    return SqlError(FEATURE_NOT_SUPPORTED, f"{what} not yet supported")


def before_since(ts: int, since: int) -> SqlError:
    """22000: a read (SELECT / SUBSCRIBE ... AS OF) at a time its inputs no longer answer."""
    return SqlError("22000", f"Timestamp ({ts}) is not valid for all inputs: the inputs are readable from {since} on",
                    hint="AS OF must be at or after the since of every input.")


def internal_error(cause: BaseException | str) -> SqlError:
    """The XX000 a client sees for a failure no rule maps: a generic message naming a reference
    under which the original text (a Python, Spark or py4j message) is logged server-side."""
    import logging
    import uuid

    ref = uuid.uuid4().hex[:12]
    log = logging.getLogger("mzspark.internal_error")
    if isinstance(cause, BaseException):
        log.error("internal error [%s]: %s", ref, cause, exc_info=cause)
    else:
        log.error("internal error [%s]: %s", ref, cause)
    return SqlError(INTERNAL_ERROR, f"internal error [{ref}]",
                    hint="The original error is in the server log under this reference.")
