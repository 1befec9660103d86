"""dbt-tests-adapter's data type macros (`type_int()`, `type_string()`, ...) on Spark, stored in Lance.

Seeds are typed the way dbt-spark types them: `float` and `int` columns say so in `column_types`,
because Spark infers `double` and `bigint` from CSV numbers and EXCEPT compares types exactly.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.data_types import test_type_float, test_type_int
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp


def typed_expected_seed(column: str, spark_type: str) -> str:
    return f"""
version: 2
seeds:
  - name: expected
    config:
      column_types:
        {column}: {spark_type}
"""


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeFloat(test_type_float.BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {
            "expected.csv": test_type_float.seeds__expected_csv,
            "expected.yml": typed_expected_seed("float_col", "float"),
        }


class TestTypeInt(test_type_int.BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {
            "expected.csv": test_type_int.seeds__expected_csv,
            "expected.yml": typed_expected_seed("int_col", "int"),
        }


class TestTypeNumeric(BaseTypeNumeric):
    def numeric_fixture_type(self) -> str:
        return "decimal(28,6)"


class TestTypeString(BaseTypeString):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    """Its expected seed types `timestamp_col` as `timestamp` in `column_types`."""
