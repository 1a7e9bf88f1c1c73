"""Prepared statements, portals and the row streams that encode their results as DataRow messages."""

from __future__ import annotations

import asyncio
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.api import ColumnDesc, Prepared, Result
from server.pgwire import codec, messages
from sql.types import SqlType

MAX_ROWS_PER_WRITE = 16384
_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")


@dataclass
class Statement:
    name: str
    prepared: Prepared | None  # None: the empty query


class RowStream:
    """Pulls row batches from a result and encodes DataRow messages (in worker threads)."""

    def __init__(
        self, batches: Iterator[list[tuple[Any, ...]]], encoders: Sequence[codec.Encoder]
    ) -> None:
        self.batches = batches
        self.iterator: Iterator[list[tuple[Any, ...]]] | None = None
        self.encoders = list(encoders)
        self.pending: list[tuple[Any, ...]] = []
        self.pos = 0
        self.exhausted = False
        # a live stream (SUBSCRIBE, FETCH from a subscribe cursor): an empty batch means
        # "nothing yet" and the connection waits for the stream's listener
        self.live = hasattr(batches, "add_listener")
        # a close that arrives while next_chunk runs on a worker thread (the statement was
        # cancelled or the client vanished mid-fetch) is deferred to that call's end: closing a
        # running generator raises "generator already executing"
        self._lock = threading.Lock()
        self._busy = False
        self._close_requested = False

    def next_chunk(self, limit: int | None) -> tuple[bytes, int, bool]:
        """Encode up to `limit` rows: (DataRow bytes, row count, result exhausted)."""
        with self._lock:
            if self._close_requested:
                return b"", 0, True
            self._busy = True
        try:
            return self._next_chunk(limit)
        finally:
            with self._lock:
                self._busy = False
                deferred = self._close_requested
            if deferred:
                self._close_now()

    def _next_chunk(self, limit: int | None) -> tuple[bytes, int, bool]:
        if self.iterator is None:
            self.iterator = iter(self.batches)
        while self.pos >= len(self.pending):
            if self.exhausted:
                return b"", 0, True
            try:
                self.pending = next(self.iterator)
            except StopIteration:
                self.exhausted = True
                self.pending = []
                return b"", 0, True
            self.pos = 0
            if not self.pending and self.live:
                return b"", 0, False
        end = len(self.pending) - self.pos
        if limit is not None:
            end = min(end, limit)
        end = self.pos + min(end, MAX_ROWS_PER_WRITE)
        rows = self.pending[self.pos : end]
        self.pos = end
        return encode_data_rows(rows, self.encoders), len(rows), False

    def close(self) -> None:
        """Close the result's iterator now, or when the running next_chunk returns."""
        with self._lock:
            self._close_requested = True
            if self._busy:
                return
        self._close_now()

    def _close_now(self) -> None:
        close = getattr(self.iterator if self.iterator is not None else self.batches, "close", None)
        if close is not None:
            close()


LIVE_POLL_S = 1.0


async def wait_live(stream: Any) -> None:
    """Wait (on the event loop, holding no thread) until a live stream's listener fires, or
    its `wait_s()` / LIVE_POLL_S passes."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()

    def wake() -> None:
        loop.call_soon_threadsafe(ready.set)

    limit = getattr(stream, "wait_s", lambda: None)()
    stream.add_listener(wake)
    try:
        await asyncio.wait_for(ready.wait(), LIVE_POLL_S if limit is None else min(limit, LIVE_POLL_S))
    except TimeoutError:
        pass
    finally:
        stream.remove_listener(wake)


def encode_data_rows(rows: Sequence[tuple[Any, ...]], encoders: Sequence[codec.Encoder]) -> bytes:
    header = _I16.pack(len(encoders))
    out: list[bytes] = []
    pack = _I32.pack
    null = messages.NULL_FIELD
    for row in rows:
        parts = [header]
        for value, enc in zip(row, encoders, strict=True):
            if value is None:
                parts.append(null)
            else:
                data = enc(value)
                parts.append(pack(len(data)))
                parts.append(data)
        body = b"".join(parts)
        out.append(b"D" + pack(len(body) + 4) + body)
    return b"".join(out)


@dataclass
class Portal:
    name: str
    statement: Statement
    params: list[Any]
    result_formats: tuple[int, ...]
    result: Result | None = None
    stream: RowStream | None = None
    done: bool = False
    rows_sent: int = field(default=0)


def resolve_formats(columns: Sequence[ColumnDesc], formats: Sequence[int]) -> list[int]:
    """Per-column format codes from Bind's result format list (0, 1 or n entries)."""
    if len(formats) == len(columns):
        return list(formats)
    if len(formats) == 1:
        return [formats[0]] * len(columns)
    return [0] * len(columns)


def result_encoders(
    columns: Sequence[ColumnDesc], formats: Sequence[int], style: codec.TextStyle = codec.DEFAULT_STYLE
) -> list[codec.Encoder]:
    return [
        codec.binary_encoder(c.type) if f == 1 else codec.text_encoder(c.type, style)
        for c, f in zip(columns, formats, strict=True)
    ]


def type_oid(t: SqlType) -> int:
    try:
        return t.oid
    except KeyError:
        return 0
