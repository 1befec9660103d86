"""A `dbt run` SIGKILLed in the middle of a version commit (table version management on).

The engine's pause hook (LANCENS_PAUSE_AT_STEP, README "Table versions and commits") blocks the
committing process at a step; the test then kills the whole process group (dbt, its JVM and the
Spark worker doing the commit) with SIGKILL. Killed after the row insert, the version is committed:
the next reader finishes it and sees the new rows. Killed before, the version never existed: readers
keep the old one. Either way the next dbt run builds on top with nothing lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lance
import pytest
import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import dbt_env

MODEL = (
    "{{ config(materialized='table') }} select id from (select explode(sequence(1, {{ var('n') }})) as id)"
)
TABLE = ["crash", "numbers"]


def _project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "root"
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "models" / "numbers.sql").write_text(MODEL)
    (project / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "crash", "version": "1.0", "config-version": 2, "profile": "crash"})
    )
    target = {
        "type": "lancens",
        "root": str(root),
        "schema": "crash",
        "master": "local[1]",
        "threads": 1,
        "table_version_management": True,
    }
    (project / "profiles.yml").write_text(
        yaml.safe_dump({"crash": {"target": "t", "outputs": {"t": target}}})
    )
    return project, str(root)


def _dbt(project: Path, n: int) -> None:
    args = ["run", "--vars", f"{{n: {n}}}", "--project-dir", str(project), "--profiles-dir", str(project)]
    result = dbtRunner().invoke(args)
    assert result.success, result.exception


def _ids(location: str, version: int | None = None) -> list[int]:
    return sorted(lance.dataset(location, version=version).to_table().column("id").to_pylist())


@pytest.mark.parametrize("step", ["staged", "row_inserted"])
def test_killed_commit_is_recovered(tmp_path: Path, step: str) -> None:
    project, root = _project(tmp_path)
    _dbt(project, 2)
    ns = DirectoryNamespace(root)
    location = ns.describe_table(TABLE).location
    assert ns.describe_namespace([]).properties["table_version_management"] == "true"

    markers = tmp_path / "markers"
    markers.mkdir()
    env = dbt_env({"LANCENS_PAUSE_AT_STEP": f"{step}:{markers}"})
    command = [sys.executable, "-m", "dbt.cli.main", "run", "--vars", "{n: 5}"]
    command += ["--project-dir", str(project), "--profiles-dir", str(project)]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        while not (markers / step).exists():
            assert process.poll() is None, "dbt finished without reaching the pause point"
            assert time.monotonic() < deadline, f"{step} never reached"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # dbt, its JVM and the paused commit worker
        process.wait()

    if step == "row_inserted":
        assert lance.dataset(location).version == 1  # a plain reader: no final manifest yet
        assert ns.describe_table(TABLE).version == 2  # a namespace reader finishes the version
        assert lance.dataset(location).version == 2
        assert _ids(location) == [1, 2, 3, 4, 5]
        assert ns.describe_table_version(TABLE, 2).metadata["dbt_model"] == "model.crash.numbers"
    else:
        assert ns.describe_table(TABLE).version == 1  # the version never existed
        assert _ids(location) == [1, 2]

    _dbt(project, 7)
    latest = ns.describe_table(TABLE).version
    assert latest == (3 if step == "row_inserted" else 2)
    assert _ids(location) == list(range(1, 8))
    assert _ids(location, 1) == [1, 2]  # history intact
    assert [v.version for v in ns.list_table_versions(TABLE).items] == list(range(1, latest + 1))
