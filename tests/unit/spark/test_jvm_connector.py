"""The JVM connector (`connector/`, docs/jvm-connector.md) reading real Lance tables in the test
process's Spark: the same rows as the Python data source and pylance for every column type, pinned
versions, deletions, pushdown seen in EXPLAIN, the row address, and the fallback for a table its
lance-core cannot read."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.runtime import connector_choice
from dbt.adapters.lancens.runtime.session_catalog import SessionCatalog
from dbt.adapters.lancens.spark import jvm_connector

JVM = jvm_connector.SOURCE_CLASS


def _every_type(rows: int) -> pa.Table:
    ids = np.arange(rows)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "i8": pa.array(ids % 100, pa.int8()),
            "i16": pa.array(ids, pa.int16()),
            "i32": pa.array(ids, pa.int32()),
            "u8": pa.array(ids % 256, pa.uint8()),
            "u16": pa.array(ids + 60000, pa.uint16()),
            "u32": pa.array(ids + 4_000_000_000, pa.uint32()),
            "u64": pa.array(ids.astype(np.uint64) + np.uint64(2**63 + 5), pa.uint64()),
            "f16": pa.array(ids.astype(np.float16) / 4, pa.float16()),
            "f32": pa.array(ids / 3, pa.float32()),
            "f64": pa.array([None if i % 7 == 0 else i / 3 for i in ids], pa.float64()),
            "flag": pa.array([i % 2 == 0 for i in ids]),
            "dec": pa.array([decimal.Decimal(int(i)) / 100 for i in ids], pa.decimal128(12, 2)),
            "s": pa.array([None if i % 5 == 0 else f"é{i}'" for i in ids]),
            "ls": pa.array([f"large{i}" for i in ids], pa.large_string()),
            "bin": pa.array([bytes([int(i) % 256]) * 3 for i in ids], pa.binary()),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(i)) for i in ids], pa.date32()),
            "ts": pa.array(ids * 1_000_123, pa.timestamp("us", tz="UTC")),
            "ts_ns": pa.array(ids * 1_000_000_789, pa.timestamp("ns")),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(np.arange(rows * 3, dtype=np.float32)), 3),
            "vec16": pa.FixedSizeListArray.from_arrays(
                pa.array(np.arange(rows * 2, dtype=np.float16), pa.float16()), 2
            ),
            "tags": pa.array([[f"t{i}", None] if i % 3 else None for i in ids], pa.list_(pa.string())),
            "nested": pa.array(
                [{"a": int(i), "b": [{"c": float(i)}]} for i in ids],
                pa.struct([("a", pa.int64()), ("b", pa.list_(pa.struct([("c", pa.float64())])))]),
            ),
            "attrs": pa.array([[("k", int(i)), ("j", None)] for i in ids], pa.map_(pa.string(), pa.int32())),
        }
    )


@pytest.fixture(scope="module")
def every_type(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A table of every column type over four fragments, with rows deleted in version 2."""
    uri = str(tmp_path_factory.mktemp("jvm") / "every_type.lance")
    lance.write_dataset(_every_type(4000), uri, max_rows_per_file=1000)
    lance.dataset(uri).delete("id % 10 = 3 OR id < 5")
    return uri


def _rows(frame: DataFrame) -> list[dict[str, object]]:
    return sorted((row.asDict(recursive=True) for row in frame.collect()), key=lambda row: row["id"])


def test_the_connector_is_built_and_loaded(spark: SparkSession) -> None:
    assert jvm_connector.class_path()  # raises, naming what is missing, when the install did not build it
    assert jvm_connector.loaded(spark) is None


def test_every_type_reads_as_through_the_python_source(spark: SparkSession, every_type: str) -> None:
    jvm = spark.read.format(JVM).load(every_type)
    python = spark.read.format("lance").load(every_type)
    assert jvm.schema == python.schema
    assert _rows(jvm) == _rows(python)
    expected = lance.dataset(every_type).to_table().sort_by("id")
    got = _rows(jvm)
    assert [row["id"] for row in got] == expected.column("id").to_pylist()
    assert [row["u64"] for row in got] == [decimal.Decimal(v) for v in expected.column("u64").to_pylist()]
    assert [row["vec"] for row in got] == expected.column("vec").to_pylist()
    assert [row["f16"] for row in got] == [float(v) for v in expected.column("f16").to_numpy()]
    assert [row["attrs"] for row in got] == [dict(v) for v in expected.column("attrs").to_pylist()]


def test_a_pinned_version_reads_the_rows_deleted_since(spark: SparkSession, every_type: str) -> None:
    assert spark.read.format(JVM).option("version", 1).load(every_type).count() == 4000
    assert spark.read.format(JVM).load(every_type).count() == lance.dataset(every_type).count_rows()


def test_exact_filters_and_the_limit_are_pushed_into_lance(spark: SparkSession, every_type: str) -> None:
    frame = spark.read.format(JVM).load(every_type)
    filtered = frame.where("i32 >= 3990 AND s <> 'x' AND f32 > 1.5").select("id", "f32")
    plan = filtered._jdf.queryExecution().executedPlan().toString()
    assert "(`i32` >= 3990) AND (NOT (`s` = 'x'))" in plan
    assert "columns=id,f32," in plan  # pruned: Lance reads the filtered columns itself
    assert "Filter (f32" in plan  # a float comparison stays with Spark
    expected = lance.dataset(every_type).to_table(filter="i32 >= 3990 AND s IS NOT NULL AND f32 > 1.5")
    assert sorted(row.id for row in filtered.collect()) == sorted(expected.column("id").to_pylist())
    limited = frame.limit(7)
    assert "limit=7" in limited._jdf.queryExecution().executedPlan().toString()
    assert limited.count() == 7


def test_a_string_beyond_the_basic_plane_is_compared_by_spark(spark: SparkSession, tmp_path: Path) -> None:
    """lance-core takes a pushed filter through JNI as modified UTF-8, which Rust refuses for a
    character beyond U+FFFF and for U+0000: such a literal stays with Spark (the query failed)."""
    uri = str(tmp_path / "strings.lance")
    words = ["\U0001d11e", "\uffff", "a\x00b", "plain"]
    lance.write_dataset(pa.table({"w": words}), uri)
    frame = spark.read.format(JVM).load(uri)
    for word in words:
        kept = frame.where(frame.w == word)
        assert [row.w for row in kept.collect()] == [word]
    assert "`w` = 'plain'" in frame.where(frame.w == "plain")._jdf.queryExecution().executedPlan().toString()


def test_a_null_comparison_inside_or_is_never_true(spark: SparkSession, every_type: str) -> None:
    """`s = NULL` folds to a NULL boolean inside OR and NOT: Spark 4.0's V2 predicate builder asserts
    on it and failed the query; the V1 filters the connector takes leave it to Spark instead."""
    frame = spark.read.format(JVM).load(every_type)
    kept = frame.where("NOT coalesce(i32 < 3990 OR s = NULL, false)")
    expected = lance.dataset(every_type).to_table(filter="i32 >= 3990")
    assert sorted(row.id for row in kept.collect()) == sorted(expected.column("id").to_pylist())
    assert frame.where("i32 >= 3990 OR s = NULL").count() == expected.num_rows


def test_one_table_read_twice_with_a_filter_on_one_read(spark: SparkSession, every_type: str) -> None:
    spark.read.format(JVM).load(every_type).createOrReplaceTempView("jvm_twice")
    both = spark.sql("SELECT id FROM jvm_twice WHERE id > 3990 UNION ALL SELECT id FROM jvm_twice")
    dataset = lance.dataset(every_type)
    assert both.count() == dataset.count_rows("id > 3990") + dataset.count_rows()


def test_the_row_address_is_lances(spark: SparkSession, every_type: str) -> None:
    got = {
        row.id: row._rowaddr
        for row in spark.read.format(JVM).load(every_type).select("id", "_rowaddr").collect()
    }
    expected = lance.dataset(every_type).to_table(columns=["id"], with_row_address=True)
    assert got == dict(
        zip(expected.column("id").to_pylist(), expected.column("_rowaddr").to_pylist(), strict=True)
    )


def test_bad_options_name_what_was_wrong(spark: SparkSession, every_type: str) -> None:
    with pytest.raises(Exception, match="option version is not a whole number: one"):
        spark.read.format(JVM).option("version", "one").load(every_type).count()
    with pytest.raises(Exception, match="needs a path"):
        spark.read.format(JVM).load().count()


def _mixed_file_versions(uri: str) -> None:
    """A table lance-core 7 refuses: data files of format 2.1 appended to a 2.2 table, which sets
    reader flag 256 (mixed data-file versions)."""
    table = pa.table({"id": pa.array(range(10), pa.int64())})
    dataset = lance.write_dataset(table, uri)
    fragments = lance.fragment.write_fragments(table, uri, data_storage_version="2.1")
    lance.LanceDataset.commit(uri, lance.LanceOperation.Append(fragments), read_version=dataset.version)


def test_a_table_lance_core_cannot_read_takes_the_python_source(spark: SparkSession, tmp_path: Path) -> None:
    readable, mixed = str(tmp_path / "readable.lance"), str(tmp_path / "mixed.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), readable)
    _mixed_file_versions(mixed)
    assert jvm_connector.unreadable(spark, readable, None, {}) is None
    assert "256" in (jvm_connector.unreadable(spark, mixed, None, {}) or "")
    # an atomic publish's staged version numbers past a Java long: the Python source reads it
    assert "past the signed 64-bit range" in (jvm_connector.unreadable(spark, readable, 1 << 63, {}) or "")
    unstable = str(tmp_path / "format_2_3.lance")  # lance-core 7 opens it, then aborts the JVM reading it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lance.write_dataset(pa.table({"id": [1, 2]}), unstable, data_storage_version="2.3")
    reason = jvm_connector.unreadable(spark, unstable, None, {}) or ""
    assert "data-file version 2.3 is newer than 2.2" in reason
    catalog = SessionCatalog(spark, spark.sql, {}, "unused:hook", lambda _: {}, jvm_reads=True)
    for name, uri in (("readable", readable), ("mixed", mixed)):
        assert catalog.register_table(["jvm_skew", name], uri, schema=lance.dataset(uri).schema)
    plans = {
        name: spark.sql(f"SELECT id FROM jvm_skew.{name}")._jdf.queryExecution().executedPlan().toString()
        for name in ("readable", "mixed")
    }
    assert "LanceScan[" in plans["readable"] and "LanceScan[" not in plans["mixed"]
    assert spark.sql("SELECT count(*) AS n FROM jvm_skew.mixed").first().n == 20
    assert spark.sql("SELECT count(*) AS n FROM jvm_skew.readable WHERE id < 4").first().n == 4


def test_a_dictionary_column_reads_as_its_values_through_the_python_source(
    spark: SparkSession, tmp_path: Path
) -> None:
    """lance-core's Java schema drops a column's dictionary encoding, so the connector read
    `dictionary<int32, string>` as int32 indices (an insert_overwrite's `part <=> 'a'` then failed
    casting 'a' to BIGINT). The connector has no dictionary decoder: ReadCheck names the column and
    the catalog's table takes the Python source, which reads the values (spark/types.py)."""
    uri = str(tmp_path / "dictionary.lance")
    part = pa.array(["a", None, "b"]).dictionary_encode()
    lance.write_dataset(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "part": part}), uri)
    reason = jvm_connector.unreadable(spark, uri, None, {}) or ""
    assert "column part is dictionary-encoded" in reason
    with pytest.raises(Exception, match="column part is dictionary-encoded"):
        _ = spark.read.format(JVM).load(uri).schema
    catalog = SessionCatalog(spark, spark.sql, {}, "unused:hook", lambda _: {}, jvm_reads=True)
    assert catalog.register_table(["jvm_dictionary", "t"], uri, schema=lance.dataset(uri).schema)
    frame = spark.sql("SELECT id, part FROM jvm_dictionary.t WHERE part <=> 'a' OR part IS NULL")
    assert frame.schema == spark.read.format("lance").load(uri).select("id", "part").schema
    assert dict(frame.schema.fields[1].jsonValue(), metadata={})["type"] == "string"
    assert sorted((row.id, row.part) for row in frame.collect()) == [(1, "a"), (2, None)]


def test_the_profile_choice(spark: SparkSession) -> None:
    default = connector_choice.plan(None, None)  # auto: the JVM path where the jars are built
    assert (default.requested, default.path) == ("auto", "jvm")
    chosen = connector_choice.plan("auto", None)
    assert chosen.path == "jvm" and chosen.class_path
    assert connector_choice.confirm(chosen, spark).path == "jvm"
    assert connector_choice.plan("auto", "sc://127.0.0.1:1").path == "python"
    with pytest.raises(jvm_connector.ConnectorUnavailable, match="spark_connector: jvm"):
        connector_choice.plan("jvm", "sc://127.0.0.1:1")
    with pytest.raises(ValueError, match="spark_connector must be one of auto, jvm, python, got 'java'"):
        connector_choice.plan("java", None)


def test_a_missing_build_is_named(tmp_path: Path) -> None:
    with pytest.raises(jvm_connector.ConnectorUnavailable, match="not built"):
        jvm_connector.class_path(tmp_path)


def _read_in_own_process(script: str) -> str:
    # Without the class path tests/conftest.py gives every JVM: the one-liner must bring its own.
    env = {key: value for key, value in os.environ.items() if key != "SPARK_DIST_CLASSPATH"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _table_of_25(tmp_path: Path) -> str:
    uri = str(tmp_path / "plain.lance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lance.write_dataset(pa.table({"id": pa.array(range(25), pa.int64())}), uri, max_rows_per_file=10)
    return uri


def test_a_plain_pyspark_job_reads_a_table_by_location(tmp_path: Path) -> None:
    """The documented one-liner, in a process of its own with no dbt in it."""
    uri = _table_of_25(tmp_path)
    out = _read_in_own_process(
        f"""
        from pyspark.sql import SparkSession
        from dbt.adapters.lancens.spark.jvm_connector import spark_settings
        spark = SparkSession.builder.master("local[1]").config(map=spark_settings()).getOrCreate()
        print("ROWS", spark.read.format("lance_jvm").load({uri!r}).where("id >= 20").count())
        """
    )
    assert "ROWS 5" in out


@pytest.mark.cluster
def test_executors_in_their_own_jvms_read_with_the_connector(tmp_path: Path) -> None:
    """`local-cluster`: the executor is a JVM of its own and gets the jars through
    spark.executor.extraClassPath (the session of spark/session.py keeps its work dir out of pyspark)."""
    uri = _table_of_25(tmp_path)
    out = _read_in_own_process(
        f"""
        from dbt.adapters.lancens.spark import get_or_create_session, jvm_connector
        settings = jvm_connector.spark_settings()
        spark = get_or_create_session("local-cluster[1,1,1024]", settings, files_dir={str(tmp_path)!r})
        print("ROWS", spark.read.format("lance_jvm").load({uri!r}).where("id >= 20").count())
        """
    )
    assert "ROWS 5" in out


def test_an_insert_into_a_connector_table_lands_through_the_hook(spark: SparkSession, tmp_path: Path) -> None:
    """A Spark INSERT INTO a table the connector reads goes to the Python source and its commit hook;
    a pinned version refuses it."""
    uri, note = str(tmp_path / "insert.lance"), tmp_path / "hook.json"
    lance.write_dataset(pa.table({"id": pa.array(range(3), pa.int64())}), uri)
    catalog = SessionCatalog(
        spark, spark.sql, {}, "tests.unit.spark.hooks:record", lambda _: {"record": str(note)}, jvm_reads=True
    )
    assert catalog.register_table(["jvm_insert", "latest"], uri, schema=lance.dataset(uri).schema)
    assert catalog.register_table(["jvm_insert", "pinned"], uri, version=1, schema=lance.dataset(uri).schema)
    spark.sql("INSERT INTO jvm_insert.latest SELECT id + 10 AS id FROM jvm_insert.pinned")
    assert json.loads(note.read_text())["operation"] == "Append"  # committed by the hook
    assert sorted(lance.dataset(uri).to_table().column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]
    assert spark.sql("SELECT count(*) AS n FROM jvm_insert.latest").first().n == 6
    assert spark.sql("SELECT count(*) AS n FROM jvm_insert.pinned").first().n == 3
    with pytest.raises(Exception, match="(?i)pinned version|does not support|append"):
        spark.sql("INSERT INTO jvm_insert.pinned SELECT 99 AS id")
    assert lance.dataset(uri).count_rows() == 6
