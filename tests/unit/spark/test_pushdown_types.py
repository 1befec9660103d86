"""Filters pushed into Lance give Spark's answer for columns whose Lance type is not the type Spark
reads them as: tables written by other tools (pylance, pandas, LanceDB) hold float16, unsigned
integers, timestamps in other units or zones, date64, and NaNs with the sign bit set (float ranges
are pushed rewritten to order NaN as Spark does). Every query
is answered through the adapter's pushdown and compared with a Parquet copy of the same rows."""

from __future__ import annotations

import datetime as dt
import re
import struct
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThan, Not

from dbt.adapters.lancens.spark.datasource import register_bound_source
from dbt.adapters.lancens.spark.filters import Untranslatable, arrow_column_type, to_lance
from dbt.adapters.lancens.spark.pushdown import sql_with_pushdown

UTC = dt.UTC
NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]  # numpy's inf - inf
T0 = dt.datetime(2020, 1, 1, tzinfo=UTC)


def _instants(*offsets: dt.timedelta) -> list[dt.datetime]:
    return [T0 + offset for offset in offsets]


_BASE = pa.table(
    {
        "id": pa.array([0, 1, 2, 3], pa.int64()),
        "d": pa.array([NEGATIVE_NAN, 1.0, 0.0, -2.0], pa.float64()),
        "f": pa.array([NEGATIVE_NAN, 1.0, 0.0, -2.0], pa.float32()),
        "h": pa.array([0.1, 0.3, 1.0, None], pa.float16()),
        "u8": pa.array([0, 1, 255, None], pa.uint8()),
        "u32": pa.array([0, 1, 2**32 - 1, None], pa.uint32()),
        "i64": pa.array([-(2**63), 0, 2**63 - 1, None], pa.int64()),
        "ts_la": pa.array(
            _instants(dt.timedelta(0), dt.timedelta(hours=8), dt.timedelta(hours=12), dt.timedelta(hours=20)),
            pa.timestamp("us", tz="America/Los_Angeles"),
        ),
        "ts_s": pa.array(
            _instants(*(dt.timedelta(seconds=s) for s in range(4))), pa.timestamp("s", tz="UTC")
        ),
        "ts_ns": pa.array(
            [1577836800_000000500, 1577836801_000000000, None, 1577836800_000000000],
            pa.timestamp("ns", tz="UTC"),
        ),
        "ntz_ms": pa.array([0, 1, 1000, None], pa.timestamp("ms")),
        "d64": pa.array([1577880000000, 1577836800000, None, 1577923200000], pa.date64()),
        "ts_utc": pa.array(
            _instants(*(dt.timedelta(hours=h) for h in range(4))), pa.timestamp("us", tz="UTC")
        ),
    }
)

# Three more rows: a positive NaN, -0.0 and NULL in the float columns, NULL elsewhere.
_FLOATS = {"id": [4, 5, 6], "d": [float("nan"), -0.0, None], "f": [float("nan"), -0.0, None]}
TABLE = pa.concat_tables(
    [
        _BASE,
        pa.table(
            [pa.array(_FLOATS.get(field.name, [None] * 3), field.type) for field in _BASE.schema],
            schema=_BASE.schema,
        ),
    ]
)

QUERIES = [
    "d > 0.5D",
    "d < 0.5D",
    "d >= 0.0D",
    "d <= -0.0D",
    "d > -0.0D",
    "NOT (d >= 0.0D)",
    "NOT (d < 1.0D)",
    "f < 0.5F",
    "f >= -2.0F",
    "d = 0.0D",
    "d > CAST('NaN' AS DOUBLE)",
    "d >= CAST('NaN' AS DOUBLE)",
    "d < CAST('Infinity' AS DOUBLE)",
    "d = CAST('-Infinity' AS DOUBLE) OR id = 3",
    "h = 0.1F",
    "h < 0.1F",
    "h IN (0.1F, 0.3F)",
    "u8 > -1",
    "u8 < 300",
    "u8 IN (0, 255, -1)",
    "u32 < 5000000000",
    "i64 = -9223372036854775808",
    "i64 IN (-9223372036854775808, 0)",
    "ts_la = TIMESTAMP '2020-01-01 00:00:00 UTC'",
    "ts_la > TIMESTAMP '2020-01-01 00:00:00 UTC'",
    "ts_s >= TIMESTAMP '2020-01-01 00:00:00.5 UTC'",
    "ts_s = TIMESTAMP '2020-01-01 00:00:00.5 UTC'",
    "ts_ns = TIMESTAMP '2020-01-01 00:00:00 UTC'",
    "ts_ns <= TIMESTAMP '2020-01-01 00:00:00 UTC'",
    "ntz_ms < TIMESTAMP_NTZ '1970-01-01 00:00:00.0005'",
    "d64 = DATE '2020-01-01'",
    "d64 <= DATE '2020-01-01'",
    "ts_utc >= TIMESTAMP '2020-01-01 01:00:00 UTC'",
]


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """`lance_types.t` over the Lance table (as the adapter registers one), `parquet_types.t` a copy."""
    root = Path(tmp_path_factory.mktemp("pushdown_types"))
    lance.write_dataset(TABLE, str(root / "t.lance"))
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.sql("CREATE DATABASE IF NOT EXISTS lance_types")
    spark.sql("CREATE DATABASE IF NOT EXISTS parquet_types")
    spark.sql(
        f"CREATE TABLE lance_types.t USING {register_bound_source(spark, {'path': str(root / 't.lance')})}"
    )
    parquet = root / "parquet"
    spark.sql(
        f"CREATE TABLE parquet_types.t USING parquet LOCATION '{parquet}' AS SELECT * FROM lance_types.t"
    )
    return str(root)


@pytest.mark.parametrize("condition", QUERIES)
@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_pushed_filters_answer_as_parquet_does(
    spark: SparkSession, tables: str, condition: str, zone: str
) -> None:
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        expected = sorted(
            r.id for r in spark.sql(f"SELECT id FROM parquet_types.t WHERE {condition}").collect()
        )
        pushed = sorted(
            r.id
            for r in sql_with_pushdown(spark, f"SELECT id FROM lance_types.t WHERE {condition}").collect()
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert pushed == expected


@pytest.mark.parametrize("condition", ["d > 0.5D", "f <= -2.0F", "NOT (d < 1.0D)"])
def test_float_ranges_are_pushed_whole(spark: SparkSession, tables: str, condition: str) -> None:
    """Lance answers them alone: Spark keeps no Filter node over the scan."""
    frame = sql_with_pushdown(spark, f"SELECT id FROM lance_types.t WHERE {condition}")
    assert re.search(r"\bFilter\b", frame._jdf.queryExecution().executedPlan().toString()) is None


def test_what_still_pushes_and_what_stays_with_spark() -> None:
    """The guard is per type and value: the common cases keep their pushdown."""
    column_type = arrow_column_type(TABLE.schema)
    utc_instant = dt.datetime(2020, 1, 1, 1, tzinfo=UTC)
    assert (
        to_lance(GreaterThan(("ts_utc",), utc_instant), column_type)
        == "`ts_utc` > TIMESTAMP '2020-01-01 01:00:00'"
    )
    assert to_lance(EqualTo(("D",), 1.0), column_type) == "`D` = 1.0"  # equality on floats, any case
    assert to_lance(GreaterThan(("d",), 0.5), column_type) == "(`d` > 0.5 OR isnan(`d`))"
    assert to_lance(Not(LessThan(("f",), 0.5)), column_type) == "NOT ((`f` < 0.5 AND NOT isnan(`f`)))"
    assert to_lance(In(("u8",), (0, 255)), column_type) == "`u8` IN (0, 255)"
    assert to_lance(Not(LessThan(("i64",), -5)), column_type) == "NOT (`i64` < -5)"
    for kept in (
        EqualTo(("h",), 0.1),
        In(("u8",), (0, 256)),
        EqualTo(("i64",), -(2**63)),
        EqualTo(("ts_la",), utc_instant),
        EqualTo(("ts_s",), utc_instant),
        EqualTo(("d64",), dt.date(2020, 1, 1)),
        LessThan(("d",), float("inf")),
        EqualTo(("missing",), 1),
    ):
        with pytest.raises(Untranslatable):
            to_lance(kept, column_type)
