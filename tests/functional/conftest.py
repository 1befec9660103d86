"""dbt-tests-adapter wiring: every functional test runs dbt in this process against a lancens root.

The root is one temporary directory per test session; each test class works in its own unique
schema (namespace) under it, and the suite drops that namespace when the class is done.
"""

from __future__ import annotations

import os

import pytest

REMOTE_ENV = "LANCENS_TEST_SPARK_CONNECT_URL"
# The profile's `spark_connector` for every functional test (unset: the default), so the suite can
# run on the JVM connector's read path: LANCENS_TEST_SPARK_CONNECTOR=jvm (docs/jvm-connector.md).
CONNECTOR_ENV = "LANCENS_TEST_SPARK_CONNECTOR"


@pytest.fixture(scope="session")
def lancens_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("lancens_root"))


@pytest.fixture(scope="session")
def dbt_profile_target(lancens_root: str) -> dict:
    # The same master as tests/conftest.py's `spark` fixture: one JVM hosts one SparkContext.
    # tests/connect runs suites of this package again in a child pytest whose dbt is a Spark Connect
    # client of its server (REMOTE_ENV holds the server's URL).
    remote = os.environ.get(REMOTE_ENV)
    spark = {"remote": remote} if remote else {"master": "local[2]"}
    connector = os.environ.get(CONNECTOR_ENV)
    if connector:
        spark["spark_connector"] = connector
    return {"type": "lancens", "root": lancens_root, "threads": 2, **spark}
