"""Tags, optimize and cleanup on tables of a real namespace (local disk and moto S3, with and without
table version management): what is removed is gone from storage, what is kept still reads."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import lance
import lance.namespace
import pyarrow as pa
import pytest
from lance_namespace import ListTablesRequest

from dbt.adapters.lancens.definitions.index_config import parse_indexes
from dbt.adapters.lancens.definitions.maintenance_config import (
    MaintenanceConfig,
    parse_maintenance,
)
from dbt.adapters.lancens.materializations.indexes import apply_indexes
from dbt.adapters.lancens.metadata import maintenance, tags
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.versions import TVM_KEY

TABLE = ["docs", "t"]
WHO = {"dbt_invocation_id": "maintenance-test"}


@pytest.fixture(params=["local", "local-managed", "s3", "s3-managed"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    if request.param.startswith("local"):
        ns = DirectoryNamespace(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        ns = DirectoryNamespace(s3.uri(f"maintenance/{tmp_path.name}"), storage_options=s3.storage_options)
    if request.param.endswith("managed"):
        ns.alter_namespace_properties([], {TVM_KEY: "true"})
    ns.create_namespace(["docs"])
    return ns


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def overwrite(ns: DirectoryNamespace, table: list[str], data: pa.Table) -> int:
    if not ns.table_exists(table):
        ns.declare_table(table)
    info = ns.describe_table(table)
    options = ns.storage_options or None
    fragments = lance.fragment.write_fragments(
        data, info.location, schema=data.schema, storage_options=options
    )
    return ns.commit_table(
        table, lance.LanceOperation.Overwrite(data.schema, fragments), read_version=info.version
    )


def append(ns: DirectoryNamespace, table: list[str], data: pa.Table) -> int:
    info = ns.describe_table(table)
    options = ns.storage_options or None
    fragments = lance.fragment.write_fragments(
        data, info.location, schema=data.schema, storage_options=options
    )
    return ns.commit_table(table, lance.LanceOperation.Append(fragments), read_version=info.version)


def dataset(ns: DirectoryNamespace, table: list[str], version: int | str | None = None) -> lance.LanceDataset:
    location = ns.describe_table(table).location
    return lance.dataset(location, version=version, storage_options=ns.storage_options or None)


def data_files(ns: DirectoryNamespace, table: list[str]) -> set[str]:
    storage = Storage(ns.root, ns.storage_options)
    location = ns.describe_table(table).location
    return {path.rsplit("/", 1)[-1] for path in storage.fs.find(f"{location}/data")}


def versions(ns: DirectoryNamespace, table: list[str]) -> list[int]:
    """The table's versions as Lance lists them; on a local root the engine must agree (on S3 its
    listing can lag behind new manifests, an engine issue outside this test)."""
    found = sorted(v["version"] for v in dataset(ns, table).versions())
    if not ns.root.startswith("s3://"):
        assert [v.version for v in all_pages(ns.list_table_versions, table)] == found
    return found


def test_tags_name_versions_and_errors_name_the_tag(namespace: DirectoryNamespace) -> None:
    for i in range(3):
        overwrite(namespace, TABLE, rows(i * 10, 5))
    assert tags.create_tag(namespace, TABLE, "first", 1) == 1
    assert tags.create_tag(namespace, TABLE, "current", None) == 3
    assert [(r["tag"], r["version"]) for r in tags.list_tags(namespace, TABLE)] == [
        ("first", 1),
        ("current", 3),
    ]
    assert tags.version_of(namespace, TABLE, "first") == 1
    assert tags.version_of(namespace, TABLE, "2") == 2
    assert dataset(namespace, TABLE, "first").to_table()["id"].to_pylist() == [0, 1, 2, 3, 4]

    with pytest.raises(tags.TagError, match="already has tag 'first' \\(version 1\\)"):
        tags.create_tag(namespace, TABLE, "first", 2)
    with pytest.raises(tags.TagError, match="has no version 9"):
        tags.create_tag(namespace, TABLE, "future", 9)
    with pytest.raises(tags.TagError, match="has no tag 'nope' \\(its tags: current, first\\)"):
        tags.version_of(namespace, TABLE, "nope")

    assert tags.delete_tag(namespace, TABLE, "first") == 1
    assert [r["tag"] for r in tags.list_tags(namespace, TABLE)] == ["current"]


def test_cleanup_removes_old_untagged_versions_and_only_their_files(namespace: DirectoryNamespace) -> None:
    for i in range(5):
        overwrite(namespace, TABLE, rows(i * 10, 5))
    tags.create_tag(namespace, TABLE, "audited", 2)
    files_before = data_files(namespace, TABLE)
    assert len(files_before) == 5

    report = maintenance.cleanup_table(namespace, TABLE, retain_versions=1, older_than=timedelta(0))

    assert report.versions == {"docs.t": [1, 3, 4]}
    assert versions(namespace, TABLE) == [2, 5]
    assert dataset(namespace, TABLE, "audited").to_table()["id"].to_pylist() == [10, 11, 12, 13, 14]
    assert dataset(namespace, TABLE).to_table()["id"].to_pylist() == [40, 41, 42, 43, 44]
    assert len(data_files(namespace, TABLE)) == 2  # the files of versions 2 and 5
    assert report.bytes_removed > 0
    # the engine's history and Lance agree, and the next commit still works
    assert overwrite(namespace, TABLE, rows(100, 1)) == 6
    assert versions(namespace, TABLE) == [2, 5, 6]


def test_cleanup_keeps_what_is_not_old_enough(namespace: DirectoryNamespace) -> None:
    for i in range(3):
        overwrite(namespace, TABLE, rows(i, 1))
    report = maintenance.cleanup_table(namespace, TABLE, older_than=timedelta(days=1))
    assert report.versions == {"docs.t": []}
    assert versions(namespace, TABLE) == [1, 2, 3]
    assert maintenance.cleanup_table(namespace, TABLE).versions == {"docs.t": []}  # leftovers only
    with pytest.raises(ValueError, match="retain_versions must be at least 1"):
        maintenance.cleanup_table(namespace, TABLE, retain_versions=0)


def test_model_config_older_than_days_alone_cleans_up(namespace: DirectoryNamespace) -> None:
    """`lance_maintenance: {older_than_days: N}` without `retain_versions` is a cleanup by age, as
    the cleanup macros read it (it used to do nothing)."""
    for i in range(3):
        overwrite(namespace, TABLE, rows(i, 1))
    config = parse_maintenance({"older_than_days": 0})
    assert config is not None
    done = maintenance.after_build(namespace, TABLE, config, WHO)
    assert done == "removed versions 1, 2"
    assert versions(namespace, TABLE) == [3]
    assert parse_maintenance({"optimize_over_fragments": 4}) == MaintenanceConfig(4, None, None)


def test_optimize_compacts_fragments_and_indexes_new_rows(namespace: DirectoryNamespace) -> None:
    overwrite(namespace, TABLE, rows(0, 100))
    apply_indexes(namespace, TABLE, parse_indexes([{"columns": ["id"], "type": "btree"}]), WHO)
    for start in (100, 200, 300):
        append(namespace, TABLE, rows(start, 100))
    before = dataset(namespace, TABLE)
    assert len(before.get_fragments()) == 4
    assert before.stats.index_stats("id_btree")["num_unindexed_rows"] == 300

    result = maintenance.optimize_table(namespace, TABLE, WHO)

    after = dataset(namespace, TABLE)
    assert (result.fragments_before, result.fragments_after) == (4, 1)
    assert sorted(after.to_table()["id"].to_pylist()) == list(range(400))
    assert after.stats.index_stats("id_btree")["num_unindexed_rows"] == 0
    assert result.indexes_optimized == ["id_btree"]
    assert result.versions == list(range(before.version + 1, after.version + 1)) and result.versions
    assert after.to_table(filter="id = 333")["id"].to_pylist() == [333]
    assert versions(namespace, TABLE)[-1] == after.version  # the history still lists (engine and Lance)
    # nothing to do: no version
    assert maintenance.optimize_table(namespace, TABLE, WHO).versions == []


def test_leftovers_of_killed_runs_go_after_the_grace_period(namespace: DirectoryNamespace) -> None:
    overwrite(namespace, TABLE, rows(0, 5))
    overwrite(namespace, ["docs", "kept_files"], rows(0, 1))
    kept_location = namespace.deregister_table(["docs", "kept_files"]).location  # files kept on purpose
    storage = Storage(namespace.root, namespace.storage_options)
    options = namespace.storage_options or None
    location = namespace.describe_table(TABLE).location
    # a killed write: data files written, never committed
    lance.fragment.write_fragments(rows(50, 5), location, storage_options=options)
    # a killed atomic run: a detached version and (under version management) a staged manifest no
    # version row points at
    managed = namespace.describe_namespace([]).properties.get(TVM_KEY) == "true"
    if managed:
        staged = namespace.stage_table_commit(
            TABLE,
            lance.LanceOperation.Append(
                lance.fragment.write_fragments(rows(60, 5), location, storage_options=options)
            ),
            read_version=1,
        )
    lance.LanceDataset.commit(
        location,
        lance.LanceOperation.Append(
            lance.fragment.write_fragments(rows(70, 5), location, storage_options=options)
        ),
        read_version=1,
        detached=True,
        storage_options=options,
    )
    # its scratch copy and a new table it staged but never published
    storage.write_bytes(storage.join(".lancens-staging", "inv-1", "x", "data", "a.lance"), b"scratch")
    new_table = storage.join("0badc0de_docs$never")
    lance.fragment.write_fragments(rows(80, 5), new_table, storage_options=options)
    assert len(data_files(namespace, TABLE)) == (4 if managed else 3)

    young = maintenance.cleanup_namespace(namespace, grace=timedelta(hours=1))
    assert young.leftovers == [] and young.bytes_removed == 0

    if storage.root.startswith("s3://"):
        time.sleep(1.1)  # S3 stamps objects with whole seconds; its clock is ours
        grace = timedelta(seconds=1)
    else:
        for directory, _, names in os.walk(storage.root):
            for name in names:
                os.utime(os.path.join(directory, name), (time.time() - 7200, time.time() - 7200))
        grace = timedelta(hours=1)
    report = maintenance.cleanup_namespace(namespace, grace=grace, allow_short_grace=True)

    removed = "\n".join(report.leftovers)
    if managed:
        assert staged.manifest_path.rsplit("/", 1)[-1] in removed
    assert "/_versions/d" in removed
    assert ".lancens-staging/inv-1" in removed
    assert "0badc0de_docs$never" in removed
    assert not storage.exists(new_table) and not storage.exists(storage.join(".lancens-staging", "inv-1"))
    assert not storage.exists(storage.join(".lancens-staging"))  # the emptied scratch root too
    assert len(data_files(namespace, TABLE)) == 1  # only the committed version's file
    assert dataset(namespace, TABLE).to_table()["id"].to_pylist() == [0, 1, 2, 3, 4]
    assert versions(namespace, TABLE) == [1]
    assert (
        storage.exists(kept_location)
        and lance.dataset(kept_location, storage_options=options).count_rows() == 1
    )


def deletion_files(ns: DirectoryNamespace, table: list[str]) -> set[str]:
    storage = Storage(ns.root, ns.storage_options)
    location = ns.describe_table(table).location
    return set(storage.files(f"{location}/_deletions"))


def test_cleanup_sweeps_deletion_files_no_version_reads(namespace: DirectoryNamespace) -> None:
    """A merge, delete+insert or snapshot killed after its tasks wrote deletion files (and before
    its one commit) leaves them unreferenced: cleanup removes them after the grace, never the
    deletion file a kept version reads."""
    overwrite(namespace, TABLE, rows(0, 10))
    info = namespace.describe_table(TABLE)
    fragment = dataset(namespace, TABLE).get_fragments()[0]
    committed = fragment.delete("id < 3")
    namespace.commit_table(
        TABLE, lance.LanceOperation.Update(updated_fragments=[committed]), read_version=info.version
    )
    dataset(namespace, TABLE).get_fragments()[0].delete("id > 7")  # a killed change's deletion file
    assert len(deletion_files(namespace, TABLE)) == 2

    grace = _age_everything(namespace)
    report = maintenance.cleanup_table(
        namespace, TABLE, retain_versions=1, grace=grace, allow_short_grace=True
    )

    live = committed.deletion_file.path(committed.id).removeprefix("_deletions/")
    assert deletion_files(namespace, TABLE) == {live}
    assert sum("/_deletions/" in leftover for leftover in report.leftovers) == 1
    assert dataset(namespace, TABLE).to_table()["id"].to_pylist() == [3, 4, 5, 6, 7, 8, 9]


def test_cleanup_namespace_removes_old_manifest_versions_and_keeps_every_entry(
    namespace: DirectoryNamespace,
) -> None:
    """Each namespace change is a `__manifest` version; old ones go after the grace period and the
    namespace, read by the engine and by native pylance, still lists everything."""
    for number in range(4):
        overwrite(namespace, ["docs", f"t{number}"], rows(0, 1))
    manifest = Storage(namespace.root, namespace.storage_options).join("__manifest")
    options = namespace.storage_options or None
    count = len(lance.dataset(manifest, storage_options=options).versions())
    assert count >= 5

    young = maintenance.cleanup_namespace(namespace, grace=timedelta(hours=1))
    assert "__manifest" not in young.versions
    assert len(lance.dataset(manifest, storage_options=options).versions()) == count

    time.sleep(1.1)  # manifest timestamps are in milliseconds, S3 objects' in whole seconds
    report = maintenance.cleanup_namespace(namespace, grace=timedelta(seconds=1), allow_short_grace=True)
    assert len(report.versions["__manifest"]) == count - 1 and report.bytes_removed > 0
    assert len(lance.dataset(manifest, storage_options=options).versions()) == 1
    assert all_pages(namespace.list_tables, ["docs"]) == ["t0", "t1", "t2", "t3"]
    assert dataset(namespace, ["docs", "t3"]).count_rows() == 1
    # pylance's own namespace reads it too
    properties = {"root": namespace.root, **{f"storage.{k}": v for k, v in (options or {}).items()}}
    native = lance.namespace.DirectoryNamespace(**properties)
    assert sorted(native.list_tables(ListTablesRequest(id=["docs"])).tables) == ["t0", "t1", "t2", "t3"]


def _age_everything(namespace: DirectoryNamespace) -> timedelta:
    """Make every file under the root older than the grace this returns (S3: wait a second)."""
    if namespace.root.startswith("s3://"):
        time.sleep(1.1)  # S3 stamps objects with whole seconds; its clock is ours
        return timedelta(seconds=1)
    for directory, folders, names in os.walk(namespace.root):
        for name in [*names, *folders]:
            os.utime(os.path.join(directory, name), (time.time() - 7200, time.time() - 7200))
    return timedelta(hours=1)


def test_cleanup_keeps_every_registered_directory_and_repairs_lost_reservations(
    namespace: DirectoryNamespace,
) -> None:
    """Views, declared tables and objects of nested namespaces own their directories: a cleanup
    never removes them (it once took views' for leftovers), and puts back a reservation an
    older cleanup deleted."""
    storage = Storage(namespace.root, namespace.storage_options)
    overwrite(namespace, TABLE, rows(0, 3))
    namespace.create_namespace(["docs", "inner"])
    namespace.create_view(["docs", "v"], "select * from docs.t", [TABLE])
    namespace.create_view(["docs", "inner", "w"], "select 1")
    namespace.declare_table(["docs", "inner", "declared"])
    owned = namespace.registered_locations()
    assert sorted(owned.values()) == ["table", "table", "view", "view"]
    markers = {location: storage.read_bytes(f"{location}/.lance-reserved") for location in owned}

    report = maintenance.cleanup_namespace(
        namespace, grace=_age_everything(namespace), allow_short_grace=True
    )
    assert report.leftovers == [] and report.repaired == []
    assert {location: storage.read_bytes(f"{location}/.lance-reserved") for location in owned} == markers

    damaged = [location for location, kind in owned.items() if kind == "view"]
    for location in damaged:  # what the old cleanup did
        storage.rm_tree(location)
    assert sorted(maintenance.repair(namespace).repaired) == sorted(damaged)
    assert maintenance.repair(namespace).repaired == []
    assert {location: storage.read_bytes(f"{location}/.lance-reserved") for location in owned} == markers
    storage.rm_tree(damaged[0])
    assert maintenance.cleanup_namespace(namespace, grace=timedelta(0), allow_short_grace=True).repaired == [
        damaged[0]
    ]
    assert namespace.describe_view(["docs", "inner", "w"]).sql == "select 1"


def test_cleanup_sweeps_unreferenced_indexes_and_keeps_every_kept_versions(
    namespace: DirectoryNamespace,
) -> None:
    """Index directories no kept version reads (a killed run's, `__manifest`'s) go after the grace;
    the latest's and a tagged version's stay, and so does a young one. An empty directory of a
    table never published goes too."""
    storage = Storage(namespace.root, namespace.storage_options)
    index = parse_indexes([{"columns": ["id"], "type": "btree"}])
    overwrite(namespace, TABLE, rows(0, 100))
    apply_indexes(namespace, TABLE, index, WHO)
    tags.create_tag(namespace, TABLE, "audited", None)
    overwrite(namespace, TABLE, rows(100, 100))  # drops the index; the tagged version keeps its own
    apply_indexes(namespace, TABLE, index, WHO)
    location = namespace.describe_table(TABLE).location
    kept = set(storage.names(f"{location}/_indices"))
    assert len(kept) == 2
    storage.write_bytes(f"{location}/_indices/0000dead-0000-0000-0000-000000000000/page.lance", b"x")
    manifest_indices = storage.join("__manifest", "_indices")
    manifest_kept = set(storage.names(manifest_indices))
    storage.write_bytes(f"{manifest_indices}/0000beef-0000-0000-0000-000000000000/page.lance", b"x")
    if storage.local:  # a losing run removed its files; object stores keep no empty directory
        os.makedirs(storage.join("0badc0de_docs$lost", "data"))

    young = maintenance.cleanup_namespace(namespace, grace=timedelta(hours=1))
    assert young.leftovers == []
    report = maintenance.cleanup_namespace(
        namespace, grace=_age_everything(namespace), allow_short_grace=True
    )
    removed = "\n".join(report.leftovers)
    assert "0000dead" in removed and "0000beef" in removed
    assert set(storage.names(f"{location}/_indices")) == kept
    assert set(storage.names(manifest_indices)) <= manifest_kept
    assert not storage.exists(storage.join("0badc0de_docs$lost"))
    assert dataset(namespace, TABLE, "audited").to_table(filter="id = 5")["id"].to_pylist() == [5]
    assert dataset(namespace, TABLE).to_table(filter="id = 105")["id"].to_pylist() == [105]
    assert all_pages(namespace.list_tables, ["docs"]) == ["t"]
