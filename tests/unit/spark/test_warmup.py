"""warm_up leaves Python workers with lance imported, so the first model does not pay for it.

Runs in a fresh process: the test session's workers are warm already, which would hide a warm-up
that does nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "scripts" / "warm_up_session.py"
ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="module")
def facts() -> dict[str, Any]:
    """What one fresh process started (the script runs once for this module's tests)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=900, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_warm_up_starts_the_read_workers_with_lance_imported(facts: dict[str, Any]) -> None:
    kinds = facts["workers"]
    # The daemons a Lance read starts: the source's schema, filter pushdown, and executor tasks.
    assert {"pyspark.sql.worker.create_data_source", "pyspark.worker"} <= set(kinds)
    assert "pyspark.sql.worker.data_source_pushdown_filters" in kinds
    # An idle executor worker, kept for reuse, already has pylance's native library loaded.
    assert kinds["pyspark.worker"] is True


def test_asking_from_another_thread_reuses_the_running_jvm(facts: dict[str, Any]) -> None:
    """The session started on a background thread is found from the main thread: one driver JVM
    (PySpark's active session is per thread; asking it alone launched a JVM per asking thread)."""
    assert facts["driver_jvms"] == 1
