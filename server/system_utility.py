"""Utility statements SystemHandler runs itself (DISCARD, savepoints, cursors, ...), as a mixin."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.api import ColumnDesc, CommandResult, Prepared, Result, RowsResult
from server.subscribe import FetchRows, SubscribeRows, fetch_timeout_ms
from sql.errors import (
    ACTIVE_SQL_TRANSACTION,
    DUPLICATE_CURSOR,
    FEATURE_NOT_SUPPORTED,
    INSUFFICIENT_PRIVILEGE,
    INVALID_CURSOR_NAME,
    SYNTAX_ERROR,
    SqlError,
)
from sql.lex import ident

if TYPE_CHECKING:
    from server.session import Session


# DuckDB statements that must never run: refused before anything parses them.
_DUCKDB_FILE_STATEMENTS = {"attach", "detach", "install", "load", "export", "import", "force"}
_DUCKDB_OTHER_STATEMENTS = {"pragma", "checkpoint", "call", "summarize", "describe", "use", "vacuum",
                            "update_extensions", "pivot", "unpivot"}


@dataclass
class Cursor:
    name: str
    columns: tuple[ColumnDesc, ...]
    batches: Iterator[list[tuple[Any, ...]]]
    hold: bool
    txn: Any  # the transaction it belongs to (None for WITH HOLD)
    pending: list[tuple[Any, ...]] = field(default_factory=list)
    done: bool = False

    def take(self, n: int | None) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        while n is None or len(out) < n:
            if not self.pending:
                if self.done:
                    break
                try:
                    self.pending = list(next(self.batches))
                except StopIteration:
                    self.done = True
                    break
                continue
            k = len(self.pending) if n is None else min(len(self.pending), n - len(out))
            out.extend(self.pending[:k])
            del self.pending[:k]
        return out

    def close(self) -> None:
        close = getattr(self.batches, "close", None)
        if close is not None:
            close()


@dataclass
class UtilityPlan:
    """A utility statement run by the handler (no rows unless `columns`)."""

    fn: Any  # (session, params) -> Result

    def execute(self, session: Session, params: list[Any]) -> Result:
        result: Result = self.fn(session, params)
        return result


class UtilityMixin:
    """The utility statements of `server.system.SystemHandler`."""

    # -- utility statements --------------------------------------------------------------------------

    def _utility(self, session: Session, text: str, words: list[str]) -> Prepared | None:
        w0 = words[0] if words else ""
        w1 = words[1] if len(words) > 1 else ""
        if w0 in _DUCKDB_FILE_STATEMENTS:
            raise SqlError(INSUFFICIENT_PRIVILEGE, f"permission denied: {w0.upper()} is not allowed")
        if w0 in _DUCKDB_OTHER_STATEMENTS:
            if w0 in ("describe", "summarize", "pivot", "unpivot", "use"):
                raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{w0.upper()}"')
            raise SqlError(FEATURE_NOT_SUPPORTED, f"{w0.upper()} is not supported")
        if w0 == "set" and w1 == "session" and len(words) > 2 and words[2] == "characteristics":
            return self._command(text, self._set_characteristics)
        if w0 == "set" and w1 == "transaction":
            return self._command(text, self._set_transaction)
        if w0 == "discard":
            return self._command(text, self._discard)
        if w0 == "unlisten":
            if not re.match(r"(?is)^unlisten\s+(\*|\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)\s*$", text):
                raise SqlError(SYNTAX_ERROR, "syntax error at end of input")
            return self._command(text, lambda s, t, p: CommandResult("UNLISTEN"))
        if w0 == "savepoint" or w0 == "release" or (w0 == "rollback" and w1 == "to"):
            return self._savepoint(text, w0)
        if w0 == "declare":
            return self._declare(session, text)
        if w0 in ("fetch", "move"):
            return self._fetch(session, text, w0 == "move")
        if w0 == "close":
            return self._command(text, self._close)
        return None

    def _command(self, text: str, fn: Any) -> Prepared:
        return Prepared(text, (), None, UtilityPlan(lambda s, p: self._run_utility(s, fn, text, p)))

    def _run_utility(self, session: Session, fn: Any, text: str, params: list[Any]) -> Result:
        self.check_txn(session)
        try:
            result: Result = fn(session, text, params)
            return result
        except SqlError:
            self.fail_txn(session)
            raise

    _ISOLATION = r"isolation\s+level\s+(serializable|strict\s+serializable|repeatable\s+read|read\s+committed|read\s+uncommitted)"
    _MODE = rf"(?:{_ISOLATION}|read\s+write|read\s+only|not\s+deferrable|deferrable)"

    def _transaction_modes(self, modes: str) -> tuple[str | None, bool | None]:
        modes = modes.strip()
        if not re.fullmatch(rf"(?is){self._MODE}(?:\s*,?\s*{self._MODE})*", modes):
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{modes.split()[0] if modes else ""}"')
        iso = re.search(rf"(?is){self._ISOLATION}", modes)
        level = " ".join(iso.group(1).lower().split()) if iso else None
        ro = None
        if re.search(r"(?is)\bread\s+only\b", modes):
            ro = True
        elif re.search(r"(?is)\bread\s+write\b", modes):
            ro = False
        return level, ro

    def _set_characteristics(self, session: Session, text: str, params: list[Any]) -> Result:
        m = re.match(r"(?is)^set\s+session\s+characteristics\s+as\s+transaction\s+(.*)$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in SET SESSION CHARACTERISTICS")
        level, _ro = self._transaction_modes(m.group(1))
        if level in ("serializable", "strict serializable"):
            session.set("transaction_isolation", level)
        # Weaker levels are satisfied by the (stronger) isolation every transaction gets.
        return CommandResult("SET")

    def _set_transaction(self, session: Session, text: str, params: list[Any]) -> Result:
        m = re.match(r"(?is)^set\s+transaction\s+(.*)$", text)
        if not m or m.group(1).strip().lower().startswith("snapshot"):
            raise SqlError(FEATURE_NOT_SUPPORTED, "SET TRANSACTION SNAPSHOT is not supported")
        _level, ro = self._transaction_modes(m.group(1))
        if session.txn is None:
            session.notice("SET TRANSACTION can only be used in transaction blocks", "25P01", "WARNING")
        elif ro:
            session.txn.read_only = True
        return CommandResult("SET")

    def _discard(self, session: Session, text: str, params: list[Any]) -> Result:
        m = re.match(r"(?is)^discard\s+(all|plans|sequences|temp|temporary)\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in DISCARD")
        what = m.group(1).upper()
        if what == "TEMPORARY":
            what = "TEMP"
        if what == "ALL":
            if session.txn is not None:
                raise SqlError(ACTIVE_SQL_TRANSACTION, "DISCARD ALL cannot run inside a transaction block")
            session.reset_all()
            self._close_all(session)
        return CommandResult(f"DISCARD {what}")

    # -- savepoints ---------------------------------------------------------------------------------

    def _savepoint(self, text: str, w0: str) -> Prepared:
        name_re = r"(\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)"
        if w0 == "savepoint":
            m = re.match(rf"(?is)^savepoint\s+{name_re}\s*$", text)
        elif w0 == "release":
            m = re.match(rf"(?is)^release\s+(?:savepoint\s+)?{name_re}\s*$", text)
        else:
            m = re.match(rf"(?is)^rollback\s+(?:work\s+|transaction\s+)?to\s+(?:savepoint\s+)?{name_re}\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, f"syntax error in {w0.upper()}")
        name = ident(m.group(1))

        def run(session: Session, params: list[Any]) -> Result:
            txn = session.txn
            if txn is None:
                what = "SAVEPOINT" if w0 == "savepoint" else ("RELEASE SAVEPOINT" if w0 == "release" else "ROLLBACK TO SAVEPOINT")
                raise SqlError("25P01", f"{what} can only be used in transaction blocks")
            if w0 != "rollback":
                self.check_txn(session)
            if w0 == "savepoint":
                txn.savepoints.append((name, len(txn.writes), txn.kind))
                return CommandResult("SAVEPOINT")
            idx = next((i for i in range(len(txn.savepoints) - 1, -1, -1) if txn.savepoints[i][0] == name), None)
            if idx is None:
                self.fail_txn(session)
                raise SqlError("3B001", f'savepoint "{name}" does not exist')
            if w0 == "release":
                del txn.savepoints[idx:]
                return CommandResult("RELEASE")
            _name, nwrites, kind = txn.savepoints[idx]
            del txn.savepoints[idx + 1 :]
            del txn.writes[nwrites:]
            txn.kind = kind if txn.read_ts is None else txn.kind
            txn.failed = False
            return CommandResult("ROLLBACK")

        return Prepared(text, (), None, UtilityPlan(run))

    # -- cursors ---------------------------------------------------------------------------------

    def cursors(self, session: Session) -> dict[str, Cursor]:
        cur = getattr(session, "cursors", None)
        if cur is None:
            cur = {}
            session.cursors = cur  # type: ignore[attr-defined]
        return cur

    def _live_cursor(self, session: Session, name: str) -> Cursor:
        cursors = self.cursors(session)
        c = cursors.get(name)
        if c is not None and not c.hold and c.txn is not session.txn:
            cursors.pop(name, None)
            c.close()
            c = None
        if c is None:
            raise SqlError(INVALID_CURSOR_NAME, f'cursor "{name}" does not exist')
        return c

    def _close_all(self, session: Session) -> None:
        cursors = self.cursors(session)
        for c in list(cursors.values()):
            c.close()
        cursors.clear()

    _DECLARE = re.compile(
        r"(?is)^declare\s+(\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)\s+((?:binary\s+|insensitive\s+|asensitive\s+|"
        r"no\s+scroll\s+|scroll\s+)*)cursor\s+(?:(with|without)\s+hold\s+)?for\s+(.*)$")

    def _declare(self, session: Session, text: str) -> Prepared:
        m = self._DECLARE.match(text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in DECLARE")
        name = ident(m.group(1))
        opts = " ".join(m.group(2).lower().split())
        if "binary" in opts:
            raise SqlError(FEATURE_NOT_SUPPORTED, "DECLARE BINARY CURSOR is not supported")
        if opts.startswith("scroll") or " scroll" in f" {opts}" and "no scroll" not in opts:
            raise SqlError(FEATURE_NOT_SUPPORTED, "SCROLL cursors are not supported")
        hold = (m.group(3) or "").lower() == "with"
        query = m.group(4)

        def run(session: Session, params: list[Any]) -> Result:
            self.check_txn(session)
            try:
                if not hold and session.txn is None:
                    raise SqlError("25P01", "DECLARE CURSOR can only be used in transaction blocks")
                cursors = self.cursors(session)
                if name in cursors:
                    try:
                        self._live_cursor(session, name)
                        raise SqlError(DUPLICATE_CURSOR, f'cursor "{name}" already exists')
                    except SqlError as e:
                        if e.sqlstate == DUPLICATE_CURSOR:
                            raise
                inner = self.coordinator.prepare(session, query, [])
                stream = self.coordinator.cursor_stream(session, inner)
                if stream is not None:  # DECLARE ... CURSOR FOR SUBSCRIBE (server.subscribe)
                    if hold:
                        raise SqlError(FEATURE_NOT_SUPPORTED, "DECLARE ... WITH HOLD CURSOR FOR SUBSCRIBE is not supported")
                    cursors[name] = Cursor(name, inner.columns or (), stream, hold, session.txn)
                    return CommandResult("DECLARE CURSOR")
                if inner.columns is None:
                    raise SqlError("42P11", "cannot open a query that returns no rows as a cursor")
                result = self.coordinator.execute(session, inner, [])
                if not isinstance(result, RowsResult):
                    raise SqlError("42P11", "cannot open this statement as a cursor")
                cursors[name] = Cursor(name, result.columns, iter(result.batches), hold, None if hold else session.txn)
                return CommandResult("DECLARE CURSOR")
            except SqlError:
                self.fail_txn(session)
                raise

        return Prepared(text, (), None, UtilityPlan(run))

    _FETCH = re.compile(
        r"(?is)^(fetch|move)\s+(?:(next|all|forward\s+all|forward\s+\d+|forward|\d+|absolute\s+\d+|relative\s+\d+|"
        r"prior|first|last|backward(?:\s+all|\s+\d+)?|-\d+)\s+)?(?:(?:from|in)\s+)?(\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)"
        r"(?:\s+with\s*\(\s*timeout\s*(?:=\s*)?'([^']*)'\s*\))?\s*$")

    def _fetch(self, session: Session, text: str, move: bool) -> Prepared:
        m = self._FETCH.match(text)
        if not m:
            raise SqlError(SYNTAX_ERROR, f"syntax error in {'MOVE' if move else 'FETCH'}")
        direction = " ".join((m.group(2) or "next").lower().split())
        name = ident(m.group(3))
        count: int | None
        if direction in ("next", "forward"):
            count = 1
        elif direction in ("all", "forward all"):
            count = None
        elif re.fullmatch(r"(forward )?\d+", direction):
            count = int(direction.split()[-1])
        else:
            raise SqlError(FEATURE_NOT_SUPPORTED, f"FETCH {direction.upper()} is not supported (cursors are forward-only)")
        timeout_ms = None if m.group(4) is None else fetch_timeout_ms(m.group(4))
        cursor = self.cursors(session).get(name)
        columns = None if move else (cursor.columns if cursor is not None else None)

        def run(session: Session, params: list[Any]) -> Result:
            self.check_txn(session)
            try:
                c = self._live_cursor(session, name)
                if isinstance(c.batches, SubscribeRows):  # waits for rows (server.subscribe)
                    if move:
                        raise SqlError(FEATURE_NOT_SUPPORTED, "MOVE on a SUBSCRIBE cursor is not supported")
                    return RowsResult(c.columns, FetchRows(c.batches, count, timeout_ms), tag=lambda n: f"FETCH {n}")
                if timeout_ms is not None:
                    raise SqlError(FEATURE_NOT_SUPPORTED, "FETCH ... WITH (timeout) is only supported on SUBSCRIBE cursors")
                rows = c.take(count)
            except SqlError:
                self.fail_txn(session)
                raise
            if move:
                return CommandResult(f"MOVE {len(rows)}")
            return RowsResult(c.columns, iter([rows]), tag=lambda n: f"FETCH {n}")

        return Prepared(text, (), columns, UtilityPlan(run))

    def _close(self, session: Session, text: str, params: list[Any]) -> Result:
        m = re.match(r"(?is)^close\s+(all|\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in CLOSE")
        if m.group(1).lower() == "all" and not m.group(1).startswith('"'):
            self._close_all(session)
            return CommandResult("CLOSE CURSOR ALL")
        name = ident(m.group(1))
        c = self._live_cursor(session, name)
        c.close()
        self.cursors(session).pop(name, None)
        return CommandResult("CLOSE CURSOR")
