"""One catalog state shared by threads (``share_reads``), and reads after a commit inside a pin.

The engine lets a caller read the catalog once for reads spread over several threads (dbt filling
its relation cache at the start of a run); these tests pin down what that state hides and what it
never hides: another process's catalog change until the sharing ends, but never this process's own
commit, and never a table's newer version.
"""

from __future__ import annotations

import threading
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

DATA = pa.table({"id": [1, 2, 3]})


def _pair(tmp_path: Path) -> tuple[DirectoryNamespace, DirectoryNamespace]:
    """Two engines on one root: ours, and another process's."""
    ours = DirectoryNamespace(str(tmp_path / "root"))
    ours.create_namespace(["a"])
    ours.create_table(["a", "t"], DATA)
    return ours, DirectoryNamespace(str(tmp_path / "root"))


def _shared_tables(namespace: DirectoryNamespace) -> list[str]:
    with namespace.consistent_reads(shared=True):
        return namespace.list_tables(["a"]).items


def test_threads_share_one_catalog_state_until_it_ends(tmp_path: Path) -> None:
    ours, other = _pair(tmp_path)
    ours.share_reads()
    other.create_table(["a", "u"], DATA)
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(_shared_tables(ours)))
    reader.start()
    reader.join()
    seen.append(_shared_tables(ours))
    # another thread and this one read the state held since share_reads: "u" came after it
    assert seen == [["t"], ["t"]]
    # reads that do not ask for the shared state find the latest
    assert ours.table_exists(["a", "u"]) and ours.list_tables(["a"]).items == ["t", "u"]
    ours.end_shared_reads()
    assert _shared_tables(ours) == ["t", "u"]


def test_a_tables_version_is_never_taken_from_the_shared_state(tmp_path: Path) -> None:
    ours, other = _pair(tmp_path)
    assert ours.describe_table(["a", "t"]).version == 1
    ours.share_reads()
    location = other.describe_table(["a", "t"]).location
    lance.write_dataset(DATA, location, mode="append")
    with ours.consistent_reads(shared=True):
        assert ours.describe_table(["a", "t"]).version == 2
        assert ours.describe_table(["a", "t"]).version == 2


def test_our_own_commit_ends_the_sharing(tmp_path: Path) -> None:
    ours, other = _pair(tmp_path)
    ours.share_reads()
    other.create_namespace(["b"])
    with ours.consistent_reads(shared=True):
        assert ours.list_namespaces([]).items == ["a"]
    ours.create_namespace(["c"])  # the catalog moved on: every read finds the latest again
    with ours.consistent_reads(shared=True):
        assert ours.list_namespaces([]).items == ["a", "b", "c"]


def test_a_block_reads_what_its_commit_wrote(tmp_path: Path) -> None:
    ours, _ = _pair(tmp_path)
    with ours.consistent_reads():
        assert not ours.namespace_exists(["b"])
        ours.create_namespace(["b"])
        assert ours.namespace_exists(["b"])
        ours.create_table(["b", "t"], DATA)
        assert ours.list_tables(["b"]).items == ["t"]


def test_a_declaration_lost_inside_a_block_then_sees_the_winner(tmp_path: Path) -> None:
    """A writer that found no table in its pinned state declares it; another writer declared it
    after that state. The declaration is refused as concurrent (14), and the describe after it
    sees the winner's row (the pinned state alone would report the table missing)."""
    ours, other = _pair(tmp_path)
    with ours.consistent_reads():
        assert not ours.table_exists(["a", "new"])
        winner = other.declare_table(["a", "new"])
        with pytest.raises(errors.ConcurrentModificationError, match="created concurrently"):
            ours.declare_table(["a", "new"])
        described = ours.describe_table(["a", "new"])
    assert described.location == winner.location and described.declared_only


def test_latest_version_at_reads_the_tables_own_versions(tmp_path: Path) -> None:
    ours, other = _pair(tmp_path)
    info = ours.describe_table(["a", "t"])
    assert ours.latest_version_at(info.location, ["a", "t"]) == 1
    lance.write_dataset(DATA, info.location, mode="append")
    assert ours.latest_version_at(info.location, ["a", "t"]) == 2
    declared = other.declare_table(["a", "d"])
    assert ours.latest_version_at(declared.location, ["a", "d"]) is None
