"""Start the Python workers a Lance read needs before the first query needs them.

Every kind of Python worker Spark uses for a data source (the source's schema, filter pushdown,
read planning, the executor tasks) is a daemon started on first use, and its first forked worker
imports pyarrow and lance: seconds per kind, all paid by the first model of a run
(docs/benchmarks.md, profile lines P6-P10). Workers are reused, so one tiny read of a throwaway
Lance table, run while dbt is still parsing, moves that cost off the first model.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.scratch import process_directory

# As many executor tasks as a local session runs at once on a small machine: each task's worker
# stays alive for reuse, warm.
_TASKS = 2


def warm_up(spark: SparkSession) -> None:
    """Read a two-row Lance table through the `lance` source with a filter, in `_TASKS` tasks.

    Imports lance in the calling process too (the dbt process needs it for its first commit)."""
    import lance

    # In the process's own directory: removed at exit even when the process ends during the warm-up.
    scratch = tempfile.mkdtemp(prefix="warm-up-", dir=process_directory())
    try:
        path = f"{scratch}/warm_up.lance"
        lance.write_dataset(pa.table({"id": pa.array([0, 1], pa.int64())}), path)
        frame = spark.read.format("lance").load(path).where("id >= 0").repartition(_TASKS)
        frame.mapInArrow(_import_lance, frame.schema).collect()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _import_lance(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """An executor task that imports lance, as a write task will."""
    import lance  # noqa: F401

    yield from batches
