"""The numeric Java UDFs' jar (compute.render.jvm) and their values without Spark.

- the jar builds reproducibly (same bytes twice), records its sources' digest, is rebuilt
  when stale, and without javac the failure names `make jar`;
- mzspark.udf.NumericUdfs returns, for 20,000 random calls (signs, zeros, trailing zeros,
  1 to 38 digits, every scale, NULLs, int8 counts, round / trunc positions), exactly the
  text of the Python reference compute.render.numeric_udfs._udf (sql.numeric_ops): the same
  digits at the same scale, or the same error marker. PostgreSQL is the judge of both in
  tests/integration/test_numeric_jvm_vs_postgres.py.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from compute.render import jvm
from compute.render.numeric_udfs import _udf

HARNESS = Path(__file__).with_name("java") / "NumericUdfsStdin.java"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return jvm.build(tmp_path_factory.mktemp("jar") / "mzspark-udfs.jar")


def test_build_is_reproducible_and_records_its_sources(built: Path, tmp_path: Path) -> None:
    again = jvm.build(tmp_path / "again.jar")
    assert again.read_bytes() == built.read_bytes()
    assert jvm.built_digest(built) == jvm.source_digest()


def test_a_missing_or_stale_jar_is_rebuilt(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "build" / "mzspark-udfs.jar"
    monkeypatch.setattr(jvm, "JAR", target)
    monkeypatch.setattr(jvm, "build", lambda jar: shutil.copyfile(built, jar) and jar)
    target.parent.mkdir()
    assert jvm.jar() == target and target.read_bytes() == built.read_bytes()  # missing
    target.write_bytes(b"not a jar")
    assert jvm.jar() == target and target.read_bytes() == built.read_bytes()  # unreadable
    monkeypatch.setattr(jvm, "source_digest", lambda: "another source tree")
    rebuilt: list[Path] = []
    monkeypatch.setattr(jvm, "build", lambda jar: rebuilt.append(jar) or jar)
    jvm.jar()
    assert rebuilt == [target]  # stale


def test_without_javac_the_error_names_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jvm, "JAR", jvm.ROOT / "build" / "no-such-dir" / "mzspark-udfs.jar")
    monkeypatch.setattr(jvm.shutil, "which", lambda name: None)
    with pytest.raises(jvm.JarUnavailable, match="make jar"):
        jvm.jar()


def _value(rng: random.Random) -> Decimal | None:
    k = rng.random()
    if k < 0.04:
        return None
    if k < 0.1:
        return Decimal(0).scaleb(-rng.randint(0, 12))
    digits = rng.randint(1, 38)
    coef = rng.randint(1, 10 ** digits - 1)
    if rng.random() < 0.3:  # trailing zeros
        coef = min(int(str(coef)[:rng.randint(1, len(str(coef)))]) * 10 ** rng.randint(0, 10), 10 ** 38 - 1)
    digits = len(str(coef))
    return Decimal(coef).scaleb(-rng.randint(0, digits)) * rng.choice((1, -1))


def _cases(n: int, seed: int) -> list[tuple[str, Decimal | None, object, int, str]]:
    rng = random.Random(seed)
    out: list[tuple[str, Decimal | None, object, int, str]] = []
    for _ in range(n):
        f = rng.choice(("div", "div", "div", "div_avg", "mul", "round", "trunc", "sqrt", "min_scale", "trim_scale"))
        a = _value(rng)
        b: object
        if f in ("round", "trunc"):
            b = None if rng.random() < 0.04 else rng.choice(
                (rng.randint(-45, 45), rng.randint(-3, 1000), rng.randint(-2 ** 31, 2 ** 31 - 1), 1000, 1001, -2 ** 31))
        elif f == "div_avg" and rng.random() < 0.5:
            b = ("L", rng.choice((0, 1, 2, 3, 7, rng.randint(1, 10 ** 6), rng.randint(1, 2 ** 62))))
        else:
            b = _value(rng)
        if f == "sqrt" and a is not None and rng.random() < 0.7:
            a = abs(a)
        out.append((f, a, b, rng.choice((0, 2, 10, 16, 24, 30, 38, rng.randint(0, 38))), rng.choice("01") + rng.choice("01")))
    return out


def _text(v: object) -> str:
    if v is None:
        return "N"
    if isinstance(v, tuple):
        return f"L{v[1]}"
    return format(v, "f") if isinstance(v, Decimal) else str(v)


def test_java_udfs_equal_the_python_reference(built: Path, tmp_path: Path) -> None:
    api = sorted(jvm.spark_jars_dir().glob("spark-sql-api_*.jar"))
    cp = os.pathsep.join([str(built), *map(str, api)])
    subprocess.run(["javac", "--release", "17", "-cp", cp, "-d", str(tmp_path), str(HARNESS)], check=True)
    cases = _cases(20_000, 26)
    stdin = "".join(f"{f}\t{_text(a)}\t{_text(b)}\t{s}\t{k}\n" for f, a, b, s, k in cases)
    p = subprocess.run(["java", "-cp", os.pathsep.join([str(tmp_path), cp]), "NumericUdfsStdin"], input=stdin,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = p.stdout.splitlines()
    assert len(got) == len(cases)
    wrong = []
    for (f, a, b, s, k), java in zip(cases, got, strict=True):
        py = _udf(f, a, b[1] if isinstance(b, tuple) else b, s, k)
        py = "NULL" if py is None else py.replace("\u0001", "ERR")
        if java != py:
            wrong.append(f"{f}({_text(a)}, {_text(b)}) S={s} keep={k}: java {java} python {py}")
    assert not wrong, "\n".join(wrong[:20])
    kinds = {(f, "NULL" if j == "NULL" else j[4:9] if j.startswith("ERR") else "value") for (f, *_), j in zip(cases, got, strict=True)}
    for want in [("div", "value"), ("div", "22012"), ("div", "22003"), ("div", "0A000"), ("div_avg", "value"),
                 ("mul", "22003"), ("round", "value"), ("trunc", "value"), ("sqrt", "2201F"), ("trim_scale", "value")]:
        assert want in kinds, want
