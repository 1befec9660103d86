"""Writing a Spark DataFrame's rows as Lance data files inside Spark's JVM, with lance-core.

The JVM path's writer (docs/jvm-connector.md, "Writes"): each Spark task copies its rows into Arrow
batches of the table's own schema and has lance-core write them as data files at the table's
location, without committing (`org.dbtlancens.spark.FragmentWriter`). Rows never cross into a
Python worker; only the fragments' metadata (JSON) reaches the driver, which turns it into
`lance.FragmentMetadata` for the caller to commit, as it commits the Python writer's
(`spark.writer.write_with_tasks`).

Files are always written in the table's own data-file version, named explicitly: lance-core 7
writes 2.1 by default, and pylance commits 2.1 files into a 2.2 table with a reader flag after
which lance-core can never open the table again.

Cleanup: a task whose rows fail (the model's query, a NULL for a NOT NULL field) does not fail:
Lance finishes the files it started, and the task returns them and then its failure, Java-serialised.
(A failed task makes Spark fail the job at once, and the tasks still running then finish files
Spark no longer tells the driver of.) So every task ends, the driver deletes every file and raises
the first failure as the task met it. Every fragment any task attempt finished is also reported to
a Spark accumulator that counts failed attempts: after a successful write, the files of attempts
Spark retried are deleted; after a job that failed anyway (an executor lost, a cancel), the driver
waits for the job's tasks to stop and deletes what was reported (a task Spark kills fails its Lance
write rather than finish the file).
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from lance.fragment import FragmentMetadata
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.java_classes import java_class, seq_elements
from dbt.adapters.lancens.spark.options import DEFAULT_MAX_ROWS_PER_FILE
from dbt.adapters.lancens.spark.writer import (
    delete_fragment_files,
    discard_uncommitted,
    removed_while_writing,
)

log = logging.getLogger(__name__)
WRITER_CLASS = "org.dbtlancens.spark.FragmentWriter"
_ACCUMULATOR_CLASS = "org.apache.spark.util.CollectionAccumulator"
# How a task's result that is its failure begins (`FragmentWriter.FAILED`).
FAILED = "!failed:"
JOB_DESCRIPTION = "spark.job.description"
# How long a failed write waits for its other tasks to end before deleting what they wrote.
TASKS_END_WAIT = 300.0
# How the write's Spark job is described (Spark's UI, its status store), after the description the
# job would have had: the table's location follows.
JOB_PREFIX = "dbt-lancens: Lance data files written in the JVM to"
# The data-file version pylance 14 gives a new table (tests/unit/test_jvm_writer.py checks it still
# does): a new table written from the JVM gets the version the Python path would have made.
NEW_TABLE_STORAGE_VERSION = "2.2"
# The data-file versions lance-core 7 writes; a table in another (a newer one pylance made, the
# legacy 0.1) is written from Python.
JVM_STORAGE_VERSIONS = ("2.0", "2.1", "2.2")


@dataclass(frozen=True)
class JvmWrite:
    """Where the files of one write go and what they hold: the table's location, the Lance schema
    the write commits, the table's data-file version, and whether the write replaces the table
    (its files then carry fresh field ids) or appends to its latest version (its field ids)."""

    location: str
    schema: pa.Schema
    storage_version: str
    overwrite: bool
    storage_options: Mapping[str, str] = field(default_factory=dict)
    max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE


def unsupported(frame: DataFrame, target: JvmWrite) -> str | None:
    """Why the JVM writer cannot write `frame` into `target` exactly as the Python writer would
    (a data-file version lance-core does not write, a column whose Spark and Lance types it has no
    exact copy for), or None when it can. Asks the connector itself, the one place the types it
    writes are listed."""
    if target.storage_version not in JVM_STORAGE_VERSIONS:
        return (
            f"the table's data files are format {target.storage_version}, which lance-core 7 does not write"
        )
    ordered = _in_schema_order(frame, target.schema)
    reason = java_class(frame.sparkSession._jvm, WRITER_CLASS).unsupported(
        ordered._jdf, _schema_stream(target.schema)
    )
    return None if reason is None else str(reason)


def write_fragments(frame: DataFrame, target: JvmWrite) -> list[FragmentMetadata]:
    """Spark tasks write `frame`'s rows as uncommitted fragments of `target` (their files deleted if
    the write fails); their metadata, for the caller's commit."""
    spark = frame.sparkSession
    jvm: Any = spark._jvm
    written = java_class(jvm, _ACCUMULATOR_CLASS)()
    # registered to count failed tasks' values: their finished files are deleted here (a private
    # Scala method, public in the bytecode; SparkContext.collectionAccumulator counts only successes)
    written.register(
        spark.sparkContext._jsc.sc(), java_class(jvm, "scala.Option").apply("lancens fragments written"), True
    )
    ordered = _in_schema_order(frame, target.schema)
    task = java_class(jvm, WRITER_CLASS).task(
        ordered._jdf,
        target.location,
        _schema_stream(target.schema),
        target.storage_version,
        json.dumps(dict(target.storage_options)),
        target.max_rows_per_file,
        target.overwrite,
        written,
    )
    context = spark.sparkContext
    described = context.getLocalProperty(JOB_DESCRIPTION)
    # after the description the job already has (the dbt node's query comment, runtime/jvm.py)
    description = " | ".join(part for part in (described, f"{JOB_PREFIX} {target.location}") if part)
    context.setJobDescription(description)
    try:
        tasks = ordered._jdf.queryExecution().toRdd().toJavaRDD().mapPartitions(task)
        rows = [str(row) for row in tasks.collect()]
    except Exception as exc:
        _wait_for_tasks(spark, description)
        discard_uncommitted(target.location, dict(target.storage_options), _reported(written))
        _raise_if_removed(exc, target.location)
        raise
    except BaseException:  # interrupted: what is known now, without waiting for the tasks
        discard_uncommitted(target.location, dict(target.storage_options), _reported(written))
        raise
    finally:
        context.setLocalProperty(JOB_DESCRIPTION, described)  # type: ignore[arg-type]  # None unsets
    failures = [row for row in rows if row.startswith(FAILED)]
    if failures:  # every task ended; raise the first one's failure once all files are gone
        made = [FragmentMetadata.from_json(row) for row in rows if not row.startswith(FAILED)]
        discard_uncommitted(target.location, dict(target.storage_options), [*made, *_reported(written)])
        try:
            java_class(jvm, WRITER_CLASS).rethrow(failures[0])
        except Exception as exc:
            _raise_if_removed(exc, target.location)
            raise
    retried = set(_json_values(written)) - set(rows)
    if retried:  # attempts Spark ran again: no version can name their files
        delete_fragment_files(
            target.location, dict(target.storage_options), [FragmentMetadata.from_json(f) for f in retried]
        )
    return [FragmentMetadata.from_json(row) for row in rows]


def _raise_if_removed(failure: Exception, location: str) -> None:
    """Raise the writers' shared "files removed while the write ran" error (spark/writer.py) when
    lance-core's failure in a task says so: Spark's own error buries it in a job abort with Java
    frames, which the user would otherwise get instead of being told a cleanup may have done it."""
    removed = removed_while_writing(str(failure), location)
    if removed is not None:
        raise removed from failure


def _wait_for_tasks(spark: SparkSession, description: str) -> None:
    """Return once no task of the jobs described `description` runs any more (or after
    `TASKS_END_WAIT` seconds, logged). When a task fails, Spark fails the job at once but lets the
    other running tasks end on their own: each stops at its next row and reports the files it
    finished, which the accumulator holds once Spark has handled the task's end, before it tells
    its listeners. The status store is one of them, fed through the listener bus, so the bus is
    drained before each look (else the job may not even be there yet)."""
    context = spark._jsc.sc()
    deadline = time.monotonic() + TASKS_END_WAIT
    while time.monotonic() < deadline:
        _drain_listener_bus(context)
        jobs = seq_elements(context.statusStore().jobsList(None))
        described = [job for job in jobs if job.description().isDefined()]
        if not any(str(job.description().get()) == description and job.numActiveTasks() for job in described):
            return
        time.sleep(0.1)
    log.warning("tasks of the failed JVM write (%s) still run; files they finish may stay", description)


def _drain_listener_bus(context: Any) -> None:
    """Wait until Spark's listeners have seen every event posted so far (`LiveListenerBus.
    waitUntilEmpty`, Spark-private in Scala, public in the bytecode); a short pause where a Spark
    has no such method."""
    try:
        context.listenerBus().waitUntilEmpty()
    except Exception:  # noqa: BLE001 - py4j's error for a method this Spark lacks
        log.debug("Spark's listener bus cannot be drained here; pausing instead", exc_info=True)
        time.sleep(1.0)


def _in_schema_order(frame: DataFrame, schema: pa.Schema) -> DataFrame:
    """`frame`'s columns in the order of `schema`, matched by name case-insensitively (as the
    Python writer's `conform` matches them); a column of the schema the frame lacks fails."""
    by_name = column_names(frame.columns)
    missing = [name for name in schema.names if name not in by_name]
    if missing:
        raise ValueError(f"columns {missing} of the Lance schema are missing from the data")
    wanted = [by_name[name] for name in schema.names]
    if wanted == frame.columns:
        return frame
    return frame.select(*[F.col(f"`{name}`") for name in wanted])


def _schema_stream(schema: pa.Schema) -> bytes:
    """`schema` as an Arrow IPC stream without batches: how the JVM gets the table's exact schema
    (field metadata and nullability included)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, schema):
        pass
    return sink.getvalue()


def _json_values(accumulator: object) -> list[str]:
    return [str(value) for value in accumulator.value()]  # type: ignore[attr-defined]


def _reported(accumulator: object) -> Sequence[FragmentMetadata]:
    return [FragmentMetadata.from_json(value) for value in _json_values(accumulator)]
