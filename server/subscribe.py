"""SUBSCRIBE for the coordinator (DESIGN §6): planning, and the row streams a client reads.

The coordinator only sequences: it plans the subscription's maintained dataflow (an
object's storage or definition, or a query, as a materialized view would be planned), picks
`as_of` (the session's read timestamp, or AS OF) and installs it with the compute
controller (`compute.subscribe`), which steps it. What reaches the client:

- `SUBSCRIBE ...` and `COPY (SUBSCRIBE ...) TO STDOUT`: a `SubscribeRows` stream of rows
  `(mz_timestamp numeric, [mz_progressed bool,] mz_diff bigint, cols...)` that never blocks
  a thread: an empty batch means "nothing yet", and pgwire waits for the stream's listener
  (`add_listener`) before polling again. It ends on UP TO (the result completes), on
  cancel / client disconnect / statement_timeout (57014) and on an error.
- `DECLARE c CURSOR FOR SUBSCRIBE ...` (in a transaction) keeps the stream in the cursor;
  `FETCH n c [WITH (timeout = '1s')]` returns the rows available once at least one is (or
  the timeout passes: possibly none), as Materialize does (`FetchRows`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from catalog.catalog import Catalog, Item
from compute.plan import lir, pipeline
from server.api import ColumnDesc, CopyOutResult, RowsResult
from server.resolver import Resolver
from server.session import Session
from sql import statements as st
from sql.bind import Binder
from sql.errors import QUERY_CANCELED, UNDEFINED_TABLE, WRONG_OBJECT_TYPE, SqlError, unsupported
from sql.mir import Constant
from sql.parse import parse_sql
from sql.temporal import check_maintainable
from sql.types import BOOL, INT8, NUMERIC

BATCH_ROWS = 4096
DEFAULT_BUFFER_ROWS = 100_000


class SubscribeRows:
    """A live subscription as batches of client rows (see the module docstring)."""

    def __init__(self, sub: Any, progress: bool, arity: int, on_close: Callable[[], None] = lambda: None) -> None:
        self.sub = sub
        self.progress = progress
        self.arity = arity
        self._on_close = on_close
        self._closed = False

    def __iter__(self) -> SubscribeRows:
        return self

    def __next__(self) -> list[tuple]:
        rows, over = self.take(BATCH_ROWS)
        if not rows and over:
            raise StopIteration
        return rows

    def take(self, n: int | None) -> tuple[list[tuple], bool]:
        """Up to `n` rows now (never waits), and whether the subscription is over."""
        updates, over = self.sub.poll(n)
        return [self._row(u) for u in updates], over

    def _row(self, u: Any) -> tuple:
        head: tuple = (Decimal(u.time), u.progressed) if self.progress else (Decimal(u.time),)
        if u.row is None:
            return (*head, None, *([None] * self.arity))
        return (*head, u.diff, *u.row)

    def add_listener(self, fn: Callable[[], None]) -> None:
        self.sub.add_listener(fn)

    def remove_listener(self, fn: Callable[[], None]) -> None:
        self.sub.remove_listener(fn)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.sub.cancel(None)
            self._on_close()


class FetchRows:
    """One FETCH from a subscribe cursor: waits (without a thread) until a row is available,
    the subscription ends, or `timeout_ms` passes; then the available rows, up to `count`."""

    def __init__(self, stream: SubscribeRows, count: int | None, timeout_ms: int | None) -> None:
        self.stream = stream
        self.count = count
        self.deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        self.done = False

    def __iter__(self) -> FetchRows:
        return self

    def __next__(self) -> list[tuple]:
        if self.done:
            raise StopIteration
        rows, over = self.stream.take(self.count)
        if rows or over or (self.deadline is not None and time.monotonic() >= self.deadline):
            self.done = True
            if not rows:
                raise StopIteration
            return rows
        return []

    def wait_s(self) -> float | None:
        """How long pgwire may wait for the listener before polling again."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def add_listener(self, fn: Callable[[], None]) -> None:
        self.stream.add_listener(fn)

    def remove_listener(self, fn: Callable[[], None]) -> None:
        self.stream.remove_listener(fn)


def fetch_timeout_ms(text: str) -> int:
    """FETCH ... WITH (timeout = 'interval')."""
    from sql.statements_stream import interval_ms

    return interval_ms(text)


def subscribe_columns(names: tuple[str, ...], types: tuple, progress: bool) -> tuple[ColumnDesc, ...]:
    head = [ColumnDesc("mz_timestamp", NUMERIC)]
    if progress:
        head.append(ColumnDesc("mz_progressed", BOOL))
    head.append(ColumnDesc("mz_diff", INT8))
    return (*head, *(ColumnDesc(n, t) for n, t in zip(names, types, strict=True)))


class SubscribeMixin:
    """The Coordinator's SUBSCRIBE (mixed into server.coordinator.Coordinator)."""

    catalog: Catalog
    system: Any
    controller: Any
    _read_ts: Any  # server.queries.QueriesMixin
    _select: Any  # server.queries.QueriesMixin
    _monotonic_sources: Any  # server.sources.SourcesMixin

    def _subscribe_plan(self, session: Session, s: st.Subscribe) -> tuple[Any, tuple[str, ...], tuple, str]:
        """(MIR, column names, column types, name) of what `s` subscribes to."""
        resolver = Resolver(self.catalog, session, self.system)
        if s.target is not None:
            item = resolver.item(s.target)
            if item is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.target)}'")
            return self._subscribe_item(resolver, item)
        assert s.query is not None
        b = Binder(resolver)
        bound = b.bind_query(s.query, top=False)
        if b.params:
            raise SqlError("42P02", "there is no parameter $1")
        m = pipeline.to_mir_rel(b._finish_nested(bound))
        return m, bound.names, bound.types, "subscribe"

    def _subscribe_item(self, resolver: Resolver, item: Item) -> tuple[Any, tuple[str, ...], tuple, str]:
        names = tuple(c.name for c in item.columns)
        types = tuple(c.type for c in item.columns)
        if item.kind == "view":
            m = pipeline.to_mir_rel(resolver.view_hir(item))
        elif item.kind in ("table", "materialized-view", "source") and item.shard_id is not None:
            m = pipeline.get_storage(item.id, item.qualified_name, types)
        else:
            raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is a {item.kind_word}; it cannot be subscribed to",
                           hint="SUBSCRIBE to a table, source, view or materialized view.")
        return m, names, types, item.qualified_name

    def _subscribe_columns(self, session: Session, s: st.Subscribe) -> tuple[ColumnDesc, ...]:
        _m, names, types, _ = self._subscribe_plan(session, s)
        return subscribe_columns(names, types, s.progress)

    def _subscribe(self, session: Session, s: st.Subscribe, *, statement: bool) -> SubscribeRows:
        """Install the subscription. `statement`: the stream is the running statement
        (cancel and statement_timeout end it), not a cursor's."""
        if self.controller is None:
            raise unsupported("SUBSCRIBE without the compute controller")
        m, names, types, name = self._subscribe_plan(session, s)
        check_maintainable(m)
        df: lir.Dataflow = pipeline.dataflow(pipeline.optimize(m, monotonic_sources=self._monotonic_sources()), None,
                                             name=name, single_time=False)
        ts = self._read_ts(session)
        as_of = self._timestamp(session, s.as_of, ts, "AS OF") if s.as_of is not None else ts
        up_to = self._timestamp(session, s.up_to, ts, "UP TO") if s.up_to is not None else None
        if up_to is not None and up_to < as_of:
            raise SqlError("22000", f"UP TO ({up_to}) must be greater than or equal to AS OF ({as_of})")
        capacity = max(1, int(session.vars.get("subscribe_buffer_rows", DEFAULT_BUFFER_ROWS)))
        sub = self.controller.subscribes.create(df, as_of, up_to, s.snapshot, s.progress, capacity)
        if not statement:
            return SubscribeRows(sub, s.progress, len(types))
        running = _running(session)
        timer = None
        timeout_ms = session.statement_timeout_ms()
        if timeout_ms > 0:
            timer = threading.Timer(timeout_ms / 1000, sub.cancel, args=(SqlError(QUERY_CANCELED, "canceling statement due to statement timeout"),))
            timer.daemon = True
            timer.start()

        def closed() -> None:
            running.discard(sub)
            if timer is not None:
                timer.cancel()

        running.add(sub)
        return SubscribeRows(sub, s.progress, len(types), closed)

    def _subscribe_result(self, session: Session, s: st.Subscribe) -> RowsResult:
        stream = self._subscribe(session, s, statement=True)
        return RowsResult(self._subscribe_columns(session, s), stream, tag=lambda n: f"SUBSCRIBE {n}")

    def _copy_subscribe(self, session: Session, c: st.CopySubscribe) -> CopyOutResult:
        fmt = c.options.get("format", "text").lower()
        if fmt not in ("text", "csv"):
            raise unsupported(f"COPY (SUBSCRIBE ...) TO STDOUT with format {fmt}")
        csv = fmt == "csv"
        stream = self._subscribe(session, c.subscribe, statement=True)
        return CopyOutResult(self._subscribe_columns(session, c.subscribe), stream, csv=csv,
                             delimiter=c.options.get("delimiter", "," if csv else "\t"),
                             null=c.options.get("null", "" if csv else "\\N"),
                             header=c.options.get("header", "false").lower() in ("true", "on", "1"))

    def _cancel_subscribes(self, session: Session, reason: str) -> None:
        """Cancel / disconnect / timeout: the session's running SUBSCRIBE ends with 57014."""
        msg = "canceling statement due to statement timeout" if reason == "timeout" else "canceling statement due to user request"
        for sub in list(_running(session)):
            sub.cancel(SqlError(QUERY_CANCELED, msg))

    def _timestamp(self, session: Session, text: str, now: int, what: str) -> int:
        """The value of an AS OF / UP TO expression as an mz_timestamp (epoch ms): a number,
        or any constant expression (a timestamp is its epoch milliseconds)."""
        text = text.strip()
        if re.fullmatch(r"\d+", text):
            return int(text)
        b = Binder(Resolver(self.catalog, session, self.system))
        bound = b.bind_query(parse_sql(f"SELECT {text}"))
        if b.dependencies or b.params:
            raise SqlError("42P10", f"{what} must be a constant expression")
        m = pipeline.optimized_mir(bound, now=now)
        if isinstance(m, Constant) and len(m.rows) == 1:
            v = m.rows[0][0][0]
        else:  # e.g. now() - INTERVAL '1 minute': evaluated by a one-shot query
            rows = [r for batch in self._select(session, bound, [], ()).batches for r in batch]
            v = rows[0][0] if len(rows) == 1 else None
        if isinstance(v, datetime):
            return int((v if v.tzinfo is not None else v.replace(tzinfo=UTC)).timestamp() * 1000)
        if isinstance(v, (int, Decimal)) and not isinstance(v, bool) and v >= 0:
            return int(v)
        raise SqlError("42804", f"{what} must be a timestamp or a non-negative number, not {bound.types[0].pg_format()}")


def _running(session: Session) -> set:
    """The session's running (statement) subscriptions."""
    got = getattr(session, "subscribes", None)
    if got is None:
        got = set()
        session.subscribes = got  # type: ignore[attr-defined]
    return got
