"""Cleanup never touches what the namespace registers, repairs what an older cleanup broke, and
sweeps what a killed atomic-publish run left. Real `dbt` processes, real Lance files,
local roots and moto's S3 server.

1. A root with a table with an index (a tagged older version with its own index), two views, a
   nested namespace and a `dbt clone` in another namespace: after one cleanup has removed the old
   untagged versions, every cleanup (`cleanup_namespace`, `cleanup_table_versions` of each table,
   `repair_namespace`, a model's `lance_maintenance`) with grace 0 leaves every file of every
   registered object's directory (`.lance-reserved` markers included) byte for byte as it was.
2. A view's reserved directory deleted, as the old cleanup did: `repair_namespace` (and the next
   `cleanup_namespace`) put it back, and a model reading the view still builds.
3. An atomic-publish run SIGKILLed after it built an index on its staged rows: `cleanup_namespace`
   with grace 0 removes its `_indices/` directories and data files; the table's published indexes
   stay and answer.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import lance
import pytest
import yaml

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.layout import INDICES_DIR, MARKER_CONTENT, RESERVED_MARKER
from tests.reliability.helpers import DbtSession, Project, check_namespace, kill_group, make_project, wait_for

SCHEMA = "ops.live"
EVENTS = """
{{ config(materialized='table', indexes=[{'columns': ['id'], 'type': 'btree'}]) }}
select id, id % 7 as k from range({{ var('n', 20) }})
"""
VIEW_A = "{{ config(materialized='view') }} select id from {{ ref('events') }} where k = 1"
VIEW_B = "{{ config(materialized='view') }} select k, count(*) as n from {{ ref('events') }} group by k"
NESTED = "{{ config(materialized='table', schema='deep') }} select id from {{ ref('events') }} where id < 5"
MAINTAINED = """
{{ config(materialized='table', lance_maintenance={'retain_versions': 1, 'older_than_days': 0}) }}
select id from range(3)
"""
READS_VIEW = "{{ config(materialized='table') }} select * from {{ ref('v_a') }}"
# runs after `events` (staged with its index): its one row with id = 1 creates a marker directory in
# the Spark task, then sleeps there for an hour
SLOW = """
{{ config(materialized='table') }}
select id from {{ ref('events') }}
{% if var('hang', 'no') == 'yes' %} where (case when id = 1 then concat(
    java_method('org.apache.spark.util.Utils', 'createDirectory', '{{ var("markers") }}', 'slow'),
    java_method('java.lang.Thread', 'sleep', cast(3600000 as bigint))) end) is null {% endif %}
"""
# every cleanup path in one dbt process
CLEAN_ALL = """
{% macro clean_all(tables, grace_hours) %}
  {%- do repair_namespace() -%}
  {%- do cleanup_namespace(retain_versions=1, older_than_days=0, grace_hours=grace_hours,
                           allow_short_grace=true) -%}
  {%- for table in tables -%}
    {%- do cleanup_table_versions(table, 1, 0, grace_hours, allow_short_grace=true) -%}
  {%- endfor -%}
{% endmacro %}
"""
CLEANUP_NOW = [
    "run-operation",
    "lancens.cleanup_namespace",
    "--args",
    "{grace_hours: 0, allow_short_grace: true}",
]
TABLES = [f"{SCHEMA}.events", f"{SCHEMA}.maintained", f"{SCHEMA}.deep.nested", "ops.dev.events"]


def _project(directory: Path, root: str, options: dict[str, str] | None = None, **extra: object) -> Project:
    project = make_project(directory, root, options, sample=False, threads=1, schema=SCHEMA, extra=extra)
    models = {"events": EVENTS, "v_a": VIEW_A, "v_b": VIEW_B, "nested": NESTED, "maintained": MAINTAINED}
    for name, sql in models.items():
        project.write(f"models/{name}.sql", sql)
    project.write("macros/clean_all.sql", CLEAN_ALL)
    return project


def _rows(ns: DirectoryNamespace) -> dict[str, str | None]:
    """object id -> location of every `__manifest` row, read with plain Lance, not the engine."""
    manifest = lance.dataset(ns.storage.join("__manifest"), storage_options=ns.storage_options or None)
    table = manifest.to_table(columns=["object_id", "location"])
    return dict(zip(table.column("object_id").to_pylist(), table.column("location").to_pylist(), strict=True))


def _directory(ns: DirectoryNamespace, location: str) -> str:
    return location if "://" in location or location.startswith("/") else ns.storage.join(location)


def registered_files(ns: DirectoryNamespace) -> dict[str, str]:
    """SHA-256 of every file in the directory of every `__manifest` row with a location (tables,
    declared tables, views), keyed `<object id>/<path in its directory>`."""
    hashes: dict[str, str] = {}
    for object_id, location in _rows(ns).items():
        if location is None:
            continue
        files = ns.storage.files(_directory(ns, location))
        assert files, f"{object_id}: its directory {location} is empty or gone"
        for relative, info in files.items():
            content = ns.storage.read_bytes(info["name"])
            hashes[f"{object_id}/{relative}"] = hashlib.sha256(content).hexdigest()
    return hashes


def _view_directory(ns: DirectoryNamespace, view: str) -> str:
    location = _rows(ns)[f"{SCHEMA.replace('.', '$')}${view}"]
    assert location is not None
    return _directory(ns, location)


def _build_everything_and_clean(dbt: DbtSession, *projects: Project) -> None:
    """Every kind of object, old versions to clean, a tagged version with its own index, a clone;
    then one cleanup of every kind with a 24 h grace, which removes the old untagged versions and
    spares every young file. In the test's one dbt process, every project (each root) in turn:
    what is checked is the files, not a JVM per step."""
    plan: list[list[str]] = []
    for project in projects:
        profiles = yaml.safe_load((project.path / "profiles.yml").read_text())
        outputs = profiles["jaffle_lance"]["outputs"]
        outputs["dev"] = {**outputs["t"], "schema": "ops.dev"}
        (project.path / "profiles.yml").write_text(yaml.safe_dump(profiles))
        state = str(project.path / "state")
        steps = [
            ["run", "--vars", "{n: 10}"],
            ["run-operation", "lancens.create_tag", "--args", f"{{relation: {SCHEMA}.events, tag: keep}}"],
            # new rows, a new index; the tagged version keeps its own
            ["run", "--select", "events", "--target-path", state],
            ["clone", "--state", state, "--target", "dev", "--select", "events"],
            ["run-operation", "clean_all", "--args", json.dumps({"tables": TABLES, "grace_hours": 24})],
        ]
        plan += [[str(project.path), *step] for step in steps]
    dbt.succeed(plan)


def _index_dirs(ns: DirectoryNamespace, location: str) -> set[str]:
    return {
        entry["name"].rstrip("/").rsplit("/", 1)[-1] for entry in ns.storage.ls(f"{location}/{INDICES_DIR}")
    }


def test_every_cleanup_leaves_registered_objects_byte_for_byte(s3_server, tmp_path: Path) -> None:
    """On a local root and on S3 side by side: one dbt process (a session) serves both roots in turn,
    for every step; the test reads the files between its steps (it was a test per store, each
    paying for three dbt processes, then three processes for both). Nothing but the session writes
    the roots, so its warm catalog changes nothing that is checked."""
    projects = {
        "local": _project(tmp_path / "local", str(tmp_path / "root")),
        "s3": _project(
            tmp_path / "s3", s3_server.uri(f"registered/{tmp_path.name}"), s3_server.storage_options
        ),
    }
    with DbtSession(tmp_path) as dbt:
        _check_every_cleanup(dbt, projects)


def _check_every_cleanup(dbt: DbtSession, projects: dict[str, Project]) -> None:
    _build_everything_and_clean(dbt, *projects.values())
    namespaces = {store: project.namespace() for store, project in projects.items()}
    events, before, indexes = {}, {}, {}
    for store, ns in namespaces.items():
        events[store] = ns.describe_table(["ops", "live", "events"]).location
        tagged = lance.dataset(events[store], version="keep", storage_options=ns.storage_options or None)
        assert tagged.describe_indices() and ns.describe_table(["ops", "live", "deep", "nested"]).version, (
            store
        )
        before[store] = registered_files(ns)
        for view in ("v_a", "v_b"):
            marker = f"{_view_directory(ns, view)}/{RESERVED_MARKER}"
            assert ns.storage.read_bytes(marker) == MARKER_CONTENT, (store, view)
        indexes[store] = _index_dirs(ns, events[store])
        assert len(indexes[store]) >= 2, store  # the latest version's and the tagged version's

    clean = ["run-operation", "clean_all", "--args", json.dumps({"tables": TABLES, "grace_hours": 0})]
    cleaned = dbt.succeed([[str(project.path), *clean] for project in projects.values()])
    for (store, ns), outcome in zip(namespaces.items(), cleaned, strict=True):
        assert "repaired" not in outcome["log"], (store, outcome["log"])
        assert registered_files(ns) == before[store], store
        assert _index_dirs(ns, events[store]) == indexes[store], store
        keep = lance.dataset(events[store], version="keep", storage_options=ns.storage_options or None)
        assert keep.to_table(filter="id = 3").num_rows == 1, store

    # a model's lance_maintenance (its own table's cleanup after the build) touches nothing else
    dbt.succeed([[str(project.path), "run", "--select", "maintained"] for project in projects.values()])
    for store, ns in namespaces.items():
        others = {k: v for k, v in before[store].items() if not k.startswith("ops$live$maintained/")}
        after = {k: v for k, v in registered_files(ns).items() if not k.startswith("ops$live$maintained/")}
        assert after == others, store
        counts = check_namespace(ns)
        assert counts[("ops", "dev", "events")] == counts[("ops", "live", "events")] == 20, store


def test_repair_restores_a_view_directory_an_old_cleanup_deleted(
    tmp_path: Path, setup_dbt: DbtSession
) -> None:
    """The views are built by the worker's setup process; another one (a session) repairs, cleans
    and reads the view, with the test deleting directories between its steps: it is the process
    that has not registered the views in its catalog yet, as a user's next run."""
    project = _project(tmp_path / "proj", str(tmp_path / "root"))
    project.write("models/reads_view.sql", READS_VIEW)
    setup_dbt.succeed([[str(project.path), "run", "--exclude", "reads_view"]])
    ns = project.namespace()
    before = registered_files(ns)
    for view in ("v_a", "v_b"):  # what the old cleanup_namespace did to every view
        shutil.rmtree(_view_directory(ns, view))
    with pytest.raises(AssertionError, match="empty or gone"):
        registered_files(ns)

    repair = [str(project.path), "run-operation", "lancens.repair_namespace"]
    with DbtSession(tmp_path) as dbt:
        first, second = dbt.succeed([repair, repair])
        assert first["log"].count("repaired") == 2, first["log"]
        assert "repaired" not in second["log"]  # nothing left to repair
        assert registered_files(ns) == before

        shutil.rmtree(_view_directory(ns, "v_b"))  # the next cleanup repairs by itself
        cleaned, _ = dbt.succeed(
            [
                [str(project.path), *CLEANUP_NOW],
                [str(project.path), "run", "--select", "reads_view"],  # the view still answers
            ]
        )
    assert "repaired" in cleaned["log"] and "  leftover " not in cleaned["log"], cleaned["log"]
    assert {k: v for k, v in registered_files(ns).items() if k in before} == before
    table = lance.dataset(ns.describe_table(["ops", "live", "reads_view"]).location).to_table()
    assert sorted(table.column("id").to_pylist()) == [1, 8, 15]
    check_namespace(ns)


def _atomic(project: Project) -> None:
    config = yaml.safe_load((project.path / "dbt_project.yml").read_text())
    config["on-run-start"] = ["{{ lancens_begin_atomic_publish() }}"]
    config["on-run-end"] = ["{{ lancens_end_atomic_publish(results) }}"]
    (project.path / "dbt_project.yml").write_text(yaml.safe_dump(config))


def test_cleanup_sweeps_what_a_killed_atomic_run_left(tmp_path: Path, setup_dbt: DbtSession) -> None:
    project = _project(tmp_path / "proj", str(tmp_path / "root"), atomic_publish=True)
    project.remove("models/maintained.sql")
    project.write("models/slow.sql", SLOW)
    _atomic(project)
    setup_dbt.succeed([[str(project.path), "run"]])
    ns = project.namespace()
    events = ns.describe_table(["ops", "live", "events"]).location
    published = _index_dirs(ns, events)
    assert published
    data_before = set(ns.storage.files(f"{events}/data"))

    markers = tmp_path / "markers"
    markers.mkdir()
    process = project.start("run", "--vars", json.dumps({"n": 40, "hang": "yes", "markers": str(markers)}))
    try:  # events staged with its new index, `slow` inside its query
        wait_for(lambda: any(markers.iterdir()), "slow's query", process=process)
    finally:
        kill_group(process)
    leftovers = _index_dirs(ns, events) - published
    assert leftovers

    # one process started after the kill cleans up, then runs again, with the checks in between
    with DbtSession(tmp_path) as dbt:
        (cleaned,) = dbt.succeed([[str(project.path), *CLEANUP_NOW]])
        assert "  leftover " in cleaned["log"], cleaned["log"]
        assert _index_dirs(ns, events) == published
        assert set(ns.storage.files(f"{events}/data")) == data_before
        dataset = lance.dataset(events)
        assert {index.name for index in dataset.describe_indices()} == {"id_btree"}
        assert "ScalarIndexQuery" in dataset.scanner(filter="id = 3").explain_plan()
        assert dataset.to_table(filter="id = 3").num_rows == 1
        manifest = lance.dataset(ns.storage.join("__manifest"))
        used = {segment.uuid for index in manifest.describe_indices() for segment in index.segments}
        assert _index_dirs(ns, ns.storage.join("__manifest")) <= used
        check_namespace(ns)
        # the next run publishes as if nothing happened
        dbt.succeed([[str(project.path), "run", "--vars", "{n: 40}"]])
    assert lance.dataset(events).count_rows() == 40
