"""Row-level changes made by Spark tasks: deletion files per fragment, and rows that keep stored values.

An incremental run or a snapshot replaces some of a table's rows. Which ones is decided by a Spark
join on Lance row addresses (fragment id << 32 | offset, the reader's ``row_address`` option), so
neither the model's rows nor their addresses come to the driver: tasks grouped by fragment write
each touched fragment's deletion file (``LanceFragment.delete_rows``, which commits nothing) and send
back only its new fragment metadata; the driver commits it with the new rows' fragments as one
Lance ``Update``. A deletion file of a version that never lands is unreferenced, as a data file is,
and goes with the next cleanup.

``StoredValuesWriter`` writes rows of which some columns must keep what Lance stores (dbt's
``merge_exclude_columns``, a snapshot's closed record): Spark carries only the row's address there,
and the task takes the values from the table itself, in its own types (a nanosecond timestamp or an
unsigned integer would not survive Spark's types unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbt.adapters.lancens.namespace.versions import pause_point
from dbt.adapters.lancens.spark.types import conform
from dbt.adapters.lancens.spark.writer import LanceCommitMessage, LanceWriter

if TYPE_CHECKING:
    import lance
    from lance.fragment import FragmentMetadata

_FRAGMENT_ID = "fragment_id"
_METADATA = "fragment"
_OFFSET = "offset"
_REPEATED = -1  # a task's answer when an address occurs twice (fragment ids are >= 0)
_OFFSETS = pa.schema([(_FRAGMENT_ID, pa.int64()), (_OFFSET, pa.int64())])


def delete_with_tasks(
    addresses: DataFrame, dataset: lance.LanceDataset, repeated: Exception | None = None
) -> tuple[list[int], list[FragmentMetadata]]:
    """Delete the rows at ``addresses`` (a frame of one bigint column, row addresses in ``dataset``'s
    version) by Spark tasks, one group per fragment; return (ids of fragments left without rows,
    updated fragments). Nothing is committed: the caller's ``Update`` does that. The driver
    receives one row per touched fragment.

    ``repeated``: raised when an address occurs more than once (a merge replacing one stored row
    twice), found by the same tasks that group the addresses per fragment, so the check costs no
    Spark job of its own; a task that finds one writes no deletion file (another task's may be
    written: unreferenced, it goes with the next cleanup, as when a run is killed)."""
    from lance.fragment import FragmentMetadata

    check_repeats = repeated is not None  # the task's closure takes a bool, not the error
    grouped = by_fragment(addresses)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches([batch.cast(_OFFSETS) for batch in batches], schema=_OFFSETS)
        per_fragment = table.group_by(_FRAGMENT_ID).aggregate([(_OFFSET, "list")])
        groups = list(
            zip(
                per_fragment.column(_FRAGMENT_ID).to_pylist(),
                per_fragment.column(f"{_OFFSET}_list").to_pylist(),
                strict=True,
            )
        )
        if check_repeats and any(len(set(offsets)) < len(offsets) for _, offsets in groups):
            yield pa.RecordBatch.from_pydict(
                {_FRAGMENT_ID: [_REPEATED], _METADATA: [None]},
                schema=pa.schema([(_FRAGMENT_ID, pa.int64()), (_METADATA, pa.string())]),
            )
            return
        ids, metadata = [], []
        for fragment_id, offsets in groups:
            fragment = dataset.get_fragment(fragment_id)
            if fragment is None:
                raise LookupError(
                    f"fragment {fragment_id} is not in version {dataset.version} of {dataset.uri}"
                )
            updated = fragment.delete_rows(sorted(set(offsets)))
            pause_point("deletions_written")  # crash tests: a kill with a deletion file written
            ids.append(fragment_id)
            metadata.append(None if updated is None else json.dumps(updated.to_json()))
        yield pa.RecordBatch.from_pydict(
            {_FRAGMENT_ID: ids, _METADATA: metadata},
            schema=pa.schema([(_FRAGMENT_ID, pa.int64()), (_METADATA, pa.string())]),
        )

    rows = grouped.mapInArrow(task, f"{_FRAGMENT_ID} bigint, {_METADATA} string").collect()
    if repeated is not None and any(row[_FRAGMENT_ID] == _REPEATED for row in rows):
        raise repeated
    removed = sorted(row[_FRAGMENT_ID] for row in rows if row[_METADATA] is None)
    updated = [FragmentMetadata.from_json(row[_METADATA]) for row in rows if row[_METADATA] is not None]
    return removed, sorted(updated, key=lambda fragment: fragment.id)


def by_fragment(addresses: DataFrame) -> DataFrame:
    """Row addresses (a frame of one bigint column) as (fragment id, row offset) pairs, partitioned
    by fragment: a task then holds every address of the fragments it gets."""
    (column,) = addresses.columns
    return addresses.select(
        F.shiftright(F.col(column), 32).alias(_FRAGMENT_ID),
        F.col(column).bitwiseAND(F.lit(0xFFFFFFFF)).alias(_OFFSET),
    ).repartition(_FRAGMENT_ID)


def delete_where_with_tasks(
    spark: SparkSession, dataset: lance.LanceDataset, where: str, fragment_ids: list[int] | None = None
) -> tuple[list[int], list[FragmentMetadata]]:
    """Delete the rows of ``dataset`` matching the Lance SQL filter ``where`` by Spark tasks, one per
    fragment of ``fragment_ids`` (None: every fragment), each scanning its fragment's filter columns
    and writing its deletion file; return (ids of fragments left without rows, updated fragments)
    as ``delete_with_tasks``. The matching rows and their addresses stay in the tasks: the driver
    receives one row per fragment a row was deleted from."""
    from lance.fragment import FragmentMetadata

    if fragment_ids is None:
        fragment_ids = [fragment.fragment_id for fragment in dataset.get_fragments()]
    if not fragment_ids:
        return [], []

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        touched, metadata = [], []
        for fragment_id, fragment in fragments_in(dataset, batches):
            updated = fragment.delete(where)
            if updated is not None and updated.to_json() == fragment.metadata.to_json():
                continue  # no row matched: the fragment stays as it is
            pause_point("deletions_written")
            touched.append(fragment_id)
            metadata.append(None if updated is None else json.dumps(updated.to_json()))
        yield pa.RecordBatch.from_pydict(
            {_FRAGMENT_ID: touched, _METADATA: metadata},
            schema=pa.schema([(_FRAGMENT_ID, pa.int64()), (_METADATA, pa.string())]),
        )

    rows = (
        spread_tasks(spark, fragment_ids)
        .mapInArrow(task, f"{_FRAGMENT_ID} bigint, {_METADATA} string")
        .collect()
    )
    removed = sorted(row[_FRAGMENT_ID] for row in rows if row[_METADATA] is None)
    updated = [FragmentMetadata.from_json(row[_METADATA]) for row in rows if row[_METADATA] is not None]
    return removed, sorted(updated, key=lambda fragment: fragment.id)


def spread_tasks(spark: SparkSession, fragment_ids: Sequence[int]) -> DataFrame:
    """A frame of one bigint column holding `fragment_ids`, spread over as many partitions as Spark
    runs tasks at once (at most one per fragment), for tasks that each work on their fragments."""
    ids = spark.createDataFrame([(fragment_id,) for fragment_id in fragment_ids], f"{_FRAGMENT_ID} bigint")
    return ids.repartition(min(len(fragment_ids), _cores(spark)))


def fragments_in(
    dataset: lance.LanceDataset, batches: Iterator[pa.RecordBatch]
) -> Iterator[tuple[int, lance.LanceFragment]]:
    """Each fragment of `dataset` whose id a task of `spread_tasks` received in `batches`; a
    fragment missing from the version fails the task naming it."""
    for batch in batches:
        for fragment_id in batch.column(0).to_pylist():
            fragment = dataset.get_fragment(fragment_id)
            if fragment is None:
                raise LookupError(
                    f"fragment {fragment_id} is not in version {dataset.version} of {dataset.uri}"
                )
            yield fragment_id, fragment


def _cores(spark: SparkSession) -> int:
    """How many tasks Spark runs at once (its default parallelism); through Spark Connect, which
    has no SparkContext, its shuffle partitions."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect raises here
        return int(spark.conf.get("spark.sql.shuffle.partitions") or 200)


@dataclass(frozen=True)
class StoredValues:
    """Which rows keep stored values, and where: a row whose ``address_column`` holds a row address
    takes ``columns`` (as the table spells them) from the row stored there."""

    address_column: str
    columns: tuple[str, ...]


def refuse_unfit_rows(frame: DataFrame, schema: pa.Schema) -> None:
    """Fail as writing ``frame`` to columns of ``schema`` would (a value a column's type cannot
    hold), writing nothing: Spark tasks cast every batch as the writing tasks will, and return no
    row. For a change that must not commit before the rows are known to fit."""

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            conform(batch, schema)
        yield from ()

    frame.mapInArrow(task, "unused boolean").collect()


class StoredValuesWriter(LanceWriter):
    """A ``LanceWriter`` whose rows take ``stored`` values from ``base``, the version the write
    builds on; rows without an address are written as Spark gives them."""

    def __init__(self, writer: LanceWriter, stored: StoredValues) -> None:
        super().__init__(
            writer.options,
            writer.schema,
            writer.overwrite,
            writer.read_version,
            writer.storage_version,
            writer.base,
        )
        if writer.base is None:
            raise ValueError("rows keep stored values only when written on the version they were read from")
        self.stored = stored

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        return super().write(self._with_stored(batch) for batch in iterator)

    def _with_stored(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        addresses = batch.column(batch.schema.get_field_index(self.stored.address_column))
        stored_at = pc.is_valid(addresses)
        if not pc.any(stored_at).as_py():
            return batch
        dataset: Any = self.base
        picked = pc.filter(addresses, stored_at).cast(pa.uint64())
        stored = dataset._take_rows(picked, columns=list(self.stored.columns))
        # each row's position in [batch's values cast to the table's types, stored values]
        stored_index = pc.subtract(pc.cumulative_sum(stored_at.cast(pa.int64())), 1)
        own = pa.array(range(len(batch)), pa.int64())
        picks = pc.if_else(stored_at, pc.add(stored_index, len(batch)), own)
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        for name in self.stored.columns:
            field = stored.schema.field(name)
            given = conform(pa.RecordBatch.from_arrays([columns[name]], [name]), pa.schema([field])).column(0)
            combined = pa.concat_arrays([given, *stored.column(name).chunks])
            columns[name] = pc.take(combined, picks)
        return pa.RecordBatch.from_pydict(columns)
