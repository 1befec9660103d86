"""Promoting a branch to main (`metadata/promotion.py`) on a local root and on moto's S3 server, with
table version management: main's new version reads exactly the branch's rows (pylance, and a
fresh native namespace that knows nothing of ours), no data or deletion file is written or copied,
and a later commit on main builds on it. Each Lance operation the promotion picks is exercised:
`Merge` (the branch appended and deleted rows), `Overwrite` (the branch rewrote the table) and
`Update` (the branch dropped one of main's fragments and kept the schema)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa
import pytest

from dbt.adapters.lancens.metadata.promotion import branch_files_in_use, promote
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

TABLE = ["s", "t"]
WHO = {"dbt_model": "operation.promote_branch"}


class Root:
    def __init__(self, uri: str, storage: dict[str, str]) -> None:
        self.properties = {"root": uri, **{f"storage.{k}": v for k, v in storage.items()}}
        self.ns = DirectoryNamespace.from_properties(self.properties)
        self.storage = storage or None
        self.ns.alter_namespace_properties([], {"table_version_management": "true"})
        self.ns.create_namespace(["s"])
        self.location = self.ns.create_table(TABLE, pa.table({"id": [0, 1, 2]})).location
        self.commit(lance.LanceOperation.Append(self.fragments(self.location, [3])), 1)

    def fragments(self, location: str, ids: list[int]) -> list[lance.FragmentMetadata]:
        return lance.fragment.write_fragments(pa.table({"id": ids}), location, storage_options=self.storage)

    def commit(
        self, operation: lance.LanceOperation.BaseOperation, version: int, branch: str | None = None
    ) -> int:
        return self.ns.commit_table(TABLE, operation, version, branch=branch)

    def rows(self, location: str) -> list[int]:
        return sorted(
            lance.dataset(location, storage_options=self.storage).to_table().column("id").to_pylist()
        )

    def native_rows(self) -> list[int]:
        """Main as a fresh native namespace opens it."""
        native = native_ns.DirectoryNamespace(**self.properties)
        location = native.describe_table(lns.DescribeTableRequest(id=TABLE)).location
        assert location is not None
        return self.rows(location)

    def files(self) -> set[str]:
        """Data and deletion files under the table's directory, branches included."""
        return {
            path
            for path in self.ns.storage.files(self.location)
            if "/data/" in f"/{path}" or "/_deletions/" in f"/{path}"
        }


@pytest.fixture(params=["local", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Root:
    if request.param == "local":
        return Root(str(tmp_path / "root"), {})
    s3 = request.getfixturevalue("s3_server")
    return Root(s3.uri(f"branch-promotion-{tmp_path.name}"), s3.storage_options)


def _append_and_delete(root: Root, branch: str) -> None:
    info = root.ns.describe_table(TABLE, branch=branch)
    version = root.commit(lance.LanceOperation.Append(root.fragments(info.location, [50, 51])), 2, branch)
    dataset = lance.dataset(info.location, version=version, storage_options=root.storage)
    first = dataset.get_fragment(0)
    assert first is not None
    updated = first.delete("id = 1")  # a deletion file of the branch's own
    assert isinstance(updated, lance.FragmentMetadata)
    root.commit(lance.LanceOperation.Delete([updated], [], "id = 1"), version, branch)


def _overwrite(root: Root, branch: str) -> None:
    """The branch rewrote the table with another schema (a column more), as a table model does."""
    info = root.ns.describe_table(TABLE, branch=branch)
    data = pa.table({"id": [7, 8], "extra": ["a", "b"]})
    written = lance.fragment.write_fragments(
        data, info.location, mode="overwrite", storage_options=root.storage
    )
    root.commit(lance.LanceOperation.Overwrite(data.schema, written), 2, branch)


def _drop_a_fragment(root: Root, branch: str) -> None:
    root.commit(lance.LanceOperation.Delete([], [1], "id = 3"), 2, branch)  # fragment 1 holds id 3


CHANGES: dict[str, tuple[Callable[[Root, str], None], list[int]]] = {
    "merge": (_append_and_delete, [0, 2, 3, 50, 51]),
    "overwrite": (_overwrite, [7, 8]),
    "update": (_drop_a_fragment, [0, 1, 2]),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_promotion_makes_main_read_the_branch_without_copying(root: Root, change: str) -> None:
    make_change, expected = CHANGES[change]
    root.ns.create_table_branch(TABLE, "ci")
    make_change(root, "ci")
    branch_location = root.ns.describe_table(TABLE, branch="ci").location
    assert root.rows(branch_location) == expected
    files = root.files()

    promoted = promote(root.ns, "ci", WHO)

    main = root.ns.describe_table(TABLE)
    assert promoted == {"s.t": main.version}
    assert root.rows(main.location) == expected == root.native_rows()
    assert (
        lance.dataset(main.location, storage_options=root.storage).schema
        == lance.dataset(branch_location, storage_options=root.storage).schema
    )
    assert root.files() == files  # nothing written or copied
    assert branch_files_in_use(root.ns, TABLE, "ci") == (change != "update")
    assert main.version is not None
    later = lance.dataset(main.location, storage_options=root.storage).schema
    written = lance.fragment.write_fragments(
        pa.Table.from_pylist([{"id": 99}], schema=later), main.location, storage_options=root.storage
    )
    root.commit(lance.LanceOperation.Append(written), main.version)
    assert root.rows(main.location) == sorted([*expected, 99])


def test_promotion_after_main_moved_is_refused_and_changes_nothing(root: Root) -> None:
    root.ns.create_table_branch(TABLE, "ci")
    _append_and_delete(root, "ci")
    moved = root.commit(lance.LanceOperation.Append(root.fragments(root.location, [9])), 2)
    with pytest.raises(
        errors.ConcurrentModificationError, match=r"s\.t \(branched from main version 2, main now at 3\)"
    ):
        promote(root.ns, "ci", WHO)
    assert root.ns.describe_table(TABLE).version == moved
    assert root.rows(root.location) == [0, 1, 2, 3, 9]
