"""The JVM connector on a Spark Connect server (docs/spark-connect.md): with the connector's jars on
the server's class path and `connector_jars_on_nodes: true` in the profile, dbt's models read their
refs through it (the server's plan shows the connector's scan) and `dbt debug` says so; a server
without the jars falls back to the Python data source under `auto` and fails naming it under `jvm`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import lance
import pytest

from tests.connect.server import ConnectServer, start_connect_server
from tests.connect.test_dbt_over_connect import assert_token_nowhere, connect_project
from tests.reliability.helpers import Project
from tests.reliability.test_connector_fallback import EXPLAIN_MACRO

QUERY = "{sql: 'select id from analytics.numbers where id = 3'}"


@pytest.fixture(scope="module")
def jarless_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A server whose workers run dbt-lancens but whose JVM has none of the connector's jars."""
    workdir = tmp_path_factory.mktemp("jarless-connect-server")
    with start_connect_server(workdir, python=sys.executable, connector_jars=False) as server:
        yield server


def _project(directory: Path, server: ConnectServer, **profile: object) -> Project:
    project = connect_project(directory, server, sample=False, connector_jars_on_nodes=True, **profile)
    project.write("models/numbers.sql", "select id, id * 2 as doubled from range(100)")
    project.write("models/evens.sql", "select id from {{ ref('numbers') }} where doubled % 4 = 0")
    project.write("macros/explain_plan.sql", EXPLAIN_MACRO)
    return project


def _evens(project: Project) -> list[int]:
    location = project.namespace().describe_table(["analytics", "evens"]).location
    return sorted(lance.dataset(location).to_table().column("id").to_pylist())


def test_models_read_through_the_connector_on_the_server(
    tmp_path: Path, connect_server: ConnectServer
) -> None:
    project = _project(tmp_path / "p", connect_server)
    run = project.run("run", timeout=900)
    assert run.returncode == 0, run.output[-5000:]
    assert _evens(project) == list(range(0, 100, 2))
    # Connect has no py4j gateway to start the JVM writer through: the models are written by Python
    logged = (project.path / "logs" / "dbt.log").read_text()
    assert (
        "written through the Python writer, not the JVM connector's: the session is a Spark Connect" in logged
    )
    explain = project.run("run-operation", "explain_plan", "--args", QUERY)
    assert explain.returncode == 0, explain.output[-5000:]
    assert "LanceScan[" in explain.output and "(`id` = 3)" in explain.output
    debug = project.run("debug")
    assert debug.returncode == 0, debug.output[-5000:]
    assert "lancens spark_connector: jvm (requested auto: connector_jars_on_nodes" in debug.output
    assert_token_nowhere(project, connect_server, run.output, explain.output, debug.output)


def test_a_server_without_the_jars_falls_back_under_auto(
    tmp_path: Path, jarless_server: ConnectServer
) -> None:
    project = _project(tmp_path / "p", jarless_server)
    run = project.run("run", timeout=900)
    assert run.returncode == 0, run.output[-5000:]
    assert _evens(project) == list(range(0, 100, 2))
    explain = project.run("run-operation", "explain_plan", "--args", QUERY)
    assert explain.returncode == 0, explain.output[-5000:]
    assert "PLAN" in explain.output and "LanceScan[" not in explain.output
    debug = project.run("debug")
    assert (
        "lancens spark_connector: python (requested auto: the Spark Connect server cannot load"
        in debug.output
    )
    assert_token_nowhere(project, jarless_server, run.output, debug.output)


def test_a_server_without_the_jars_fails_under_jvm(tmp_path: Path, jarless_server: ConnectServer) -> None:
    project = _project(tmp_path / "p", jarless_server, spark_connector="jvm")
    debug = project.run("debug")
    assert debug.returncode != 0
    assert "asks for spark_connector: jvm, but the Spark Connect server cannot load" in debug.output
    assert_token_nowhere(project, jarless_server, debug.output)
