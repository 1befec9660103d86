"""Row-level changes to an existing Lance table, each committed as ONE version through the engine.

Every incremental strategy and snapshot reduces to one of four changes, all made with pylance
without committing (merge-insert's `execute_uncommitted`, fragment deletion vectors, and
`write_fragments`) and then committed once through `namespace.commit_table`, so versions,
provenance and table version management stay in the engine's one commit path:

* `append`: new fragments, written by Spark tasks from the model's frame (no row reaches the
  driver); the other changes take Arrow rows.
* `upsert`: rows whose key matches replace the matching rows (merge-insert on the key), the
  others are inserted.
* `overwrite`: every row replaced (`insert_overwrite` without partitions).
* `replace`: rows matching a key set (merge-insert's `when_matched_delete`), a Lance SQL filter, or
  named by their row addresses are deleted (deletion vectors, no rewrite of untouched rows) and
  `rows` appended, in one `Update`.

The target is a `TableWrite` (commits/table_write.py): during an atomic-publish run the same
operation is staged instead of committed, and readers outside the run keep the published version
until the run's end.
"""

from __future__ import annotations

import dataclasses

import lance
import pyarrow as pa
import pyarrow.compute as pc
from dbt_common.exceptions import DbtRuntimeError
from lance.fragment import FragmentMetadata
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.lancens.commits import writes
from dbt.adapters.lancens.commits.table_write import TableWrite
from dbt.adapters.lancens.runtime.fragment_bounds import TimeWindow
from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.options import ROW_ADDRESS
from dbt.adapters.lancens.spark.types import aligned, to_spark_type
from dbt.adapters.lancens.text.quoting import quote


def fitted(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with exactly the table's columns, order and types (names matched case-insensitively).

    A column the rows do not have is all nulls: dbt's `on_schema_change: ignore` inserts what the
    model still selects, and a new snapshot column starts out null for old rows. (The data source's
    `spark.types.conform` is stricter: a missing column fails and a narrowing cast fails, as a
    reader or writer of Spark's planned schema must.)"""
    by_name = column_names(rows.column_names)
    columns = []
    for field in schema:
        source = by_name.get(field.name)
        column = rows.column(source) if source is not None else pa.nulls(rows.num_rows, field.type)
        columns.append(aligned(column.cast(field.type)))
    return pa.Table.from_arrays(columns, schema=schema)


def fitted_frame(frame: DataFrame, schema: pa.Schema) -> DataFrame:
    """`frame` with exactly the table's columns, in its order and spelled as it spells them, a
    column the frame lacks as typed NULLs: `fitted` planned in Spark, for rows that never reach
    the driver. The types are left to the writing tasks' `spark.types.conform`, whose Arrow cast
    is `fitted`'s (safe: a value the table's type cannot hold fails the write), except that a date
    or timestamp cast is unchecked there, as for every Spark write of a table."""
    by_name = column_names(frame.columns)
    columns = []
    for field in schema:
        source = by_name.get(field.name)
        value = F.col(quote(source)) if source is not None else F.lit(None).cast(to_spark_type(field.type))
        columns.append(value.alias(field.name))
    return frame.select(*columns)


def append(target: TableWrite, frame: DataFrame, properties: dict[str, str]) -> tuple[int, int]:
    """Add `frame`'s rows (`fitted_frame`) as new fragments written by Spark tasks, in one commit;
    return (version, rows added). The rows are counted from the fragments the tasks report, so
    they are never collected to the driver."""
    fragments = writes.write_tasks(target, frame, target.current.schema, overwrite=False)
    target.refuse_if_moved(fragments)  # the frame's query, which may read the table, ran just now
    version = target.commit(lance.LanceOperation.Append(fragments), properties, written=fragments)
    return version, sum(fragment.physical_rows for fragment in fragments)


def upsert(target: TableWrite, rows: pa.Table, on: list[str], properties: dict[str, str]) -> int:
    """Replace the rows matching `rows` on `on` with them and insert the others (merge-insert's own
    join decides); one commit."""
    if not rows.num_rows:
        return _commit_with(target, lance.LanceOperation.Update(), [], properties)
    builder = target.current.merge_insert(on).when_matched_update_all().when_not_matched_insert_all()
    try:
        transaction, _ = builder.execute_uncommitted(fitted(rows, target.current.schema))
    except OSError as exc:
        if "Ambiguous merge inserts" in str(exc):
            raise ambiguous_match(target.table_id, on) from None
        raise
    return _commit_with(target, _update(transaction.operation), [], properties)


def ambiguous_match(table_id: list[str], keys: list[str]) -> DbtRuntimeError:
    """The error of a merge in which several of the model's rows match one row of the table, as
    dbt's MERGE refuses it (Lance's own message names its source file, not the model's key)."""
    return DbtRuntimeError(
        f"merge into {'.'.join(table_id)}: several rows of the model's result match the same row "
        f"of the table on unique_key ({', '.join(keys)}); deduplicate them per key"
    )


def overwrite(target: TableWrite, rows: pa.Table, properties: dict[str, str]) -> int:
    """Replace every row with `rows` (the next version of the same table; history is kept)."""
    fragments = _write(target, rows)
    operation = lance.LanceOperation.Overwrite(target.current.schema, fragments)
    return target.commit(operation, properties, written=fragments)


def replace(
    target: TableWrite,
    rows: pa.Table,
    properties: dict[str, str],
    *,
    keys: pa.Table | None = None,
    where: str | None = None,
    window: TimeWindow | None = None,
    addresses: pa.Array | pa.ChunkedArray | None = None,
) -> int:
    """Delete the rows whose `keys` columns match a row of `keys`, or that satisfy the Lance SQL filter
    `where`, or whose row `addresses` (in the version the write builds on) are given, and append
    `rows`; one commit. `window`: a time window `where` implies (a microbatch batch's), so only
    fragments whose range of that column meets it are scanned (runtime/fragment_bounds.py)."""
    operation = lance.LanceOperation.Update()
    if addresses is not None:
        operation = _delete_addresses(target.current, addresses)
    elif keys is not None and keys.num_rows:
        key_schema = pa.schema([target.current.schema.field(name) for name in keys.column_names])
        transaction, _ = (
            target.current.merge_insert(keys.column_names)
            .when_matched_delete()
            .execute_uncommitted(fitted(keys, key_schema))
        )
        operation = _update(transaction.operation)
    elif where is not None:
        operation = _delete_where(target, where, window)
    written = _write(target, rows)
    if window is not None:
        target.runtime.fragment_bounds.learn_written(
            target.location, target.current, written, rows, window.column
        )
    return _commit_with(target, operation, written, properties)


def names_a_row_twice(addresses: pa.Array | pa.ChunkedArray) -> bool:
    """Whether `addresses` (rows a change replaces) repeat one: two replacements of one row, which
    dbt's MERGE refuses (one delete would leave both inserted)."""
    return len(pc.unique(addresses)) < len(addresses)


def stored_rows(
    dataset: lance.LanceDataset, addresses: pa.Array | pa.ChunkedArray, columns: list[str]
) -> pa.Table:
    """The values of `columns` stored at row `addresses` of `dataset`, one row per address in
    order, read by Lance in the table's own types. Only the fragments named are scanned."""
    if not len(addresses):
        return dataset.schema.empty_table().select(columns)
    addresses = addresses.cast(pa.uint64())
    touched = set(pc.unique(pc.shift_right(addresses, 32)).to_pylist())
    stored = dataset.scanner(
        columns=columns,
        filter=f"{ROW_ADDRESS} IN ({', '.join(map(str, pc.unique(addresses).to_pylist()))})",
        with_row_address=True,
        fragments=[fragment for fragment in dataset.get_fragments() if fragment.fragment_id in touched],
    ).to_table()
    return stored.take(pc.index_in(addresses, value_set=stored.column(ROW_ADDRESS))).select(columns)


def _update(operation: lance.LanceOperation.BaseOperation) -> lance.LanceOperation.Update:
    """Merge-insert's uncommitted operation, which new fragments join (always an `Update`)."""
    if not isinstance(operation, lance.LanceOperation.Update):
        raise TypeError(f"Lance merge-insert returned a {type(operation).__name__}, not an Update")
    return operation


def _delete_addresses(
    dataset: lance.LanceDataset, addresses: pa.Array | pa.ChunkedArray
) -> lance.LanceOperation.Update:
    """Deletion vectors for the rows at `addresses` (fragment id << 32 | offset). Only the
    fragments named are touched, each with one delete of its own addresses."""
    unique = pc.unique(addresses.cast(pa.uint64()))
    by_fragment = pa.table({"fragment": pc.shift_right(unique, 32), "address": unique})
    grouped = by_fragment.group_by("fragment").aggregate([("address", "list")])
    chosen = zip(
        grouped.column("fragment").to_pylist(), grouped.column("address_list").to_pylist(), strict=True
    )
    return _delete_in(
        dataset,
        {fragment_id: f"{ROW_ADDRESS} IN ({', '.join(map(str, rows))})" for fragment_id, rows in chosen},
    )


def _delete_where(target: TableWrite, where: str, window: TimeWindow | None) -> lance.LanceOperation.Update:
    """Deletion vectors for the rows matching `where`.

    One Lance scan (parallel, reading only the filter's columns) finds the fragments holding
    matching rows; only those are then rewritten. Asking each fragment in turn cost one Python
    round trip per fragment, which made a microbatch backfill quadratic in its batch count (each
    batch adds a fragment, and each batch's replace asked them all). With a `window` the scan covers
    only the fragments whose range of the window's column meets it."""
    dataset = target.current
    scanned = None  # every fragment; an empty list scans none (Lance still checks `where`)
    if window is not None:
        scanned = target.runtime.fragment_bounds.candidates(target.location, dataset, window)
    matched = dataset.scanner(
        columns=[], filter=where, with_row_address=True, fragments=scanned, scan_in_order=False
    ).to_table()
    touched = pc.unique(pc.shift_right(matched.column(ROW_ADDRESS), 32)).to_pylist()
    return _delete_in(dataset, dict.fromkeys(touched, where))


def _delete_in(dataset: lance.LanceDataset, predicates: dict[int, str]) -> lance.LanceOperation.Update:
    """The `Update` deleting, in each fragment named, the rows its Lance SQL predicate matches;
    fragments left empty are removed."""
    fragments = {fragment.fragment_id: fragment for fragment in dataset.get_fragments()}
    removed: list[int] = []
    updated = []
    for fragment_id, predicate in sorted(predicates.items()):
        fragment = fragments.get(fragment_id)
        if fragment is None:
            raise LookupError(f"fragment {fragment_id} is not in version {dataset.version} of {dataset.uri}")
        metadata = fragment.delete(predicate)
        if metadata is None:
            removed.append(fragment_id)
        else:
            updated.append(metadata)
    return lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)


def _commit_with(
    target: TableWrite,
    operation: lance.LanceOperation.Update,
    fragments: list[FragmentMetadata],
    properties: dict[str, str],
) -> int:
    """Commit the `Update` also adding `fragments` (both computed against the same read version).

    The operation's own new fragments (rows merge-insert rewrote) and `fragments` are the files
    this change wrote; they are deleted if the commit does not land."""
    written = [*operation.new_fragments, *fragments]
    return target.commit(dataclasses.replace(operation, new_fragments=written), properties, written=written)


def _write(target: TableWrite, rows: pa.Table) -> list[FragmentMetadata]:
    """Data files for `rows` at the table's location, not yet part of any version."""
    if not rows.num_rows:
        return []
    schema = target.current.schema
    return target.write_fragments(fitted(rows, schema), schema)
