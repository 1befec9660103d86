"""A root table's deregister is two steps: `.lance-deregistered` in its `<name>.lance` directory
(so directory listing stops showing it), then the removal of its `__manifest` row.

The marker comes first. With the row removed first, a deregister racing another one could find no
row and the directory still listed, take the table for a V1 one and win a second time (seen once
on S3 in `test_namespace_races`); and a deregister killed between the steps left the table listed
as a V1 table with its row, and the properties kept in it, gone. A spawned process stops between
the two steps here (`versions.pause_point`), and the test acts there.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.versions import CRASH_ENV

Child = multiprocessing.process.BaseProcess
T = ["t"]
STEP = "deregister_hidden"
_WAIT_FOR_CHILD = 60.0


def _child_deregister(root: str, marker_dir: str) -> None:
    os.environ[CRASH_ENV] = f"{STEP}:{marker_dir}"
    DirectoryNamespace(root).deregister_table(T)


@pytest.fixture
def root(tmp_path: Path) -> str:
    root = str(tmp_path / "root")
    DirectoryNamespace(root).create_table(T, pa.table({"id": [1, 2, 3]}), properties={"owner": "sales"})
    return root


@pytest.fixture
def paused(root: str, tmp_path: Path) -> Iterator[Child]:
    """A deregister of `t` in another process, stopped between its two steps; killed afterwards."""
    spawn = multiprocessing.get_context("spawn")
    process = spawn.Process(target=_child_deregister, args=(root, str(tmp_path)))
    process.start()
    deadline = time.monotonic() + _WAIT_FOR_CHILD
    while not (tmp_path / STEP).exists():
        assert process.is_alive(), f"child exited (code {process.exitcode}) before reaching {STEP}"
        assert time.monotonic() < deadline, f"child never reached {STEP}"
        time.sleep(0.05)
    yield process
    if process.is_alive():
        process.kill()
    process.join()


def _object_ids(root: str) -> list[str]:
    """The ids `__manifest` holds, read with plain pylance."""
    return lance.dataset(f"{root}/__manifest").to_table(columns=["object_id"])["object_id"].to_pylist()


def test_killed_between_the_steps_leaves_the_table_registered(root: str, paused: Child) -> None:
    paused.kill()  # SIGKILL
    paused.join()
    assert "t" in _object_ids(root)  # not a row-less directory that listing shows as a V1 table
    ns = DirectoryNamespace(root)
    info = ns.describe_table(T)
    assert info.properties.get("owner") == "sales"  # its row, and what the row keeps, are there
    assert ns.list_tables([]).items == ["t"]
    assert ns.deregister_table(T).location == info.location  # the retry finishes the job
    assert not ns.table_exists(T) and ns.list_tables([]).items == []
    assert ns.register_table(T, info.location).version == info.version
    assert lance.dataset(info.location).count_rows() == 3


def test_a_deregister_meanwhile_finds_the_row_and_wins_it(root: str, paused: Child) -> None:
    """While the first caller is between its steps, a second one still sees the table by its row:
    it removes the row, and the first caller's row removal, when it comes, finds none (4)."""
    assert "t" in _object_ids(root)
    ns = DirectoryNamespace(root)
    before = ns.describe_table(T)
    assert ns.deregister_table(T).location == before.location
    assert not ns.table_exists(T) and ns.list_tables([]).items == []
    assert "t" not in _object_ids(root)
    assert lance.dataset(before.location).count_rows() == 3
