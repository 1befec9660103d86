"""An invalid alias or schema fails when dbt compiles the project, before Spark starts.

dbt runs in a child process through `dbtRunner`, which then reports whether a Spark JVM was ever
started in that process; nothing may be written under the root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import dbt_env, make_project

RUNNER = """
import json
import sys

from dbt.cli.main import dbtRunner

result = dbtRunner().invoke(sys.argv[1:])
from pyspark import SparkContext

print("LANCENS_TEST_RESULT " + json.dumps({
    "success": result.success,
    "exception": None if result.exception is None else str(result.exception),
    "spark_started": SparkContext._gateway is not None,
}))
"""
GOOD = "select 1 as id"


def _invoke(project_path: Path, *args: str) -> tuple[dict, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUNNER,
            *args,
            "--profiles-dir",
            str(project_path),
            "--project-dir",
            str(project_path),
        ],
        cwd=project_path,
        # `run` starts Spark on a background thread as dbt starts (connections._SPARK_COMMANDS), racing
        # the compile error; a JVM that maps the suite's class archive wins that race, so these
        # processes launch without it, as they did before the suite turned it on, and without the
        # faster-starting JIT of the tests' other dbt processes (helpers.TEST_JVM_OPTIONS)
        env=dbt_env(
            {"DBT_LANCENS_CLASS_ARCHIVE": "off", "SPARK_SUBMIT_OPTS": os.environ.get("SPARK_SUBMIT_OPTS", "")}
        ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    line = next(line for line in output.splitlines() if line.startswith("LANCENS_TEST_RESULT "))
    return json.loads(line.split(" ", 1)[1]), output


@pytest.mark.parametrize(
    ("config", "bad_name", "what"),
    [
        ("{{ config(alias='bad-name') }}", "bad-name", "alias"),
        ("{{ config(schema='my-marts') }}", "my-marts", "schema"),
        ("{{ config(schema='two..dots') }}", "two..dots", "schema"),
    ],
)
def test_invalid_name_fails_before_spark(tmp_path: Path, config: str, bad_name: str, what: str) -> None:
    root = tmp_path / "root"
    project = make_project(tmp_path / "project", str(root), sample=False)
    project.write("models/fine.sql", GOOD)
    project.write("models/misnamed.sql", f"{config}\n{GOOD}")
    for command in ("compile", "run"):
        result, output = _invoke(project.path, command)
        assert result["success"] is False, output[-3000:]
        assert result["spark_started"] is False, output[-3000:]
        message = result["exception"] or ""
        assert "Compilation Error" in output, output[-3000:]
        assert "misnamed" in message and bad_name in message and what in message, message
        assert "Traceback" not in output
    assert not root.exists() or DirectoryNamespace(str(root)).list_objects() == []
