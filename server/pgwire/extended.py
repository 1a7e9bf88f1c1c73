"""The extended query protocol (Parse/Bind/Describe/Execute/Close) of a Connection, as a mixin."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from server.api import CopyOutResult, RowsResult
from server.pgwire import codec, messages
from server.pgwire.messages import MessageReader, ProtocolViolation
from server.pgwire.portals import (
    Portal,
    Statement,
    resolve_formats,
    result_encoders,
    type_oid,
)
from sql.errors import (
    DUPLICATE_CURSOR,
    DUPLICATE_PREPARED_STATEMENT,
    INVALID_BINARY_REPRESENTATION,
    INVALID_CURSOR_NAME,
    INVALID_PARAMETER_VALUE,
    INVALID_SQL_STATEMENT_NAME,
    PROTOCOL_VIOLATION,
    SYNTAX_ERROR,
    SqlError,
)
from sql.types import TYPE_BY_OID, SqlType

log = logging.getLogger("server.pgwire")


class ExtendedQueryMixin:
    """Parse / Bind / Describe / Execute / Close / Flush of `server.pgwire.connection.Connection`
    (its statements, portals, session and result streaming)."""

    async def _parse(self, r: MessageReader) -> None:
        name = r.cstring()
        query = r.cstring()
        n = r.int16()
        if n < 0:
            raise ProtocolViolation("invalid number of parameter types")
        oids = [r.int32() & 0xFFFFFFFF for _ in range(n)]
        r.finish()
        if name == "":
            self.statements.pop("", None)
        elif name in self.statements:
            raise SqlError(
                DUPLICATE_PREPARED_STATEMENT, f'prepared statement "{name}" already exists'
            )
        stmts = await self._split(query)
        if len(stmts) > 1:
            raise SqlError(
                SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement"
            )
        param_types: list[SqlType | None] = [
            SqlType(TYPE_BY_OID[oid].name) if oid in TYPE_BY_OID else None for oid in oids
        ]
        prepared = None
        if stmts:
            # a cached plan is taken here; planning runs in the pool
            cached = getattr(self.coord, "prepare_cached", None)
            prepared = cached(self.session, stmts[0], param_types) if cached is not None else None
            if prepared is None:
                prepared = await self._run(self.coord.prepare, self.session, stmts[0], param_types)
        self.statements[name] = Statement(name, prepared)
        self._after_statement()
        self.out += messages.PARSE_COMPLETE

    def _statement(self, name: str) -> Statement:
        stmt = self.statements.get(name)
        if stmt is None:
            if name == "":
                raise SqlError(
                    INVALID_SQL_STATEMENT_NAME, "unnamed prepared statement does not exist"
                )
            raise SqlError(
                INVALID_SQL_STATEMENT_NAME, f'prepared statement "{name}" does not exist'
            )
        return stmt

    def _portal(self, name: str) -> Portal:
        portal = self.portals.get(name)
        if portal is None:
            raise SqlError(INVALID_CURSOR_NAME, f'portal "{name}" does not exist')
        return portal

    @staticmethod
    def _format_codes(r: MessageReader) -> list[int]:
        n = r.int16()
        if n < 0:
            raise ProtocolViolation("invalid number of format codes")
        codes = [r.int16() for _ in range(n)]
        for c in codes:
            if c not in (0, 1):
                raise SqlError(INVALID_PARAMETER_VALUE, f"unsupported format code: {c}")
        return codes

    async def _bind(self, r: MessageReader) -> None:
        portal_name = r.cstring()
        stmt_name = r.cstring()
        param_formats = self._format_codes(r)
        nparams = r.int16()
        if nparams < 0:
            raise ProtocolViolation("invalid number of parameters")
        raw: list[bytes | None] = []
        for _ in range(nparams):
            length = r.int32()
            if length < -1:
                raise ProtocolViolation("invalid parameter length")
            raw.append(None if length == -1 else r.read_bytes(length))
        result_formats = self._format_codes(r)
        r.finish()

        stmt = self._statement(stmt_name)
        if portal_name == "":
            await self._drop_portal("")
        elif portal_name in self.portals:
            raise SqlError(DUPLICATE_CURSOR, f'cursor "{portal_name}" already exists')
        prepared = stmt.prepared
        if len(param_formats) > 1 and len(param_formats) != nparams:
            raise SqlError(
                PROTOCOL_VIOLATION,
                f"bind message has {len(param_formats)} parameter formats but {nparams} parameters",
            )
        param_types = list(prepared.param_types) if prepared is not None else []
        if nparams != len(param_types):
            raise SqlError(
                PROTOCOL_VIOLATION,
                f"bind message supplies {nparams} parameters, but prepared statement "
                f'"{stmt_name}" requires {len(param_types)}',
            )
        params: list[Any] = []
        for i, data in enumerate(raw):
            fmt = (
                param_formats[i]
                if len(param_formats) > 1
                else (param_formats[0] if param_formats else 0)
            )
            if data is None:
                params.append(None)
            elif fmt == 0:
                params.append(codec.decode_text(data, param_types[i]))
            else:
                try:
                    params.append(codec.decode_binary(data, param_types[i]))
                except SqlError as e:
                    if (
                        e.sqlstate == INVALID_BINARY_REPRESENTATION
                        and e.message == "incorrect binary data format"
                    ):
                        raise SqlError(
                            INVALID_BINARY_REPRESENTATION,
                            f"incorrect binary data format in bind parameter {i + 1}",
                        ) from None
                    raise
        columns = prepared.columns if prepared is not None else None
        if columns is not None:
            if len(result_formats) > 1 and len(result_formats) != len(columns):
                raise SqlError(
                    PROTOCOL_VIOLATION,
                    f"bind message has {len(result_formats)} result formats but query has "
                    f"{len(columns)} columns",
                )
            result_encoders(columns, resolve_formats(columns, result_formats))  # binary support check
        self.portals[portal_name] = Portal(portal_name, stmt, params, tuple(result_formats))
        self.out += messages.BIND_COMPLETE

    def _describe(self, r: MessageReader) -> None:
        kind = r.byte()
        name = r.cstring()
        r.finish()
        if kind == ord("S"):
            stmt = self._statement(name)
            prepared = stmt.prepared
            types = prepared.param_types if prepared is not None else ()
            self.out += messages.parameter_description([type_oid(t) for t in types])
            columns = prepared.columns if prepared is not None else None
            if columns is None:
                self.out += messages.NO_DATA
            else:
                self.out += messages.row_description(columns, [0] * len(columns))
        elif kind == ord("P"):
            cursor = getattr(self.session, "cursors", {}).get(name) if name not in self.portals else None
            if cursor is not None:
                # a SQL-level cursor (DECLARE) is a portal too, as in Postgres
                self.out += messages.row_description(cursor.columns, [0] * len(cursor.columns))
                return
            portal = self._portal(name)
            prepared = portal.statement.prepared
            columns = prepared.columns if prepared is not None else None
            if columns is None:
                self.out += messages.NO_DATA
            else:
                formats = resolve_formats(columns, portal.result_formats)
                self.out += messages.row_description(columns, formats)
        else:
            raise ProtocolViolation(f"invalid DESCRIBE message subtype {kind}")

    async def _execute(self, r: MessageReader) -> None:
        name = r.cstring()
        max_rows = r.int32()
        r.finish()
        portal = self._portal(name)
        prepared = portal.statement.prepared
        if prepared is None:
            self.out += messages.EMPTY_QUERY
            return
        try:
            if portal.result is None:
                portal.result = await self._run(
                    self.coord.execute, self.session, prepared, portal.params
                )
            await self._emit(portal, max(max_rows, 0), describe=False)
        except BaseException:
            if self.portals.get(name) is portal:
                del self.portals[name]
            await self._close_portal(portal)
            raise
        finally:
            self._after_statement()

    async def _close(self, r: MessageReader) -> None:
        kind = r.byte()
        name = r.cstring()
        r.finish()
        if kind == ord("S"):
            self.statements.pop(name, None)
        elif kind == ord("P"):
            await self._drop_portal(name)
        else:
            raise ProtocolViolation(f"invalid CLOSE message subtype {kind}")
        self.out += messages.CLOSE_COMPLETE

    async def _sync(self, r: MessageReader) -> None:
        r.finish()
        self.ignore_till_sync = False
        status = self.session.transaction_status if self.session is not None else "I"
        if status != "T":
            for name in list(self.portals):
                await self._drop_portal(name)
        self._after_statement()
        self._ready()
        await self._flush()

    async def _drop_portal(self, name: str) -> None:
        portal = self.portals.pop(name, None)
        if portal is not None:
            await self._close_portal(portal)

    async def _close_portal(self, portal: Portal) -> None:
        """Release a portal's live result iterator (which may hold a running query)."""
        closer: Callable[[], None] | None = None
        if portal.stream is not None and not portal.stream.exhausted:
            closer = portal.stream.close
        elif portal.stream is None and isinstance(portal.result, RowsResult | CopyOutResult):
            closer = getattr(portal.result.batches, "close", None)
        portal.stream = None
        if closer is None:
            return
        try:
            await self._run(closer)
        except Exception:
            log.exception("closing a result iterator failed")
