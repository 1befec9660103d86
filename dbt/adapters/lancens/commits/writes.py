"""Writing a Spark DataFrame as the next version of a namespace table.

Every write is one Lance commit made through the engine (the data source's commit hook), so a
reader sees the previous version or the new one, never a missing or half-written table. A table
that did not exist is declared first, which reserves its location; if its first write fails the
declaration is withdrawn so no empty table is left behind.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import lance
import pyarrow as pa
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits import publish
from dbt.adapters.lancens.commits.hook import HOOK, hook_args
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.spark import catalog

WRITE_MODES = ("append", "overwrite")


def write_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    mode: str,
    transaction_properties: dict[str, str],
    not_null: Sequence[str] = (),
) -> int:
    """Write `frame` to the table (`overwrite` replaces its rows, `append` adds); return the new version.

    `not_null` columns (a contract's constraints) become non-nullable Lance fields on overwrite."""
    if mode not in WRITE_MODES:
        raise ValueError(f"write mode must be one of {WRITE_MODES}, got {mode!r}")
    if publish.active(runtime) is not None:  # atomic publish: stage now, publish at the end of the run
        return publish.stage_frame(runtime, table_id, frame, mode, transaction_properties, not_null)
    namespace = runtime.namespace
    runtime.activate()
    declared_here = _ensure_declared(runtime, table_id)
    location = namespace.describe_table(table_id).location
    with tempfile.TemporaryDirectory(prefix="lancens-commit-") as report_dir:
        report = Path(report_dir, "version")
        args = hook_args(namespace, table_id, transaction_properties, report_to=str(report))
        try:
            (
                frame.write.format("lance")
                .mode(mode)
                .option("storage_options", json.dumps(namespace.storage_options))
                .option("commit_hook", HOOK)
                .option("commit_hook_args", json.dumps(args))
                .option("not_null", ",".join(not_null))
                .save(location)
            )
        except BaseException:
            if declared_here:
                _withdraw(runtime, table_id)
            raise
        committed = report.read_text() if report.exists() else ""
    with runtime.lock:
        catalog.sync_table(runtime.spark, namespace, table_id)
    if committed:
        return int(committed)
    # The commit ran where this process cannot see its report (a driver on another host).
    version = namespace.describe_table(table_id).version
    return int(version) if version is not None else 0


def _ensure_declared(runtime: LancensRuntime, table_id: list[str]) -> bool:
    """Declare the table when the namespace does not have it yet; True when this call declared it."""
    namespace = runtime.namespace
    if namespace.table_exists(table_id):
        return False
    try:
        namespace.declare_table(table_id)
    except errors.TableAlreadyExistsError:
        return False  # another writer declared it first: share its location
    return True


def _withdraw(runtime: LancensRuntime, table_id: list[str]) -> None:
    """Remove a declaration whose first write failed, unless a concurrent writer gave it data."""
    namespace = runtime.namespace
    try:
        if namespace.describe_table(table_id).declared_only:
            namespace.drop_table(table_id)
    except errors.NamespaceError:
        pass  # already gone


def write_arrow(
    runtime: LancensRuntime, table_id: list[str], data: pa.Table, transaction_properties: dict[str, str]
) -> int:
    """Replace the table's rows with `data` in one commit, without Spark (seeds); return the new version."""
    if publish.active(runtime) is not None:  # atomic publish: stage now, publish at the end of the run
        return publish.stage_arrow(runtime, table_id, data, transaction_properties)
    namespace = runtime.namespace
    declared_here = _ensure_declared(runtime, table_id)
    info = namespace.describe_table(table_id)
    try:
        fragments = lance.fragment.write_fragments(
            data, info.location, schema=data.schema, storage_options=namespace.storage_options or None
        )
        version = namespace.commit_table(
            table_id,
            lance.LanceOperation.Overwrite(data.schema, fragments),
            read_version=info.version,
            transaction_properties=transaction_properties,
        )
    except BaseException:
        if declared_here:
            _withdraw(runtime, table_id)
        raise
    with runtime.lock:
        catalog.sync_table(runtime.spark, namespace, table_id)
    return version
