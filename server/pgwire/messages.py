"""pgwire protocol 3.0 framing: frontend message parsing and backend message building."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from server.api import ColumnDesc
from sql.errors import SqlError

PROTOCOL_3_0 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_STARTUP_PACKET = 10000

# Frontend message types accepted after startup.
FRONTEND_TYPES = frozenset(b"QPBDESHXCFdcfp")

_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_HDR = struct.Struct("!ci")
NULL_FIELD = b"\xff\xff\xff\xff"


class ProtocolViolation(Exception):
    """A framing error: reported with 08P01 and the connection is closed."""


class MessageReader:
    """Reads typed fields from one message body; a short read is a ProtocolViolation."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolViolation("invalid message format")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def int32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def byte(self) -> int:
        return self._take(1)[0]

    def read_bytes(self, n: int) -> bytes:
        return self._take(n)

    def rest(self) -> bytes:
        return self._take(len(self.data) - self.pos)

    def cstring_bytes(self) -> bytes:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise ProtocolViolation("invalid string in message")
        raw = self.data[self.pos : end]
        self.pos = end + 1
        return raw

    def cstring(self) -> str:
        raw = self.cstring_bytes()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = " ".join(f"0x{b:02x}" for b in raw[e.start : e.end])
            raise SqlError("22021", f'invalid byte sequence for encoding "UTF8": {bad}') from None

    def at_end(self) -> bool:
        return self.pos == len(self.data)

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise ProtocolViolation("invalid message format")


def msg(kind: bytes, payload: bytes = b"") -> bytes:
    return _HDR.pack(kind, len(payload) + 4) + payload


def cstr(s: str) -> bytes:
    return s.encode() + b"\x00"


def auth_request(code: int, extra: bytes = b"") -> bytes:
    return msg(b"R", _I32.pack(code) + extra)


AUTH_OK = auth_request(0)
PARSE_COMPLETE = msg(b"1")
BIND_COMPLETE = msg(b"2")
CLOSE_COMPLETE = msg(b"3")
NO_DATA = msg(b"n")
EMPTY_QUERY = msg(b"I")
PORTAL_SUSPENDED = msg(b"s")
COPY_DONE = msg(b"c")


def parameter_status(name: str, value: str) -> bytes:
    return msg(b"S", cstr(name) + cstr(value))


def backend_key_data(pid: int, secret: int) -> bytes:
    return msg(b"K", struct.pack("!iI", pid & 0x7FFFFFFF, secret & 0xFFFFFFFF))


def ready_for_query(status: str) -> bytes:
    return msg(b"Z", status.encode()[:1] or b"I")


def command_complete(tag: str) -> bytes:
    return msg(b"C", cstr(tag))


def parameter_description(oids: Sequence[int]) -> bytes:
    return msg(b"t", _I16.pack(len(oids)) + b"".join(struct.pack("!I", o) for o in oids))


def row_description(columns: Sequence[ColumnDesc], formats: Sequence[int]) -> bytes:
    parts = [_I16.pack(len(columns))]
    for col, fmt in zip(columns, formats, strict=True):
        try:
            info = col.type.info
            oid, typlen = info.oid, info.typlen
        except KeyError:
            oid, typlen = 25, -1
        parts.append(cstr(col.name))
        parts.append(
            struct.pack(
                "!IhIhih", col.table_oid, col.column_attnum, oid, typlen, col.type.typmod, fmt
            )
        )
    return msg(b"T", b"".join(parts))


def _fields(fields: Iterable[tuple[bytes, str | None]]) -> bytes:
    out = bytearray()
    for code, value in fields:
        if value is not None:
            out += code + value.replace("\x00", "").encode() + b"\x00"
    out += b"\x00"
    return bytes(out)


def error_fields(err: SqlError, severity: str | None = None) -> list[tuple[bytes, str | None]]:
    sev = severity or err.severity or "ERROR"
    return [
        (b"S", sev),
        (b"V", sev),
        (b"C", err.sqlstate),
        (b"M", err.message),
        (b"D", err.detail),
        (b"H", err.hint),
        (b"P", str(err.position) if err.position is not None else None),
    ]


def error_response(err: SqlError, severity: str | None = None) -> bytes:
    return msg(b"E", _fields(error_fields(err, severity)))


def notice_response(severity: str, sqlstate: str, message: str) -> bytes:
    return msg(
        b"N", _fields([(b"S", severity), (b"V", severity), (b"C", sqlstate), (b"M", message)])
    )


def copy_response(kind: bytes, ncols: int) -> bytes:
    """CopyInResponse ('G') / CopyOutResponse ('H'), text format."""
    return msg(kind, b"\x00" + _I16.pack(ncols) + b"\x00\x00" * ncols)


def copy_data(data: bytes) -> bytes:
    return msg(b"d", data)


def negotiate_protocol_version(minor: int, unrecognized: Sequence[str]) -> bytes:
    body = _I32.pack(minor) + _I32.pack(len(unrecognized)) + b"".join(cstr(o) for o in unrecognized)
    return msg(b"v", body)
