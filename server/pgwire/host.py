"""ConnectionHost: the listener as a Connection sees it (a Protocol, so connection.py needs no server.py)."""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any, Protocol

from server.api import Coordinator, Session


class ConnectionHost(Protocol):
    """The coordinator, the authentication settings, the thread pool statements run on and
    the registry of live sessions that routes CancelRequests (`conn`: the Connection)."""

    coordinator: Coordinator
    password: str | None
    auth_method: str
    max_message_size: int
    executor: Executor

    def _register(self, session: Session, conn: Any) -> None: ...

    def _unregister(self, session: Session) -> None: ...

    def _cancel_backend(self, pid: int, secret: int) -> None: ...
