"""dbt itself as a Spark Connect client: the sample project, versions, DDL, atomic publish, debug.

Every dbt command runs in a child process whose profile has `remote` (the session's local server)
and no `master`; the root is a local directory both the server and dbt reach. Where what is checked
is the tables and dbt's results, not the process's own output, the commands are invocations in the
module's one client process (`DbtSession`: dbt's start-up paid once). What is checked is what
a user would see: the tables and versions on disk, read with pylance; dbt's results; and that the
server's token appears in no output, log or artifact.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import lance
import pytest
import yaml

from tests.conftest import free_port
from tests.connect.server import ConnectServer, Relay, start_connect_server
from tests.reliability.helpers import SAMPLE_TABLES, DbtSession, Project, make_project, wait_for


def connect_project(
    directory: Path, server: ConnectServer, *, sample: bool = True, **extra: object
) -> Project:
    return make_project(directory, str(directory / "warehouse"), sample=sample, master=None,
                        extra={"remote": server.url, **extra})  # fmt: skip


def table_versions(project: Project) -> dict[str, int]:
    namespace = project.namespace()
    return {
        ".".join(entry.id): lance.dataset(entry.location).version
        for entry in namespace.list_objects()
        if entry.object_type == "table"
    }


def assert_token_nowhere(project: Project, server: ConnectServer, *outputs: str) -> None:
    """The token is in no dbt output, nor in any file dbt wrote (logs, target/ artifacts)."""
    for output in outputs:
        assert server.token not in output
    for path in [*(project.path / "logs").rglob("*"), *(project.path / "target").rglob("*")]:
        if path.is_file():
            assert server.token.encode() not in path.read_bytes(), path


@pytest.fixture(scope="module")
def dbt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtSession]:
    """The module's dbt client process for the invocations whose output is not what is checked."""
    with DbtSession(tmp_path_factory.mktemp("session")) as session:
        yield session


def _succeeds(dbt: DbtSession, project: Project, *args: str) -> None:
    outcome = dbt.invoke(project.path, *args)
    assert outcome["success"], (args, outcome["exception"], outcome["log"][-5000:])


@pytest.fixture(scope="module")
def sample_built(tmp_path_factory: pytest.TempPathFactory, connect_server: ConnectServer):
    """The sample project built once over Connect: (project, its build's output)."""
    project = connect_project(tmp_path_factory.mktemp("sample-over-connect"), connect_server)
    build = project.run("build", timeout=900)
    assert build.returncode == 0, build.output[-5000:]
    return project, build.output


def test_sample_project_builds_over_connect(sample_built, connect_server: ConnectServer) -> None:
    project, output = sample_built
    results = project.results()
    assert results and all(r["status"] in ("success", "pass") for r in results.values()), results
    assert set(table_versions(project)) == SAMPLE_TABLES
    orders = lance.dataset(project.namespace().describe_table(["analytics", "marts", "orders"]).location)
    raw = lance.dataset(project.namespace().describe_table(["analytics", "raw", "raw_orders"]).location)
    assert orders.count_rows() == raw.count_rows() > 0
    # `documents`' embeddings were computed by the server's Python workers and recorded for LanceDB
    location = project.namespace().describe_table(["analytics", "marts", "documents"]).location
    documents = lance.dataset(location)
    vectors = documents.to_table(columns=["embedding"])["embedding"]
    assert vectors.type.list_size == 384 and vectors.null_count == 0 and len(vectors) == 12
    assert b"lancens-minilm" in documents.schema.metadata[b"embedding_functions"]
    # the dbt process started no JVM of its own: nothing was written to its Spark console log
    assert not (project.path / "logs" / "spark" / "spark.log").exists()
    assert_token_nowhere(project, connect_server, output)


def test_a_second_build_over_connect_is_one_version_further(sample_built, dbt: DbtSession) -> None:
    project, _ = sample_built
    before = table_versions(project)
    _succeeds(dbt, project, "build")
    grown = {name: 2 if name == "analytics.marts.documents" else 1 for name in before}
    assert table_versions(project) == {name: v + grown[name] for name, v in before.items()}


def test_docs_generate_over_connect_lists_every_table(sample_built, connect_server: ConnectServer) -> None:
    project, _ = sample_built
    docs = project.run("docs", "generate", timeout=600)
    assert docs.returncode == 0, docs.output[-5000:]
    catalog = json.loads((project.path / "target" / "catalog.json").read_text())
    names = {node["metadata"]["name"] for node in catalog["nodes"].values()}
    assert {"orders", "customers", "raw_orders", "stg_orders"} <= names
    assert_token_nowhere(project, connect_server, docs.output)


def test_versions_macros_over_connect(sample_built, dbt: DbtSession) -> None:
    project, _ = sample_built
    table = lance.dataset(project.namespace().describe_table(["analytics", "marts", "orders"]).location)
    first = table.versions()[0]["version"]
    rows_then = lance.dataset(table.uri, version=first).count_rows()
    _succeeds(
        dbt, project, "run-operation", "lancens.restore_table",
        "--args", json.dumps({"relation": "analytics.marts.orders", "version": first}),
    )  # fmt: skip
    restored = lance.dataset(table.uri)
    assert restored.version == table.version + 1
    assert restored.count_rows() == rows_then


def test_ddl_dml_and_schema_change_over_connect(
    tmp_path: Path, connect_server: ConnectServer, dbt: DbtSession
) -> None:
    """Statements the adapter applies itself (no JVM parser on a client): CTAS, UPDATE and DELETE in
    hooks, and an incremental model's added and dropped columns."""
    project = connect_project(tmp_path / "p", connect_server, sample=False)
    project.write(
        "models/events.sql",
        "{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}\n"
        "select id, 'a' as kind from range(4)",
    )
    project.write(
        "models/scratch.sql",
        "{{ config(post_hook=[\n"
        '  "create or replace table {{ this.schema }}.copied using lance as"\n'
        '  " select id * 10 as id from {{ this }}",\n'
        '  "update {{ this.schema }}.copied set id = id + 1 where id >= 20",\n'
        '  "delete from {{ this.schema }}.copied where id = 0"]) }}\n'
        "select id from range(3)",
    )
    _succeeds(dbt, project, "run")
    namespace = project.namespace()
    copied = lance.dataset(namespace.describe_table(["analytics", "copied"]).location)
    assert sorted(copied.to_table()["id"].to_pylist()) == [10, 21]
    project.write(
        "models/events.sql",
        "{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}\n"
        "select id + 4 as id, 1.5 as score from range(2)",
    )
    _succeeds(dbt, project, "run", "--select", "events")
    events = lance.dataset(namespace.describe_table(["analytics", "events"]).location).to_table()
    assert events.column_names == ["id", "score"]
    assert sorted(events["id"].to_pylist()) == [0, 1, 2, 3, 4, 5]


def test_incremental_merge_with_predicates_over_connect(
    tmp_path: Path, connect_server: ConnectServer, dbt: DbtSession
) -> None:
    """The merge that joins result and table on the server, then deletes the matched rows by their
    Lance address: a key's row the predicates exclude stays, an excluded column keeps its value."""
    project = connect_project(tmp_path / "p", connect_server, sample=False)
    model = (
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',\n"
        "          incremental_predicates=[\"DBT_INTERNAL_DEST.part = 'new'\"],\n"
        "          merge_exclude_columns=['note']) }}\n"
    )
    project.write(
        "models/items.sql",
        model + "select 1 as id, part, 'v1' as value, 'first' as note from values ('old'), ('new') t(part)",
    )
    _succeeds(dbt, project, "run")
    project.write(
        "models/items.sql", model + "select 1 as id, 'new' as part, 'v2' as value, 'second' as note"
    )
    _succeeds(dbt, project, "run")
    namespace = project.namespace()
    items = lance.dataset(namespace.describe_table(["analytics", "items"]).location)
    assert sorted(items.to_table().to_pylist(), key=lambda row: row["part"]) == [
        {"id": 1, "part": "new", "value": "v2", "note": "first"},
        {"id": 1, "part": "old", "value": "v1", "note": "first"},
    ]
    assert items.version == 2


def test_atomic_publish_over_connect(tmp_path: Path, connect_server: ConnectServer, dbt: DbtSession) -> None:
    project = connect_project(tmp_path / "p", connect_server, sample=False, atomic_publish=True)
    settings = yaml.safe_load((project.path / "dbt_project.yml").read_text())
    settings["on-run-start"] = ["{{ lancens_begin_atomic_publish() }}"]
    settings["on-run-end"] = ["{{ lancens_end_atomic_publish(results) }}"]
    project.write("dbt_project.yml", yaml.safe_dump(settings))
    project.write("models/a.sql", "select id from range(3)")
    project.write("models/b.sql", "select id from {{ ref('a') }} where id > 0")
    _succeeds(dbt, project, "run")
    namespace = project.namespace()
    b = lance.dataset(namespace.describe_table(["analytics", "b"]).location)
    assert sorted(b.to_table()["id"].to_pylist()) == [1, 2]  # b read a's staged version
    project.write("models/b.sql", "select id, missing_column from {{ ref('a') }}")
    assert not dbt.invoke(project.path, "run")["success"]
    assert lance.dataset(namespace.describe_table(["analytics", "a"]).location).version == 1  # unpublished


def test_debug_names_the_server_and_the_lance_source(tmp_path: Path, connect_server: ConnectServer) -> None:
    project = connect_project(tmp_path / "p", connect_server, sample=False)
    debug = project.run("debug")
    assert debug.returncode == 0, debug.output[-5000:]
    assert f"Spark Connect server sc://localhost:{connect_server.port}/;token=****" in debug.output
    assert "lance data source on the Spark Connect server: usable" in debug.output
    assert_token_nowhere(project, connect_server, debug.output)


def test_debug_against_a_server_without_the_package(
    tmp_path: Path, bare_connect_server: ConnectServer
) -> None:
    project = connect_project(tmp_path / "p", bare_connect_server, sample=False)
    debug = project.run("debug")
    assert debug.returncode != 0
    assert "cannot import dbt-lancens" in debug.output and "PYSPARK_PYTHON" in debug.output
    assert_token_nowhere(project, bare_connect_server, debug.output)
    project.write("models/a.sql", "select 1 as id")
    run = project.run("run")
    assert run.returncode != 0 and "cannot import dbt-lancens" in run.output
    assert not (project.path / "warehouse" / "analytics").exists()


def test_master_and_remote_together_are_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", str(tmp_path / "warehouse"), sample=False,
                           extra={"remote": "sc://localhost:1/;token=secret-token-value"})  # fmt: skip
    profile = yaml.safe_load((project.path / "profiles.yml").read_text())
    assert profile["jaffle_lance"]["outputs"]["t"]["master"]  # both keys are set
    debug = project.run("debug")
    assert debug.returncode != 0
    assert "`master` and `remote` are both set" in debug.output
    assert "secret-token-value" not in debug.output


def test_an_unreachable_server_fails_the_run_naming_it(tmp_path: Path) -> None:
    """A mistyped host or port: PySpark would retry for ten minutes or more while `dbt run` hung
    silently; the first contact gives up after a few seconds and names the server (no token)."""
    port = free_port()
    url = f"sc://127.0.0.1:{port}/;token=secret-token-value"
    project = make_project(tmp_path / "p", str(tmp_path / "warehouse"), sample=False, master=None,
                           extra={"remote": url})  # fmt: skip
    project.write("models/a.sql", "select 1 as id")
    run = project.run("run", timeout=240)  # TimeoutExpired: the hang this test is about
    assert run.returncode != 0
    assert f"could not use the Spark Connect server sc://127.0.0.1:{port}" in run.output
    assert "secret-token-value" not in run.output
    debug = project.run("debug", timeout=240)
    assert debug.returncode != 0 and "master: local" not in debug.output


PAUSE = """
{% macro pause_here() -%}
  {#-- creates `<markers>/pause-<uuid>` in the server's Spark task, then sleeps there 60 s --#}
  length(concat(
    java_method('org.apache.spark.util.Utils', 'createDirectory', '{{ var("markers") }}', 'pause'),
    java_method('java.lang.Thread', 'sleep', cast(60000 as bigint)))) > 0
{%- endmacro %}
"""


def test_a_restarted_server_fails_the_run_naming_it(tmp_path: Path, connect_server: ConnectServer) -> None:
    """The server restarts under a running `dbt run`: the session on it is gone, and every model
    that meets that says so, naming the server (no token), instead of PySpark's NO_ACTIVE_SESSION.

    dbt's address is a relay to a first server, started for this test with the token of the
    worker's server; that one (running already, the same token) is the second: the first is
    stopped and the relay switched to it, so dbt's first retries meet it (a second server started
    after the stop, on the first one's port, came up while dbt backed off, a minute later)."""
    token = connect_server.token
    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "first").mkdir()
    with Relay() as relay:
        with start_connect_server(tmp_path / "first", sys.executable, token=token) as first:
            relay.switch(first.port)
            server = ConnectServer(port=relay.port, token=token, log=first.log)
            project = connect_project(tmp_path / "p", server, sample=False)
            project.write("macros/pause_here.sql", PAUSE)
            project.write("models/a_paused.sql", "select 1 as id where {{ pause_here() }}")
            project.write("models/b_after.sql", "select 2 as id")
            run = project.start("run", "--threads", "1", "--vars", json.dumps({"markers": str(markers)}))
            wait_for(lambda: any(markers.iterdir()), "the first model's query on the server", process=run)
            relay.switch(connect_server.port)
        # the first server is stopped: the query's stream to it ended, dbt's retries reach the second
        assert run.wait(timeout=600) != 0
    output = (project.path / "dbt.out").read_text()
    shown = f"sc://localhost:{relay.port}"  # the address dbt knows: the relay's
    assert f"lost its session on the Spark Connect server {shown}" in output, output[-4000:]
    assert "NO_ACTIVE_SESSION" not in output and token not in output
