"""Row-level changes to an existing Lance table, each committed as ONE version through the engine.

Every incremental strategy and snapshot reduces to one of three changes, all made with pylance
without committing (merge-insert's `execute_uncommitted`, fragment deletion vectors, and
`write_fragments`) and then committed once through `namespace.commit_table`, so versions,
provenance and table version management stay in the engine's one commit path:

* `append`: new fragments.
* `upsert`: rows whose key matches replace the matching rows (merge-insert on the key), the
  others are inserted (by merge-insert, or as new fragments in the same `Update` operation).
* `overwrite`: every row replaced (`insert_overwrite` without partitions).
* `replace`: rows matching a key set (merge-insert's `when_matched_delete`) or a Lance SQL filter
  are deleted (deletion vectors, no rewrite of untouched rows) and `rows` appended, in one `Update`.

During an atomic-publish run (`publish.active`) the same operation is staged instead of committed
(`publish.stage_operation`): readers outside the run keep the published version until the run's end.
"""

from __future__ import annotations

import dataclasses

import lance
import pyarrow as pa

from dbt.adapters.lancens.commits import publish
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.spark import catalog
from dbt.adapters.lancens.spark.types import aligned


@dataclasses.dataclass(frozen=True)
class Target:
    """The table being changed, opened at the version the change is computed against."""

    table_id: list[str]
    location: str
    dataset: lance.LanceDataset

    @property
    def version(self) -> int:
        return self.dataset.version


def open_target(runtime: LancensRuntime, table_id: list[str]) -> Target:
    """Open the table's latest version; later commits are pinned to it (concurrent writers get 14)."""
    namespace = runtime.namespace
    info = namespace.describe_table(table_id)
    options = namespace.storage_options or None
    dataset = lance.dataset(info.location, version=info.version, storage_options=options)
    return Target(table_id=table_id, location=info.location, dataset=dataset)


def conform(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with exactly the table's columns, order and types (names matched case-insensitively).

    A column the rows do not have is all nulls: dbt's `on_schema_change: ignore` inserts what the
    model still selects, and a new snapshot column starts out null for old rows."""
    by_name = {name.lower(): name for name in rows.column_names}
    columns = []
    for field in schema:
        source = by_name.get(field.name.lower())
        column = rows.column(source) if source is not None else pa.nulls(rows.num_rows, field.type)
        columns.append(aligned(column.cast(field.type)))
    return pa.Table.from_arrays(columns, schema=schema)


def append(runtime: LancensRuntime, target: Target, rows: pa.Table, properties: dict[str, str]) -> int:
    """Add `rows` as new fragments in one commit."""
    fragments = _write(runtime, target, rows)
    return _commit(runtime, target, lance.LanceOperation.Append(fragments), properties)


def upsert(
    runtime: LancensRuntime,
    target: Target,
    rows: pa.Table,
    on: list[str],
    properties: dict[str, str],
    inserts: pa.Table | None = None,
) -> int:
    """Replace the rows matching `rows` on `on` with them; one commit.

    Without `inserts`, rows matching nothing are inserted (merge-insert's own join decides). With
    `inserts` (the caller already decided what matched), only matches are updated and `inserts` are
    appended as new fragments of the same `Update`."""
    schema = target.dataset.schema
    operation = lance.LanceOperation.Update()
    if rows.num_rows:
        builder = target.dataset.merge_insert(on).when_matched_update_all()
        if inserts is None:
            builder = builder.when_not_matched_insert_all()
        transaction, _ = builder.execute_uncommitted(conform(rows, schema))
        operation = transaction.operation
    new = _write(runtime, target, inserts) if inserts is not None else []
    return _commit(runtime, target, _with_new(operation, new), properties)


def overwrite(runtime: LancensRuntime, target: Target, rows: pa.Table, properties: dict[str, str]) -> int:
    """Replace every row with `rows` (the next version of the same table; history is kept)."""
    schema = target.dataset.schema
    fragments = _write(runtime, target, rows)
    return _commit(runtime, target, lance.LanceOperation.Overwrite(schema, fragments), properties)


def replace(
    runtime: LancensRuntime,
    target: Target,
    rows: pa.Table,
    properties: dict[str, str],
    *,
    keys: pa.Table | None = None,
    where: str | None = None,
) -> int:
    """Delete the rows whose `keys` columns match a row of `keys`, or that satisfy the Lance SQL filter
    `where`, and append `rows`; one commit."""
    operation = lance.LanceOperation.Update()
    if keys is not None and keys.num_rows:
        key_schema = pa.schema([target.dataset.schema.field(name) for name in keys.column_names])
        transaction, _ = (
            target.dataset.merge_insert(keys.column_names)
            .when_matched_delete()
            .execute_uncommitted(conform(keys, key_schema))
        )
        operation = transaction.operation
    elif where is not None:
        operation = _delete_where(target.dataset, where)
    return _commit(runtime, target, _with_new(operation, _write(runtime, target, rows)), properties)


def _delete_where(dataset: lance.LanceDataset, where: str) -> lance.LanceOperation.Update:
    """Deletion vectors for the rows matching `where`; fragments left empty are removed."""
    removed: list[int] = []
    updated = []
    for fragment in dataset.get_fragments():
        if not fragment.count_rows(where):
            continue
        metadata = fragment.delete(where)
        if metadata is None:
            removed.append(fragment.fragment_id)
        else:
            updated.append(metadata)
    return lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)


def _with_new(operation: lance.LanceOperation.Update, fragments: list) -> lance.LanceOperation.Update:
    """The same `Update` also adding `fragments` (both computed against the same read version)."""
    return dataclasses.replace(operation, new_fragments=[*operation.new_fragments, *fragments])


def _write(runtime: LancensRuntime, target: Target, rows: pa.Table) -> list:
    """Data files for `rows` at the table's location, not yet part of any version."""
    if not rows.num_rows:
        return []
    schema = target.dataset.schema
    return lance.fragment.write_fragments(
        conform(rows, schema),
        target.location,
        schema=schema,
        storage_options=runtime.namespace.storage_options or None,
    )


def _commit(
    runtime: LancensRuntime,
    target: Target,
    operation: lance.LanceOperation.BaseOperation,
    properties: dict[str, str],
) -> int:
    if publish.active(runtime) is not None:
        # A run stages one version per table (publish.py refuses a second): see refuse_when_staging.
        return publish.stage_operation(
            runtime, target.table_id, operation, target.version, properties, target.location
        )
    version = runtime.namespace.commit_table(
        target.table_id, operation, read_version=target.version, transaction_properties=properties
    )
    with runtime.lock:
        catalog.sync_table(runtime.spark, runtime.namespace, target.table_id)
    return version


def refuse_when_staging(runtime: LancensRuntime, target: Target, what: str) -> None:
    """Fail before anything is written when `what` would need a second staged version of the table."""
    if publish.active(runtime) is not None:
        raise ValueError(
            f"atomic publish stages one version per table per run, and {what} on "
            f"{'.'.join(target.table_id)} needs two (the schema change, then the rows). Run it once "
            "without atomic publish, or with --full-refresh."
        )
