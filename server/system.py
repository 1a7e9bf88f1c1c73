"""Catalog-only queries and utility statements (DESIGN §2 step 2, §8): answered from the
DuckDB catalog without any Spark job.

`SystemHandler.prepare` is consulted first for every statement; it returns None for
statements that are not its business, which then take the normal planning path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.api import Prepared
from sql.types import SqlType

if TYPE_CHECKING:
    from server.coordinator import Coordinator
    from server.session import Session


class SystemHandler:
    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    def prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared | None:
        """A Prepared whose `plan` has `execute(session, params) -> Result`, or None."""
        return None


def run_system_plan(plan: Any, session: Session, params: list[Any]):
    return plan.execute(session, params)
