"""The `indexes` config in a dbt build: columns checked and vectors shaped before the write,
indexes built after it.

A model, seed or snapshot build checks its result before writing it (`checked_frame`,
`checked_seed`, `check_staged_columns`): every index's column must be in the table the write
leaves, a vector index's column must be or become a vector (a column a vector index names becomes
`fixed_size_list<float32, N>`), so such a mistake fails the build with nothing committed. Then
`build_indexes` runs once its version is written (`indexes.apply_indexes`: one CreateIndex commit,
index optimisation for added rows; staged with the rows in an atomic-publish run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from dbt.adapters.lancens.definitions.index_config import parse_indexes, vector_columns
from dbt.adapters.lancens.materializations import vectors
from dbt.adapters.lancens.materializations.index_commits import index_commits
from dbt.adapters.lancens.materializations.indexes import (
    IndexOutcome,
    apply_indexes,
    check_columns,
    check_dimensions,
    recorded,
)
from dbt.adapters.lancens.metadata.engine_dataset import latest
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime.landing import Landing
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.types import fixed_sizes_from_metadata


def checked_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    raw_indexes: Any,
    key: Sequence[str] = (),
    adds_rows: bool = False,
    on_schema_change: str = "append_new_columns",
    sample: Callable[[], DataFrame] | None = None,
) -> DataFrame:
    """`frame` with every index's column checked and every vector column sized, before the write;
    unchanged when no index is configured.

    `adds_rows`: the rows go into the existing table (incremental runs), so the indexes need the
    columns the table will have after the run (`on_schema_change` decides which of the model's are
    added) and a vector column keeps the table's size. `sample`: the same rows without filter
    pushdown, for the size query (`vectors.prepare_vectors`)."""
    specs = parse_indexes(raw_indexes)
    if not specs:
        return frame
    table = _schema(runtime, table_id) if adds_rows else None
    specs = check_columns(specs, _columns_after(frame.columns, table, on_schema_change))
    columns = vector_columns(specs)
    if not columns:
        return frame
    sizes = vectors.existing_sizes(table) if table is not None else None
    replaced = None if adds_rows else (lambda: vectors.existing_sizes(_schema(runtime, table_id)))
    frame = vectors.prepare_vectors(frame, columns, key, sizes, sample, replaced)
    check_dimensions(specs, ColumnMap(fixed_sizes_from_metadata(frame.schema).items()))
    return frame


def checked_seed(rows: pa.Table, raw_indexes: Any) -> pa.Table:
    """A seed's rows with its vector columns as fixed-size lists and every index's column checked,
    before the seed is written (a seed replaces the table: its columns are the CSV's)."""
    specs = parse_indexes(raw_indexes)
    rows = vectors.arrow_vectors(rows, vector_columns(specs))
    check_columns(specs, [(field.name, field.type) for field in rows.schema])
    return rows


def check_staged_columns(
    runtime: LancensRuntime, table_id: list[str], staged: pa.Schema, raw_indexes: Any
) -> None:
    """Before a snapshot's later run merges its rows: the indexes find their columns in the table or
    among the columns the run adds (as Arrow reads them: a new vector column is no vector)."""
    specs = parse_indexes(raw_indexes)
    if specs:
        table = _schema(runtime, table_id) or pa.schema([])
        known = column_names(table.names)
        added = [f for f in staged if f.name not in known]
        check_columns(specs, [(f.name, f.type) for f in [*table, *added]])


def _columns_after(
    result: list[str], table: pa.Schema | None, on_schema_change: str
) -> list[tuple[str, pa.DataType | None]]:
    """The table's columns once the result is written: the result's (typed None: the write shapes
    them) for a new or replaced table; else the table's, with their stored types, plus the result's
    new ones as `on_schema_change` adds them, minus those `sync_all_columns` drops."""
    if table is None:
        return [(name, None) for name in result]
    in_result, in_table = column_names(result), column_names(table.names)
    kept = [(f.name, f.type) for f in table if on_schema_change != "sync_all_columns" or f.name in in_result]
    if on_schema_change not in ("append_new_columns", "sync_all_columns"):
        return kept
    return [*kept, *((name, None) for name in result if name not in in_table)]


def _schema(runtime: LancensRuntime, table_id: list[str]) -> pa.Schema | None:
    """The table's schema; None when it does not exist or has no data yet."""
    try:
        if runtime.namespace.describe_table(table_id).declared_only:
            return None
    except errors.TableNotFoundError:
        return None
    return latest(runtime.namespace, table_id).schema


def build_indexes(
    runtime: LancensRuntime, table_id: list[str], raw_indexes: Any, properties: dict[str, str]
) -> IndexOutcome | None:
    """Make the table's indexes match its config; in an atomic-publish run they are staged on top of
    the run's version of the table and published with it. None when there is nothing to keep: no
    index is configured and dbt never built one on this table."""
    specs = parse_indexes(raw_indexes)
    landing = runtime.landing
    if not specs and not _built_by_dbt(runtime, table_id, landing):
        return None
    outcome = apply_indexes(runtime.namespace, table_id, specs, properties, landing)
    if outcome.version is not None:
        runtime.refresh_table(table_id)
    return outcome


def _built_by_dbt(runtime: LancensRuntime, table_id: list[str], landing: Landing) -> bool:
    """Whether the version the build left records indexes dbt built. The version this process's
    write just committed answers without asking the namespace (two requests on S3: the manifest's
    and the table's version checks): the build is over, and a later commit by another process is
    that process's to index. Otherwise (an atomic-publish run, a build that committed nothing) the
    table's latest version, where the indexes would be planned."""
    committed = runtime.last_committed(table_id) if landing.visible_at_once else None
    if committed is not None:
        return bool(recorded(committed))
    commits = index_commits(runtime.namespace, table_id, {}, landing)
    return commits is not None and bool(recorded(commits.dataset))
