"""pgwire protocol tests: a PgServer on an ephemeral port in front of a tiny in-memory
coordinator, driven by real clients (psql, psycopg 3, psycopg2, asyncpg, pg8000) and raw
sockets. No Spark."""

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
# psql
# ---------------------------------------------------------------------------------------------

PSQL = shutil.which("psql")
needs_psql = pytest.mark.skipif(PSQL is None, reason="psql not installed")


def psql(port: int, *args: str, password: str | None = None, input: str | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(
        [PSQL or "psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "materialize",
         "materialize", *args],
        capture_output=True, text=True, timeout=15, env=env, input=input,
    )


@needs_psql
def test_psql_select_all_types_text(srv: ServerThread) -> None:
    r = psql(srv.port, "-A", "-t", "-F", "|", "-c", "select * from all_types")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split("|") == ALL_TYPES_TEXT
    assert lines[1] == "|" * (len(ALL_TYPES_TEXT) - 1)


@needs_psql
def test_psql_multi_statement_error_stops_batch(srv: ServerThread) -> None:
    r = psql(srv.port, "-c", "create table x; error; create table x")
    assert r.returncode == 1
    assert 'ERROR:  column "zz" does not exist' in r.stderr
    assert "DETAIL:  some detail" in r.stderr and "HINT:  some hint" in r.stderr
    # Position is made relative to the whole query string: 'error' starts at 17, +8 - 1.
    assert "LINE 1: create table x; error; create table x" in r.stderr
    assert r.stdout.count("CREATE TABLE") == 1


@needs_psql
def test_psql_copy_out_and_notice_and_set(srv: ServerThread) -> None:
    r = psql(srv.port, "-c", "copy t to stdout")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("1\tx\n2\ttab\\there\n")
    r = psql(srv.port, "-c", "notice")
    assert "NOTICE:  this is a notice" in r.stderr
    r = psql(srv.port, "-c", "boom")
    assert r.returncode == 1 and "ERROR:  internal error [" in r.stderr and "kaboom" not in r.stderr


@needs_psql
def test_psql_copy_in_from_stdin(srv: ServerThread, coord: FakeCoordinator) -> None:
    before = len(coord.tables["t"][1])
    r = psql(srv.port, "-c", "copy t from stdin", input="7\tseven\n8\t\\N\n9\ta\\\\b\\tc\n\\.\n")
    assert r.returncode == 0, r.stderr
    assert "COPY 3" in r.stdout
    assert coord.tables["t"][1][before:] == [(7, "seven"), (8, None), (9, "a\\b\tc")]
    del coord.tables["t"][1][before:]


# ---------------------------------------------------------------------------------------------
# psycopg 3
# ---------------------------------------------------------------------------------------------

def _expected_python_row() -> tuple[Any, ...]:
    row = list(ALL_TYPES_ROW)
    row[4] = 1.5
    return tuple(row)


def test_psycopg_text_and_binary_results(srv: ServerThread) -> None:
    import psycopg

    with psycopg.connect(dsn(srv.port)) as conn:
        assert conn.info.parameter_status("server_version") == "9.5.0"
        assert conn.info.parameter_status("IntervalStyle") == "postgres"
        text_rows = conn.execute("select * from all_types").fetchall()
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            rows = cur.execute("select * from all_types").fetchall()
            assert [d.name for d in cur.description] == [c.name for c in ALL_TYPES_COLUMNS]
            row = rows[0]
            exp = _expected_python_row()
            for i, col in enumerate(ALL_TYPES_COLUMNS):
                if col.name == "iv":
                    assert row[i] == dt.timedelta(days=14 * 30 + 3, seconds=14706) or row[i] == text_rows[0][i]
                elif col.name == "j":
                    assert row[i] == {"a": [1, 2.5, None]}
                else:
                    assert row[i] == exp[i], (col.name, binary, row[i], exp[i])
            assert rows[1] == (None,) * len(ALL_TYPES_COLUMNS)


ECHO_VALUES: list[tuple[str, Any]] = [
    ("bool", True),
    ("int2", -7),
    ("int4", 2**31 - 1),
    ("int8", -(2**62)),
    ("float8", 1e-300),
    ("float4", 0.5),
    ("numeric", Decimal("-1.2300")),
    ("numeric", Decimal("12345678901234567890.000000001")),
    ("text", "x\ty'z\"\\ ünï"),
    ("varchar", "v"),
    ("date", dt.date(1999, 12, 31)),
    ("time", dt.time(23, 59, 59, 999999)),
    ("timestamp", dt.datetime(1970, 1, 1, 0, 0, 0, 1)),
    ("timestamptz", dt.datetime(2020, 6, 1, 12, 30, tzinfo=dt.UTC)),
    ("interval", dt.timedelta(days=-1, seconds=3661, microseconds=5)),
    ("bytea", b"\x00\x01\xfe\xff"),
    ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678")),
    ("oid", 4294967295),
]


@pytest.mark.parametrize("binary", [False, True])
def test_psycopg_server_side_params_roundtrip(srv: ServerThread, binary: bool) -> None:
    import psycopg
    from psycopg.types.json import Jsonb

    with psycopg.connect(dsn(srv.port)) as conn:
        ph = "%b" if binary else "%t"
        for typ, value in ECHO_VALUES:
            for prepare in (False, True):
                cur = conn.cursor(binary=binary)
                got = cur.execute(f"select {ph}::{typ}", [value], prepare=prepare).fetchone()
                assert got == (value,), (typ, value, got, binary, prepare)
        got = conn.execute(f"select {ph}::jsonb", [Jsonb({"k": [1, None]})]).fetchone()
        assert got == ({"k": [1, None]},)
        got = conn.execute(f"select {ph}, {ph}", [None, "two"]).fetchone()
        assert got == (None, "two")


def test_psycopg_errors_notices_and_parameter_status(srv: ServerThread) -> None:
    import psycopg

    notices: list[str] = []
    with psycopg.connect(dsn(srv.port), autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(f"{d.severity}:{d.sqlstate}:{d.message_primary}"))
        with pytest.raises(psycopg.errors.UndefinedColumn) as ei:
            conn.execute("error")
        d = ei.value.diag
        assert (d.severity, d.severity_nonlocalized, d.sqlstate) == ("ERROR", "ERROR", "42703")
        assert (d.message_primary, d.message_detail, d.message_hint, d.statement_position) == (
            'column "zz" does not exist', "some detail", "some hint", "8")
        with pytest.raises(psycopg.errors.InternalError_) as ei2:
            conn.execute("boom")
        # an unexpected Python exception: XX000 with a reference, its text only in the server log
        assert ei2.value.diag.sqlstate == "XX000" and "kaboom" not in str(ei2.value)
        assert str(ei2.value).startswith("internal error [")
        assert conn.execute("select %s::int4", [3]).fetchone() == (3,)
        conn.execute("notice")
        assert notices == ["NOTICE:00000:this is a notice"]
        conn.execute("set application_name = 'zzz'")
        assert conn.info.parameter_status("application_name") == "zzz"
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as ei3:
            conn.execute("select %s::int4", ["abc"])
        assert 'invalid input syntax for type integer: "abc"' in str(ei3.value)
        assert conn.execute("select %s::int4", [4]).fetchone() == (4,)


def test_psycopg_copy_in_out(srv: ServerThread, coord: FakeCoordinator) -> None:
    import psycopg

    before = len(coord.tables["t"][1])
    with psycopg.connect(dsn(srv.port), autocommit=True) as conn:
        cur = conn.cursor()
        with cur.copy("copy t to stdout") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        assert data == b"1\tx\n2\ttab\\there\n"
        assert cur.rowcount == 2
        with cur.copy("copy t to stdout csv header") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        assert data == b"a,b\n1,x\n2,tab\there\n"
        with cur.copy("copy t from stdin") as copy:
            copy.write_row((10, "new\nline"))
            copy.write_row((11, None))
        assert cur.statusmessage == "COPY 2"
        with cur.copy("copy t from stdin csv header") as copy:
            copy.write('a,b\n12,"quoted, ""x"""\n13,\n14,""\n')
        assert coord.tables["t"][1][before:] == [
            (10, "new\nline"), (11, None), (12, 'quoted, "x"'), (13, None), (14, "")]
        with pytest.raises(ZeroDivisionError):  # psycopg sends CopyFail, re-raises
            with cur.copy("copy t from stdin") as copy:
                copy.write_row((15, "never"))
                raise ZeroDivisionError("client gave up")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            with cur.copy("copy t from stdin") as copy:
                copy.write(b"notanint\tx\n")
        with pytest.raises(psycopg.errors.BadCopyFileFormat):
            with cur.copy("copy t from stdin") as copy:
                copy.write(b"1\tx\textra\n")
        assert conn.execute("select %s::int4", [1]).fetchone() == (1,)
    assert len(coord.tables["t"][1]) == before + 5
    del coord.tables["t"][1][before:]


def test_psycopg_cancel_request(srv: ServerThread, coord: FakeCoordinator) -> None:
    import psycopg

    with psycopg.connect(dsn(srv.port), autocommit=True) as conn:
        session = next(s for s in coord.sessions if s.pid == conn.info.backend_pid)
        # cancel_safe: libpq's blocking PQcancel would hold the GIL and starve the server
        # thread running in this same process.
        t = threading.Thread(target=lambda: (session.running.wait(5), conn.cancel_safe()))
        t.start()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("select sleep")
        t.join()
        assert session in coord.cancels
        assert conn.execute("select %s::int4", [1]).fetchone() == (1,)
    # A CancelRequest with the wrong secret cancels nothing; the socket is just closed.
    r = Raw(srv.port)
    msgs = r.startup()
    pid, secret = struct.unpack("!iI", dict(msgs)[b"K"])
    session = next(s for s in coord.sessions if s.pid == pid)
    r.send(Raw.msg(b"Q", b"select sleep\0"))
    assert session.running.wait(5)
    c = Raw(srv.port)
    c.send(struct.pack("!iiiI", 16, 80877102, pid, secret ^ 1))
    assert c.is_closed()
    assert session not in coord.cancels
    c = Raw(srv.port)
    c.send(struct.pack("!iiiI", 16, 80877102, pid, secret))
    assert c.is_closed()
    msgs = r.until()
    assert fields(msgs[0][1])["C"] == "57014" and session in coord.cancels
    r.close()


def test_psycopg_pipeline_and_error_mid_stream(srv: ServerThread) -> None:
    import psycopg

    with psycopg.connect(dsn(srv.port), autocommit=True) as conn:
        with conn.pipeline():
            c1 = conn.execute("select %s::int4", [1])
            c2 = conn.execute("select series 3 batch 2")
            c3 = conn.execute("select %s::text", ["z"])
        assert c1.fetchall() == [(1,)]
        assert c2.fetchall() == [(1,), (2,), (3,)]
        assert c3.fetchall() == [("z",)]
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("select fail midway").fetchall()
        assert conn.execute("select series 2").fetchall() == [(1,), (2,)]


# ---------------------------------------------------------------------------------------------
# psycopg2, pg8000, asyncpg
# ---------------------------------------------------------------------------------------------


def test_psycopg2_simple_queries(srv: ServerThread) -> None:
    import psycopg2

    conn = psycopg2.connect(dsn(srv.port))
    try:
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute("select * from all_types")
        row = cur.fetchone()
        assert row[:4] == (True, -2, 123, 9000000000)
        assert row[6] == Decimal("-123456789.000100")
        cur.execute("select series 25000 batch 10000")
        assert [r[0] for r in cur.fetchall()] == list(range(1, 25001))
    finally:
        conn.close()


def test_pg8000_extended_protocol(srv: ServerThread) -> None:
    import pg8000.native

    conn = pg8000.native.Connection("materialize", host="127.0.0.1", port=srv.port,
                                    database="materialize")
    try:
        rows = conn.run("select * from all_types")
        assert rows[0][:4] == [True, -2, 123, 9000000000]
        assert rows[0][10] == dt.date(2020, 2, 29)
        assert rows[1] == [None] * len(ALL_TYPES_COLUMNS)
        assert conn.run("select :v::int8, :w::text", v=42, w="hi") == [[42, "hi"]]
        assert conn.run("select :v::timestamp", v=dt.datetime(2021, 3, 4, 5, 6, 7, 8)) == [
            [dt.datetime(2021, 3, 4, 5, 6, 7, 8)]]
        assert conn.run("select :v::numeric", v=Decimal("1E+3")) == [[Decimal("1000")]]
        assert conn.run("select :v::interval", v=dt.timedelta(days=2, seconds=5)) == [
            [dt.timedelta(days=2, seconds=5)]]
        with pytest.raises(pg8000.native.DatabaseError) as ei:
            conn.run("error")
        assert ei.value.args[0]["C"] == "42703"
        assert conn.run("select series 3") == [[1], [2], [3]]
    finally:
        conn.close()


def test_asyncpg_binary_extended_protocol(srv: ServerThread) -> None:
    import asyncpg

    async def main() -> None:
        conn = await asyncpg.connect(host="127.0.0.1", port=srv.port, user="materialize",
                                     database="materialize", ssl=False)
        try:
            row = await conn.fetchrow("select * from all_types")
            assert row["b"] is True and row["i8"] == 9000000000 and row["f4"] == 1.5
            assert row["n"] == Decimal("-123456789.000100")
            assert row["ts"] == dt.datetime(2020, 1, 2, 3, 4, 5, 60000)
            assert row["tstz"] == dt.datetime(2020, 1, 2, 3, 4, 5, 60000, tzinfo=dt.UTC)
            assert row["by"] == b"\x00\xff\x10" and row["u"] == ALL_TYPES_ROW[17]
            assert row["tm"] == dt.time(4, 5, 6, 500000) and row["d"] == dt.date(2020, 2, 29)
            assert row["iv"] == dt.timedelta(days=365 + 2 * 30 + 3, seconds=14706)  # asyncpg: 1 y = 365 d
            assert row["j"] == '{"a": [1, 2.5, null]}'
            for typ, value in ECHO_VALUES:
                got = await conn.fetchval(f"select $1::{typ}", value)
                assert got == value, (typ, value, got)
            stmt = await conn.prepare("select $1::int4, $2::text")
            assert tuple(await stmt.fetchrow(1, "a")) == (1, "a")
            assert tuple(await stmt.fetchrow(2, None)) == (2, None)
            await conn.executemany("insert $1::int4", [(1,), (2,), (3,)])
            async with conn.transaction():
                got = [r["s"] async for r in conn.cursor("select series 20 batch 6", prefetch=7)]
                assert got == list(range(1, 21))
                cur = await conn.cursor("select series 10 batch 4")
                assert [r[0] for r in await cur.fetch(3)] == [1, 2, 3]
                assert [r[0] for r in await cur.fetch(5)] == [4, 5, 6, 7, 8]
            with pytest.raises(asyncpg.exceptions.UndefinedColumnError):
                await conn.execute("error")
            with pytest.raises(asyncpg.exceptions.DataError):
                await conn.fetchval("select $1::int4", "not an int")
            assert await conn.fetchval("select $1::int8", 5) == 5
        finally:
            await conn.close()

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# Authentication and startup
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["scram-sha-256", "md5"])
def test_password_auth(coord: FakeCoordinator, method: str) -> None:
    import asyncpg
    import psycopg

    with ServerThread(coord, password="s3cr3t ü", auth_method=method) as s:
        with psycopg.connect(dsn(s.port, password="'s3cr3t ü'")) as conn:
            assert conn.execute("select %s::int4", [1]).fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError) as ei:
            psycopg.connect(dsn(s.port, password="wrong"))
        assert "password authentication failed" in str(ei.value)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(dsn(s.port))  # no password supplied

        async def via_asyncpg() -> None:
            conn = await asyncpg.connect(host="127.0.0.1", port=s.port, user="materialize",
                                         database="materialize", password="s3cr3t ü", ssl=False)
            assert await conn.fetchval("select $1::int4", 9) == 9
            await conn.close()
            with pytest.raises(asyncpg.exceptions.InvalidPasswordError):
                await asyncpg.connect(host="127.0.0.1", port=s.port, user="materialize",
                                      database="materialize", password="nope", ssl=False)

        asyncio.run(via_asyncpg())
        if PSQL is not None:
            r = psql(s.port, "-c", "create table x", password="s3cr3t ü")
            assert r.returncode == 0, r.stderr
            r = psql(s.port, "-w", "-c", "create table x", password="bad")
            assert r.returncode != 0 and "password authentication failed" in r.stderr


def test_password_auth_raw_md5_and_cleartext_not_offered(coord: FakeCoordinator) -> None:
    with ServerThread(coord, password="pw", auth_method="md5") as s:
        r = Raw(s.port)
        payload = struct.pack("!i", 196608) + b"user\0bob\0\0"
        r.send(struct.pack("!i", len(payload) + 4) + payload)
        kind, body = r.recv()
        code, salt = struct.unpack("!i4s", body)
        assert (kind, code) == (b"R", 5)  # MD5, never 3 (cleartext)
        import hashlib
        inner = hashlib.md5(b"pwbob").hexdigest().encode()
        r.send(Raw.msg(b"p", b"md5" + hashlib.md5(inner + salt).hexdigest().encode() + b"\0"))
        msgs = r.until(b"Z")
        assert msgs[0] == (b"R", struct.pack("!i", 0))
        r.close()


def test_startup_details(srv: ServerThread, coord: FakeCoordinator) -> None:
    import psycopg

    r = Raw(srv.port)
    msgs = r.startup(application_name="myapp", options="-c x=y")
    params = dict(tuple(b.rstrip(b"\0").decode().split("\0")) for k, b in msgs if k == b"S")
    for name in ("server_version", "server_encoding", "client_encoding", "DateStyle",
                 "TimeZone", "integer_datetimes", "standard_conforming_strings",
                 "IntervalStyle", "is_superuser", "application_name"):
        assert name in params
    assert params["application_name"] == "myapp"
    assert kinds(msgs)[0:1] == b"R" and b"K" in kinds(msgs) and msgs[-1] == (b"Z", b"I")
    pid, secret = struct.unpack("!iI", dict(msgs)[b"K"])
    session = next(s for s in coord.sessions if s.pid == pid)
    assert session.secret == secret and session.options["options"] == "-c x=y"
    r.send(Raw.msg(b"X"))
    assert r.is_closed()
    assert wait_for(lambda: session in coord.ended)

    with pytest.raises(psycopg.OperationalError) as ei:
        psycopg.connect(dsn(srv.port, dbname="other"))
    assert 'database "other" does not exist' in str(ei.value)
    with pytest.raises(psycopg.OperationalError) as ei:
        psycopg.connect(dsn(srv.port, user="nobody"))
    assert 'role "nobody" does not exist' in str(ei.value)
    # SSL and GSS encryption requests are declined with 'N' and the startup continues.
    with psycopg.connect(dsn(srv.port, sslmode="prefer")) as conn:
        assert conn.execute("select %s::int4", [1]).fetchone() == (1,)
    for code in (80877103, 80877104):
        r = Raw(srv.port)
        r.send(struct.pack("!ii", 8, code))
        assert r._read(1) == b"N"
        msgs = r.startup()
        assert msgs[-1][0] == b"Z"
        r.close()
    # Protocol 3.1 with a _pq_ option is negotiated down to 3.0.
    r = Raw(srv.port)
    payload = struct.pack("!i", (3 << 16) | 1) + b"user\0materialize\0_pq_.x\0y\0\0"
    r.send(struct.pack("!i", len(payload) + 4) + payload)
    msgs = r.until(b"Z")
    assert msgs[0] == (b"v", struct.pack("!ii", 0, 1) + b"_pq_.x\0")
    r.close()


# ---------------------------------------------------------------------------------------------
# Extended protocol at the message level
# ---------------------------------------------------------------------------------------------


def test_extended_describe_bind_execute_suspend(raw: Raw, coord: FakeCoordinator) -> None:
    raw.send(Raw.parse("s1", "select series 5 batch 2") + Raw.describe(b"S", "s1") + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"1tTZ"
    assert msgs[1][1] == struct.pack("!h", 0)
    executes = coord.executes
    raw.send(Raw.bind("p1", "s1", result_formats=(1,)) + Raw.describe(b"P", "p1") + Raw.FLUSH)
    msgs = [raw.recv(), raw.recv()]
    assert kinds(msgs) == b"2T"
    assert msgs[1][1].endswith(struct.pack("!h", 1))  # binary format in RowDescription
    assert coord.executes == executes  # Bind and Describe do not execute
    raw.send(Raw.msg(b"Q", b"begin\0"))
    raw.until()
    raw.send(Raw.execute("p1", 3) + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"DDDsZ" and coord.executes == executes + 2
    assert [r[0] for r in data_rows(msgs)] == [struct.pack("!q", i) for i in (1, 2, 3)]
    raw.send(Raw.execute("p1", 2) + Raw.execute("p1", 0) + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"DDsCZ"
    assert msgs[3][1] == b"SELECT 0\0"
    raw.send(Raw.execute("p1", 0) + Raw.close_msg(b"P", "p1") + Raw.execute("p1") + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"C3EZ"
    assert fields(msgs[2][1])["C"] == "34000"
    raw.query("commit")


def test_extended_params_and_errors(raw: Raw) -> None:
    # Parameter types from Parse, text and binary parameters, mixed result formats.
    raw.send(Raw.parse("", "select $1, $2", (23, 701)) + Raw.describe(b"S", "")
             + Raw.bind("", "", [b"42", struct.pack("!d", 2.5)], (0, 1), (0, 1))
             + Raw.execute() + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"1tT2DCZ"
    assert msgs[1][1] == struct.pack("!hII", 2, 23, 701)
    assert data_rows(msgs) == [[b"42", struct.pack("!d", 2.5)]]
    # Wrong parameter count: error, everything up to Sync is skipped.
    raw.send(Raw.parse("two", "select $1, $2", (23, 23)) + Raw.bind("", "two", [b"1"])
             + Raw.execute() + Raw.parse("two", "select $1") + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"1EZ"
    err = fields(msgs[1][1])
    assert err["C"] == "08P01" and err["S"] == "ERROR"
    assert err["M"] == 'bind message supplies 1 parameters, but prepared statement "two" requires 2'
    # The connection recovered; named statement exists, duplicate Parse fails.
    raw.send(Raw.parse("two", "select $1") + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"EZ" and fields(msgs[0][1])["C"] == "42P05"
    # Invalid text, NUL bytes, bad binary.
    for params, fmts, code, message in [
        ([b"abc", b"1"], (), "22P02", 'invalid input syntax for type integer: "abc"'),
        ([b"1", b"9999999999"], (), "22003", 'value "9999999999" is out of range for type integer'),
        ([b"1", b"\x00\x01"], (1,), "22P03", "incorrect binary data format in bind parameter 1"),
    ]:
        raw.send(Raw.bind("", "two", params, fmts) + Raw.execute() + Raw.SYNC)
        msgs = raw.until()
        assert kinds(msgs) == b"EZ", msgs
        assert (fields(msgs[0][1])["C"], fields(msgs[0][1])["M"]) == (code, message)
    raw.send(Raw.parse("", "select $1::text") + Raw.bind("", "", [b"a\x00b"]) + Raw.SYNC)
    msgs = raw.until()
    assert fields(msgs[1][1])["M"] == 'invalid byte sequence for encoding "UTF8": 0x00'
    # Multiple statements in one Parse.
    raw.send(Raw.parse("", "create table x; create table x") + Raw.SYNC)
    msgs = raw.until()
    assert fields(msgs[0][1]) | {} == {"S": "ERROR", "V": "ERROR", "C": "42601",
                                       "M": "cannot insert multiple commands into a prepared statement"}
    # Unknown statement / portal, bad format code.
    raw.send(Raw.bind("", "nope") + Raw.SYNC)
    assert fields(raw.until()[0][1])["C"] == "26000"
    raw.send(Raw.describe(b"P", "nope") + Raw.SYNC)
    assert fields(raw.until()[0][1])["C"] == "34000"
    raw.send(Raw.parse("", "select $1") + Raw.bind("", "", [b"1"], (7,)) + Raw.SYNC)
    assert fields(raw.until()[1][1])["M"] == "unsupported format code: 7"


def test_extended_empty_nodata_and_unnamed_replacement(raw: Raw) -> None:
    raw.send(Raw.parse("", "") + Raw.bind("", "") + Raw.describe(b"P", "") + Raw.execute()
             + Raw.SYNC)
    assert kinds(raw.until()) == b"12nIZ"
    raw.send(Raw.parse("", "create table x") + Raw.describe(b"S", "") + Raw.bind("", "")
             + Raw.execute() + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"1tn2CZ" and msgs[4][1] == b"CREATE TABLE\0"
    raw.send(Raw.parse("", "select $1::int4") + Raw.parse("", "select series 1")
             + Raw.bind("", "") + Raw.execute() + Raw.close_msg(b"S", "") + Raw.SYNC)
    msgs = raw.until()
    assert kinds(msgs) == b"112DC3Z"
    assert data_rows(msgs) == [[b"1"]]
    # Query in the middle of the extended protocol drops the unnamed statement.
    raw.send(Raw.parse("", "select series 1") + Raw.SYNC)
    raw.until()
    raw.query("create table x")
    raw.send(Raw.bind("", "") + Raw.SYNC)
    assert fields(raw.until()[0][1])["C"] == "26000"


def test_copy_in_fail_and_unexpected_message(raw: Raw) -> None:
    raw.send(Raw.msg(b"Q", b"copy t from stdin\0"))
    assert raw.recv() == (b"G", b"\x00\x00\x02\x00\x00\x00\x00")
    raw.send(Raw.msg(b"d", b"5\tfive\n") + Raw.msg(b"f", b"user abort\0"))
    msgs = raw.until()
    assert kinds(msgs) == b"EZ"
    assert fields(msgs[0][1])["C"] == "57014"
    assert fields(msgs[0][1])["M"] == "COPY from stdin failed: user abort"
    raw.send(Raw.msg(b"Q", b"copy t from stdin\0"))
    raw.recv()
    raw.send(Raw.msg(b"d", b"5\tfive\n") + Raw.parse("", "select 1"))
    msgs = raw.until()
    assert fields(msgs[0][1])["C"] == "08P01"
    # Stray CopyData after the failed COPY is ignored, as Postgres does.
    raw.send(Raw.msg(b"d", b"junk") + Raw.msg(b"c"))
    assert kinds(raw.query("create table x")) == b"CZ"


def test_simple_query_details(raw: Raw) -> None:
    assert kinds(raw.query("")) == b"IZ"
    assert kinds(raw.query(" ; ")) == b"IZ"
    msgs = raw.query("create table x; set application_name = 'abc'; select series 2 batch 1")
    assert kinds(msgs) == b"CCSTDDCZ"
    assert msgs[2][1] == b"application_name\0abc\0"
    msgs = raw.query("begin")
    assert msgs[-1] == (b"Z", b"T")
    msgs = raw.query("commit")
    assert msgs[-1] == (b"Z", b"I")
    msgs = raw.query("select series 10 batch 3; boom; create table x")
    assert kinds(msgs) == b"TDDDDDDDDDDCEZ"
    assert fields(msgs[-2][1])["C"] == "XX000"
    # Errors in simple query mode do not start skip-till-Sync.
    assert kinds(raw.query("create table x")) == b"CZ"
    raw.send(Raw.msg(b"Q", b"select '\xff\xfe'\0"))
    msgs = raw.until()
    assert kinds(msgs) == b"EZ" and fields(msgs[0][1])["C"] == "22021"
    assert kinds(raw.query("create table x")) == b"CZ"


# ---------------------------------------------------------------------------------------------
# Robustness
# ---------------------------------------------------------------------------------------------


def test_garbage_and_malformed_messages(srv: ServerThread) -> None:
    port = srv.port
    cases: list[bytes] = [
        struct.pack("!i", 3),  # startup length < 8
        struct.pack("!ii", 2**30, 196608),  # huge startup packet
        struct.pack("!ii", 8, 12345),  # unsupported protocol
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        struct.pack("!i", 20) + struct.pack("!i", 196608) + b"user\0mat",  # truncated startup
    ]
    for data in cases:
        r = Raw(port)
        r.send(data)
        try:
            r.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        assert r.is_closed()
        r.close()
    after_startup = [
        b"x\x00\x00\x00\x04",  # unknown message type
        b"Q\x00\x00\x00\x02",  # length < 4
        b"Q\x7f\xff\xff\xff",  # larger than max_message_size
        Raw.msg(b"B", b"\0\0\x00\x05"),  # truncated Bind fields
        Raw.msg(b"Q", b"no terminator"),
        Raw.msg(b"D", b"Zname\0"),
        Raw.msg(b"Q", b"select series 1\0") + b"P\x00\x00\x01\x00abc",  # then EOF mid-message
    ]
    for data in after_startup:
        r = Raw(port)
        r.startup()
        r.send(data)
        r.sock.shutdown(socket.SHUT_WR)
        msgs = []
        while (m := r.recv()) is not None:
            msgs.append(m)
        errors = [fields(b) for k, b in msgs if k == b"E"]
        if not data.endswith(b"abc"):
            assert errors and errors[-1]["C"] == "08P01" and errors[-1]["S"] == "FATAL", data
        r.close()
    assert_server_alive(port)


def test_small_max_message_size(coord: FakeCoordinator) -> None:
    import psycopg

    with ServerThread(coord, max_message_size=1024) as s:
        with psycopg.connect(dsn(s.port)) as conn:
            assert conn.execute("select %s::text", ["x" * 100]).fetchone() == ("x" * 100,)
            with pytest.raises(psycopg.OperationalError):
                conn.execute("select %s::text", ["x" * 5000])
        assert_server_alive(s.port)


def test_disconnect_mid_query_cancels_and_ends_session(srv: ServerThread, coord: FakeCoordinator) -> None:
    r = Raw(srv.port)
    msgs = r.startup()
    pid, _ = struct.unpack("!iI", dict(msgs)[b"K"])
    session = next(s for s in coord.sessions if s.pid == pid)
    r.send(Raw.msg(b"Q", b"select sleep\0"))
    assert session.running.wait(5)
    r.close()
    assert wait_for(lambda: session in coord.cancels and session in coord.ended)


def test_disconnect_during_suspended_portal(srv: ServerThread, coord: FakeCoordinator) -> None:
    closed = threading.Event()

    def gen() -> Iterator[list[tuple[Any, ...]]]:
        try:
            for i in range(1000):
                yield [(i,)]
        finally:
            closed.set()

    r = Raw(srv.port)
    msgs = r.startup()
    pid, _ = struct.unpack("!iI", dict(msgs)[b"K"])
    session = next(s for s in coord.sessions if s.pid == pid)
    coord.tables["gen"] = ((ColumnDesc("g", INT4),), [])
    orig = coord.execute

    def execute(sess, prepared, params):  # type: ignore[no-untyped-def]
        if prepared.plan == ("table", "gen"):
            return RowsResult(prepared.columns, gen())
        return orig(sess, prepared, params)

    coord.execute = execute  # type: ignore[method-assign]
    try:
        r.query("begin")
        r.send(Raw.parse("", "select * from gen") + Raw.bind("c", "") + Raw.execute("c", 2) + Raw.SYNC)
        assert kinds(r.until()) == b"12DDsZ"
        r.close()
        assert wait_for(lambda: closed.is_set() and session in coord.ended)
    finally:
        coord.execute = orig  # type: ignore[method-assign]
        del coord.tables["gen"]


def test_many_concurrent_connections(srv: ServerThread) -> None:
    import psycopg

    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            with psycopg.connect(dsn(srv.port)) as conn:
                for j in range(5):
                    assert conn.execute("select %s::int8", [i * 100 + j]).fetchone() == (i * 100 + j,)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
