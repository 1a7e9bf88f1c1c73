"""COPY text and CSV formats: rendering rows for COPY TO STDOUT, parsing COPY FROM STDIN."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from catalog.storage.text_input import text_columns_to_arrow
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
    columns: Sequence[ColumnDesc], delimiter: str = "\t", null: str = "\\N", style: codec.TextStyle = codec.DEFAULT_STYLE
) -> Callable[[tuple[Any, ...]], bytes]:
    """A function rendering one row as a COPY text-format line (with trailing newline)."""
    encoders = [codec.text_encoder(c.type, style) for c in columns]
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
    columns: Sequence[ColumnDesc], delimiter: str = ",", null: str = "", quote: str = '"',
    style: codec.TextStyle = codec.DEFAULT_STYLE,
) -> Callable[[tuple[Any, ...]], bytes]:
    """A function rendering one row as a COPY CSV line; values are quoted when they contain
    the delimiter, a quote, a newline, or equal the NULL string (as Postgres does)."""
    encoders = [codec.text_encoder(c.type, style) for c in columns]
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


def _check_counts(raw_rows: list[list[str | None]], columns: Sequence[ColumnDesc]) -> None:
    ncols = len(columns)
    for i, fields in enumerate(raw_rows):
        if len(fields) < ncols:
            if ncols == 1 and not fields:
                raw_rows[i] = [""]
            else:
                raise _missing(columns[len(fields)])
        if len(fields) > ncols:
            raise _extra()


def _end_marker(data: bytes, csv: bool, quote: bytes) -> bytes | None:
    """`data` cut before a `\\.` end-of-data line (None when the cut is not certain: a CSV
    stream with quotes, where the line may be inside a quoted field)."""
    i = data.find(b"\\.")
    while i >= 0:
        at_line_start = i == 0 or data[i - 1 : i] == b"\n"
        rest = data[i + 2 : i + 4]
        if at_line_start and (rest[:1] in (b"", b"\n") or rest == b"\r\n" or rest == b"\r"):
            return None if csv and quote in data else data[:i]
        i = data.find(b"\\.", i + 1)
    return data
_ESCAPE_PAIR = re.compile(rb"\\(.)", re.S)


def _quotes_well_formed(data: bytes, delim: bytes) -> bool:
    """Every quote of a CSV stream belongs to a field quoted from its first to its last
    character (Arrow recognizes quotes only there; Postgres also inside a field)."""
    d = re.escape(delim)
    field = re.compile(rb'(?:^|(?<=' + d + rb')|(?<=\r))"(?:[^"]|"")*"(?=' + d + rb'|[\r\n]|\Z)', re.M)
    return b'"' not in field.sub(b"", data)


def _arrow_fields(
    data: bytes, ncols: int, *, csv: bool, delimiter: str, null: str, header: bool
) -> list[pa.ChunkedArray] | None:
    """The raw fields of each column (strings, None = NULL) split by Arrow's CSV reader, or
    None when the stream needs the row-by-row parser (NUL bytes, a bare CR in text format,
    a backslash-escaped delimiter or newline, an uncertain end marker, invalid UTF-8, a
    row with the wrong number of fields: the reference parser then reports the error)."""
    if b"\x00" in data or len(delimiter) != 1 or ncols == 0:
        return None
    cut = _end_marker(data, csv, b'"')
    if cut is None:
        return None
    data = cut
    if not data:
        return [pa.chunked_array([], pa.string()) for _ in range(ncols)]
    delim = delimiter.encode()
    if ncols > 1 and (data[:1] in (b"\n", b"\r") or b"\n\n" in data or b"\n\r\n" in data or b"\r\r" in data):
        return None  # Arrow fills an empty line with empty fields; Postgres: missing data
    if csv and b'"' in data and (header or not _quotes_well_formed(data, delim)):
        return None  # (Arrow's skip_rows counts lines, and a quoted header may span several)
    if not csv:
        if b"\r" in data:
            return None
        if b"\\" in data and any(m.group(1) in (delim, b"\n", b"\r") for m in _ESCAPE_PAIR.finditer(data)):
            return None
    names = [f"c{i}" for i in range(ncols)]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if header else 0,
                                           block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, quote_char='"' if csv else False, double_quote=csv,
                escape_char=False, newlines_in_values=csv and b'"' in data,
                ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, null_values=[null],
                strings_can_be_null=True, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    cols = [table.column(i) for i in range(ncols)]
    if not csv and b"\\" in data:
        cols = [_unescape_column(c) for c in cols]
    return cols


def _unescape_column(col: pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Resolve text-format backslash escapes in the fields that have any."""
    if not pc.any(pc.match_substring(col, "\\"), skip_nulls=True).as_py():
        return col
    return pa.array([v if v is None or "\\" not in v else _unescape_field(v) for v in col.to_pylist()],
                    pa.string())


def _reference_fields(
    data: bytes, columns: Sequence[ColumnDesc], *, csv: bool, delimiter: str, null: str, header: bool
) -> list[pa.Array]:
    """The row-by-row parser (the reference semantics), as columns of raw fields."""
    text = codec.bytes_to_str(data)
    if csv:
        raw = parse_csv(text, delimiter=delimiter, null=null, header=header)
    else:
        raw = parse_text(text, len(columns), delimiter=delimiter, null=null, header=header)
    _check_counts(raw, columns)
    return [pa.array([r[i] for r in raw], pa.string()) for i in range(len(columns))]


def parse_copy_in(
    data: bytes,
    columns: Sequence[ColumnDesc],
    *,
    csv: bool,
    delimiter: str,
    null: str,
    header: bool,
) -> pa.Table:
    """Parse the bytes of a COPY FROM STDIN stream into a table of the columns' storage
    types (columns `c0..`, in `columns`' order). Values are assigned exactly as INSERT
    assigns a string literal (`catalog.storage.text_input`: char(n) padding, length
    checks, numeric scale, ...)."""
    fields = _arrow_fields(data, len(columns), csv=csv, delimiter=delimiter, null=null, header=header)
    if fields is None:
        fields = _reference_fields(data, columns, csv=csv, delimiter=delimiter, null=null, header=header)
    typed = text_columns_to_arrow(fields, [c.type for c in columns])
    return pa.Table.from_arrays(typed, names=[f"c{i}" for i in range(len(columns))])
