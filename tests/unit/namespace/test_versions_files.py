"""Table versions without table version management: everything is a manifest file in ``_versions/``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.layout import manifest_name, parse_manifest_name
from dbt.adapters.lancens.namespace.versions import VersionEntry

T = ["ns", "t"]


def _rows(start: int, count: int = 2) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def append(ns: DirectoryNamespace, table_id: list[str], data: pa.Table, **properties: str) -> int:
    """One commit through the engine, the way the Spark data source does it (fragments, then commit)."""
    location = ns.table_location(table_id)
    fragments = lance.fragment.write_fragments(data, location)
    try:
        latest = ns.describe_table_version(table_id, None).version
    except (errors.TableNotFoundError, errors.TableVersionNotFoundError):
        operation = lance.LanceOperation.Overwrite(data.schema, fragments)
        return ns.commit_table(table_id, operation, None, properties, location=location)
    return ns.commit_table(table_id, lance.LanceOperation.Append(fragments), latest, properties)


@pytest.fixture
def ns(tmp_path: Path) -> DirectoryNamespace:
    namespace = DirectoryNamespace(str(tmp_path / "root"))
    namespace.create_namespace(["ns"])
    for version in range(1, 4):
        assert append(namespace, T, _rows(version * 10), step=str(version)) == version
    return namespace


def _versions_dir(ns: DirectoryNamespace, table_id: list[str]) -> Path:
    return Path(ns.describe_table(table_id).location.removeprefix("file://")) / "_versions"


def test_manifest_names_round_trip_both_schemes() -> None:
    assert manifest_name(1) == "18446744073709551614.manifest"
    assert manifest_name(7, "V1") == "7.manifest"
    assert parse_manifest_name("18446744073709551614.manifest") == (1, "V2")
    assert parse_manifest_name("7.manifest") == (7, "V1")
    assert parse_manifest_name("18446744073709551614.manifest-0a1b") is None
    assert parse_manifest_name("latest_version_hint.json") is None
    with pytest.raises(errors.InvalidInputError):
        manifest_name(1, "V3")


def test_list_sorted_with_file_metadata_and_transaction_properties(ns: DirectoryNamespace) -> None:
    page = ns.list_table_versions(T)
    assert [v.version for v in page.items] == [1, 2, 3]
    assert page.next_page_token is None
    assert [v.metadata["step"] for v in page.items] == ["1", "2", "3"]
    for item in page.items:
        assert os.path.getsize(item.manifest_path.removeprefix("file://")) == item.manifest_size
        assert item.e_tag and item.timestamp_millis and item.timestamp_millis > 0
        assert item.manifest_path.endswith(manifest_name(item.version))
    descending = ns.list_table_versions(T, descending=True)
    assert [v.version for v in descending.items] == [3, 2, 1]


def test_pagination_with_tokens_both_directions(ns: DirectoryNamespace) -> None:
    first = ns.list_table_versions(T, limit=2)
    assert [v.version for v in first.items] == [1, 2] and first.next_page_token == "2"
    rest = ns.list_table_versions(T, page_token=first.next_page_token, limit=2)
    assert [v.version for v in rest.items] == [3] and rest.next_page_token is None
    down = ns.list_table_versions(T, descending=True, limit=1)
    assert [v.version for v in down.items] == [3]
    down2 = ns.list_table_versions(T, descending=True, page_token=down.next_page_token)
    assert [v.version for v in down2.items] == [2, 1]
    assert ns.list_table_versions(T, limit=0).items == []
    with pytest.raises(errors.InvalidInputError):
        ns.list_table_versions(T, limit=-1)
    with pytest.raises(errors.InvalidInputError):
        ns.list_table_versions(T, page_token="not-a-version")


def test_v1_manifest_names_are_listed(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    location = ns.table_location(["old"])
    lance.write_dataset(_rows(0), location, enable_v2_manifest_paths=False)
    lance.write_dataset(_rows(5), location, mode="append")
    assert sorted(os.listdir(Path(location.removeprefix("file://")) / "_versions"))[:2] == [
        "1.manifest",
        "2.manifest",
    ]
    assert [v.version for v in ns.list_table_versions(["old"]).items] == [1, 2]
    assert ns.describe_table_version(["old"], 2).manifest_path.endswith("/_versions/2.manifest")


def test_describe_errors(ns: DirectoryNamespace) -> None:
    assert ns.describe_table_version(T, 2).metadata == {"step": "2"}
    assert ns._versions.describe_table_version(T).version == 3
    with pytest.raises(errors.TableVersionNotFoundError) as missing:
        ns.describe_table_version(T, 9)
    assert missing.value.code == 11
    with pytest.raises(errors.TableNotFoundError) as no_table:
        ns.describe_table_version(["ns", "nope"], 1)
    assert no_table.value.code == 4
    with pytest.raises(errors.TableNotFoundError):
        ns.list_table_versions(["ns", "nope"])


def test_declared_table_has_no_versions(ns: DirectoryNamespace) -> None:
    ns.declare_table(["ns", "d"])
    assert ns.list_table_versions(["ns", "d"]).items == []
    with pytest.raises(errors.TableVersionNotFoundError):
        ns._versions.describe_table_version(["ns", "d"])


def _unpublish_latest(ns: DirectoryNamespace, table_id: list[str], version: int) -> Path:
    """Turn version ``version``'s manifest back into a staging file, as a writer leaves it at step 1."""
    versions = _versions_dir(ns, table_id)
    staging = versions / (manifest_name(version) + "-staged")
    shutil.move(versions / manifest_name(version), staging)
    (versions / "latest_version_hint.json").unlink(missing_ok=True)
    return staging


def test_create_table_version_copies_then_deletes_staging(ns: DirectoryNamespace) -> None:
    staging = _unpublish_latest(ns, T, 3)
    location = ns.describe_table(T).location
    assert lance.dataset(location).version == 2
    created = ns.create_table_version(T, 3, str(staging), metadata={"by": "test"})
    assert created.version == 3 and created.metadata == {"by": "test"}
    assert not staging.exists()
    assert (_versions_dir(ns, T) / manifest_name(3)).exists()
    assert lance.dataset(location).to_table().num_rows == 6


def test_create_existing_version_is_12_and_keeps_staging(ns: DirectoryNamespace) -> None:
    versions = _versions_dir(ns, T)
    staging = versions / "copy.manifest-x"
    shutil.copy(versions / manifest_name(3), staging)
    with pytest.raises(errors.TableVersionAlreadyExistsError) as exists:
        ns.create_table_version(T, 3, str(staging))
    assert exists.value.code == 12
    assert staging.exists()


def test_create_errors(ns: DirectoryNamespace, tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInputError):
        ns.create_table_version(T, 4, str(tmp_path / "missing.manifest-x"))
    with pytest.raises(errors.TableNotFoundError):
        ns.create_table_version(["ns", "nope"], 1, str(tmp_path / "missing.manifest-x"))


def test_create_with_v1_naming(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    location = ns.table_location(["old"])
    lance.write_dataset(_rows(0), location, enable_v2_manifest_paths=False)
    lance.write_dataset(_rows(5), location, mode="append")
    versions = Path(location.removeprefix("file://")) / "_versions"
    staging = versions / "2.manifest-staged"
    shutil.move(versions / "2.manifest", staging)
    created = ns.create_table_version(["old"], 2, str(staging), naming_scheme="V1")
    assert created.manifest_path.endswith("/_versions/2.manifest")
    assert [v.version for v in ns.list_table_versions(["old"]).items] == [1, 2]
    assert lance.dataset(location).to_table().num_rows == 4


def test_batch_create_iterates_over_tables(ns: DirectoryNamespace) -> None:
    other = ["ns", "u"]
    append(ns, other, _rows(0))
    append(ns, other, _rows(5))
    entries = [
        VersionEntry(T, 3, str(_unpublish_latest(ns, T, 3))),
        VersionEntry(other, 2, str(_unpublish_latest(ns, other, 2))),
    ]
    created = ns.batch_create_table_versions(entries)
    assert [v.version for v in created] == [3, 2]
    assert ns.describe_table_version(other, 2).version == 2


def test_batch_delete(ns: DirectoryNamespace) -> None:
    with pytest.raises(errors.TableVersionNotFoundError) as missing:
        ns.batch_delete_table_versions(T, [1, 7])
    assert missing.value.code == 11
    assert [v.version for v in ns.list_table_versions(T).items] == [1, 2, 3]  # nothing deleted
    assert ns.batch_delete_table_versions(T, [1, 7], ignore_missing=True) == 1
    assert ns.batch_delete_table_versions(T, [2]) == 1
    assert [v.version for v in ns.list_table_versions(T).items] == [3]
    assert not (_versions_dir(ns, T) / manifest_name(1)).exists()
    with pytest.raises(errors.TableNotFoundError):
        ns.batch_delete_table_versions(["ns", "nope"], [1])
