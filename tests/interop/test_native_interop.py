"""Both directions with pylance's native ``lance.namespace.DirectoryNamespace`` on one root."""

from __future__ import annotations

import io
import shutil

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa

from dbt.adapters.lancens.namespace import DirectoryNamespace

DATA = pa.table({"id": [1, 2, 3]})


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def native(root) -> native_ns.DirectoryNamespace:
    return native_ns.DirectoryNamespace(root=str(root))


def test_native_reads_what_we_write(tmp_path):
    ours = DirectoryNamespace(str(tmp_path))
    ours.create_namespace(["ns1"], {"owner": "me"})
    ours.create_namespace(["ns1", "child"])
    ours.create_table(["t1"], DATA)
    ours.create_table(["ns1", "t2"], DATA, {"p": "q"})
    ours.declare_table(["ns1", "child", "d"])
    theirs = native(tmp_path)
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == ["ns1"]
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=["ns1"])).namespaces == ["child"]
    assert theirs.describe_namespace(lns.DescribeNamespaceRequest(id=["ns1"])).properties == {"owner": "me"}
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == ["t1"]
    assert theirs.list_tables(lns.ListTablesRequest(id=["ns1"])).tables == ["t2"]
    described = theirs.describe_table(lns.DescribeTableRequest(id=["ns1", "t2"]))
    assert described.properties == {"p": "q"}
    assert lance.dataset(described.location).count_rows() == 3
    assert theirs.list_tables(lns.ListTablesRequest(id=["ns1", "child"])).tables == ["d"]
    theirs.drop_table(lns.DropTableRequest(id=["ns1", "t2"]))
    theirs.drop_table(lns.DropTableRequest(id=["ns1", "child", "d"]))
    theirs.drop_namespace(lns.DropNamespaceRequest(id=["ns1", "child"]))
    assert ours.list_tables(["ns1"]).items == [] and ours.list_namespaces(["ns1"]).items == []


def test_we_read_what_native_writes(tmp_path):
    theirs = native(tmp_path)
    theirs.create_namespace(lns.CreateNamespaceRequest(id=["ns1"], properties={"owner": "me"}))
    theirs.create_table(lns.CreateTableRequest(id=["t1"]), ipc(DATA))
    theirs.create_table(lns.CreateTableRequest(id=["ns1", "t2"], properties={"p": "q"}), ipc(DATA))
    theirs.declare_table(lns.DeclareTableRequest(id=["ns1", "d"]))
    lance.write_dataset(DATA, str(tmp_path / "reg_dir"))
    theirs.register_table(lns.RegisterTableRequest(id=["ns1", "reg"], location="reg_dir"))
    ours = DirectoryNamespace(str(tmp_path))
    assert ours.list_namespaces([]).items == ["ns1"]
    assert ours.describe_namespace(["ns1"]).properties == {"owner": "me"}
    assert ours.list_tables([]).items == ["t1"]
    assert ours.list_tables(["ns1"]).items == ["d", "reg", "t2"]
    t2 = ours.describe_table(["ns1", "t2"])
    assert t2.version == 1 and t2.properties == {"p": "q"} and t2.schema == DATA.schema
    assert ours.describe_table(["ns1", "d"]).declared_only
    assert ours.describe_table(["ns1", "reg"]).location == str(tmp_path / "reg_dir")
    ours.drop_table(["ns1", "t2"])
    ours.drop_table(["ns1", "d"])
    ours.deregister_table(["ns1", "reg"])
    assert theirs.list_tables(lns.ListTablesRequest(id=["ns1"])).tables == []
    ours.drop_namespace(["ns1"])
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == []


def test_native_keeps_working_on_a_root_with_views(tmp_path):
    """Native sees our views as declared tables and keeps writing; we keep our views through it."""
    ours = DirectoryNamespace(str(tmp_path))
    ours.create_namespace(["a"])
    ours.create_table(["a", "t"], DATA)
    ours.create_view(["a", "v"], "select * from a.t", [["a", "t"]], {"doc": "d"})
    ours.create_view(["top"], "select 1")
    theirs = native(tmp_path)
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == ["a"]
    assert theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables == ["t", "v"]
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == ["top"]
    view_as_table = theirs.describe_table(
        lns.DescribeTableRequest(id=["a", "v"], load_detailed_metadata=True, check_declared=True)
    )
    assert view_as_table.is_only_declared and view_as_table.properties["lancens.view"] == "true"
    # native writes on the root: create, declare, drop, namespaces
    theirs.create_table(lns.CreateTableRequest(id=["a", "n"]), ipc(DATA))
    theirs.declare_table(lns.DeclareTableRequest(id=["a", "d"]))
    theirs.create_namespace(lns.CreateNamespaceRequest(id=["b"]))
    theirs.drop_table(lns.DropTableRequest(id=["a", "t"]))
    for taken in (["a", "v"], ["top"]):
        try:
            theirs.declare_table(lns.DeclareTableRequest(id=taken))
            raise AssertionError(f"native declared over the view {taken}")
        except lns.errors.LanceNamespaceError as exc:
            assert int(exc.code) == 5
    # our views survived native's whole-manifest rewrites, dependencies included
    view = ours.describe_view(["a", "v"])
    assert (view.sql, view.base_objects, view.properties) == ("select * from a.t", [["a", "t"]], {"doc": "d"})
    assert ours.list_views([]).items == ["top"] and ours.list_views(["a"]).items == ["v"]
    assert ours.list_tables(["a"]).items == ["d", "n"] and ours.list_tables([]).items == []
    assert ours.describe_table(["a", "n"]).version == 1 and ours.describe_table(["a", "d"]).declared_only
    # our writes after native's, then native drops a view like any declared table
    ours.create_view(["b", "w"], "select * from a.n", [["a", "n"]])
    ours.drop_view(["top"])
    assert theirs.list_tables(lns.ListTablesRequest(id=["b"])).tables == ["w"]
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == []
    theirs.drop_table(lns.DropTableRequest(id=["a", "v"]))
    assert ours.list_views(["a"]).items == [] and ours.list_tables(["a"]).items == ["d", "n"]
    assert theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables == ["d", "n"]


def test_native_sees_renamed_root_table(tmp_path):
    ours = DirectoryNamespace(str(tmp_path), dir_listing_enabled=False)
    ours.create_table(["t"], DATA)
    ours.rename_table(["t"], ["u"])
    theirs = native_ns.DirectoryNamespace(root=str(tmp_path), dir_listing_enabled="false")
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == ["u"]
    location = theirs.describe_table(lns.DescribeTableRequest(id=["u"])).location
    assert lance.dataset(location).count_rows() == 3


def test_native_reads_a_chain_published_with_its_index(tmp_path):
    """A staged write and the index staged on top of it (an atomic dbt run), published in one
    commit: native pylance lists both versions and opens the latest with its index."""
    ours = DirectoryNamespace(str(tmp_path))
    ours.alter_namespace_properties([], {"table_version_management": "true"})
    data = pa.table({"id": pa.array(range(100), pa.int64())})
    location = ours.table_location(["t"])
    operation = lance.LanceOperation.Overwrite(data.schema, lance.fragment.write_fragments(data, location))
    rows = ours.stage_table_commit(["t"], operation, None, location=location)
    shutil.copytree(f"{location}/data", tmp_path / "copy" / "data")  # the run's readable copy
    copy = lance.LanceDataset.commit(str(tmp_path / "copy"), operation)
    index = copy.create_index_uncommitted("id", "BTREE", name="id_idx", fragment_ids=[0], replace=True)
    shutil.copytree(tmp_path / "copy" / "_indices" / index.uuid, f"{location}/_indices/{index.uuid}")
    indexed = ours.stage_next_commit(rows, lance.LanceOperation.CreateIndex([index], []))
    assert ours.publish([rows, indexed]) == {("t",): 2}

    theirs = native(tmp_path)
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == ["t"]
    versions = theirs.list_table_versions(lns.ListTableVersionsRequest(id=["t"])).versions
    assert sorted(v.version for v in versions) == [1, 2]
    described = theirs.describe_table(lns.DescribeTableRequest(id=["t"]))
    table = lance.dataset(described.location)
    assert table.version == 2 and [i.name for i in table.describe_indices()] == ["id_idx"]
    assert table.to_table(filter="id = 42")["id"].to_pylist() == [42]
