"""pgwire with real clients (psql, psycopg 3, psycopg2, pg8000, asyncpg) on the fake coordinator."""

from __future__ import annotations

import asyncio
import datetime as dt
import struct
import threading
import uuid
from decimal import Decimal
from typing import Any

import pytest

from tests.unit.pgwire_fakes import (
    ALL_TYPES_COLUMNS,
    ALL_TYPES_ROW,
    ALL_TYPES_TEXT,
    FakeCoordinator,
    Raw,
    ServerThread,
    dsn,
    fields,
    psql,
)

# ---------------------------------------------------------------------------------------------
# psql
# ---------------------------------------------------------------------------------------------

def test_psql_select_all_types_text(srv: ServerThread) -> None:
    r = psql(srv.port, "-A", "-t", "-F", "|", "-c", "select * from all_types")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split("|") == ALL_TYPES_TEXT
    assert lines[1] == "|" * (len(ALL_TYPES_TEXT) - 1)


def test_psql_multi_statement_error_stops_batch(srv: ServerThread) -> None:
    r = psql(srv.port, "-c", "create table x; error; create table x")
    assert r.returncode == 1
    assert 'ERROR:  column "zz" does not exist' in r.stderr
    assert "DETAIL:  some detail" in r.stderr and "HINT:  some hint" in r.stderr
    # Position is made relative to the whole query string: 'error' starts at 17, +8 - 1.
    assert "LINE 1: create table x; error; create table x" in r.stderr
    assert r.stdout.count("CREATE TABLE") == 1


def test_psql_copy_out_and_notice_and_set(srv: ServerThread) -> None:
    r = psql(srv.port, "-c", "copy t to stdout")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("1\tx\n2\ttab\\there\n")
    r = psql(srv.port, "-c", "notice")
    assert "NOTICE:  this is a notice" in r.stderr
    r = psql(srv.port, "-c", "boom")
    assert r.returncode == 1 and "ERROR:  internal error [" in r.stderr and "kaboom" not in r.stderr


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


def test_error_while_rows_stream_aborts_the_transaction_block(srv: ServerThread) -> None:
    """An error raised after execute returned (while the result streams) fails the open
    transaction block as any other error does (psycopg then sees status INERROR)."""
    import psycopg

    with psycopg.connect(dsn(srv.port)) as conn:
        conn.execute("select series 2").fetchall()  # opens the block (psycopg sends BEGIN)
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("select fail midway").fetchall()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        conn.rollback()
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
