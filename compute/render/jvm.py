"""The project's JVM code (compute/jvm/src: Spark Java UDFs, compute.render.numeric_udfs)
built into one jar, build/jvm/mzspark-udfs.jar, which the SparkSession loads with
`spark.jars` (so executors of a cluster fetch it from the driver).

The jar records a digest of the sources it was built from (its manifest's
Mzspark-Source-Digest): `jar()` builds it when it is missing or stale, and fails naming
`make jar` when there is no javac to do so. The build is reproducible: javac --release 17
against the Spark API jar PySpark ships, entries sorted, timestamps fixed.

    python -m compute.render.jvm   # build (what `make jar` runs)
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

log = logging.getLogger("mzspark.jvm")

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "compute" / "jvm" / "src"
JAR = ROOT / "build" / "jvm" / "mzspark-udfs.jar"
DIGEST_KEY = "Mzspark-Source-Digest"
_EPOCH = (1980, 1, 1, 0, 0, 0)


class JarUnavailable(RuntimeError):
    pass


def source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def source_digest() -> str:
    """sha256 over the sources' relative paths and contents."""
    h = hashlib.sha256()
    for f in source_files():
        h.update(f.relative_to(SOURCES).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def built_digest(jar: Path) -> str | None:
    """The source digest the jar at `jar` was built from (None: no readable jar)."""
    try:
        with zipfile.ZipFile(jar) as z:
            manifest = z.read("META-INF/MANIFEST.MF").decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for line in manifest.splitlines():
        k, _, v = line.partition(":")
        if k == DIGEST_KEY:
            return v.strip()
    return None


def spark_jars_dir() -> Path:
    """The jars/ directory of the installed PySpark (located without importing it)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise JarUnavailable("PySpark is not installed: cannot build mzspark's JVM UDFs")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def build(jar: Path) -> Path:
    """Compile the sources and write `jar` (atomically: concurrent builds each write a whole
    jar)."""
    javac = shutil.which("javac")
    if javac is None:
        raise JarUnavailable(f"mzspark's JVM UDFs ({jar}) are missing or stale and there is no javac"
                             " on PATH to build them: run `make jar` (it installs a JDK), or install JDK 17+")
    api = sorted(spark_jars_dir().glob("spark-sql-api_*.jar"))
    # (the Scala library: for the annotations of Spark's Scala classes, e.g. Row)
    api += sorted(spark_jars_dir().glob("scala-library-*.jar"))
    # (Spark core: the scheduler's listener API, compute.render.listener)
    # (Spark core and its listener events: the scheduler's listener API, compute.render.listener;
    # Jackson's annotations: the events carry them)
    # (Spark SQL and Catalyst: the session catalog's views, compute.render.driver_calls; jsr305: their
    # annotations; Jackson's databind: DataType's, compute.render.templates and
    # compute.render.arrangement's local pieces)
    for pattern in ("spark-core_*.jar", "spark-common-utils_*.jar", "jackson-annotations-*.jar", "spark-sql_*.jar",
                    "spark-catalyst_*.jar", "jsr305-*.jar", "jackson-databind-*.jar"):
        api += sorted(spark_jars_dir().glob(pattern))
    if not api:
        raise JarUnavailable(f"no spark-sql-api jar in {spark_jars_dir()}: cannot build mzspark's JVM UDFs")
    digest = source_digest()
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent, prefix=".build-") as tmp:
        classes = Path(tmp) / "classes"
        cmd = [javac, "--release", "17", "-encoding", "UTF-8", "-Xlint:all,-path,-serial", "-Werror",
               "-cp", os.pathsep.join(map(str, api)), "-d", str(classes), *map(str, source_files())]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise JarUnavailable(f"javac failed building mzspark's JVM UDFs:\n{p.stdout}{p.stderr}")
        out = Path(tmp) / "out.jar"
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            def put(name: str, data: bytes) -> None:
                info = zipfile.ZipInfo(name, _EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, data)

            put("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\r\n{DIGEST_KEY}: {digest}\r\n\r\n".encode())
            for f in sorted(classes.rglob("*.class")):
                put(f.relative_to(classes).as_posix(), f.read_bytes())
        os.replace(out, jar)
    return jar


def jar() -> Path:
    """The up-to-date jar, built first when missing or stale."""
    if built_digest(JAR) != source_digest():
        log.info("building %s", JAR)
        build(JAR)
    return JAR


def main() -> int:
    try:
        path = jar()
    except JarUnavailable as e:
        print(e, file=sys.stderr)
        return 1
    os.utime(path)  # up to date for make too (a touched source with the same digest)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
