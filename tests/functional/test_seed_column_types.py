"""Seed `column_types` with every Spark SQL type name a dbt-spark project writes.

The seed is loaded by `dbt seed`; the Lance table is then read with pylance (the Arrow types any
Lance tool sees), through the adapter (the Spark types dbt sees) and with Spark SQL (the values).
An `array<...>` cell is written in the CSV as a JSON array; an empty cell is NULL for every type.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

COLUMN_TYPES = {
    "c_timestamp": "timestamp",
    "c_timestamp_ntz": "timestamp_ntz",
    "c_date": "date",
    "c_decimal": "decimal(10,2)",
    "c_bigint": "bigint",
    "c_int": "int",
    "c_smallint": "smallint",
    "c_boolean": "boolean",
    "c_double": "double",
    "c_float": "float",
    "c_string": "string",
    "c_binary": "binary",
    "c_array": "array<float>",
}
ARROW_TYPES = {
    "c_timestamp": pa.timestamp("us", tz="UTC"),
    "c_timestamp_ntz": pa.timestamp("us"),
    "c_date": pa.date32(),
    "c_decimal": pa.decimal128(10, 2),
    "c_bigint": pa.int64(),
    "c_int": pa.int32(),
    "c_smallint": pa.int16(),
    "c_boolean": pa.bool_(),
    "c_double": pa.float64(),
    "c_float": pa.float32(),
    "c_string": pa.string(),
    "c_binary": pa.binary(),
    "c_array": pa.list_(pa.float32()),
}
SEED = (
    ",".join(COLUMN_TYPES)
    + "\n"
    + "2024-01-02 03:04:05,2024-01-02 03:04:05,2024-01-02,12.34,9000000000,7,3,true,1.5,2.5,hello,abc,"
    + '"[1.0, 2.5]"\n'
    + ",,,,,,,,,,,,\n"
)
FIRST_ROW = {
    "c_timestamp": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
    "c_timestamp_ntz": datetime.datetime(2024, 1, 2, 3, 4, 5),
    "c_date": datetime.date(2024, 1, 2),
    "c_decimal": Decimal("12.34"),
    "c_bigint": 9_000_000_000,
    "c_int": 7,
    "c_smallint": 3,
    "c_boolean": True,
    "c_double": 1.5,
    "c_float": 2.5,
    "c_string": "hello",
    "c_binary": b"abc",
    "c_array": [1.0, 2.5],
}


class TestSeedColumnTypes:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"all_types.csv": SEED}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"seeds": {"+column_types": COLUMN_TYPES}}

    def test_every_type_name(self, project, lancens_root: str) -> None:
        results = run_dbt(["seed"])
        assert [r.status for r in results] == ["success"]

        namespace = DirectoryNamespace(lancens_root)
        table = lance.dataset(
            namespace.describe_table([project.test_schema, "all_types"]).location
        ).to_table()
        assert {field.name: field.type for field in table.schema} == ARROW_TYPES
        rows = table.to_pylist()
        assert rows[0] == FIRST_ROW
        assert rows[1] == dict.fromkeys(COLUMN_TYPES)

        with project.adapter.connection_named("__test"):
            relation = project.adapter.get_relation(project.database, project.test_schema, "all_types")
            columns = project.adapter.get_columns_in_relation(relation)
        assert {column.name: column.dtype for column in columns} == {
            name: kind.replace(" ", "") for name, kind in COLUMN_TYPES.items()
        }

        spark_row = project.run_sql(
            "select cast(c_timestamp as string), c_decimal, c_array[1], cast(c_binary as string) "
            f"from {relation} where c_int = 7",
            fetch="one",
        )
        assert tuple(spark_row) == (
            "2024-01-02 03:04:05",  # in the session time zone, UTC, as the CSV's naive text was read
            Decimal("12.34"),
            2.5,
            "abc",
        )
