"""psql, the reference client: -c, multi-statement -c, -f scripts, COPY in and out, errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

PSQL = shutil.which("psql") or "psql"


def psql(
    server: MzServer, *args: str, input: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run psql exactly as a user would (`psql -h H -p P -U materialize materialize ...`),
    ignoring any ~/.psqlrc."""
    env = dict(os.environ, PGCONNECT_TIMEOUT="30", PGAPPNAME="mzspark-test-psql")
    env.pop("PGPASSWORD", None)
    env.pop("PGOPTIONS", None)
    cmd = [PSQL, "-X", "-h", server.host, "-p", str(server.port), "-U", "materialize"]
    cmd += ["materialize", *args]
    return subprocess.run(
        cmd,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def ok(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 0, (
        f"psql exited {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    )
    assert "ERROR" not in res.stderr, res.stderr
    return res.stdout


def test_select_1(mz_server: MzServer) -> None:
    out = ok(psql(mz_server, "-c", "SELECT 1"))
    lines = [line.rstrip() for line in out.rstrip("\n").splitlines()]
    assert lines == [" ?column?", "----------", "        1", "(1 row)"], out


def test_select_unaligned(mz_server: MzServer) -> None:
    out = ok(psql(mz_server, "-tA", "-c", "SELECT 1 + 1, 'x' || 'y', NULL::int IS NULL"))
    assert out == "2|xy|t\n"


def test_multi_statement_c(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    out = ok(
        psql(
            mz_server,
            "-A",
            "-c",
            f"CREATE TABLE {t} (a int, b text); "
            f"INSERT INTO {t} VALUES (1, 'one'), (2, 'two'), (3, NULL); "
            f"SELECT a, b FROM {t} ORDER BY a",
        )
    )
    # psql >= 15 shows every result of a multi-statement string.
    assert "CREATE TABLE" in out
    assert "INSERT 0 3" in out
    assert "a|b\n1|one\n2|two\n3|\n(3 rows)\n" in out


def test_file_script(mz_server: MzServer, uniq: Callable[[str], str], tmp_path: Path) -> None:
    t = uniq("t")
    script = tmp_path / "script.sql"
    script.write_text(
        f"""
-- a comment line
CREATE TABLE {t} (id int, name text, score double precision);
INSERT INTO {t} VALUES (1, 'alice', 1.5);
INSERT INTO {t} VALUES (2, 'bob', 2.25), (3, 'carol', NULL);
SELECT id, name, score
  FROM {t}
 WHERE id >= 2
 ORDER BY id;
SELECT count(*), sum(score) FROM {t};
"""
    )
    out = ok(psql(mz_server, "-v", "ON_ERROR_STOP=1", "-tA", "-f", str(script)))
    rows = [line for line in out.splitlines() if "|" in line]
    assert rows == ["2|bob|2.25", "3|carol|", "3|3.75"], out


def test_copy_from_stdin_and_to_stdout(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    ok(psql(mz_server, "-c", f"CREATE TABLE {t} (a int, b text)"))
    # Server-side COPY FROM STDIN: the data follows the command in the same input stream.
    script = (
        f"COPY {t} FROM STDIN;\n"
        "1\tone\n"
        "2\t\\N\n"
        "3\ttab\\there\n"
        "\\.\n"
        # psql's \copy: same wire protocol, driven by psql.
        f"\\copy {t} (a, b) from stdin\n"
        "4\tfour\n"
        "5\tback\\\\slash\n"
        "\\.\n"
    )
    out = ok(psql(mz_server, "-v", "ON_ERROR_STOP=1", "-f", "-", input=script))
    assert "COPY 3" in out
    assert "COPY 2" in out

    out = ok(psql(mz_server, "-c", f"COPY (SELECT a, b FROM {t} ORDER BY a) TO STDOUT"))
    assert out == ("1\tone\n2\t\\N\n3\ttab\\there\n4\tfour\n5\tback\\\\slash\n")

    # The rows are really in the table, with their real values.
    out = ok(psql(mz_server, "-tA", "-c", f"SELECT a, b IS NULL, length(b) FROM {t} ORDER BY a"))
    assert out == "1|f|3\n2|t|\n3|f|8\n4|f|4\n5|f|10\n"


def test_copy_csv_to_stdout(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    ok(
        psql(
            mz_server,
            "-c",
            f"CREATE TABLE {t} (a int, b text); INSERT INTO {t} VALUES (1, 'x,y'), (2, NULL)",
        )
    )
    out = ok(
        psql(mz_server, "-c", f"COPY (SELECT a, b FROM {t} ORDER BY a) TO STDOUT WITH (FORMAT csv)")
    )
    assert out == '1,"x,y"\n2,\n'


def test_error_exit_and_sqlstate(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    script = (
        "\\set VERBOSITY verbose\n"
        f"CREATE TABLE {t} (a int);\n"
        "SELEC 1;\n"
        f"INSERT INTO {t} VALUES (1);\n"
    )
    res = psql(mz_server, "-v", "ON_ERROR_STOP=1", "-f", "-", input=script)
    # psql exits 3 when a script stops on an error.
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    assert "ERROR:  42601:" in res.stderr, res.stderr
    # ON_ERROR_STOP: the statement after the error did not run.
    out = ok(psql(mz_server, "-tA", "-c", f"SELECT count(*) FROM {t}"))
    assert out == "0\n"


def test_error_exit_c(mz_server: MzServer) -> None:
    res = psql(
        mz_server,
        "-v",
        "ON_ERROR_STOP=1",
        "-v",
        "VERBOSITY=verbose",
        "-c",
        "SELECT * FROM no_such_table_anywhere",
    )
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "ERROR:  42P01:" in res.stderr, res.stderr
    assert "no_such_table_anywhere" in res.stderr
