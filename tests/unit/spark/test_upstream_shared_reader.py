"""PySpark 4.3's shared planned reader, reproduced with a 30-line toy data source (no Lance at all).

A Python data source reader that keeps the filters it accepts in ``pushFilters`` is planned once per
relation, and Spark hands that one reader to every scan of the relation: a self-union with a filter
on one side filters both sides, and a frame filtered in one query stays filtered in the next.
The fix is upstream (apache/spark: the planned read info moved from ``PythonDataSourceV2`` onto
``PythonScanBuilder``, with the limit pushdown API); no PySpark release has it yet. These tests are
strict xfails: the day they pass, the installed PySpark has the fix and the ``lance`` reader's
``filter_pushdown`` default can follow (docs/spark-datasource.md).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, GreaterThan
from pyspark.sql.types import LongType, StructField, StructType

ROWS = 20
LOW = 14  # `id > 14` keeps 5 of the 20 rows


class ToyReader(DataSourceReader):
    def __init__(self) -> None:
        self.low: int | None = None

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 (Spark's name)
        for spark_filter in filters:
            if isinstance(spark_filter, GreaterThan) and spark_filter.attribute == ("id",):
                self.low = spark_filter.value
            else:
                yield spark_filter

    def read(self, partition: object) -> Iterator[tuple[int]]:
        for value in range(ROWS):
            if self.low is None or value > self.low:
                yield (value,)


class ToySource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "lancens_toy_filtering"

    def schema(self) -> StructType:
        return StructType([StructField("id", LongType())])

    def reader(self, schema: StructType) -> ToyReader:
        return ToyReader()


@pytest.fixture(scope="module")
def toy(spark: SparkSession) -> str:
    spark.dataSource.register(ToySource)
    spark.sql("CREATE DATABASE IF NOT EXISTS upstream_toy")
    spark.sql(f"CREATE TABLE IF NOT EXISTS upstream_toy.t USING {ToySource.name()}")
    return "upstream_toy.t"


def test_the_toy_filters_a_single_read(spark: SparkSession, toy: str) -> None:
    """The toy reader works when its relation is scanned once: the xfails below are about sharing."""
    assert spark.sql(f"SELECT id FROM {toy} WHERE id > {LOW}").count() == ROWS - LOW - 1


@pytest.mark.xfail(strict=True, reason="PySpark 4.3 shares one planned reader among a relation's scans")
def test_self_union_with_a_filter_on_one_side(spark: SparkSession, toy: str) -> None:
    query = f"SELECT id FROM {toy} WHERE id > {LOW} UNION ALL SELECT id FROM {toy}"
    assert spark.sql(query).count() == (ROWS - LOW - 1) + ROWS


@pytest.mark.xfail(strict=True, reason="PySpark 4.3 keeps the planned reader on the relation")
def test_a_frame_filtered_then_counted_whole(spark: SparkSession, toy: str) -> None:
    frame = spark.read.format(ToySource.name()).load()
    assert frame.where(f"id > {LOW}").count() == ROWS - LOW - 1
    assert frame.count() == ROWS
