"""A writer killed with SIGKILL between any two commit steps leaves no version or a finishable one.

Each case spawns a real process that commits through the engine with table version management on
and blocks at one step (``LANCENS_PAUSE_AT_STEP``); the test then SIGKILLs it there and checks
what the next reader sees.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.layout import manifest_name
from dbt.adapters.lancens.namespace.versions import CRASH_ENV

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow

T = ["ns", "t"]
U = ["ns", "u"]
NEW = ["ns", "new"]
_WAIT_FOR_CHILD = 60.0  # generous bound so a stuck child fails the test instead of hanging it


def _append(ns: DirectoryNamespace, table_id: list[str], start: int) -> int:
    data = pa.table({"id": pa.array([start, start + 1], pa.int64())})
    location = ns.table_location(table_id)
    fragments = lance.fragment.write_fragments(data, location)
    latest = ns.describe_table_version(table_id, None).version
    return ns.commit_table(table_id, lance.LanceOperation.Append(fragments), latest, {"who": "child"})


def _child_commit(root: str, step: str, marker_dir: str) -> None:
    os.environ[CRASH_ENV] = f"{step}:{marker_dir}"
    _append(DirectoryNamespace(root), T, 100)


def _child_create(root: str, step: str, marker_dir: str) -> None:
    os.environ[CRASH_ENV] = f"{step}:{marker_dir}"
    ns = DirectoryNamespace(root)
    data = pa.table({"id": pa.array([7], pa.int64())})
    location = ns.table_location(NEW)
    operation = lance.LanceOperation.Overwrite(data.schema, lance.fragment.write_fragments(data, location))
    ns.commit_table(NEW, operation, None, {"who": "child"}, location=location)


def _child_publish(root: str, step: str, marker_dir: str) -> None:
    ns = DirectoryNamespace(root)
    staged = []
    for table_id in (T, U):
        data = pa.table({"id": pa.array([200], pa.int64())})
        location = ns.table_location(table_id)
        operation = lance.LanceOperation.Append(lance.fragment.write_fragments(data, location))
        latest = ns.describe_table_version(table_id, None).version
        staged.append(ns.stage_table_commit(table_id, operation, latest, {"who": "publish"}))
    os.environ[CRASH_ENV] = f"{step}:{marker_dir}"
    ns.publish(staged)


def _kill_at(target, root: str, step: str, marker_dir: Path) -> None:
    """Run ``target`` in a spawned process, wait until it stops at ``step``, SIGKILL it there."""
    process = multiprocessing.get_context("spawn").Process(target=target, args=(root, step, str(marker_dir)))
    process.start()
    deadline = time.monotonic() + _WAIT_FOR_CHILD
    while not (marker_dir / step).exists():
        assert process.is_alive(), f"child exited (code {process.exitcode}) before reaching {step}"
        assert time.monotonic() < deadline, f"child never reached {step}"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    assert process.exitcode == -signal.SIGKILL


@pytest.fixture
def root(tmp_path: Path) -> str:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.create_namespace(["ns"])
    ns._context.manifest.set_metadata({"table_version_management": "true"})
    for table_id in (T, U):
        data = pa.table({"id": pa.array([0, 1], pa.int64())})
        location = ns.table_location(table_id)
        operation = lance.LanceOperation.Overwrite(
            data.schema, lance.fragment.write_fragments(data, location)
        )
        ns.commit_table(table_id, operation, None, {"who": "setup"}, location=location)
    return str(tmp_path / "root")


def _versions_dir(ns: DirectoryNamespace, table_id: list[str]) -> Path:
    # table_location, not describe_table: under version management describe finishes commits
    return Path(ns.table_location(table_id).removeprefix("file://")) / "_versions"


def _row(ns: DirectoryNamespace, object_id: str) -> dict | None:
    row = DirectoryNamespace(ns.root)._context.manifest.get(object_id)  # a fresh reader, no cached state
    return json.loads(row["metadata"]) if row else None


def test_killed_after_staging_leaves_no_version(root: str, tmp_path: Path) -> None:
    _kill_at(_child_commit, root, "staged", tmp_path)
    ns = DirectoryNamespace(root)
    assert _row(ns, "ns$t$2") is None
    assert [v.version for v in ns.list_table_versions(T).items] == [1]
    assert lance.dataset(ns.describe_table(T).location).version == 1
    assert any(name.startswith(manifest_name(2) + "-") for name in os.listdir(_versions_dir(ns, T)))
    assert _append(ns, T, 300) == 2  # the next writer takes version 2 as if nothing happened
    assert sorted(lance.dataset(ns.describe_table(T).location).to_table().column("id").to_pylist()) == [
        0,
        1,
        300,
        301,
    ]


@pytest.mark.parametrize("step", ["row_inserted", "finalized"])
def test_killed_after_the_row_is_finished_by_the_next_reader(root: str, tmp_path: Path, step: str) -> None:
    _kill_at(_child_commit, root, step, tmp_path)
    ns = DirectoryNamespace(root)
    final = _versions_dir(ns, T) / manifest_name(2)
    assert _row(ns, "ns$t$2")["manifest_path"].startswith(f"_versions/{manifest_name(2)}-")
    assert final.exists() == (step == "finalized")
    version = ns.describe_table_version(T, 2)  # the reader finishes the commit
    assert version.metadata == {"who": "child"}
    assert final.exists()
    assert _row(ns, "ns$t$2")["manifest_path"] == f"_versions/{manifest_name(2)}"
    assert not any(name.startswith(manifest_name(2) + "-") for name in os.listdir(final.parent))
    table = lance.dataset(ns.describe_table(T).location).to_table()
    assert sorted(table.column("id").to_pylist()) == [0, 1, 100, 101]


def test_describe_table_finishes_an_interrupted_commit(root: str, tmp_path: Path) -> None:
    _kill_at(_child_commit, root, "row_inserted", tmp_path)
    ns = DirectoryNamespace(root)
    info = ns.describe_table(T)  # the first call after the crash, through the version API
    assert info.version == 2
    assert _row(ns, "ns$t$2")["manifest_path"] == f"_versions/{manifest_name(2)}"
    assert lance.dataset(info.location).version == 2  # plain Lance readers see it from now on


def test_a_writers_latest_version_includes_an_interrupted_commit(root: str, tmp_path: Path) -> None:
    """A writer asking whether its table moved (`latest_version_at`, the append's check after its
    Spark tasks) must count a version whose row is in the catalog although its manifest still has
    its staging name: plain Lance does not list it yet, and an append built on version 1 would be
    rebased onto it."""
    ns = DirectoryNamespace(root)
    before = ns.describe_table(T)  # this process reads the catalog: version management is on
    assert before.version == 1
    _kill_at(_child_commit, root, "row_inserted", tmp_path)
    assert lance.dataset(before.location).version == 1  # the name Lance lists is still version 1's
    assert ns.latest_version_at(before.location, T) == 2


def test_describe_table_finishes_an_interrupted_first_commit(root: str, tmp_path: Path) -> None:
    _kill_at(_child_create, root, "row_inserted", tmp_path)
    ns = DirectoryNamespace(root)
    info = ns.describe_table(NEW)
    assert not info.declared_only and info.version == 1
    assert lance.dataset(info.location).to_table().column("id").to_pylist() == [7]


def test_killed_after_the_pointer_update_is_complete(root: str, tmp_path: Path) -> None:
    _kill_at(_child_commit, root, "pointer_updated", tmp_path)
    ns = DirectoryNamespace(root)
    assert _row(ns, "ns$t$2")["manifest_path"] == f"_versions/{manifest_name(2)}"
    assert lance.dataset(ns.describe_table(T).location).version == 2
    assert [v.version for v in ns.list_table_versions(T).items] == [1, 2]


def test_next_commit_finishes_an_unfinished_one(root: str, tmp_path: Path) -> None:
    _kill_at(_child_commit, root, "row_inserted", tmp_path)
    ns = DirectoryNamespace(root)
    assert _append(ns, T, 300) == 3
    table = lance.dataset(ns.describe_table(T).location).to_table()
    assert sorted(table.column("id").to_pylist()) == [0, 1, 100, 101, 300, 301]


@pytest.mark.parametrize("step", ["staged", "row_inserted"])
def test_publish_killed_is_all_or_nothing(root: str, tmp_path: Path, step: str) -> None:
    _kill_at(_child_publish, root, step, tmp_path)
    ns = DirectoryNamespace(root)
    listed = [[v.version for v in ns.list_table_versions(table_id).items] for table_id in (T, U)]
    assert listed == ([[1], [1]] if step == "staged" else [[1, 2], [1, 2]])
    for table_id in (T, U):
        rows = lance.dataset(ns.describe_table(table_id).location).to_table().num_rows
        assert rows == (2 if step == "staged" else 3)


@pytest.mark.parametrize("move", ["rename", "deregister_and_register"])
def test_rename_or_deregister_keeps_an_interrupted_commit(root: str, tmp_path: Path, move: str) -> None:
    """The row of a killed writer's version is the commit: renaming or deregistering the table
    before anyone read it used to delete that row with the table's, losing version 2."""
    _kill_at(_child_commit, root, "row_inserted", tmp_path)
    ns = DirectoryNamespace(root)
    if move == "rename":
        ns.rename_table(T, ["ns", "moved"])
        info = ns.describe_table(["ns", "moved"])
    else:
        location = ns.deregister_table(T).location
        ns.register_table(T, location)
        info = ns.describe_table(T)
    assert info.version == 2
    assert sorted(lance.dataset(info.location).to_table().column("id").to_pylist()) == [0, 1, 100, 101]


def test_rename_refuses_while_a_version_is_being_committed(root: str, tmp_path: Path) -> None:
    """A version row that still points at a staged manifest when the rename commits belongs to a
    commit running right now (the rename finished every earlier one): 14, the table unchanged."""
    from dbt.adapters.lancens.namespace import errors
    from dbt.adapters.lancens.namespace.table_ops import _refuse_unfinished

    _kill_at(_child_commit, root, "row_inserted", tmp_path)
    ns = DirectoryNamespace(root)
    resolved = ns._context.resolve_table(T)
    with pytest.raises(errors.ConcurrentModificationError, match="version 2 is being committed"):
        _refuse_unfinished(ns._context.manifest.current(), resolved)
    ns.describe_table(T)  # a reader finishes it
    _refuse_unfinished(ns._context.manifest.current(), resolved)
