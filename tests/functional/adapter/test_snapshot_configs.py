"""dbt-tests-adapter's test_various_configs.py: snapshot column names, dbt_valid_to_current, and a
unique key of two columns, with the lancens profile.

The suite passes its Postgres statements (module constants, several per string) straight to
`project.run_sql`. `spark_project` wraps that one method for these classes: each statement is put
into Spark SQL by `spark_sql` and run on its own, still through dbt-lancens (`CREATE TABLE` a
namespace operation, `INSERT` and `UPDATE` Lance commits). The snapshot and model SQL name the seed
`{{target.database}}.{{target.schema}}.seed`, a three-part name Spark's session catalog refuses;
`SparkSql` gives them without the database, as for dbt-spark.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from dbt.tests.adapter.simple_snapshot import test_various_configs as various

from tests.functional.adapter.test_simple_snapshot import spark_sql

_VARCHAR = re.compile(r"\bVARCHAR\(\d+\)", re.IGNORECASE)


def _statements(sql: str) -> list[str]:
    """The suite's script as single Spark SQL statements (its strings hold no semicolons)."""
    script = _VARCHAR.sub("STRING", spark_sql(sql))
    return [s for s in (part.strip() for part in script.split(";")) if s]


@pytest.fixture(autouse=True)
def spark_project(project: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    run_sql = project.run_sql

    def run_in_spark(sql: str, fetch: str | None = None) -> Any:
        result = None
        for statement in _statements(sql):
            result = run_sql(statement, fetch)
        return result

    monkeypatch.setattr(project, "run_sql", run_in_spark)
    yield project


class SparkSql:
    """The suite's snapshot and seed model, naming the seed by schema and table."""

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshot.sql": spark_sql(various.snapshot_actual_sql)}


class TestSnapshotColumnNames(SparkSql, various.BaseSnapshotColumnNames):
    pass


class TestSnapshotColumnNamesFromDbtProject(SparkSql, various.BaseSnapshotColumnNamesFromDbtProject):
    pass


class TestSnapshotInvalidColumnNames(SparkSql, various.BaseSnapshotInvalidColumnNames):
    pass


class TestSnapshotDbtValidToCurrent(SparkSql, various.BaseSnapshotDbtValidToCurrent):
    pass


class TestSnapshotMultiUniqueKey(various.BaseSnapshotMultiUniqueKey):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "seed.sql": spark_sql(various.model_seed_sql),
            "snapshots.yml": various.snapshots_multi_key_yml,
            "ref_snapshot.sql": various.ref_snapshot_sql,
        }
