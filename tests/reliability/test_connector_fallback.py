"""The reader choice in real dbt processes (docs/jvm-connector.md): a Spark whose class path lacks
the connector's jars (`connector_jars_on_nodes: true` tells the adapter the nodes have them, and
here they do not) falls back to the Python data source under `auto`, saying so in the log and in
`dbt debug`, and fails naming what is missing under `jvm`. The default `auto` reading through the
connector, executors included, is tests/reliability/test_cluster.py's."""

from __future__ import annotations

from pathlib import Path

import lance

from tests.reliability.helpers import Project, make_project

# The plan of a query, in dbt's log (`PLAN ...`): which source Spark scans.
EXPLAIN_MACRO = """
{% macro explain_plan(sql) %}
  {% do run_query(sql) %}
  {% set result = run_query("explain " ~ sql) %}
  {{ log("PLAN " ~ result.columns[0].values()[0], info=True) }}
{% endmacro %}
"""


def explained_project(directory: Path, **profile: object) -> Project:
    project = make_project(directory, str(directory / "root"), sample=False, extra=profile)
    project.write("models/numbers.sql", "select id, id * 2 as doubled from range(100)")
    project.write("models/evens.sql", "select id from {{ ref('numbers') }} where doubled % 4 = 0")
    project.write("macros/explain_plan.sql", EXPLAIN_MACRO)
    return project


def _explain(project: Project, env: dict[str, str] | None = None) -> str:
    done = project.run(
        "run-operation",
        "explain_plan",
        "--args",
        "{sql: 'select id from analytics.numbers where id = 3'}",
        env=env,
    )
    assert done.returncode == 0, done.output[-4000:]
    return done.output


def _without_jars() -> dict[str, str]:
    """The environment of a Spark whose class path has none of the connector's jars (the test
    processes put them on every JVM through SPARK_DIST_CLASSPATH, tests/conftest.py)."""
    return {"SPARK_DIST_CLASSPATH": ""}


def test_a_spark_without_the_jars_falls_back_under_auto(tmp_path: Path) -> None:
    project = explained_project(tmp_path / "p", connector_jars_on_nodes=True)
    run = project.run("run", env=_without_jars())
    assert run.returncode == 0, run.output[-4000:]
    assert "Spark reads Lance through the Python data source: the driver JVM cannot load" in run.output
    evens = lance.dataset(project.namespace().describe_table(["analytics", "evens"]).location)
    assert sorted(evens.to_table().column("id").to_pylist()) == list(range(0, 100, 2))
    plan = _explain(project, _without_jars())
    assert "PLAN" in plan and "LanceScan[" not in plan
    debug = project.run("debug", env=_without_jars())
    assert debug.returncode == 0, debug.output[-4000:]
    assert "lancens spark_connector: python (requested auto: the driver JVM cannot load" in debug.output


def test_a_spark_without_the_jars_fails_under_jvm(tmp_path: Path) -> None:
    project = explained_project(tmp_path / "p", connector_jars_on_nodes=True, spark_connector="jvm")
    debug = project.run("debug", env=_without_jars())
    assert debug.returncode != 0
    assert "asks for spark_connector: jvm, but the driver JVM cannot load" in debug.output
    run = project.run("run", env=_without_jars())
    assert run.returncode != 0
    assert "asks for spark_connector: jvm, but the driver JVM cannot load" in run.output
    assert not [entry for entry in project.namespace().list_objects() if entry.object_type == "table"]


def test_jars_on_the_nodes_are_used_as_they_are(tmp_path: Path) -> None:
    """`connector_jars_on_nodes: true` with the jars on the Spark's own class path: the JVM path,
    and the adapter adds no class path of its own."""
    project = explained_project(tmp_path / "p", connector_jars_on_nodes=True)
    run = project.run("run")  # SPARK_DIST_CLASSPATH (tests/conftest.py) is the nodes' class path
    assert run.returncode == 0, run.output[-4000:]
    assert "LanceScan[" in _explain(project)
    debug = project.run("debug")
    assert "lancens spark_connector: jvm (requested auto: connector_jars_on_nodes" in debug.output
