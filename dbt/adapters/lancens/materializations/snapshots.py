"""Snapshots: dbt-core's staging rows applied to the snapshot table as ONE Lance commit.

dbt-core's `snapshot_staging_table` SQL (run in Spark) already says, per row, what changed:
`insert` rows are new record versions, `update`/`delete` rows close the current version (they
carry its `dbt_scd_id` and the new `dbt_valid_to`). That is dbt's `snapshot_merge_sql` on the scd
id; here the closed rows are built in Spark from the target (all columns, `dbt_valid_to` set) and
committed with the inserts as one merge-insert `Update` on the scd id (see merge.py).
"""

from __future__ import annotations

import pyarrow as pa

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.core.names import quote
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.materializations import merge, schema_evolution
from dbt.adapters.lancens.materializations.source_view import query_rows
from dbt.adapters.lancens.spark.column_names import column_names, fold

# Columns of dbt's staging query that are not snapshot columns.
_STAGING_ONLY = ("dbt_change_type", "dbt_unique_key")


def merge_staging(
    runtime: LancensRuntime,
    table_id: list[str],
    target_sql: str,
    staging_sql: str,
    columns: dict[str, str],
    properties: dict[str, str],
) -> tuple[int, int]:
    """Apply the staging rows; return (new version, rows inserted or closed).

    `columns` are dbt's snapshot column names (`dbt_scd_id`, `dbt_valid_to`, ...) plus
    `valid_to_current`: the `dbt_valid_to_current` expression, or empty."""
    staging = runtime.sql(staging_sql, pushdown=True).toArrow()
    target = open_write(runtime, table_id, must_exist=True)
    known = column_names(target.current.schema.names)
    added = [
        field
        for field in staging.schema
        if field.name not in known
        and not fold(field.name).startswith(_STAGING_ONLY)
        and not pa.types.is_null(field.type)
    ]
    if added:  # the snapshot's query selects new columns: old rows read them as nulls
        target = schema_evolution.evolve(target, added, [], properties)
    scd_id, valid_to = quote(columns["dbt_scd_id"]), quote(columns["dbt_valid_to"])
    current = f"DBT_INTERNAL_DEST.{valid_to} IS NULL"
    if columns.get("valid_to_current"):
        current = f"({current} OR DBT_INTERNAL_DEST.{valid_to} = {columns['valid_to_current']})"
    kept = ", ".join(
        f"DBT_INTERNAL_SOURCE.{valid_to} AS {valid_to}"
        if fold(name) == fold(columns["dbt_valid_to"])
        else f"DBT_INTERNAL_DEST.{quote(name)}"
        for name in target.current.schema.names
    )
    closed, inserted = query_rows(
        runtime,
        staging,
        lambda source: (
            f"SELECT {kept} FROM {target_sql} AS DBT_INTERNAL_DEST JOIN {source} AS "
            f"DBT_INTERNAL_SOURCE ON DBT_INTERNAL_SOURCE.{scd_id} = DBT_INTERNAL_DEST.{scd_id} "
            f"WHERE {current} AND DBT_INTERNAL_SOURCE.dbt_change_type IN ('update', 'delete')"
        ),
        lambda source: (
            f"SELECT * FROM {source} AS DBT_INTERNAL_SOURCE LEFT ANTI JOIN {target_sql} AS "
            f"DBT_INTERNAL_DEST ON DBT_INTERNAL_SOURCE.{scd_id} = DBT_INTERNAL_DEST.{scd_id} "
            "WHERE DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'"
        ),
    )
    version = merge.upsert(target, closed, [columns["dbt_scd_id"]], properties, inserts=inserted)
    return version, closed.num_rows + inserted.num_rows
