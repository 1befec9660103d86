"""Writing a whole table version: a Spark DataFrame (models, CTAS, DML) or an Arrow table (seeds).

Spark tasks write the frame's data files under the table's location and send back only their
fragment metadata; the operation is built and committed (or staged) here, in the dbt process, where
the engine is already open. So a reader sees the previous version or the new one, never a missing
or half-written table. The tasks write in Spark's JVM (`spark.jvm_writer`) when the session reads
through the JVM connector, else in Python workers (`spark.writer.write_with_tasks`); `write_tasks`
is the one place that chooses, write by write.
"""

from __future__ import annotations

from collections.abc import Sequence

import lance
import pyarrow as pa
from dbt.adapters.events.logging import AdapterLogger
from lance.fragment import FragmentMetadata
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write
from dbt.adapters.lancens.embeddings.functions import schema_metadata
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark import jvm_connector, jvm_writer
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.remote import is_remote
from dbt.adapters.lancens.spark.row_changes import StoredValues, StoredValuesWriter
from dbt.adapters.lancens.spark.types import (
    fixed_sizes_from_metadata,
    lance_write_schema,
    refuse_unreadable_names,
    spark_arrow_schema,
)
from dbt.adapters.lancens.spark.writer import LanceWriter, write_with_tasks

WRITE_MODES = ("append", "overwrite")
logger = AdapterLogger("lancens")


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
    `write.commit`. The driver holds only fragment metadata, however many rows there are; a failed
    write leaves no files. The tasks run in Spark's JVM when the session reads through the JVM
    connector and the JVM writer writes this data exactly as Python would (`jvm_target`), else in
    Python workers. `stored`: columns some rows take from the table as stored
    (`spark.row_changes`, Python only)."""
    write.runtime.activate()
    target = jvm_target(write, frame, schema, overwrite=overwrite) if stored is None else None
    if target is not None:
        return jvm_writer.write_fragments(frame, target)
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
    return write_with_tasks(frame, writer)


def jvm_target(
    write: TableWrite, frame: DataFrame, schema: pa.Schema, *, overwrite: bool
) -> jvm_writer.JvmWrite | None:
    """The JVM writer's target for this write, or None (logged, when the session has the JVM
    connector) where the Python writer writes it instead.

    lance-core makes an append's files with the field ids of the table's latest version at the
    location, so a write that builds on another version (one this atomic-publish run staged) stays
    on Python; so does a table lance-core cannot open, and data whose types it has no exact copy
    for. A branch target's write is the JVM's too: its location is the branch's own directory
    (`tree/<branch>`), whose latest version is the branch's, and the files land in its `data/`,
    where pylance puts a branch's files. A Spark Connect session has no py4j gateway to start the
    JVM writer's job through (the connector still reads there), so Connect writes through Python."""
    if not write.runtime.connector.jvm:
        return None
    reason = _outside_jvm(write, frame.sparkSession)
    if reason is None:
        version = (
            write.dataset.data_storage_version
            if write.dataset is not None
            else jvm_writer.NEW_TABLE_STORAGE_VERSION
        )
        target = jvm_writer.JvmWrite(
            write.location, schema, version, overwrite or write.dataset is None, write.storage_options
        )
        reason = jvm_writer.unsupported(frame, target)
        if reason is None:
            return target
    logger.info(
        f"dbt-lancens: {'.'.join(write.table_id)} is written through the Python writer, not the JVM "
        f"connector's: {reason}"
    )
    return None


def deletes_in_jvm(write: TableWrite) -> bool:
    """Whether the rows a change to the write's table removes are deleted by JVM tasks
    (`spark.jvm_deletions`) rather than pylance's in Python workers: where the session has the JVM
    connector and it works on the version the change builds on (`_outside_jvm`)."""
    runtime = write.runtime
    return runtime.connector.jvm and write.dataset is not None and _outside_jvm(write, runtime.spark) is None


def _outside_jvm(write: TableWrite, spark: SparkSession) -> str | None:
    """Why the JVM connector cannot work on the version the write builds on, or None."""
    if is_remote(spark):
        return (
            "the session is a Spark Connect session, which has no py4j gateway to start the JVM "
            "writer's job through"
        )
    if write.staged_tip is not None:
        return "it builds on a version this atomic-publish run staged, not the table's latest"
    if write.dataset is None:
        return None
    return jvm_connector.unreadable(spark, write.location, write.read_version, write.storage_options)


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
