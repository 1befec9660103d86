"""Upper-case letters in model names, aliases and schemas.

The rule (docs/dbt-features.md): a dbt name maps to its lower-cased namespace identifier, as Spark
lower-cases database and table names and resolves them case-insensitively. `DailyTotals.sql`
is the table `dailytotals`, `+schema: Marts` the namespace level `marts`; native Lance tools see
those ids in `__manifest`, and Spark SQL may spell the names in any case.
"""

from __future__ import annotations

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

DAILY_TOTALS = "{{ config(materialized='table') }} select 1 as id, 10 as total"
ALIASED = (
    "{{ config(materialized='table', alias='Mixed_Alias') }} "
    "select id, total * 2 as total from {{ ref('DailyTotals') }}"
)
IN_MARTS = "{{ config(materialized='table', schema='Marts') }} select * from {{ ref('Aliased') }}"
UPPER_VIEW = "{{ config(materialized='view') }} select * from {{ ref('InMarts') }}"
READS_ALL = "{{ config(materialized='table') }} select count(*) as n from {{ ref('UpperView') }}"


class TestUpperCaseNames:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "DailyTotals.sql": DAILY_TOTALS,
            "Aliased.sql": ALIASED,
            "InMarts.sql": IN_MARTS,
            "UpperView.sql": UPPER_VIEW,
            "reads_all.sql": READS_ALL,
        }

    def test_lower_cased_identifiers(self, project, lancens_root: str) -> None:
        for run in (1, 2):  # the second run finds every relation in dbt's cache and replaces it
            results = run_dbt(["run"])
            assert {r.node.name: r.status for r in results} == dict.fromkeys(
                ("DailyTotals", "Aliased", "InMarts", "UpperView", "reads_all"), "success"
            )
            assert all(f"(version {run})" in r.message for r in results if r.node.name != "UpperView")

        schema = project.test_schema
        ours = DirectoryNamespace(lancens_root)
        assert sorted(ours.list_tables([schema]).items) == ["dailytotals", "mixed_alias", "reads_all"]
        assert ours.list_views([schema, "marts"]).items == []
        assert ours.list_tables([schema, "marts"]).items == ["inmarts"]
        assert ours.list_views([schema]).items == ["upperview"]

        native = native_ns.DirectoryNamespace(root=lancens_root)
        assert native.list_namespaces(lns.ListNamespacesRequest(id=[schema])).namespaces == ["marts"]
        described = native.describe_table(lns.DescribeTableRequest(id=[schema, "mixed_alias"]))
        assert lance.dataset(described.location).to_table().to_pylist() == [{"id": 1, "total": 20}]

        row = project.run_sql(f"select n from {schema}.READS_ALL", fetch="one")
        assert row[0] == 1
        row = project.run_sql(f"select total from {schema}.DailyTotals", fetch="one")
        assert row[0] == 10
