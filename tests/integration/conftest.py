"""Fixtures for integration tests: the real server as a subprocess, real clients.

`mz_server` is one server for the whole session (Spark starts once); tests that need a
server of their own (kill/restart) use `mz_server_factory`. Tests get unique relation names
from `uniq` so they never collide on the shared server.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.harness import MzServer

INTEGRATION_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def mz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MzServer]:
    base = tmp_path_factory.mktemp("mz_server")
    server = MzServer(base / "mzdata", base / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mz_server_factory(tmp_path: Path) -> Iterator[Callable[[], MzServer]]:
    """Make private servers (own data dir) that are stopped at the end of the test."""
    servers: list[MzServer] = []
    counter = itertools.count()

    def make() -> MzServer:
        n = next(counter)
        server = MzServer(tmp_path / f"mzdata{n}", tmp_path / f"server{n}.log")
        servers.append(server)
        server.start()
        return server

    try:
        yield make
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def uniq(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Unique lower-case identifiers for this test: uniq("t") -> "t_test_foo_1a2b3c4d"."""
    test = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")[:30]
    token = uuid.uuid4().hex[:8]

    def name(prefix: str = "t") -> str:
        return f"{prefix}_{test}_{token}"

    return name
