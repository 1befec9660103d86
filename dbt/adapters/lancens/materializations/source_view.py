"""The model's rows and pinned table versions as temporary Spark views, for the queries that join them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.table_write import TableWrite
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.runtime.table_frames import table_frame
from dbt.adapters.lancens.spark.key_filter import may_match


@contextmanager
def frame_view(runtime: LancensRuntime, frame: DataFrame) -> Iterator[str]:
    """`frame` (the model's rows, kept by Spark) as a temporary Spark view while the queries that
    join it with the table are planned and run; yields its name."""
    name = f"lancens_source_{uuid.uuid4().hex}"
    runtime.activate()
    frame.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        runtime.spark.catalog.dropTempView(name)


@dataclass(frozen=True)
class KeysOf:
    """The model's rows (made once) whose key columns, spelled as the table spells them, a join
    looks up in the table: the table's rows are narrowed to those that may match before the join
    moves them (spark/key_filter.py)."""

    frame: DataFrame
    columns: Sequence[str]


@contextmanager
def addressed_view(
    target: TableWrite, columns: Sequence[str] | None = None, keys: KeysOf | None = None
) -> Iterator[str]:
    """The version a write builds on as a temporary Spark view whose last column, `_rowaddr`, is
    each row's Lance address: the rows a query picks there can be deleted exactly (`merge.replace_frame`).
    `columns`: the only ones the query reads (Spark prunes no column of a Python data source, so an
    embedding column would otherwise be read to find keys). `keys`: the view holds only rows whose
    key may be among them (and a few percent of the others), for a query that keeps no other row."""
    runtime = target.runtime
    name = f"lancens_target_{uuid.uuid4().hex}"
    frame = table_frame(
        runtime, target.location, target.current.version, columns, True, target.storage_options
    )
    if keys is not None:
        frame = may_match(frame, keys.frame, keys.columns, target.current.count_rows())
    frame.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        runtime.spark.catalog.dropTempView(name)
