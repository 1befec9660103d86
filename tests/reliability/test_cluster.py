"""The sample project on a Spark standalone cluster started by the test, everything on 127.0.0.1.

A master and one worker are started with pyspark's own `bin/spark-class` (what `sbin/start-master.sh`
and `start-worker.sh` run), the profile's `master` points at the master, and `dbt build` runs the
whole sample project. Executors are separate JVMs launched by the worker, with their own Python
workers, so every fragment written and read went through processes that share nothing with dbt's
but the root directory. The docs (README "Reliability") list the same steps for a real cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from tests.conftest import free_port
from tests.reliability.helpers import check_namespace, dbt_env, make_project, wait_for
from tests.reliability.test_connector_fallback import EXPLAIN_MACRO

QUERY = "{sql: 'select id from analytics.numbers where id = 3'}"
SAMPLE_QUERY = "{sql: 'select * from analytics__marts.orders'}"

pytestmark = pytest.mark.cluster
SPARK_HOME = Path(pyspark.__file__).parent


def _daemon(args: list[str], log: Path, work: Path) -> subprocess.Popen:
    env = dbt_env(
        {
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_WORKER_DIR": str(work),
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        }
    )
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *args],
        env=env,
        stdout=open(log, "w"),  # noqa: SIM115 - owned by the daemon for its lifetime
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _stop(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=20)
            return
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(master URL, worker dir) of a running master with one registered 1-core worker."""
    port = free_port()
    work = tmp_path / "worker"
    work.mkdir()
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    master = _daemon(
        [
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(free_port()),
        ],
        master_log,
        work,
    )
    url = f"spark://127.0.0.1:{port}"
    worker = None
    try:
        wait_for(lambda: "ALIVE" in master_log.read_text(), "the master", process=master)
        worker = _daemon(
            [
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--webui-port",
                str(free_port()),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(work),
                url,
            ],
            worker_log,
            work,
        )
        wait_for(lambda: "registered with master" in worker_log.read_text(), "the worker", process=worker)
        yield url, work
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)


def test_sample_project_on_standalone_cluster(standalone: tuple[str, Path], tmp_path: Path) -> None:
    url, work = standalone
    config = {"spark.executor.memory": "512m", "spark.cores.max": "1", "spark.executor.cores": "1"}
    # The worker's JVMs have the connector's jars on their class path (SPARK_DIST_CLASSPATH, as an
    # operator installs them on every node): the profile says so, and the adapter adds none.
    extra = {"spark_config": config, "connector_jars_on_nodes": True}
    project = make_project(tmp_path / "proj", str(tmp_path / "root"), master=url, extra=extra)
    project.write("macros/explain_plan.sql", EXPLAIN_MACRO)
    build = project.run("build")
    assert build.returncode == 0, build.output[-4000:]
    assert all(r["status"] in ("success", "pass") for r in build.results.values()), build.results

    counts = check_namespace(project.namespace())
    assert counts[("analytics", "marts", "orders")] == counts[("analytics", "raw", "raw_orders")] > 0
    assert (
        counts[("analytics", "marts", "customer_segments")] == counts[("analytics", "raw", "raw_customers")]
    )

    executor_logs = list(work.glob("app-*/*/stderr"))
    assert executor_logs, "the worker launched no executor"
    assert any("Finished task" in log.read_text() for log in executor_logs)
    explain = project.run("run-operation", "explain_plan", "--args", SAMPLE_QUERY)
    assert explain.returncode == 0, explain.output[-4000:]
    assert "LanceScan[" in explain.output


def _installed_work() -> set[str]:
    """What is in the installed PySpark's `work` directory (where standalone workers write by default)."""
    work = SPARK_HOME / "work"
    return set(os.listdir(work)) if work.is_dir() else set()


def test_local_cluster_keeps_spark_files_out_of_pyspark_and_logs(tmp_path: Path) -> None:
    """`master: local-cluster[...]`: executors are separate JVMs whose workers write executor logs to
    `$SPARK_HOME/work`, the installed pyspark; dbt-lancens gives them a temporary directory, and only
    `spark.log` sits beside dbt's log."""
    project = make_project(
        tmp_path / "proj", str(tmp_path / "root"), sample=False, master="local-cluster[1,1,1024]"
    )
    project.write("models/numbers.sql", "select id, id * 2 as doubled from range(100)")
    project.write("models/evens.sql", "select id from {{ ref('numbers') }} where doubled % 4 = 0")
    project.write("macros/explain_plan.sql", EXPLAIN_MACRO)
    temp = tmp_path / "tmp"
    temp.mkdir()
    installed_before = _installed_work()

    # another temporary directory has no class archive: the launch must not record one for a dump
    build = project.run("build", env={"TMPDIR": str(temp), "DBT_LANCENS_CLASS_ARCHIVE": "off"})

    assert build.returncode == 0, build.output[-4000:]
    assert build.results["numbers"]["status"] == build.results["evens"]["status"] == "success"
    assert check_namespace(project.namespace())[("analytics", "numbers")] == 100
    # the ref was read by the JVM connector, its executor in a JVM of its own (the default path)
    assert check_namespace(project.namespace())[("analytics", "evens")] == 50
    assert _installed_work() == installed_before
    logs = project.path / "logs"
    assert sorted(str(p.relative_to(logs)) for p in logs.rglob("*")) == [
        "dbt.log",
        "spark",
        "spark/spark.log",
    ]
    homes = list(temp.glob("dbt-lancens-spark-home-*"))
    assert len(homes) == 1
    assert f"{homes[0]}/work" in (logs / "spark" / "spark.log").read_text()
    executor_logs = list((homes[0] / "work").glob("app-*/*/stderr"))
    assert len(executor_logs) == 1
    assert "Finished task" in executor_logs[0].read_text()
    # Without the test processes' SPARK_DIST_CLASSPATH: the class path the adapter gives the driver
    # and the executor is the one the connector's tasks run with.
    explain = project.run("run-operation", "explain_plan", "--args", QUERY, env={"SPARK_DIST_CLASSPATH": ""})
    assert explain.returncode == 0, explain.output[-4000:]
    assert "LanceScan[" in explain.output and "(`id` = 3)" in explain.output
