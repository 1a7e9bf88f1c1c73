"""In-process pgwire test fixtures: a fake coordinator, a server thread and a raw-socket client."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from server.api import (
    ColumnDesc,
    CommandResult,
    CopyInResult,
    CopyOutResult,
    Prepared,
    RowsResult,
)
from server.pgwire import PgServer
from sql.errors import SqlError
from sql.types import (
    BOOL,
    BPCHAR,
    BYTEA,
    DATE,
    FLOAT4,
    FLOAT8,
    INT2,
    INT4,
    INT8,
    INTERVAL,
    JSONB,
    NUMERIC,
    OID,
    TEXT,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UUID,
    VARCHAR,
    Interval,
    SqlType,
)

# ---------------------------------------------------------------------------------------------
# A small real coordinator over in-memory tables
# ---------------------------------------------------------------------------------------------

ALL_TYPES_COLUMNS = (
    ColumnDesc("b", BOOL),
    ColumnDesc("i2", INT2),
    ColumnDesc("i4", INT4),
    ColumnDesc("i8", INT8),
    ColumnDesc("f4", FLOAT4),
    ColumnDesc("f8", FLOAT8),
    ColumnDesc("n", NUMERIC),
    ColumnDesc("t", TEXT),
    ColumnDesc("vc", VARCHAR),
    ColumnDesc("bc", BPCHAR),
    ColumnDesc("d", DATE),
    ColumnDesc("tm", TIME),
    ColumnDesc("ts", TIMESTAMP),
    ColumnDesc("tstz", TIMESTAMPTZ),
    ColumnDesc("iv", INTERVAL),
    ColumnDesc("by", BYTEA),
    ColumnDesc("j", JSONB),
    ColumnDesc("u", UUID),
    ColumnDesc("o", OID),
)
ALL_TYPES_ROW = (
    True,
    -2,
    123,
    9000000000,
    1.5,
    0.1,
    Decimal("-123456789.000100"),
    "héllo\ttab",
    "v",
    "ab  ",
    dt.date(2020, 2, 29),
    dt.time(4, 5, 6, 500000),
    dt.datetime(2020, 1, 2, 3, 4, 5, 60000),
    dt.datetime(2020, 1, 2, 3, 4, 5, 60000, tzinfo=dt.UTC),
    Interval(14, 3, 14706000000),
    b"\x00\xff\x10",
    '{"a": [1, 2.5, null]}',
    uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    4000000000,
)
ALL_TYPES_TEXT = [
    "t", "-2", "123", "9000000000", "1.5", "0.1", "-123456789.000100", "héllo\ttab", "v", "ab  ",
    "2020-02-29", "04:05:06.5", "2020-01-02 03:04:05.06", "2020-01-02 03:04:05.06+00",
    "1 year 2 mons 3 days 04:05:06", "\\x00ff10", '{"a": [1, 2.5, null]}',
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "4000000000",
]


class FakeSession:
    def __init__(self, user: str, database: str, options: dict[str, str]) -> None:
        self.pid = random.randint(1000, 2**31 - 1)
        self.secret = random.randint(0, 2**32 - 1)
        self.user = user
        self.database = database
        self.options = options
        self.params = {
            "server_version": "9.5.0",
            "server_encoding": "UTF8",
            "client_encoding": "UTF8",
            "DateStyle": "ISO, MDY",
            "TimeZone": "UTC",
            "integer_datetimes": "on",
            "standard_conforming_strings": "on",
            "IntervalStyle": "postgres",
            "is_superuser": "off",
            "application_name": options.get("application_name", ""),
        }
        self.changed: dict[str, str] = {}
        self.notices: list[tuple[str, str, str]] = []
        self.status = "I"
        self.cancelled = threading.Event()
        self.running = threading.Event()

    def parameter_status(self) -> dict[str, str]:
        return dict(self.params)

    def take_changed_parameters(self) -> dict[str, str]:
        changed, self.changed = self.changed, {}
        return changed

    def take_notices(self) -> list[tuple[str, str, str]]:
        notices, self.notices = self.notices, []
        return notices

    @property
    def transaction_status(self) -> str:
        return self.status

    def abort_transaction(self) -> None:
        if self.status == "T":
            self.status = "E"


def _series(n: int, batch: int) -> Iterator[list[tuple[Any, ...]]]:
    for start in range(1, n + 1, batch):
        yield [(i,) for i in range(start, min(n, start + batch - 1) + 1)]


class FakeCoordinator:
    """Understands a handful of statements; enough to exercise every protocol path."""

    def __init__(self) -> None:
        self.tables: dict[str, tuple[tuple[ColumnDesc, ...], list[tuple[Any, ...]]]] = {
            "all_types": (ALL_TYPES_COLUMNS, [ALL_TYPES_ROW, (None,) * len(ALL_TYPES_COLUMNS)]),
            "t": ((ColumnDesc("a", INT4), ColumnDesc("b", TEXT)), [(1, "x"), (2, "tab\there")]),
        }
        self.sessions: list[FakeSession] = []
        self.ended: list[FakeSession] = []
        self.cancels: list[FakeSession] = []
        self.executes = 0
        self.lock = threading.Lock()

    def new_session(self, user: str, database: str, options: dict[str, str]) -> FakeSession:
        if user == "nobody":
            raise SqlError("28000", 'role "nobody" does not exist', severity="FATAL")
        s = FakeSession(user, database, options)
        with self.lock:
            self.sessions.append(s)
        return s

    def end_session(self, session: FakeSession) -> None:
        with self.lock:
            self.ended.append(session)

    def cancel(self, session: FakeSession) -> None:
        with self.lock:
            self.cancels.append(session)
        session.cancelled.set()

    def check_password(self, user: str, password: str) -> bool:
        return True

    def begin_simple_query(self, session: FakeSession, statements: int) -> None:
        session.simple_queries = getattr(session, "simple_queries", [])
        session.simple_queries.append(statements)

    def end_simple_query(self, session: FakeSession, ok: bool) -> None:
        session.simple_queries.append(ok)

    def split_statements(self, sql: str) -> list[str]:
        return [s.strip() for s in sql.split(";") if s.strip() and not s.strip().startswith("--")]

    def prepare(self, session: FakeSession, sql: str, param_types: list[SqlType | None]) -> Prepared:
        q = " ".join(sql.lower().split())
        if m := re.fullmatch(r"select ((?:\$\d+(?:::\w+)?\s*,?\s*)+)", q):
            casts = re.findall(r"\$(\d+)(?:::(\w+))?", m.group(1))
            n = max(int(i) for i, _ in casts)
            types: list[SqlType] = []
            for i in range(n):
                given = param_types[i] if i < len(param_types) else None
                cast = next((c for j, c in casts if int(j) == i + 1 and c), None)
                types.append(given or (SqlType(cast) if cast else TEXT))
            cols = tuple(ColumnDesc(f"p{int(i)}", types[int(i) - 1]) for i, _ in casts)
            return Prepared(sql, tuple(types), cols, ("echo", [int(i) - 1 for i, _ in casts]))
        if m := re.fullmatch(r"select \* from (\w+)", q):
            if m.group(1) not in self.tables:
                raise SqlError("42P01", f'unknown catalog item \'{m.group(1)}\'')
            return Prepared(sql, (), self.tables[m.group(1)][0], ("table", m.group(1)))
        if m := re.fullmatch(r"select series (\d+)(?: batch (\d+))?", q):
            n, b = int(m.group(1)), int(m.group(2) or 1000)
            return Prepared(sql, (), (ColumnDesc("s", INT8),), ("series", n, b))
        if q == "select sleep":
            return Prepared(sql, (), (ColumnDesc("x", INT4),), ("sleep",))
        if q == "select fail midway":
            return Prepared(sql, (), (ColumnDesc("x", INT4),), ("midway",))
        if m := re.fullmatch(r"set (\w+) (?:=|to) '?([^']*)'?", q):
            return Prepared(sql, (), None, ("set", m.group(1), m.group(2)))
        if q in ("begin", "commit", "rollback"):
            return Prepared(sql, (), None, (q,))
        if m := re.fullmatch(r"copy (\w+) to stdout( csv header)?", q):
            return Prepared(sql, (), None, ("copyout", m.group(1), bool(m.group(2))))
        if m := re.fullmatch(r"copy (\w+) from stdin(?: (csv))?(?: (header))?", q):
            return Prepared(sql, (), None, ("copyin", m.group(1), bool(m.group(2)), bool(m.group(3))))
        if q.startswith("insert"):
            n = max((int(i) for i in re.findall(r"\$(\d+)", q)), default=0)
            types = [(param_types[i] if i < len(param_types) else None) or INT4 for i in range(n)]
            return Prepared(sql, tuple(types), None, ("insert",))
        if q in ("notice", "error", "boom", "create table x"):
            return Prepared(sql, (), None, (q,))
        raise SqlError("42601", f'syntax error at or near "{sql.split()[0]}"', position=1)

    def execute(self, session: FakeSession, prepared: Prepared, params: list[Any]):
        with self.lock:
            self.executes += 1
        kind = prepared.plan[0]
        if kind == "echo":
            row = tuple(params[i] for i in prepared.plan[1])
            return RowsResult(prepared.columns, iter([[row]]))
        if kind == "table":
            cols, rows = self.tables[prepared.plan[1]]
            return RowsResult(cols, iter([list(rows)]))
        if kind == "series":
            return RowsResult(prepared.columns, _series(prepared.plan[1], prepared.plan[2]))
        if kind == "sleep":
            session.cancelled.clear()
            session.running.set()
            if not session.cancelled.wait(10):
                raise SqlError("XX000", "sleep was never cancelled")
            raise SqlError("57014", "canceling statement due to user request")
        if kind == "midway":

            def gen() -> Iterator[list[tuple[Any, ...]]]:
                yield [(1,), (2,)]
                raise SqlError("22012", "division by zero")

            return RowsResult(prepared.columns, gen())
        if kind == "set":
            name = {"application_name": "application_name", "timezone": "TimeZone"}.get(
                prepared.plan[1], prepared.plan[1]
            )
            session.params[name] = prepared.plan[2]
            session.changed[name] = prepared.plan[2]
            return CommandResult("SET")
        if kind == "begin":
            session.status = "T"
            return CommandResult("BEGIN")
        if kind in ("commit", "rollback"):
            session.status = "I"
            return CommandResult(kind.upper())
        if kind == "copyout":
            cols, rows = self.tables[prepared.plan[1]]
            if prepared.plan[2]:
                return CopyOutResult(cols, iter([list(rows)]), csv=True, delimiter=",",
                                     null="", header=True)
            return CopyOutResult(cols, iter([list(rows)]))
        if kind == "copyin":
            name, csv, header = prepared.plan[1:]
            cols = self.tables[name][0]

            def write(table: Any) -> str:
                rows = [tuple(r.values()) for r in table.to_pylist()]
                self.tables[name][1].extend(rows)
                return f"COPY {len(rows)}"

            if csv:
                return CopyInResult(cols, write, csv=True, delimiter=",", null="", header=header)
            return CopyInResult(cols, write)
        if kind == "notice":
            session.notices.append(("NOTICE", "00000", "this is a notice"))
            return CommandResult("NOTICE")
        if kind == "error":
            raise SqlError("42703", 'column "zz" does not exist', detail="some detail",
                           hint="some hint", position=8)
        if kind == "boom":
            raise RuntimeError("kaboom")
        if kind == "create table x":
            return CommandResult("CREATE TABLE")
        return CommandResult("INSERT 0 1")


# ---------------------------------------------------------------------------------------------
# Fixtures: the server runs in its own thread with its own event loop
# ---------------------------------------------------------------------------------------------


class ServerThread:
    def __init__(self, coordinator: FakeCoordinator, **kwargs: Any) -> None:
        self.coordinator = coordinator
        self.kwargs = kwargs
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)
        self.server: PgServer | None = None
        self.port = 0

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = PgServer(self.coordinator, "127.0.0.1", 0, **self.kwargs)
        self.loop.run_until_complete(self.server.start())
        self.port = self.server.port
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> ServerThread:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def coord() -> FakeCoordinator:
    return FakeCoordinator()


@pytest.fixture(scope="module")
def srv(coord: FakeCoordinator) -> Iterator[ServerThread]:
    with ServerThread(coord) as s:
        yield s


def dsn(port: int, **extra: str) -> str:
    parts = {"host": "127.0.0.1", "port": str(port), "user": "materialize",
             "dbname": "materialize", "sslmode": "disable", **extra}
    return " ".join(f"{k}={v}" for k, v in parts.items())


def wait_for(cond: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


class Raw:
    """A minimal raw-socket pgwire client for message-level tests."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    @staticmethod
    def msg(kind: bytes, payload: bytes = b"") -> bytes:
        return kind + struct.pack("!i", len(payload) + 4) + payload

    def _read(self, n: int) -> bytes | None:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self) -> tuple[bytes, bytes] | None:
        header = self._read(5)
        if header is None:
            return None
        (length,) = struct.unpack("!i", header[1:])
        body = self._read(length - 4)
        assert body is not None
        return header[:1], body

    def until(self, kind: bytes = b"Z") -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            m = self.recv()
            assert m is not None, f"EOF before {kind!r}; got {out}"
            out.append(m)
            if m[0] == kind:
                return out

    def is_closed(self) -> bool:
        try:
            while True:
                m = self.recv()
                if m is None:
                    return True
        except (ConnectionResetError, TimeoutError):
            return False

    def startup(self, **params: str) -> list[tuple[bytes, bytes]]:
        params = {"user": "materialize", "database": "materialize", **params}
        payload = struct.pack("!i", 196608) + b"".join(
            k.encode() + b"\0" + v.encode() + b"\0" for k, v in params.items()
        ) + b"\0"
        self.send(struct.pack("!i", len(payload) + 4) + payload)
        return self.until(b"Z")

    def query(self, sql: str) -> list[tuple[bytes, bytes]]:
        self.send(self.msg(b"Q", sql.encode() + b"\0"))
        return self.until(b"Z")

    @classmethod
    def parse(cls, name: str, sql: str, oids: tuple[int, ...] = ()) -> bytes:
        return cls.msg(b"P", name.encode() + b"\0" + sql.encode() + b"\0"
                       + struct.pack(f"!h{len(oids)}I", len(oids), *oids))

    @classmethod
    def bind(cls, portal: str, stmt: str, params: list[bytes | None] = (),  # type: ignore[assignment]
             param_formats: tuple[int, ...] = (), result_formats: tuple[int, ...] = ()) -> bytes:
        body = portal.encode() + b"\0" + stmt.encode() + b"\0"
        body += struct.pack(f"!h{len(param_formats)}h", len(param_formats), *param_formats)
        body += struct.pack("!h", len(params))
        for p in params:
            body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
        body += struct.pack(f"!h{len(result_formats)}h", len(result_formats), *result_formats)
        return cls.msg(b"B", body)

    @classmethod
    def describe(cls, kind: bytes, name: str) -> bytes:
        return cls.msg(b"D", kind + name.encode() + b"\0")

    @classmethod
    def execute(cls, portal: str = "", max_rows: int = 0) -> bytes:
        return cls.msg(b"E", portal.encode() + b"\0" + struct.pack("!i", max_rows))

    @classmethod
    def close_msg(cls, kind: bytes, name: str) -> bytes:
        return cls.msg(b"C", kind + name.encode() + b"\0")

    SYNC = b"S\x00\x00\x00\x04"
    FLUSH = b"H\x00\x00\x00\x04"


def fields(body: bytes) -> dict[str, str]:
    out = {}
    for part in body.rstrip(b"\0").split(b"\0"):
        if part:
            out[chr(part[0])] = part[1:].decode()
    return out


def kinds(msgs: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(k for k, _ in msgs)


def data_rows(msgs: list[tuple[bytes, bytes]]) -> list[list[bytes | None]]:
    rows = []
    for k, body in msgs:
        if k != b"D":
            continue
        (n,) = struct.unpack_from("!h", body)
        pos, row = 2, []
        for _ in range(n):
            (ln,) = struct.unpack_from("!i", body, pos)
            pos += 4
            if ln < 0:
                row.append(None)
            else:
                row.append(body[pos : pos + ln])
                pos += ln
        rows.append(row)
    return rows


@pytest.fixture
def raw(srv: ServerThread) -> Iterator[Raw]:
    r = Raw(srv.port)
    r.startup()
    yield r
    r.close()


def assert_server_alive(port: int) -> None:
    import psycopg

    with psycopg.connect(dsn(port)) as conn:
        assert conn.execute("select %s::int4", [5], prepare=False).fetchone() == (5,)


# ---------------------------------------------------------------------------------------------
# psql (the client and authentication tests run it)
# ---------------------------------------------------------------------------------------------

PSQL = shutil.which("psql")  # make test installs postgresql-client: missing is a failure, not a skip


def psql(port: int, *args: str, password: str | None = None, input: str | None = None):
    assert PSQL is not None, "psql is not installed (make test installs postgresql-client)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(
        [PSQL, "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "materialize",
         "materialize", *args],
        capture_output=True, text=True, timeout=15, env=env, input=input,
    )

