"""`on_schema_change` for Lance tables: add and drop columns, each change one version via the engine.

* Adding columns is metadata only: a `Merge` operation keeps every fragment as it is and extends
  the schema; Lance reads a column that no data file holds as nulls, so no row is rewritten.
* Dropping columns rewrites the remaining columns (streamed, not loaded) as an `Overwrite`:
  Lance's own `drop_columns` commits by itself (outside the engine), and its `Project` operation
  needs field ids a pyarrow schema cannot carry. History is kept: older versions still hold the
  dropped columns. Changing a column's type (`ALTER TABLE ... ALTER COLUMN ... TYPE`) is the same
  rewrite with the column cast.

* Changing which columns are non-nullable (`align_nullability`, an incremental run whose contract's
  `not_null` columns changed) is metadata only too: Lance's `alter_columns` makes it a `Project`
  of the same fragments, worked out on a throwaway shallow clone in the root's scratch area (Lance
  offers it only as a method that commits, and its schema carries field ids a pyarrow schema
  cannot) and committed here.

Either way the change is one commit through the table write's one commit path, made before the
run's data commit: a run that changes the schema costs two versions, every other run one. Spark's
catalog entry is refreshed right after it, so the run's own queries (a merge joining the target, a
snapshot closing rows) see the new columns. If the run's data step then fails (a merge's duplicate
keys, a predicate Spark cannot analyse), `undone_on_failure` commits the version the run started
from again, so a failed run leaves the table's columns and rows as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager

import lance
import pyarrow as pa
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.commits.table_write import TableWrite, open_write
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.staging import SCRATCH_DIR
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.types import nullable_within, refuse_unreadable_names

logger = AdapterLogger("lancens")


def out_of_sync(added: Sequence[str], removed: Sequence[str], retyped: Mapping[str, tuple[str, str]]) -> str:
    """`on_schema_change: fail`'s message: what differs (`retyped`: column -> (table's type, model's
    type)), and the setting that takes it. `append_new_columns` only adds columns, so it is offered
    only when the model only added some: a dropped column or a changed type needs `sync_all_columns`."""
    changed = [f"{name} ({table} -> {model})" for name, (table, model) in retyped.items()]
    if removed or retyped:
        advice = (
            "Set on_schema_change to sync_all_columns (append_new_columns only adds columns: it "
            "neither drops a column nor changes a column's type), or run with --full-refresh."
        )
    else:
        advice = "Set on_schema_change to append_new_columns or sync_all_columns, or run with --full-refresh."
    return (
        "The source and target schemas on this incremental model are out of sync! "
        f"New columns in the model: {list(added)}; columns the model no longer has: {list(removed)}; "
        f"columns whose type changed: {changed}. {advice}"
    )


@contextmanager
def kept_types_explained(retyped: Mapping[str, tuple[str, str]], on_schema_change: str) -> Iterator[None]:
    """Run a run's data step; if it fails because a column whose type the model changed cannot
    hold the model's values, say so, with the setting that changes the column's type.

    `ignore` and `append_new_columns` keep the table's types (`retyped`: column -> (table's type,
    model's type)), so the model's values are cast to them, and one the table's type cannot hold
    (`'two'` in an `int` column) fails the write, naming the column in a Python worker's traceback
    but not why the type differs or what to do."""
    try:
        yield
    except Exception as failure:
        text = str(failure)
        # the writing task's message for such a value (spark.types.conform): "column 'c': values of type ..."
        unfit = [name for name in retyped if f"column {name!r}: values of type" in text]
        if not unfit or on_schema_change == "sync_all_columns":
            raise
        detail = next((line.strip() for line in text.splitlines() if f"column {unfit[0]!r}:" in line), text)
        columns = ", ".join(
            f"{name} ({retyped[name][0]} in the table, {retyped[name][1]} in the model)" for name in unfit
        )
        raise DbtRuntimeError(
            f"The model changed the type of column {columns}; on_schema_change {on_schema_change!r} keeps "
            "the table's type, and the model's values do not fit it. Set on_schema_change to "
            "sync_all_columns to give the column the model's type (its stored values are cast), or "
            f"run with --full-refresh. ({detail})"
        ) from failure


def evolve(
    target: TableWrite,
    add: list[pa.Field],
    drop: list[str],
    properties: dict[str, str],
    types: Mapping[str, pa.DataType] | None = None,
) -> TableWrite:
    """Add nullable all-null columns, drop columns and change column types in one version; return
    the table at it.

    Adding only is metadata only. Dropping or retyping (or adding after an earlier drop: Lance
    never reuses a field id, and a pyarrow schema cannot say which ids to use) rewrites the kept
    columns, casting the retyped ones with Arrow's safe cast (a value the new type cannot hold fails
    the change)."""
    refuse_unreadable_names(add)
    added = [field.with_type(nullable_within(field.type)).with_nullable(True) for field in add]
    if not drop and not types:
        try:
            return _add_in_place(target, added, properties)
        except OSError as exc:
            if "field" not in str(exc):
                raise
    return _rewrite(target, added, drop, properties, types)


def retype(target: TableWrite, types: Mapping[str, pa.DataType], properties: dict[str, str]) -> TableWrite:
    """Change column types (keyed by column name, in any case) in one rewritten version; values are cast
    with Arrow's safe cast, so a value the new type cannot hold fails the change."""
    return _rewrite(target, [], [], properties, types)


def align_nullability(
    target: TableWrite, not_null: Collection[str], properties: dict[str, str]
) -> TableWrite:
    """Make the table's top-level fields non-nullable exactly where `not_null` (the model's contract
    now) names them, in one version; return the table at it (`target` itself if nothing changes).

    A field the contract no longer lists becomes nullable, so a NULL the YAML now allows is written
    rather than refused by Lance. A listed field becomes non-nullable only if no stored row holds
    NULL there (dbt-databricks' `SET NOT NULL` fails then): otherwise it stays nullable with a
    warning, and the contract still checks every row a run writes. A later write of a table this
    atomic-publish run already staged was aligned by the run's first write of it."""
    if target.staged_tip is not None:
        return target
    dataset = target.current
    required = column_names(not_null)
    changes = {f.name: True for f in dataset.schema if not f.nullable and f.name not in required}
    for name in (f.name for f in dataset.schema if f.nullable and f.name in required):
        if _holds_null(dataset, name):
            logger.warning(
                f"{'.'.join(target.table_id)}: column {name} has a not_null constraint, but stored rows "
                "hold NULL there, so its Lance field stays nullable (the constraint checks the rows "
                "each run writes); --full-refresh rebuilds it as a non-nullable field"
            )
        else:
            changes[name] = False
    if not changes:
        return target
    target.commit(_nullability_change(target.runtime.namespace, dataset, changes), properties)
    return open_write(target.runtime, target.table_id, must_exist=True)


def _nullability_change(
    namespace: DirectoryNamespace, dataset: lance.LanceDataset, nullable: dict[str, bool]
) -> lance.LanceOperation.BaseOperation:
    """Lance's own operation for setting the columns' nullability (`nullable`: name -> nullable) on
    `dataset`'s version, uncommitted: `alter_columns` commits by itself, so it is run on a shallow
    clone (which copies no data file and writes nothing at the table) and the operation it committed
    there is read back. The clone lives in the root's scratch area (`.lancens-staging/`, the same
    store as the table: a clone cannot cross stores) and is removed at once; a killed run's clone
    goes with `cleanup_namespace`, as a killed atomic run's scratch does."""
    alterations = [{"path": name, "nullable": value} for name, value in nullable.items()]
    storage = namespace.storage
    work = f"{namespace.root.rstrip('/')}/{SCRATCH_DIR}/nullability-{uuid.uuid4().hex}"
    try:
        options = namespace.storage_options or None
        clone = dataset.shallow_clone(work, dataset.version, storage_options=options)
        # pylance's annotations want every AlterColumn key and an iterable per argument; it takes
        # one dict per argument, with the keys to change
        clone.alter_columns(*alterations)  # type: ignore[arg-type]
        transaction = clone.read_transaction(clone.version)
    finally:
        if storage.exists(work):
            storage.rm(work, recursive=True)
        storage.remove_if_empty(storage.join(SCRATCH_DIR))
    if transaction is None:
        raise RuntimeError(f"Lance recorded no transaction for alter_columns on {dataset.uri}")
    return transaction.operation


def _holds_null(dataset: lance.LanceDataset, name: str) -> bool:
    """Whether any row of `dataset` holds NULL in column `name` (read up to the first one)."""
    return any(batch.column(0).null_count for batch in dataset.scanner(columns=[name]).to_batches())


def _add_in_place(target: TableWrite, added: list[pa.Field], properties: dict[str, str]) -> TableWrite:
    dataset = target.current
    fragments = [fragment.metadata for fragment in dataset.get_fragments()]
    # the schema metadata (LanceDB's `embedding_functions`) stays with the table
    schema = pa.schema([*dataset.schema, *added], metadata=dataset.schema.metadata)
    target.commit(lance.LanceOperation.Merge(fragments, schema), properties)
    return open_write(target.runtime, target.table_id, must_exist=True)


def _rewrite(
    target: TableWrite,
    added: list[pa.Field],
    drop: list[str],
    properties: dict[str, str],
    types: Mapping[str, pa.DataType] | None = None,
) -> TableWrite:
    dataset = target.current
    dropped = column_names(drop)
    new_types = ColumnMap((types or {}).items())
    read = [field for field in dataset.schema if field.name not in dropped]
    kept = [field.with_type(new_types.get(field.name, field.type)) for field in read]
    schema = pa.schema([*kept, *added], metadata=dataset.schema.metadata)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in dataset.scanner(columns=[field.name for field in read]).to_batches():
            columns = [column.cast(field.type) for column, field in zip(batch.columns, kept, strict=True)]
            nulls = [pa.nulls(batch.num_rows, field.type) for field in added]
            yield pa.RecordBatch.from_arrays([*columns, *nulls], schema=schema)

    fragments = target.write_fragments(
        pa.RecordBatchReader.from_batches(schema, batches()), schema, mode="overwrite"
    )
    target.commit(lance.LanceOperation.Overwrite(schema, fragments), properties, written=fragments)
    return open_write(target.runtime, target.table_id, must_exist=True)


@contextmanager
def undone_on_failure(before: TableWrite, after: TableWrite, properties: dict[str, str]) -> Iterator[None]:
    """Run a run's data step on `after`, the table once the run's schema change committed; if the
    step fails before its own commit lands, commit `before`'s version again (a Lance Restore).

    A failed run must not leave a changed schema behind: with `sync_all_columns` the latest version
    would have lost a column's values. The undo is pinned to `after`, so it never replaces another
    writer's commit; history keeps both the change and its undoing. In an atomic-publish run nothing
    is undone here: a failed run publishes nothing at all."""
    changed = after.read_version != before.read_version and after.landing.visible_at_once
    try:
        yield
    except Exception as failure:
        if changed:
            _restore(before, after, properties, failure)
        raise


def _restore(before: TableWrite, after: TableWrite, properties: dict[str, str], failure: Exception) -> None:
    table = ".".join(after.table_id)
    try:
        if after.runtime.namespace.describe_table(after.table_id).version != after.read_version:
            return  # the data step's commit landed (a later step failed), or another writer's did
        after.commit(lance.LanceOperation.Restore(before.current.version), properties)
    except Exception as undo:  # the run's own error is the one dbt reports; say this beside it
        logger.warning(
            f"{table}: the failed run's schema change (version {after.read_version}) could not be "
            f"undone ({undo}) while handling: {failure}; restore version {before.read_version} with "
            "the restore_table macro"
        )
