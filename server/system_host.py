"""SystemHost: the coordinator as the system relations (server.system) see it, a Protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from server.api import Prepared, Result
    from server.compute import Compute
    from server.session import Session
    from server.subscribe import SubscribeRows


class SystemHost(Protocol):
    """The catalog, compute, controller and sessions SystemHandler reads, and the statement
    entry points DECLARE CURSOR runs its query through."""

    catalog: Catalog
    compute: Compute
    controller: Any  # compute.controller.Controller, once compute runs
    _sessions: dict[int, Session]

    def prepare(self, session: Session, sql: str, param_types: list[Any]) -> Prepared: ...

    def cursor_stream(self, session: Session, prepared: Prepared) -> SubscribeRows | None: ...

    def execute(self, session: Session, prepared: Prepared, params: list[Any]) -> Result: ...
