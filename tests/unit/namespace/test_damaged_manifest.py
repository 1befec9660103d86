"""A damaged `__manifest` data file: the error names the file, and nothing is written.

Lance's own error gave the byte range alone ("Invalid range 0..2028 for object of size 1014
bytes"). Here a real root's newest `__manifest` data file is truncated, as a copy cut short or a
disk that lost the file's end leaves it, and a new process's first reads must say which file to
restore.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.manifest import POINT_LOOKUP_ROWS


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, Path]:
    """A root with a table, whose newest `__manifest` data file lost its second half."""
    root = tmp_path / "root"
    ns = DirectoryNamespace(str(root))
    ns.create_namespace(["sales"])
    ns.create_table(["sales", "orders"], pa.table({"id": [1, 2, 3]}))
    newest = max((root / "__manifest" / "data").glob("*.lance"), key=lambda p: p.stat().st_mtime_ns)
    with newest.open("r+b") as handle:
        handle.truncate(newest.stat().st_size // 2)
    return root, newest


@pytest.mark.parametrize(
    "read",
    [
        lambda ns: ns.list_tables(["sales"]),
        lambda ns: ns.describe_table(["sales", "orders"]),
        lambda ns: ns.create_table(["sales", "more"], pa.table({"id": [4]})),
    ],
    ids=["list_tables", "describe_table", "create_table"],
)
def test_the_error_names_the_damaged_file(damaged: tuple[Path, Path], read) -> None:
    root, newest = damaged
    before = _tree(root)
    with pytest.raises(errors.InternalError) as raised:
        read(DirectoryNamespace(str(root)))
    message = str(raised.value)
    assert str(newest) in message, message
    assert "__manifest at" in message and "restore it from a backup" in message, message
    assert _tree(root) == before  # nothing written beside the damaged catalog


def test_a_point_lookup_in_a_large_manifest_names_the_file_too(tmp_path: Path) -> None:
    """Past `POINT_LOOKUP_ROWS` a lookup by id is an indexed query, not a full read: its failure
    names the damaged file as well."""
    root = tmp_path / "root"
    ns = DirectoryNamespace(str(root))
    ns.create_namespace(["big"])
    for batch in range(POINT_LOOKUP_ROWS // 100 + 1):
        rows = [{"object_id": f"big$c{batch * 100 + i}", "object_type": "namespace"} for i in range(100)]
        ns._context.manifest.insert(rows)
    ns.create_table(["big", "t"], pa.table({"id": [1]}))
    newest = max((root / "__manifest" / "data").glob("*.lance"), key=lambda p: p.stat().st_mtime_ns)
    with newest.open("r+b") as handle:
        handle.truncate(newest.stat().st_size // 2)
    fresh = DirectoryNamespace(str(root))
    with pytest.raises(errors.InternalError) as raised:
        fresh.describe_table(["big", "t"])
    assert str(newest) in str(raised.value), raised.value
    assert fresh._context.manifest._cached.version == 0  # the point query failed, not a full read
