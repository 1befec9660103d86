"""Writing Lance tables: one transaction per write, clean failures, empty frames, commit hooks."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql.functions import udf

from tests.unit.spark.conftest import data_files, referenced_files


@pytest.fixture
def small_batches(spark):
    """Arrow batches of 100 rows, so a task writes several files before a late failure."""
    previous = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    yield
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", previous)


def test_append_and_overwrite_commit_one_version_each(spark, table_uri: str) -> None:
    frame = spark.range(0, 1000, 1, 4).selectExpr("id", "id * 2 AS twice")
    frame.write.format("lance").mode("overwrite").save(table_uri)
    assert lance.dataset(table_uri).version == 1
    frame.write.format("lance").mode("append").option("max_rows_per_file", "100").save(table_uri)
    dataset = lance.dataset(table_uri)
    assert dataset.version == 2 and dataset.count_rows() == 2000
    assert len(dataset.get_fragments()) >= 4 + 10
    spark.range(3).selectExpr("CAST(id AS STRING) AS other").write.format("lance").mode("overwrite").save(
        table_uri
    )
    dataset = lance.dataset(table_uri)
    assert dataset.version == 3 and dataset.schema.names == ["other"] and dataset.count_rows() == 3


def test_empty_frame_writes_an_empty_table_with_its_schema(spark, table_uri: str) -> None:
    spark.sql("SELECT 1L AS id, 'x' AS name WHERE false").write.format("lance").mode("append").save(table_uri)
    dataset = lance.dataset(table_uri)
    assert dataset.count_rows() == 0
    # Spark says both columns are NOT NULL (literals); Lance columns are written nullable.
    assert dataset.schema == pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    assert spark.read.format("lance").load(table_uri).count() == 0


def test_overwrite_of_a_new_path_creates_it(spark, tmp_path: Path) -> None:
    uri = str(tmp_path / "deep" / "new.lance")
    spark.range(5).write.format("lance").mode("overwrite").save(uri)
    assert lance.dataset(uri).count_rows() == 5


def test_task_failing_mid_write_leaves_previous_version_and_no_files(
    spark, table_uri: str, small_batches
) -> None:
    spark.range(10).write.format("lance").mode("overwrite").save(table_uri)

    @udf("long")
    def fail_late(value: int) -> int:
        if value == 1900:
            raise RuntimeError("task fails after writing files")
        return value

    frame = spark.range(0, 2000, 1, 2).select(fail_late("id").alias("id"))
    with pytest.raises(Exception, match="task fails after writing files"):
        frame.write.format("lance").mode("append").option("max_rows_per_file", "100").save(table_uri)
    assert lance.dataset(table_uri).version == 1
    assert data_files(table_uri) == referenced_files(table_uri)


def test_bad_row_in_the_writer_cleans_its_own_files(spark, table_uri: str, small_batches) -> None:
    """The failure happens inside the Lance writer's task (a vector of the wrong length)."""
    spark.sql("SELECT array(1.0F, 2.0F) AS v").write.format("lance").mode("overwrite").option(
        "fixed_size_list.v", "2"
    ).save(table_uri)
    frame = spark.range(0, 1000, 1, 1).selectExpr("IF(id = 950, array(1.0F), array(1.0F, 2.0F)) AS v")
    with pytest.raises(Exception):  # noqa: B017 - Arrow's cast error, wrapped by Spark
        frame.write.format("lance").mode("append").option("max_rows_per_file", "100").save(table_uri)
    assert lance.dataset(table_uri).version == 1
    assert data_files(table_uri) == referenced_files(table_uri)


def test_failing_commit_hook_aborts_and_removes_every_file(spark, table_uri: str) -> None:
    spark.range(10).write.format("lance").mode("overwrite").save(table_uri)
    with pytest.raises(Exception, match="refused by the hook"):
        spark.range(0, 500, 1, 3).write.format("lance").mode("append").option(
            "commit_hook", "tests.unit.spark.hooks:refuse"
        ).save(table_uri)
    assert lance.dataset(table_uri).version == 1
    assert data_files(table_uri) == referenced_files(table_uri)


@pytest.mark.parametrize(("mode", "operation"), [("append", "Append"), ("overwrite", "Overwrite")])
def test_commit_hook_receives_the_operation(spark, tmp_path: Path, mode: str, operation: str) -> None:
    uri = str(tmp_path / "hooked.lance")
    spark.range(3).write.format("lance").mode("overwrite").save(uri)
    record = tmp_path / "hook.json"
    spark.range(4).write.format("lance").mode(mode).option(
        "commit_hook", "tests.unit.spark.hooks:record"
    ).option("commit_hook_args", json.dumps({"record": str(record)})).save(uri)
    seen = json.loads(record.read_text())
    assert seen["operation"] == operation and seen["read_version"] == 1 and seen["uri"] == uri
    assert seen["fragments"] >= 1
    assert seen["pid"] != os.getpid()  # the commit runs in a Python worker of the driver JVM
    assert lance.dataset(uri).version == 2
    assert lance.dataset(uri).count_rows() == (7 if mode == "append" else 4)


def test_first_write_through_a_hook_is_an_overwrite_without_read_version(spark, tmp_path: Path) -> None:
    uri = str(tmp_path / "fresh.lance")
    record = tmp_path / "hook.json"
    spark.range(2).write.format("lance").mode("append").option(
        "commit_hook", "tests.unit.spark.hooks:record"
    ).option("commit_hook_args", json.dumps({"record": str(record)})).save(uri)
    seen = json.loads(record.read_text())
    assert seen["operation"] == "Overwrite" and seen["read_version"] is None
    assert lance.dataset(uri).count_rows() == 2


def test_computed_decimals_write_and_filter(spark, table_uri: str) -> None:
    """Decimals Spark computes (sums, casts, inside structs) reach Lance intact and filter correctly.

    Spark's Arrow batches may hold 16-byte decimals at unaligned offsets, which Lance rejects; and a
    decimal comparison must not be pushed to Lance as a float literal.
    """
    frame = spark.sql(
        "SELECT id, CAST(id / 100.0 AS DECIMAL(20, 6)) AS amount, "
        "named_struct('x', CAST(id AS DECIMAL(10, 2))) AS nested FROM range(1000)"
    )
    frame.write.format("lance").mode("overwrite").save(table_uri)
    written = lance.dataset(table_uri).to_table()
    assert written.num_rows == 1000
    assert written.column("amount").to_pylist()[250] == Decimal("2.500000")
    assert written.column("nested").to_pylist()[7] == {"x": Decimal("7.00")}
    read = spark.read.format("lance").load(table_uri)
    assert read.where("amount < 0.05").count() == 5


def test_overwrite_keeps_column_comments(spark, table_uri: str) -> None:
    """Field metadata (dbt's persisted column docs) survives a rebuild of the same columns."""
    spark.range(3).selectExpr("id", "'x' AS name").write.format("lance").mode("overwrite").save(table_uri)
    lance.dataset(table_uri).replace_field_metadata("name", {"comment": "the name"})
    spark.range(5).selectExpr("id", "'y' AS name").write.format("lance").mode("overwrite").save(table_uri)
    schema = lance.dataset(table_uri).schema
    assert schema.field("name").metadata == {b"comment": b"the name"}
    assert lance.dataset(table_uri).count_rows() == 5


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("select 1 as id, 2 as `a``b`", "a`b"),  # pylance writes it, then reads no column
        ("select 1 as id, named_struct('in`ner', 2) as s", "in`ner"),
        ("select 1 as id, 2 as `a.b`", "a.b"),  # Lance refuses a top-level dot itself
    ],
)
def test_unreadable_column_names_are_refused_before_writing(
    spark, tmp_path: Path, query: str, named: str
) -> None:
    uri = str(tmp_path / "names.lance")
    with pytest.raises(Exception, match="a Lance table cannot hold a column whose name contains") as info:
        spark.sql(query).write.format("lance").mode("overwrite").save(uri)
    assert named in str(info.value)
    assert not os.path.exists(uri) or not os.listdir(uri)


def test_a_dot_inside_a_struct_is_stored(spark, tmp_path: Path) -> None:
    uri = str(tmp_path / "nested.lance")
    spark.sql("select 1 as id, named_struct('x.y', 2) as s").write.format("lance").mode("overwrite").save(uri)
    assert lance.dataset(uri).to_table().to_pylist() == [{"id": 1, "s": {"x.y": 2}}]
