"""A table's rows narrowed to those whose key may be among a frame's, before a join moves them.

A merge, a delete+insert and a partitioned insert_overwrite find the stored rows they replace by
joining the model's rows with the table's keys. Spark shuffles both sides of that join: for
1,000,000 model rows and a 10,000,000-row table, every stored key and row address crosses the
shuffle and is sorted, and that was most of the merge's time while reading the keys is cheap
(docs/materializations.md, "How a merge finds its rows"). So the table's rows are first narrowed by
a Bloom filter of the model's keys (`org.dbtlancens.spark.KeyFilter`: Spark tasks build it, only the
filter reaches the driver), and the join sees the rows that can match plus a few percent.

The filter compares 64-bit hashes, so it is used only where equal keys have equal hashes: the
same Spark type on both sides, and a type whose equality is that of its value's bytes (not
floating point, where -0.0 equals 0.0; not a collated string). Elsewhere, and where the driver has
no JVM with the connector's classes (Spark Connect, a session without its class path), the rows
are left as they are: the join is the same, only slower.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from dbt.adapters.lancens.spark.column_names import ColumnMap
from dbt.adapters.lancens.spark.java_classes import java_class
from dbt.adapters.lancens.spark.jvm_connector import loaded

KEY_FILTER_CLASS = "org.dbtlancens.spark.KeyFilter"
MIN_STORED = 1_000_000
"""The fewest stored rows a filter is built for: a smaller table's keys are shuffled about as fast
as the filter's own Spark job runs."""
MAX_KEYS = 16_000_000
"""The most keys a filter is sized for (about 15 MiB at 3% false positives, built by tasks and
held by the driver while the join is planned): more keys still pass, at a higher false rate."""
_EXACT = (
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    ShortType,
    TimestampNTZType,
    TimestampType,
)


def may_match(rows: DataFrame, keys: DataFrame, columns: Sequence[str], stored: int) -> DataFrame:
    """`rows` (the table's, `stored` of them) without rows whose `columns` certainly equal those of
    no row of `keys` (the model's, made once: the filter and the join must read the same rows); or
    `rows` itself where a filter does not pay (fewer than `MIN_STORED` rows) or could drop a match
    (a key type hashed other than by its value) or cannot be built (no connector classes in the
    driver's JVM). Sized for a quarter of the table's rows: a larger change is rarely a merge's,
    and still gets a correct filter that lets more rows through."""
    if stored < MIN_STORED or not columns or not _hashed_exactly(rows, keys, columns):
        return rows
    spark = rows.sparkSession
    if getattr(spark, "_jvm", None) is None or loaded(spark) is not None:
        return rows
    narrowed = java_class(spark._jvm, KEY_FILTER_CLASS).mayMatch(
        rows._jdf, list(columns), keys._jdf, min(MAX_KEYS, stored // 4)
    )
    return DataFrame(narrowed, spark)


def _hashed_exactly(rows: DataFrame, keys: DataFrame, columns: Sequence[str]) -> bool:
    """Whether every key column has one type on both sides, whose equal values hash equally."""
    row_types, key_types = _types(rows), _types(keys)
    for name in columns:
        kind = row_types.get(name)
        if kind is None or kind != key_types.get(name) or not _exact(kind):
            return False
    return True


def _exact(kind: DataType) -> bool:
    """Whether Spark's equality of `kind` is the equality of the value `xxhash64` hashes."""
    if isinstance(kind, StringType):
        return kind.simpleString() == "string"  # a collated string compares other than its bytes
    return isinstance(kind, _EXACT)


def _types(frame: DataFrame) -> ColumnMap[DataType]:
    """`frame`'s column types by name, the names matched as Spark matches them."""
    return ColumnMap((field.name, field.dataType) for field in frame.schema.fields)
