"""dbt unit tests (`unit_tests:`) on dbt-lancens: inputs from ref, source and `this`, parents built
with `--empty`, and dbt's actual-versus-expected diff when a unit test fails."""

from __future__ import annotations

import re

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

UPSTREAM = "select 1 as id, 'a' as name, cast(10.5 as double) as amount"
ORDERS = """
select o.id, o.name, o.amount * 2 as doubled, c.country
from {{ ref('upstream') }} as o
join {{ source('raw', 'customers') }} as c on c.id = o.id
"""
EVENTS = """
{{ config(materialized='incremental', unique_key='id') }}
select id, name from {{ ref('upstream') }}
{% if is_incremental() %}
where id > (select max(id) from {{ this }})
{% endif %}
"""
SCHEMA_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: customers
unit_tests:
  - name: orders_join
    model: orders
    given:
      - input: ref('upstream')
        rows:
          - {id: 1, name: a, amount: 1.5}
          - {id: 2, name: b, amount: 2.0}
      - input: source('raw', 'customers')
        rows:
          - {id: 1, country: NL}
          - {id: 2, country: DE}
    expect:
      rows:
        - {id: 1, name: a, doubled: 3.0, country: NL}
        - {id: 2, name: b, doubled: 4.0, country: DE}
  - name: events_incremental
    model: events
    overrides:
      macros:
        is_incremental: true
    given:
      - input: ref('upstream')
        rows:
          - {id: 1, name: old}
          - {id: 5, name: new}
      - input: this
        rows:
          - {id: 3, name: existing}
    expect:
      rows:
        - {id: 5, name: new}
  - name: orders_wrong
    model: orders
    given:
      - input: ref('upstream')
        rows:
          - {id: 1, name: a, amount: 1.5}
      - input: source('raw', 'customers')
        rows:
          - {id: 1, country: NL}
    expect:
      rows:
        - {id: 1, name: a, doubled: 99.0, country: NL}
"""
CUSTOMERS_CSV = "id,country\n1,NL\n"


class TestUnitTestsOnLance:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"customers.csv": CUSTOMERS_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "upstream.sql": UPSTREAM,
            "orders.sql": ORDERS,
            "events.sql": EVENTS,
            "schema.yml": SCHEMA_YML,
        }

    def test_unit_tests_with_empty_parents(self, project) -> None:
        # parents exist (empty), so the unit tests learn their column types from the Lance tables
        run_dbt(["seed"])
        run_dbt(["run", "--empty"])
        results = run_dbt(["test", "--select", "test_type:unit", "--exclude", "orders_wrong"])
        assert sorted(r.node.name for r in results) == ["events_incremental", "orders_join"]
        assert all(r.status == "pass" for r in results)

    def test_failing_unit_test_shows_the_diff(self, project) -> None:
        run_dbt(["seed"])
        run_dbt(["run"])
        results, log = run_dbt_and_capture(["test", "--select", "orders_wrong"], expect_pass=False)
        assert results[0].status == "fail"
        log = re.sub(r"\x1b\[[0-9;]*m", "", log)  # dbt colours "actual" and "expected"
        assert "actual differs from expected" in log
        # dbt's diff table: the expected row marked `+`, the actual one `-`
        assert "99.0" in log and "3.0" in log
