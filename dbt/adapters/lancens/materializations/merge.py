"""Row-level changes to an existing Lance table, each committed as ONE version through the engine.

Every incremental strategy and snapshot reduces to one of three changes of the model's rows, which
stay in Spark: Spark tasks write them as new fragments (`commits.writes.write_tasks`) and make the
deletions per fragment (`spark.row_changes.delete_with_tasks`), and the driver commits the
fragments' metadata once through `TableWrite.commit`, so versions, provenance and table version
management stay in the engine's one commit path and readers see the version before or after:

* `append`: new fragments only (an `Append`).
* `overwrite_frame`: every row replaced (`insert_overwrite` without partitions; an `Overwrite`).
* `replace_frame`: rows named by their row addresses (a Spark join found them) or matching a Lance
  SQL filter (a microbatch window) are deleted (deletion files, no rewrite of untouched rows) and
  the frame's rows added, in one `Update`.

`overwrite` replaces the rows with an Arrow table (`TRUNCATE TABLE`'s none). The target is a
`TableWrite` (commits/table_write.py): during an atomic-publish run the same operation is staged
instead of committed, and readers outside the run keep the published version until the run's end.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import lance
import pyarrow as pa
from dbt_common.exceptions import DbtRuntimeError
from lance.fragment import FragmentMetadata
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.lancens.commits import writes
from dbt.adapters.lancens.commits.table_write import TableWrite
from dbt.adapters.lancens.runtime.fragment_bounds import TimeWindow
from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.fragment_ranges import ranges_with_tasks
from dbt.adapters.lancens.spark.jvm_deletions import delete_in_jvm
from dbt.adapters.lancens.spark.row_changes import (
    StoredValues,
    delete_where_with_tasks,
    delete_with_tasks,
)
from dbt.adapters.lancens.spark.types import aligned, to_spark_type
from dbt.adapters.lancens.text.quoting import quote

if TYPE_CHECKING:
    from dbt.adapters.lancens.runtime.process import LancensRuntime

STORED_AT = "__lancens_stored_at"
"""The column of a written row that holds the address of the stored row it replaces (NULL: none)."""


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


def fitted_frame(frame: DataFrame, schema: pa.Schema, carried: Sequence[str] = ()) -> DataFrame:
    """`frame` with exactly the table's columns, in its order and spelled as it spells them, a
    column the frame lacks as typed NULLs (then the `carried` columns of `frame`, which the writing
    tasks read but do not store): `fitted` planned in Spark, for rows that never reach the
    driver. The types are left to the writing tasks' `spark.types.conform`, whose Arrow cast is
    `fitted`'s (safe: a value the table's type cannot hold fails the write), except that a date or
    timestamp cast is unchecked there, as for every Spark write of a table."""
    by_name = column_names(frame.columns)
    columns = []
    for field in schema:
        source = by_name.get(field.name)
        value = F.col(quote(source)) if source is not None else F.lit(None).cast(to_spark_type(field.type))
        columns.append(value.alias(field.name))
    return frame.select(*columns, *(F.col(quote(name)) for name in carried))


def made_once(runtime: LancensRuntime, frame: DataFrame) -> DataFrame:
    """`frame`'s rows, made now and kept by Spark's executors on disk for the steps that read them
    again (joins, writing tasks, deletions): the query runs once, and the driver's memory is not
    theirs to fill. The runtime holds it while the session lives (`hold_checkpoint`: on Spark
    Connect, letting it go mid-run can hang the run)."""
    made = frame.localCheckpoint(eager=True, storageLevel=StorageLevel.DISK_ONLY)
    runtime.hold_checkpoint(made)
    return made


def append(target: TableWrite, frame: DataFrame, properties: dict[str, str]) -> tuple[int, int]:
    """Add `frame`'s rows (`fitted_frame`) as new fragments written by Spark tasks, in one commit;
    return (version, rows added). The rows are counted from the fragments the tasks report, so
    they are never collected to the driver."""
    fragments = writes.write_tasks(target, frame, target.current.schema, overwrite=False)
    target.refuse_if_moved(fragments)  # the frame's query, which may read the table, ran just now
    version = target.commit(lance.LanceOperation.Append(fragments), properties, written=fragments)
    return version, sum(fragment.physical_rows for fragment in fragments)


def overwrite(target: TableWrite, rows: pa.Table, properties: dict[str, str]) -> int:
    """Replace every row with Arrow `rows` (the next version of the same table; history is kept)."""
    fragments = _write(target, rows)
    operation = lance.LanceOperation.Overwrite(target.current.schema, fragments)
    return target.commit(operation, properties, written=fragments)


def overwrite_frame(target: TableWrite, frame: DataFrame, properties: dict[str, str]) -> int:
    """Replace every row with `frame`'s (`fitted_frame`), written by Spark tasks; one commit."""
    schema = target.current.schema
    fragments = writes.write_tasks(target, frame, schema, overwrite=True)
    target.refuse_if_moved(fragments)
    return target.commit(lance.LanceOperation.Overwrite(schema, fragments), properties, written=fragments)


def replace_frame(
    target: TableWrite,
    frame: DataFrame,
    properties: dict[str, str],
    *,
    doomed: DataFrame | None = None,
    where: str | None = None,
    window: TimeWindow | None = None,
    stored: StoredValues | None = None,
    repeated: Exception | None = None,
) -> tuple[int, int]:
    """Delete the rows at the row addresses `doomed` holds (a frame of one column, in the version the
    write builds on), or those matching the Lance SQL filter `where`, and add `frame`'s rows
    (`fitted_frame`); one commit of one `Update`. `window`: a time window `where` implies (a
    microbatch batch's), so only fragments whose range of that column meets it are scanned
    (runtime/fragment_bounds.py). `stored`: columns that rows with an address take from the table.
    `repeated`: raised, nothing committed, when `doomed` holds an address twice (checked by the
    deleting tasks). Returns (version, rows added), the rows counted from the fragments the tasks
    report, so they are never collected to the driver."""
    fragments = writes.write_tasks(target, frame, target.current.schema, overwrite=False, stored=stored)
    try:
        target.refuse_if_moved()
        if doomed is not None:
            if writes.deletes_in_jvm(target):
                removed, updated = delete_in_jvm(
                    doomed, target.current, target.location, target.storage_options, repeated
                )
            else:
                removed, updated = delete_with_tasks(doomed, target.current, repeated)
            operation = lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)
        elif where is not None:
            operation = _delete_where(target, frame, where, window)
        else:
            operation = lance.LanceOperation.Update()
        if window is not None:
            _learn_written(target, frame, fragments, window)
    except BaseException:
        target.abandon(fragments)
        raise
    version = _commit_with(target, operation, fragments, properties)
    return version, sum(fragment.physical_rows for fragment in fragments)


def ambiguous_match(table_id: list[str], keys: list[str]) -> DbtRuntimeError:
    """The error of a merge in which several of the model's rows match one row of the table, as
    dbt's MERGE refuses it."""
    return DbtRuntimeError(
        f"merge into {'.'.join(table_id)}: several rows of the model's result match the same row "
        f"of the table on unique_key ({', '.join(keys)}); deduplicate them per key"
    )


def _learn_written(
    target: TableWrite, frame: DataFrame, fragments: list[FragmentMetadata], window: TimeWindow
) -> None:
    """Keep the range of `window`'s column over the rows just written, for the next batch's scan;
    Spark computes the minimum and maximum (one row comes back)."""
    field = target.current.schema.field(window.column)
    low, high = frame.agg(F.min(quote(window.column)), F.max(quote(window.column))).toArrow().columns
    bounds = pa.table({window.column: pa.concat_arrays([*low.chunks, *high.chunks]).cast(field.type)})
    bounds_kept = target.runtime.fragment_bounds
    bounds_kept.learn_written(target.location, target.current, fragments, bounds, window.column)


def _delete_where(
    target: TableWrite, frame: DataFrame, where: str, window: TimeWindow | None
) -> lance.LanceOperation.Update:
    """The `Update` deleting the rows matching `where`, written by Spark tasks, one per fragment
    that may hold such rows (`row_changes.delete_where_with_tasks`): neither the matching rows
    nor their addresses come to the driver. With a `window` only the fragments whose range of the
    window's column meets it are asked (each batch of a backfill would otherwise ask every
    fragment the batches before it wrote: quadratic over the backfill); the ranges this process
    does not know yet are computed by Spark tasks too, one (min, max) pair per fragment back."""
    dataset = target.current
    scanned = None  # every fragment
    if window is not None:
        read = functools.partial(ranges_with_tasks, frame.sparkSession)
        candidates = target.runtime.fragment_bounds.candidates(target.location, dataset, window, read)
        scanned = None if candidates is None else [fragment.fragment_id for fragment in candidates]
    removed, updated = delete_where_with_tasks(frame.sparkSession, dataset, where, scanned)
    return lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)


def _commit_with(
    target: TableWrite,
    operation: lance.LanceOperation.Update,
    fragments: list[FragmentMetadata],
    properties: dict[str, str],
) -> int:
    """Commit the `Update` also adding `fragments` (both computed against the same read version),
    the files this change wrote; they are deleted if the commit does not land."""
    operation = dataclasses.replace(operation, new_fragments=fragments)
    return target.commit(operation, properties, written=fragments)


def _write(target: TableWrite, rows: pa.Table) -> list[FragmentMetadata]:
    """Data files for `rows` at the table's location, not yet part of any version."""
    if not rows.num_rows:
        return []
    schema = target.current.schema
    return target.write_fragments(fitted(rows, schema), schema)
