"""Grants: Lance has no access control of its own, so a configured `grants:` cannot be applied.

dbt-tests-adapter's grants suites (model, incremental, seed, snapshot, invalid grants) read the
grants back with `show grants` and cannot apply (docs/dbt-features.md). What dbt-lancens promises
instead: every node that configures grants gets one warning naming it, and nodes without grants
get none; the build itself succeeds.
"""

from __future__ import annotations

import re

import pytest
from dbt.tests.util import run_dbt_and_capture

GRANTS = "{'select': ['analyst']}"

MODELS = {
    "granted_table.sql": f"{{{{ config(materialized='table', grants={GRANTS}) }}}} select 1 as id",
    "granted_view.sql": f"{{{{ config(materialized='view', grants={GRANTS}) }}}} select 1 as id",
    "granted_incremental.sql": (
        f"{{{{ config(materialized='incremental', grants={GRANTS}) }}}} select 1 as id"
    ),
    "plain_table.sql": "{{ config(materialized='table') }} select 2 as id",
}

SNAPSHOT = f"""
{{% snapshot granted_snapshot %}}
{{{{ config(unique_key='id', strategy='check', check_cols='all', grants={GRANTS}) }}}}
select * from {{{{ ref('granted_table') }}}}
{{% endsnapshot %}}
"""


class TestGrantsWarn:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"granted_seed.csv": "id\n1\n", "granted_seed.yml": SEED_YML}

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"granted_snapshot.sql": SNAPSHOT}

    def test_one_warning_per_node_with_grants(self, project) -> None:
        results, log = run_dbt_and_capture(["build"])
        assert all(result.status in ("success", "pass") for result in results)
        warned = re.findall(r"grants are not supported by dbt-lancens.*? on (\S+)", log)
        names = sorted(name.strip("`'.").split(".")[-1].strip("`") for name in warned)
        assert names == sorted(
            ["granted_table", "granted_view", "granted_incremental", "granted_seed", "granted_snapshot"]
        )
        # a second run warns again, once per node (the model is built again)
        _, log = run_dbt_and_capture(["run", "--select", "granted_table"])
        assert len(re.findall(r"grants are not supported by dbt-lancens", log)) == 1


SEED_YML = f"""
seeds:
  - name: granted_seed
    config:
      grants: {GRANTS}
"""
