"""dbt on the JVM connector (`spark_connector: jvm`, docs/jvm-connector.md): models read their refs
through it, the results are right after a rebuild of the upstream table, and `dbt debug` says which
reader is in use and why."""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyspark.sql import SparkSession

from dbt.adapters.lancens.definitions.names import database_name
from dbt.adapters.lancens.namespace import DirectoryNamespace

MODELS = {
    "base.sql": (
        "{{ config(materialized='table') }} select id, cast(id % 7 as int) as bucket, "
        "array(cast(id as float), 1.0f) as vec from range(1, {{ var('rows', 100) }} + 1) as t(id)"
    ),
    "downstream.sql": (
        "{{ config(materialized='table') }} select bucket, count(*) as n, sum(id) as total "
        "from {{ ref('base') }} where id > 50 group by bucket"
    ),
}


class TestModelsReadThroughTheJvmConnector:
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        target = {**dbt_profile_target, "schema": unique_schema, "spark_connector": "jvm"}
        return {"test": {"outputs": {"default": target}, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    def test_refs_are_read_by_the_connector(self, project, lancens_root: str, spark: SparkSession) -> None:
        namespace = DirectoryNamespace(lancens_root)
        for rows in (100, 200):
            run_dbt(["run", "--vars", f"rows: {rows}"])
            location = namespace.describe_table([project.test_schema, "downstream"]).location
            got = lance.dataset(location).to_table().to_pylist()
            expected = {b: [i for i in range(51, rows + 1) if i % 7 == b] for b in range(7)}
            assert {row["bucket"]: (row["n"], row["total"]) for row in got} == {
                b: (len(ids), sum(ids)) for b, ids in expected.items()
            }
        base = f"{database_name([project.test_schema])}.base"
        plan = (
            spark.sql(f"SELECT id FROM {base} WHERE id = 3")._jdf.queryExecution().executedPlan().toString()
        )
        assert "LanceScan[" in plan and "(`id` = 3)" in plan

    def test_debug_names_the_reader(self, project) -> None:
        _, output = run_dbt_and_capture(["debug"])
        assert "lancens spark_connector: jvm (requested jvm" in output
