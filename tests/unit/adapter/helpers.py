"""Helpers shared by the adapter unit tests: namespaces on local disk or moto S3."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.versions import TVM_KEY


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
