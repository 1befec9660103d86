"""A model column whose type differs from the table column it lands in is stored as Spark's INSERT
would store it (dbt-spark's behaviour), compared with the same INSERT into a Parquet table."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations import incremental
from dbt.adapters.lancens.runtime.process import LancensRuntime

TABLE = ["shop", "typed"]
STORED = pa.schema(
    [
        ("id", pa.int64()),
        ("label", pa.string()),
        ("amount", pa.int64()),
        ("moment", pa.string()),
        ("small", pa.uint32()),
        ("ratio", pa.float32()),
    ]
)
MODEL = (
    "SELECT 2L AS id, 1.0D AS label, 2.7D AS amount, TIMESTAMP'2024-01-02 03:04:05' AS moment, "
    "7 AS small, 0.25D AS ratio "
    "UNION ALL SELECT 3L, 1.0E20D, -2.7D, TIMESTAMP'2024-01-02 00:00:00.5', 8, 1.5D"
)


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    runtime.namespace.create_table(TABLE, STORED.empty_table())
    return runtime


def test_values_are_cast_as_spark_inserts_them(runtime: LancensRuntime, tmp_path: Path) -> None:
    runtime.activate()
    spark = runtime.spark
    incremental.apply(runtime, TABLE, spark.sql(MODEL), incremental.Spec(strategy="append"), {})
    stored = lance.dataset(runtime.namespace.describe_table(TABLE).location).to_table().sort_by("id")

    spark.sql(
        f"CREATE TABLE store_assignment_copy (id BIGINT, label STRING, amount BIGINT, moment STRING, "
        f"small BIGINT, ratio FLOAT) USING parquet LOCATION '{tmp_path / 'parquet'}'"
    )
    try:
        spark.sql(f"INSERT INTO store_assignment_copy {MODEL}")
        expected = [
            row.asDict() for row in spark.sql("SELECT * FROM store_assignment_copy ORDER BY id").collect()
        ]
    finally:
        spark.sql("DROP TABLE store_assignment_copy")
    assert stored.schema == STORED  # the table keeps its types
    assert stored.to_pylist() == expected
    assert [row["label"] for row in expected] == ["1.0", "1.0E20"]  # what Arrow's cast would not give
