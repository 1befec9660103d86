"""dbt-tests-adapter's contract `sql_header` classes, and the header on every kind of build.

The suite's header is Postgres (`set session time zone ...`, `current_setting('timezone')`); here the
same header in Spark SQL. A header runs in the model's Spark session before the model's query, so
`current_timezone()` in the model returns the zone the header set. Before dbt-lancens ran headers,
a contracted model failed (Spark read `set time zone '...';select ...` as one statement) and any
other model silently ran without its header.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.tests.adapter.constraints.test_constraints import BaseContractSqlHeader
from dbt.tests.util import run_dbt

_HEADER = """
{% call set_sql_header(config) %}
set time zone 'Asia/Kolkata';
{%- endcall %}
select current_timezone() as column_name
"""
_SCHEMA = """
version: 2
models:
  - name: my_model_contract_sql_header
    config:
      contract:
        enforced: true
    columns:
      - name: column_name
        data_type: string
"""


def _zone_after_build(project: Any, name: str) -> list[tuple[Any, ...]]:
    """Build twice (the second an incremental run for incremental models) and read the model."""
    project.run_sql("set time zone 'UTC'")
    run_dbt(["run"])
    project.run_sql("set time zone 'UTC'")
    run_dbt(["run"])
    project.run_sql("set time zone 'UTC'")
    return [tuple(r) for r in project.run_sql(f"select * from {{schema}}.{name}", fetch="all")]


class TestTableContractSqlHeader(BaseContractSqlHeader):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_contract_sql_header.sql": '{{ config(materialized="table") }}' + _HEADER,
            "constraints_schema.yml": _SCHEMA,
        }

    def test_header_ran_before_the_query(self, project: Any) -> None:
        assert _zone_after_build(project, "my_model_contract_sql_header") == [("Asia/Kolkata",)]
        compiled = Path(project.project_root, "target/run/test/models/my_model_contract_sql_header.sql")
        assert compiled.read_text().lstrip().startswith("set time zone 'Asia/Kolkata';")


class TestIncrementalContractSqlHeader(TestTableContractSqlHeader):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        config = '{{ config(materialized="incremental", on_schema_change="append_new_columns") }}'
        return {"my_model_contract_sql_header.sql": config + _HEADER, "constraints_schema.yml": _SCHEMA}

    def test_header_ran_before_the_query(self, project: Any) -> None:
        # Every run appends a row (the class's first test ran once already): each saw the zone.
        rows = _zone_after_build(project, "my_model_contract_sql_header")
        assert len(rows) >= 2 and set(rows) == {("Asia/Kolkata",)}


class TestHeaderWithoutContract:
    """Views, snapshots and uncontracted tables run the header too (it used to be ignored)."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        header = _HEADER.replace("Asia/Kolkata", "America/Lima")
        return {
            "zone_table.sql": '{{ config(materialized="table") }}' + header,
            "zone_view.sql": '{{ config(materialized="view") }}'
            + header.replace("current_timezone()", "current_timezone() as zone, 1"),
        }

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {
            "zone_snapshot.sql": """
{% snapshot zone_snapshot %}
{{ config(target_schema=schema, unique_key='id', strategy='check', check_cols='all') }}
{% call set_sql_header(config) %}set time zone 'Asia/Tokyo';{% endcall %}
select 1 as id, current_timezone() as zone
{% endsnapshot %}
"""
        }

    def test_every_build_runs_its_header(self, project: Any) -> None:
        assert _zone_after_build(project, "zone_table") == [("America/Lima",)]
        project.run_sql("set time zone 'UTC'")
        run_dbt(["snapshot"])
        project.run_sql("set time zone 'UTC'")
        zone = project.run_sql("select zone from {schema}.zone_snapshot", fetch="all")
        assert [tuple(r) for r in zone] == [("Asia/Tokyo",)]
        view = Path(project.project_root, "target/run/test/models/zone_view.sql").read_text()
        assert view.lstrip().startswith("set time zone 'America/Lima';")
