"""Incremental strategies on an existing Lance table: work out the change in Spark, commit it once.

The model's result is evaluated exactly once. A strategy that only adds rows (`append`, and merge
or delete+insert without `unique_key`) has Spark tasks write them as new fragments from the model's
frame, cast in Spark as Spark's INSERT would, so no row reaches the driver (`merge.append`); the
others take the rows to Arrow on the driver, where Lance's merge-insert, key sets and deletion
vectors work on them. Strategies that need to
look at the target (merge with `incremental_predicates` or restricted update columns, delete+insert
with predicates, either with a key Spark reads otherwise than Lance stores it) join the two in
Spark under dbt's aliases `DBT_INTERNAL_SOURCE` and `DBT_INTERNAL_DEST`, so predicates written for
other adapters work unchanged; Spark returns only which target rows (by Lance row address) to
change, so rows it leaves alone are never rewritten and no stored value makes a round trip through
Spark's types. The change itself is made by `merge` (Lance merge-insert, deletion vectors, new
fragments) as one engine commit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import lance
import pyarrow as pa
import pyarrow.compute as pc
from dbt_common.exceptions import CompilationError
from pyspark import StorageLevel
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write, version_read
from dbt.adapters.lancens.materializations import merge, schema_evolution, store_assignment
from dbt.adapters.lancens.materializations.source_view import addressed_view, query_rows
from dbt.adapters.lancens.runtime.fragment_bounds import TimeWindow, parse_window_bound
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.options import ROW_ADDRESS
from dbt.adapters.lancens.spark.types import fixed_sizes_from_metadata, spark_arrow_schema, to_spark_type
from dbt.adapters.lancens.text.quoting import quote

STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "microbatch")
_SOURCE_ROW = "__lancens_source_row"


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
    sizes = fixed_sizes_from_metadata(frame.schema)
    # rows only a strategy that looks at them needs: appends are written by Spark tasks
    rows = None if _appends(spec) else _as_vectors(frame.toArrow(), sizes)
    with runtime.writing(table_id):  # concurrent microbatch batches commit one after another
        target = opened if opened is not None else open_write(runtime, table_id, must_exist=True)
        target.refuse_if_moved_since(seen)
        source = rows.schema if rows is not None else _as_vectors(_model_rows(frame), sizes).schema
        _require_key_columns(spec, source, target.current.schema)
        _refuse_schema_drift(spec, source, target.current.schema)
        retype = (
            _type_changes(source, target.current.schema)
            if spec.on_schema_change == "sync_all_columns"
            else {}
        )
        if rows is None and _rewrites(spec, source, target.current.schema, retype):
            # the model's query may read the table (`{{ this }}`), which it cannot read once its
            # columns are rewritten (Spark planned the query on the old ones): its rows are made
            # first, kept by Spark on disk (the driver's memory is not theirs to fill)
            frame = frame.localCheckpoint(eager=True, storageLevel=StorageLevel.DISK_ONLY)
        # a column about to take the model's type is not first cast to the table's old one
        stores = pa.schema([f.with_type(retype.get(f.name, f.type)) for f in target.current.schema])
        if rows is None:
            frame = store_assignment.cast_frame(frame, source, stores)
        else:
            rows = store_assignment.cast_as_spark_stores(runtime, rows, stores)
        aligned = schema_evolution.align_nullability(target, spec.not_null, properties)
        evolved = _sync_schema(aligned, source, rows, spec, properties, retype)
        if spec.empty:
            return int(evolved.current.version), 0
        spec = _keep_absent_columns(spec, source, evolved.current.schema)
        with schema_evolution.undone_on_failure(target, evolved, properties):
            if rows is None:
                return merge.append(evolved, merge.fitted_frame(frame, evolved.current.schema), properties)
            rows = merge.fitted(rows, evolved.current.schema)
            version = _STRATEGY[spec.strategy](runtime, evolved, rows, spec, properties)
    return version, rows.num_rows


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
    retyped = [
        f"{name} ({_spark_type_name(target.field(name).type)} -> {_spark_type_name(kind)})"
        for name, kind in _type_changes(source, target).items()
    ]
    if added or removed or retyped:
        raise SchemaChangeError(
            "The source and target schemas on this incremental model are out of sync! "
            f"New columns in the model: {[f.name for f in added]}; "
            f"columns the model no longer has: {removed}; columns whose type changed: {retyped}. "
            "Set on_schema_change to append_new_columns or sync_all_columns, or run with --full-refresh."
        )


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


def _spark_type_name(arrow_type: pa.DataType) -> str:
    """The Spark SQL name of the type a column is read as (Arrow's own name where Spark has none)."""
    try:
        return to_spark_type(arrow_type).simpleString()
    except TypeError:
        return str(arrow_type)


def _sync_schema(
    target: TableWrite,
    source: pa.Schema,
    rows: pa.Table | None,
    spec: Spec,
    properties: dict[str, str],
    retype: dict[str, pa.DataType],
) -> TableWrite:
    """Honour `on_schema_change` for the model's columns `source`; `ignore` leaves the table as it
    is (new columns are not written). `sync_all_columns` also gives the table's columns the model's
    types (`retype`), as dbt-core's `alter_column_type` does: their stored values are cast, in the
    same rewrite as a dropped column."""
    added, removed = _column_changes(source, target.current.schema)
    if spec.on_schema_change in ("ignore", "fail"):
        return target  # `fail` was checked before any cast (`_refuse_schema_drift`)
    drop = removed if spec.on_schema_change == "sync_all_columns" else []
    if not added and not drop and not retype:
        return target
    if rows is not None:
        # the columns the table keeps must take the rows before the schema change commits, so a
        # value that fails does not cost two versions (the change, its undoing); rows written by
        # Spark tasks fail in their write, and `undone_on_failure` undoes the change
        dropped = column_names(drop)
        wanted = column_names(rows.column_names)
        kept = pa.schema(
            [
                f.with_type(retype.get(f.name, f.type))
                for f in target.current.schema
                if f.name not in dropped and f.name in wanted
            ]
        )
        merge.fitted(rows, kept)
    return schema_evolution.evolve(target, added, drop, properties, retype)


def _merge(runtime: LancensRuntime, target: TableWrite, rows: pa.Table, spec: Spec, props: dict) -> int:
    keep = _kept_columns(rows.column_names, spec)
    if not spec.predicates and not keep and not _keys_spark_reads_otherwise(rows.schema, spec.unique_key):
        return merge.upsert(target, rows, spec.unique_key, props)
    # dbt's MERGE: a source row matches each target row with the same key that satisfies the
    # predicates; that target row takes the source's values except in the columns not updated; the
    # source rows matching none are inserted. Spark finds the pairs, as (source row, target address).
    on = " AND ".join([_key_match(spec.unique_key)] + [f"({predicate})" for predicate in spec.predicates])
    numbered = rows.append_column(_SOURCE_ROW, pa.array(range(rows.num_rows), pa.int64()))
    # without predicates only the key is read from the table (no column pruning in a Python source)
    read = None if spec.predicates else _key_names(rows, spec.unique_key)
    with addressed_view(target, read) as dest:
        (pairs,) = query_rows(
            runtime,
            numbered,
            lambda source: (
                f"SELECT DBT_INTERNAL_SOURCE.{_SOURCE_ROW}, DBT_INTERNAL_DEST.{ROW_ADDRESS} "
                f"FROM {source} AS DBT_INTERNAL_SOURCE JOIN {dest} AS DBT_INTERNAL_DEST ON {on}"
            ),
        )
    addresses = pairs.column(ROW_ADDRESS)
    _refuse_ambiguous_matches(addresses, spec.unique_key, target)
    updated = rows.take(pairs.column(_SOURCE_ROW))
    if keep:
        kept = [name for name in rows.column_names if name in keep]  # as the table spells them
        updated = _with_stored(updated, target.current, addresses, kept)
    inserted = rows.filter(pc.invert(pc.is_in(numbered.column(_SOURCE_ROW), pairs.column(_SOURCE_ROW))))
    return merge.replace(target, pa.concat_tables([updated, inserted]), props, addresses=addresses)


def _with_stored(
    rows: pa.Table, dataset: lance.LanceDataset, addresses: pa.ChunkedArray, columns: list[str]
) -> pa.Table:
    """`rows` (one per address) with `columns` replaced by the values stored at `addresses`, read by
    Lance in their own types (a value that went through Spark could lose precision)."""
    stored = merge.stored_rows(dataset, addresses, columns)
    for name in columns:
        position = rows.schema.get_field_index(name)
        rows = rows.set_column(position, rows.schema.field(position), stored.column(name))
    return rows


def _refuse_ambiguous_matches(addresses: pa.ChunkedArray, keys: list[str], target: TableWrite) -> None:
    """Fail when several rows of the model's result match one row of the table, as dbt's MERGE
    does (the key-only path gets its refusal from Lance's merge-insert)."""
    if merge.names_a_row_twice(addresses):
        raise merge.ambiguous_match(target.table_id, keys)


def _kept_columns(columns: list[str], spec: Spec) -> ColumnMap[str]:
    """The columns a matched row keeps as stored (dbt's merge_update/exclude_columns): a key column
    too when not named among the updated ones, as dbt's `UPDATE SET` then leaves it alone."""
    if spec.update_columns is not None:
        updated = column_names(spec.update_columns)
        return column_names(c for c in columns if c not in updated)
    return column_names(spec.exclude_columns)


def _delete_insert(
    runtime: LancensRuntime, target: TableWrite, rows: pa.Table, spec: Spec, props: dict
) -> int:
    keys = _distinct(rows, spec.unique_key)
    if not spec.predicates and not _keys_spark_reads_otherwise(rows.schema, spec.unique_key):
        return merge.replace(target, rows, props, keys=keys)
    # dbt deletes the target rows of the source's keys that satisfy the predicates (which see the
    # target only), then inserts every source row; Spark names the rows to delete by address
    where = " AND ".join(f"({predicate})" for predicate in spec.predicates or ["true"])
    with addressed_view(target) as dest:
        (doomed,) = query_rows(
            runtime,
            keys,
            lambda source: (
                f"SELECT DBT_INTERNAL_DEST.{ROW_ADDRESS} FROM {dest} AS DBT_INTERNAL_DEST "
                f"LEFT SEMI JOIN {source} AS DBT_INTERNAL_SOURCE ON {_key_match(spec.unique_key)} "
                f"WHERE {where}"
            ),
        )
    return merge.replace(target, rows, props, addresses=doomed.column(ROW_ADDRESS))


def _insert_overwrite(
    runtime: LancensRuntime, target: TableWrite, rows: pa.Table, spec: Spec, props: dict
) -> int:
    if not spec.partition_by:
        return merge.overwrite(target, rows, props)
    partitions = _distinct(rows, spec.partition_by)
    return merge.replace(target, rows, props, addresses=_partition_rows(target.current, partitions))


def _microbatch(runtime: LancensRuntime, target: TableWrite, rows: pa.Table, spec: Spec, props: dict) -> int:
    if not spec.event_time or not spec.batch_start or not spec.batch_end:
        raise ValueError("microbatch needs event_time and the batch bounds dbt passes to each batch")
    # Spark matches names in any case, Lance's filter only as the table spells them
    name = column_names(target.current.schema.names)[spec.event_time]
    window = TimeWindow(name, parse_window_bound(spec.batch_start), parse_window_bound(spec.batch_end))
    where = " AND ".join([window.lance_filter()] + [f"({predicate})" for predicate in spec.predicates])
    return merge.replace(target, rows, props, where=where, window=window)


_STRATEGY = {  # `append`, and the strategies without a key, are `merge.append` (`_appends`)
    "merge": _merge,
    "delete+insert": _delete_insert,
    "insert_overwrite": _insert_overwrite,
    "microbatch": _microbatch,
}


def _key_match(keys: list[str], source: str = "DBT_INTERNAL_SOURCE") -> str:
    """The key equality between the source (as aliased) and the target, `DBT_INTERNAL_DEST`."""
    return " AND ".join(f"{source}.{quote(k)} = DBT_INTERNAL_DEST.{quote(k)}" for k in keys)


def _partition_rows(dataset: lance.LanceDataset, partitions: pa.Table) -> pa.Array:
    """The addresses of the rows in any of `partitions` (one row per partition, columns named as
    the table names them). Values are compared in Arrow in the table's own types, grouped as Spark
    groups them (`_grouping`), NULL as a partition of its own (Spark's default partition)."""
    names = partitions.column_names
    values = [pc.unique(_grouping(partitions.column(name))) for name in names]
    codes = [f"__lancens_code_{position}" for position in range(len(names))]

    def coded(table: pa.Table) -> pa.Table:
        columns = [
            pc.index_in(_grouping(table.column(name)), value_set=value_set, skip_nulls=False)
            for name, value_set in zip(names, values, strict=True)
        ]
        return pa.table(columns, names=codes)

    wanted = coded(partitions)
    found = []
    scanner = dataset.scanner(columns=names, with_row_address=True, scan_in_order=False)
    for chunk in _chunks(scanner.to_batches(), _ROWS_PER_CHUNK):
        candidates = coded(chunk).append_column(ROW_ADDRESS, chunk.column(ROW_ADDRESS))
        found.append(candidates.drop_null().join(wanted, codes, join_type="left semi").column(ROW_ADDRESS))
    return pa.chunked_array([piece for column in found for piece in column.chunks], pa.uint64())


_ROWS_PER_CHUNK = 1 << 20


def _chunks(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """`batches` gathered into tables of at least `rows` rows (the last may be smaller): a table of
    many small fragments yields one small batch per fragment, each costing a round of Arrow calls."""
    gathered: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        gathered.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(gathered)
            gathered, count = [], 0
    if gathered:
        yield pa.Table.from_batches(gathered)


def _grouping(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A partition column's values as Spark groups them, in a type Arrow's hash kernels take:
    dictionaries and view types decoded, float16 widened, -0.0 as 0.0 and every NaN one NaN."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        return _grouping(column.cast(kind.value_type))
    if pa.types.is_string_view(kind):
        return column.cast(pa.large_string())
    if pa.types.is_binary_view(kind):
        return column.cast(pa.large_binary())
    if pa.types.is_float16(kind):
        return _grouping(column.cast(pa.float32()))
    if not pa.types.is_floating(kind):
        return column
    normalised = pc.add(column, pa.scalar(0, kind))
    return pc.if_else(pc.is_nan(normalised), pa.scalar(float("nan"), kind), normalised)


def _keys_spark_reads_otherwise(schema: pa.Schema, keys: list[str]) -> bool:
    """Whether a key column holds values Lance's key match compares otherwise than Spark's join
    (dbt-spark's MERGE ON): floating point (-0.0 and 0.0 are two keys to Lance, one to Spark),
    timestamps in a unit other than microseconds (Spark reads them truncated to microseconds) and
    date64 (Spark drops its time of day). Such keys are matched by Spark."""
    by_name = column_names(schema.names)
    for key in keys:
        kind = schema.field(by_name.get(key, key)).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_floating(kind) or pa.types.is_date64(kind):
            return True
        if pa.types.is_timestamp(kind) and kind.unit != "us":
            return True
    return False


def _key_names(rows: pa.Table, columns: list[str]) -> list[str]:
    """`columns` as `rows` spells them."""
    by_name = column_names(rows.column_names)
    return [by_name.get(c, c) for c in columns]


def _distinct(rows: pa.Table, columns: list[str]) -> pa.Table:
    """The distinct values of `columns` (named as the table names them). Dictionary columns get one
    dictionary first: Arrow's grouping cannot unify the chunks' own ones."""
    names = _key_names(rows, columns)
    return rows.select(names).unify_dictionaries().group_by(names).aggregate([])
