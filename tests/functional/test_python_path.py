"""The correctness subset on the Python data source (`spark_connector: python`), in every suite run.

The default path is the JVM connector (`auto`, docs/jvm-connector.md), which the rest of the suite
runs on; the Python source stays the fallback (a Spark without the connector's jars, a table its
lance-core cannot read), so the tests where a reader most easily goes wrong run on it too: one table
read twice with a filter on one read (shared scans), pinned versions and time travel, the deletion
files incremental runs write, vectors with null rows, and non-nullable fields. The unit tests of the
Python source (`tests/unit/spark/`) run in every suite as well. A subclass each, not the whole suite
twice: CI's time (issue 47).
"""

from __future__ import annotations

import os

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.definitions.names import database_name
from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional import test_contracts_lance, test_shared_scans_dbt, test_vector_null_rows
from tests.functional.conftest import REMOTE_ENV


def _python_target(lancens_root: str) -> dict:
    """The suite's profile (tests/functional/conftest.py) with the Python data source chosen."""
    remote = os.environ.get(REMOTE_ENV)
    spark = {"remote": remote} if remote else {"master": "local[2]"}
    return {"type": "lancens", "root": lancens_root, "threads": 2, **spark, "spark_connector": "python"}


class PythonPath:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, lancens_root: str) -> dict:
        return _python_target(lancens_root)


class TestSharedScansOnPython(PythonPath, test_shared_scans_dbt.TestSharedScansInDbt):
    pass


class TestVectorNullRowsOnPython(PythonPath, test_vector_null_rows.TestVectorModelKeepsNullVectors):
    pass


class TestNullabilityOnPython(PythonPath, test_contracts_lance.TestContractNullabilityOnIncrementalRuns):
    pass


GROWS = (
    "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }} "
    "select id, cast(id * {{ var('factor', 1) }} as bigint) as v "
    "from range(1, {{ var('rows', 10) }} + 1) as t(id)"
)
TRAVEL = (
    "{{ config(materialized='table') }} "
    "select 'v1' as at, count(*) as n, sum(v) as total from {{ at_version(ref('grows'), 1) }} "
    "union all select 'latest', count(*), sum(v) from {{ ref('grows') }}"
)


class TestTimeTravelAndMergeOnPython(PythonPath):
    """A merge (deletion files, rows replaced by address) and a read of version 1 beside the latest,
    in one query, on the Python source; the reader in use is the one `dbt debug` names."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"grows.sql": GROWS, "travel.sql": TRAVEL}

    def test_pinned_and_latest_rows(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "grows"])
        run_dbt(["run", "--vars", "{rows: 15, factor: 2}"])
        namespace = DirectoryNamespace(lancens_root)
        grows = lance.dataset(namespace.describe_table([project.test_schema, "grows"]).location)
        assert {r["id"]: r["v"] for r in grows.to_table().to_pylist()} == {i: 2 * i for i in range(1, 16)}
        travel = lance.dataset(namespace.describe_table([project.test_schema, "travel"]).location)
        assert {r["at"]: (r["n"], r["total"]) for r in travel.to_table().to_pylist()} == {
            "v1": (10, 55),
            "latest": (15, 240),
        }
        with project.adapter.connection_named("_test"):
            runtime = project.adapter.runtime
            assert not runtime.connector.jvm
            if os.environ.get(REMOTE_ENV) is None:  # a Connect client has no plan to look at here
                frame = runtime.sql(f"SELECT * FROM {database_name([project.test_schema])}.grows")
                assert "LanceScan[" not in frame._jdf.queryExecution().executedPlan().toString()
