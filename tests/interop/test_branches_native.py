"""Table branches between our engine and pylance's native ``DirectoryNamespace`` (and LanceDB), on a
local root and on moto's S3 server: a branch either side creates, the other lists, opens by name,
reads the same rows of, commits to and deletes; errors compared code by code.

Native is the oracle for the layout: both make Lance's own branches (``_refs/branches/``,
``tree/<name>/``) and neither writes a ``__manifest`` row for one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import lancedb
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

TABLE = ["s", "t"]
# A nested name and a non-ASCII one: Lance percent-encodes both in the ref's file name.
NAMES = ["dev", "feature/x", "ü"]


class Root:
    """One root seen by both engines (and LanceDB), with the storage options each needs."""

    def __init__(self, uri: str, storage: dict[str, str]) -> None:
        self.properties = {"root": uri, **{f"storage.{k}": v for k, v in storage.items()}}
        self.ours = DirectoryNamespace.from_properties(self.properties)
        self.native = native_ns.DirectoryNamespace(**self.properties)
        self.storage = storage or None

    def rows(self, location: str) -> list[int]:
        table = lance.dataset(location, storage_options=self.storage).to_table()
        return sorted(table.column("id").to_pylist())

    def native_rows(self, branch: str) -> list[int]:
        """The branch as pylance opens it by name: the table, then Lance's checkout of the branch."""
        main = lance.dataset(self.ours.describe_table(TABLE).location, storage_options=self.storage)
        return sorted(main.checkout_version((branch, None)).to_table().column("id").to_pylist())

    def append(self, location: str, start: int) -> list[lance.FragmentMetadata]:
        return lance.fragment.write_fragments(
            pa.table({"id": [start]}), location, storage_options=self.storage
        )

    def native_branches(self) -> dict[str, tuple[str | None, int]]:
        listed = self.native.list_table_branches(lns.ListTableBranchesRequest(id=TABLE)).branches
        return {name: (b.parent_branch, b.parent_version) for name, b in listed.items()}

    def our_branches(self) -> dict[str, tuple[str | None, int]]:
        return {
            b.name: (b.parent_branch, b.parent_version) for b in self.ours.list_table_branches(TABLE).items
        }

    def files(self, under: str) -> set[str]:
        return set(self.ours.storage.files(under))


def _with_table(made: Root) -> Root:
    """Table s.t with two versions (ids 0-2, then 3), created by our engine."""
    made.ours.create_namespace(["s"])
    location = made.ours.create_table(TABLE, pa.table({"id": [0, 1, 2]})).location
    made.ours.commit_table(TABLE, lance.LanceOperation.Append(made.append(location, 3)), 1)
    return made


@pytest.fixture(params=["local", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Root:
    if request.param == "local":
        return _with_table(Root(str(tmp_path / "root"), {}))
    s3 = request.getfixturevalue("s3_server")
    return _with_table(Root(s3.uri(f"branches-native-{tmp_path.name}"), s3.storage_options))


def test_native_lists_and_opens_the_branches_we_create(root: Root) -> None:
    location = root.ours.describe_table(TABLE).location
    manifest_rows = root.ours.list_objects()
    root.ours.create_table_branch(TABLE, "dev", from_version=1)
    root.ours.create_table_branch(TABLE, "feature/x", from_branch="dev")
    root.ours.create_table_branch(TABLE, "ü")
    dev = root.ours.describe_table(TABLE, branch="dev")
    root.ours.commit_table(TABLE, lance.LanceOperation.Append(root.append(dev.location, 50)), 1, branch="dev")
    assert root.native_branches() == {"dev": (None, 1), "feature/x": ("dev", 1), "ü": (None, 2)}
    assert root.native_branches() == root.our_branches()
    assert root.native_rows("dev") == root.rows(dev.location) == [0, 1, 2, 50]
    assert root.native_rows("feature/x") == [0, 1, 2]
    assert root.native_rows("ü") == root.rows(location) == [0, 1, 2, 3]
    assert root.ours.list_objects() == manifest_rows  # no __manifest row for a branch, as native
    refs = root.files(f"{location}/_refs/branches")
    assert refs == {"dev.json", "feature%2Fx.json", "%C3%BC.json"}  # Lance's (and native's) spelling


def test_lancedb_opens_our_branch_by_name_and_we_read_its_commit(tmp_path: Path) -> None:
    """On a local root only: LanceDB 0.40's ``connect_namespace`` did not return within 40 s on moto's S3."""
    root = _with_table(Root(str(tmp_path / "root"), {}))
    root.ours.create_table_branch(TABLE, "dev")
    db = lancedb.connect_namespace("dir", root.properties)
    table = db.open_table("t", namespace_path=["s"])
    on_branch = table.branches.checkout("dev")
    assert sorted(on_branch.to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    on_branch.add(pa.table({"id": [70]}))
    assert root.rows(root.ours.describe_table(TABLE, branch="dev").location) == [0, 1, 2, 3, 70]
    assert root.rows(root.ours.describe_table(TABLE).location) == [0, 1, 2, 3]


def test_we_list_describe_and_commit_to_the_branches_native_creates(root: Root) -> None:
    native = root.native
    native.create_table_branch(lns.CreateTableBranchRequest(id=TABLE, name="dev"))
    native.create_table_branch(lns.CreateTableBranchRequest(id=TABLE, name="feature/x", from_branch="dev"))
    native.create_table_branch(lns.CreateTableBranchRequest(id=TABLE, name="ü", from_version=1))
    assert (
        root.our_branches()
        == root.native_branches()
        == {
            "dev": (None, 2),
            "feature/x": ("dev", 2),
            "ü": (None, 1),
        }
    )
    for name in NAMES:
        described = root.ours.describe_table(TABLE, branch=name)
        assert root.rows(described.location) == root.native_rows(name)
    feature = root.ours.describe_table(TABLE, branch="feature/x")
    operation = lance.LanceOperation.Append(root.append(feature.location, 60))
    assert root.ours.commit_table(TABLE, operation, feature.version, branch="feature/x") == 3
    assert root.native_rows("feature/x") == [0, 1, 2, 3, 60] and root.native_rows("dev") == [0, 1, 2, 3]


def test_each_deletes_the_others_branches(root: Root) -> None:
    location = root.ours.describe_table(TABLE).location
    before = root.files(location)
    root.native.create_table_branch(lns.CreateTableBranchRequest(id=TABLE, name="theirs"))
    root.ours.create_table_branch(TABLE, "ours")
    root.ours.delete_table_branch(TABLE, "theirs")
    root.native.delete_table_branch(lns.DeleteTableBranchRequest(id=TABLE, name="ours"))
    assert root.native_branches() == root.our_branches() == {}
    assert {f for f in root.files(location) if not f.startswith("_refs/")} == before
    assert root.rows(location) == [0, 1, 2, 3]


def _code(call: Callable[[], object]) -> int | str:
    """The error code ``call`` raises: ours (``NamespaceError.code``), native (``ErrorCode``), or
    the class name of an error without one."""
    try:
        call()
    except errors.NamespaceError as exc:
        return exc.code
    except lns.errors.LanceNamespaceError as exc:
        return int(exc.code)
    except Exception as exc:  # noqa: BLE001 - an uncoded error is the finding
        return type(exc).__name__
    raise AssertionError("no error")


def _create(name: str, from_version: int | None = None, from_branch: str | None = None, table: str = "t"):
    """The same CreateTableBranch for both engines: (ours, native)."""
    return (
        lambda root: root.ours.create_table_branch(["s", table], name, from_version, from_branch),
        lambda root: root.native.create_table_branch(
            lns.CreateTableBranchRequest(
                id=["s", table], name=name, from_version=from_version, from_branch=from_branch
            )
        ),
    )


def _delete(name: str):
    return (
        lambda root: root.ours.delete_table_branch(TABLE, name),
        lambda root: root.native.delete_table_branch(lns.DeleteTableBranchRequest(id=TABLE, name=name)),
    )


# (call, our code, native's code): where they differ the spec's code is ours (docs/namespace-engine.md).
CASES = {
    "duplicate": (_create("dev"), 23, 23),
    "missing table": (_create("x", table="nope"), 4, 4),
    "name with a space": (_create("a b"), 13, 13),
    "name main": (_create("main"), 13, 13),
    "empty name": (_create(""), 13, 13),
    "name ending .lock": (_create("x.lock"), 13, 13),
    "missing source version": (_create("x", from_version=99), 11, 13),
    "missing source branch": (_create("x", from_branch="nope"), 22, 18),
    "delete a missing branch": (_delete("nope"), 22, 22),
    "delete main": (_delete("main"), 13, 13),
    "delete a branch with a child": (_delete("dev"), 13, 13),
}


@pytest.mark.parametrize("case", list(CASES))
def test_errors_have_native_codes_where_native_has_one(root: Root, case: str) -> None:
    (ours, native), our_code, native_code = CASES[case]
    root.ours.create_table_branch(TABLE, "dev")
    root.ours.create_table_branch(TABLE, "dev-child", from_branch="dev")
    location = root.ours.describe_table(TABLE).location
    before = root.files(location)
    assert (_code(lambda: ours(root)), _code(lambda: native(root))) == (our_code, native_code)
    assert root.files(location) == before
    assert root.our_branches() == {"dev": (None, 2), "dev-child": ("dev", 2)}
