"""dbt-tests-adapter's constraints suite: model contracts on Lance tables.

A contracted model's columns must match its YAML in names and Spark types (dbt's contract error
otherwise); `not_null` and `check` constraints are enforced while the rows are written, so a
violating build commits nothing and the previous Lance version stays; `primary_key`, `unique` and
`foreign_key` are accepted with dbt's "not enforced" warning. The suite's Postgres type names are
Spark's here (`string` for `text`), and `target/run/` shows the statement dbt-lancens runs: the
model's rows, in YAML column order, checked and written as the table's next version.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRollback,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement,
    BaseIncrementalForeignKeyConstraint,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
    BaseViewConstraintsColumnsEqual,
)


def spark_types(yml: str) -> str:
    return yml.replace("data_type: text", "data_type: string")


MODEL_SCHEMA_YML = spark_types(fixtures.model_schema_yml)
FK_SCHEMA_YML = spark_types(fixtures.model_fk_constraint_schema_yml)
CONSTRAINED_MODEL_SCHEMA_YML = spark_types(fixtures.constrained_model_schema_yml)

# The checks dbt-lancens puts around a contracted model's rows (one Spark pass, enforced per row).
CHECKED_SELECT = """
select id, color, date_day from (
    -- depends_on: <foreign_key_model_identifier>
    select 'blue' as color, 1 as id, '2019-01-01' as date_day
) as model_subq
where case
    when id is null then raise_error('NOT NULL constraint violated for column id')
    when not coalesce((id > 0), true) then raise_error('CHECK constraint (id > 0) violated')
    when not coalesce(id >= 1, true) then raise_error('CHECK constraint id >= 1 violated')
    else true
end
"""


class SparkTypes:
    """Spark's names for the suite's types, as `describe` and the contract error print them."""

    @pytest.fixture
    def string_type(self) -> str:
        return "string"

    @pytest.fixture
    def int_type(self) -> str:
        return "int"

    @pytest.fixture
    def data_types(self) -> list[list[str]]:
        # sql_column_value, schema_data_type, error_data_type
        return [
            ["1", "int", "int"],
            ["'1'", "string", "string"],
            ["true", "boolean", "boolean"],
            ["array('a','b','c')", "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["cast(6.45 as decimal(10,2))", "decimal(10,2)", "decimal(10,2)"],
            ["cast('2019-01-01' as date)", "date", "date"],
            ["cast('2019-01-01 01:02:03' as timestamp)", "timestamp", "timestamp"],
            ["cast('2019-01-01 01:02:03' as timestamp_ntz)", "timestamp_ntz", "timestamp_ntz"],
            ["cast(1 as bigint)", "bigint", "bigint"],
            ["cast(1.5 as double)", "double", "double"],
            ["map('a', 1)", "map<string,int>", "map<string,int>"],
        ]


class TestTableConstraintsColumnsEqual(SparkTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
            "constraints_schema.yml": MODEL_SCHEMA_YML,
        }


class TestViewConstraintsColumnsEqual(SparkTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
            "constraints_schema.yml": MODEL_SCHEMA_YML,
        }


class TestIncrementalConstraintsColumnsEqual(SparkTypes, BaseIncrementalConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": MODEL_SCHEMA_YML,
        }


class TestTableConstraintsRuntimeDdlEnforcement(BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return "create or replace table <model_identifier> using lance as " + CHECKED_SELECT


class TestIncrementalConstraintsRuntimeDdlEnforcement(BaseIncrementalConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return "create or replace table <model_identifier> using lance as " + CHECKED_SELECT


class TestModelConstraintsRuntimeEnforcement(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": CONSTRAINED_MODEL_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return "create or replace table <model_identifier> using lance as " + CHECKED_SELECT


class TestConstraintQuotedColumn(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": spark_types(fixtures.model_quoted_column_schema_yml).replace(
                '"from"', "`from`"
            ),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return """
create or replace table <model_identifier> using lance as
select id, `from`, date_day from (
    select 'blue' as `from`, 1 as id, '2019-01-01' as date_day
) as model_subq
where case
    when id is null then raise_error('NOT NULL constraint violated for column id')
    when `from` is null then raise_error('NOT NULL constraint violated for column from')
    when not coalesce((`from` = 'blue'), true)
        then raise_error('CHECK constraint (`from` = \\'blue\\') violated')
    else true
end
"""


class NullViolation:
    @pytest.fixture(scope="class")
    def expected_error_messages(self) -> list[str]:
        return ["NOT NULL constraint violated for column id"]


class TestTableConstraintsRollback(NullViolation, BaseConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"my_model.sql": fixtures.my_model_sql, "constraints_schema.yml": MODEL_SCHEMA_YML}


class TestIncrementalConstraintsRollback(NullViolation, BaseIncrementalConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"my_model.sql": fixtures.my_incremental_model_sql, "constraints_schema.yml": MODEL_SCHEMA_YML}


class TestIncrementalForeignKeyConstraint(BaseIncrementalForeignKeyConstraint):
    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {}
