"""Arrow rows and pinned table versions as temporary Spark views, for the queries that join them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import pyarrow as pa

from dbt.adapters.lancens.commits.table_write import TableWrite
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.options import read_options
from dbt.adapters.lancens.spark.types import conform, spark_arrow_schema, to_spark_schema


@contextmanager
def source_view(runtime: LancensRuntime, rows: pa.Table) -> Iterator[str]:
    """`rows` as a temporary Spark view for the duration of one query; yields its name.

    The rows are first cast to the Arrow types Spark holds them in (unsigned integers widened,
    float16 to float, date64 to date, view strings to strings, nanoseconds to microseconds):
    PySpark's Arrow import rejects the others, and rows conformed to a table pylance wrote have
    them. So a query on the view sees the values as a query on the table would."""
    name = f"lancens_source_{uuid.uuid4().hex}"
    spark_schema = to_spark_schema(rows.schema)
    arrow_schema = spark_arrow_schema(spark_schema)
    batches = [conform(batch, arrow_schema) for batch in rows.to_batches()]
    runtime.activate()
    # the schema given, not inferred: Spark Connect cannot infer one from an empty Arrow table
    frame = runtime.spark.createDataFrame(pa.Table.from_batches(batches, arrow_schema), schema=spark_schema)
    frame.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        runtime.spark.catalog.dropTempView(name)


@contextmanager
def addressed_view(target: TableWrite, columns: Sequence[str] | None = None) -> Iterator[str]:
    """The version a write builds on as a temporary Spark view whose last column, `_rowaddr`, is
    each row's Lance address: the rows a query picks there can be deleted exactly (`merge.replace`).
    `columns`: the only ones the query reads (Spark prunes no column of a Python data source, so an
    embedding column would otherwise be read to find keys)."""
    runtime = target.runtime
    name = f"lancens_target_{uuid.uuid4().hex}"
    options = {
        **read_options(target.location, target.storage_options, target.current.version),
        "row_address": "true",
    }
    if columns:
        options["columns"] = ",".join(columns)
    runtime.activate()
    runtime.spark.read.format("lance").options(**options).load().createOrReplaceTempView(name)
    try:
        yield name
    finally:
        runtime.spark.catalog.dropTempView(name)


def query_rows(runtime: LancensRuntime, rows: pa.Table, *queries: Callable[[str], str]) -> list[pa.Table]:
    """Run each query (given the view name of `rows`) through `runtime.sql`; the results as Arrow."""
    with source_view(runtime, rows) as source:
        return [runtime.sql(query(source)).toArrow() for query in queries]
