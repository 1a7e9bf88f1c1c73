"""pgwire messages over a raw socket: extended protocol, COPY failures, simple-query details."""

from __future__ import annotations

import struct

from tests.unit.pgwire_fakes import (
    FakeCoordinator,
    Raw,
    data_rows,
    fields,
    kinds,
)

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
