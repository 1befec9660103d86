"""`get_catalog_for_single_relation` against the Lance tables on disk, and the expected-catalog values
the other catalog tests share (`lance_stats`, `VIEW_STATS`).

Expected stats are not copied from the adapter: `LanceValue` opens the table with pylance when the
comparison happens and computes the figure its own way (count_rows, fragment file sizes, versions()).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

import lance
import pytest
from dbt.artifacts.schemas.catalog import CatalogTable, ColumnMetadata, StatsItem, TableMetadata
from dbt.tests.adapter.basic.expected_catalog import no_stats
from dbt.tests.adapter.basic.test_get_catalog_for_single_relation import BaseGetCatalogForSingleRelation

from dbt.adapters.lancens.namespace import DirectoryNamespace

VIEW_STATS = no_stats()
SEED_COLUMNS = [
    ("id", "bigint"),
    ("first_name", "string"),
    ("email", "string"),
    ("ip_address", "string"),
    ("updated_at", "timestamp"),
]
STAT_TEXT = {
    "row_count": ("Row count", "Rows in the current version (deleted rows excluded)"),
    "bytes": ("Bytes on storage", "Size of the data files of the current version"),
    "fragments": ("Fragments", "Lance fragments in the current version"),
    "version": ("Version", "Current Lance table version"),
    "last_commit": ("Last commit", "When the current version was committed (UTC)"),
    "location": ("Location", "Where the Lance table lives"),
}


def measure(dataset: lance.LanceDataset, location: str, stat: str) -> Any:
    """One stat of a Lance table, computed independently of the adapter."""
    if stat == "row_count":
        return dataset.count_rows()
    if stat == "bytes":
        return sum(f.file_size_bytes for frag in dataset.get_fragments() for f in frag.metadata.files)
    if stat == "fragments":
        return len(dataset.get_fragments())
    if stat == "version":
        return dataset.version
    if stat == "last_commit":
        latest = max(dataset.versions(), key=lambda v: v["version"])
        return latest["timestamp"].astimezone(UTC).isoformat(timespec="seconds")
    if stat == "location":
        return location
    raise KeyError(stat)


class LanceValue:
    """Equal to a stat of the table `table_id` under `root` as it is on disk at comparison time."""

    def __init__(self, root: str, table_id: list[str], stat: str) -> None:
        self.root, self.table_id, self.stat = root, table_id, stat

    def actual(self) -> Any:
        location = DirectoryNamespace(self.root).describe_table(self.table_id).location
        return measure(lance.dataset(location), location, self.stat)

    def __eq__(self, other: object) -> bool:
        return other == self.actual()

    def __repr__(self) -> str:
        return f"LanceValue({self.table_id}, {self.stat}={self.actual()!r})"


def lance_stats(root: str, table_id: list[str]) -> dict[str, dict[str, Any]]:
    """The catalog.json `stats` of a table: every Lance stat plus dbt's has_stats."""
    stats: dict[str, dict[str, Any]] = {
        stat: {
            "id": stat,
            "label": label,
            "value": LanceValue(root, table_id, stat),
            "include": True,
            "description": description,
        }
        for stat, (label, description) in STAT_TEXT.items()
    }
    stats["has_stats"] = {**VIEW_STATS["has_stats"], "value": True}
    return stats


def catalog_stats(root: str, table_id: list[str]) -> dict[str, StatsItem]:
    """`lance_stats` as the StatsItems of a CatalogTable."""
    return {key: StatsItem(**value) for key, value in lance_stats(root, table_id).items()}


def seed_columns(types: list[tuple[str, str]]) -> dict[str, ColumnMetadata]:
    return {name: ColumnMetadata(type=kind, index=i, name=name) for i, (name, kind) in enumerate(types, 1)}


class TestGetCatalogForSingleRelation(BaseGetCatalogForSingleRelation):
    @pytest.fixture(scope="class")
    def expected_catalog_my_seed(self, project, lancens_root: str) -> CatalogTable:
        return CatalogTable(
            metadata=TableMetadata(
                type="table", schema=project.test_schema, name="my_seed", database=project.database
            ),
            columns=seed_columns(SEED_COLUMNS),
            stats=catalog_stats(lancens_root, [project.test_schema, "my_seed"]),
        )

    @pytest.fixture(scope="class")
    def expected_catalog_my_view_model(self, project) -> CatalogTable:
        return CatalogTable(
            metadata=TableMetadata(
                type="view", schema=project.test_schema, name="my_view_model", database=project.database
            ),
            columns=seed_columns(SEED_COLUMNS),
            stats={"has_stats": StatsItem(**VIEW_STATS["has_stats"])},
        )

    def test_missing_relation_is_none(self, project) -> None:
        relation = project.adapter.Relation.create(schema=project.test_schema, identifier="no_such_table")
        with project.adapter.connection_named("__test"):
            assert project.adapter.get_catalog_for_single_relation(relation) is None
