"""Helpers for the Spark data source tests: fresh table locations and a look at their data files."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def table_uri(tmp_path: Path) -> str:
    """A location where no table exists yet."""
    return str(tmp_path / "table.lance")


def data_files(uri: str) -> set[str]:
    """Every data file on disk under the table, referenced by a version or not."""
    data = Path(uri) / "data"
    return {p.name for p in data.iterdir()} if data.exists() else set()


def referenced_files(uri: str) -> set[str]:
    """Data files some version of the table references."""
    import lance

    dataset = lance.dataset(uri)
    names: set[str] = set()
    for version in dataset.versions():
        at = lance.dataset(uri, version=version["version"])
        names |= {Path(f.path).name for frag in at.get_fragments() for f in frag.data_files()}
    return names
