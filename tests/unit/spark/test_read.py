"""Reading Lance tables: partitions, projection, filter pushdown, time travel, SQL tables."""

from __future__ import annotations

import datetime as dt
import re
import time

import lance
import pyarrow as pa
import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not, StringStartsWith
from pyspark.sql.functions import udf
from pyspark.sql.types import StructType

from dbt.adapters.lancens.spark import LanceDataSource
from dbt.adapters.lancens.spark.datasource import register_bound_source
from dbt.adapters.lancens.spark.reader import (
    BATCH_BYTES,
    MAX_BATCH_ROWS,
    MIN_BATCH_ROWS,
    default_batch_size,
    group_fragments,
)


def _table(rows: int = 100) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "name": pa.array([f"n{i % 10}" if i % 7 else None for i in range(rows)]),
            "score": pa.array([i / 2 for i in range(rows)], pa.float64()),
        }
    )


@pytest.fixture
def small_table(table_uri: str) -> str:
    """100 rows in 10 fragments of 10 rows."""
    lance.write_dataset(_table(), table_uri, max_rows_per_file=10)
    return table_uri


def _reader_rows(
    uri: str, filters: list, columns: str | None = None, pushdown: bool = True
) -> tuple[list, list[dict]]:
    """Drive the data source's reader as Spark does; returns (filters left for Spark, rows read)."""
    options = {"path": uri, "filter_pushdown": str(pushdown).lower()}
    if columns is not None:
        options["columns"] = columns
    source = LanceDataSource(options)
    reader = source.reader(source.schema())
    left = list(reader.pushFilters(filters))
    rows = [row for part in reader.partitions() for batch in reader.read(part) for row in batch.to_pylist()]
    return left, rows


def _has_filter_node(frame) -> bool:
    """Whether Spark still filters rows after the scan (it does not for fully pushed filters)."""
    return re.search(r"\bFilter\b", frame._jdf.queryExecution().executedPlan().toString()) is not None


def test_small_fragments_share_partitions() -> None:
    groups = group_fragments([(i, 10) for i in range(100)], rows_per_partition=250)
    assert [g.rows for g in groups] == [250, 250, 250, 250]
    assert group_fragments([(0, 5000), (1, 1), (2, 1)], rows_per_partition=100)[0].fragment_ids == (0,)


def test_big_fragments_split_into_row_ranges_when_asked() -> None:
    groups = group_fragments([(0, 10), (1, 250), (2, 10)], rows_per_partition=100, split=True)
    assert [(g.fragment_ids, g.offset, g.rows) for g in groups] == [
        ((0,), None, 10),
        ((1,), 0, 100),
        ((1,), 100, 100),
        ((1,), 200, 50),
        ((2,), None, 10),
    ]
    assert [g.offset for g in group_fragments([(1, 250)], rows_per_partition=100)] == [None]


def test_one_big_fragment_is_read_by_several_tasks(spark, table_uri: str) -> None:
    """One 100-row fragment with deletions: ranges cover exactly the live rows; a pushed filter
    reads the fragment whole (Lance applies a scan's offset after its filter)."""
    lance.write_dataset(_table(), table_uri)
    lance.dataset(table_uri).delete("id % 10 = 3")
    reader = spark.read.format("lance").option("rows_per_partition", "25")
    frame = reader.load(table_uri)
    assert frame.rdd.getNumPartitions() == 4  # 90 live rows
    live = sorted(i for i in range(100) if i % 10 != 3)
    assert sorted(row.id for row in frame.select("id").collect()) == live
    filtered = reader.option("filter_pushdown", "true").load(table_uri).where("id > 50")
    assert filtered.rdd.getNumPartitions() == 1
    assert sorted(row.id for row in filtered.collect()) == [i for i in live if i > 50]


def test_one_partition_per_fragment_group(spark, small_table: str) -> None:
    frame = spark.read.format("lance").option("rows_per_partition", "30").load(small_table)
    assert frame.rdd.getNumPartitions() == 4
    assert frame.count() == 100
    assert spark.read.format("lance").load(small_table).rdd.getNumPartitions() == 1


def test_pushdown_reads_only_matching_rows(small_table: str) -> None:
    starts = StringStartsWith(("name",), "n3")
    left, rows = _reader_rows(small_table, [GreaterThan(("id",), 50), starts])
    assert left == []
    assert sorted(r["id"] for r in rows) == [53, 73, 83, 93]


def test_pushdown_in_null_and_not(small_table: str) -> None:
    left, rows = _reader_rows(small_table, [In(("id",), (1, 2, 7)), Not(IsNull(("name",)))])
    assert left == [] and sorted(r["id"] for r in rows) == [1, 2]
    left, rows = _reader_rows(small_table, [IsNull(("name",)), Not(EqualTo(("id",), 0))])
    assert sorted(r["id"] for r in rows) == [i for i in range(1, 100) if i % 7 == 0]


def test_without_the_option_every_filter_goes_back_and_every_row_is_read(small_table: str) -> None:
    """The default: a reader shared by several scans of one relation must not filter any of them."""
    filters = [GreaterThan(("id",), 50), StringStartsWith(("name",), "n3")]
    left, rows = _reader_rows(small_table, filters, pushdown=False)
    assert left == filters
    assert sorted(r["id"] for r in rows) == list(range(100))


def test_pushdown_option_must_be_a_boolean(small_table: str) -> None:
    with pytest.raises(ValueError, match="option filter_pushdown must be true or false, got 'maybe'"):
        LanceDataSource({"path": small_table, "filter_pushdown": "maybe"}).reader(StructType())


def test_untranslatable_filters_go_back_to_spark(small_table: str) -> None:
    nan = EqualTo(("score",), float("nan"))
    left, rows = _reader_rows(small_table, [nan, EqualTo(("id",), 4)])
    assert left == [nan] and [r["id"] for r in rows] == [4]


def test_spark_plans_pushed_filters_without_a_filter_node(spark, small_table: str) -> None:
    pushing = spark.read.format("lance").option("filter_pushdown", "true")
    pushed = pushing.load(small_table).where("id >= 90 AND name LIKE 'n9%'")
    assert not _has_filter_node(pushed)
    assert sorted(r.id for r in pushed.collect()) == [99]
    is_odd = udf(lambda v: v % 2 == 1, "boolean")
    frame = pushing.load(small_table)
    kept = frame.where(is_odd("id") & (frame.id < 10))
    assert _has_filter_node(kept)
    assert sorted(r.id for r in kept.collect()) == [1, 3, 5, 7, 9]
    default = spark.read.format("lance").load(small_table).where("id >= 90 AND name LIKE 'n9%'")
    assert _has_filter_node(default)
    assert sorted(r.id for r in default.collect()) == [99]


def test_projection_by_columns_option_reads_fewer_columns(spark, small_table: str) -> None:
    _, rows = _reader_rows(small_table, [], columns="ID")
    assert set(rows[0]) == {"id"} and len(rows) == 100
    frame = spark.read.format("lance").option("columns", "score,id").load(small_table)
    assert frame.columns == ["id", "score"]


def test_projection_by_user_schema(spark, small_table: str) -> None:
    frame = spark.read.format("lance").schema("name string").load(small_table)
    assert frame.where("name = 'n1'").count() == sum(1 for i in range(100) if i % 10 == 1 and i % 7)


def test_time_travel_by_version_and_timestamp(spark, table_uri: str) -> None:
    lance.write_dataset(_table(10), table_uri)
    between = dt.datetime.now(dt.UTC)
    time.sleep(0.05)  # Lance stamps versions in milliseconds; keep the two versions apart
    lance.write_dataset(_table(5), table_uri, mode="append")
    reader = spark.read.format("lance")
    assert reader.load(table_uri).count() == 15
    assert reader.option("version", "1").load(table_uri).count() == 10
    assert spark.read.format("lance").option("timestamp", between.isoformat()).load(table_uri).count() == 10


def test_catalog_table_through_a_bound_source(spark, small_table: str) -> None:
    name = register_bound_source(spark, {"path": small_table})
    assert register_bound_source(spark, {"path": small_table}) == name
    spark.sql("CREATE DATABASE IF NOT EXISTS read_tests")
    spark.sql(f"CREATE TABLE read_tests.scores USING {name}")
    assert spark.sql("SELECT count(*) AS n FROM read_tests.scores WHERE id < 10").first().n == 10
    spark.sql("INSERT INTO read_tests.scores SELECT id + 100, name, score FROM read_tests.scores")
    assert lance.dataset(small_table).count_rows() == 200


def test_default_batch_size_follows_row_width() -> None:
    narrow = pa.schema([("id", pa.int64()), ("flag", pa.bool_())])
    vectors = pa.schema([("id", pa.int64()), ("vec", pa.list_(pa.float32(), 768))])
    assert default_batch_size(narrow) == MAX_BATCH_ROWS
    assert MIN_BATCH_ROWS <= default_batch_size(vectors) < MAX_BATCH_ROWS
    assert default_batch_size(vectors) * (8 + 768 * 4) <= BATCH_BYTES


def test_batch_size_option_wins_over_the_default(small_table: str) -> None:
    source = LanceDataSource({"path": small_table, "batch_size": "7"})
    reader = source.reader(source.schema())
    assert reader.batch_size == 7
    batches = [batch for part in reader.partitions() for batch in reader.read(part)]
    assert max(batch.num_rows for batch in batches) <= 7
    assert sum(batch.num_rows for batch in batches) == 100


def test_row_address_names_each_row_as_lance_does(spark, table_uri: str) -> None:
    """`row_address` adds `_rowaddr` (fragment id << 32 | offset), on whole-fragment tasks, split
    ranges and pushed filters alike, so a query can name exact rows to delete."""
    lance.write_dataset(_table(), table_uri, max_rows_per_file=40)
    lance.dataset(table_uri).delete("id % 10 = 3")
    expected = lance.dataset(table_uri).to_table(columns=["id"], with_row_address=True)
    expected_pairs = sorted(zip(expected["id"].to_pylist(), expected["_rowaddr"].to_pylist(), strict=True))
    reader = spark.read.format("lance").option("row_address", "true")
    cases = [
        (reader.load(table_uri), expected_pairs),
        (reader.option("rows_per_partition", "15").load(table_uri), expected_pairs),
        (
            reader.option("filter_pushdown", "true").load(table_uri).where("id > 50"),
            [pair for pair in expected_pairs if pair[0] > 50],
        ),
    ]
    for frame, wanted in cases:
        assert frame.columns[-1] == "_rowaddr" and frame.schema["_rowaddr"].dataType.typeName() == "long"
        assert sorted((row.id, row._rowaddr) for row in frame.select("id", "_rowaddr").collect()) == wanted


def test_row_address_refuses_a_table_with_a_column_of_that_name(table_uri: str) -> None:
    lance.write_dataset(pa.table({"_RowAddr": [1]}), table_uri)
    with pytest.raises(ValueError, match="row_address: the table already has a column '_RowAddr'"):
        LanceDataSource({"path": table_uri, "row_address": "true"}).schema()


def test_a_date64_with_a_time_of_day_before_1970_reads_as_its_day(spark, table_uri: str) -> None:
    """pyarrow's date64 -> date32 cast rounds toward zero, so 1969-12-31 23:59:59.999 read as
    1970-01-01; pyarrow itself, and the calendar, say 1969-12-31."""
    days = pa.array([-1, -86_400_000 - 1, 86_400_000 + 5], pa.date64())
    lance.write_dataset(pa.table({"id": [1, 2, 3], "d": days}), table_uri)
    rows = sorted(tuple(row) for row in spark.read.format("lance").load(table_uri).collect())
    assert rows == [(1, dt.date(1969, 12, 31)), (2, dt.date(1969, 12, 30)), (3, dt.date(1970, 1, 2))]
    assert [day for _, day in rows] == [days[i].as_py() for i in range(3)]


def test_a_column_retyped_by_another_writer_fails_instead_of_truncating(spark, table_uri: str) -> None:
    """Spark planned `x` as bigint; pylance then rewrote it as double. The reader used to cast 1.7
    to 1 without a word."""
    lance.write_dataset(pa.table({"id": [1, 2], "x": pa.array([1, 2], pa.int64())}), table_uri)
    frame = spark.read.format("lance").load(table_uri)  # the schema is fixed here
    lance.write_dataset(pa.table({"id": [1, 2], "x": [1.7, 2.9]}), table_uri, mode="overwrite")
    with pytest.raises(Exception, match="column 'x': values of type double do not fit its type int64"):
        frame.collect()


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("d = DATE '1582-10-10'", [1]),
        ("d = DATE '1582-10-15'", [2]),
        ("d >= DATE '1582-10-05'", [1, 2, 3]),
        ("ts > TIMESTAMP '1582-10-05 00:00:00 UTC'", [1, 2, 3]),
        ("d < DATE '1500-01-01'", [0]),
    ],
)
def test_dates_of_the_calendar_switch_are_compared_as_spark_does(
    spark, table_uri: str, condition: str, expected: list[int]
) -> None:
    """PySpark hands a Python source the literal of a day the Julian calendar skipped (1582-10-05
    to 14) as 1582-10-15: pushed into Lance it found other rows than Spark's own filter."""
    days = [dt.date(1400, 1, 1), dt.date(1582, 10, 10), dt.date(1582, 10, 15), dt.date(1600, 1, 1)]
    instants = [dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC) for d in days]
    lance.write_dataset(
        pa.table({"id": [0, 1, 2, 3], "d": days, "ts": pa.array(instants, pa.timestamp("us", tz="UTC"))}),
        table_uri,
    )
    pushed = spark.read.format("lance").option("filter_pushdown", "true").load(table_uri)
    plain = spark.read.format("lance").load(table_uri)
    answers = [sorted(row.id for row in frame.where(condition).collect()) for frame in (pushed, plain)]
    assert answers == [expected, expected]


def test_dates_and_timestamps_inside_structs_and_lists_read_as_before(spark, table_uri: str) -> None:
    """Casts of types holding a date or timestamp stay unchecked (a nested date64 with a time of
    day, a nanosecond timestamp in a list): making them safe refused tables that read before."""
    day = pa.array([3_600_000], pa.date64())  # 1970-01-01 01:00
    instant = pa.array([[1_500]], pa.list_(pa.timestamp("ns", tz="UTC")))
    table = pa.table({"id": [1], "s": pa.StructArray.from_arrays([day], names=["d"]), "ts": instant})
    lance.write_dataset(table, table_uri)
    (row,) = spark.read.format("lance").load(table_uri).collect()
    assert row.s.d == dt.date(1970, 1, 1)
    assert row.ts == [dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC).astimezone().replace(tzinfo=None)]
