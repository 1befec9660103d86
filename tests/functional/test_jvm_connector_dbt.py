"""dbt on the JVM connector (`spark_connector: jvm`, docs/jvm-connector.md): models read their refs
through it, the results are right after a rebuild of the upstream table, and `dbt debug` says which
reader is in use and why."""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyspark.sql import SparkSession

from dbt.adapters.lancens.definitions.names import database_name
from dbt.adapters.lancens.metadata import history
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.table_frames import table_frame

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


INCREMENTAL = (
    "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }} "
    "select id, cast(id * {{ var('factor', 1) }} as bigint) as v "
    "from range(1, {{ var('rows', 10) }} + 1) as t(id)"
)
AT_VERSION = (
    "{{ config(materialized='table') }} select count(*) as n, sum(v) as total "
    "from {{ at_version(ref('grows'), 1) }}"
)


class TestPlannedReadsGoThroughTheJvmConnector:
    """The reads the adapter plans as DataFrames, not catalog tables: `at_version`'s view and the
    version an incremental merge builds on (`_rowaddr` included) read through the connector."""

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        target = {**dbt_profile_target, "schema": unique_schema, "spark_connector": "jvm"}
        return {"test": {"outputs": {"default": target}, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"grows.sql": INCREMENTAL, "first.sql": AT_VERSION}

    def test_at_version_and_the_merge_target_read_through_the_connector(
        self, project, lancens_root: str
    ) -> None:
        run_dbt(["run", "--select", "grows"])
        run_dbt(["run", "--vars", "{rows: 15, factor: 2}"])  # merge: 10 rows updated, 5 inserted
        namespace = DirectoryNamespace(lancens_root)
        location = namespace.describe_table([project.test_schema, "grows"]).location
        grows = lance.dataset(location)
        assert {r["id"]: r["v"] for r in grows.to_table().to_pylist()} == {i: 2 * i for i in range(1, 16)}
        first = lance.dataset(namespace.describe_table([project.test_schema, "first"]).location)
        assert first.to_table().to_pylist() == [{"n": 10, "total": 55}]  # version 1: 10 rows, factor 1

        with project.adapter.connection_named("_test"):
            runtime = project.adapter.runtime
            view = history.at_version(runtime, [project.test_schema, "grows"], 1)
            plan = runtime.spark.sql(f"SELECT * FROM {view}")._jdf.queryExecution().executedPlan().toString()
            assert "LanceScan[version=1," in plan
            frame = table_frame(runtime, location, grows.version, ["id"], row_address=True)
            assert "LanceScan[" in frame._jdf.queryExecution().executedPlan().toString()
            assert frame.columns == ["id", "_rowaddr"]
            expected = grows.to_table(columns=["id"], with_row_address=True).to_pylist()
            assert {r.id: r._rowaddr for r in frame.collect()} == {r["id"]: r["_rowaddr"] for r in expected}
