"""dbt-spark's table-layout configs are not applied to Lance tables, and say so.

A project brought over from dbt-spark may set `file_format`, `location_root`, `partition_by`,
`clustered_by`, `buckets` or `options`. The build succeeds (a Lance table in the namespace), and
each node that sets one gets one warning naming what was not applied; `partition_by` of an
insert_overwrite model is used, so it gets none.
"""

from __future__ import annotations

import datetime
import re

import lance
import pytest
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

MODELS = {
    "delta_table.sql": (
        "{{ config(materialized='table', file_format='delta', partition_by=['day'], "
        "location_root='/mnt/lake', clustered_by=['id'], buckets=4) }} "
        "select 1 as id, date'2026-01-01' as day"
    ),
    "merged.sql": (
        "{{ config(materialized='incremental', unique_key='id', partition_by='day') }} "
        "select 1 as id, date'2026-01-01' as day"
    ),
    "overwritten.sql": (
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
        "partition_by='day') }} select 1 as id, date'2026-01-01' as day"
    ),
    "plain.sql": "{{ config(materialized='table', file_format='lance') }} select 2 as id",
}

WARNING = re.compile(r"did not apply these dbt-spark configs of (\S+): (.*?); a Lance table")


class TestSparkLayoutConfigs:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    def test_named_once_per_node_and_table_written(self, project, lancens_root: str) -> None:
        results, log = run_dbt_and_capture(["run"])
        assert all(result.status == "success" for result in results)
        flat = " ".join(log.split())
        warned = {name.strip("`'.").split(".")[-1].strip("`"): what for name, what in WARNING.findall(flat)}
        assert sorted(warned) == ["delta_table", "merged"]
        for config in ("file_format 'delta'", "location_root", "clustered_by", "buckets", "partition_by"):
            assert config in warned["delta_table"]
        assert warned["merged"].startswith("partition_by")
        # Written where the namespace puts it, as Lance, location_root notwithstanding.
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, "delta_table"])
        assert info.location.startswith(lancens_root)
        assert lance.dataset(info.location).to_table().to_pylist() == [
            {"id": 1, "day": datetime.date(2026, 1, 1)}
        ]
