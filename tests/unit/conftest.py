"""Fixtures shared by unit test modules: the in-process pgwire server (see pgwire_fakes.py)."""

from tests.unit.pgwire_fakes import coord, raw, srv  # noqa: F401 (pytest fixtures)
