"""What dbt-lancens runs is visible the dbt way: each model's statement in `target/run/`, dbt's query
comment on every statement (model builds included, in `--debug` logs), and the same comment as the
Spark job description of the model's jobs (what the Spark UI shows).

The job description is read inside the jobs themselves: a Python UDF registered in this process's
SparkSession (the one dbt uses) returns the task's `spark.job.description` local property."""

from __future__ import annotations

import json
import os

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyspark.sql import SparkSession

COMMENT = "lancens-comment node={{ node.unique_id if node else 'none' }}"

MODELS = {
    "a_table.sql": "{{ config(materialized='table') }} select 1 as id, job_description() as job",
    "a_view.sql": "{{ config(materialized='view') }} select id from {{ ref('a_table') }}",
    "an_incremental.sql": (
        "{{ config(materialized='incremental', unique_key='id') }} select 1 as id, job_description() as job"
    ),
    "a_python.py": """
def model(dbt, session):
    dbt.config(materialized="table")
    return session.sql("select 1 as id, job_description() as job")
""",
}
SNAPSHOT = """
{% snapshot a_snapshot %}
{{ config(unique_key='id', strategy='check', check_cols='all') }}
select id from {{ ref('a_table') }}
{% endsnapshot %}
"""


def _job_description() -> str | None:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.getLocalProperty("spark.job.description") if context else None


class TestQueryCommentOnModelBuilds:
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"query-comment": COMMENT}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"a_snapshot.sql": SNAPSHOT}

    @pytest.fixture(scope="class", autouse=True)
    def job_description_udf(self, spark: SparkSession) -> None:
        """dbt runs in this process on the same (default) SparkSession as the `spark` fixture."""
        spark.udf.register("job_description", _job_description)

    def _sql_events(self, raw_log: str) -> list[str]:
        statements = []
        for line in raw_log.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("info", {}).get("name") == "SQLQuery":
                statements.append(event["data"]["sql"])
        return statements

    def test_comment_run_files_and_job_description(self, project) -> None:
        _, raw_log = run_dbt_and_capture(["--debug", "--log-format=json", "build"])
        statements = self._sql_events(raw_log)
        for node in (
            "model.test.a_table",
            "model.test.an_incremental",
            "model.test.a_view",
            "snapshot.test.a_snapshot",
        ):
            built = [s for s in statements if f"lancens-comment node={node}" in s]
            assert built, f"no statement of {node} carried the query comment"
        # the model build itself (its SELECT) is logged with the comment
        assert any(
            "lancens-comment node=model.test.a_table" in s and "job_description()" in s for s in statements
        )

        # target/run/ holds each node's statement
        run_dir = os.path.join(project.project_root, "target", "run", "test")
        for path in (
            "models/a_table.sql",
            "models/a_view.sql",
            "models/an_incremental.sql",
            "snapshots/a_snapshot.sql",
        ):
            with open(os.path.join(run_dir, path)) as handle:
                text = handle.read()
            assert "select" in text.lower(), path

        # each model's Spark jobs are described by its query comment
        for name in ("a_table", "an_incremental", "a_python"):
            job = project.run_sql(f"select job from {project.test_schema}.{name}", fetch="one")[0]
            assert job is not None and f"node=model.test.{name}" in job, (name, job)

        # an incremental run's merge job too
        run_dbt(["run", "--select", "an_incremental"])
        job = project.run_sql(f"select job from {project.test_schema}.an_incremental", fetch="one")[0]
        assert "node=model.test.an_incremental" in job
