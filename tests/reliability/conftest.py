"""The worker's one dbt process for the roots tests start from (`setup_dbt`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reliability.helpers import DbtSession


@pytest.fixture(scope="session")
def setup_dbt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtSession]:
    """One dbt process (one JVM) for this test process that builds the roots tests start from, each
    root once, where what a test checks is what other, fresh processes do to that root afterwards
    (a race, a kill, a cold catalog): a JVM start per test less. It never touches a root again once
    another process has."""
    with DbtSession(tmp_path_factory.mktemp("setup-dbt")) as session:
        yield session
