"""Incremental strategies on an existing Lance table: work out the change in Spark, commit it once.

The model's result is evaluated exactly once (to Arrow on the driver). Strategies that need to
look at the target (merge with `incremental_predicates` or restricted update columns, delete+insert
with predicates) join the two in Spark under dbt's aliases `DBT_INTERNAL_SOURCE` and
`DBT_INTERNAL_DEST`, so predicates written for other adapters work unchanged. The change itself is
made by `merge` (Lance merge-insert, deletion vectors, new fragments) as one engine commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc
from dbt_common.exceptions import CompilationError, DbtRuntimeError
from pyspark.sql import DataFrame
from pyspark.sql.datasource import EqualTo, IsNull

from dbt.adapters.lancens.commits.fragment_bounds import TimeWindow, parse_window_bound
from dbt.adapters.lancens.commits.table_write import TableWrite, open_write
from dbt.adapters.lancens.core.names import quote
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.materializations import merge, python_models, schema_evolution
from dbt.adapters.lancens.materializations.source_view import query_rows
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.filters import Untranslatable, arrow_column_type, to_lance

STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "microbatch")
_HIT = "__lancens_matched"


class SchemaChangeError(CompilationError):
    """`on_schema_change: fail` and the model's columns differ from the table's (a compilation error,
    as dbt-core's own `process_schema_changes` reports it)."""


@dataclass(frozen=True)
class Spec:
    """What the incremental materialization was configured with (already validated by the macro)."""

    strategy: str
    unique_key: list[str] = field(default_factory=list)
    on_schema_change: str = "ignore"
    predicates: list[str] = field(default_factory=list)
    update_columns: list[str] | None = None
    exclude_columns: list[str] = field(default_factory=list)
    partition_by: list[str] = field(default_factory=list)
    event_time: str | None = None
    batch_start: str | None = None
    batch_end: str | None = None


def apply(
    runtime: LancensRuntime,
    table_id: list[str],
    target_sql: str,
    frame: DataFrame,
    spec: Spec,
    properties: dict[str, str],
) -> tuple[int, int]:
    """Apply the model's result `frame` to the table by `spec`; return (new version, rows in result)."""
    if spec.strategy not in STRATEGIES:
        raise ValueError(f"incremental_strategy must be one of {STRATEGIES}, got {spec.strategy!r}")
    rows = frame.toArrow()
    with runtime.writing(table_id):  # concurrent microbatch batches commit one after another
        target = open_write(runtime, table_id, must_exist=True)
        _require_key_columns(spec, rows.schema, target.current.schema)
        target = _sync_schema(target, rows, spec, properties)
        spec = _keep_absent_columns(spec, rows.schema, target.current.schema)
        rows = merge.conform(rows, target.current.schema)
        version = _STRATEGY[spec.strategy](runtime, target, target_sql, rows, spec, properties)
    return version, rows.num_rows


def model_frame(runtime: LancensRuntime, compiled_code: str, language: str, name: str) -> DataFrame:
    """The model's result as a Spark DataFrame (SQL, or a Python model run in-process)."""
    if language == "python":
        return python_models.run_python_model(runtime, compiled_code, name)
    return runtime.sql(compiled_code, pushdown=True)


def _keep_absent_columns(spec: Spec, source: pa.Schema, target: pa.Schema) -> Spec:
    """A merge leaves the columns the model no longer selects as they are in matched rows (as if
    excluded from the update); only new rows get NULL there. Updating them would overwrite stored
    values with NULL."""
    selected = column_names(source.names)
    absent = [name for name in target.names if name not in selected]
    if not absent or spec.strategy != "merge" or spec.update_columns is not None:
        return spec  # `merge_update_columns` already leaves every unnamed column as it is
    return replace(spec, exclude_columns=[*spec.exclude_columns, *absent])


def _require_key_columns(spec: Spec, source: pa.Schema, target: pa.Schema) -> None:
    """A `unique_key`, `partition_by` or microbatch `event_time` column must be in the model and the
    table, even when this run has no rows to apply: a typo must fail on the first incremental run,
    not when data arrives."""
    named = {
        "unique_key": spec.unique_key,
        "partition_by": spec.partition_by,
        "event_time": [spec.event_time] if spec.strategy == "microbatch" and spec.event_time else [],
    }
    schemas = (("the model's result", source), ("the table", target))
    known = {what: column_names(schema.names) for what, schema in schemas}
    for config, columns in named.items():
        for column in columns:
            for what, schema in schemas:
                if column not in known[what]:
                    raise CompilationError(
                        f"{config} column {column!r} is not a column of {what} "
                        f"(columns: {', '.join(schema.names)})"
                    )


def _sync_schema(target: TableWrite, rows: pa.Table, spec: Spec, properties: dict[str, str]) -> TableWrite:
    """Honour `on_schema_change`; `ignore` leaves the table as it is (new columns are not written)."""
    current = column_names(target.current.schema.names)
    wanted = column_names(rows.column_names)
    added = [f for f in rows.schema if f.name not in current and not pa.types.is_null(f.type)]
    removed = [name for name in target.current.schema.names if name not in wanted]
    if not added and not removed or spec.on_schema_change == "ignore":
        return target
    if spec.on_schema_change == "fail":
        raise SchemaChangeError(
            "The source and target schemas on this incremental model are out of sync! "
            f"New columns in the model: {[f.name for f in added]}; columns the model no longer has: "
            f"{removed}. Set on_schema_change to append_new_columns or sync_all_columns, or run "
            "with --full-refresh."
        )
    drop = removed if spec.on_schema_change == "sync_all_columns" else []
    if not added and not drop:
        return target
    # the columns the table keeps must take the rows before the schema change commits: a run that
    # then fails on a value must not leave the table with its columns changed
    dropped = column_names(drop)
    kept = pa.schema([f for f in target.current.schema if f.name not in dropped and f.name in wanted])
    merge.conform(rows, kept)
    return schema_evolution.evolve(target, added, drop, properties)


def _append(
    runtime: LancensRuntime, target: TableWrite, target_sql: str, rows: pa.Table, spec: Spec, props: dict
) -> int:
    return merge.append(target, rows, props)


def _merge(
    runtime: LancensRuntime, target: TableWrite, target_sql: str, rows: pa.Table, spec: Spec, props: dict
) -> int:
    if not spec.unique_key:
        return merge.append(target, rows, props)
    columns = rows.column_names
    keep = _kept_columns(columns, spec)
    if not spec.predicates and not keep:
        return merge.upsert(target, rows, spec.unique_key, props)
    # dbt's MERGE: a source row matches a target row with the same key that satisfies the predicates;
    # matched rows take the target's values for the columns not updated; the rest are inserted.
    on = " AND ".join([_key_match(spec.unique_key)] + [f"({predicate})" for predicate in spec.predicates])
    select = ", ".join(
        f"CASE WHEN DBT_INTERNAL_DEST.{_HIT} THEN DBT_INTERNAL_DEST.{quote(c)} "
        f"ELSE DBT_INTERNAL_SOURCE.{quote(c)} END AS {quote(c)}"
        if c in keep
        else f"DBT_INTERNAL_SOURCE.{quote(c)}"
        for c in columns
    )
    (joined,) = query_rows(
        runtime,
        rows,
        lambda source: (
            f"SELECT {select}, coalesce(DBT_INTERNAL_DEST.{_HIT}, false) AS {_HIT} "
            f"FROM {source} AS DBT_INTERNAL_SOURCE LEFT JOIN "
            f"(SELECT *, true AS {_HIT} FROM {target_sql}) AS DBT_INTERNAL_DEST ON {on}"
        ),
    )
    hit = joined.column(_HIT)
    joined = joined.drop_columns([_HIT])
    if spec.predicates:
        _refuse_ambiguous_matches(rows, joined.filter(hit), spec.unique_key, target)
        # a target row of the source's keys that no source row matches under the predicates stays
        return _replace_matched(
            runtime,
            target,
            rows,
            spec,
            joined,
            props,
            lambda source: (
                f"SELECT DBT_INTERNAL_DEST.* FROM {target_sql} AS DBT_INTERNAL_DEST "
                f"LEFT SEMI JOIN {source} AS lancens_keys ON {_key_match(spec.unique_key, 'lancens_keys')} "
                f"LEFT ANTI JOIN {source} AS DBT_INTERNAL_SOURCE ON {on}"
            ),
        )
    return merge.upsert(
        target, joined.filter(hit), spec.unique_key, props, inserts=joined.filter(pc.invert(hit))
    )


def _replace_matched(
    runtime: LancensRuntime,
    target: TableWrite,
    rows: pa.Table,
    spec: Spec,
    inserted: pa.Table,
    props: dict,
    kept_query: Callable[[str], str],
) -> int:
    """With `incremental_predicates`: the target rows a source row matches (same key, predicates
    true) give way to `inserted`; the other target rows of the source's keys stay as they are.

    Lance matches by key alone, so every target row of the source's keys is replaced: by itself
    when `kept_query` (given the source's view) finds it unmatched under the predicates, as dbt's
    MERGE or DELETE would leave it, else by `inserted`. One commit; other keys are not touched."""
    (kept,) = query_rows(runtime, rows, kept_query)
    schema = target.current.schema
    replacement = pa.concat_tables([merge.conform(kept, schema), merge.conform(inserted, schema)])
    return merge.replace(target, replacement, props, keys=_distinct(rows, spec.unique_key))


def _refuse_ambiguous_matches(rows: pa.Table, matched: pa.Table, keys: list[str], target: TableWrite) -> None:
    """Fail when several rows of the model's result share a key and any of them matches the table:
    stricter than dbt's MERGE, which fails only when two match the same target row (the key-only
    path gets its refusal from Lance's merge-insert)."""
    names = _key_names(rows, keys)
    repeated = rows.select(names).group_by(names).aggregate([([], "count_all")])
    repeated = repeated.filter(pc.greater(repeated.column("count_all"), 1)).select(names)
    if repeated.num_rows and matched.select(names).join(repeated, names, join_type="inner").num_rows:
        raise DbtRuntimeError(
            f"merge into {'.'.join(target.table_id)}: several rows of the model's result have the "
            f"same unique_key ({', '.join(keys)}) and match the table; deduplicate them per key"
        )


def _kept_columns(columns: list[str], spec: Spec) -> ColumnMap[str]:
    """The columns a matched row keeps from the target (dbt's merge_update/exclude_columns)."""
    keys = column_names(spec.unique_key)
    if spec.update_columns is not None:
        updated = column_names(spec.update_columns)
        return column_names(c for c in columns if c not in updated and c not in keys)
    return column_names(c for c in spec.exclude_columns if c not in keys)


def _delete_insert(
    runtime: LancensRuntime, target: TableWrite, target_sql: str, rows: pa.Table, spec: Spec, props: dict
) -> int:
    if not spec.unique_key:
        return merge.append(target, rows, props)
    if spec.predicates:
        # dbt deletes the target rows of the source's keys that satisfy the predicates (which see
        # the target only), then inserts every source row
        where = " AND ".join(f"({predicate})" for predicate in spec.predicates)
        return _replace_matched(
            runtime,
            target,
            rows,
            spec,
            rows,
            props,
            lambda source: (
                f"SELECT DBT_INTERNAL_DEST.* FROM {target_sql} AS DBT_INTERNAL_DEST LEFT SEMI JOIN "
                f"{source} AS DBT_INTERNAL_SOURCE ON {_key_match(spec.unique_key)} "
                f"WHERE NOT coalesce({where}, false)"
            ),
        )
    return merge.replace(target, rows, props, keys=_distinct(rows, spec.unique_key))


def _insert_overwrite(
    runtime: LancensRuntime, target: TableWrite, target_sql: str, rows: pa.Table, spec: Spec, props: dict
) -> int:
    if not spec.partition_by:
        return merge.overwrite(target, rows, props)
    partitions = _distinct(rows, spec.partition_by)
    if not any(column.null_count for column in partitions.columns):
        return merge.replace(target, rows, props, keys=partitions)
    # Lance's key match never matches NULL, but NULL is a partition of its own (Spark's default
    # partition), replaced like any other: delete by a filter that says IS NULL instead
    return merge.replace(target, rows, props, where=_partitions_filter(partitions, target.current.schema))


def _microbatch(
    runtime: LancensRuntime, target: TableWrite, target_sql: str, rows: pa.Table, spec: Spec, props: dict
) -> int:
    if not spec.event_time or not spec.batch_start or not spec.batch_end:
        raise ValueError("microbatch needs event_time and the batch bounds dbt passes to each batch")
    # Spark matches names in any case, Lance's filter only as the table spells them
    name = column_names(target.current.schema.names)[spec.event_time]
    window = TimeWindow(name, parse_window_bound(spec.batch_start), parse_window_bound(spec.batch_end))
    where = " AND ".join([window.lance_filter()] + [f"({predicate})" for predicate in spec.predicates])
    return merge.replace(target, rows, props, where=where, window=window)


_STRATEGY = {
    "append": _append,
    "merge": _merge,
    "delete+insert": _delete_insert,
    "insert_overwrite": _insert_overwrite,
    "microbatch": _microbatch,
}


def _key_match(keys: list[str], source: str = "DBT_INTERNAL_SOURCE") -> str:
    """The key equality between the source (as aliased) and the target, `DBT_INTERNAL_DEST`."""
    return " AND ".join(f"{source}.{quote(k)} = DBT_INTERNAL_DEST.{quote(k)}" for k in keys)


def _partitions_filter(partitions: pa.Table, schema: pa.Schema) -> str:
    """A Lance filter matching the rows of any of `partitions` (one row per partition), NULL as NULL."""
    column_type = arrow_column_type(schema)
    table_names = column_names(schema.names)
    alternatives = []
    for partition in partitions.to_pylist():
        parts = []
        for name, value in partition.items():
            path = (table_names.get(name, name),)
            condition = IsNull(path) if value is None else EqualTo(path, value)
            try:
                parts.append(to_lance(condition, column_type))
            except Untranslatable as exc:
                raise DbtRuntimeError(
                    f"insert_overwrite cannot replace the partition {partition} by its NULL value: {exc}"
                ) from exc
        alternatives.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(alternatives)


def _key_names(rows: pa.Table, columns: list[str]) -> list[str]:
    """`columns` as `rows` spells them."""
    by_name = column_names(rows.column_names)
    return [by_name.get(c, c) for c in columns]


def _distinct(rows: pa.Table, columns: list[str]) -> pa.Table:
    """The distinct values of `columns` (named as the table names them)."""
    names = _key_names(rows, columns)
    return rows.select(names).group_by(names).aggregate([])
