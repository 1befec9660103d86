"""Reading a Lance table into Spark: one input partition per fragment (small ones grouped).

The reader is created in a Python planner worker on the driver, pickled, and ``read`` runs in
executor Python workers. The version is resolved once at planning, so every task reads the same
snapshot even if the table is written meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.dataset import open_dataset
from dbt.adapters.lancens.spark.filters import Untranslatable, arrow_column_type, conjunction, to_lance
from dbt.adapters.lancens.spark.options import ROW_ADDRESS, LanceOptions
from dbt.adapters.lancens.spark.types import conform, spark_arrow_schema
from dbt.adapters.lancens.spark.worker_heap import freeze_imported_heap

if TYPE_CHECKING:
    from lance import LanceDataset
    from lance.fragment import LanceFragment

BATCH_BYTES = 8 << 20
MIN_BATCH_ROWS = 1 << 10
MAX_BATCH_ROWS = 1 << 16
_VARIABLE_WIDTH_BYTES = 32


def _row_bytes(kind: pa.DataType) -> int:
    """Rough bytes one value of ``kind`` takes in an Arrow batch (variable width: a guess)."""
    if pa.types.is_fixed_size_list(kind):
        list_size: int = kind.list_size
        return list_size * _row_bytes(kind.value_type)
    if pa.types.is_struct(kind):
        return sum(_row_bytes(kind.field(i).type) for i in range(kind.num_fields))
    try:
        bit_width: int = kind.bit_width
    except ValueError:
        return _VARIABLE_WIDTH_BYTES
    return max(1, bit_width // 8)


def default_batch_size(schema: pa.Schema) -> int:
    """Rows per Lance batch so that one batch holds about ``BATCH_BYTES``.

    Why: every batch costs a Python round trip, an Arrow IPC message and a JVM ``ColumnarBatch``;
    Lance's own default (8,192 rows) makes narrow tables pay that overhead hundreds of times per
    task, while a fixed large size would make tables of wide vectors hold huge batches in memory.
    """
    width = sum(_row_bytes(field.type) for field in schema) or 1
    return max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, BATCH_BYTES // width))


@dataclass(frozen=True)
class FragmentGroup(InputPartition):
    """What one Spark task reads: whole fragments (``rows`` is the sum of their rows), or with
    ``offset`` set, ``rows`` rows of one fragment starting at that (post-deletion) row offset."""

    fragment_ids: tuple[int, ...]
    rows: int
    offset: int | None = None


_CHANGED_SINCE_PLANNED = (
    "; the table's column type differs from the one Spark planned with: another writer changed "
    "the table since this Spark session registered it, and a new session (the next dbt run) reads "
    "its new schema"
)


def _fragment(dataset: LanceDataset, fragment_id: int) -> LanceFragment:
    """A fragment the planned version lists (it cannot vanish from a pinned version)."""
    fragment = dataset.get_fragment(fragment_id)
    if fragment is None:
        raise LookupError(f"fragment {fragment_id} is not in version {dataset.version} of {dataset.uri}")
    return fragment


def group_fragments(
    sizes: Sequence[tuple[int, int]], rows_per_partition: int, split: bool = False
) -> list[FragmentGroup]:
    """Consecutive ``(fragment_id, rows)`` packed into groups of about ``rows_per_partition`` rows.

    Many tiny fragments (a table appended to row by row) share one task, so a small table does not
    schedule hundreds of tasks. A big fragment gets a task of its own, or with ``split`` one task
    per ``rows_per_partition`` rows of it: a table written as one 1M-row fragment is then read by
    several tasks, as Spark splits a big Parquet file.
    """
    groups: list[FragmentGroup] = []
    ids: list[int] = []
    rows = 0
    for fragment_id, fragment_rows in sizes:
        if ids and rows + fragment_rows > rows_per_partition:
            groups.append(FragmentGroup(tuple(ids), rows))
            ids, rows = [], 0
        if split and fragment_rows > rows_per_partition:
            for offset in range(0, fragment_rows, rows_per_partition):
                count = min(rows_per_partition, fragment_rows - offset)
                groups.append(FragmentGroup((fragment_id,), count, offset))
            continue
        ids.append(fragment_id)
        rows += fragment_rows
    if ids:
        groups.append(FragmentGroup(tuple(ids), rows))
    return groups


def _read_positions(options: LanceOptions, schema: StructType) -> list[int]:
    """The schema positions a scan reads: all, or ``read_columns`` when the scan is proven to be
    its relation's only one (``filter_pushdown``; without that proof another scan could need more).
    Columns Spark declares non-nullable are always read: Spark does not expect a null in them, even
    in a column the query never uses (a null string there fails the task)."""
    width = len(schema.fields)
    if options.read_columns is None or not options.filter_pushdown:
        return list(range(width))
    if max(options.read_columns) >= width:
        raise ValueError(
            f"option read_columns {list(options.read_columns)} is beyond the {width} columns of the table"
        )
    required = {position for position, field in enumerate(schema.fields) if not field.nullable}
    return sorted(set(options.read_columns) | required)


def _widen(batch: pa.RecordBatch, target: pa.Schema, positions: list[int]) -> pa.RecordBatch:
    """``batch`` (the columns at ``positions``) as a batch of ``target``, the others all null."""
    if len(positions) == len(target):
        return batch
    arrays = [pa.nulls(batch.num_rows, field.type) for field in target]
    for column, position in enumerate(positions):
        arrays[position] = batch.column(column)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


class LanceReader(DataSourceReader):
    """Scans one pinned version of a Lance table, reading only the schema's columns."""

    def __init__(self, options: LanceOptions, schema: StructType) -> None:
        dataset = open_dataset(options)
        self.options = options
        # Pickled with its manifest (pylance's own pickling), so a task opens this very version
        # with one HEAD instead of reading the manifest again (a version is immutable content).
        self._dataset = dataset
        self.schema = schema
        lance_names = column_names(dataset.schema.names)
        self.columns = [lance_names.get(field.name, field.name) for field in schema.fields]
        # Lance adds the row address itself, after the columns asked for
        self.with_row_address = options.row_address and ROW_ADDRESS in self.columns
        self.read_positions = _read_positions(options, schema)
        read_schema = StructType([schema.fields[i] for i in self.read_positions])
        self.batch_size = options.batch_size or default_batch_size(spark_arrow_schema(read_schema))
        self.filter: str | None = None
        self._column_type = arrow_column_type(dataset.schema)
        self._sizes = [(f.fragment_id, f.metadata.num_rows) for f in dataset.get_fragments()]

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 (Spark's name)
        """Keep what Lance can evaluate exactly; yield the rest back for Spark to apply.

        Without the ``filter_pushdown`` option every filter goes back to Spark and the reader reads
        every row. Why: PySpark 4.3 keeps the reader planned here on the relation, not on the scan,
        and hands it to every scan of that relation (a self-union, a self-join, a CTE read twice, a
        DataFrame reused by a later query), so filtering here would filter scans that asked for no
        filter. Only a caller that knows the relation is scanned once turns the option on.
        """
        if not self.options.filter_pushdown:
            yield from filters
            return
        pushed = []
        for spark_filter in filters:
            try:
                pushed.append(to_lance(spark_filter, self._column_type))
            except Untranslatable:
                yield spark_filter
        self.filter = conjunction(pushed)

    def partitions(self) -> list[FragmentGroup]:
        """One partition per fragment group; an empty table still gets one (empty) partition.

        Big fragments are split into row ranges only when no filter was pushed: Lance applies a
        scan's offset after its filter, so a range of a filtered scan is not a range of the fragment."""
        split = self.filter is None
        return group_fragments(self._sizes, self.options.rows_per_partition, split) or [FragmentGroup((), 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Arrow batches of the partition's fragments, in the exact Arrow types Spark expects."""
        group = cast(FragmentGroup, partition)  # Spark hands back what ``partitions`` made
        if not group.fragment_ids:
            return
        freeze_imported_heap()
        dataset = self._dataset
        target = spark_arrow_schema(self.schema)
        read_target = pa.schema([target.field(i) for i in self.read_positions])
        columns = [self.columns[i] for i in self.read_positions if self.columns[i] != ROW_ADDRESS]
        if group.offset is not None:
            (fragment_id,) = group.fragment_ids
            scanner = _fragment(dataset, fragment_id).scanner(
                columns=columns,
                offset=group.offset,
                limit=group.rows,
                batch_size=self.batch_size,
                with_row_address=self.with_row_address,
            )
        else:
            scanner = dataset.scanner(
                columns=columns,
                filter=self.filter,
                fragments=[_fragment(dataset, fragment_id) for fragment_id in group.fragment_ids],
                batch_size=self.batch_size,
                with_row_address=self.with_row_address,
            )
        for batch in scanner.to_batches():
            if batch.num_rows:
                yield _widen(conform(batch, read_target, _CHANGED_SINCE_PLANNED), target, self.read_positions)
