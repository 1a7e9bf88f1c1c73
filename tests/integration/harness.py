"""Start the real mzspark server as a subprocess for integration tests.

Contract with `python -m server`: once it accepts connections it prints one line
`mzspark ready on HOST:PORT` to stdout (with `--listen-addr 127.0.0.1:0` the port is the
ephemeral one the kernel chose). Everything the server prints (stdout and stderr) goes to a
log file in the test's temporary directory; its tail is shown when start-up fails and is
attached to the report of every failing test that used the server.

`MZSPARK_SERVER_CMD` (optional) replaces the command, e.g. with a script that starts a real
PostgreSQL and prints the same ready line, to check the client suite against a reference.
It is split with shlex and `{listen}` / `{data_dir}` in it are substituted.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
READY_RE = re.compile(rb"mzspark ready on (\S+):(\d+)\s*$", re.MULTILINE)
HTTP_RE = re.compile(rb"mzspark http on [^\s]*:(\d+)")
# a loaded machine starts Spark slowly: MZSPARK_START_TIMEOUT_S raises the bound
START_TIMEOUT_S = float(os.environ.get("MZSPARK_START_TIMEOUT_S", "120"))
STOP_TIMEOUT_S = 30.0
USER = "materialize"
DATABASE = "materialize"

# Every server started in this pytest process, so failure reports can show their logs.
ALL_SERVERS: list[MzServer] = []


class ServerStartError(RuntimeError):
    pass


class MzServer:
    """One server process on one data directory; can be killed and started again."""

    def __init__(
        self,
        data_dir: Path,
        log_path: Path,
        *,
        spark_master: str = "local[2]",
        listen_host: str = "127.0.0.1",
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path)
        self.spark_master = spark_master
        self.listen_host = listen_host
        self.extra_args = extra_args
        self.host: str = listen_host
        self.port: int = 0
        self.http_port: int = 0  # the live plan page (0: not serving)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        ALL_SERVERS.append(self)

    # ---- process control -------------------------------------------------------------

    def command(self) -> list[str]:
        listen = f"{self.listen_host}:0"
        override = os.environ.get("MZSPARK_SERVER_CMD")
        if override:
            return [
                part.replace("{listen}", listen).replace("{data_dir}", str(self.data_dir))
                for part in shlex.split(override)
            ]
        return [
            sys.executable,
            "-m",
            "server",
            "--listen-addr",
            listen,
            "--data-dir",
            str(self.data_dir),
            "--spark-master",
            self.spark_master,
            # the live plan page on an ephemeral port unless a test asks for one
            *(() if "--http-port" in self.extra_args else ("--http-port", "0")),
            *self.extra_args,
        ]

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the server and wait for its ready line (the port it listens on)."""
        if self.running:
            raise RuntimeError("server already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== start #{self.starts}: {shlex.join(self.command())}\n".encode())
            offset = log.tell()
            env = dict(os.environ, PYTHONUNBUFFERED="1")
            # Own process group: kill() takes the JVM (Spark driver) down with the Python
            # process, like a machine losing power would.
            self.proc = subprocess.Popen(
                self.command(),
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            m = READY_RE.search(self._log_bytes(offset))
            if m:
                self.host = m.group(1).decode().strip("[]")
                if self.host in ("0.0.0.0", "::", ""):
                    self.host = "127.0.0.1"
                self.port = int(m.group(2))
                h = HTTP_RE.search(self._log_bytes(offset))
                self.http_port = int(h.group(1)) if h else 0
                return
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.proc = None
                raise ServerStartError(
                    f"server exited with code {rc} before it was ready\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self._kill_group(signal.SIGKILL)
                raise ServerStartError(f"server not ready after {timeout:.0f} s\n{self.log_tail()}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the server (and its Spark JVM): a crash, nothing gets flushed."""
        self._kill_group(signal.SIGKILL)

    def stop(self) -> int | None:
        """Graceful stop: SIGTERM, then SIGKILL after a grace period. Returns the server's
        exit code, or None if it was not running or had to be killed."""
        if self.proc is None:
            return None
        rc: int | None = self.proc.poll()
        if rc is None:
            self._signal_group(signal.SIGTERM)
            try:
                rc = self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                rc = None
        self._kill_group(signal.SIGKILL)
        return rc

    def restart(self) -> None:
        """Graceful stop and start again on the same data directory."""
        self.stop()
        self.start()

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def _kill_group(self, sig: int) -> None:
        if self.proc is None:
            return
        self._signal_group(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_TIMEOUT_S)
        # Wait for the rest of the group (the JVM) too, so a restart finds it gone.
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.05)
        self.proc = None

    # ---- clients ---------------------------------------------------------------------

    def connect(self, **kwargs: Any) -> Any:
        """A psycopg 3 connection, autocommit unless asked otherwise."""
        import psycopg

        params: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": USER,
            "dbname": DATABASE,
            "autocommit": True,
            "connect_timeout": 30,
        }
        params.update(kwargs)
        return psycopg.connect(**params)

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={USER} dbname={DATABASE}"

    def url(self, scheme: str = "postgresql") -> str:
        return f"{scheme}://{USER}@{self.host}:{self.port}/{DATABASE}"

    # ---- logs ------------------------------------------------------------------------

    def _log_bytes(self, offset: int = 0) -> bytes:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read()
        except FileNotFoundError:
            return b""

    def log_tail(self, lines: int = 60) -> str:
        text = self._log_bytes().decode("utf-8", "replace").splitlines()
        tail = "\n".join(text[-lines:])
        return f"--- last {lines} lines of {self.log_path} ---\n{tail}"
