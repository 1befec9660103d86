"""Time travel through the JVM connector (docs/jvm-connector.md): by version and by time, as options
of `format(...)` and as a catalog table's `WITH (...)` options, reading the same version the Python
data source reads. Without these, a JVM-registered table ignored `WITH ('version' = '1')` and read
its latest rows, and option `timestamp` was refused."""

from __future__ import annotations

import datetime as dt
import time

import lance
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from dbt.adapters.lancens.runtime.session_catalog import SessionCatalog
from dbt.adapters.lancens.spark import jvm_connector

JVM = jvm_connector.SOURCE_CLASS


@pytest.fixture(scope="module")
def three_versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dt.datetime]]:
    """A table of 2, then 5, then 9 rows (versions 1-3), committed over a second apart, and the
    moments halfway between versions (UTC): the moment of version 1 + 0.5 s, of version 2 + 0.5 s."""
    uri = str(tmp_path_factory.mktemp("jvm_travel") / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(2), pa.int64())}), uri)
    for rows in (range(2, 5), range(5, 9)):
        time.sleep(1.1)  # distinct commit times, so a moment between two versions exists
        lance.write_dataset(pa.table({"id": pa.array(rows, pa.int64())}), uri, mode="append")
    stamps = {int(v["version"]): v["timestamp"] for v in lance.dataset(uri).versions()}
    moments = [
        (stamps[v].astimezone() if stamps[v].tzinfo is None else stamps[v]).astimezone(dt.UTC)
        + dt.timedelta(milliseconds=500)
        for v in (1, 2)
    ]
    return uri, moments


def _plan(frame: object) -> str:
    return str(frame._jdf.queryExecution().executedPlan().toString())  # type: ignore[attr-defined]


def test_option_timestamp_reads_the_version_the_python_source_reads(
    spark: SparkSession, three_versions: tuple[str, list[dt.datetime]]
) -> None:
    uri, moments = three_versions
    for moment, rows, version in ((moments[0], 2, 1), (moments[1], 5, 2)):
        jvm = spark.read.format(JVM).option("timestamp", moment.isoformat()).load(uri)
        python = spark.read.format("lance").option("timestamp", moment.isoformat()).load(uri)
        assert f"LanceScan[version={version}," in _plan(jvm)
        got = sorted(r.id for r in jvm.collect())
        assert got == sorted(r.id for r in python.collect()) == list(range(rows))
    # without a zone: UTC, as the Python source takes it
    naive = moments[1].replace(tzinfo=None).isoformat(sep=" ")
    assert spark.read.format(JVM).option("timestamp", naive).load(uri).count() == 5


def test_a_catalog_tables_with_options_pin_the_scan(
    spark: SparkSession, three_versions: tuple[str, list[dt.datetime]]
) -> None:
    uri, moments = three_versions
    catalog = SessionCatalog(spark, spark.sql, {}, "unused:hook", lambda _: {}, jvm_reads=True)
    assert catalog.register_table(["jvm_travel", "t"], uri, schema=lance.dataset(uri).schema)
    latest = spark.sql("SELECT id FROM jvm_travel.t")
    assert "LanceScan[version=3," in _plan(latest) and latest.count() == 9
    pinned = spark.sql("SELECT id FROM jvm_travel.t WITH ('version' = '1')")
    assert "LanceScan[version=1," in _plan(pinned)
    assert sorted(r.id for r in pinned.collect()) == [0, 1]
    by_time = spark.sql(f"SELECT id FROM jvm_travel.t WITH ('timestamp' = '{moments[1].isoformat()}')")
    assert "LanceScan[version=2," in _plan(by_time)
    assert sorted(r.id for r in by_time.collect()) == list(range(5))


def test_bad_time_travel_options_name_what_was_wrong(
    spark: SparkSession, three_versions: tuple[str, list[dt.datetime]]
) -> None:
    uri, moments = three_versions
    with pytest.raises(Exception, match="option timestamp is not an ISO-8601 date or time"):
        spark.read.format(JVM).option("timestamp", "yesterday").load(uri).count()
    with pytest.raises(Exception, match="is before the first version of"):
        spark.read.format(JVM).option("timestamp", "2001-01-01T00:00:00Z").load(uri).count()
    with pytest.raises(Exception, match="options version and timestamp are exclusive"):
        both = spark.read.format(JVM).option("version", 1).option("timestamp", moments[0].isoformat())
        both.load(uri).count()
