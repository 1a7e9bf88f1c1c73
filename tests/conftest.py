"""Project-wide pytest set-up.

Integration fixtures (the real server, real clients) live in tests/integration/conftest.py;
this file only attaches the logs of any server subprocess to the report of a failing test.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator:
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    from tests.integration.harness import ALL_SERVERS

    funcargs = getattr(item, "funcargs", {})
    used = [s for s in ALL_SERVERS if any(v is s for v in funcargs.values())]
    for server in used or ALL_SERVERS[-1:]:
        report.sections.append((f"mzspark server log ({report.when})", server.log_tail()))
