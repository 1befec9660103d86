"""The dbt catalog (`dbt docs generate`) read straight from the namespace engine.

One cached `__manifest` read (`list_objects`) says which tables and views exist; each table's
columns, comments and stats come from its Lance manifest (`get_version()` summarises rows, bytes and
fragments without reading data), opened in parallel threads (Lance releases the GIL). No Spark job
runs for a table. A view's columns come from Spark analysing its SQL (no job either), because a view
has no stored schema. Descriptions written by `persist_docs` (docs.py) are read back as comments.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import agate
import lance
import pyarrow as pa
from dbt.adapters.events.logging import AdapterLogger
from dbt.artifacts.schemas.catalog import CatalogTable, ColumnMetadata, StatsItem, TableMetadata

from dbt.adapters.lancens.definitions.names import database_name, namespace_to_schema
from dbt.adapters.lancens.metadata import docs
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.models import ObjectEntry
from dbt.adapters.lancens.runtime.errors import spark_error_message
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.types import to_spark_type

logger = AdapterLogger("lancens")

TABLE_TYPE = "table"
VIEW_TYPE = "view"
OWNER_KEY = "owner"
# Opening a Lance table is I/O bound (local disk or object store) and releases the GIL.
MAX_READERS = min(32, 4 * (os.cpu_count() or 1))


@dataclass(frozen=True)
class StatSpec:
    id: str
    label: str
    description: str
    numeric: bool


STATS = (
    StatSpec("row_count", "Row count", "Rows in the current version (deleted rows excluded)", True),
    StatSpec("bytes", "Bytes on storage", "Size of the data files of the current version", True),
    StatSpec("fragments", "Fragments", "Lance fragments in the current version", True),
    StatSpec("version", "Version", "Current Lance table version", True),
    StatSpec("last_commit", "Last commit", "When the current version was committed (UTC)", False),
    StatSpec("location", "Location", "Where the Lance table lives", False),
    StatSpec("indexes", "Indexes", "Lance indexes of the current version: name (type on column)", False),
)

_BASE_COLUMNS = (
    ("table_database", agate.Text()),
    ("table_schema", agate.Text()),
    ("table_name", agate.Text()),
    ("table_type", agate.Text()),
    ("table_comment", agate.Text()),
    ("table_owner", agate.Text()),
    ("column_name", agate.Text()),
    ("column_index", agate.Number()),
    ("column_type", agate.Text()),
    ("column_comment", agate.Text()),
)


@dataclass(frozen=True)
class CatalogColumn:
    name: str
    type: str
    comment: str | None = None


@dataclass(frozen=True)
class CatalogRelation:
    """What the catalog says about one table or view; renders as dbt's rows or as a CatalogTable."""

    schema: str
    name: str
    type: str
    columns: list[CatalogColumn]
    comment: str | None = None
    owner: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)  # StatSpec.id -> value; empty for views

    def rows(self, database: str | None) -> list[tuple[Any, ...]]:
        stat_cells: list[Any] = []
        for spec in STATS:
            included = spec.id in self.stats
            stat_cells += [spec.label, self.stats.get(spec.id), spec.description, included]
        return [
            (database, self.schema, self.name, self.type, self.comment, self.owner,
             column.name, index, column.type, column.comment, *stat_cells)
            for index, column in enumerate(self.columns, start=1)
        ]  # fmt: skip

    def to_catalog_table(self, database: str | None) -> CatalogTable:
        stats = {
            spec.id: StatsItem(spec.id, spec.label, self.stats[spec.id], True, spec.description)
            for spec in STATS
            if spec.id in self.stats
        }
        stats["has_stats"] = StatsItem(
            "has_stats",
            "Has Stats?",
            bool(stats),
            False,
            "Indicates whether there are statistics for this table",
        )
        return CatalogTable(
            metadata=TableMetadata(self.type, self.schema, self.name, database, self.comment, self.owner),
            columns={
                c.name: ColumnMetadata(c.type, index, c.name, c.comment)
                for index, c in enumerate(self.columns, start=1)
            },
            stats=stats,
        )


def catalog_table(relations: Iterable[CatalogRelation], database: str | None) -> agate.Table:
    """dbt's catalog rows (one per column) with typed columns, so agate guesses nothing.

    `database` is the root's name (the profile's `database`), as the nodes carry it."""
    names = [name for name, _ in _BASE_COLUMNS]
    types = [kind for _, kind in _BASE_COLUMNS]
    for spec in STATS:
        names += [f"stats:{spec.id}:{part}" for part in ("label", "value", "description", "include")]
        types += [
            agate.Text(),
            agate.Number() if spec.numeric else agate.Text(),
            agate.Text(),
            agate.Boolean(),
        ]
    rows = [row for relation in relations for row in relation.rows(database)]
    return agate.Table(rows, names, types)


def read_catalog(
    runtime: LancensRuntime,
    schemas: Iterable[str] | None = None,
    relations: Iterable[tuple[str, str]] | None = None,
) -> tuple[list[CatalogRelation], list[Exception]]:
    """Everything in the given dbt schemas (namespaces), or only the given (schema, name) relations.

    Reads the manifest once, the tables in parallel threads and the views through Spark meanwhile.
    A table or view that cannot be read becomes an error entry (dbt reports it), not a failure.
    """
    wanted_schemas = {schema.lower() for schema in schemas or ()}
    wanted_relations = {(schema.lower(), name.lower()) for schema, name in relations or ()}
    listed = runtime.namespace.list_objects()
    if runtime.branch_landing is not None:  # and the tables only a branch target's branch has
        listed = [*listed, *runtime.branch_landing.catalog_entries(runtime.namespace)]
    entries = [
        entry
        for entry in listed
        if entry.object_type in (TABLE_TYPE, VIEW_TYPE)
        and len(entry.id) > 1
        and (
            namespace_to_schema(entry.id[:-1]) in wanted_schemas
            or (namespace_to_schema(entry.id[:-1]), entry.id[-1]) in wanted_relations
        )
    ]
    tables = [entry for entry in entries if entry.object_type == TABLE_TYPE]
    if runtime.branch_landing is not None:  # a branch target's docs show the tables it built
        tables = [runtime.branch_landing.catalog_entry(runtime.namespace, entry) for entry in tables]
    views = [entry for entry in entries if entry.object_type == VIEW_TYPE]
    found: list[CatalogRelation] = []
    failures: list[Exception] = []
    with ThreadPoolExecutor(max_workers=max(1, min(MAX_READERS, len(tables)))) as pool:
        futures = [pool.submit(table_relation, runtime.namespace, entry) for entry in tables]
        for view in views:
            _collect(lambda view=view: view_relation(runtime, view), found, failures)
        for future in futures:
            _collect(future.result, found, failures)
    return found, failures


def _collect(read: Any, found: list[CatalogRelation], failures: list[Exception]) -> None:
    try:
        relation = read()
    except Exception as exc:  # one unreadable relation must not hide the others
        failures.append(RuntimeError(f"catalog: {spark_error_message(exc)}"))
        return
    if relation is not None:
        found.append(relation)


def table_relation(namespace: DirectoryNamespace, entry: ObjectEntry) -> CatalogRelation | None:
    """A table's columns, comments and stats from its Lance manifest; None if it has no data yet."""
    assert entry.location is not None
    try:
        dataset = lance.dataset(
            entry.location, storage_options=namespace.storage_options or None, session=namespace.lance_session
        )
    except ValueError:
        return None  # declared only (no version yet), or dropped since the manifest was read
    version = dataset.get_version()
    summary = version["metadata"]
    metadata = {**entry.properties, **dataset.metadata}
    indexes = _indexes(dataset)
    return CatalogRelation(
        schema=namespace_to_schema(entry.id[:-1]),
        name=entry.id[-1],
        type=TABLE_TYPE,
        columns=[_arrow_column(column) for column in dataset.schema],
        comment=metadata.get(docs.COMMENT_KEY),
        owner=metadata.get(OWNER_KEY),
        stats={
            "row_count": int(summary.get("total_rows", 0)),
            "bytes": int(summary.get("total_files_size", 0)),
            "fragments": int(summary.get("total_fragments", 0)),
            "version": int(version["version"]),
            # Lance gives a naive local time; the catalog says UTC.
            "last_commit": _utc(version["timestamp"]),
            "location": entry.location,
            **({"indexes": indexes} if indexes else {}),
        },
    )


def _utc(moment: object) -> str | None:
    """Lance gives a naive local time; the catalog says UTC."""
    return moment.astimezone(UTC).isoformat(timespec="seconds") if isinstance(moment, datetime) else None


def _indexes(dataset: lance.LanceDataset) -> str:
    """`name (TYPE on column)` for each index, as `dbt docs` shows it; empty when there is none."""
    return ", ".join(
        f"{index.name} ({index.index_type} on {', '.join(index.field_names)})"
        for index in sorted(dataset.describe_indices(), key=lambda index: index.name)
    )


def _arrow_column(column: pa.Field) -> CatalogColumn:
    comment = (column.metadata or {}).get(docs.COMMENT_KEY.encode())
    return CatalogColumn(
        column.name, to_spark_type(column.type).simpleString(), comment.decode() if comment else None
    )


def view_relation(runtime: LancensRuntime, entry: ObjectEntry) -> CatalogRelation:
    """A view's columns from Spark's analysis of its SQL (no job runs); comments from its properties."""
    database, name = database_name(entry.id[:-1]), entry.id[-1]
    schema = runtime.sql(f"SELECT * FROM `{database}`.`{name}`").schema
    column_comments = docs.view_column_comments(entry.properties)
    return CatalogRelation(
        schema=namespace_to_schema(entry.id[:-1]),
        name=name,
        type=VIEW_TYPE,
        columns=[
            CatalogColumn(f.name, f.dataType.simpleString(), column_comments.get(f.name))
            for f in schema.fields
        ],
        comment=entry.properties.get(docs.COMMENT_KEY),
        owner=entry.properties.get(OWNER_KEY),
    )


def single_relation(
    runtime: LancensRuntime, database: str | None, schema: str, name: str
) -> CatalogTable | None:
    """The catalog entry of one relation (dbt's `get_catalog_for_single_relation`), None if absent."""
    found, failures = read_catalog(runtime, relations=[(schema, name)])
    if failures:
        raise failures[0]
    return found[0].to_catalog_table(database) if found else None
