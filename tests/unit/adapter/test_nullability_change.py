"""The nullability change an incremental run's contract asks for (`schema_evolution._nullability_change`)
on a real namespace, local and moto S3: Lance's own `Project` operation, worked out on a shallow
clone in the root's scratch area, which is gone afterwards; the table keeps its rows and metadata."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations.schema_evolution import _nullability_change
from dbt.adapters.lancens.namespace import DirectoryNamespace

TABLE = ["analytics", "t"]


@pytest.fixture(params=["local", "s3"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    if request.param == "local":
        ns = DirectoryNamespace(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        ns = DirectoryNamespace(s3.uri(f"nullability/{tmp_path.name}"), storage_options=s3.storage_options)
    ns.create_namespace(["analytics"])
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    ns.create_table(TABLE, pa.table({"id": [1, 2], "name": ["a", None]}, schema=schema))
    return ns


def _dataset(ns: DirectoryNamespace) -> lance.LanceDataset:
    return lance.dataset(ns.describe_table(TABLE).location, storage_options=ns.storage_options or None)


def test_nullability_flips_in_one_version_and_leaves_no_scratch(namespace: DirectoryNamespace) -> None:
    dataset = _dataset(namespace)
    dataset.update_metadata({"comment": "the model's description"})
    dataset = _dataset(namespace)
    files_before = sorted(namespace.storage.fs.find(namespace.storage.root))

    operation = _nullability_change(namespace, dataset, {"id": True})
    version = namespace.commit_table(TABLE, operation, read_version=dataset.version)

    after = _dataset(namespace)
    assert after.version == version == dataset.version + 1
    assert [(f.name, f.nullable) for f in after.schema] == [("id", True), ("name", True)]
    assert after.to_table().to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]
    assert after.metadata == {"comment": "the model's description"}  # Lance's table config is kept
    files = sorted(namespace.storage.fs.find(namespace.storage.root))
    assert not [f for f in files if ".lancens-staging" in f]  # the scratch clone is gone
    assert set(files) - set(files_before) <= {
        f for f in files if f.startswith(_dataset(namespace).uri.split("://")[-1])
    }  # nothing new outside the table's own directory
