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
