"""The sample project, as checked out, builds twice from a clean root; each build is one version
of each table further (two for `documents`, whose rebuild is indexed again)."""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import lance.namespace
import lance_namespace
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import SAMPLE_TABLES

SAMPLE = Path(__file__).resolve().parents[2] / "sample_project"


def table_versions(root: Path) -> dict[str, int]:
    """Every table of the namespace and its current Lance version, read with pylance."""
    namespace = DirectoryNamespace(str(root))
    return {
        ".".join(entry.id): lance.dataset(entry.location).version
        for entry in namespace.list_objects()
        if entry.object_type == "table"
    }


@pytest.mark.usefixtures("spark")
def test_sample_project_builds_twice_one_version_further(tmp_path: Path) -> None:
    project = tmp_path / "sample_project"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", "warehouse"))
    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]

    first = run_dbt(["build", *dirs])
    assert all(result.status in ("success", "pass") for result in first)
    after_first = table_versions(project / "warehouse")
    assert set(after_first) == SAMPLE_TABLES
    assert DirectoryNamespace(str(project / "warehouse")).list_views(["analytics", "staging"]).items == [
        "stg_customers"
    ]
    # the README's quick start: pylance's own namespace finds the tables by name
    native = lance.namespace.DirectoryNamespace(root=str(project / "warehouse"))
    marts = native.list_tables(lance_namespace.ListTablesRequest(id=["analytics", "marts"])).tables
    assert {"customers", "orders", "documents"} <= set(marts)

    run_dbt(["build", *dirs])
    after_second = table_versions(project / "warehouse")
    # documents is rebuilt (one version) and, as a rebuild keeps no index, indexed again (one more)
    grown = {name: 2 if name == "analytics.marts.documents" else 1 for name in after_first}
    assert after_second == {name: version + grown[name] for name, version in after_first.items()}
