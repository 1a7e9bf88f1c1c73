"""A portal closed while its row stream is being pulled on a worker thread (a cancelled
statement, a vanished client) is closed when that pull returns, instead of raising
"generator already executing"."""

from __future__ import annotations

import threading

from server.pgwire import codec
from server.pgwire.portals import RowStream
from sql.types import INT4


def _stream(started: threading.Event, release: threading.Event, closed: list[bool]) -> RowStream:
    def batches():
        try:
            yield [(1,)]
            started.set()
            release.wait(10)
            yield [(2,)]
            yield [(3,)]
        finally:
            closed.append(True)

    return RowStream(batches(), [codec.text_encoder(INT4)])


def test_close_during_a_pull_is_deferred_to_its_end() -> None:
    started, release, closed = threading.Event(), threading.Event(), []
    s = _stream(started, release, closed)
    assert s.next_chunk(None)[1] == 1
    out: list[tuple[bytes, int, bool]] = []
    t = threading.Thread(target=lambda: out.append(s.next_chunk(None)))
    t.start()
    assert started.wait(10)
    s.close()  # the generator is executing on the other thread
    assert closed == []
    release.set()
    t.join(10)
    assert out[0][1] == 1 and closed == [True]
    # a closed stream yields nothing more
    assert s.next_chunk(None) == (b"", 0, True)


def test_close_when_idle_closes_at_once() -> None:
    started, release, closed = threading.Event(), threading.Event(), []
    release.set()
    s = _stream(started, release, closed)
    assert s.next_chunk(None)[1] == 1
    s.close()
    assert closed == [True]
    assert s.next_chunk(None) == (b"", 0, True)
