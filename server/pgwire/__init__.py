"""Postgres wire protocol front end (own asyncio implementation, see DESIGN §9)."""

from server.pgwire.server import PgServer

__all__ = ["PgServer"]
