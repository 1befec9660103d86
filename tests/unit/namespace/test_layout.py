"""What lands on storage: directory names, markers, __manifest schema, indexes, metadata."""

from __future__ import annotations

import json
import re
from pathlib import Path

import lance
import pytest
from lance.fragment import write_fragments

from dbt.adapters.lancens.namespace import DirectoryNamespace, layout
from dbt.adapters.lancens.namespace.manifest import SCHEMA
from tests.unit.namespace.helpers import code_of, make, rows


def test_manifest_schema_and_indexes_match_native(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["a"], {"k": "v"})
    ds = lance.dataset(str(tmp_path / "__manifest"))
    assert ds.schema.equals(SCHEMA, check_metadata=True)
    assert ds.schema.field("object_id").metadata == {b"lance-schema:unenforced-primary-key:position": b"0"}
    names = {(i.name, tuple(i.field_names)) for i in ds.describe_indices()}
    assert names == {
        ("object_id_btree", ("object_id",)),
        ("object_type_bitmap", ("object_type",)),
        ("base_objects_label_list", ("base_objects",)),
    }
    assert ds.to_table().to_pylist() == [
        {
            "object_id": "a",
            "object_type": "namespace",
            "location": None,
            "metadata": '{"k":"v"}',
            "base_objects": None,
        }
    ]


def test_directory_names_per_mode(tmp_path):
    compat = make(str(tmp_path / "c"))
    compat.create_namespace(["n"])
    assert compat.create_table(["t"], rows()).location == str(tmp_path / "c" / "t.lance")
    child = compat.create_table(["n", "t"], rows()).location
    assert re.fullmatch(r"[0-9a-f]{8}_n\$t", child.rsplit("/", 1)[-1])
    v2 = make(str(tmp_path / "v2"), "v2")
    assert re.fullmatch(r"[0-9a-f]{8}_t", v2.create_table(["t"], rows()).location.rsplit("/", 1)[-1])
    assert make(str(tmp_path / "v1"), "v1").create_table(["t"], rows()).location.endswith("/t.lance")
    assert not (tmp_path / "v1" / "__manifest").exists()


def test_declare_writes_reserved_marker(tmp_path):
    info = make(str(tmp_path)).declare_table(["d"])
    assert (tmp_path / "d.lance" / ".lance-reserved").read_bytes() == b"reserved"
    assert info.declared_only and info.version is None


def test_create_on_declared_table_fills_it(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["n"])
    declared = ns.declare_table(["n", "d"])
    created = ns.create_table(["n", "d"], rows(), {"p": "q"})
    assert created.location == declared.location
    info = ns.describe_table(["n", "d"])
    assert not info.declared_only and info.properties == {"p": "q"}


@pytest.mark.parametrize("mode", ["v1", "compat"])
def test_v1_deregister_writes_marker_and_register_restores(tmp_path, mode):
    ns = make(str(tmp_path), mode)
    ns.create_table(["t"], rows())
    ns.deregister_table(["t"])
    assert (tmp_path / "t.lance" / ".lance-deregistered").read_bytes() == b"reserved"
    assert lance.dataset(str(tmp_path / "t.lance")).count_rows() == 3  # data kept
    ns.register_table(["t"], "t.lance")
    assert ns.table_exists(["t"]) and ns.describe_table(["t"]).version == 1


def test_compat_root_listing_merges_and_dedups(tmp_path):
    lance.write_dataset(rows(), str(tmp_path / "v1only.lance"))
    (tmp_path / "empty.lance").mkdir()
    (tmp_path / "file.lance").write_bytes(b"x")
    ns = make(str(tmp_path))
    ns.create_table(["m"], rows())
    ns.create_table(["n"], rows())
    ns.rename_table(["n"], ["renamed"])
    assert ns.list_tables([]).items == ["m", "renamed", "v1only"]
    assert ns.table_exists(["v1only"]) and not ns.table_exists(["empty"])
    assert ns.list_tables([], limit=2).items == ["m", "renamed"]
    assert ns.list_tables([], page_token="m").items == ["renamed", "v1only"]


def test_rename_root_table_moves_to_v2_without_copy(tmp_path):
    ns = make(str(tmp_path))
    ns.create_table(["t"], rows(5))
    data_file = next((tmp_path / "t.lance" / "data").iterdir())
    inode = data_file.stat().st_ino
    info = ns.rename_table(["t"], ["u"])
    assert re.fullmatch(r"[0-9a-f]{8}_u", info.location.rsplit("/", 1)[-1])
    assert not (tmp_path / "t.lance").exists()
    assert lance.dataset(info.location).count_rows() == 5
    assert (tmp_path / info.location.rsplit("/", 1)[-1] / "data" / data_file.name).stat().st_ino == inode
    assert ns.list_tables([]).items == ["u"]


def test_rename_into_child_namespace(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["a"])
    ns.create_namespace(["b"])
    location = ns.create_table(["a", "t"], rows()).location
    info = ns.rename_table(["a", "t"], ["b", "t2"])
    assert info.location == location and ns.list_tables(["a"]).items == []
    assert ns.list_tables(["b"]).items == ["t2"]


def test_table_properties_in_lance_metadata_and_manifest(tmp_path):
    ns = make(str(tmp_path))
    location = ns.create_table(["t"], rows(), {"owner": "me"}).location
    assert lance.dataset(location).metadata == {"owner": "me"}
    row = ns._context.manifest.get("t")
    assert row["metadata"] == '{"owner":"me"}'
    assert ns.describe_table(["t"]).properties == {"owner": "me"}


def test_root_properties_live_in_manifest_metadata(tmp_path):
    ns = make(str(tmp_path))
    ns.alter_namespace_properties([], {"owner": "me", "x": "1"})
    ns.alter_namespace_properties([], {}, removals=["x"])
    assert lance.dataset(str(tmp_path / "__manifest")).metadata == {"owner": "me"}
    assert DirectoryNamespace(str(tmp_path)).describe_namespace([]).properties == {"owner": "me"}


def test_child_namespace_properties_alter(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["a"], {"k": "v", "gone": "1"})
    assert ns.alter_namespace_properties(["a"], {"n": "2"}, ["gone"]).properties == {"k": "v", "n": "2"}
    assert make(str(tmp_path)).describe_namespace(["a"]).properties == {"k": "v", "n": "2"}


def test_unknown_manifest_columns_are_preserved(tmp_path):
    import pyarrow as pa

    ns = make(str(tmp_path))
    ns.create_namespace(["a"])
    ds = lance.dataset(str(tmp_path / "__manifest"))
    ds.add_columns(pa.field("extra", pa.string()))
    ns.create_namespace(["b"])
    ns.drop_namespace(["a"])
    table = lance.dataset(str(tmp_path / "__manifest")).to_table()
    assert table.schema.field("extra").type == pa.string()
    assert table.to_pylist()[0]["object_id"] == "b" and table.num_rows == 1


def test_drop_table_removes_version_rows_and_files(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["n"])
    location = ns.create_table(["n", "t"], rows()).location
    ns._context.manifest.insert([{"object_id": "n$t$1", "object_type": "table_version", "metadata": "{}"}])
    assert ns.list_tables(["n"]).items == ["t"]
    ns.drop_table(["n", "t"])
    assert ns._context.manifest.by_id().keys() == {"n"}
    assert not (tmp_path / location.rsplit("/", 1)[-1]).exists()
    ns.drop_namespace(["n"])


def test_views_round_trip_and_count_as_children(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["a"])
    ns.create_table(["a", "t"], rows())
    ns.create_view(["a", "v"], "select * from a.t", [["a", "t"]], {"doc": "d"})
    row = ns._context.manifest.get("a$v")
    # stored as a declared table native understands: a reserved dir, the marker, the dependencies
    assert row["object_type"] == "table" and row["base_objects"] == ["a$t"]
    assert (tmp_path / row["location"] / ".lance-reserved").read_bytes() == b"reserved"
    assert json.loads(row["metadata"]) == {
        "doc": "d",
        "lancens.view": "true",
        "lancens.view.sql": "select * from a.t",
    }
    assert ns.describe_view(["a", "v"]).properties == {"doc": "d"}
    assert make(str(tmp_path)).describe_view(["a", "v"]).sql == "select * from a.t"
    assert ns.list_views(["a"]).items == ["v"] and ns.list_tables(["a"]).items == ["t"]
    ns.create_view(["a", "v"], "select 1", replace=True)
    assert ns.describe_view(["a", "v"]).base_objects == []
    ns.drop_table(["a", "t"])
    with pytest.raises(Exception) as info:
        ns.drop_namespace(["a"])
    assert info.value.code == 3
    ns.drop_view(["a", "v"])
    assert not (tmp_path / row["location"]).exists()
    ns.drop_namespace(["a"])


@pytest.mark.parametrize("mode", ["compat", "v2"])
def test_views_are_not_tables(tmp_path, mode):
    ns = make(str(tmp_path), mode)
    ns.create_namespace(["a"])
    ns.create_view(["a", "v"], "select 1")
    ns.create_view(["top"], "select 2")
    lance.write_dataset(rows(), str(tmp_path / "reg"))
    for view_id in (["a", "v"], ["top"]):
        assert not ns.table_exists(view_id)
        assert code_of(lambda v=view_id: ns.describe_table(v)) == 4
        assert code_of(lambda v=view_id: ns.drop_table(v)) == 4
        assert code_of(lambda v=view_id: ns.create_table(v, rows())) == 5
        assert code_of(lambda v=view_id: ns.declare_table(v)) == 5
        assert code_of(lambda v=view_id: ns.register_table(v, "reg")) == 5
        assert code_of(lambda v=view_id: ns.create_view(v, "select 3")) == 5
    assert ns.list_tables(["a"]).items == [] and ns.list_tables([]).items == []
    assert ns.list_views([]).items == ["top"] and ns.list_views(["a"]).items == ["v"]
    kinds = {tuple(e.id): e.object_type for e in ns.list_objects()}
    assert kinds == {("a",): "namespace", ("a", "v"): "view", ("top",): "view"}
    assert ns.create_view(["top"], "select 4", replace=True).sql == "select 4"
    assert make(str(tmp_path), mode).describe_view(["top"]).sql == "select 4"
    operation = lance.LanceOperation.Overwrite(rows().schema, [])
    assert code_of(lambda: ns.commit_table(["a", "v"], operation)) == 5
    assert code_of(lambda: ns.create_table(["t"], rows(), {"lancens.view": "true"})) == 13
    assert code_of(lambda: ns.create_view(["w"], "select 1", properties={"lancens.view.sql": "x"})) == 13
    ns.drop_view(["top"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["__manifest", "reg", ns._context.manifest.get("a$v")["location"]]
    )


def test_list_objects_and_table_location(tmp_path):
    ns = make(str(tmp_path))
    lance.write_dataset(rows(), str(tmp_path / "old.lance"))
    ns.create_namespace(["a"], {"k": "v"})
    loc = ns.create_table(["a", "t"], rows()).location
    ns.create_view(["a", "v"], "select 1", [["a", "t"]])
    by_id = {tuple(e.id): e for e in ns.list_objects()}
    assert by_id[("a",)].properties == {"k": "v"}
    assert by_id[("a", "t")].location == loc
    assert by_id[("a", "v")].base_objects == [["a", "t"]]
    assert by_id[("old",)].location == str(tmp_path / "old.lance")
    assert {tuple(e.id) for e in ns.list_objects(["a"])} == {("a", "t"), ("a", "v")}
    assert ns.table_location(["a", "t"]) == loc
    assert ns.table_location(["new"]) == str(tmp_path / "new.lance")
    assert not (tmp_path / "new.lance").exists()


def test_properties_round_trip_and_parsing(tmp_path):
    ns = DirectoryNamespace.from_properties(
        {"root": str(tmp_path), "manifest_enabled": "no", "dir_listing_enabled": "on", "storage.k": "v"}
    )
    assert not ns.manifest_enabled and ns.dir_listing_enabled and ns.storage_options == {"k": "v"}
    again = DirectoryNamespace.from_properties(ns.properties)
    assert again.properties == ns.properties


def test_relative_and_file_uri_roots(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert DirectoryNamespace("sub/dir").root == str(tmp_path / "sub" / "dir")
    assert DirectoryNamespace(f"file://{tmp_path}/x/").root == str(tmp_path / "x")


def test_detached_commit_files_are_where_layout_names_them(tmp_path):
    """The staging and cleanup code find a detached commit's files by these names; Lance chooses
    them, so a pylance that spelled them otherwise must fail here, not leak files in a user's root."""
    location = str(tmp_path / "t.lance")
    lance.write_dataset(rows(), location)
    base = lance.dataset(location)
    fragments = write_fragments(rows(), location)
    transaction = lance.Transaction(base.version, lance.LanceOperation.Append(fragments))
    detached = lance.LanceDataset.commit(location, transaction, detached=True)
    manifest = layout.detached_manifest_path(location, detached.version)
    assert Path(manifest).is_file() and Path(manifest).parent == tmp_path / "t.lance" / "_versions"
    assert layout.parse_detached_manifest_name(manifest.rsplit("/", 1)[-1]) == detached.version
    txn = layout.transaction_file_path(location, base.version, transaction.uuid)
    assert Path(txn).is_file() and txn.endswith(layout.transaction_file_suffix(transaction.uuid))
    assert lance.dataset(location).version == base.version  # detached: not part of the history


@pytest.mark.parametrize("name", ["d.manifest", "dx1.manifest", "12.manifest", "d12.txt"])
def test_other_names_are_not_detached_manifests(name):
    assert layout.parse_detached_manifest_name(name) is None
