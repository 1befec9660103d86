"""The data source in a user's plain SparkSession, where Spark's Python filter pushdown is off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "scripts" / "plain_session.py"
ROOT = Path(__file__).parents[3]


def test_reads_work_after_registration_alone(table_uri: str) -> None:
    lance.write_dataset(pa.table({"id": pa.array(range(20), pa.int64())}), table_uri, max_rows_per_file=5)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), table_uri],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts == {"pushdown_conf_before": "false", "filtered": 5, "all": 20, "union": 25}
