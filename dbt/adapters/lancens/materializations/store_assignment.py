"""A model's rows cast to the types of the table columns they land in, as Spark casts them.

A column's type in the model's result can differ from the table's (`on_schema_change: ignore` keeps
the table's types). dbt-spark's `INSERT` lets Spark cast such a value, so a double `1.0` stored in a
string column reads `'1.0'` and `2.7` stored in a `bigint` column reads `2`. Arrow's cast, which
conforms the rows to the Lance schema afterwards, would give `'1'` and fail on `2.7`. So the columns
Spark's store assignment would cast (numbers, values into strings, dates and timestamps) are cast
by Spark first; Arrow then only changes how a value is held (`bigint` to `uint32`, microseconds to
nanoseconds), which it does exactly or fails.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from dbt.adapters.lancens.spark.column_names import ColumnMap
from dbt.adapters.lancens.spark.types import to_spark_type
from dbt.adapters.lancens.text.quoting import quote

# Within each of these families Arrow's safe cast gives Spark's value or fails where Spark does.
_SAME_FAMILY = ((T.ByteType, T.ShortType, T.IntegerType, T.LongType), (T.FloatType, T.DoubleType))
_TIMES = (T.DateType, T.TimestampType, T.TimestampNTZType)


def cast_frame(frame: DataFrame, source: pa.Schema, schema: pa.Schema) -> DataFrame:
    """`frame` (whose rows Arrow holds as `source`) with each column that lands in a column of
    `schema` of another Spark type cast to that type where Spark's INSERT would cast it, planned on
    the frame itself (the rows never reach the driver); unchanged when there is no such column."""
    casts = _casts(source, schema)
    if not casts:
        return frame
    return frame.selectExpr(
        *(_cast(name, casts[name]) if name in casts else quote(name) for name in frame.columns)
    )


def _cast(name: str, kind: T.DataType) -> str:
    """The select item casting column `name` to `kind`, keeping its name."""
    return f"CAST({quote(name)} AS {kind.simpleString()}) AS {quote(name)}"


def _spark_stores(given: T.DataType, wanted: T.DataType) -> bool:
    """Whether Spark's INSERT casts `given` into a `wanted` column (its ANSI store assignment: numbers
    into numbers, atomic values into strings, dates and timestamps into each other), and gives a
    value Arrow's cast would not. Spark refuses other pairs; they are left to Arrow's cast."""
    if any(isinstance(wanted, family) and isinstance(given, family) for family in _SAME_FAMILY):
        return False
    if isinstance(given, T.NumericType) and isinstance(wanted, T.NumericType):
        return True
    if isinstance(wanted, T.StringType):
        return isinstance(given, T.AtomicType)
    return isinstance(given, _TIMES) and isinstance(wanted, _TIMES)


def _casts(source: pa.Schema, target: pa.Schema) -> dict[str, T.DataType]:
    """The Spark type each differing column of `source` is cast to (names matched as Spark does)."""
    landing = ColumnMap((field.name, field.type) for field in target)
    casts: dict[str, T.DataType] = {}
    for field in source:
        stored = landing.get(field.name)
        if stored is None or pa.types.is_null(field.type):
            continue  # not written, or NULL: Arrow types a null column exactly
        try:
            wanted, given = to_spark_type(stored), to_spark_type(field.type)
        except TypeError:
            continue  # no Spark type: left to the conforming cast
        if wanted != given and _spark_stores(given, wanted):
            casts[field.name] = wanted
    return casts
