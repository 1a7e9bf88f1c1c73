"""Classes of differences the oracle knows about, each with its reason (see KNOWN.md).

A finding matching one is counted separately, never as a discrepancy. The goal is to fix,
not to list: an entry belongs here only when PostgreSQL's own answer is not determined by
the query (or the difference is an accepted, documented dialect difference)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Known:
    name: str
    reason: str
    matches: Callable[[Any], bool]


KNOWN: list[Known] = []


def known_reason(finding: Any) -> str:
    for k in KNOWN:
        if k.matches(finding):
            return k.name
    return ""
