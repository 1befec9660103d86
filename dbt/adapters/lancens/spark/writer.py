"""Writing a Spark DataFrame to a Lance table: fragments per task, one transaction on the driver.

Each task writes its own data files under the table's ``data/`` and reports their fragment
metadata; nothing is visible until ``commit`` turns all of them into one Append or Overwrite
transaction pinned to the version the write was planned against. A task that fails deletes the
files it wrote before failing; ``abort`` deletes the files of the tasks that had succeeded. So a
failed or aborted write leaves the previous version and no stray data files.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from dbt.adapters.lancens.spark.commit import commit_operation
from dbt.adapters.lancens.spark.dataset import try_open_latest
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.types import conform

log = logging.getLogger(__name__)


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


def delete_fragment_files(options: LanceOptions, fragments: list) -> None:
    """Remove the data files of uncommitted fragments (best effort, logged; never raises)."""
    from lance.file import LanceFileSession

    session = LanceFileSession(options.uri.rstrip("/") + "/data", storage_options=options.storage_options)
    for fragment in fragments:
        for data_file in fragment.data_files():
            try:
                session.delete_file(data_file.path)
            except Exception:  # noqa: BLE001 - cleanup must not hide the write's own error
                log.warning("could not delete uncommitted Lance data file %s", data_file.path, exc_info=True)


def _fragments(messages: list[WriterCommitMessage | None]) -> list:
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


class LanceWriter(DataSourceArrowWriter):
    """Planned on the driver with the target schema and read version; pickled to every task."""

    def __init__(
        self,
        options: LanceOptions,
        schema: pa.Schema,
        overwrite: bool,
        read_version: int | None,
        storage_version: str | None,
    ) -> None:
        self.options = options
        self.schema = schema
        self.overwrite = overwrite
        self.read_version = read_version
        self.storage_version = storage_version

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        """Write this task's rows as new fragments (files only; not yet part of any version)."""
        from lance.fragment import write_fragments

        upstream = _Upstream(iterator, self.schema)
        fragments = write_fragments(
            pa.RecordBatchReader.from_batches(self.schema, iter(upstream)),
            self.options.uri,
            schema=self.schema,
            mode="overwrite" if self.overwrite else "append",
            max_rows_per_file=self.options.max_rows_per_file,
            data_storage_version=self.storage_version,
            storage_options=self.options.storage_options or None,
        )
        if upstream.error is not None:
            delete_fragment_files(self.options, fragments)
            raise upstream.error
        return LanceCommitMessage(tuple(json.dumps(fragment.to_json()) for fragment in fragments))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """One Lance transaction for all tasks: Overwrite (or first write) else Append."""
        import lance

        fragments = _fragments(messages)
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

        Spark also aborts when ``commit`` raised, and a commit can fail after it landed (a hook
        that errs late), so files the latest version references are never deleted.
        """
        fragments = _fragments(messages)
        committed = _committed_files(self.options) if fragments else set()
        delete_fragment_files(
            self.options,
            [f for f in fragments if not {d.path for d in f.data_files()} & committed],
        )
