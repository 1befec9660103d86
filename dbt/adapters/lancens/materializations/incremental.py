"""Incremental strategies on an existing Lance table: work out the change in Spark, commit it once.

The model's result is evaluated exactly once and its rows never reach the driver. A strategy that
only adds rows (`append`, and merge or delete+insert without `unique_key`) has Spark tasks write
them as new fragments from the model's frame, cast in Spark as Spark's INSERT would (`merge.append`).
The others first make the model's rows once and leave them with Spark's executors, on disk
(`localCheckpoint`), then join them with the table in Spark under dbt's aliases `DBT_INTERNAL_SOURCE`
and `DBT_INTERNAL_DEST`, so predicates written for other adapters work unchanged. The join names
the table rows to replace by their Lance row address; Spark tasks write the new rows as fragments
and the deletions per fragment, and the driver commits their metadata as one `Update`
(`merge.replace_frame`). Rows Spark leaves alone are never rewritten, and a column a matched row
keeps is taken from Lance by the writing task, so no stored value makes a round trip through
Spark's types (docs/materializations.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pyarrow as pa
from dbt_common.exceptions import CompilationError
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write, version_read
from dbt.adapters.lancens.materializations import merge, schema_evolution, store_assignment
from dbt.adapters.lancens.materializations.source_view import KeysOf, addressed_view, frame_view
from dbt.adapters.lancens.runtime.fragment_bounds import TimeWindow, parse_window_bound
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.options import ROW_ADDRESS
from dbt.adapters.lancens.spark.row_changes import StoredValues, refuse_unfit_rows
from dbt.adapters.lancens.spark.types import fixed_sizes_from_metadata, spark_arrow_schema, to_spark_type
from dbt.adapters.lancens.text.quoting import quote

STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "microbatch")


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
    empty: bool = False
    """dbt's `--empty`: refs and sources read no rows, so the run checks the model and applies its
    schema change but changes no rows. Replacing a microbatch window or a partition, or overwriting
    the table, with a result that was never read would delete data."""
    not_null: list[str] = field(default_factory=list)
    """The contract's `not_null` columns as the YAML says now (none without a contract): before the
    rows are applied, the table's top-level fields become non-nullable exactly there
    (`schema_evolution.align_nullability`), as a full build would write them."""


def version_before_query(runtime: LancensRuntime, table_id: list[str], spec: Spec) -> int | None:
    """The table's version the model's query is about to read (`{{ this }}`): noted before the query
    runs, a Python model's included (it reads eagerly), so `apply` refuses to build on another.
    None for a microbatch batch: the batches of one run write their windows side by side and read
    no `this`."""
    return None if spec.strategy == "microbatch" else version_read(runtime, table_id)


def open_before_query(
    runtime: LancensRuntime, table_id: list[str], spec: Spec, language: str
) -> TableWrite | None:
    """The write of a SQL model whose rows Spark tasks add (`_appends`), opened before its query
    runs (it runs in those tasks): the caller opens it in the catalog state it noted `seen` in, and
    the table's version is checked once more after the tasks (`TableWrite.refuse_if_moved`). None
    for the others: their query runs first, and `apply` opens their write after it."""
    if language != "sql" or not _appends(spec):
        return None
    return open_write(runtime, table_id, must_exist=True)


def apply(
    runtime: LancensRuntime,
    table_id: list[str],
    frame: DataFrame,
    spec: Spec,
    properties: dict[str, str],
    seen: int | None = None,
    opened: TableWrite | None = None,
) -> tuple[int, int]:
    """Apply the model's result `frame` to the table by `spec`; return (new version, rows in result).

    `seen`: `version_before_query`, taken before `frame` was made; without it (callers that make
    no query of the table) it is taken now, before `frame` runs. `opened`: `open_before_query`."""
    if spec.strategy not in STRATEGIES:
        raise ValueError(f"incremental_strategy must be one of {STRATEGIES}, got {spec.strategy!r}")
    if seen is None:
        seen = version_before_query(runtime, table_id, spec)
    source = _as_vectors(_model_rows(frame), fixed_sizes_from_metadata(frame.schema)).schema
    if not _appends(spec):
        # the strategy joins the model's rows with the table and writes them: they are made once,
        # before the write opens (the query may read `{{ this }}`), and Spark's executors keep them;
        # the join's filter of the table's keys is built from the same rows (`source_view.KeysOf`)
        frame = merge.made_once(runtime, frame)
    with runtime.writing(table_id):  # concurrent microbatch batches commit one after another
        target = opened if opened is not None else open_write(runtime, table_id, must_exist=True)
        target.refuse_if_moved_since(seen)
        _require_key_columns(spec, source, target.current.schema)
        _refuse_schema_drift(spec, source, target.current.schema)
        retype = (
            _type_changes(source, target.current.schema)
            if spec.on_schema_change == "sync_all_columns"
            else {}
        )
        if _appends(spec) and _rewrites(spec, source, target.current.schema, retype):
            # the model's query may read the table (`{{ this }}`), which it cannot read once its
            # columns are rewritten (Spark planned the query on the old ones): its rows are made first
            frame = merge.made_once(runtime, frame)
        # a column about to take the model's type is not first cast to the table's old one
        stores = pa.schema([f.with_type(retype.get(f.name, f.type)) for f in target.current.schema])
        frame = store_assignment.cast_frame(frame, source, stores)
        aligned = schema_evolution.align_nullability(target, spec.not_null, properties)
        evolved = _sync_schema(aligned, frame, source, spec, properties, retype)
        if spec.empty:
            return int(evolved.current.version), 0
        spec = _keep_absent_columns(spec, source, evolved.current.schema)
        kept_types = _type_names(source, target.current.schema)
        with (
            schema_evolution.undone_on_failure(target, evolved, properties),
            schema_evolution.kept_types_explained(kept_types, spec.on_schema_change),
        ):
            fitted = merge.fitted_frame(frame, evolved.current.schema)
            if _appends(spec):
                return merge.append(evolved, fitted, properties)
            return _STRATEGY[spec.strategy](runtime, evolved, fitted, spec, properties)


def _appends(spec: Spec) -> bool:
    """Whether the strategy only adds the model's rows: `append`, and `merge` or `delete+insert`
    without a `unique_key` (dbt's own strategies insert every row then). Their rows go from Spark
    tasks to the table's files, so the driver's memory does not grow with the rows."""
    return spec.strategy == "append" or (spec.strategy in ("merge", "delete+insert") and not spec.unique_key)


def _model_rows(frame: DataFrame) -> pa.Table:
    """No rows, typed as `frame.toArrow()` would type the model's rows (its Arrow schema)."""
    return spark_arrow_schema(frame.schema).empty_table()


def _rewrites(spec: Spec, source: pa.Schema, target: pa.Schema, retype: dict[str, pa.DataType]) -> bool:
    """Whether `sync_all_columns` rewrites the table (drops or retypes a column) before its rows land."""
    return spec.on_schema_change == "sync_all_columns" and bool(retype or _column_changes(source, target)[1])


def _as_vectors(rows: pa.Table, sizes: dict[str, int]) -> pa.Table:
    """The vector columns of the model's rows as the fixed-size lists the `lance` writer makes of
    them (Spark's Arrow has variable-length lists only): a vector column the run adds to the table
    (`append_new_columns`) must be added as a vector, or no vector index can use it."""
    for name, size in sizes.items():
        index = rows.schema.get_field_index(name)
        field = rows.schema.field(index)
        kind = pa.list_(field.type.value_field.with_name("item"), size)
        rows = rows.set_column(index, field.with_type(kind), rows.column(index).cast(kind))
    return rows


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
    """A `unique_key`, `merge_update_columns`, `partition_by` or microbatch `event_time` column must
    be in the model and the table, even when this run has no rows to apply: a typo must fail on the
    first incremental run, not when data arrives (and an updated column the model stopped selecting
    must not be updated to NULL)."""
    named = {
        "unique_key": spec.unique_key,
        "merge_update_columns": (spec.update_columns or []) if spec.strategy == "merge" else [],
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


def _refuse_schema_drift(spec: Spec, source: pa.Schema, target: pa.Schema) -> None:
    """`on_schema_change: fail`: as dbt-core's check, new or missing columns and columns whose
    (Spark) data type changed fail the run, before anything is cast or written."""
    if spec.on_schema_change != "fail":
        return
    added, removed = _column_changes(source, target)
    retyped = _type_names(source, target)
    if added or removed or retyped:
        raise SchemaChangeError(schema_evolution.out_of_sync([f.name for f in added], removed, retyped))


def _column_changes(source: pa.Schema, target: pa.Schema) -> tuple[list[pa.Field], list[str]]:
    """The model's columns the table lacks (a NULL-typed one does not count: it has no type to add)
    and the table's columns the model lacks, names matched as Spark matches them."""
    current = column_names(target.names)
    wanted = column_names(source.names)
    added = [f for f in source if f.name not in current and not pa.types.is_null(f.type)]
    removed = [name for name in target.names if name not in wanted]
    return added, removed


def _type_changes(source: pa.Schema, target: pa.Schema) -> dict[str, pa.DataType]:
    """The table's columns (as the table spells them) whose Spark type differs from the model's
    column of that name, with the model's type; compared as dbt-core compares data types, by the
    types' names as the adapter reports them (here the Spark types the columns are read as)."""
    current = column_names(target.names)
    return {
        current[column.name]: column.type
        for column in source
        if column.name in current
        and not pa.types.is_null(column.type)
        and _spark_type_name(target.field(current[column.name]).type) != _spark_type_name(column.type)
    }


def _type_names(source: pa.Schema, target: pa.Schema) -> dict[str, tuple[str, str]]:
    """`_type_changes` as (the table's type, the model's type) by their Spark names, for messages."""
    return {
        name: (_spark_type_name(target.field(name).type), _spark_type_name(kind))
        for name, kind in _type_changes(source, target).items()
    }


def _spark_type_name(arrow_type: pa.DataType) -> str:
    """The Spark SQL name of the type a column is read as (Arrow's own name where Spark has none)."""
    try:
        return to_spark_type(arrow_type).simpleString()
    except TypeError:
        return str(arrow_type)


def _sync_schema(
    target: TableWrite,
    frame: DataFrame,
    source: pa.Schema,
    spec: Spec,
    properties: dict[str, str],
    retype: dict[str, pa.DataType],
) -> TableWrite:
    """Honour `on_schema_change` for the model's columns `source`; `ignore` leaves the table as it
    is (new columns are not written). `sync_all_columns` also gives the table's columns the model's
    types (`retype`), as dbt-core's `alter_column_type` does: their stored values are cast, in the
    same rewrite as a dropped column. `frame`: the model's rows, cast as the table stores them."""
    added, removed = _column_changes(source, target.current.schema)
    if spec.on_schema_change in ("ignore", "fail"):
        return target  # `fail` was checked before any cast (`_refuse_schema_drift`)
    drop = removed if spec.on_schema_change == "sync_all_columns" else []
    if not added and not drop and not retype:
        return target
    if not _appends(spec):
        # the model's rows are made already: the columns the table keeps must take them before the
        # schema change commits, so a value that fails does not cost two versions (the change, its
        # undoing); an append's rows fail in their write, and `undone_on_failure` undoes the change
        dropped = column_names(drop)
        wanted = column_names(frame.columns)
        kept = [f.with_type(retype.get(f.name, f.type)) for f in target.current.schema]
        refuse_unfit_rows(frame, pa.schema([f for f in kept if f.name not in dropped and f.name in wanted]))
    return schema_evolution.evolve(target, added, drop, properties, retype)


def _merge(
    runtime: LancensRuntime, target: TableWrite, frame: DataFrame, spec: Spec, props: dict
) -> tuple[int, int]:
    """dbt's MERGE: a model row matches each table row with the same key that satisfies the
    predicates; that table row takes the model's values except in the columns not updated; the
    model's rows matching none are inserted. Spark pairs each model row with the address of the
    row it replaces (NULL: inserted); the kept columns are taken from Lance by the writing tasks."""
    keep = _kept_columns(frame.columns, spec)
    on = " AND ".join([_key_match(spec.unique_key)] + [f"({predicate})" for predicate in spec.predicates])
    keys = _key_names(frame.columns, spec.unique_key)
    # without predicates only the key is read from the table (no column pruning in a Python source)
    read = None if spec.predicates else keys
    with frame_view(runtime, frame) as source, addressed_view(target, read, KeysOf(frame, keys)) as dest:
        paired = merge.made_once(
            runtime,
            runtime.sql(
                f"SELECT DBT_INTERNAL_SOURCE.*, DBT_INTERNAL_DEST.{ROW_ADDRESS} AS {merge.STORED_AT} "
                f"FROM {source} AS DBT_INTERNAL_SOURCE LEFT JOIN {dest} AS DBT_INTERNAL_DEST ON {on}"
            ),
        )
    kept = tuple(name for name in frame.columns if name in keep)  # as the table spells them
    return merge.replace_frame(
        target,
        paired if kept else paired.drop(merge.STORED_AT),
        props,
        doomed=paired.select(merge.STORED_AT).where(F.col(merge.STORED_AT).isNotNull()),
        stored=StoredValues(merge.STORED_AT, kept) if kept else None,
        repeated=merge.ambiguous_match(target.table_id, spec.unique_key),
    )


def _kept_columns(columns: list[str], spec: Spec) -> ColumnMap[str]:
    """The columns a matched row keeps as stored (dbt's merge_update/exclude_columns): a key column
    too when not named among the updated ones, as dbt's `UPDATE SET` then leaves it alone."""
    if spec.update_columns is not None:
        updated = column_names(spec.update_columns)
        return column_names(c for c in columns if c not in updated)
    return column_names(spec.exclude_columns)


def _delete_insert(
    runtime: LancensRuntime, target: TableWrite, frame: DataFrame, spec: Spec, props: dict
) -> tuple[int, int]:
    """dbt deletes the table rows of the model's keys that satisfy the predicates (which see the
    table only), then inserts every model row; Spark names the rows to delete by address."""
    where = " AND ".join(f"({predicate})" for predicate in spec.predicates or ["true"])
    keys = _key_names(frame.columns, spec.unique_key)
    read = None if spec.predicates else keys
    with frame_view(runtime, frame) as source, addressed_view(target, read, KeysOf(frame, keys)) as dest:
        doomed = runtime.sql(
            f"SELECT DBT_INTERNAL_DEST.{ROW_ADDRESS} FROM {dest} AS DBT_INTERNAL_DEST "
            f"LEFT SEMI JOIN {source} AS DBT_INTERNAL_SOURCE ON {_key_match(spec.unique_key)} "
            f"WHERE {where}"
        )
        return merge.replace_frame(target, frame, props, doomed=doomed)


def _insert_overwrite(
    runtime: LancensRuntime, target: TableWrite, frame: DataFrame, spec: Spec, props: dict
) -> tuple[int, int]:
    """Without `partition_by` every row is replaced; with it, the rows of every partition the
    model's rows fall in (Spark's grouping: NULL a partition of its own, -0.0 and 0.0 one, every
    NaN one), found by a Spark join on the partition columns."""
    if not spec.partition_by:
        return merge.overwrite_frame(target, frame, props), frame.count()
    partitions = _key_names(frame.columns, spec.partition_by)
    same = " AND ".join(
        f"DBT_INTERNAL_SOURCE.{quote(name)} <=> DBT_INTERNAL_DEST.{quote(name)}" for name in partitions
    )
    with (
        frame_view(runtime, frame) as source,
        addressed_view(target, partitions, KeysOf(frame, partitions)) as dest,
    ):
        doomed = runtime.sql(
            f"SELECT DBT_INTERNAL_DEST.{ROW_ADDRESS} FROM {dest} AS DBT_INTERNAL_DEST "
            f"LEFT SEMI JOIN {source} AS DBT_INTERNAL_SOURCE ON {same}"
        )
        return merge.replace_frame(target, frame, props, doomed=doomed)


def _microbatch(
    runtime: LancensRuntime, target: TableWrite, frame: DataFrame, spec: Spec, props: dict
) -> tuple[int, int]:
    """The batch's window (and predicates) is a Lance filter: the stored rows in it are found by
    a Lance scan of the filter's columns over the fragments whose range meets the window."""
    if not spec.event_time or not spec.batch_start or not spec.batch_end:
        raise ValueError("microbatch needs event_time and the batch bounds dbt passes to each batch")
    # Spark matches names in any case, Lance's filter only as the table spells them
    name = column_names(target.current.schema.names)[spec.event_time]
    window = TimeWindow(name, parse_window_bound(spec.batch_start), parse_window_bound(spec.batch_end))
    where = " AND ".join([window.lance_filter()] + [f"({predicate})" for predicate in spec.predicates])
    return merge.replace_frame(target, frame, props, where=where, window=window)


_STRATEGY = {  # `append`, and the strategies without a key, are `merge.append` (`_appends`)
    "merge": _merge,
    "delete+insert": _delete_insert,
    "insert_overwrite": _insert_overwrite,
    "microbatch": _microbatch,
}


def _key_match(keys: list[str], source: str = "DBT_INTERNAL_SOURCE") -> str:
    """The key equality between the source (as aliased) and the target, `DBT_INTERNAL_DEST`."""
    return " AND ".join(f"{source}.{quote(k)} = DBT_INTERNAL_DEST.{quote(k)}" for k in keys)


def _key_names(columns: list[str], names: list[str]) -> list[str]:
    """`names` as `columns` (the table's, as the fitted frame spells them) spell them."""
    by_name = column_names(columns)
    return [by_name.get(name, name) for name in names]
