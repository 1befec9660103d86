"""The smallest and largest value of one column per fragment, computed by Spark tasks.

A microbatch batch asks only the fragments whose range of its event-time column meets its window
(runtime/fragment_bounds.py). The range of a fragment the process has not seen comes from its
rows: read on the driver, every value of the column went through the dbt process (80 MB for a
10M-row timestamp column, and the driver is one machine while the table grows). Here one Spark
task per group of fragments streams each fragment's column and sends back one (min, max) pair per
fragment, so the driver receives a row per fragment and no value of a row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.row_changes import fragments_in, spread_tasks

if TYPE_CHECKING:
    import lance

_FRAGMENT_ID = "fragment_id"
_LOW = "low"
_HIGH = "high"
_RANGES = pa.schema([(_FRAGMENT_ID, pa.int64()), (_LOW, pa.int64()), (_HIGH, pa.int64())])

Range = tuple[int, int] | None
"""A fragment's smallest and largest value as integers (a timestamp's in its own unit); None: the
fragment has no live row there or only nulls."""


def fragment_range(fragment: lance.LanceFragment, column: str) -> Range:
    """The range of `column` over `fragment`'s live rows, streamed a batch at a time; the column's
    values must cast to int64 (a timestamp gives its count of its own units)."""
    found: Range = None
    for batch in fragment.scanner(columns=[column]).to_batches():
        extremes = pc.min_max(batch.column(0).cast(pa.int64()))
        low, high = extremes["min"].as_py(), extremes["max"].as_py()
        if low is None or high is None:
            continue
        found = (low, high) if found is None else (min(found[0], low), max(found[1], high))
    return found


def ranges_with_tasks(
    spark: SparkSession, dataset: lance.LanceDataset, column: str, fragment_ids: Sequence[int]
) -> dict[int, Range]:
    """The range of `column` over each fragment of `fragment_ids` in `dataset`'s version, each
    fragment read by a Spark task (`fragment_range`); one row per fragment comes back."""
    if not fragment_ids:
        return {}

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ids, lows, highs = [], [], []
        for fragment_id, fragment in fragments_in(dataset, batches):
            found = fragment_range(fragment, column)
            ids.append(fragment_id)
            lows.append(None if found is None else found[0])
            highs.append(None if found is None else found[1])
        yield pa.RecordBatch.from_pydict({_FRAGMENT_ID: ids, _LOW: lows, _HIGH: highs}, schema=_RANGES)

    ids = spread_tasks(spark, fragment_ids)
    rows = ids.mapInArrow(task, f"{_FRAGMENT_ID} bigint, {_LOW} bigint, {_HIGH} bigint").collect()
    ranges: dict[int, Range] = {fragment_id: None for fragment_id in fragment_ids}
    for row in rows:
        if row[_LOW] is not None and row[_HIGH] is not None:
            ranges[row[_FRAGMENT_ID]] = (row[_LOW], row[_HIGH])
    return ranges
