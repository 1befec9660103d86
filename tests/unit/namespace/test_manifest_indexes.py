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

    # a thread that dies fails the process, and its traceback (stderr) reaches the test's assertion
    failed = []
    threading.excepthook = lambda args: failed.append(args) or threading.__excepthook__(args)
    workers = [threading.Thread(target=append, args=(first,)) for first in range(1, threads + 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    sys.exit(1 if failed else 0)
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


def test_manifest_files_stay_bounded_over_many_commits_and_native_reads_everything(tmp_path):
    """Every commit used to add a fragment and a deletion file, and a full read GETs them all
    (17 commits: 17 fragments, 16 deletion files; up to 64 of each before the first compaction;
    then up to 15 files between compactions at 10 fragments)."""
    ns = make(str(tmp_path))
    ns.create_namespace(["a"])
    ns.create_namespace(["b"])
    seen = []
    for i in range(300):  # creates in two namespaces, views, property changes and drops
        ns.create_table(["a" if i % 2 else "b", f"t{i}"], rows(1))
        if i % 25 == 24:
            ns.create_view(["a", f"v{i}"], "select 1", [["b", f"t{i - 1}"]])
            ns.alter_namespace_properties(["a"], {"at": str(i)})
        if i % 7 == 6:
            ns.drop_table(["a" if (i - 2) % 2 else "b", f"t{i - 2}"])
        seen.append(maintenance.files(_manifest(tmp_path)))
    worst = {key: max(files[key] for files in seen) for key in seen[0]}
    # one indexed fragment, its deletion file and the tail's one fragment
    most = max(files["data_files"] + files["deletion_files"] for files in seen)
    assert most <= maintenance.MOST_FILES, seen
    assert worst["fragments"] < maintenance.COMPACT_AT_FRAGMENTS, worst
    assert worst["deletion_files"] < maintenance.COMPACT_AT_FRAGMENTS, worst
    assert worst["data_files"] == worst["fragments"], worst
    manifest = _manifest(tmp_path)
    assert max(maintenance.coverage(manifest).values()) < maintenance.UNINDEXED_ROWS
    stored = sum(fragment.metadata.physical_rows for fragment in manifest.get_fragments())
    deleted = stored - manifest.count_rows()  # drops do not pile up either
    assert deleted < max(maintenance.UNINDEXED_ROWS, maintenance.DELETED_SHARE * stored), (deleted, stored)

    dropped = {f"t{i - 2}" for i in range(300) if i % 7 == 6}
    tables = {
        name: [f"t{i}" for i in range(300) if (i % 2 == (name == "a")) and f"t{i}" not in dropped]
        for name in "ab"
    }
    assert ns.list_tables(["a"]).items == sorted(tables["a"])
    assert ns.describe_namespace(["a"]).properties == {"at": "299"}
    fresh = make(str(tmp_path))  # a cold reader: what is on disk, not our cache
    assert fresh.list_tables(["b"]).items == sorted(tables["b"])
    assert len(fresh.list_views(["a"]).items) == 12
    theirs = native_ns.DirectoryNamespace(root=str(tmp_path))
    listed = theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables
    assert sorted(listed) == sorted([*tables["a"], *(f"v{i}" for i in range(24, 300, 25))])
    assert theirs.list_tables(lns.ListTablesRequest(id=["b"])).tables == sorted(tables["b"])
    assert theirs.list_namespaces(lns.ListNamespacesRequest(id=[])).namespaces == ["a", "b"]
    for name in tables["b"][::15]:
        described = theirs.describe_table(
            lns.DescribeTableRequest(id=["b", name], load_detailed_metadata=True)
        )
        assert described.version == 1
        assert described.location.endswith(ns.describe_table(["b", name]).location.rsplit("/", 1)[1])


def test_a_small_manifest_is_one_fragment_without_deletion_files(tmp_path):
    """Up to ``SMALL_ROWS`` rows every insert or replace rewrites the manifest whole: a full read (the
    start of every process) fetches one data file, whatever the commits that made it; past it the
    tail rules take over and the indexes catch up."""
    ns = make(str(tmp_path))
    ns.create_namespace(["a"])
    ns.create_namespace(["b"])
    for i in range(maintenance.SMALL_ROWS - 2):
        ns.create_table(["a" if i % 2 else "b", f"t{i}"], rows(1))
        if i % 5 == 4:
            ns.alter_namespace_properties(["a"], {"at": str(i)})
        assert maintenance.files(_manifest(tmp_path)) == {
            "fragments": 1,
            "data_files": 1,
            "deletion_files": 0,
        }, i
    theirs = native_ns.DirectoryNamespace(root=str(tmp_path))
    assert (
        len(theirs.list_tables(lns.ListTablesRequest(id=["a"])).tables) == (maintenance.SMALL_ROWS - 2) // 2
    )
    for i in range(maintenance.SMALL_ROWS, maintenance.SMALL_ROWS + 40):
        ns.create_table(["a", f"t{i}"], rows(1))
    manifest = _manifest(tmp_path)
    assert max(maintenance.coverage(manifest).values()) < maintenance.UNINDEXED_ROWS
    assert len(manifest.get_fragments()) < maintenance.COMPACT_AT_FRAGMENTS


def test_a_reader_of_an_older_manifest_version_keeps_reading_it_after_compaction(tmp_path):
    """Upkeep commits new versions and deletes nothing: a version opened before a compaction (by
    another process, or a pinned ``snapshot()``) reads exactly what it read before."""
    ns = make(str(tmp_path))
    ns.create_namespace(["n"])
    old = None
    for i in range(200):
        ns.create_table(["n", f"t{i}"], rows(1))
        if i == 20:
            old = _manifest(tmp_path)
            before = sorted(old.to_table(columns=["object_id"])["object_id"].to_pylist())
    compactions = [
        v["version"]
        for v in _manifest(tmp_path).versions()
        if v["version"] > old.version and "Rewrite" in _operation(old, v["version"])
    ]
    assert compactions, "no compaction ran after the old version was opened"
    assert sorted(old.to_table(columns=["object_id"])["object_id"].to_pylist()) == before
    pinned = lance.dataset(str(tmp_path / "__manifest"), version=old.version)
    assert sorted(pinned.to_table(columns=["object_id"])["object_id"].to_pylist()) == before


def _operation(dataset: lance.LanceDataset, version: int) -> str:
    try:
        return type(dataset.read_transaction(version).operation).__name__
    except TypeError:  # pylance 14 cannot build a Rewrite's remapped indexes in Python
        return "Rewrite"


def test_upkeep_that_lost_a_race_is_skipped_and_loses_no_row(tmp_path, monkeypatch):
    """A compaction planned on a version another writer has moved on from (a drop deleted a row
    in a fragment it rewrites) is refused by Lance; upkeep skips it and the drop stands."""
    monkeypatch.setattr(maintenance, "SMALL_ROWS", 0)  # fragments to compact, as racing writers leave
    monkeypatch.setattr(maintenance, "carried_rows", lambda dataset, written: [])
    ns = make(str(tmp_path))
    ns.create_namespace(["n"])
    for i in range(6):
        ns.create_table(["n", f"t{i}"], rows(1))
    stale = _manifest(tmp_path)
    ns.drop_table(["n", "t2"])
    ns.create_table(["n", "x"], rows(1))
    latest = _manifest(tmp_path)
    monkeypatch.setattr(maintenance, "COMPACT_AT_FRAGMENTS", 1)  # the stale version is due
    assert maintenance.upkeep(stale) is False
    after = _manifest(tmp_path)  # at most Lance's fragment-id reservation landed, no rewrite
    assert after.version <= latest.version + 1
    assert after.get_fragments()[-1].fragment_id == latest.get_fragments()[-1].fragment_id
    assert make(str(tmp_path)).list_tables(["n"]).items == ["t0", "t1", "t3", "t4", "t5", "x"]
