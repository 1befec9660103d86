"""Table version management: ``table_version`` rows in ``__manifest``, atomic batches, staged publish."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, ViewInfo, errors, maintenance, versions
from dbt.adapters.lancens.namespace.layout import manifest_name
from dbt.adapters.lancens.namespace.versions import VersionEntry, VersionManager

T = ["ns", "t"]
U = ["ns", "u"]


def _rows(start: int, count: int = 2) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def _operation(ns: DirectoryNamespace, table_id: list[str], data: pa.Table) -> tuple[object, int | None, str]:
    location = ns.table_location(table_id)
    fragments = lance.fragment.write_fragments(data, location)
    try:
        latest = ns.describe_table_version(table_id, None).version
    except (errors.TableNotFoundError, errors.TableVersionNotFoundError):
        return lance.LanceOperation.Overwrite(data.schema, fragments), None, location
    return lance.LanceOperation.Append(fragments), latest, location


def append(ns: DirectoryNamespace, table_id: list[str], data: pa.Table, **properties: str) -> int:
    operation, read_version, location = _operation(ns, table_id, data)
    return ns.commit_table(table_id, operation, read_version, properties, location=location)


def stage(ns: DirectoryNamespace, table_id: list[str], data: pa.Table, **properties: str):
    operation, read_version, location = _operation(ns, table_id, data)
    return ns.stage_table_commit(table_id, operation, read_version, properties, location=location)


def version_rows(ns: DirectoryNamespace) -> dict[str, dict]:
    return {
        oid: json.loads(row["metadata"])
        for oid, row in ns._context.manifest.by_id().items()
        if row["object_type"] == "table_version"
    }


def files(ns: DirectoryNamespace, table_id: list[str]) -> list[str]:
    return sorted(
        os.listdir(Path(ns.describe_table(table_id).location.removeprefix("file://")) / "_versions")
    )


@pytest.fixture
def ns(tmp_path: Path) -> DirectoryNamespace:
    namespace = DirectoryNamespace(str(tmp_path / "root"))
    namespace.create_namespace(["ns"])
    namespace._context.manifest.set_metadata({"table_version_management": "true"})
    assert namespace._versions.management_enabled()
    return namespace


def test_commit_writes_rows_that_point_at_final_manifests(ns: DirectoryNamespace) -> None:
    assert append(ns, T, _rows(0), who="run-1") == 1
    assert append(ns, T, _rows(10), who="run-2") == 2
    rows = version_rows(ns)
    assert set(rows) == {"ns$t$1", "ns$t$2"}
    assert rows["ns$t$2"]["manifest_path"] == f"_versions/{manifest_name(2)}"
    assert rows["ns$t$2"]["metadata"] == {"who": "run-2"}
    assert ns._context.manifest.get("ns$t")["object_type"] == "table"
    assert not [name for name in files(ns, T) if "-" in name]  # no staging files left
    listed = ns.list_table_versions(T)
    assert [(v.version, v.metadata["who"]) for v in listed.items] == [(1, "run-1"), (2, "run-2")]
    assert lance.dataset(ns.describe_table(T).location).to_table().num_rows == 4


def test_managed_pagination(ns: DirectoryNamespace) -> None:
    for start in range(3):
        append(ns, T, _rows(start))
    page = ns.list_table_versions(T, descending=True, limit=2)
    assert [v.version for v in page.items] == [3, 2] and page.next_page_token == "2"
    rest = ns.list_table_versions(T, descending=True, page_token="2")
    assert [v.version for v in rest.items] == [1] and rest.next_page_token is None


def test_history_from_before_management_is_kept(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.create_namespace(["ns"])
    append(ns, T, _rows(0), who="before")
    ns._context.manifest.set_metadata({"table_version_management": "true"})
    assert append(ns, T, _rows(5), who="after") == 2
    assert set(version_rows(ns)) == {"ns$t$2"}
    assert [(v.version, v.metadata["who"]) for v in ns.list_table_versions(T).items] == [
        (1, "before"),
        (2, "after"),
    ]


def _stage_manifest(ns: DirectoryNamespace, table_id: list[str]) -> tuple[int, str]:
    """A real staged manifest of the next version, invisible to everyone (stage_table_commit)."""
    staged = stage(ns, table_id, _rows(100))
    return staged.version, staged.manifest_path


def test_create_table_version_runs_the_four_steps(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    version, staging = _stage_manifest(ns, T)
    assert version == 2 and "ns$t$2" not in version_rows(ns)
    created = ns.create_table_version(T, version, staging, metadata={"by": "hand"})
    assert created.metadata == {"by": "hand"}
    assert version_rows(ns)["ns$t$2"]["manifest_path"] == f"_versions/{manifest_name(2)}"
    assert not os.path.exists(staging.removeprefix("file://"))
    assert lance.dataset(ns.describe_table(T).location).version == 2
    with pytest.raises(errors.InvalidInputError):  # the staging file was consumed
        ns.create_table_version(T, 2, staging)


def test_existing_version_row_is_12(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    version, staging = _stage_manifest(ns, T)
    append(ns, T, _rows(50))  # someone else takes version 2
    with pytest.raises(errors.TableVersionAlreadyExistsError) as exists:
        ns.create_table_version(T, version, staging)
    assert exists.value.code == 12
    with pytest.raises(errors.TableNotFoundError):
        ns.create_table_version(["ns", "nope"], 1, staging)


def test_batch_create_is_atomic_across_tables(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    append(ns, U, _rows(0))
    t_version, t_staging = _stage_manifest(ns, T)
    u_version, u_staging = _stage_manifest(ns, U)
    append(ns, U, _rows(7))  # U's version 2 now exists
    before = ns._context.manifest.version
    with pytest.raises(errors.TableVersionAlreadyExistsError):
        ns.batch_create_table_versions(
            [VersionEntry(T, t_version, t_staging), VersionEntry(U, u_version, u_staging)]
        )
    assert ns._context.manifest.version == before  # nothing committed
    assert "ns$t$2" not in version_rows(ns)
    assert manifest_name(2) not in files(ns, T)
    created = ns.batch_create_table_versions([VersionEntry(T, t_version, t_staging)])
    assert [v.version for v in created] == [2]


def test_batch_delete_removes_files_and_rows(ns: DirectoryNamespace) -> None:
    for start in range(3):
        append(ns, T, _rows(start))
    with pytest.raises(errors.TableVersionNotFoundError):
        ns.batch_delete_table_versions(T, [1, 9])
    assert ns.batch_delete_table_versions(T, [1, 9], ignore_missing=True) == 1
    assert set(version_rows(ns)) == {"ns$t$2", "ns$t$3"}
    assert manifest_name(1) not in files(ns, T)
    assert [v.version for v in ns.list_table_versions(T).items] == [2, 3]


def test_rows_whose_manifest_another_tool_deleted_are_not_versions_and_delete(ns: DirectoryNamespace) -> None:
    """Lance's cleanup deletes manifests itself; the engine's rows for them must not break listings,
    and batch_delete removes those rows (so a cleanup can delete files first, rows after)."""
    for start in range(3):
        append(ns, T, _rows(start))
    lance.dataset(ns.describe_table(T).location).cleanup_old_versions(
        older_than=timedelta(0), versions=[1, 2], error_if_tagged_old_versions=False
    )
    assert [name for name in files(ns, T) if name.endswith(".manifest")] == [manifest_name(3)]
    assert set(version_rows(ns)) == {"ns$t$1", "ns$t$2", "ns$t$3"}

    assert [v.version for v in ns.list_table_versions(T).items] == [3]
    with pytest.raises(errors.TableVersionNotFoundError):
        ns.describe_table_version(T, 1)
    assert ns.batch_delete_table_versions(T, [1, 2]) == 2
    assert set(version_rows(ns)) == {"ns$t$3"}
    assert lance.dataset(ns.describe_table(T).location).to_table()["id"].to_pylist() == [0, 1, 1, 2, 2, 3]


def test_staged_versions_are_invisible_until_one_publish(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    staged_t = stage(ns, T, _rows(10), run="r1")
    staged_u = stage(ns, U, _rows(20), run="r1")  # a table that does not exist yet
    assert [v.version for v in ns.list_table_versions(T).items] == [1]
    assert lance.dataset(ns.describe_table(T).location).version == 1
    with pytest.raises(errors.TableNotFoundError):
        ns.describe_table(U)
    before = ns._context.manifest.version
    assert ns.publish([staged_t, staged_u]) == {("ns", "t"): 2, ("ns", "u"): 1}
    published = lance.dataset(ns._context.manifest.uri, version=before + 1).to_table().to_pylist()
    ids_in_one_commit = {row["object_id"] for row in published}
    assert {"ns$t$2", "ns$u$1", "ns$u"} <= ids_in_one_commit
    assert ns.describe_table_version(U, 1).metadata == {"run": "r1"}
    assert lance.dataset(ns.describe_table(T).location).to_table().num_rows == 4


def test_publish_fails_whole_when_a_version_was_taken(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    append(ns, U, _rows(0))
    staged = [stage(ns, T, _rows(10)), stage(ns, U, _rows(20))]
    append(ns, U, _rows(30))
    with pytest.raises(errors.TableVersionAlreadyExistsError):
        ns.publish(staged)
    assert [v.version for v in ns.list_table_versions(T).items] == [1]
    with pytest.raises(errors.InvalidInputError):
        ns.publish([staged[0], staged[0]])


def test_views_are_published_in_the_same_commit(ns: DirectoryNamespace) -> None:
    """A new view over a new table and a replaced view's body land in the tables' one commit; a view
    id that names a table fails the publish before anything lands, leaving no reserved directory."""
    ns.create_view(["ns", "old"], "select 1")
    staged_u = stage(ns, U, _rows(0))
    new = ViewInfo(["ns", "v"], "select * from ns.u", [U], {"comment": "on u"})
    clash = ViewInfo(T, "select 2")
    append(ns, T, _rows(0))
    entries = set(os.listdir(ns.root))
    with pytest.raises(errors.TableAlreadyExistsError):
        ns.publish([staged_u], [new, clash])
    assert set(os.listdir(ns.root)) == entries and not ns.table_exists(U)
    before = ns._context.manifest.version
    published = ns.publish([staged_u], [new, ViewInfo(["ns", "old"], "select 3")])
    assert published == {("ns", "u"): 1}
    one_commit = lance.dataset(ns._context.manifest.uri, version=before + 1).to_table().to_pylist()
    rows = {row["object_id"]: row for row in one_commit}
    assert {"ns$u", "ns$u$1", "ns$v"} <= set(rows) and "select 3" in rows["ns$old"]["metadata"]
    assert ns.describe_view(["ns", "v"]) == new
    assert ns.describe_view(["ns", "old"]).sql == "select 3"
    assert ns.publish([], [ViewInfo(["ns", "old"], "select 4")]) == {}  # views alone: replaced
    assert ns.describe_view(["ns", "old"]).sql == "select 4"


@pytest.mark.parametrize("racer_makes_a_table", [True, False])
def test_a_view_dropped_while_its_publish_is_planned_refuses_the_publish(
    ns: DirectoryNamespace, monkeypatch: pytest.MonkeyPatch, racer_makes_a_table: bool
) -> None:
    """Another writer drops the view the publish replaces (and maybe makes a table of that name)
    between the publish's reading of it and its `__manifest` commit: the publish fails (14) and
    neither brings the view back nor overwrites the table; its new view's directory goes."""
    ns.create_view(["ns", "v"], "select 1")
    other = DirectoryNamespace(ns.root)

    def racer(step: str) -> None:
        if step == "staged":
            other.drop_view(["ns", "v"])
            if racer_makes_a_table:
                other.create_table(["ns", "v"], _rows(0))

    monkeypatch.setattr(versions, "pause_point", racer)
    entries = set(os.listdir(ns.root))
    with pytest.raises(errors.ConcurrentModificationError, match="dropped or replaced by another writer"):
        ns.publish([], [ViewInfo(["ns", "v"], "select 2"), ViewInfo(["ns", "w"], "select 3")])
    fresh = DirectoryNamespace(ns.root)
    assert not fresh.table_exists(["ns", "w"]) and "w" not in fresh.list_views(["ns"]).items
    assert fresh.table_exists(["ns", "v"]) is racer_makes_a_table
    assert "v" not in fresh.list_views(["ns"]).items
    if racer_makes_a_table:
        assert lance.dataset(fresh.describe_table(["ns", "v"]).location).count_rows() == _rows(0).num_rows
    # the only new directory is the racer's table: the publish's reservation for `w` is gone
    assert len(set(os.listdir(ns.root)) - entries) == int(racer_makes_a_table)


def test_staging_needs_version_management(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    with pytest.raises(errors.UnsupportedOperationError) as unsupported:
        stage(ns, ["t"], _rows(0))
    assert unsupported.value.code == 0


def test_a_staged_first_commit_leaves_a_declared_table_declared(ns: DirectoryNamespace) -> None:
    """Only finalized manifests make a table hold data; a staging file in _versions/ does not."""
    ns.declare_table(T)
    staged = stage(ns, T, _rows(0))
    assert any(name.startswith(f"{manifest_name(1)}-") for name in files(ns, T))
    info = ns.describe_table(T)
    assert info.declared_only and info.version is None
    assert ns.list_table_versions(T).items == []
    assert ns.publish([staged]) == {("ns", "t"): 1}
    info = ns.describe_table(T)
    assert not info.declared_only and info.version == 1 and ns.describe_table_version(T).version == 1


def _stage_readable(ns: DirectoryNamespace, data: pa.Table, **properties: str):
    """Stage an append to T, and its content as a detached Lance version (how the adapter reads a
    staged version): returns both."""
    operation, read_version, location = _operation(ns, T, data)
    staged = ns.stage_table_commit(T, operation, read_version, properties, location=location)
    transaction = lance.Transaction(read_version, operation)
    return staged, lance.LanceDataset.commit(location, transaction, detached=True)


def _metadata_update(values: dict[str, str]) -> object:
    return lance.LanceOperation.UpdateConfig(table_metadata_updates=lance.LanceOperation.UpdateMap(values))


def test_a_chain_of_staged_versions_is_invisible_then_published_in_one_commit(ns: DirectoryNamespace) -> None:
    """A model's new rows, the index built on them and the index record: three staged versions of
    one table that readers see together or not at all."""
    append(ns, T, _rows(0, 300))
    rows, copy = _stage_readable(ns, _rows(300, 300), step="rows")
    fragments = [fragment.fragment_id for fragment in copy.get_fragments()]
    index = copy.create_index_uncommitted("id", "BTREE", name="id_idx", fragment_ids=fragments, replace=True)
    indexed = ns.stage_next_commit(rows, lance.LanceOperation.CreateIndex([index], []), {"step": "index"})
    recorded = ns.stage_next_commit(indexed, _metadata_update({"built": "id_idx"}), {"step": "record"})
    assert (indexed.version, recorded.version) == (3, 4) and recorded.table_row is None
    assert [v.version for v in ns.list_table_versions(T).items] == [1]
    assert not [name for name in files(ns, T) if name in {manifest_name(v) for v in (2, 3, 4)}]
    assert lance.dataset(ns.describe_table(T).location).version == 1

    before = ns._context.manifest.version
    assert ns.publish([rows, indexed, recorded]) == {("ns", "t"): 4}
    assert ns._context.manifest.version == before + 2  # the rows in one commit, then the pointers
    one_commit = lance.dataset(ns._context.manifest.uri, version=before + 1).to_table().to_pylist()
    assert {"ns$t$2", "ns$t$3", "ns$t$4"} <= {row["object_id"] for row in one_commit}
    assert [(v.version, v.metadata["step"]) for v in ns.list_table_versions(T).items[1:]] == [
        (2, "rows"),
        (3, "index"),
        (4, "record"),
    ]
    table = lance.dataset(ns.describe_table(T).location)
    assert table.version == 4 and table.count_rows() == 600 and table.metadata == {"built": "id_idx"}
    stats = table.stats.index_stats("id_idx")
    assert stats["num_indexed_rows"] == 600 and stats["num_unindexed_rows"] == 0
    assert "ScalarIndexQuery" in table.scanner(filter="id = 450").explain_plan()
    assert table.to_table(filter="id = 450")["id"].to_pylist() == [450]
    assert not [name for name in files(ns, T) if "-" in name]  # every staging file finalized
    # each staged version names its transaction file, which the published version references
    for staged in (rows, indexed, recorded):
        transaction = table.read_transaction(staged.version)
        assert staged.transaction_uuid == transaction.uuid
        assert (
            Path(table.uri) / "_transactions" / f"{transaction.read_version}-{transaction.uuid}.txn"
        ).is_file()


def test_a_chain_can_start_with_the_tables_creation(ns: DirectoryNamespace) -> None:
    created = stage(ns, U, _rows(0, 5))
    assert created.table_row is not None
    recorded = ns.stage_next_commit(created, _metadata_update({"k": "v"}))
    with pytest.raises(errors.TableNotFoundError):
        ns.describe_table(U)
    assert ns.publish([created, recorded]) == {("ns", "u"): 2}
    table = lance.dataset(ns.describe_table(U).location)
    assert (table.version, table.count_rows(), table.metadata) == (2, 5, {"k": "v"})


def test_publish_refuses_a_broken_chain(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0))
    rows = stage(ns, T, _rows(10))
    recorded = ns.stage_next_commit(rows, _metadata_update({"k": "v"}))
    again = ns.stage_next_commit(recorded, _metadata_update({"k": "w"}))
    with pytest.raises(errors.InvalidInputError, match="not consecutive"):
        ns.publish([rows, again])
    created = stage(ns, U, _rows(0))
    with pytest.raises(errors.InvalidInputError, match="only the first"):
        then = ns.stage_next_commit(created, _metadata_update({"k": "v"}))
        ns.publish([created, dataclasses.replace(then, table_row=created.table_row)])
    assert [v.version for v in ns.list_table_versions(T).items] == [1]


def test_an_index_of_fragments_the_staged_version_lacks_is_refused(ns: DirectoryNamespace) -> None:
    append(ns, T, _rows(0, 300))
    rows, copy = _stage_readable(ns, _rows(300, 300))
    index = copy.create_index_uncommitted("id", "BTREE", name="id_idx", fragment_ids=[0, 1], replace=True)
    elsewhere = dataclasses.replace(index, fragment_ids={0, 1, 7})
    with pytest.raises(errors.InvalidInputError, match=r"covers fragments \[7\] that version 2"):
        ns.stage_next_commit(rows, lance.LanceOperation.CreateIndex([elsewhere], []))
    with pytest.raises(errors.InvalidInputError, match="prior must be a StagedCommit"):
        ns.stage_next_commit("t$2", _metadata_update({"k": "v"}))  # type: ignore[arg-type]


@pytest.mark.parametrize("step", ["_finalize", "_point_rows", "_remove_staging"])
def test_a_failure_after_the_commit_point_reports_the_commit(
    ns: DirectoryNamespace, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """Once its row is in `__manifest` a version is committed and readers finish it, so a storage
    error while finishing it must not fail the commit or the publish: a caller told so would delete
    the files of a committed version."""
    append(ns, T, _rows(0))
    operation, read_version, location = _operation(ns, T, _rows(10))
    staged = stage(ns, U, _rows(20))  # a new table, published

    def unavailable(*args: object, **kwargs: object) -> None:
        raise OSError("storage unavailable")

    monkeypatch.setattr(VersionManager, step, unavailable)
    assert ns.commit_table(T, operation, read_version, {}, location=location) == 2
    assert ns.publish([staged]) == {("ns", "u"): 1}
    monkeypatch.undo()
    for table_id, version, count in ((T, 2, 4), (U, 1, 2)):
        info = ns.describe_table(table_id)  # a reader finishes what the writer could not
        assert info.version == version
        assert lance.dataset(info.location).count_rows() == count
    assert append(ns, T, _rows(30)) == 3


def test_a_failed_manifest_upkeep_does_not_fail_the_change(
    ns: DirectoryNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `__manifest` upkeep after a commit (compaction, indexes) only helps later reads: its
    failure leaves the committed change committed and reported as such."""

    def unavailable(*args: object, **kwargs: object) -> bool:
        raise OSError("storage unavailable")

    monkeypatch.setattr(maintenance, "upkeep", unavailable)
    assert append(ns, T, _rows(0)) == 1
    ns.create_namespace(["other"])
    monkeypatch.undo()
    assert ns.namespace_exists(["other"]) and ns.describe_table(T).version == 1
