"""The JVM connector's read planning (connector/.../ReadPlan.java): the size it reports to Spark's
optimizer, so a small Lance table is broadcast in a join as a Parquet one is, and a big fragment
read as several row slices (input partitions) that give exactly the rows and row addresses of one
scan, with deletions, filters and a limit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.spark import jvm_connector

JVM = jvm_connector.SOURCE_CLASS
ROWS = 300_000  # one fragment: above twice ReadPlan.MIN_SLICE_ROWS, so it can be sliced


@contextmanager
def _conf(spark: SparkSession, **settings: str) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@contextmanager
def _sliced(spark: SparkSession) -> Iterator[None]:
    """Spark's split size made small, so the connector cuts the one fragment into row slices."""
    with _conf(spark, **{"spark.sql.files.maxPartitionBytes": "64k"}):
        yield


@pytest.fixture(scope="module")
def one_fragment(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One fragment of ROWS rows, with rows deleted across it (in what becomes every slice)."""
    uri = str(tmp_path_factory.mktemp("planning") / "big.lance")
    ids = np.arange(ROWS, dtype=np.int64)
    table = pa.table({"id": ids, "grp": pa.array(ids % 13, pa.int32()), "name": [f"n{i}" for i in ids]})
    lance.write_dataset(table, uri, max_rows_per_file=ROWS)
    lance.dataset(uri).delete("id % 97 = 5 OR id < 1000 OR (id >= 150000 AND id < 160000)")
    assert len(lance.dataset(uri).get_fragments()) == 1
    return uri


def _plan(frame: DataFrame) -> str:
    return str(frame._jdf.queryExecution().executedPlan().toString())


def _addresses(frame: DataFrame) -> list[tuple[int, int]]:
    return sorted((row.id, row._rowaddr) for row in frame.select("id", "_rowaddr").collect())


def test_a_big_fragment_reads_as_slices_with_the_same_rows_and_addresses(
    spark: SparkSession, one_fragment: str
) -> None:
    whole = spark.read.format(JVM).load(one_fragment)
    assert whole.rdd.getNumPartitions() == 1
    expected = lance.dataset(one_fragment).to_table(columns=["id"], with_row_address=True)
    truth = sorted(
        zip(expected.column("id").to_pylist(), expected.column("_rowaddr").to_pylist(), strict=True)
    )
    assert _addresses(whole) == truth
    with _sliced(spark):
        sliced = spark.read.format(JVM).load(one_fragment)
        assert sliced.rdd.getNumPartitions() > 1
        assert "partitions=" in _plan(sliced.select("id"))
        assert _addresses(sliced) == truth
        assert sliced.count() == lance.dataset(one_fragment).count_rows()
        names = {row.id: row.name for row in sliced.where("id % 1000 = 7").collect()}
        assert names == {
            i: f"n{i}" for i in range(1007, ROWS, 1000) if i % 97 != 5 and not 150000 <= i < 160000
        }


def test_a_sliced_scan_keeps_filters_with_spark_and_gives_the_filtered_rows(
    spark: SparkSession, one_fragment: str
) -> None:
    query = "grp = 4 AND id > 100000"
    expected = lance.dataset(one_fragment).to_table(columns=["id"], filter=query, with_row_address=True)
    truth = sorted(
        zip(expected.column("id").to_pylist(), expected.column("_rowaddr").to_pylist(), strict=True)
    )
    whole = spark.read.format(JVM).load(one_fragment).where(query)
    assert "(`grp` = 4) AND (`id` > 100000), limit" in _plan(whole)  # one slice: Lance filters
    assert _addresses(whole) == truth
    with _sliced(spark):
        sliced = spark.read.format(JVM).load(one_fragment).where(query)
        plan = _plan(sliced)
        assert "filter=none" in plan and "Filter " in plan  # sliced: Spark filters
        assert _addresses(sliced) == truth


def test_a_limit_over_slices_returns_that_many_real_rows(spark: SparkSession, one_fragment: str) -> None:
    live = set(lance.dataset(one_fragment).to_table(columns=["id"]).column("id").to_pylist())
    with _sliced(spark):
        limited = spark.read.format(JVM).load(one_fragment).limit(70_000)
        assert "limit=70000" in _plan(limited)
        ids = [row.id for row in limited.select("id").collect()]
    assert len(ids) == len(set(ids)) == 70_000
    assert set(ids) <= live


def _stats_bytes(frame: DataFrame) -> int:
    return int(str(frame._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))


def test_the_scan_reports_its_size(spark: SparkSession, one_fragment: str, tmp_path: Path) -> None:
    small = str(tmp_path / "small.lance")
    lance.write_dataset(
        pa.table({"k": pa.array(range(1000), pa.int64()), "v": [f"v{i}" for i in range(1000)]}), small
    )
    assert 0 < _stats_bytes(spark.read.format(JVM).load(small)) < 1_000_000  # not Spark's default (no end)
    big = spark.read.format(JVM).load(one_fragment)
    assert _stats_bytes(big.select("id")) < _stats_bytes(big)  # scaled to the columns read


def test_a_small_lance_table_is_broadcast_in_a_join_as_parquet_is(
    spark: SparkSession, one_fragment: str, tmp_path: Path
) -> None:
    dimension = pa.table({"grp": pa.array(range(13), pa.int32()), "label": [f"g{i}" for i in range(13)]})
    small = str(tmp_path / "dimension.lance")
    lance.write_dataset(dimension, small)
    pq.write_table(dimension, tmp_path / "dimension.parquet")
    facts = spark.read.format(JVM).load(one_fragment)
    with _conf(spark, **{"spark.sql.adaptive.enabled": "false"}):  # the plan Spark picks from statistics
        for side in (
            spark.read.format(JVM).load(small),
            spark.read.parquet(str(tmp_path / "dimension.parquet")),
        ):
            joined = facts.join(side, "grp").groupBy("label").count()
            assert "BroadcastHashJoin" in _plan(joined), _plan(joined)
            counts = {row.label: row["count"] for row in joined.collect()}
            assert sum(counts.values()) == lance.dataset(one_fragment).count_rows()
