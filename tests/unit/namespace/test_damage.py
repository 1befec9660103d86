"""A damaged __manifest is reported (InternalError 18), never silently read as an older namespace."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ns = DirectoryNamespace(str(tmp_path))
    ns.create_namespace(["s"])
    ns.create_table(["s", "t"], pa.table({"id": [1, 2]}))
    return tmp_path


def manifest_versions(root: Path) -> list[Path]:
    return sorted((root / "__manifest" / "_versions").glob("*.manifest"))


def test_missing_latest_version_file_is_an_error_not_a_rollback(root: Path) -> None:
    manifest_versions(root)[0].unlink()  # V2 naming: the first name is the newest version
    remaining = manifest_versions(root)
    ns = DirectoryNamespace(str(root))
    with pytest.raises(errors.InternalError) as raised:
        ns.list_tables(["s"])
    assert raised.value.code == 18 and "latest_version_hint" in str(raised.value)
    with pytest.raises(errors.InternalError):
        ns.create_namespace(["other"])  # nothing is committed on top of the rolled-back version
    assert manifest_versions(root) == remaining


def test_all_version_files_missing_is_not_an_empty_namespace(root: Path) -> None:
    for path in manifest_versions(root):
        path.unlink()
    with pytest.raises(errors.InternalError, match="no readable version file"):
        DirectoryNamespace(str(root)).namespace_exists(["s"])


def test_corrupt_version_file_names_the_manifest(root: Path) -> None:
    manifest_versions(root)[0].write_bytes(b"not a manifest")
    with pytest.raises(errors.InternalError, match="__manifest"):
        DirectoryNamespace(str(root)).list_tables(["s"])


def test_another_writer_moving_the_hint_is_not_damage(root: Path) -> None:
    reader = DirectoryNamespace(str(root))
    assert reader.list_tables(["s"]).items == ["t"]
    DirectoryNamespace(str(root)).create_table(["s", "u"], pa.table({"id": [3]}))
    assert reader.list_tables(["s"]).items == ["t", "u"]
