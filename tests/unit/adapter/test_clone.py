"""Zero-copy clone on a real namespace (local disk with and without table version management, moto
S3): the clone reads the source's data files, copies none, and writes only under its own location."""

from __future__ import annotations

from datetime import timedelta

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations.clone import shallow_clone
from dbt.adapters.lancens.metadata import maintenance
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.versions import TVM_KEY

SOURCE = ["prod", "orders"]
CLONE = ["dev", "orders"]


@pytest.fixture(params=["local", "local-managed", "s3", "s3-managed"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    if request.param.startswith("local"):
        ns = DirectoryNamespace(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        ns = DirectoryNamespace(s3.uri(f"clone/{tmp_path.name}"), storage_options=s3.storage_options)
    if request.param.endswith("managed"):
        ns.alter_namespace_properties([], {TVM_KEY: "true"})
    ns.create_namespace(["prod"])
    ns.create_namespace(["dev"])
    ns.create_table(SOURCE, pa.table({"id": pa.array(range(10), pa.int64())}))
    return ns


def files_under(ns: DirectoryNamespace, location: str) -> list[str]:
    storage = Storage(ns.root, ns.storage_options)
    try:
        return sorted(storage.fs.find(location))
    except FileNotFoundError:
        return []


def dataset(ns: DirectoryNamespace, table: list[str]) -> lance.LanceDataset:
    return lance.dataset(ns.describe_table(table).location, storage_options=ns.storage_options or None)


def test_clone_shares_the_source_files_and_writes_its_own(namespace: DirectoryNamespace) -> None:
    source = namespace.describe_table(SOURCE)
    source_files = files_under(namespace, source.location)

    shallow_clone(namespace, SOURCE, CLONE)

    clone = namespace.describe_table(CLONE)
    assert clone.location != source.location and not clone.declared_only
    assert not [f for f in files_under(namespace, clone.location) if "/data/" in f]  # no data file copied
    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == list(range(10))

    # writes to the clone: an append, a delete, then a cleanup of the clone's old versions
    options = namespace.storage_options or None
    fragments = lance.fragment.write_fragments(
        pa.table({"id": pa.array([100], pa.int64())}), clone.location, storage_options=options
    )
    namespace.commit_table(CLONE, lance.LanceOperation.Append(fragments), read_version=clone.version)
    dataset(namespace, CLONE).delete("id < 5")
    maintenance.cleanup_table(
        namespace, CLONE, retain_versions=1, older_than=timedelta(0), grace=timedelta(0)
    )

    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == [5, 6, 7, 8, 9, 100]
    assert files_under(namespace, source.location) == source_files  # the source is untouched
    assert dataset(namespace, SOURCE).version == source.version
    assert sorted(dataset(namespace, SOURCE).to_table()["id"].to_pylist()) == list(range(10))


def test_clone_replaces_an_existing_target_and_refuses_itself(namespace: DirectoryNamespace) -> None:
    namespace.create_table(CLONE, pa.table({"other": pa.array(["x"])}))
    shallow_clone(namespace, SOURCE, CLONE)
    assert dataset(namespace, CLONE).schema.names == ["id"]
    with pytest.raises(errors.InvalidInputError, match="onto itself"):
        shallow_clone(namespace, SOURCE, SOURCE)
    with pytest.raises(errors.TableNotFoundError):
        shallow_clone(namespace, ["prod", "missing"], ["dev", "missing"])
    assert not namespace.table_exists(["dev", "missing"])
