"""Group commit (server/group_commit.py): concurrent writers share commits, each is
acknowledged with its commit's timestamp only after it, a dropped table fails only its
writer, a failed commit fails its whole group and nothing else."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from server.group_commit import GroupCommitter, merge


@dataclass(frozen=True)
class T:
    id: str


def test_concurrent_writers_share_commits_and_see_their_own_timestamp() -> None:
    lock = threading.Lock()
    committed: list[tuple[int, list]] = []

    def commit(writes: list) -> int:
        time.sleep(0.02)  # an fsync
        committed.append((len(committed) + 1, writes))
        return len(committed)

    g = GroupCommitter(lock, commit, lambda w: None)
    acks: dict[int, int] = {}

    def writer(i: int) -> None:
        acks[i] = g.commit([(T("t"), [(i,)], [1])])

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acks) == 40
    assert len(committed) < 40 and g.commits == len(committed) and g.writes == 40  # writes were grouped
    rows_at = {ts: sorted(r for _, rows, _ in w for r in rows) for ts, w in committed}
    for i, ts in acks.items():
        assert (i,) in rows_at[ts]  # acknowledged with the commit that holds its row
    assert all(len(w) == 1 for _, w in committed)  # one batch per table per commit


def test_failures_stay_with_their_writers() -> None:
    lock = threading.Lock()
    dropped = T("gone")
    calls: list[list] = []

    def commit(writes: list) -> int:
        calls.append(writes)
        if any(r == ("boom",) for _, rows, _ in writes for r in rows):
            raise OSError("disk full")
        return 7

    def check(writes: list) -> None:
        if any(item is dropped for item, _, _ in writes):
            raise LookupError("dropped")

    g = GroupCommitter(lock, commit, check)
    with pytest.raises(LookupError):
        g.commit([(dropped, [(1,)], [1])])
    assert calls == []  # nothing was committed for it
    assert g.commit([(T("t"), [(1,)], [1])]) == 7
    with pytest.raises(OSError):
        g.commit([(T("t"), [("boom",)], [1])])
    assert g.commit([(T("t"), [(2,)], [1])]) == 7  # the committer still works


def test_merge_sums_per_table() -> None:
    a, b = T("a"), T("b")
    out = merge([(a, [(1,)], [1]), (b, [(2,)], [-1]), (a, [(3,)], [1])])
    assert [(i.id, r, d) for i, r, d in out] == [("a", [(1,), (3,)], [1, 1]), ("b", [(2,)], [-1])]
