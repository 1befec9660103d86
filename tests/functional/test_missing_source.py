"""A `source()` that is not in the namespace is named as dbt and the namespace name it, not as
Spark's internal database name (`<schema>__raw`)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

SOURCES = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}.raw"
    tables:
      - name: events
"""
READS_SOURCE = "{{ config(materialized='table') }} select * from {{ source('raw', 'events') }}"


class TestMissingSource:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"sources.yml": SOURCES, "reads_source.sql": READS_SOURCE}

    def test_missing_source_is_named_in_dbt_terms(self, project) -> None:
        (result,) = run_dbt(["run"], expect_pass=False)
        assert result.status == "error"
        schema = project.test_schema
        assert f"{schema}.raw.events" in result.message
        assert f"{schema}__raw" not in result.message
        assert "not found" in result.message.lower()
