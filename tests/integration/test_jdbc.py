"""The PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java): a Java program compiled at
test time runs server-prepared statements past the driver's prepareThreshold."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).resolve().parent / "java" / "JdbcSmoke.java"


def test_jdbc_prepared_statements(
    mz_server: MzServer, uniq: Callable[[str], str], tmp_path: Path
) -> None:
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "javac/java missing: `make test` installs default-jdk-headless"
    assert JAR.exists(), f"{JAR} missing: `make test` installs libpostgresql-jdbc-java"
    build = subprocess.run(
        [javac, "-cp", str(JAR), "-d", str(tmp_path), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert build.returncode == 0, build.stderr
    url = (
        f"jdbc:postgresql://{mz_server.host}:{mz_server.port}/materialize"
        "?user=materialize&prepareThreshold=5&connectTimeout=30&socketTimeout=120"
    )
    run = subprocess.run(
        [java, "-cp", f"{JAR}:{tmp_path}", "JdbcSmoke", url, uniq("t")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.stdout.strip().splitlines()[-1] == "OK", run.stdout
