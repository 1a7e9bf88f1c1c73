"""A minimal raw pgwire v3 client for tests that must send exactly chosen bytes."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

PROTOCOL_3_0 = 196608


@dataclass
class Message:
    type: bytes
    body: bytes

    def error_fields(self) -> dict[str, str]:
        """Fields of an ErrorResponse / NoticeResponse keyed by their one-letter code."""
        out: dict[str, str] = {}
        for part in self.body.split(b"\x00"):
            if part:
                out[chr(part[0])] = part[1:].decode("utf-8", "replace")
        return out

    @property
    def sqlstate(self) -> str | None:
        return self.error_fields().get("C") if self.type == b"E" else None


@dataclass
class Closed:
    """The server closed the connection (EOF or reset)."""

    reset: bool = False


def msg(type_: bytes, body: bytes = b"") -> bytes:
    return type_ + struct.pack("!i", len(body) + 4) + body


def cstr(s: str | bytes) -> bytes:
    return (s.encode() if isinstance(s, str) else s) + b"\x00"


def startup_packet(user: str = "materialize", database: str = "materialize") -> bytes:
    body = struct.pack("!i", PROTOCOL_3_0)
    body += cstr("user") + cstr(user) + cstr("database") + cstr(database) + b"\x00"
    return struct.pack("!i", len(body) + 4) + body


def query(sql: str) -> bytes:
    return msg(b"Q", cstr(sql))


def parse(sql: str, param_oids: tuple[int, ...] = (), name: str = "") -> bytes:
    body = cstr(name) + cstr(sql) + struct.pack("!h", len(param_oids))
    body += b"".join(struct.pack("!i", o) for o in param_oids)
    return msg(b"P", body)


def bind(
    params: tuple[bytes | None, ...],
    *,
    portal: str = "",
    statement: str = "",
    param_formats: tuple[int, ...] = (),
    result_formats: tuple[int, ...] = (),
) -> bytes:
    body = cstr(portal) + cstr(statement)
    body += struct.pack("!h", len(param_formats)) + b"".join(
        struct.pack("!h", f) for f in param_formats
    )
    body += struct.pack("!h", len(params))
    for p in params:
        body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
    body += struct.pack("!h", len(result_formats)) + b"".join(
        struct.pack("!h", f) for f in result_formats
    )
    return msg(b"B", body)


def describe_portal(portal: str = "") -> bytes:
    return msg(b"D", b"P" + cstr(portal))


def execute(portal: str = "", max_rows: int = 0) -> bytes:
    return msg(b"E", cstr(portal) + struct.pack("!i", max_rows))


def sync() -> bytes:
    return msg(b"S")


def terminate() -> bytes:
    return msg(b"X")


@dataclass
class RawConn:
    sock: socket.socket
    buf: bytearray = field(default_factory=bytearray)

    @classmethod
    def connect(cls, host: str, port: int, timeout: float = 30.0) -> RawConn:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.settimeout(timeout)
        return cls(sock)

    @classmethod
    def startup(cls, host: str, port: int, timeout: float = 30.0) -> RawConn:
        """Connect, send a v3 startup packet, and read up to the first ReadyForQuery."""
        conn = cls.connect(host, port, timeout)
        conn.send(startup_packet())
        msgs = conn.read_until_ready()
        assert not isinstance(msgs[-1], Closed), f"closed during startup: {msgs}"
        assert msgs[-1].type == b"Z", msgs
        return conn

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self, n: int) -> bool:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def read_message(self) -> Message | Closed:
        """Next backend message, or Closed. Raises socket.timeout if the server hangs."""
        try:
            if not self._fill(5):
                return Closed()
            type_ = bytes(self.buf[:1])
            (length,) = struct.unpack("!i", self.buf[1:5])
            assert length >= 4, f"bad length {length} from server"
            if not self._fill(1 + length):
                return Closed()
        except ConnectionResetError:
            return Closed(reset=True)
        body = bytes(self.buf[5 : 1 + length])
        del self.buf[: 1 + length]
        return Message(type_, body)

    def read_until_ready(self) -> list[Message | Closed]:
        """Messages up to and including ReadyForQuery (or the close)."""
        out: list[Message | Closed] = []
        while True:
            m = self.read_message()
            out.append(m)
            if isinstance(m, Closed) or m.type == b"Z":
                return out

    def read_until_error_or_close(self) -> list[Message | Closed]:
        """Messages up to an ErrorResponse, a ReadyForQuery or the close, whichever first."""
        out: list[Message | Closed] = []
        while True:
            m = self.read_message()
            out.append(m)
            if isinstance(m, Closed) or m.type in (b"E", b"Z"):
                return out

    def simple_query(self, sql: str) -> list[Message | Closed]:
        self.send(query(sql))
        return self.read_until_ready()

    def close(self) -> None:
        try:
            self.sock.sendall(terminate())
        except OSError:
            pass
        self.sock.close()


def data_rows(msgs: list[Message | Closed]) -> list[list[bytes | None]]:
    """Decode the DataRow messages among `msgs` (values as raw bytes)."""
    rows: list[list[bytes | None]] = []
    for m in msgs:
        if isinstance(m, Message) and m.type == b"D":
            (n,) = struct.unpack("!h", m.body[:2])
            pos = 2
            row: list[bytes | None] = []
            for _ in range(n):
                (ln,) = struct.unpack("!i", m.body[pos : pos + 4])
                pos += 4
                if ln < 0:
                    row.append(None)
                else:
                    row.append(m.body[pos : pos + ln])
                    pos += ln
            rows.append(row)
    return rows


def errors(msgs: list[Message | Closed]) -> list[str]:
    """SQLSTATEs of the ErrorResponses among `msgs`."""
    return [m.sqlstate or "" for m in msgs if isinstance(m, Message) and m.type == b"E"]
