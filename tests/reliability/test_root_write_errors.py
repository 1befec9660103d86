"""A write the namespace root refuses fails with one line naming the root and the cause.

The root lives on a tmpfs this test mounts: a tiny one that fills up (No space left on device), and
one remounted read-only (the tests run as root, for whom `chmod` makes nothing read-only). dbt
runs as its own process; its console output must carry no Python worker traceback and no Java
stack frame, and the namespace keeps its committed state: nothing half-written.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import check_namespace, make_project, tree

JAVA_FRAME = re.compile(r"^\s+at [\w.$]+\(", re.MULTILINE)
SMALL = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
# About 25 MB of hex text: far more than the 3 MB disk holds, whatever Lance's encoding saves.
BIG = "select id, sha2(cast(id as string), 512) || sha2(cast(id + 1 as string), 512) as h from range(100000)"


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount tmpfs file systems of a given size under tmp_path; unmounted afterwards."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"disk{len(mounted)}"
        point.mkdir()
        try:
            _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point))
        except (OSError, subprocess.CalledProcessError) as exc:
            pytest.skip(f"mounting a tmpfs needs root or CAP_SYS_ADMIN: {exc}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


def _seeded_root(disk: Path) -> tuple[str, DirectoryNamespace]:
    """A root with the namespace `analytics` and a committed table `small`."""
    root = str(disk / "root")
    ns = DirectoryNamespace(root)
    ns.create_namespace(["analytics"])
    ns.create_table(["analytics", "small"], SMALL)
    return root, ns


def _assert_one_line(message: str, root: str, cause: str, output: str) -> None:
    """dbt's own header line ("Database Error in model ..."), then one line naming root and cause.

    dbt itself may close the message with "compiled code at target/run/..." (the statement we ran is
    written there); that line is dbt's pointer, not part of our error.
    """
    header, *detail = message.strip().splitlines()
    detail = [line for line in detail if not line.strip().startswith("compiled code at ")]
    assert header.startswith("Database Error in model") and len(detail) == 1, message
    assert root in detail[0] and cause in detail[0], message
    assert "Traceback (most recent call last)" not in output, output[-5000:]
    assert not JAVA_FRAME.search(output), output[-5000:]


def test_full_disk(tmp_path: Path, tmpfs) -> None:
    root, ns = _seeded_root(tmpfs("3m"))
    project = make_project(tmp_path / "project", root, sample=False, threads=1)
    project.write("models/big.sql", BIG)

    run = project.run("run")

    assert run.returncode != 0
    _assert_one_line(run.results["big"]["message"], root, "No space left on device", run.output)
    counts = check_namespace(ns)
    assert counts == {("analytics", "small"): 3}
    assert not ns.table_exists(["analytics", "big"])
    assert not any("big" in path for path in tree(root)), "files of the failed write were left behind"


def test_read_only_root(tmp_path: Path, tmpfs) -> None:
    disk = tmpfs("64m")
    root, ns = _seeded_root(disk)
    _mount("-o", "remount,ro", str(disk))
    before = tree(root)
    project = make_project(tmp_path / "project", root, sample=False, threads=1)
    project.write("models/small.sql", "select 4 as id")
    project.write("models/newer.sql", "select 1 as id")

    run = project.run("run")

    assert run.returncode != 0
    for name in ("small", "newer"):
        _assert_one_line(run.results[name]["message"], root, "Read-only file system", run.output)
    assert tree(root) == before
    info = ns.describe_table(["analytics", "small"])
    assert lance.dataset(info.location).to_table() == SMALL
