"""Spark configuration for a cluster master (standalone `spark://`, YARN, Kubernetes): what
local mode gets for free because its executors live in the driver's JVM and process tree.

- Python UDF workers on executors import this project's modules (compute.render.jsonb, ...)
  from the driver's source tree: `spark.executorEnv.PYTHONPATH` = the driver's root, so an
  executor never runs another copy of the code (e.g. an editable install elsewhere). The
  interpreter (PYSPARK_PYTHON) travels with every UDF; on a cluster of several machines the
  same path must exist on each.
- Executor memory is explicit (MZSPARK_EXECUTOR_MEMORY, default 1g): it must fit in what a
  worker offers, or the application waits for resources forever.

Everything here is a default: `--spark-conf K=V` overrides it.
"""

from __future__ import annotations

import os


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def cluster_conf(master: str, root: str) -> dict[str, str]:
    """Defaults for a non-local `master` (none for local mode)."""
    if is_local(master):
        return {}
    return {
        "spark.executorEnv.PYTHONPATH": root,
        "spark.executor.memory": os.environ.get("MZSPARK_EXECUTOR_MEMORY", "1g"),
    }
