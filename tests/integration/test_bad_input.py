"""Bad SQL and bad bytes: the right SQLSTATEs, and the server (and, where the protocol
allows, the same session) keeps answering."""

from __future__ import annotations

import random
import socket
import struct
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration import rawpg
from tests.integration.harness import MzServer
from tests.integration.rawpg import Closed, Message, RawConn

pytestmark = pytest.mark.integration


@pytest.fixture
def bystander(mz_server: MzServer) -> Iterator[psycopg.Connection]:
    """A session opened before the bad input, checked after it."""
    with mz_server.connect() as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        yield conn
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.fixture
def table(mz_server: MzServer, uniq: Callable[[str], str]) -> str:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
        conn.execute(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y')")
    return t


def sqlstate_of(conn: psycopg.Connection, sql: str) -> str | None:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql)
    return e.value.sqlstate


@pytest.mark.parametrize(
    ("sql", "sqlstate"),
    [
        ("SELEC 1", "42601"),
        ("SELECT (1", "42601"),
        ("SELECT * FROM {t} WHERE", "42601"),
        ("SELECT * FROM no_such_table_bad_input", "42P01"),
        ("INSERT INTO no_such_table_bad_input VALUES (1)", "42P01"),
        ("SELECT no_such_column FROM {t}", "42703"),
        ("SELECT 1/0", "22012"),
        ("SELECT a / 0 FROM {t}", "22012"),
        ("SELECT 'abc'::int", "22P02"),
        ("SELECT * FROM {t} FOR UPDATE", "0A000"),
    ],
)
def test_sqlstates(
    mz_server: MzServer, bystander: psycopg.Connection, table: str, sql: str, sqlstate: str
) -> None:
    sql = sql.format(t=table)
    with mz_server.connect() as conn:
        assert sqlstate_of(conn, sql) == sqlstate
        # Same session, same protocol (simple query) and the extended one, still work.
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (2,)
        assert conn.execute("SELECT %s::int", (7,)).fetchone() == (7,)
    with mz_server.connect() as conn:
        # And the same error through the extended protocol (Parse/Bind/Execute).
        with pytest.raises(psycopg.Error) as e:
            conn.execute(sql, prepare=True)
        assert e.value.sqlstate == sqlstate
        assert conn.execute("SELECT 1", prepare=True).fetchone() == (1,)


def test_error_in_multi_statement_query_stops_it(
    mz_server: MzServer, bystander: psycopg.Connection, table: str
) -> None:
    conn = RawConn.startup(mz_server.host, mz_server.port)
    try:
        msgs = conn.simple_query(
            f"INSERT INTO {table} VALUES (3, 'z'); "
            f"INSERT INTO {table} VALUES (1/0, 'bad'); "
            f"INSERT INTO {table} VALUES (4, 'w')"
        )
        assert rawpg.errors(msgs) == ["22012"]
        assert isinstance(msgs[-1], Message) and msgs[-1].type == b"Z"
        # An implicit transaction: the statement before the error is rolled back with it,
        # the one after it never ran.
        msgs = conn.simple_query(f"SELECT a FROM {table} ORDER BY a")
        assert rawpg.data_rows(msgs) == [[b"1"], [b"2"]]
    finally:
        conn.close()


def test_bind_wrong_parameter_count(mz_server: MzServer, bystander: psycopg.Connection) -> None:
    conn = RawConn.startup(mz_server.host, mz_server.port)
    try:
        conn.send(rawpg.parse("SELECT $1::int + $2::int") + rawpg.bind((b"1",)) + rawpg.execute())
        conn.send(rawpg.sync())
        msgs = conn.read_until_ready()
        assert rawpg.errors(msgs) == ["08P01"], msgs
        assert isinstance(msgs[-1], Message) and msgs[-1].type == b"Z"
        # The session goes on: the right count works on the same connection.
        conn.send(rawpg.parse("SELECT $1::int + $2::int") + rawpg.bind((b"1", b"2")))
        conn.send(rawpg.execute() + rawpg.sync())
        msgs = conn.read_until_ready()
        assert rawpg.errors(msgs) == []
        assert rawpg.data_rows(msgs) == [[b"3"]]
        assert rawpg.data_rows(conn.simple_query("SELECT 1")) == [[b"1"]]
    finally:
        conn.close()


def test_nul_byte_in_text_parameter(mz_server: MzServer, bystander: psycopg.Connection) -> None:
    conn = RawConn.startup(mz_server.host, mz_server.port)
    try:
        conn.send(rawpg.parse("SELECT length($1::text)", (25,)))  # 25 = text
        conn.send(rawpg.bind((b"a\x00b",)) + rawpg.execute() + rawpg.sync())
        msgs = conn.read_until_ready()
        assert rawpg.errors(msgs) == ["22021"], msgs
        conn.send(rawpg.parse("SELECT length($1::text)", (25,)))
        conn.send(rawpg.bind(("ab✓".encode(),)) + rawpg.execute() + rawpg.sync())
        msgs = conn.read_until_ready()
        assert rawpg.data_rows(msgs) == [[b"3"]]
    finally:
        conn.close()


def test_invalid_utf8_in_query(mz_server: MzServer, bystander: psycopg.Connection) -> None:
    conn = RawConn.startup(mz_server.host, mz_server.port)
    try:
        conn.send(rawpg.msg(b"Q", b"SELECT '\xff\xfe'\x00"))
        msgs = conn.read_until_ready()
        assert rawpg.errors(msgs) == ["22021"], msgs
        assert rawpg.data_rows(conn.simple_query("SELECT 1")) == [[b"1"]]
    finally:
        conn.close()


def assert_error_or_close(conn: RawConn) -> None:
    """The server answers garbage with an ErrorResponse and/or closes the connection, and
    does so promptly (read_message raises on a hang)."""
    msgs = conn.read_until_error_or_close()
    last = msgs[-1]
    if isinstance(last, Message):
        assert last.type == b"E", f"expected an error, got {msgs}"
        assert last.sqlstate and len(last.sqlstate) == 5, msgs


def short_timeout(conn: RawConn) -> RawConn:
    conn.sock.settimeout(30)
    return conn


# Garbage after a successful startup (the session is lost: framing cannot be recovered).
AFTER_STARTUP: dict[str, bytes] = {
    "huge_length": b"Q" + struct.pack("!i", 0x7FFF_FFF0) + b"SELECT 1",
    "negative_length": b"Q" + struct.pack("!i", -5) + b"SELECT 1\x00",
    "length_below_4": b"Q" + struct.pack("!i", 2),
    "unknown_type": rawpg.msg(b"z", b"hello\x00"),
    "query_without_nul": rawpg.msg(b"Q", b"SELECT 1"),
    # Bind claiming 5 parameter format codes and carrying none.
    "bind_truncated": rawpg.parse("SELECT 1") + rawpg.msg(b"B", b"\x00\x00\x00\x05"),
    "random_bytes": random.Random(42).randbytes(256),
}


@pytest.mark.parametrize("payload", AFTER_STARTUP.values(), ids=AFTER_STARTUP.keys())
def test_malformed_after_startup(
    mz_server: MzServer, bystander: psycopg.Connection, payload: bytes
) -> None:
    conn = short_timeout(RawConn.startup(mz_server.host, mz_server.port))
    try:
        conn.send(payload)
        assert_error_or_close(conn)
    finally:
        conn.sock.close()


# Garbage instead of a startup packet.
BEFORE_STARTUP: dict[str, bytes] = {
    "huge_startup_length": struct.pack("!ii", 0x7FFF_FFFF, 196608),
    "negative_startup_length": struct.pack("!ii", -8, 196608),
    "tiny_startup_length": struct.pack("!i", 3),
    "unknown_protocol": struct.pack("!ii", 8, 0x0009_0009),
    "startup_without_terminator": struct.pack("!ii", 16, 196608) + b"user\x00mat",
    "random_bytes": random.Random(7).randbytes(512),
}


@pytest.mark.parametrize("payload", BEFORE_STARTUP.values(), ids=BEFORE_STARTUP.keys())
def test_malformed_startup(
    mz_server: MzServer, bystander: psycopg.Connection, payload: bytes
) -> None:
    conn = short_timeout(RawConn.connect(mz_server.host, mz_server.port))
    try:
        conn.send(payload)
        assert_error_or_close(conn)
    finally:
        conn.sock.close()


@pytest.mark.parametrize("cut", [2, 6, 12], ids=lambda n: f"first_{n}_bytes")
def test_truncated_startup_then_close(
    mz_server: MzServer, bystander: psycopg.Connection, cut: int
) -> None:
    """The client sends part of a startup packet and goes away."""
    sock = socket.create_connection((mz_server.host, mz_server.port), timeout=30)
    sock.sendall(rawpg.startup_packet()[:cut])
    sock.shutdown(socket.SHUT_WR)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    # Nothing or an ErrorResponse, never a successful login.
    assert data == b"" or data[:1] == b"E", data[:100]


def test_many_bad_connections_then_good(mz_server: MzServer, bystander: psycopg.Connection) -> None:
    rng = random.Random(1234)
    for _ in range(20):
        conn = short_timeout(RawConn.connect(mz_server.host, mz_server.port))
        try:
            conn.send(rng.randbytes(rng.randint(1, 64)))
            conn.sock.shutdown(socket.SHUT_WR)
            msgs = conn.read_until_error_or_close()
            assert isinstance(msgs[-1], Closed) or msgs[-1].type == b"E"
        finally:
            conn.sock.close()
    with mz_server.connect() as conn:
        assert conn.execute("SELECT 41 + 1").fetchone() == (42,)
