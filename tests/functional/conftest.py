"""dbt-tests-adapter wiring: every functional test runs dbt in this process against a lancens root.

The root is one temporary directory per test session; each test class works in its own unique
schema (namespace) under it, and the suite drops that namespace when the class is done.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def lancens_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("lancens_root"))


@pytest.fixture(scope="session")
def dbt_profile_target(lancens_root: str) -> dict:
    # The same master as tests/conftest.py's `spark` fixture: one JVM hosts one SparkContext.
    return {"type": "lancens", "root": lancens_root, "master": "local[2]", "threads": 2}
