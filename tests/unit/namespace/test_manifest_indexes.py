"""The spec's three ``__manifest`` indexes: kept current at amortised cost, created on native
manifests, used for lookups in large manifests, and no obstacle to native pylance."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import maintenance
from dbt.adapters.lancens.namespace.manifest import POINT_LOOKUP_ROWS
from tests.unit.namespace.helpers import make, rows

SPEC_INDEXES = {"object_id_btree", "object_type_bitmap", "base_objects_label_list"}


def _manifest(root) -> lance.LanceDataset:
    return lance.dataset(str(root / "__manifest"))


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def test_indexes_stay_current_at_amortised_cost(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["n"])
    creates = 70
    for i in range(creates):
        ns.create_table(["n", f"t{i}"], rows(1))
        if i % 10 == 9:
            ns.create_view(["n", f"v{i}"], "select 1", [["n", f"t{i}"]])
    manifest = _manifest(tmp_path)
    assert {index.name for index in manifest.describe_indices()} == SPEC_INDEXES
    unindexed = maintenance.coverage(manifest)
    assert max(unindexed.values()) < maintenance.UNINDEXED_ROWS, unindexed  # was 71 of 71
    assert len(manifest.get_fragments()) < maintenance.COMPACT_AT_FRAGMENTS
    # Upkeep is amortised: a handful of extra commits, not one per write.
    writes = 1 + creates + creates // 10
    upkeep = len(manifest.versions()) - 1 - writes  # minus the creation of the empty manifest
    assert 3 <= upkeep <= 3 + writes // maintenance.UNINDEXED_ROWS + writes // 32, upkeep
    # and what the indexes answer is what the table holds
    views = manifest.to_table(filter="array_has_any(base_objects, ['n$t9'])")["object_id"].to_pylist()
    assert views == ["n$v9"]
    assert manifest.count_rows(filter="object_type = 'namespace'") == 1


# Run in a child process: the failure these guard against aborts the interpreter.
MANAGED_COMMITS = textwrap.dedent(
    """
    import sys
    import threading

    import lance
    import pyarrow as pa

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    root, commits, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ns = DirectoryNamespace(root)
    ns.alter_namespace_properties([], {"table_version_management": "true"})
    ns.create_namespace(["n"])
    ns.create_table(["n", "t"], pa.table({"id": [0]}))

    def append(first):
        for i in range(first, commits + 1, threads):
            info = ns.describe_table(["n", "t"])
            files = lance.fragment.write_fragments(pa.table({"id": [i]}), info.location)
            ns.commit_table(["n", "t"], lance.LanceOperation.Append(files), read_version=info.version)

    workers = [threading.Thread(target=append, args=(first,)) for first in range(1, threads + 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    """
)


@pytest.mark.parametrize("threads", [1, 2])
def test_managed_table_commits_survive_lance_calling_back_from_its_threads(tmp_path, threads):
    """Under table version management Lance calls the engine back from its own native threads while
    it commits a table version, and the engine calls Lance again (``__manifest`` reads, inserts and
    upkeep). pylance aborted the process with a fatal GIL error at the first upkeep inside such a
    callback (the 16th commit) and as soon as two threads committed at once; the callbacks now run
    on Python threads. Appends from two threads are rebased by Lance: every row arrives."""
    commits = 70  # past both upkeep thresholds: index optimisation, then compaction
    done = subprocess.run(
        [sys.executable, "-c", MANAGED_COMMITS, str(tmp_path), str(commits), str(threads)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ns = make(str(tmp_path))
    assert ns.describe_table_version(["n", "t"]).version == commits + 1
    table = lance.dataset(ns.describe_table(["n", "t"]).location)
    assert sorted(table.to_table()["id"].to_pylist()) == list(range(commits + 1))
    manifest = _manifest(tmp_path)
    assert max(maintenance.coverage(manifest).values()) < maintenance.UNINDEXED_ROWS
    assert len(manifest.get_fragments()) < maintenance.COMPACT_AT_FRAGMENTS


def test_indexes_are_created_on_a_native_manifest_and_native_still_reads_it(tmp_path):
    theirs = native_ns.DirectoryNamespace(root=str(tmp_path))
    theirs.create_namespace(lns.CreateNamespaceRequest(id=["a"]))
    theirs.create_table(lns.CreateTableRequest(id=["a", "t"]), _ipc(rows()))
    assert _manifest(tmp_path).describe_indices() == []  # native builds none by default
    ours = make(str(tmp_path))
    ours.create_table(["a", "u"], rows())
    manifest = _manifest(tmp_path)
    assert {index.name for index in manifest.describe_indices()} == SPEC_INDEXES
    assert max(maintenance.coverage(manifest).values()) == 0
    assert theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables == ["t", "u"]
    described = theirs.describe_table(lns.DescribeTableRequest(id=["a", "u"], load_detailed_metadata=True))
    assert described.version == 1
    theirs.create_table(lns.CreateTableRequest(id=["a", "v"]), _ipc(rows()))  # native writes on
    ours.create_namespace(["b"])  # and our next write restores what native's rewrite dropped
    assert {index.name for index in _manifest(tmp_path).describe_indices()} == SPEC_INDEXES
    assert ours.list_tables(["a"]).items == ["t", "u", "v"]
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == ["a", "b"]


def test_lookups_in_a_large_manifest_are_index_queries_not_full_reads(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["big"])
    per_commit = 60
    for batch in range(POINT_LOOKUP_ROWS // per_commit + 1):
        ns._context.manifest.insert(
            [
                {"object_id": f"big$c{batch * per_commit + i}", "object_type": "namespace"}
                for i in range(per_commit)
            ]
        )
    ns.create_table(["big", "t"], rows())
    manifest = _manifest(tmp_path)
    assert manifest.count_rows() > POINT_LOOKUP_ROWS
    plan = manifest.scanner(filter="object_id = 'big$t'").explain_plan()
    assert "ScalarIndexQuery" in plan and "object_id_btree" in plan

    fresh = make(str(tmp_path))  # a new process's view: nothing cached
    assert fresh.describe_table(["big", "t"]).version == 1
    assert fresh.table_exists(["big", "t"]) and not fresh.table_exists(["big", "c7"])
    assert fresh.namespace_exists(["big", "c7"])
    assert fresh._context.manifest._cached.version == 0  # answered by point queries, no full read
    names = fresh.list_namespaces(["big"], limit=3)  # a listing reads (and caches) the version
    assert names.items == ["c0", "c1", "c10"] and names.next_page_token == "c10"
    assert fresh._context.manifest._cached.version == manifest.version
