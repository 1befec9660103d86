"""Writing a whole table version: a Spark DataFrame (models, CTAS, DML) or an Arrow table (seeds).

Spark tasks write the frame's data files under the table's location and send back only their
fragment metadata (`spark.writer.write_with_tasks`); the operation is built and committed (or
staged) here, in the dbt process, where the engine is already open. So a reader sees the previous
version or the new one, never a missing or half-written table.
"""

from __future__ import annotations

from collections.abc import Sequence

import lance
import pyarrow as pa
from lance.fragment import FragmentMetadata
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write
from dbt.adapters.lancens.embeddings.functions import schema_metadata
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.row_changes import StoredValues, StoredValuesWriter
from dbt.adapters.lancens.spark.types import (
    fixed_sizes_from_metadata,
    lance_write_schema,
    refuse_unreadable_names,
    spark_arrow_schema,
)
from dbt.adapters.lancens.spark.writer import LanceWriter, write_with_tasks

WRITE_MODES = ("append", "overwrite")


def write_frame(
    runtime: LancensRuntime,
    table_id: Sequence[str],
    frame: DataFrame,
    mode: str,
    properties: dict[str, str],
    not_null: Sequence[str] = (),
) -> int:
    """Write `frame` to the table (`overwrite` replaces its rows, `append` adds); return the new version.

    `not_null` columns (a contract's constraints) become non-nullable Lance fields on overwrite."""
    if mode not in WRITE_MODES:
        raise ValueError(f"write mode must be one of {WRITE_MODES}, got {mode!r}")
    return write_opened(open_write(runtime, table_id), frame, mode, properties, not_null)


def write_opened(
    write: TableWrite,
    frame: DataFrame,
    mode: str,
    properties: dict[str, str],
    not_null: Sequence[str] = (),
) -> int:
    """`write_frame` through a write already opened (`open_write`), for a caller that opened it in
    the catalog state the frame's query was planned in; the write is abandoned if this fails."""
    overwrite = mode == "overwrite" or write.dataset is None
    try:
        if mode not in WRITE_MODES:
            raise ValueError(f"write mode must be one of {WRITE_MODES}, got {mode!r}")
        schema = lance_write_schema(
            spark_arrow_schema(frame.schema),
            write.schema,
            fixed_sizes_from_metadata(frame.schema),
            append=not overwrite,
            not_null=not_null,
        )
        if overwrite:  # the `embeddings` config's record, for LanceDB (appends keep the table's)
            schema = schema.with_metadata({**(schema.metadata or {}), **schema_metadata(frame.schema)})
        fragments = write_tasks(write, frame, schema, overwrite=overwrite)
    except BaseException:
        write.abandon()
        raise
    return _commit(write, schema, fragments, overwrite, properties)


def write_tasks(
    write: TableWrite,
    frame: DataFrame,
    schema: pa.Schema,
    *,
    overwrite: bool,
    stored: StoredValues | None = None,
) -> list[FragmentMetadata]:
    """Spark tasks write `frame`'s rows (each task casts them to `schema`) as data files of the
    write's table, built on the version the write builds on; the fragments, uncommitted, for
    `write.commit`. The driver holds only fragment metadata, however many rows there are; tasks
    that fail leave no files (`write_with_tasks`). `stored`: columns some rows take from the
    table as stored (`spark.row_changes`)."""
    writer: LanceWriter = LanceWriter(
        LanceOptions(uri=write.location, storage_options=write.storage_options),
        schema,
        overwrite=overwrite,
        read_version=write.read_version,
        storage_version=write.dataset.data_storage_version if write.dataset is not None else None,
        base=write.dataset,
    )
    if stored is not None:
        writer = StoredValuesWriter(writer, stored)
    write.runtime.activate()
    return write_with_tasks(frame, writer)


def write_arrow(
    runtime: LancensRuntime, table_id: Sequence[str], data: pa.Table, properties: dict[str, str]
) -> int:
    """Replace the table's rows with `data` in one commit, without Spark (seeds); return the new version."""
    refuse_unreadable_names(data.schema)
    write = open_write(runtime, table_id)
    try:
        # an overwrite may change the schema: Lance checks an append's against the current one
        fragments = write.write_fragments(data, data.schema, mode="overwrite")
    except BaseException:
        write.abandon()
        raise
    return _commit(write, data.schema, fragments, True, properties)


def _commit(
    write: TableWrite, schema: pa.Schema, fragments: list, overwrite: bool, properties: dict[str, str]
) -> int:
    if overwrite:
        operation: lance.LanceOperation.BaseOperation = lance.LanceOperation.Overwrite(schema, fragments)
    else:
        operation = lance.LanceOperation.Append(fragments)
    return write.commit(operation, properties, written=fragments)
