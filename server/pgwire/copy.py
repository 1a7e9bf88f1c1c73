"""COPY text and CSV formats: rendering rows for COPY TO STDOUT, parsing COPY FROM STDIN."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from server.api import ColumnDesc
from server.pgwire import codec
from sql.errors import SqlError

BAD_COPY_FILE_FORMAT = "22P04"

_TEXT_ESCAPES = {
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}
_UNESCAPE = {"b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


def text_row_formatter(
    columns: Sequence[ColumnDesc], delimiter: str = "\t", null: str = "\\N"
) -> Callable[[tuple[Any, ...]], bytes]:
    """A function rendering one row as a COPY text-format line (with trailing newline)."""
    encoders = [codec.text_encoder(c.type) for c in columns]
    table = str.maketrans(
        {**_TEXT_ESCAPES, delimiter: "\\" + delimiter}
        if delimiter not in _TEXT_ESCAPES
        else _TEXT_ESCAPES
    )

    def fmt(row: tuple[Any, ...]) -> bytes:
        out = []
        for value, enc in zip(row, encoders, strict=False):
            if value is None:
                out.append(null)
            else:
                out.append(enc(value).decode("utf-8", "replace").translate(table))
        return (delimiter.join(out) + "\n").encode()

    return fmt


def csv_row_formatter(
    columns: Sequence[ColumnDesc], delimiter: str = ",", null: str = "", quote: str = '"'
) -> Callable[[tuple[Any, ...]], bytes]:
    """A function rendering one row as a COPY CSV line; values are quoted when they contain
    the delimiter, a quote, a newline, or equal the NULL string (as Postgres does)."""
    encoders = [codec.text_encoder(c.type) for c in columns]
    specials = (delimiter, quote, "\n", "\r")

    def field(text: str) -> str:
        if text == null or any(c in text for c in specials) or text == "\\.":
            return quote + text.replace(quote, quote + quote) + quote
        return text

    def fmt(row: tuple[Any, ...]) -> bytes:
        out = [
            null if value is None else field(enc(value).decode("utf-8", "replace"))
            for value, enc in zip(row, encoders, strict=False)
        ]
        return (delimiter.join(out) + "\n").encode()

    return fmt


def csv_header(columns: Sequence[ColumnDesc], delimiter: str = ",", quote: str = '"') -> bytes:
    fmt = csv_row_formatter(
        [ColumnDesc(c.name, codec.TEXT_TYPE) for c in columns], delimiter, "\x00", quote
    )
    return fmt(tuple(c.name for c in columns))


def _missing(col: ColumnDesc) -> SqlError:
    return SqlError(BAD_COPY_FILE_FORMAT, f'missing data for column "{col.name}"')


def _extra() -> SqlError:
    return SqlError(BAD_COPY_FILE_FORMAT, "extra data after last expected column")


def _unescape_field(raw: str) -> str:
    """Resolve backslash escapes of one text-format field (octal/hex escapes are bytes)."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c != "\\" or i + 1 >= n:
            out += c.encode()
            i += 1
            continue
        nc = raw[i + 1]
        i += 2
        if nc in _UNESCAPE:
            out.append(_UNESCAPE[nc])
        elif "0" <= nc <= "7":
            digits = nc
            while len(digits) < 3 and i < n and "0" <= raw[i] <= "7":
                digits += raw[i]
                i += 1
            out.append(int(digits, 8) & 0xFF)
        elif nc == "x" and i < n and raw[i] in "0123456789abcdefABCDEF":
            digits = raw[i]
            i += 1
            if i < n and raw[i] in "0123456789abcdefABCDEF":
                digits += raw[i]
                i += 1
            out.append(int(digits, 16))
        else:
            out += nc.encode()
    return codec.bytes_to_str(bytes(out))


def _split_text_line(line: str, delimiter: str) -> list[str]:
    """Split on delimiters that are not backslash-escaped; fields stay raw (escaped)."""
    if "\\" not in line:
        return line.split(delimiter)
    fields: list[str] = []
    start = i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
        elif c == delimiter:
            fields.append(line[start:i])
            i += 1
            start = i
        else:
            i += 1
    fields.append(line[start:])
    return fields


def parse_text(
    data: str, ncols: int, delimiter: str = "\t", null: str = "\\N", header: bool = False
) -> list[list[str | None]]:
    """Parse COPY text format into rows of raw strings (None for NULL)."""
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows: list[list[str | None]] = []
    for lineno, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if line == "\\.":
            break
        if header and lineno == 0:
            continue
        fields = _split_text_line(line, delimiter)
        rows.append(
            [None if f == null else (_unescape_field(f) if "\\" in f else f) for f in fields]
        )
    return rows


def parse_csv(
    data: str,
    delimiter: str = ",",
    null: str = "",
    header: bool = False,
    quote: str = '"',
    escape: str = '"',
) -> list[list[str | None]]:
    """Parse COPY CSV format (RFC 4180 quoting; unquoted fields equal to `null` are NULL)."""
    rows: list[list[str | None]] = []
    row: list[str | None] = []
    field: list[str] = []
    quoted = False  # the current field had quotes (so it is never NULL)
    in_quotes = False
    at_line_start = True
    i, n = 0, len(data)
    first = True

    def end_field() -> None:
        nonlocal field, quoted
        text = "".join(field)
        row.append(None if (not quoted and text == null) else text)
        field = []
        quoted = False

    def end_row() -> None:
        nonlocal row, first
        end_field()
        if not (header and first):
            rows.append(row)
        first = False
        row = []

    while i < n:
        c = data[i]
        if in_quotes:
            if c == escape and i + 1 < n and data[i + 1] == quote:
                field.append(quote)
                i += 2
                continue
            if c == quote:
                in_quotes = False
            else:
                field.append(c)
            i += 1
            continue
        if at_line_start and data.startswith("\\.", i) and data[i + 2 : i + 3] in ("", "\n", "\r"):
            return rows
        at_line_start = False
        if c == quote:
            in_quotes = True
            quoted = True
        elif c == delimiter:
            end_field()
        elif c == "\n" or c == "\r":
            if c == "\r" and data[i + 1 : i + 2] == "\n":
                i += 1
            end_row()
            at_line_start = True
        else:
            field.append(c)
        i += 1
    if in_quotes:
        raise SqlError(BAD_COPY_FILE_FORMAT, "unterminated CSV quoted field")
    if field or row or quoted:
        end_row()
    return rows


def decode_rows(
    raw_rows: list[list[str | None]], columns: Sequence[ColumnDesc]
) -> list[tuple[Any, ...]]:
    """Check column counts and convert raw fields to Python values per column type."""
    ncols = len(columns)
    out: list[tuple[Any, ...]] = []
    for fields in raw_rows:
        if len(fields) < ncols:
            if ncols == 1 and not fields:
                fields = [""]
            else:
                raise _missing(columns[len(fields)])
        if len(fields) > ncols:
            raise _extra()
        out.append(
            tuple(
                None if f is None else codec.parse_text(f, col.type)
                for f, col in zip(fields, columns, strict=True)
            )
        )
    return out


def parse_copy_in(
    data: bytes,
    columns: Sequence[ColumnDesc],
    *,
    csv: bool,
    delimiter: str,
    null: str,
    header: bool,
) -> list[tuple[Any, ...]]:
    """Parse the bytes of a COPY FROM STDIN stream into typed rows."""
    text = codec.bytes_to_str(data)
    if csv:
        raw = parse_csv(text, delimiter=delimiter, null=null, header=header)
    else:
        raw = parse_text(text, len(columns), delimiter=delimiter, null=null, header=header)
    return decode_rows(raw, columns)
