"""pgwire robustness: malformed messages, size limits, disconnects, many connections."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from server.api import ColumnDesc, RowsResult
from sql.types import INT4
from tests.unit.pgwire_fakes import (
    FakeCoordinator,
    Raw,
    ServerThread,
    assert_server_alive,
    dsn,
    fields,
    kinds,
    wait_for,
)

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
