"""Atomic publish: every table a dbt run builds becomes visible to namespace readers together.

`begin` (the adapter's on-run-start hook) switches the process's writes to staging
(`staging.py`); `finish` (its on-run-end hook) publishes every staged version of the run in ONE
`__manifest` commit (the engine's BatchCreateTableVersions) when the run succeeded, and discards
them when any node failed. A run that dies before its end publishes nothing: staged versions have no
row, and the engine never reports them.

Inside the run, the Spark catalog entry of a staged table reads its staged content, so downstream
models see their upstream's new rows while every other reader sees the previous versions.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import lance
import pyarrow as pa
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits import staging
from dbt.adapters.lancens.commits.hook import hook_args
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.metadata.versions import enable_version_management
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.spark import catalog
from dbt.adapters.lancens.spark.datasource import register_bound_source

FAILED_STATUSES = frozenset({"error", "fail", "runtime error", "partial success"})


@dataclass
class RunPublisher:
    """The staged writes of one dbt invocation in this process."""

    run_id: str
    records: str
    writes: dict[tuple[str, ...], staging.StagedWrite] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, table_id: list[str], written: staging.StagedWrite) -> None:
        with self.lock:
            self.writes[tuple(table_id)] = written

    def claim(self, table_id: list[str]) -> None:
        """One staged version per table per run: a second would build on a version nobody sees."""
        with self.lock:
            if tuple(table_id) in self.writes:
                raise errors.InvalidInputError(
                    f"atomic publish: {'.'.join(table_id)} was already written in this run"
                )


_ACTIVE: dict[int, RunPublisher] = {}
_ACTIVE_LOCK = threading.Lock()


def begin(runtime: LancensRuntime, run_id: str) -> None:
    """Start staging this process's writes (needs table version management, which it turns on)."""
    enable_version_management(runtime.namespace)
    publisher = RunPublisher(run_id, tempfile.mkdtemp(prefix="lancens-run-"))
    with _ACTIVE_LOCK:
        stale = _ACTIVE.pop(id(runtime), None)
        _ACTIVE[id(runtime)] = publisher
    if stale is not None:
        _discard(runtime, stale)


def active(runtime: LancensRuntime) -> RunPublisher | None:
    with _ACTIVE_LOCK:
        return _ACTIVE.get(id(runtime))


def stage_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    mode: str,
    properties: dict[str, str],
    not_null: Sequence[str] = (),
) -> int:
    """Write `frame` as a staged version of the table; returns the version it will have once published."""
    publisher = _require(runtime)
    publisher.claim(table_id)
    namespace = runtime.namespace
    location = _location(runtime, table_id)
    record = f"{publisher.records}/{uuid.uuid4().hex}.json"
    args = hook_args(namespace, table_id, properties)
    args.update(record=record, scratch=staging.scratch_root(namespace, publisher.run_id))
    runtime.activate()
    (
        frame.write.format("lance")
        .mode(mode)
        .option("storage_options", json.dumps(namespace.storage_options))
        .option("commit_hook", staging.HOOK)
        .option("commit_hook_args", json.dumps(args))
        .option("not_null", ",".join(not_null))
        .save(location)
    )
    return _staged(runtime, publisher, table_id, staging.read_record(record))


def stage_arrow(
    runtime: LancensRuntime, table_id: list[str], data: pa.Table, properties: dict[str, str]
) -> int:
    """Seeds: replace the table's rows with `data` as a staged version, without Spark."""
    location = _location(runtime, table_id)
    fragments = lance.fragment.write_fragments(
        data, location, schema=data.schema, storage_options=runtime.namespace.storage_options or None
    )
    operation = lance.LanceOperation.Overwrite(data.schema, fragments)
    return stage_operation(runtime, table_id, operation, None, properties, location)


def stage_operation(
    runtime: LancensRuntime,
    table_id: list[str],
    operation: lance.LanceOperation.BaseOperation,
    read_version: int | None,
    properties: dict[str, str],
    location: str,
) -> int:
    """Stage a ready Lance operation (its data files already under `location`) as the run's version
    of the table; returns the version it gets when the run publishes. The run's later models read it."""
    publisher = _require(runtime)
    publisher.claim(table_id)
    namespace = runtime.namespace
    written = staging.stage(
        namespace,
        table_id,
        operation,
        read_version,
        properties,
        location,
        staging.scratch_root(namespace, publisher.run_id),
    )
    return _staged(runtime, publisher, table_id, written)


def finish(runtime: LancensRuntime, statuses: list[str]) -> dict[tuple[str, ...], int]:
    """End of run: publish everything staged when no node failed, else discard it all."""
    with _ACTIVE_LOCK:
        publisher = _ACTIVE.pop(id(runtime), None)
    if publisher is None or not publisher.writes:
        if publisher is not None:
            shutil.rmtree(publisher.records, ignore_errors=True)
        return {}
    if FAILED_STATUSES.intersection(str(status).lower() for status in statuses):
        _discard(runtime, publisher)
        return {}
    try:
        published = runtime.namespace.publish([w.staged for w in publisher.writes.values()])
    except BaseException:
        _discard(runtime, publisher)
        raise
    _cleanup(runtime, publisher, keep_tables=True)
    return published


def _require(runtime: LancensRuntime) -> RunPublisher:
    publisher = active(runtime)
    if publisher is None:
        raise errors.InvalidInputError("atomic publish is not active in this run")
    return publisher


def _location(runtime: LancensRuntime, table_id: list[str]) -> str:
    """Where the staged data goes: the table's directory, or a fresh one for a table not yet published."""
    namespace = runtime.namespace
    if namespace.table_exists(table_id):
        return namespace.describe_table(table_id).location
    return namespace.table_location(table_id)


def _staged(
    runtime: LancensRuntime, publisher: RunPublisher, table_id: list[str], written: staging.StagedWrite
) -> int:
    """Remember the staged write and point the Spark catalog entry at its staged content."""
    publisher.add(table_id, written)
    options = {
        "path": written.read_path,
        "storage_options": json.dumps(runtime.namespace.storage_options, sort_keys=True),
    }
    if written.read_version is not None:
        options["version"] = str(written.read_version)
    database = catalog.database_name(table_id[:-1])
    with runtime.lock:
        source = register_bound_source(runtime.spark, options)
        runtime.spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        runtime.spark.sql(f"DROP TABLE IF EXISTS {catalog.qualified_name(table_id)}")
        runtime.spark.sql(f"CREATE TABLE {catalog.qualified_name(table_id)} USING {source}")
    return written.staged.version


def _discard(runtime: LancensRuntime, publisher: RunPublisher) -> None:
    _cleanup(runtime, publisher, keep_tables=False)


def _cleanup(runtime: LancensRuntime, publisher: RunPublisher, keep_tables: bool) -> None:
    """Delete the run's scratch copies, detached and (unpublished) staged manifests; re-point Spark's
    catalog at the published tables so later invocations of this process read what readers see."""
    namespace = runtime.namespace
    storage = Storage(namespace.root, namespace.storage_options)
    for table_id, written in publisher.writes.items():
        garbage = list(written.garbage)
        if not keep_tables and written.staged.table_row is not None:
            garbage.append(written.staged.location)  # a new table's directory: nobody else knows it
        for path in garbage:
            if storage.exists(path):
                storage.rm(path, recursive=True)
        with runtime.lock:
            if keep_tables or namespace.table_exists(list(table_id)):
                catalog.sync_table(runtime.spark, namespace, list(table_id))
            else:
                catalog.forget_table(runtime.spark, list(table_id))
    scratch = staging.scratch_root(namespace, publisher.run_id)
    if storage.exists(scratch):
        storage.rm(scratch, recursive=True)
    shutil.rmtree(publisher.records, ignore_errors=True)
