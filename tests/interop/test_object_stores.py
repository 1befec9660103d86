"""The engine on s3:// (moto's real S3 server) and memory:// roots."""

from __future__ import annotations

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa

from dbt.adapters.lancens.namespace import DirectoryNamespace

DATA = pa.table({"id": [1, 2, 3]})


def test_s3_full_cycle(s3_server):
    root = s3_server.uri("engine-cycle")
    props = {"root": root, **{f"storage.{k}": v for k, v in s3_server.storage_options.items()}}
    ns = DirectoryNamespace.from_properties(props)
    ns.create_namespace(["a"], {"k": "v"})
    ns.create_table(["t"], DATA)
    child = ns.create_table(["a", "c"], DATA, {"p": "q"})
    ns.declare_table(["a", "d"])
    assert ns._context.fs.read_bytes(ns.table_location(["a", "d"]) + "/.lance-reserved") == b"reserved"
    assert ns.list_tables([]).items == ["t"] and ns.list_tables(["a"]).items == ["c", "d"]
    assert lance.dataset(child.location, storage_options=ns.storage_options).count_rows() == 3
    renamed = ns.rename_table(["t"], ["u"])  # object store: shallow clone, no data copy
    assert lance.dataset(renamed.location, storage_options=ns.storage_options).count_rows() == 3
    assert ns.list_tables([]).items == ["u"]
    other = DirectoryNamespace.from_properties(ns.properties)
    assert other.describe_table(["a", "c"]).properties == {"p": "q"}
    ns.drop_table(["u"])
    assert not ns._context.fs.exists(root + "/t.lance") and not ns._context.fs.exists(renamed.location)
    theirs = native_ns.DirectoryNamespace(**props)
    assert theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables == ["c", "d"]


def test_s3_put_if_not_exists_is_conditional(s3_server):
    ns = DirectoryNamespace(s3_server.uri("engine-put"), storage_options=s3_server.storage_options)
    path = ns.root + "/x/marker"
    ns._context.fs.put_if_not_exists(path, b"one")
    try:
        ns._context.fs.put_if_not_exists(path, b"two")
        raise AssertionError("second put must fail")
    except FileExistsError:
        pass
    assert ns._context.fs.read_bytes(path) == b"one"


def test_memory_root_manifest_mode(tmp_path):
    ns = DirectoryNamespace("memory://engine-mem", dir_listing_enabled=False)
    ns.create_namespace(["a"])
    info = ns.create_table(["a", "t"], DATA)
    assert ns.list_tables(["a"]).items == ["t"]
    assert ns.describe_table(["a", "t"]).version == 1
    assert lance.dataset(info.location, session=ns.lance_session).count_rows() == 3
