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

from dbt.adapters.lancens.metadata import maintenance
from dbt.adapters.lancens.metadata.branches import delete_branch, list_branches
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
    assert bool(branch_files_in_use(root.ns, TABLE, "ci")) == (change != "update")
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


def _manifest_versions_holding(root: Root, object_ids: list[str]) -> dict[str, int]:
    """For each `__manifest` row id: the first `__manifest` version that holds it."""
    manifest = lance.dataset(root.ns.storage.join("__manifest"), storage_options=root.storage)
    found: dict[str, int] = {}
    for version in range(1, manifest.version + 1):
        held = manifest.checkout_version(version).to_table(columns=["object_id"]).column(0).to_pylist()
        for object_id in object_ids:
            if object_id in held:
                found.setdefault(object_id, version)
    return found


def test_a_new_table_in_a_new_namespace_exists_only_on_the_branch_until_promoted(root: Root) -> None:
    """A table and a namespace main lacks, made on branch `ci` (as a branch target's first write
    makes them): main's catalog (ours, and a fresh native namespace) does not list them, a plain
    Lance reader of the table's directory sees no rows but on the branch; the promotion registers
    both in the same `__manifest` commit as the existing table's promoted version, copying nothing."""
    new = ["s2", "n"]
    assert root.ns.create_namespace_on_branch(["s2"], "ci") is True
    assert root.ns.create_namespace_on_branch(["s"], "ci") is False  # main has it
    location = root.ns.table_location_on_branch(new, "ci")
    data = pa.table({"id": [40, 41]})
    written = lance.fragment.write_fragments(data, location, storage_options=root.storage)
    made = root.ns.create_table_on_branch(new, "ci", data.schema, location)
    assert (made.location, made.version, made.branch) == (location, 1, "ci")
    assert (
        root.ns.commit_table(new, lance.LanceOperation.Overwrite(data.schema, written), 1, branch="ci") == 2
    )
    root.ns.create_table_branch(TABLE, "ci")
    _append_and_delete(root, "ci")

    native = native_ns.DirectoryNamespace(**root.properties)
    directory = location.rsplit("/tree/", 1)[0]
    assert not root.ns.namespace_exists(["s2"]) and not root.ns.table_exists(new)
    assert native.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == ["s"]
    assert root.rows(directory) == []  # main of its directory: empty
    assert root.rows(root.ns.describe_table(new, branch="ci").location) == [40, 41]
    on_branch = lance.dataset(directory, storage_options=root.storage).checkout_version(("ci", None))
    assert sorted(on_branch.to_table().column("id").to_pylist()) == [40, 41]
    with pytest.raises(errors.NamespaceNotFoundError):
        root.ns.describe_table(new)
    files = {path for path in root.ns.storage.files(directory) if "/data/" in f"/{path}"}
    listed = {(row["table"], row["from_branch"], row["version"]) for row in list_branches(root.ns)}
    assert listed == {("s.t", "main", 4), ("s2.n", "(new)", 2)}

    promoted = promote(root.ns, "ci", WHO)

    main = root.ns.describe_table(new)
    assert promoted == {"s.t": root.ns.describe_table(TABLE).version, "s2.n": main.version}
    assert main.location.rstrip("/") == directory
    assert root.rows(main.location) == [40, 41]
    native_location = native.describe_table(lns.DescribeTableRequest(id=new)).location
    assert native_location is not None and root.rows(native_location) == [40, 41]
    assert root.native_rows() == [0, 2, 3, 50, 51]
    assert {path for path in root.ns.storage.files(directory) if "/data/" in f"/{path}"} == files
    seen = _manifest_versions_holding(root, ["s2", "s2$n", f"s$t${promoted['s.t']}"])
    assert len(seen) == 3 and len(set(seen.values())) == 1, seen  # one __manifest commit
    assert root.ns.objects_on_branch("ci") == []
    # main's later commits build on it
    later = lance.fragment.write_fragments(
        pa.table({"id": [42]}), main.location, storage_options=root.storage
    )
    root.ns.commit_table(new, lance.LanceOperation.Append(later), main.version)
    assert root.rows(main.location) == [40, 41, 42]
    # main reads the files the branch wrote for the new table too: its deletion names it
    with pytest.raises(errors.InvalidInputError, match=r"s2\.n: main versions \d"):
        delete_branch(root.ns, "ci")
    assert root.rows(main.location) == [40, 41, 42]


def test_a_promoted_branch_is_kept_while_main_reads_it_then_deleted_and_reclaimed(root: Root) -> None:
    """The lifecycle of a promoted branch: while a kept version (main's, or another branch's) reads
    files it wrote, deleting it is refused naming those versions (the engine's spec operation and
    `lancens.delete_branch`), and a cleanup keeps them; once main moved on (an overwrite) and a
    cleanup removed the older versions, and the branch made from main meanwhile is gone, the
    deletion succeeds, the branch's files are reclaimed, and main reads every row (pylance and a
    fresh native namespace); a later cleanup finds nothing of it to miss."""
    root.ns.create_table_branch(TABLE, "ci")
    _append_and_delete(root, "ci")
    branch_files = {path for path in root.files() if path.startswith("tree/ci/")}
    assert branch_files
    promote(root.ns, "ci", WHO)
    main = root.ns.describe_table(TABLE)
    assert main.version is not None
    later = lance.fragment.write_fragments(
        pa.table({"id": [60]}), main.location, storage_options=root.storage
    )
    appended = root.commit(lance.LanceOperation.Append(later), main.version)
    root.ns.create_table_branch(TABLE, "dev")  # from main's latest: it reads ci's files too
    with pytest.raises(
        errors.InvalidInputError,
        match=rf"branch 'ci' was promoted and main versions {main.version}, {appended}; branch 'dev'",
    ):
        root.ns.delete_table_branch(TABLE, "ci")
    with pytest.raises(errors.InvalidInputError, match=r"s\.t: main versions .* and branch 'dev' versions"):
        delete_branch(root.ns, "ci")
    maintenance.cleanup_table(root.ns, TABLE, retain_versions=1)
    assert branch_files <= root.files()
    assert root.rows(root.location) == [0, 2, 3, 50, 51, 60] == root.native_rows()

    # main moves on: an overwrite reads none of the branch's files, but kept versions still do
    schema = lance.dataset(root.location, storage_options=root.storage).schema
    rewritten = lance.fragment.write_fragments(
        pa.Table.from_pylist([{"id": 70}, {"id": 71}], schema=schema),
        root.location,
        mode="overwrite",
        storage_options=root.storage,
    )
    root.commit(lance.LanceOperation.Overwrite(schema, rewritten), appended)
    with pytest.raises(errors.InvalidInputError, match=rf"main versions {appended} and branch 'dev'"):
        delete_branch(root.ns, "ci")
    maintenance.cleanup_table(root.ns, TABLE, retain_versions=1)
    assert branch_files_in_use(root.ns, TABLE, "ci") == [f"branch 'dev' versions {appended}"]
    delete_branch(root.ns, "dev")

    assert branch_files_in_use(root.ns, TABLE, "ci") == []
    assert delete_branch(root.ns, "ci") == ["s.t"]
    assert not {path for path in root.files() if path.startswith("tree/")}  # reclaimed
    assert root.ns.list_table_branches(TABLE).items == []
    maintenance.cleanup_table(root.ns, TABLE, retain_versions=1)
    assert root.rows(root.location) == [70, 71] == root.native_rows()


def test_without_table_version_management_a_promotion_is_one_step_or_refused(tmp_path: Path) -> None:
    """A root without table version management: a promotion that would become visible in more than
    one step (two tables) is refused naming the config, writing nothing; one table, or the new
    objects' one catalog commit, is promoted."""
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.create_namespace(["s"])
    for name in ("t", "u"):
        ns.create_table(["s", name], pa.table({"id": [0, 1]}))
        ns.create_table_branch(["s", name], "ci")
        location = ns.describe_table(["s", name], branch="ci").location
        written = lance.fragment.write_fragments(pa.table({"id": [9]}), location)
        ns.commit_table(["s", name], lance.LanceOperation.Append(written), 1, branch="ci")

    with pytest.raises(errors.InvalidInputError, match=r"s\.t, s\.u.*table_version_management: true"):
        promote(ns, "ci", WHO)
    assert [ns.describe_table(["s", n]).version for n in ("t", "u")] == [1, 1]

    ns.delete_table_branch(["s", "u"], "ci")
    assert promote(ns, "ci", WHO) == {"s.t": 3}  # a base path version, then the branch's rows
    assert sorted(lance.dataset(ns.describe_table(["s", "t"]).location).to_table()["id"].to_pylist()) == [
        0,
        1,
        9,
    ]

    ns.create_namespace_on_branch(["s2"], "dev")
    new = ["s2", "n"]
    location = ns.table_location_on_branch(new, "dev")
    data = pa.table({"id": [5]})
    written = lance.fragment.write_fragments(data, location)
    ns.create_table_on_branch(new, "dev", data.schema, location)
    ns.commit_table(new, lance.LanceOperation.Overwrite(data.schema, written), 1, branch="dev")
    assert not ns.namespace_exists(["s2"])
    promoted = promote(ns, "dev", WHO)
    assert list(promoted) == ["s2.n"]
    assert lance.dataset(ns.describe_table(new).location).to_table()["id"].to_pylist() == [5]


def test_indexes_built_on_the_branch_are_not_promoted(root: Root) -> None:
    """The documented rule: a promotion carries the branch's rows and schema, not the indexes built
    on the branch. Main keeps its own index (covering the fragments it had) and answers every row."""
    main_ds = lance.dataset(root.location, storage_options=root.storage)
    main_ds.create_scalar_index("id", "BTREE")
    before = {d.name: [s.uuid for s in d.segments] for d in root_indexes(root, root.location)}
    root.ns.create_table_branch(TABLE, "ci")
    branch = root.ns.describe_table(TABLE, branch="ci")
    root.commit(lance.LanceOperation.Append(root.fragments(branch.location, [50])), branch.version, "ci")
    lance.dataset(branch.location, storage_options=root.storage).create_scalar_index(
        "id", "BTREE", replace=True
    )
    on_branch = {s.uuid for d in root_indexes(root, branch.location) for s in d.segments}
    assert on_branch and not on_branch & {u for uuids in before.values() for u in uuids}

    promote(root.ns, "ci", WHO)

    main = root.ns.describe_table(TABLE)
    after = {d.name: [s.uuid for s in d.segments] for d in root_indexes(root, main.location)}
    assert after == before  # main's own index, not the branch's
    found = lance.dataset(main.location, storage_options=root.storage).to_table(filter="id = 50")
    assert found.column("id").to_pylist() == [50]
    assert root.rows(main.location) == [0, 1, 2, 3, 50]


def root_indexes(root: Root, location: str) -> list:
    return list(lance.dataset(location, storage_options=root.storage).describe_indices())
