"""The `indexes` config in a dbt build: vector columns shaped before the write, indexes after it.

A model, seed or snapshot build calls `vector_frame` on its result before writing it (a column a
vector index names becomes `fixed_size_list<float32, N>`) and `build_indexes` once its version is
written (`indexes.apply_indexes`: one CreateIndex commit, index optimisation for added rows; staged
with the rows in an atomic-publish run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.staging import RunPublisher
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.materializations import vectors
from dbt.adapters.lancens.materializations.index_commits import index_commits
from dbt.adapters.lancens.materializations.index_config import parse_indexes, vector_columns
from dbt.adapters.lancens.materializations.indexes import IndexOutcome, apply_indexes, recorded
from dbt.adapters.lancens.metadata.engine_dataset import latest


def vector_frame(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    raw_indexes: Any,
    key: Sequence[str] = (),
    adds_rows: bool = False,
    sample: Callable[[], DataFrame] | None = None,
) -> DataFrame:
    """`frame` with every vector column checked and sized; unchanged when no vector index is configured.

    `adds_rows`: the rows go into the existing table (incremental runs, appends), so a vector column
    keeps the table's size. `sample`: the same rows without filter pushdown, for the size query
    (`vectors.prepare_vectors`)."""
    columns = vector_columns(parse_indexes(raw_indexes))
    if not columns:
        return frame
    sizes = vectors.existing_sizes(_schema(runtime, table_id)) if adds_rows else None
    return vectors.prepare_vectors(frame, columns, key, sizes, sample)


def _schema(runtime: LancensRuntime, table_id: list[str]) -> pa.Schema | None:
    if not runtime.namespace.table_exists(table_id):
        return None
    return latest(runtime.namespace, table_id).schema


def build_indexes(
    runtime: LancensRuntime, table_id: list[str], raw_indexes: Any, properties: dict[str, str]
) -> IndexOutcome | None:
    """Make the table's indexes match its config; in an atomic-publish run they are staged on top of
    the run's version of the table and published with it. None when there is nothing to keep: no
    index is configured and dbt never built one on this table."""
    specs = parse_indexes(raw_indexes)
    staging = runtime.publisher
    if not specs and not _built_by_dbt(runtime, table_id, staging):
        return None
    outcome = apply_indexes(runtime.namespace, table_id, specs, properties, staging)
    if outcome.version is not None:
        runtime.refresh_table(table_id)
    return outcome


def _built_by_dbt(runtime: LancensRuntime, table_id: list[str], staging: RunPublisher | None) -> bool:
    commits = index_commits(runtime.namespace, table_id, {}, staging)
    return commits is not None and bool(recorded(commits.dataset))
