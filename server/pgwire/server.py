"""The pgwire listener: accepts connections and routes CancelRequests to live sessions."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from server.api import Coordinator, Session
from server.pgwire.connection import Connection
from server.pgwire.worker_pool import ElasticExecutor

log = logging.getLogger("server.pgwire")

AUTH_METHODS = ("md5", "scram-sha-256")


class PgServer:
    """A Postgres wire protocol (3.0) server in front of a `Coordinator`."""

    def __init__(
        self,
        coordinator: Coordinator,
        host: str,
        port: int,
        *,
        password: str | None = None,
        auth_method: str = "scram-sha-256",
        max_message_size: int = 64 * 1024 * 1024,
        executor_threads: int = 512,
    ) -> None:
        if auth_method not in AUTH_METHODS:
            raise ValueError(f"auth_method must be one of {AUTH_METHODS}, not {auth_method!r}")
        self.coordinator = coordinator
        self.host = host
        self.port = port
        self.password = password
        self.auth_method = auth_method
        self.max_message_size = max_message_size
        # a thread per busy connection (statements queued for compute hold one), up to the bound
        self.executor = ElasticExecutor(executor_threads, name="pgwire")
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connections: set[Connection] = set()
        self._by_key: dict[tuple[int, int], tuple[Session, Connection]] = {}
        self._closing = False

    async def start(self) -> None:
        """Bind the listening socket; `self.port` then holds the real port."""
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("pgwire listening on %s:%d", self.host, self.port)

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        try:
            await self._server.serve_forever()
        except asyncio.CancelledError:
            if not self._closing:
                raise

    async def close(self) -> None:
        """Stop listening, cancel running statements and close every connection."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.abort()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        self.executor.shutdown(wait=False, cancel_futures=True)

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = Connection(self, reader, writer)
        self._connections.add(conn)
        try:
            await conn.run()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("unhandled error in connection %s", conn.peer)
        finally:
            self._connections.discard(conn)
            self._tasks.discard(task)

    @staticmethod
    def _key(pid: int, secret: int) -> tuple[int, int]:
        return pid & 0x7FFFFFFF, secret & 0xFFFFFFFF

    def _register(self, session: Session, conn: Connection) -> None:
        self._by_key[self._key(session.pid, session.secret)] = (session, conn)

    def _unregister(self, session: Session) -> None:
        key = self._key(session.pid, session.secret)
        entry = self._by_key.get(key)
        if entry is not None and entry[0] is session:
            del self._by_key[key]

    def _cancel_backend(self, pid: int, secret: int) -> None:
        entry = self._by_key.get(self._key(pid, secret))
        if entry is None:
            log.info("CancelRequest for unknown backend %d", pid)
            return
        try:
            self.coordinator.cancel(entry[0])
        except Exception:
            log.exception("cancel failed")
