"""Snapshots: dbt-core's staging rows applied to the snapshot table as ONE Lance commit.

dbt-core's `snapshot_staging_table` SQL (run in Spark) already says, per row, what changed:
`insert` rows are new record versions, `update`/`delete` rows close the current version (they
carry its `dbt_scd_id` and the new `dbt_valid_to`). That is dbt's `snapshot_merge_sql` on the scd
id; here Spark names the current records to close by their Lance row address, with their new
`dbt_valid_to`. The staging rows are made once and kept by Spark's executors; the closed records
are written by Spark tasks as Lance stores them (the writing task takes every column but
`dbt_valid_to` from the stored row), replace the old rows (deleted per fragment by tasks) and are
committed with the inserts as one `Update` (see merge.py). No row reaches the driver.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write, version_read
from dbt.adapters.lancens.materializations import index_run, merge, schema_evolution
from dbt.adapters.lancens.materializations.source_view import addressed_view, frame_view
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import column_names, fold
from dbt.adapters.lancens.spark.options import ROW_ADDRESS
from dbt.adapters.lancens.spark.row_changes import StoredValues
from dbt.adapters.lancens.spark.types import spark_arrow_schema
from dbt.adapters.lancens.text.quoting import quote

# Columns of dbt's staging query that are not snapshot columns.
_STAGING_ONLY = ("dbt_change_type", "dbt_unique_key")


def merge_staging(
    runtime: LancensRuntime,
    table_id: list[str],
    staging_sql: str,
    columns: dict[str, str],
    properties: dict[str, str],
    raw_indexes: Any = None,
    empty: bool = False,
) -> tuple[int, int]:
    """Apply the staging rows; return (new version, rows inserted or closed).

    `columns` are dbt's snapshot column names (`dbt_scd_id`, `dbt_valid_to`, ...) plus
    `valid_to_current`: the `dbt_valid_to_current` expression, or empty. `raw_indexes`: the
    snapshot's `indexes` config, checked against the columns before anything is committed.
    `empty` (`dbt build --empty`): the sources read no rows, so dbt's staging query would close
    every current record under `hard_deletes`; the snapshot only gains the query's new columns."""
    seen = version_read(runtime, table_id)
    staging = merge.made_once(runtime, runtime.sql(staging_sql, pushdown=True))  # reads the snapshot itself
    staged = spark_arrow_schema(staging.schema)
    index_run.check_staged_columns(runtime, table_id, staged, raw_indexes)
    target = open_write(runtime, table_id, must_exist=True)
    target.refuse_if_moved_since(seen)
    known = column_names(target.current.schema.names)
    added = [
        field
        for field in staged
        if field.name not in known
        and not fold(field.name).startswith(_STAGING_ONLY)
        and not pa.types.is_null(field.type)
    ]
    if not added:
        if empty:
            return int(target.current.version), 0
        return _apply_staging(runtime, target, staging, columns, properties)
    # the snapshot's query selects new columns: old rows read them as nulls
    evolved = schema_evolution.evolve(target, added, [], properties)
    if empty:
        return int(evolved.current.version), 0
    with schema_evolution.undone_on_failure(target, evolved, properties):
        return _apply_staging(runtime, evolved, staging, columns, properties)


def _apply_staging(
    runtime: LancensRuntime,
    target: TableWrite,
    staging: DataFrame,
    columns: dict[str, str],
    properties: dict[str, str],
) -> tuple[int, int]:
    """Close the records the staging rows update or delete, insert its new ones; one commit."""
    schema = target.current.schema
    valid_to_name = column_names(schema.names)[columns["dbt_valid_to"]]
    scd_id, valid_to = quote(columns["dbt_scd_id"]), quote(columns["dbt_valid_to"])
    current = f"DBT_INTERNAL_DEST.{valid_to} IS NULL"
    if columns.get("valid_to_current"):
        current = f"({current} OR DBT_INTERNAL_DEST.{valid_to} = {columns['valid_to_current']})"
    with (
        frame_view(runtime, staging) as source,
        addressed_view(target, [columns["dbt_scd_id"], columns["dbt_valid_to"]]) as dest,
    ):
        closing = runtime.sql(
            f"SELECT DBT_INTERNAL_DEST.{ROW_ADDRESS} AS {merge.STORED_AT}, "
            f"DBT_INTERNAL_SOURCE.{valid_to} AS {quote(valid_to_name)} "
            f"FROM {dest} AS DBT_INTERNAL_DEST JOIN {source} AS DBT_INTERNAL_SOURCE "
            f"ON DBT_INTERNAL_SOURCE.{scd_id} = DBT_INTERNAL_DEST.{scd_id} "
            f"WHERE {current} AND DBT_INTERNAL_SOURCE.dbt_change_type IN ('update', 'delete')"
        )
        inserted = runtime.sql(
            f"SELECT *, CAST(NULL AS BIGINT) AS {merge.STORED_AT} FROM {source} AS DBT_INTERNAL_SOURCE "
            f"LEFT ANTI JOIN {dest} AS DBT_INTERNAL_DEST "
            f"ON DBT_INTERNAL_SOURCE.{scd_id} = DBT_INTERNAL_DEST.{scd_id} "
            "WHERE DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'"
        )
        # the closed records (every column but dbt_valid_to taken from the stored row), in the
        # order they were stored (a scan without ORDER BY lists them as before), then the new
        # ones; made once: the writing tasks and the deletions read them
        changes = merge.made_once(
            runtime,
            merge.fitted_frame(closing.orderBy(merge.STORED_AT), schema, [merge.STORED_AT]).unionByName(
                merge.fitted_frame(inserted, schema, [merge.STORED_AT])
            ),
        )
    stored_at = changes.select(merge.STORED_AT)
    kept = tuple(name for name in schema.names if name != valid_to_name)
    return merge.replace_frame(
        target,
        changes,
        properties,
        doomed=stored_at.where(F.col(merge.STORED_AT).isNotNull()),
        stored=StoredValues(merge.STORED_AT, kept),
    )
