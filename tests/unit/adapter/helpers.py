"""Helpers shared by the adapter unit tests: namespaces on local disk or moto S3, a runtime over a
local root, rows of ids, an incremental append of them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.materializations import merge
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.versions import TVM_KEY
from dbt.adapters.lancens.runtime.process import LancensRuntime


def namespace_on(
    request: pytest.FixtureRequest, where: str, tmp_path: Path, managed: bool
) -> DirectoryNamespace:
    """A fresh namespace on local disk (`where` "local") or on the tests' moto S3 endpoint, with table
    version management when `managed`."""
    if where == "local":
        ns = DirectoryNamespace(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        ns = DirectoryNamespace(
            s3.uri(f"{request.node.module.__name__}/{tmp_path.name}"), storage_options=s3.storage_options
        )
    if managed:
        ns.alter_namespace_properties([], {TVM_KEY: "true"})
    return ns


def shop_runtime(tmp_path: Path) -> LancensRuntime:
    """The process's runtime over a fresh local root holding one namespace, ``shop``."""
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    return runtime


def id_rows(first: int, count: int) -> pa.Table:
    """``count`` rows of one int64 column ``id``, from ``first``."""
    return pa.table({"id": pa.array(range(first, first + count), pa.int64())})


def append_rows(runtime: LancensRuntime, table_id: list[str], rows: pa.Table) -> int:
    """Append `rows` to the existing table as an incremental append does (Spark tasks write them,
    one commit, or a staged version in an atomic-publish run), as one fragment; the version it makes."""
    runtime.activate()
    frame = runtime.spark.createDataFrame(rows).coalesce(1)
    version, _ = merge.append(open_write(runtime, table_id, must_exist=True), frame, {})
    return version
