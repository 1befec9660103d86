"""dbt-tests-adapter's column_types suite: `Column.is_string()`, `is_integer()`, ... on the Spark type
names dbt-lancens reports for Lance columns (the suite's model is Postgres SQL; this one is Spark's)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.column_types.test_column_types import BaseColumnTypes

MODEL_SQL = """
select
    cast(1 as tinyint) as tinyint_col,
    cast(1 as smallint) as smallint_col,
    cast(2 as int) as int_col,
    cast(2 as integer) as integer_col,
    cast(3 as bigint) as bigint_col,
    cast(4.0 as float) as float_col,
    cast(4.0 as real) as real_col,
    cast(5.0 as double) as double_col,
    cast(6.0 as decimal(10, 2)) as decimal_col,
    cast(6.0 as numeric) as numeric_col,
    cast('7' as string) as string_col,
    cast('8' as varchar(20)) as varchar_col,
    cast('9' as char(3)) as char_col,
    true as boolean_col,
    date '2024-01-01' as date_col
"""

SCHEMA_YML = """
version: 2
models:
  - name: model
    data_tests:
      - is_type:
          column_map:
            tinyint_col: ['integer', 'number', 'not string', 'not float']
            smallint_col: ['integer', 'number', 'not string', 'not float']
            int_col: ['integer', 'number', 'not string', 'not float']
            integer_col: ['integer', 'number', 'not string']
            bigint_col: ['integer', 'number', 'not string', 'not float']
            float_col: ['float', 'number', 'not integer', 'not string']
            real_col: ['float', 'number', 'not integer']
            double_col: ['float', 'number', 'not integer', 'not numeric']
            decimal_col: ['numeric', 'number', 'not integer', 'not float']
            numeric_col: ['numeric', 'number', 'not float']
            string_col: ['string', 'not number']
            varchar_col: ['string', 'not number']
            char_col: ['string', 'not number']
            boolean_col: ['not string', 'not number']
            date_col: ['not string', 'not number']
"""


class TestColumnTypes(BaseColumnTypes):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"model.sql": MODEL_SQL, "schema.yml": SCHEMA_YML}

    def test_run_and_test(self, project) -> None:
        self.run_and_test()
