"""Writes and reads with executors in separate processes (``local-cluster``), in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "scripts" / "cluster_write.py"
ROOT = Path(__file__).parents[3]


def _installed_work_dir() -> set[str]:
    """What is in the installed PySpark's `work` directory (where standalone workers write by default)."""
    import pyspark

    work = Path(pyspark.__file__).parent / "work"
    return set(os.listdir(work)) if work.is_dir() else set()


@pytest.mark.cluster
def test_write_and_read_on_local_cluster(table_uri: str, tmp_path: Path) -> None:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    files = tmp_path / "spark-files"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env["TMPDIR"] = str(temp)
    env["DBT_LANCENS_CLASS_ARCHIVE"] = "off"  # that directory has no archive: record none for a dump
    installed_before = _installed_work_dir()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), table_uri, str(files)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["executors"] == 2
    assert facts["count"] == 8000
    assert facts["sum"] == 2 * sum(range(100, 4000))
    assert facts["driver_pid"] not in facts["worker_pids"]
    dataset = lance.dataset(table_uri)
    assert dataset.version == 2
    assert dataset.schema.field("v").type == pa.list_(pa.float32(), 2)
    # Spark's working files stay out of the installed package and out of `files` (a temporary
    # directory that spark.log names), its output off the console.
    assert _installed_work_dir() == installed_before
    assert sorted(os.listdir(files)) == ["spark.log"]
    (home,) = temp.glob("dbt-lancens-spark-home-*")
    assert f"{home}/work" in (files / "spark.log").read_text()
    executor_logs = list((home / "work").glob("app-*/*/stderr"))
    assert len(executor_logs) == 2
    assert "Using Spark's default log4j profile" in (files / "spark.log").read_text()
    assert "log4j" not in done.stderr and "WARN" not in done.stderr
