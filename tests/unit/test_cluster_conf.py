"""compute/render/cluster.py: executor defaults only for cluster masters."""

from __future__ import annotations

import pytest

from compute.render.cluster import cluster_conf, is_local


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[4,3]", "local-cluster[2,1,1024]"])
def test_local_masters_get_no_executor_conf(master: str) -> None:
    assert is_local(master)
    assert cluster_conf(master, "/src") == {}


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://host:443"])
def test_cluster_masters_import_the_driver_tree(master: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MZSPARK_EXECUTOR_MEMORY", raising=False)
    assert not is_local(master)
    conf = cluster_conf(master, "/src")
    assert conf["spark.executorEnv.PYTHONPATH"] == "/src"
    assert conf["spark.executor.memory"] == "1g"
    monkeypatch.setenv("MZSPARK_EXECUTOR_MEMORY", "3g")
    assert cluster_conf(master, "/src")["spark.executor.memory"] == "3g"
