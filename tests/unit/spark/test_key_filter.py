"""The key filter a merge, a delete+insert and a partitioned insert_overwrite read the table through
(`spark/key_filter.py` over the connector's `KeyFilter`): it never drops a row the join would match,
drops most of the others (in Lance's scan where the keys' range allows), and stays out where a
hash could miss an equal key."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.spark import jvm_connector
from dbt.adapters.lancens.spark.key_filter import MIN_STORED, may_match

ROWS = 200_000


def _table(spark: SparkSession, tmp_path: Path, data: pa.Table, columns: list[str]) -> DataFrame:
    """`data` as a Lance table of a few fragments, read through the connector with row addresses."""
    uri = str(tmp_path / "target.lance")
    lance.write_dataset(data, uri, max_rows_per_file=max(data.num_rows // 4, 1))
    frame = spark.read.format(jvm_connector.SOURCE_CLASS).load(uri)
    return frame.select(*columns, "_rowaddr")


def _joined(spark: SparkSession, target: DataFrame, keys: DataFrame, on: str) -> list[tuple]:
    """The target rows (with their addresses) a join of `keys` to `target` on `on` matches."""
    target.createOrReplaceTempView("t")
    keys.createOrReplaceTempView("k")
    rows = spark.sql(f"SELECT t.* FROM t LEFT SEMI JOIN k ON {on}").collect()
    return sorted(tuple(row) for row in rows)


def test_every_match_is_kept_and_most_other_rows_are_dropped(spark: SparkSession, tmp_path: Path) -> None:
    data = pa.table({"id": pa.array(range(ROWS), pa.int64()), "v": [f"r{i}" for i in range(ROWS)]})
    target = _table(spark, tmp_path, data, ["id"])
    # keys spread over the whole range (no range to prune by), some absent from the table, one NULL
    wanted = [*range(0, ROWS, 97), *range(ROWS, ROWS + 500), None]
    keys = spark.createDataFrame([(k,) for k in wanted], "id bigint")
    narrowed = may_match(target, keys, ["id"], MIN_STORED)
    assert narrowed is not target
    kept = [row.id for row in narrowed.collect()]
    matches = {k for k in wanted if k is not None and k < ROWS}
    assert matches <= set(kept)
    assert len(kept) < 2 * len(matches)  # a Bloom filter's few false positives, not the table
    assert _joined(spark, narrowed, keys, "k.id = t.id") == _joined(spark, target, keys, "k.id = t.id")


def test_a_range_of_keys_is_pruned_in_lances_scan(spark: SparkSession, tmp_path: Path) -> None:
    ids = pa.array(range(ROWS), pa.int64())
    target = _table(spark, tmp_path, pa.table({"id": ids}), ["id"])
    keys = spark.range(150_000, 151_000).toDF("id")
    narrowed = may_match(target, keys, ["id"], MIN_STORED)
    plan = narrowed._jdf.queryExecution().executedPlan().toString()
    scan = next(line for line in plan.splitlines() if "LanceScan" in line)
    assert ">= 150000" in scan and "<= 150999" in scan, scan  # the range is Lance's filter
    assert sorted(row.id for row in narrowed.collect()) == list(range(150_000, 151_000))


def test_null_safe_multi_column_keys_and_strings_in_utf8_order(spark: SparkSession, tmp_path: Path) -> None:
    """Two key columns, NULLs among the keys (a `<=>` join matches them) and strings whose UTF-16
    order differs from Spark's UTF-8 order (U+FFFF sorts before U+1D11E in bytes, after it in Java's
    compareTo): a range taken in the wrong order would drop both."""
    names = ["\uffff", "\U0001d11e", "a", None, "b"]
    data = pa.table(
        {
            "a": pa.array([i % 7 for i in range(ROWS)], pa.int32()),
            "b": pa.array([names[i % len(names)] for i in range(ROWS)]),
        }
    )
    target = _table(spark, tmp_path, data, ["a", "b"])
    keys = spark.createDataFrame([(3, "\uffff"), (3, "\U0001d11e"), (5, None)], "a int, b string")
    narrowed = may_match(target, keys, ["a", "b"], MIN_STORED)
    assert narrowed is not target
    on = "k.a <=> t.a AND k.b <=> t.b"
    expected = _joined(spark, target, keys, on)
    assert expected and _joined(spark, narrowed, keys, on) == expected
    equal = "k.a = t.a AND k.b = t.b"
    assert _joined(spark, narrowed, keys, equal) == _joined(spark, target, keys, equal)


def test_no_keys_keep_no_row(spark: SparkSession, tmp_path: Path) -> None:
    target = _table(spark, tmp_path, pa.table({"id": pa.array(range(1000), pa.int64())}), ["id"])
    keys = spark.createDataFrame([], "id bigint")
    assert may_match(target, keys, ["id"], MIN_STORED).count() == 0


@pytest.mark.parametrize(
    ("target_type", "key_type", "stored"),
    [
        ("double", "double", MIN_STORED),  # -0.0 equals 0.0 but hashes otherwise
        ("bigint", "int", MIN_STORED),  # a join casts; the hashes of 1 and 1L differ
        ("bigint", "bigint", MIN_STORED - 1),  # a small table: its keys shuffle fast enough
    ],
)
def test_no_filter_where_a_hash_could_miss_or_it_would_not_pay(
    spark: SparkSession, tmp_path: Path, target_type: str, key_type: str, stored: int
) -> None:
    arrow = {"double": pa.float64(), "bigint": pa.int64()}[target_type]
    target = _table(spark, tmp_path, pa.table({"k": pa.array([0, 1, 2], arrow)}), ["k"])
    keys = spark.sql(f"SELECT CAST(1 AS {key_type}) AS k")
    assert may_match(target, keys, ["k"], stored) is target
