"""One client connection: startup, authentication, the simple query protocol, COPY (the
extended query protocol is `server.pgwire.extended`).

A reader task frames incoming messages into a queue (so a disconnect is noticed while a
statement runs, and cancels it); the connection task processes them in order. Coordinator
calls and result iteration run in the server's thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.api import (
    CommandResult,
    CopyInResult,
    CopyOutResult,
    RowsResult,
    Session,
)
from server.pgwire import codec, messages
from server.pgwire.auth import SCRAM_MECHANISM, ScramServer, md5_verify, password_failed
from server.pgwire.copy import csv_header, csv_row_formatter, parse_copy_in, text_row_formatter
from server.pgwire.messages import MessageReader, ProtocolViolation
from server.pgwire.portals import (
    Portal,
    RowStream,
    Statement,
    resolve_formats,
    result_encoders,
    wait_live,
)
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    INVALID_CATALOG_NAME,
    PROTOCOL_VIOLATION,
    QUERY_CANCELED,
    SqlError,
    internal_error,
)

if TYPE_CHECKING:
    from server.pgwire.host import ConnectionHost
from server.pgwire.extended import (
    ExtendedQueryMixin,
)

log = logging.getLogger("server.pgwire")

DEFAULT_USER = "materialize"
DEFAULT_DATABASE = "materialize"
STARTUP_TIMEOUT = 60.0
FLUSH_THRESHOLD = 256 * 1024
QUEUE_DEPTH = 256
EXTENDED_TYPES = frozenset({b"P", b"B", b"D", b"E", b"C", b"H", b"F"})

_I32 = struct.Struct("!i")
INLINE_SPLIT_CHARS = 4096


class ClientGone(Exception):
    """The client disconnected or terminated; the connection just cleans up."""


class Connection(ExtendedQueryMixin):
    """State and protocol handling of one client connection."""

    def __init__(
        self, server: ConnectionHost, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.server = server
        self.coord = server.coordinator
        self.reader = reader
        self.writer = writer
        self.session: Session | None = None
        self.user = DEFAULT_USER
        self.statements: dict[str, Statement] = {}
        self.portals: dict[str, Portal] = {}
        self.out = bytearray()
        self.closed = False
        self.busy = False
        self.ignore_till_sync = False
        self.queue: asyncio.Queue[tuple[bytes, bytes] | ProtocolViolation | None] = asyncio.Queue(
            QUEUE_DEPTH
        )
        self.reader_task: asyncio.Task[None] | None = None
        self.peer = writer.get_extra_info("peername")

    # -- plumbing --------------------------------------------------------------------------

    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.server.executor, functools.partial(fn, *args, **kwargs)
        )

    async def _split(self, sql: str) -> list[str]:
        """The statements of `sql`: split here when short (a lexer pass of microseconds costs
        less than a round trip through the pool), in the pool when long."""
        if len(sql) <= INLINE_SPLIT_CHARS:
            return self.coord.split_statements(sql)
        return await self._run(self.coord.split_statements, sql)

    async def _flush(self) -> None:
        if not self.out:
            return
        if self.closed or self.writer.is_closing():
            self.out.clear()
            raise ClientGone
        data = bytes(self.out)
        self.out.clear()
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionError, OSError) as e:
            self.closed = True
            raise ClientGone from e

    def _send_error(self, exc: BaseException, severity: str | None = None) -> None:
        # Any error reported inside a transaction block aborts it (25P02 until ROLLBACK), also
        # one raised while a result streams, after the coordinator's execute returned.
        abort = getattr(self.session, "abort_transaction", None)
        if abort is not None:
            try:
                abort()
            except Exception:
                log.exception("abort_transaction failed")
        if isinstance(exc, SqlError):
            err = exc
        else:
            err = internal_error(exc)
            log.warning("internal error on connection %s (%s)", self.peer, err.message)
        self.out += messages.error_response(err, severity)

    async def _fatal(self, err: SqlError) -> None:
        self.out += messages.error_response(err, "FATAL")
        try:
            await self._flush()
        except ClientGone:
            pass

    def _after_statement(self) -> None:
        """Queue notices and changed parameters raised by the last coordinator call."""
        if self.session is None:
            return
        try:
            for severity, sqlstate, message in self.session.take_notices():
                self.out += messages.notice_response(severity, sqlstate, message)
            for name, value in self.session.take_changed_parameters().items():
                self.out += messages.parameter_status(name, value)
            # DEALLOCATE [PREPARE] name | ALL, executed as SQL, drops protocol-level statements
            for stmt_name in getattr(self.session, "take_deallocations", list)():
                if stmt_name is None:
                    self.statements.clear()
                else:
                    self.statements.pop(stmt_name, None)
        except Exception:
            log.exception("collecting notices failed")

    def _ready(self) -> None:
        status = "I"
        if self.session is not None:
            try:
                status = self.session.transaction_status
            except Exception:
                log.exception("transaction_status failed")
        self.out += messages.ready_for_query(status)

    # -- lifecycle -------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            try:
                ok = await asyncio.wait_for(self._startup(), STARTUP_TIMEOUT)
            except TimeoutError:
                log.info("startup timeout from %s", self.peer)
                await self._fatal(SqlError("08006", "timeout expired during startup"))
                return
            if ok:
                await self._serve()
        except ClientGone:
            pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except ProtocolViolation as e:
            log.info("protocol violation from %s: %s", self.peer, e)
            await self._fatal(SqlError(PROTOCOL_VIOLATION, str(e)))
        except SqlError as e:
            await self._fatal(e)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("connection %s failed", self.peer)
            await self._fatal(internal_error(e))
        finally:
            await self._cleanup()

    async def _cleanup(self) -> None:
        self.closed = True
        if self.reader_task is not None:
            self.reader_task.cancel()
        portals = list(self.portals.values())
        self.portals.clear()
        for portal in portals:
            await self._close_portal(portal)
        if self.session is not None:
            session, self.session = self.session, None
            self.server._unregister(session)
            try:
                await self._run(self.coord.end_session, session)
            except Exception:
                log.exception("end_session failed")
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 5)
        except (Exception, asyncio.CancelledError):
            pass

    def abort(self) -> None:
        """Server shutdown: cancel the running statement."""
        if self.session is not None and self.busy:
            self._cancel_session()

    def _cancel_session(self) -> None:
        if self.session is None:
            return
        try:
            self.coord.cancel(self.session)
        except Exception:
            log.exception("cancel failed")

    # -- startup ---------------------------------------------------------------------------

    async def _startup(self) -> bool:
        for _ in range(4):
            (length,) = _I32.unpack(await self.reader.readexactly(4))
            if length < 8 or length > messages.MAX_STARTUP_PACKET:
                raise ProtocolViolation("invalid length of startup packet")
            r = MessageReader(await self.reader.readexactly(length - 4))
            code = r.int32()
            if code in (messages.SSL_REQUEST, messages.GSSENC_REQUEST):
                self.writer.write(b"N")
                await self.writer.drain()
                continue
            if code == messages.CANCEL_REQUEST:
                pid = r.int32()
                secret = struct.unpack("!I", r.read_bytes(4))[0]
                self.server._cancel_backend(pid, secret)
                return False
            major, minor = code >> 16, code & 0xFFFF
            if major != 3:
                await self._fatal(
                    SqlError(
                        FEATURE_NOT_SUPPORTED,
                        f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0",
                    )
                )
                return False
            params: dict[str, str] = {}
            while True:
                key = r.cstring()
                if not key:
                    break
                params[key] = r.cstring()
            unrecognized = [k for k in params if k.startswith("_pq_.")]
            if minor > 0 or unrecognized:
                self.out += messages.negotiate_protocol_version(0, unrecognized)
            await self._establish(params)
            return True
        raise ProtocolViolation("too many negotiation requests")

    async def _establish(self, params: dict[str, str]) -> None:
        user = params.get("user") or DEFAULT_USER
        database = params.get("database") or DEFAULT_DATABASE
        self.user = user
        if self.server.password is not None:
            await self._authenticate(user, self.server.password)
        self.out += messages.AUTH_OK
        if database != DEFAULT_DATABASE:
            raise SqlError(
                INVALID_CATALOG_NAME, f'database "{database}" does not exist', severity="FATAL"
            )
        options = {k: v for k, v in params.items() if k not in ("user", "database")}
        self.session = await self._run(self.coord.new_session, user, database, options)
        assert self.session is not None
        status = dict(self.session.parameter_status())
        status.update(self.session.take_changed_parameters())
        for name, value in status.items():
            self.out += messages.parameter_status(name, value)
        self.out += messages.backend_key_data(self.session.pid, self.session.secret)
        self.server._register(self.session, self)
        self._ready()
        await self._flush()

    async def _read_auth_message(self) -> bytes:
        await self._flush()
        header = await self.reader.readexactly(5)
        kind, length = struct.unpack("!ci", header)
        if kind != b"p":
            raise ProtocolViolation(f"expected password response, got message type {header[0]}")
        if length < 4 or length > 65536:
            raise ProtocolViolation("invalid message length")
        return await self.reader.readexactly(length - 4)

    async def _authenticate(self, user: str, password: str) -> None:
        try:
            if self.server.auth_method == "md5":
                salt = os.urandom(4)
                self.out += messages.auth_request(5, salt)
                r = MessageReader(await self._read_auth_message())
                if not md5_verify(user, password, salt, r.cstring_bytes()):
                    raise password_failed(user)
                return
            self.out += messages.auth_request(10, messages.cstr(SCRAM_MECHANISM) + b"\x00")
            r = MessageReader(await self._read_auth_message())
            mechanism = r.cstring()
            n = r.int32()
            data = r.read_bytes(n) if n >= 0 else b""
            if mechanism != SCRAM_MECHANISM:
                raise SqlError(
                    PROTOCOL_VIOLATION,
                    "client selected an invalid SASL authentication mechanism",
                    severity="FATAL",
                )
            loop = asyncio.get_running_loop()
            scram = await loop.run_in_executor(None, ScramServer, password)
            self.out += messages.auth_request(11, scram.handle_client_first(data))
            final = await self._read_auth_message()
            self.out += messages.auth_request(12, scram.handle_client_final(final, user))
        except asyncio.IncompleteReadError:
            # e.g. psql probing whether a password is needed before prompting for it
            raise ClientGone from None
        except SqlError as e:
            if e.sqlstate == "28P01":
                log.info("password authentication failed for user %r from %s", user, self.peer)
            raise

    # -- main loop -------------------------------------------------------------------------

    async def _serve(self) -> None:
        self.reader_task = asyncio.create_task(self._read_loop())
        while True:
            item = await self.queue.get()
            if item is None:
                return
            if isinstance(item, ProtocolViolation):
                raise item
            kind, body = item
            if kind == b"X":
                return
            self.busy = True
            try:
                await self._dispatch(kind, body)
            finally:
                self.busy = False
            if len(self.out) >= FLUSH_THRESHOLD:
                await self._flush()

    async def _read_loop(self) -> None:
        max_size = self.server.max_message_size
        try:
            while True:
                header = await self.reader.readexactly(5)
                kind = header[:1]
                (length,) = _I32.unpack_from(header, 1)
                if header[0] not in messages.FRONTEND_TYPES:
                    await self.queue.put(
                        ProtocolViolation(f"invalid frontend message type {header[0]}")
                    )
                    return
                if length < 4 or length > max_size:
                    await self.queue.put(ProtocolViolation(f"invalid message length {length}"))
                    return
                body = await self.reader.readexactly(length - 4)
                await self.queue.put((kind, body))
                if kind == b"X":
                    if self.busy and self.session is not None:
                        # Terminate during a statement: a live stream (SUBSCRIBE) would
                        # never notice; the coordinator ends it (optional hook)
                        gone = getattr(self.coord, "client_terminated", None)
                        if gone is not None:
                            gone(self.session)
                    return
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            if self.busy:
                log.info("client %s disconnected during a statement; cancelling", self.peer)
                self._cancel_session()
            await self.queue.put(None)

    async def _next_message(self) -> tuple[bytes, bytes]:
        item = await self.queue.get()
        if item is None:
            raise ClientGone
        if isinstance(item, ProtocolViolation):
            raise item
        return item

    async def _dispatch(self, kind: bytes, body: bytes) -> None:
        if self.ignore_till_sync and kind != b"S":
            return
        r = MessageReader(body)
        try:
            if kind == b"Q":
                await self._simple_query(r)
            elif kind == b"P":
                await self._parse(r)
            elif kind == b"B":
                await self._bind(r)
            elif kind == b"D":
                self._describe(r)
            elif kind == b"E":
                await self._execute(r)
            elif kind == b"C":
                await self._close(r)
            elif kind == b"S":
                await self._sync(r)
            elif kind == b"H":
                r.finish()
                await self._flush()
            elif kind in (b"d", b"c", b"f"):
                pass  # late COPY data after a failed COPY: ignored, as Postgres does
            elif kind == b"F":
                raise SqlError(FEATURE_NOT_SUPPORTED, "fastpath function calls not supported")
            else:
                raise ProtocolViolation(f"unexpected message type {kind[0]}")
        except (ClientGone, ProtocolViolation, asyncio.CancelledError):
            raise
        except Exception as e:
            self._after_statement()
            self._send_error(e)
            if kind in EXTENDED_TYPES:
                self.ignore_till_sync = True
            await self._flush()

    # -- simple query ----------------------------------------------------------------------

    async def _simple_query(self, r: MessageReader) -> None:
        try:
            sql = r.cstring()
        except SqlError as e:  # invalid UTF-8: an error for this query only
            self._send_error(e)
            self._ready()
            await self._flush()
            return
        r.finish()
        await self._drop_portal("")
        self.statements.pop("", None)
        assert self.session is not None
        try:
            stmts = await self._split(sql)
            if not stmts:
                self.out += messages.EMPTY_QUERY
            # Optional coordinator hooks: the statements of one Query message form one
            # implicit transaction. `begin` only notes it (run here); `end` may commit it,
            # so it runs in the pool unless no transaction is open (then it does nothing).
            begin = getattr(self.coord, "begin_simple_query", None)
            end = getattr(self.coord, "end_simple_query", None)
            ok = False
            if begin is not None:
                begin(self.session, len(stmts))
            try:
                await self._simple_statements(sql, stmts)
                ok = True
            finally:
                if end is not None and getattr(self.session, "txn", True) is not None:
                    await self._run(end, self.session, ok)
        except (ClientGone, ProtocolViolation, asyncio.CancelledError):
            raise
        except Exception as e:
            self._after_statement()
            self._send_error(e)
        self._ready()
        await self._flush()

    async def _simple_statements(self, sql: str, stmts: list[str]) -> None:
        """Run the statements of one simple query in order; the first error propagates."""
        assert self.session is not None
        cursor = 0
        for stmt in stmts:
            # Error positions are relative to the statement; make them relative to the
            # query string, as Postgres reports them.
            found = sql.find(stmt, cursor)
            offset = max(found, 0)
            cursor = found + len(stmt) if found >= 0 else cursor
            try:
                cached = getattr(self.coord, "prepare_cached", None)
                prepared = cached(self.session, stmt, []) if cached is not None else None
                if prepared is None:
                    prepared = await self._run(self.coord.prepare, self.session, stmt, [])
                result = await self._run(self.coord.execute, self.session, prepared, [])
            except SqlError as e:
                if e.position is not None and offset:
                    e.position += offset
                raise
            portal = Portal("", Statement("", prepared), [], (), result=result)
            try:
                await self._emit(portal, 0, describe=True)
            finally:
                await self._close_portal(portal)
            self._after_statement()

    # -- results ---------------------------------------------------------------------------

    def _text_style(self) -> codec.TextStyle:
        """The session settings text results print in (IntervalStyle, bytea_output,
        extra_float_digits)."""
        get = getattr(self.session, "get", None)
        if get is None:
            return codec.DEFAULT_STYLE
        return codec.TextStyle(str(get("intervalstyle")), str(get("bytea_output")), int(get("extra_float_digits")))

    async def _emit(self, portal: Portal, max_rows: int, *, describe: bool) -> None:
        """Send (part of) a portal's result."""
        result = portal.result
        if isinstance(result, RowsResult):
            if portal.done:
                self.out += messages.command_complete(result.tag(0))
                return
            if portal.stream is None:
                formats = resolve_formats(result.columns, portal.result_formats)
                encoders = result_encoders(result.columns, formats, self._text_style())
                if describe:
                    self.out += messages.row_description(result.columns, formats)
                portal.stream = RowStream(result.batches, encoders)
            sent, completed = await self._stream(portal.stream, max_rows)
            portal.rows_sent += sent
            if completed:
                portal.done = True
                self.out += messages.command_complete(
                    result.tag(portal.rows_sent if describe else sent)
                )
            else:
                self.out += messages.PORTAL_SUSPENDED
        elif isinstance(result, CommandResult):
            self.out += messages.command_complete(result.tag)
            portal.done = True
        elif isinstance(result, CopyOutResult):
            if portal.done:
                raise SqlError("55000", f'portal "{portal.name}" cannot be run')
            portal.done = True
            await self._copy_out(result)
        elif isinstance(result, CopyInResult):
            if portal.done:
                raise SqlError("55000", f'portal "{portal.name}" cannot be run')
            portal.done = True
            await self._copy_in(result)
        else:
            raise TypeError(f"unexpected result {type(result).__name__}")

    async def _stream(self, stream: RowStream, max_rows: int) -> tuple[int, bool]:
        sent = 0
        while True:
            if self.closed:
                raise ClientGone
            limit = max_rows - sent if max_rows > 0 else None
            data, n, exhausted = await self._run(stream.next_chunk, limit)
            sent += n
            if data:
                self.out += data
                await self._flush()
            if exhausted:
                return sent, True
            if n == 0 and stream.live:
                await wait_live(stream.batches)
            if max_rows > 0 and sent >= max_rows:
                return sent, False

    async def _copy_out(self, result: CopyOutResult) -> None:
        csv = getattr(result, "csv", False)
        delimiter = getattr(result, "delimiter", "," if csv else "\t")
        null = getattr(result, "null", "" if csv else "\\N")
        if csv:
            fmt = csv_row_formatter(result.columns, delimiter, null, style=self._text_style())
        else:
            fmt = text_row_formatter(result.columns, delimiter, null, style=self._text_style())
        iterator = iter(result.batches)
        self.out += messages.copy_response(b"H", len(result.columns))
        if csv and getattr(result, "header", False):
            self.out += messages.copy_data(csv_header(result.columns, delimiter))
        await self._flush()

        def chunk() -> tuple[bytes, int, bool]:
            try:
                batch = next(iterator)
            except StopIteration:
                return b"", 0, True
            return b"".join(messages.copy_data(fmt(row)) for row in batch), len(batch), False

        total = 0
        try:
            while True:
                if self.closed:
                    raise ClientGone
                data, n, done = await self._run(chunk)
                total += n
                if data:
                    self.out += data
                    await self._flush()
                if done:
                    break
                if n == 0 and hasattr(iterator, "add_listener"):
                    await wait_live(iterator)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                await self._run(close)
        self.out += messages.COPY_DONE
        self.out += messages.command_complete(result.tag(total))

    async def _copy_in(self, result: CopyInResult) -> None:
        self.out += messages.copy_response(b"G", len(result.columns))
        await self._flush()
        chunks: list[bytes] = []
        while True:
            kind, body = await self._next_message()
            if kind == b"d":
                chunks.append(body)
            elif kind == b"c":
                break
            elif kind == b"f":
                reason = MessageReader(body).cstring()
                raise SqlError(QUERY_CANCELED, f"COPY from stdin failed: {reason}")
            elif kind in (b"H", b"S"):
                continue
            elif kind == b"X":
                raise ClientGone
            else:
                raise SqlError(
                    PROTOCOL_VIOLATION,
                    f"unexpected message type 0x{kind[0]:02X} during COPY from stdin",
                )
        rows = await self._run(
            parse_copy_in,
            b"".join(chunks),
            result.columns,
            csv=result.csv,
            delimiter=result.delimiter,
            null=result.null,
            header=result.header,
        )
        tag = await self._run(result.write, rows)
        self.out += messages.command_complete(tag)
