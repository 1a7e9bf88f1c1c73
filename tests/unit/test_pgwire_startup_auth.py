"""pgwire authentication (SCRAM-SHA-256, MD5) and startup details, on the fake coordinator."""

from __future__ import annotations

import asyncio
import struct

import pytest

from tests.unit.pgwire_fakes import (
    PSQL,
    FakeCoordinator,
    Raw,
    ServerThread,
    dsn,
    kinds,
    psql,
    wait_for,
)

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
