"""Object-store requests of the engine on S3, counted by the benchmark's logging moto server.

Counts are exact and repeatable, so they are asserted as upper bounds that catch a regression (a
dbt step's counts: ``benchmarks/object_store.py``, docs/benchmarks.md). Next to each bound the
caches are checked from the other side: a commit of another writer is seen by the next call, and a
lost ``__manifest`` version file is refused, never read as an older namespace.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from functools import partial
from pathlib import Path

import boto3
import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors, layout, maintenance
from tests.reliability.helpers import DBT, dbt_env

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import object_store  # noqa: E402  (the benchmark's logging server and dbt project)

pytestmark = pytest.mark.s3

DATA = pa.table({"id": [1, 2, 3]})


@pytest.fixture(scope="module")
def logged_s3() -> Iterator[tuple[object_store.RequestLog, dict[str, str]]]:
    with object_store.s3_server() as served:
        yield served


def _namespace(options: dict[str, str], prefix: str) -> DirectoryNamespace:
    root = f"s3://{object_store.BUCKET}/{prefix}"
    storage = {f"storage.{k}": v for k, v in options.items()}
    return DirectoryNamespace.from_properties({"root": root, **storage})


def _requests(log: object_store.RequestLog, call) -> int:
    log.reset()
    call()
    return log.count()


def test_warm_engine_reads_cost_one_check(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "warm")
    writer.create_namespace(["a"])
    writer.create_table(["a", "t"], DATA)
    reader = DirectoryNamespace.from_properties(writer.properties)
    reader.describe_table(["a", "t"])  # a new process: reads the catalog and opens the table once

    # one __manifest version check; a table adds one listing of its _versions/
    assert _requests(log, lambda: reader.list_tables(["a"])) <= 1
    assert _requests(log, lambda: reader.list_namespaces([])) <= 1
    assert _requests(log, lambda: reader.describe_table(["a", "t"])) <= 2
    assert _requests(log, lambda: reader.table_exists(["a", "t"])) <= 2


def test_caches_never_hide_another_writers_commit(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "fresh")
    writer.create_namespace(["a"])
    table = writer.create_table(["a", "t"], DATA)
    reader = DirectoryNamespace.from_properties(writer.properties)
    assert reader.list_tables(["a"]).items == ["t"] and reader.describe_table(["a", "t"]).version == 1

    writer.create_table(["a", "u"], DATA)
    lance.write_dataset(DATA, table.location, mode="append", storage_options=writer.storage_options)
    assert reader.list_tables(["a"]).items == ["t", "u"]
    described = reader.describe_table(["a", "t"])
    assert described.version == 2
    dataset = lance.dataset(described.location, version=described.version, storage_options=options)
    assert dataset.count_rows() == 6
    writer.drop_table(["a", "u"])
    assert not reader.table_exists(["a", "u"])


def _append(dataset: lance.LanceDataset, options: dict[str, str]) -> lance.LanceOperation.Append:
    written = lance.fragment.write_fragments(DATA, dataset, mode="append", storage_options=options)
    return lance.LanceOperation.Append(written)


def test_a_new_process_reads_a_small_catalog_in_three_requests(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "small")
    writer.create_namespace(["a"])
    writer.create_namespace(["b"])
    for i in range(10):
        writer.create_table(["a" if i % 2 else "b", f"t{i}"], DATA)
    writer.alter_namespace_properties(["a"], {"owner": "bi"})  # a replace among the inserts
    reader = DirectoryNamespace.from_properties(writer.properties)
    # Lance's listing of _versions/, the manifest's GET (no HEAD: the listing gives its size) and
    # its one data file (was 10: 4 data and 3 deletion files at 12 tables, then 4 with a HEAD)
    assert _requests(log, lambda: reader.list_namespaces([])) <= 3
    assert reader.list_tables(["a"]).items == ["t1", "t3", "t5", "t7", "t9"]


def test_a_new_process_reads_a_grown_catalog_in_a_bounded_number_of_requests(logged_s3, tmp_path) -> None:
    """Past the small manifest, the start of every process (a full read of ``__manifest``) costs
    the listing, the manifest and one GET per data and deletion file, and upkeep keeps those at one
    indexed fragment and a short tail: the count stays under one bound however many commits
    came before (it followed the compaction cycle up to 10 fragments: 14 requests at 300 tables,
    23 at 1,000). The root is grown locally and copied up; the commits measured run on S3."""
    log, options = logged_s3
    grown = DirectoryNamespace(str(tmp_path))
    for n in range(5):
        grown.create_namespace([f"n{n}"])
    for i in range(maintenance.SMALL_ROWS + 16):
        grown.create_table([f"n{i % 5}", f"t{i}"], DATA)
    # only the latest __manifest version is copied up (its old versions are most of the files)
    lance.dataset(str(tmp_path / "__manifest")).cleanup_old_versions(older_than=timedelta(0))
    s3 = boto3.client(
        "s3",
        endpoint_url=options["endpoint"],
        region_name=options["region"],
        aws_access_key_id=options["access_key_id"],
        aws_secret_access_key=options["secret_access_key"],
    )
    for path in tmp_path.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), object_store.BUCKET, f"grown/{path.relative_to(tmp_path)}")
    writer = _namespace(options, "grown")
    cached_properties = {**writer.properties, "catalog_cache_dir": str(tmp_path.parent / "catalog-cache")}
    seen, files, cached, again = [], [], [], []
    for i in range(maintenance.SMALL_ROWS + 16, maintenance.SMALL_ROWS + 16 + 24):
        writer.create_table([f"n{i % 5}", f"t{i}"], DATA)
        reader = DirectoryNamespace.from_properties(writer.properties)
        seen.append(_requests(log, partial(reader.list_namespaces, [])))
        assert reader.list_tables(["n0"]).items == sorted(f"t{k}" for k in range(0, i + 1, 5))
        manifest = lance.dataset(f"{writer.properties['root']}/__manifest", storage_options=options)
        files.append(sum(maintenance.files(manifest)[kind] for kind in ("data_files", "deletion_files")))
        # with the catalog cache (as a dbt process has on S3): what changed since this machine's last read
        for counts in (cached, again):
            cached_reader = DirectoryNamespace.from_properties(cached_properties)
            counts.append(_requests(log, partial(cached_reader.list_namespaces, [])))
            assert cached_reader.list_tables(["n0"]).items == reader.list_tables(["n0"]).items
    # the listing, the manifest, one GET per file; the files are what upkeep bounds
    assert seen == [2 + count for count in files], (seen, files)
    assert max(files) <= maintenance.MOST_FILES, files
    # cached: the first read fetches everything; after it only what changed: the new tail (a
    # create carries the tail into a new fragment, a fold makes one small fragment) and, when the
    # create rewrote its parent's row out of the indexed fragment, that fragment's deletion file
    # (its row addresses, never its data); with no commit between, no file at all
    assert cached[0] == seen[0] and set(cached[1:]) == {3, 4}, str((cached, seen, files))
    assert again == [2] * len(again), again


def test_commit_on_a_known_version_and_the_reads_after_it(logged_s3) -> None:
    log, options = logged_s3
    ns = _namespace(options, "commit")
    ns.create_namespace(["a"])
    ns.create_table(["a", "t"], DATA)
    ns.create_view(["a", "v"], "select 1")
    info = ns.describe_table(["a", "t"])
    assert info.version is not None
    operation = _append(ns.dataset_at(info.location, info.version), ns.storage_options)

    # one __manifest check, then Lance's listing of newer versions and its two PUTs: the table is
    # not resolved by a listing, and Lance does not open the latest version itself
    assert _requests(log, lambda: ns.commit_table(["a", "t"], operation, read_version=info.version)) <= 4
    # the version this process committed is served from memory: the two version checks only
    assert _requests(log, lambda: ns.describe_table(["a", "t"])) <= 2
    assert _requests(log, lambda: ns.dataset_at(info.location, info.version + 1)) == 0
    assert _requests(log, lambda: ns.describe_view(["a", "v"])) <= 1


def test_a_table_without_data_is_told_by_one_listing(logged_s3) -> None:
    log, options = logged_s3
    ns = _namespace(options, "declared")
    ns.create_namespace(["a"])
    ns.declare_table(["a", "d"])
    ns.list_tables(["a"])
    # one __manifest check, one listing of the empty _versions/ (no second listing to confirm it)
    assert _requests(log, lambda: ns.table_exists(["a", "d"])) <= 2
    assert ns.describe_table(["a", "d"]).declared_only


def test_a_commit_on_a_cached_version_never_loses_another_writers_commit(logged_s3) -> None:
    _, options = logged_s3
    ours = _namespace(options, "stale")
    ours.create_namespace(["a"])
    ours.create_table(["a", "t"], DATA)
    info = ours.describe_table(["a", "t"])
    assert info.version is not None
    appended = _append(ours.dataset_at(info.location, info.version), ours.storage_options)

    # another process commits on top of the version this process holds in memory
    lance.write_dataset(DATA, info.location, mode="append", storage_options=ours.storage_options)
    # an append built on the older version is rebased by Lance: both appends are kept
    version = ours.commit_table(["a", "t"], appended, read_version=info.version)
    assert version == info.version + 2
    assert ours.describe_table(["a", "t"]).version == version
    assert lance.dataset(info.location, storage_options=options).count_rows() == 9

    # another process replaces the rows after the version this process committed (and keeps)
    later = _append(ours.dataset_at(info.location, version), ours.storage_options)
    lance.write_dataset(DATA, info.location, mode="overwrite", storage_options=ours.storage_options)
    # an append built on our own, now older, version conflicts (14): nothing of it lands
    with pytest.raises(errors.ConcurrentModificationError):
        ours.commit_table(["a", "t"], later, read_version=version)
    assert lance.dataset(info.location, storage_options=options).count_rows() == 3
    assert ours.describe_table(["a", "t"]).version == version + 1


def test_our_own_manifest_commit_raises_the_rollback_floor(logged_s3) -> None:
    _, options = logged_s3
    ns = _namespace(options, "ownfloor")
    ns.create_namespace(["a"])
    ns.create_namespace(["b"])  # this process committed this version and read nothing after it
    versions = f"{ns.root}/__manifest/{layout.VERSIONS_DIR}"
    newest = sorted(ns.storage.names(versions))[0]
    ns.storage.rm(f"{versions}/{newest}")
    with pytest.raises(errors.InternalError, match="rolled-back namespace"):
        ns.list_namespaces([])


def test_lost_manifest_version_is_refused_on_s3(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "rollback")
    writer.create_namespace(["a"])
    writer.create_namespace(["b"])
    assert writer.list_namespaces([]).items == ["a", "b"]
    versions = f"{writer.root}/__manifest/{layout.VERSIONS_DIR}"
    newest = sorted(writer.storage.names(versions))[0]  # V2 naming: the newest sorts first
    writer.storage.rm(f"{versions}/{newest}")
    with pytest.raises(errors.InternalError, match="rolled-back namespace"):
        writer.list_namespaces([])


def test_a_new_process_opens_a_table_without_a_head(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "nohead")
    writer.create_namespace(["a"])
    writer.create_table(["a", "t"], DATA)
    reader = DirectoryNamespace.from_properties(writer.properties)
    reader.list_tables(["a"])  # the catalog, read once
    log.reset()
    info = reader.describe_table(["a", "t"])
    # one __manifest check, then Lance's own open of the latest version: the table's listing gives
    # the manifest's size, so its GET needs no HEAD (an open by version number would)
    assert [method for method, _, _ in log.requests].count("HEAD") == 0
    assert log.count() <= 3
    assert _requests(log, lambda: reader.latest_version_at(info.location, ["a", "t"])) == 1
    lance.write_dataset(DATA, info.location, mode="append", storage_options=writer.storage_options)
    assert reader.latest_version_at(info.location, ["a", "t"]) == 2


def test_shared_reads_ask_nothing_of_the_catalog(logged_s3) -> None:
    log, options = logged_s3
    writer = _namespace(options, "shared")
    writer.create_namespace(["a"])
    writer.create_table(["a", "t"], DATA)
    reader = DirectoryNamespace.from_properties(writer.properties)
    reader.share_reads()

    def shared(call):
        def read():
            with reader.consistent_reads(shared=True):
                return call()

        return read

    assert shared(lambda: reader.list_namespaces([]))().items == ["a"]
    assert _requests(log, shared(lambda: reader.list_namespaces([]))) == 0
    assert _requests(log, shared(lambda: reader.list_tables(["a"]))) == 0
    # a table's version is still found anew (its listing; the manifest's GET the first time)
    assert _requests(log, shared(lambda: reader.describe_table(["a", "t"]))) <= 2
    writer.create_table(["a", "u"], DATA)
    assert shared(lambda: reader.list_tables(["a"]))().items == ["t"]
    assert reader.list_tables(["a"]).items == ["t", "u"]  # a read that does not ask for it
    reader.end_shared_reads()
    assert shared(lambda: reader.list_tables(["a"]))().items == ["t", "u"]


@pytest.mark.parametrize("spark_connector", ["auto", "python"])
def test_a_model_build_stays_within_its_request_budget(
    logged_s3, tmp_path: Path, setup_dbt, spark_connector: str
) -> None:
    """A model build's requests, a new version of an existing table, on both read paths (auto is
    the JVM connector): pylance's 6 requests for the same commit plus 15. The Python path took 18
    (table) and 18 (append) at 044e6f2; the JVM path 24 and 26 at 7ac8c1a, when lance-core's read
    check and the scan's planning each opened every table, then 21 and 23 once they shared one
    open, and fewer since the read tasks use it too (docs/jvm-connector.md, "What the check
    costs"). Each measured step is one new dbt process, its JVM and Python workers included."""
    log, options = logged_s3
    root = f"s3://{object_store.BUCKET}/budget-{spark_connector}"
    project = object_store.Project.write(tmp_path / "project", root, options, spark_connector)

    def dbt(*args: str) -> None:
        command = [DBT, *args, "--profiles-dir", str(project.path), "--project-dir", str(project.path)]
        done = subprocess.run(command, cwd=project.path, env=dbt_env(), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-4000:]

    setup_dbt.succeed([[str(project.path), "build", "-s", "raw_rows", "table_model", "append_model"]])
    counts = {}
    for model in ("table_model", "append_model"):
        log.reset()
        dbt("run", "-s", model)
        counts[model] = log.count()
    assert counts["table_model"] <= 21 and counts["append_model"] <= 21, counts
    table = DirectoryNamespace.from_properties(
        {"root": project.root, **{f"storage.{k}": v for k, v in options.items()}}
    ).describe_table(["bench", "append_model"])
    assert lance.dataset(table.location, storage_options=options).count_rows() == 2 * object_store.SEED_ROWS


def _manifest_gets(log: object_store.RequestLog) -> int:
    return sum(1 for method, key, _ in log.requests if method == "GET" and key.endswith(".manifest"))


def test_a_catalog_read_opens_lance_core_once(logged_s3, spark) -> None:
    """The JVM connector's read check and the scan's planning share one lance-core open of a
    version (Datasets holds it): a pinned version's manifest is fetched once for both, and a read
    of the latest asks again only which version is the latest (one listing), so another writer's
    commit since is still read. Before, each of them opened the table (a HEAD or LIST and a GET)."""
    from dbt.adapters.lancens.runtime.session_catalog import SessionCatalog
    from dbt.adapters.lancens.spark import jvm_connector

    log, options = logged_s3
    uri = f"s3://{object_store.BUCKET}/opened-once/t.lance"
    lance.write_dataset(DATA, uri, storage_options=options)
    lance.write_dataset(DATA, uri, mode="append", storage_options=options)
    schema = lance.dataset(uri, storage_options=options).schema
    catalog = SessionCatalog(spark, spark.sql, options, "unused:hook", lambda _: {}, jvm_reads=True)

    def planned(name: str) -> str:
        return spark.sql(f"SELECT id FROM opened_once.{name}")._jdf.queryExecution().executedPlan().toString()

    log.reset()
    assert catalog.register_table(["opened_once", "latest"], uri, schema=schema)
    assert "LanceScan[" in planned("latest")
    # the check opens the latest (LIST, GET); the planning lists _versions/ once more
    assert _manifest_gets(log) == 1 and log.count() == 3, log.requests

    log.reset()
    assert catalog.register_table(["opened_once", "pinned"], uri, 1, schema=schema)
    assert "LanceScan[" in planned("pinned")
    assert _manifest_gets(log) == 1 and log.count() == 2, log.requests  # HEAD and GET of version 1
    log.reset()
    assert "LanceScan[" in planned("pinned")  # planned again: the held version 1
    assert log.count() == 0, log.requests

    lance.write_dataset(DATA, uri, mode="append", storage_options=options)  # another writer
    assert spark.sql("SELECT count(*) AS n FROM opened_once.latest").first().n == 3 * DATA.num_rows
    assert spark.sql("SELECT count(*) AS n FROM opened_once.pinned").first().n == DATA.num_rows
    assert jvm_connector.unreadable(spark, uri, None, options) is None


def test_the_check_of_our_own_commit_opens_nothing(logged_s3, spark) -> None:
    """The version this process committed on a version lance-core read, with its schema and data
    files' version, is readable: its check opens nothing (it opened the table at that version, a
    LIST and a GET). The next check of the latest, after another writer's commit with a reader flag
    lance-core 7 does not know, opens that version and refuses it."""
    from dbt.adapters.lancens.spark import jvm_connector

    log, options = logged_s3
    uri = f"s3://{object_store.BUCKET}/own-commit/t.lance"
    base = lance.write_dataset(DATA, uri, storage_options=options)
    assert jvm_connector.unreadable(spark, uri, base.version, options) is None  # lance-core holds it
    ours = lance.write_dataset(DATA, uri, mode="append", storage_options=options)
    committed = jvm_connector.own_commit(base, ours)
    assert committed == (base.version, ours.version)
    log.reset()
    assert jvm_connector.unreadable(spark, uri, None, options, committed) is None
    assert log.count() == 0, log.requests

    # another writer commits after ours, with data files of another version (reader flag 256,
    # which lance-core 7 refuses): the next check of the latest opens it and refuses it
    fragments = lance.fragment.write_fragments(DATA, uri, data_storage_version="2.1", storage_options=options)
    lance.LanceDataset.commit(
        uri, lance.LanceOperation.Append(fragments), read_version=ours.version, storage_options=options
    )
    log.reset()
    assert "256" in (jvm_connector.unreadable(spark, uri, None, options) or "")
    assert _manifest_gets(log) == 1, log.requests
    # a commit not made directly on the base, or with another schema, is checked in full
    later = lance.write_dataset(pa.table({"id": ["a"]}), uri, mode="overwrite", storage_options=options)
    assert jvm_connector.own_commit(ours, later) is None
    assert jvm_connector.own_commit(base, later) is None
