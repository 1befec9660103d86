"""Writing a Spark DataFrame to a Lance table: fragments per task, one transaction on the driver.

Each task writes its own data files under the table's ``data/`` and reports their fragment
metadata; nothing is visible until one Append or Overwrite transaction pinned to the version the
write was planned against turns all of them into a version. A task that fails deletes the files it
wrote before failing; the files of the tasks that had succeeded are deleted when the write fails
as a whole. So a failed or aborted write leaves the previous version and no stray data files.

Two ways in: the ``lance`` data source's writer (``df.write.format("lance")``, catalog-table
``INSERT``), whose ``commit`` runs in a Python worker of the driver; and ``write_with_tasks``,
which runs the same task code through ``mapInArrow`` and hands the fragments to its caller, who
commits in its own process (the adapter does, through the namespace engine).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from dbt.adapters.lancens.spark.commit import commit_operation
from dbt.adapters.lancens.spark.dataset import try_open_latest
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.types import conform
from dbt.adapters.lancens.spark.worker_heap import freeze_imported_heap

if TYPE_CHECKING:
    import lance

log = logging.getLogger(__name__)
# ``write_with_tasks``'s result: one row per fragment, Lance's JSON fragment metadata.
FRAGMENT_COLUMN = "fragment"
FRAGMENT_SCHEMA = pa.schema([pa.field(FRAGMENT_COLUMN, pa.string())])
# How a task's error says its files were deleted under it (runtime/errors.py tells the user why).
REMOVED_WHILE_WRITING = "were removed while the write ran"
# What Lance's local writer reports when the directory of the file it writes is gone (pylance's
# OSError in a Python worker, lance-core's IOException in a JVM task: the same Rust text).
_GONE = ("No such file or directory", "failed to persist temp file")


def removed_while_writing(error: str, location: str) -> FileNotFoundError | None:
    """The error to raise when Lance's `error` (its text, possibly a whole Spark job failure with
    Java frames) says the files a write was adding at `location` were deleted under it, else None.
    The one place both writers (Python worker, JVM task) recognise it, so runtime/errors.py can
    tell the user a concurrent cleanup may have done it, whichever path wrote."""
    # the table's directory named on the same line: a query's own "No such file" elsewhere in a
    # job's failure is not this
    table_dir = location.rstrip("/").rsplit("/", 1)[-1]
    lines = (line.strip() for line in error.splitlines())
    gone = next(
        (line for line in lines if table_dir in line and any(marker in line for marker in _GONE)), None
    )
    if gone is None:
        return None
    return FileNotFoundError(
        f"the files this write was adding to the table at {location} {REMOVED_WHILE_WRITING} "
        f"(deleted by another process); nothing of this write was committed. Lance: {gone}"
    )


@dataclass(frozen=True)
class LanceCommitMessage(WriterCommitMessage):
    """The fragments one task wrote, as Lance's JSON fragment metadata (stable across processes)."""

    fragments: tuple[str, ...]


class _Upstream:
    """Feeds Spark's batches to Lance, but turns an upstream failure into a clean end of stream.

    Lance then finishes the files it started and reports them, so the task can delete exactly what
    it wrote before re-raising the original error.
    """

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> None:
        self.batches = batches
        self.schema = schema
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            for batch in self.batches:
                if batch.num_rows:
                    yield conform(batch, self.schema)
        except Exception as exc:
            self.error = exc


def delete_fragment_files(uri: str, storage_options: dict[str, str], fragments: Sequence[Any]) -> None:
    """Remove the data files of uncommitted fragments (best effort, logged; never raises)."""
    from lance.file import LanceFileSession

    session = LanceFileSession(uri.rstrip("/") + "/data", storage_options=storage_options)
    for fragment in fragments:
        for data_file in fragment.data_files():
            try:
                session.delete_file(data_file.path)
            except Exception:  # noqa: BLE001 - cleanup must not hide the write's own error
                log.warning("could not delete uncommitted Lance data file %s", data_file.path, exc_info=True)


def discard_uncommitted(uri: str, storage_options: dict[str, str], fragments: Sequence[Any]) -> None:
    """Delete the data files of ``fragments`` that the table's latest version does not reference.

    A commit can fail after it landed (a hook that errs late), so files the latest version
    references are never deleted."""
    if not fragments:
        return
    committed = _committed_files(LanceOptions(uri=uri, storage_options=dict(storage_options)))
    delete_fragment_files(
        uri, storage_options, [f for f in fragments if not {d.path for d in f.data_files()} & committed]
    )


def _fragments(messages: list[WriterCommitMessage | None]) -> list[Any]:
    from lance.fragment import FragmentMetadata

    return [
        FragmentMetadata.from_json(fragment)
        for message in messages
        if isinstance(message, LanceCommitMessage)
        for fragment in message.fragments
    ]


def _committed_files(options: LanceOptions) -> set[str]:
    """Data file paths the table's latest version references (empty when there is no table)."""
    dataset = try_open_latest(options)
    if dataset is None:
        return set()
    return {data_file.path for fragment in dataset.get_fragments() for data_file in fragment.data_files()}


def _same_place(dataset_uri: str, uri: str) -> bool:
    """Whether a dataset opened at ``dataset_uri`` is the one at ``uri`` (files go to its ``data/``)."""
    return dataset_uri.removeprefix("file://").rstrip("/") == uri.removeprefix("file://").rstrip("/")


class LanceWriter(DataSourceArrowWriter):
    """Planned on the driver with the target schema and read version; pickled to every task."""

    def __init__(
        self,
        options: LanceOptions,
        schema: pa.Schema,
        overwrite: bool,
        read_version: int | None,
        storage_version: str | None,
        base: lance.LanceDataset | None = None,
    ) -> None:
        self.options = options
        self.schema = schema
        self.overwrite = overwrite
        self.read_version = read_version
        self.storage_version = storage_version
        # The version the write builds on (``read_version``), pickled with its manifest to every
        # task: Lance's fragment writer then checks against it instead of opening the latest
        # version itself (a LIST and a GET per task on S3); the commit is pinned to it anyway.
        same = base is not None and base.version == read_version and _same_place(base.uri, options.uri)
        self.base = base if same else None

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        """Write this task's rows as new fragments (files only; not yet part of any version)."""
        from lance.fragment import write_fragments

        freeze_imported_heap()
        upstream = _Upstream(iterator, self.schema)
        try:
            fragments = write_fragments(
                pa.RecordBatchReader.from_batches(self.schema, iter(upstream)),
                self.base if self.base is not None else self.options.uri,
                schema=self.schema,
                mode="overwrite" if self.overwrite else "append",
                max_rows_per_file=self.options.max_rows_per_file,
                data_storage_version=self.storage_version,
                storage_options=self.options.storage_options or None,
            )
        except OSError as exc:
            removed = removed_while_writing(str(exc), self.options.uri)
            if removed is None:
                raise
            raise removed from exc
        if upstream.error is not None:
            delete_fragment_files(self.options.uri, self.options.storage_options, fragments)
            raise upstream.error
        return LanceCommitMessage(tuple(json.dumps(fragment.to_json()) for fragment in fragments))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """One Lance transaction for all tasks: Overwrite (or first write) else Append."""
        import lance

        fragments = _fragments(messages)
        operation: lance.LanceOperation.BaseOperation
        if self.overwrite or self.read_version is None:
            operation = lance.LanceOperation.Overwrite(self.schema, fragments)
        else:
            operation = lance.LanceOperation.Append(fragments)
        commit_operation(
            self.options.uri,
            operation,
            self.read_version,
            self.options.storage_options,
            self.options.commit_hook,
            self.options.commit_hook_args,
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Delete the files of tasks that finished; failed tasks already removed their own.

        Spark also aborts when ``commit`` raised, and a commit can fail after it landed, so files
        the latest version references are kept (``discard_uncommitted``).
        """
        discard_uncommitted(self.options.uri, self.options.storage_options, _fragments(messages))


class _Fragments(AccumulatorParam[list[str]]):
    """Accumulates the JSON fragment metadata that finished tasks report."""

    def zero(self, value: list[str]) -> list[str]:
        return []

    def addInPlace(self, value1: list[str], value2: list[str]) -> list[str]:
        return value1 + value2


def write_with_tasks(frame: DataFrame, writer: LanceWriter) -> list[Any]:
    """Write ``frame``'s partitions as fragments with Spark tasks (``writer.write`` each) and return
    the fragments, uncommitted: the caller commits them, in its own process.

    If the job fails, the files of the tasks that had finished are deleted (classic Spark reports
    them through an accumulator; Spark Connect has none, so there only failed tasks clean up).
    """
    from lance.fragment import FragmentMetadata

    finished = _accumulator(frame)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fragments = list(writer.write(batches).fragments)
        if finished is not None:
            finished.add(fragments)
        yield pa.RecordBatch.from_pydict({FRAGMENT_COLUMN: fragments}, schema=FRAGMENT_SCHEMA)

    try:
        rows = frame.mapInArrow(task, f"{FRAGMENT_COLUMN} string").collect()
    except BaseException:
        if finished is not None:
            written = [FragmentMetadata.from_json(fragment) for fragment in finished.value]
            discard_uncommitted(writer.options.uri, writer.options.storage_options, written)
        raise
    return [FragmentMetadata.from_json(row[FRAGMENT_COLUMN]) for row in rows]


def _accumulator(frame: DataFrame) -> Any:
    """A list accumulator in classic Spark; None through Spark Connect (no SparkContext there)."""
    try:
        context = frame.sparkSession.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect raises here
        return None
    return context.accumulator([], _Fragments())
