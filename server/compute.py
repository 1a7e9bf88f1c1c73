"""The compute layer's lifecycle: the Spark driver JVM, its loss and its restart.

The server is the Spark driver: one JVM, launched by PySpark's py4j gateway. If that JVM
dies (killed, or Spark's handler of a fatal error such as OutOfMemoryError exits it), every
statement running in it fails with COMPUTE_UNAVAILABLE, and a new JVM and SparkSession are
started (once, however many statements noticed the loss; statements arriving meanwhile wait
for it). Durable state lives outside the JVM (Parquet shards, the DuckDB catalog), so a
restart loses only caches: the cached sources are dropped and rebuilt on first use.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from sql.errors import SqlError

log = logging.getLogger("mzspark.compute")

# Postgres' system_error class ("errors external to PostgreSQL itself"): the statement failed
# because the compute process died, not because of its SQL. The 57P0x states would say the
# session is being terminated, which it is not: the next statement runs on the new driver.
COMPUTE_UNAVAILABLE = "58000"
MONITOR_INTERVAL_S = 1.0
# Spark's exit status after an OutOfMemoryError (SparkExitCode.OOM): Materialize's reason
# `oom-killed` in mz_cluster_replica_statuses
SPARK_OOM_EXIT = 52


def unavailable(reason: str) -> SqlError:
    return SqlError(COMPUTE_UNAVAILABLE, f"compute unavailable: {reason}",
                    hint="The statement had no effect; retry it.")


class Compute:
    def __init__(self, master: str, workers: int | None, conf: dict[str, str]) -> None:
        self._args = (master, workers, conf)
        self._lock = threading.RLock()
        self._spark: Any = None
        self._sources: Any = None
        self._started = False
        self.restarts = 0
        self._closed = threading.Event()
        self._restart_hooks: list[Any] = []
        # the replica's process status as last observed: (status, reason, since)
        self._status: tuple[str, str | None, dt.datetime] = ("offline", None, dt.datetime.now(dt.UTC))

    def replica_status(self) -> tuple[str, str | None, dt.datetime]:
        """`online` while the driver JVM runs (observed: its process is alive), else `offline`
        with the reason of its last exit (`oom-killed`) or none (not started yet)."""
        from compute.render.spark import driver_process_running

        status, reason, since = self._status
        if status == "online" and not driver_process_running():
            self._set_status("offline", self._exit_reason())
        return self._status

    def _set_status(self, status: str, reason: str | None) -> None:
        if self._status[:2] != (status, reason):
            self._status = (status, reason, dt.datetime.now(dt.UTC))

    @staticmethod
    def _exit_reason() -> str | None:
        from compute.render.spark import driver_exit_code

        return "oom-killed" if driver_exit_code() == SPARK_OOM_EXIT else None

    def on_restart(self, fn: Any) -> None:
        """`fn()` is called after every restart of a lost driver (the compute controller
        rehydrates its dataflows)."""
        self._restart_hooks.append(fn)

    @property
    def current(self) -> Any:
        """The running SparkSession, or None (not started yet, or lost)."""
        return self._spark

    def spark(self) -> Any:
        """The SparkSession; starts it, or restarts a lost one (others wait meanwhile)."""
        from compute.render import spark as rs

        with self._lock:
            if self._spark is not None and not rs.driver_process_running():
                self._mark_lost(self._spark)
            if self._spark is None:
                if not self._started:
                    self._spark = rs.spark_session(*self._args)
                    self._started = True
                    self._set_status("online", None)
                    threading.Thread(target=self._monitor, name="spark-monitor", daemon=True).start()
                else:
                    log.warning("the Spark driver was lost; starting a new one")
                    try:
                        self._spark = rs.restart_session()
                    except Exception:  # noqa: BLE001 - retried by the next statement
                        log.exception("restarting the Spark driver failed")
                        raise unavailable("the Spark driver could not be restarted") from None
                    self.restarts += 1
                    self._set_status("online", None)
                    log.warning("the Spark driver is running again (restart %d)", self.restarts)
                    for fn in self._restart_hooks:
                        fn()
            return self._spark

    def sources(self) -> Any:
        """The per-shard cache of imported storage collections (compute/render/sources.py)."""
        with self._lock:
            spark = self.spark()
            if self._sources is None:
                from compute.render.sources import SourceCache

                self._sources = SourceCache(spark)
            return self._sources

    def drop_cached(self, shard_ids: list[str]) -> None:
        """Forget the cached contents of dropped shards (and release their leases)."""
        spark, sources = self._spark, self._sources
        if sources is None:
            return
        for sid in shard_ids:
            try:
                sources.drop(sid)
            except Exception as e:  # noqa: BLE001
                if self.lost_error(spark, e) is None:
                    raise

    def lost_error(self, seen: Any, e: BaseException) -> SqlError | None:
        """If the failure `e` of a statement running on session `seen` means the driver is
        gone: the client's error (and a restart is under way); else None."""
        from compute.render.spark import driver_lost

        if seen is None or not driver_lost(e, seen):
            return None
        self._mark_lost(seen)
        threading.Thread(target=self._restart_quietly, name="spark-restart", daemon=True).start()
        return unavailable("the Spark driver exited while running this statement; it is being restarted")

    def _mark_lost(self, seen: Any) -> None:
        """Forget `seen` (once) and everything held in its JVM."""
        if seen is None or self._spark is not seen:
            return  # already forgotten (a restart may be under way: do not wait for it)
        with self._lock:
            if seen is None or self._spark is not seen:
                return
            from compute.render.spark import driver_exit_code

            log.error("the Spark driver exited (exit status %s)", driver_exit_code())
            self._set_status("offline", self._exit_reason())
            self._spark = None
            sources, self._sources = self._sources, None
        if sources is not None:
            sources.abandon()

    def _restart_quietly(self) -> None:
        if self._closed.is_set():
            return
        try:
            self.spark()
        except Exception:  # noqa: BLE001 - logged by spark(); the next statement retries
            pass

    def _monitor(self) -> None:
        """Restart a driver that exited while no statement was using it."""
        from compute.render.spark import driver_process_running

        while not self._closed.wait(MONITOR_INTERVAL_S):
            if self._spark is not None and not driver_process_running():
                self._restart_quietly()

    def close(self) -> None:
        self._closed.set()
