"""A branch target on the JVM connector's path (`spark_connector: jvm`, docs/jvm-connector.md):
Spark tasks write the branch's models with lance-core (the files in the branch's own `data/`, as
pylance puts them), Spark reads a model built on the branch through lance-core (`LanceScan` in the
plan) and gets the branch's rows, main's target in the same process gets main's, and a table new
on the branch (its own unregistered directory) is written and read the same way.

Real dbt runs in process on a root with table version management; the plans and rows are Spark's.
"""

from __future__ import annotations

import os
from copy import deepcopy
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt
from pyspark.sql import SparkSession

from dbt.adapters.lancens.definitions.names import database_name
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.spark.java_classes import seq_elements
from dbt.adapters.lancens.spark.jvm_writer import JOB_PREFIX

BRANCH = "ci_jvm"
A = "{{ config(materialized='table') }} select id, {{ var('gen', 1) }} as gen from range(1, 6) as t(id)"
B = "{{ config(materialized='table') }} select sum(gen) as total, count(*) as n from {{ ref('a') }}"
NEW = "{{ config(materialized='table', enabled=var('new', false)) }} select 7 as id"


def plan_and_rows(spark: SparkSession, sql: str) -> tuple[str, list[tuple]]:
    frame = spark.sql(sql)
    plan = frame._jdf.queryExecution().executedPlan().toString()
    return plan, sorted(tuple(row) for row in frame.collect())


def written_in_the_jvm(spark: SparkSession, location: str) -> bool:
    """Whether a Spark job of this session wrote Lance files to `location` in the JVM."""
    wanted = f"{JOB_PREFIX} {location}"
    jobs = seq_elements(spark._jsc.sc().statusStore().jobsList(None))
    return any(
        job.description().isDefined() and str(job.description().get()).endswith(wanted) for job in jobs
    )


def data_files(location: str) -> set[str]:
    data = Path(location.removeprefix("file://")) / "data"
    return set(os.listdir(data)) if data.is_dir() else set()


class TestBranchReadsThroughTheJvmConnector:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        return {
            "type": "lancens",
            "root": str(tmp_path_factory.mktemp("branch_jvm_root")),
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
            "spark_connector": "jvm",
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        outputs = {"default": dbt_profile_target, "ci": deepcopy(dbt_profile_target)}
        outputs["default"]["schema"] = unique_schema
        outputs["ci"]["schema"] = unique_schema
        outputs["ci"]["branch"] = BRANCH
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"a.sql": A, "b.sql": B, "new_one.sql": NEW}

    def test_spark_reads_the_branch_through_lance_core(
        self, project, dbt_profile_target: dict, spark: SparkSession
    ) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        a = f"{database_name([schema])}.a"
        run_dbt(["run"])
        main_location = ns.describe_table([schema, "a"]).location

        run_dbt(["run", "--target", "ci", "--vars", "{gen: 2, new: true}"])
        # The branch target's entry of `a`: lance-core's scan of the branch, the branch's rows.
        plan, got = plan_and_rows(spark, f"SELECT id, gen FROM {a} WHERE id > 2")
        assert "LanceScan[" in plan, plan
        assert got == [(3, 2), (4, 2), (5, 2)]
        # b was built on the branch from a's branch rows (read by the connector in that run).
        branch_b = ns.describe_table([schema, "b"], branch=BRANCH).location
        assert lance.dataset(branch_b).to_table().to_pylist() == [{"total": 10, "n": 5}]
        # The same branch read straight by location, as a plain PySpark job reads it.
        branch_a = ns.describe_table([schema, "a"], branch=BRANCH).location
        # Both were written by Spark tasks in the JVM, into the branch's own data/: every data file
        # the branch's latest version reads is there, and main's data/ got none of the branch's.
        assert branch_a.rstrip("/").endswith(f"/tree/{BRANCH}")
        assert written_in_the_jvm(spark, branch_a) and written_in_the_jvm(spark, branch_b)
        read_files = {
            f.path for fragment in lance.dataset(branch_a).get_fragments() for f in fragment.data_files()
        }
        assert read_files and read_files <= data_files(branch_a)
        assert not read_files & data_files(main_location)
        direct = spark.read.format("lance_jvm").load(branch_a)
        assert sorted(row.gen for row in direct.collect()) == [2] * 5
        # A table new on the branch: its own directory (main's catalog lacks it), read by lance-core.
        assert not ns.table_exists([schema, "new_one"])
        plan, got = plan_and_rows(spark, f"SELECT id FROM {database_name([schema])}.new_one")
        assert "LanceScan[" in plan and got == [(7,)], plan
        assert written_in_the_jvm(spark, ns.table_location_on_branch([schema, "new_one"], BRANCH))

        # Main's target in the same process: the entries read main again, through the connector.
        run_dbt(["run", "--select", "b"])
        plan, got = plan_and_rows(spark, f"SELECT id, gen FROM {a} WHERE id > 2")
        assert "LanceScan[" in plan and got == [(3, 1), (4, 1), (5, 1)], plan
        main_b = ns.describe_table([schema, "b"]).location
        assert lance.dataset(main_b).to_table().to_pylist() == [{"total": 5, "n": 5}]
        assert sorted(lance.dataset(main_location).to_table().column("gen").to_pylist()) == [1] * 5
