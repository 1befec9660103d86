"""SIGKILL a real `dbt build` in the middle of an incremental MERGE and of a SNAPSHOT.

One project holds an incremental model (`merge` on `id`) and a snapshot (`check` strategy on
`payload`); a first build creates both. The second build (ids 50..149 with a new payload, over
0..99) is killed twice, then re-run:

1. While the merge's source query and the snapshot's staging query run in Spark (default,
   file-based commits): one row of each query calls `java.lang.Thread.sleep` after creating a
   marker directory (`java_method`, evaluated in the Spark task). The kill lands when both markers
   exist, i.e. both nodes are inside their materialization's query. Nothing was written yet, and
   not one byte under the root changes.
2. With the merge's and the snapshot's data files written and their new manifests staged, right
   before the commit (table version management on; the engine's `LANCENS_PAUSE_AT_STEP=staged`
   hook holds both commits just before their `__manifest` row insert). The kill lands when both
   tables have new data files and a staged manifest on disk: the versions never existed.

After each kill the namespace lists, every table opens at the version it had, with its rows, and no
key is doubled. The re-run merges and snapshots as if nothing had happened, one version further.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import lance
import pyarrow as pa

from tests.reliability.helpers import (
    DbtSession,
    Project,
    check_namespace,
    kill_group,
    make_project,
    tree,
    wait_for,
)

HANG_MACRO = """
{#-- true for every row; with var hang=yes the row matching `condition` creates a directory
     `<markers>/<name>-<uuid>` and then sleeps for an hour inside its Spark task. --#}
{% macro hang_on(condition, name) -%}
  {#-- Spark's own Utils.createDirectory(root, prefix): a static method with string arguments,
       which java_method can call. --#}
  {%- if var('hang', 'no') == 'yes' -%}
  (case when {{ condition }} then concat(
      java_method('org.apache.spark.util.Utils', 'createDirectory', '{{ var("markers") }}', '{{ name }}'),
      java_method('java.lang.Thread', 'sleep', cast(3600000 as bigint))) end) is null
  {%- else -%}
  true
  {%- endif -%}
{%- endmacro %}
"""
MERGED = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, 'r{{ var("round") }}' as payload
from range({{ var('lo') }}, {{ var('hi') }}, 1, 1)
where {{ hang_on('id = 60', 'merge') }}
"""
SNAPSHOT = """
{% snapshot items_snapshot %}
{{ config(unique_key='id', strategy='check', check_cols=['payload']) }}
select id, 'r{{ var("round") }}' as payload
from range({{ var('lo') }}, {{ var('hi') }}, 1, 1)
where {{ hang_on('id = 70', 'snapshot') }}
{% endsnapshot %}
"""
MERGE_ID = ["analytics", "merged"]
SNAPSHOT_ID = ["analytics", "items_snapshot"]
FIRST = {"round": 1, "lo": 0, "hi": 100}
SECOND = {"round": 2, "lo": 50, "hi": 150}


def _build_args(variables: dict) -> list[str]:
    return ["build", "--vars", json.dumps(variables)]


def _table(ns, table_id: list[str]) -> tuple[int, pa.Table]:
    """(version, rows) of the table as a namespace reader sees it, read with plain pylance."""
    info = ns.describe_table(table_id)
    return info.version, lance.dataset(info.location, version=info.version).to_table()


def _merged_rows(ns) -> dict[int, str]:
    _, rows = _table(ns, MERGE_ID)
    ids = rows.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicate ids in the merged table"
    return dict(zip(ids, rows.column("payload").to_pylist(), strict=True))


def _snapshot_rows(ns) -> tuple[dict[int, str], list[tuple[int, str]]]:
    """({id: payload} of the current rows, sorted (id, payload) of the closed rows)."""
    _, rows = _table(ns, SNAPSHOT_ID)
    scd = rows.column("dbt_scd_id").to_pylist()
    assert len(scd) == len(set(scd)), "duplicate dbt_scd_id in the snapshot"
    current: dict[int, str] = {}
    closed: list[tuple[int, str]] = []
    for row in rows.select(["id", "payload", "dbt_valid_to"]).to_pylist():
        if row["dbt_valid_to"] is None:
            assert row["id"] not in current, f"two current rows for id {row['id']}"
            current[row["id"]] = row["payload"]
        else:
            closed.append((row["id"], row["payload"]))
    return current, sorted(closed)


def _data_files(location: str) -> set[str]:
    return set(glob.glob(f"{location}/data/*.lance"))


def _staged_manifests(location: str) -> list[str]:
    """Manifests Lance staged for the version store (`<name>.manifest-<uuid>`), not yet versions."""
    return glob.glob(f"{location}/_versions/*.manifest-*")


def _project(tmp_path: Path, name: str, root: str, **extra) -> Project:
    project = make_project(tmp_path / name, root, sample=False, master="local[4]", extra=extra or None)
    project.write("macros/hang_on.sql", HANG_MACRO)
    project.write("models/merged.sql", MERGED)
    project.write("snapshots/items_snapshot.sql", SNAPSHOT)
    return project


def test_kill_during_incremental_merge_and_snapshot(tmp_path: Path, setup_dbt: DbtSession) -> None:
    root = str(tmp_path / "root")
    project = _project(tmp_path, "proj", root)
    # the first build is the worker's setup process, which never comes back to this root: the
    # victims and the re-run are processes of their own
    setup_dbt.succeed([[str(project.path), *_build_args(FIRST)]])
    ns = project.namespace()
    merge_version, _ = _table(ns, MERGE_ID)
    snapshot_version, _ = _table(ns, SNAPSHOT_ID)
    before_rows = (_merged_rows(ns), _snapshot_rows(ns))
    assert before_rows[0] == {i: "r1" for i in range(100)}
    assert before_rows[1] == ({i: "r1" for i in range(100)}, [])

    # 1. kill while both queries run in Spark (file-based commits).
    markers = tmp_path / "query_markers"
    markers.mkdir()
    before = tree(root)
    victim = project.start(
        *_build_args({**SECOND, "hang": "yes", "markers": str(markers)}), log="kill_query.out"
    )
    wait_for(
        lambda: glob.glob(f"{markers}/merge-*") and glob.glob(f"{markers}/snapshot-*"),
        "both hanging rows (merge source query, snapshot staging query)",
        process=victim,
    )
    kill_group(victim)
    assert tree(root) == before  # nothing was written before the kill
    check_namespace(ns)
    assert _table(ns, MERGE_ID)[0] == merge_version and _table(ns, SNAPSHOT_ID)[0] == snapshot_version
    assert (_merged_rows(ns), _snapshot_rows(ns)) == before_rows

    # 2. kill with both changes written and staged, right before their commit (version management).
    managed = _project(tmp_path, "managed", root, table_version_management=True)
    locations = [ns.describe_table(t).location for t in (MERGE_ID, SNAPSHOT_ID)]
    old_files = {location: _data_files(location) for location in locations}
    pause = tmp_path / "commit_markers"
    pause.mkdir()
    victim = managed.start(
        *_build_args(SECOND), env={"LANCENS_PAUSE_AT_STEP": f"staged:{pause}"}, log="kill_commit.out"
    )
    wait_for(
        lambda: (pause / "staged").exists() and all(_staged_manifests(location) for location in locations),
        "the merge's and the snapshot's staged manifests",
        process=victim,
    )
    kill_group(victim)
    for location in locations:  # the writes were under way: new data files and a staged manifest
        assert _data_files(location) - old_files[location], location
        assert _staged_manifests(location), location
    check_namespace(managed.namespace())
    assert _table(ns, MERGE_ID)[0] == merge_version and _table(ns, SNAPSHOT_ID)[0] == snapshot_version
    assert (_merged_rows(ns), _snapshot_rows(ns)) == before_rows

    # The re-run merges and snapshots on top, one version further.
    rerun = managed.run(*_build_args(SECOND))
    assert rerun.returncode == 0, rerun.output[-3000:]
    check_namespace(ns)
    assert _table(ns, MERGE_ID)[0] == merge_version + 1
    assert _table(ns, SNAPSHOT_ID)[0] == snapshot_version + 1
    assert _merged_rows(ns) == {i: ("r1" if i < 50 else "r2") for i in range(150)}
    current, closed = _snapshot_rows(ns)
    assert current == {i: ("r1" if i < 50 else "r2") for i in range(150)}
    assert closed == [(i, "r1") for i in range(50, 100)]
    for table_id, version in ((MERGE_ID, merge_version), (SNAPSHOT_ID, snapshot_version)):
        location = ns.describe_table(table_id).location
        assert lance.dataset(location, version=version).count_rows() == 100  # history intact


def _deletion_files(location: str) -> set[str]:
    return set(glob.glob(f"{location}/_deletions/*"))


def test_kill_while_tasks_delete_and_during_the_commit(tmp_path: Path, setup_dbt: DbtSession) -> None:
    """The merge and the snapshot run on the cluster: Spark tasks write the new rows' data files,
    then tasks write each touched fragment's deletion file, then the driver commits one `Update`.
    (Each table is one fragment of 100 rows, so the second build deletes half of one: a deletion
    file, not a fragment removed whole.)

    1. Killed while the deletion tasks run (the `deletions_written` pause holds a task right after
       it wrote a deletion file; both tables' new data files are already written): no version was
       added, the rows are those of before, and the files written are referenced by no version.
    2. Killed during the commit, after the `__manifest` row of the new version was inserted (table
       version management, `row_inserted`): the tables read their next version, whole.
    The next run succeeds on top of what is there."""
    root = str(tmp_path / "root")
    project = _project(tmp_path, "proj", root)
    setup_dbt.succeed([[str(project.path), *_build_args(FIRST)]])
    ns = project.namespace()
    versions = {tuple(t): _table(ns, t)[0] for t in (MERGE_ID, SNAPSHOT_ID)}
    before_rows = (_merged_rows(ns), _snapshot_rows(ns))
    locations = [ns.describe_table(t).location for t in (MERGE_ID, SNAPSHOT_ID)]
    old_files = {location: _data_files(location) | _deletion_files(location) for location in locations}

    # 1. kill while the deletion tasks write (file-based commits)
    pause = tmp_path / "deletion_markers"
    pause.mkdir()
    victim = project.start(
        *_build_args(SECOND),
        env={"LANCENS_PAUSE_AT_STEP": f"deletions_written:{pause}"},
        log="kill_deletions.out",
    )
    try:
        wait_for(
            lambda: all(_deletion_files(location) - old_files[location] for location in locations),
            "a deletion file written by a task of the merge and of the snapshot",
            process=victim,
        )
    finally:
        kill_group(victim)
    check_namespace(ns)
    assert {tuple(t): _table(ns, t)[0] for t in (MERGE_ID, SNAPSHOT_ID)} == versions
    assert (_merged_rows(ns), _snapshot_rows(ns)) == before_rows
    for location in locations:
        written = (_data_files(location) | _deletion_files(location)) - old_files[location]
        assert written, location  # the kill landed with files written...
        referenced = {
            f"{location}/data/{data_file.path}"
            for fragment in lance.dataset(location).get_fragments()
            for data_file in fragment.data_files()
        }
        assert not written & referenced  # ...which no version reads

    # 2. kill during the commit, after the new versions' catalog rows (version management)
    managed = _project(tmp_path, "managed", root, table_version_management=True)
    commit_pause = tmp_path / "commit_markers"
    commit_pause.mkdir()
    victim = managed.start(
        *_build_args(SECOND),
        env={"LANCENS_PAUSE_AT_STEP": f"row_inserted:{commit_pause}"},
        log="kill_row_inserted.out",
    )
    try:
        wait_for(
            lambda: (commit_pause / "row_inserted").exists(),
            "a merge or snapshot commit past its __manifest row",
            process=victim,
        )
    finally:
        kill_group(victim)
    check_namespace(managed.namespace())
    merged_version = _table(ns, MERGE_ID)[0]
    snapshot_version = _table(ns, SNAPSHOT_ID)[0]
    # each table reads its previous version or its next one, whole, never between
    assert merged_version in (versions[tuple(MERGE_ID)], versions[tuple(MERGE_ID)] + 1)
    assert snapshot_version in (versions[tuple(SNAPSHOT_ID)], versions[tuple(SNAPSHOT_ID)] + 1)
    next_merged = {i: ("r1" if i < 50 else "r2") for i in range(150)}
    assert _merged_rows(ns) in (before_rows[0], next_merged)
    current, closed = _snapshot_rows(ns)
    assert (current, closed) == before_rows[1] or (
        current == next_merged and closed == [(i, "r1") for i in range(50, 100)]
    )

    # the next run succeeds on top of what is there, and leaves dbt's result
    rerun = managed.run(*_build_args(SECOND))
    assert rerun.returncode == 0, rerun.output[-3000:]
    check_namespace(ns)
    assert _merged_rows(ns) == next_merged
    current, closed = _snapshot_rows(ns)
    assert current == next_merged and closed == [(i, "r1") for i in range(50, 100)]
