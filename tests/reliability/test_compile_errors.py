"""An invalid alias or schema fails when dbt compiles the project, before Spark starts.

dbt runs in a child process through `dbtRunner` (`compile`, then `run`, in the same process: a
process each paid dbt's start-up twice), which reports after each command whether a Spark JVM was
ever started in that process; nothing may be written under the root.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import dbt_env, make_project

# argv: a JSON list of dbt commands (argument lists), run in order; one result line after each.
RUNNER = """
import json
import sys

from dbt.cli.main import dbtRunner
from pyspark import SparkContext

for args in json.loads(sys.argv[1]):
    print("LANCENS_TEST_START", flush=True)
    result = dbtRunner().invoke(args)
    print("LANCENS_TEST_RESULT " + json.dumps({
        "success": result.success,
        "exception": None if result.exception is None else str(result.exception),
        "spark_started": SparkContext._gateway is not None,
    }), flush=True)
"""
GOOD = "select 1 as id"


def _invoke(project_path: Path, *commands: str) -> tuple[list[tuple[dict, str]], str]:
    """Each of `commands` (`compile`, `run`, ...) in one child process, in order: (its result, what
    it printed) for each, and the whole output of the process (stdout and stderr)."""
    options = ["--profiles-dir", str(project_path), "--project-dir", str(project_path)]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps([[command, *options] for command in commands])],
        cwd=project_path,
        env=dbt_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    results: list[tuple[dict, str]] = []
    for segment in done.stdout.split("LANCENS_TEST_START\n")[1:]:
        printed, _, line = segment.rpartition("LANCENS_TEST_RESULT ")
        results.append((json.loads(line.splitlines()[0]), printed))
    assert len(results) == len(commands), output[-3000:]
    return results, output


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
    results, output = _invoke(project.path, "compile", "run")
    for result, printed in results:
        assert result["success"] is False, output[-3000:]
        assert result["spark_started"] is False, output[-3000:]
        message = result["exception"] or ""
        assert "Compilation Error" in printed, output[-3000:]
        assert "misnamed" in message and bad_name in message and what in message, message
    assert "Traceback" not in output
    assert not root.exists() or DirectoryNamespace(str(root)).list_objects() == []
