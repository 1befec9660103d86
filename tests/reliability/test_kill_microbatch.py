"""A microbatch batch's window is deleted by Spark tasks, and a SIGKILL while they write leaves the
table as it was (issue #48).

A batch replaces the stored rows of its `event_time` window. Which rows those are, and their
deletion files, used to be found by a Lance scan in the dbt process, which took every matching
row's address; Spark tasks now do it, one per fragment that may hold such rows, and the driver
receives only the fragments' new metadata. The engine's `deletions_written` pause holds the first
process that has written a deletion file: it must be a Spark Python worker, not the dbt process.
It is killed there (the batch's new data files and a deletion file written, nothing committed): the
table keeps its version and rows, the files written are read by no version, and the next run
replaces the window as dbt's microbatch does.

The first batch stores both days' rows in one fragment, so the second batch's window deletes part
of it (a deletion file) rather than the whole fragment.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import lance

from tests.reliability.helpers import DbtSession, check_namespace, kill_group, make_project, wait_for

EVENTS = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          batch_size='day', begin='2024-01-01') }}
select id, {{ var('round') }} as round,
  timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id % 48 as int), 0, 0) as event_ts
from range({{ var('lo') }}, {{ var('hi') }}, 1, 1)
{% if var('day_one_only') %} where id % 48 < 24 {% endif %}
"""
TABLE_ID = ["analytics", "events"]
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]
# the first batch stores both days' rows in one fragment (its source has no event_time, so dbt
# gives the batch every row); the second brings day one's rows only and replaces day one's window,
# a deletion file in that fragment
FIRST = {"round": 1, "lo": 0, "hi": 100, "day_one_only": False}
SECOND = {"round": 2, "lo": 50, "hi": 150, "day_one_only": True}
KEPT = {i: 1 for i in range(100) if i % 48 >= 24}


def _run_args(variables: dict) -> list[str]:
    return ["run", "--vars", json.dumps(variables), *WINDOW]


def _rounds(project) -> tuple[int, dict[int, int]]:
    """(version, {id: round}) as a namespace reader sees the table; an id stored twice fails."""
    info = project.namespace().describe_table(TABLE_ID)
    rows = lance.dataset(info.location, version=info.version).to_table(columns=["id", "round"])
    ids = rows.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "an id is stored twice"
    return info.version, dict(zip(ids, rows.column("round").to_pylist(), strict=True))


def _written(location: str) -> set[str]:
    return set(glob.glob(f"{location}/data/*.lance")) | set(glob.glob(f"{location}/_deletions/*"))


def _process_names(pid: int) -> list[str]:
    """The command names of `pid` and its ancestors."""
    names = []
    while pid > 1:
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return names


def test_a_batch_window_is_deleted_by_spark_tasks_and_a_kill_there_changes_nothing(
    tmp_path: Path, setup_dbt: DbtSession
) -> None:
    project = make_project(tmp_path / "proj", str(tmp_path / "root"), sample=False)
    project.write("models/events.sql", EVENTS)
    setup_dbt.succeed([[str(project.path), *_run_args(FIRST)]])
    version, before = _rounds(project)
    assert before == {i: 1 for i in range(100)}
    assert len(lance.dataset(project.namespace().describe_table(TABLE_ID).location).get_fragments()) == 1
    location = project.namespace().describe_table(TABLE_ID).location
    old_files = _written(location)

    pause = tmp_path / "markers"
    pause.mkdir()
    victim = project.start(
        *_run_args(SECOND), env={"LANCENS_PAUSE_AT_STEP": f"deletions_written:{pause}"}, log="kill.out"
    )
    try:
        wait_for(
            lambda: (pause / "deletions_written").exists(), "a deletion file of the window", process=victim
        )
        deleter = int((pause / "deletions_written").read_text() or 0)
        ancestors = _process_names(deleter)
    finally:
        kill_group(victim)
    # the process that wrote it is one of Spark's Python workers, under the JVM, not dbt's process
    assert deleter != victim.pid
    assert "java" in ancestors[1:], ancestors

    check_namespace(project.namespace())
    assert _rounds(project) == (version, before)
    written = _written(location) - old_files
    assert any("/_deletions/" in path for path in written)  # the kill landed after a deletion file
    referenced = {
        f"{location}/data/{data_file.path}"
        for fragment in lance.dataset(location).get_fragments()
        for data_file in fragment.data_files()
    }
    assert not written & referenced

    rerun = project.run(*_run_args(SECOND))
    assert rerun.returncode == 0, rerun.output[-3000:]
    check_namespace(project.namespace())
    after_version, after = _rounds(project)
    assert after_version == version + 1  # the batch is one commit
    # the window's stored rows replaced by the batch's, day two's kept
    assert after == {**KEPT, **{i: 2 for i in range(50, 150) if i % 48 < 24}}
