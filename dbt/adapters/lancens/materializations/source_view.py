"""Arrow rows as a temporary Spark view, for the queries that join them with a table."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from dbt.adapters.lancens.core.runtime import LancensRuntime


@contextmanager
def source_view(runtime: LancensRuntime, rows: pa.Table) -> Iterator[str]:
    """`rows` as a temporary Spark view for the duration of one query; yields its name."""
    name = f"lancens_source_{uuid.uuid4().hex}"
    runtime.activate()
    # the schema given, not inferred: Spark Connect cannot infer one from an empty Arrow table
    runtime.spark.createDataFrame(rows, schema=from_arrow_schema(rows.schema)).createOrReplaceTempView(name)
    try:
        yield name
    finally:
        runtime.spark.catalog.dropTempView(name)


def query_rows(runtime: LancensRuntime, rows: pa.Table, *queries: Callable[[str], str]) -> list[pa.Table]:
    """Run each query (given the view name of `rows`) through `runtime.sql`; the results as Arrow."""
    with source_view(runtime, rows) as source:
        return [runtime.sql(query(source)).toArrow() for query in queries]
