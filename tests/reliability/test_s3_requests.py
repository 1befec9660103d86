"""Object-store requests of the engine on S3, counted by the benchmark's logging moto server.

Counts are exact and repeatable, so they are asserted as upper bounds that catch a regression (a
dbt step's counts: ``benchmarks/object_store.py``, docs/benchmarks.md). Next to each bound the
caches are checked from the other side: a commit of another writer is seen by the next call, and a
lost ``__manifest`` version file is refused, never read as an older namespace.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors, layout

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
