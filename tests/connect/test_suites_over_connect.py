"""dbt-tests-adapter suites again, with dbt as a Spark Connect client of the session's server.

The suites run dbt in their own process, which then becomes a Connect client for good (see
conftest.py), so they run in a child pytest whose profile target has `remote` instead of `master`
(tests/functional/conftest.py reads the URL from REMOTE_ENV). The child's report is this test's
result: every test it collected must pass.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.connect.server import ConnectServer
from tests.functional.conftest import REMOTE_ENV
from tests.reliability.helpers import dbt_env

SUITES = ["tests/functional/adapter/test_basic.py", "tests/functional/adapter/test_python_model.py"]
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_basic_and_python_model_suites_pass_over_connect(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
         "--basetemp", str(tmp_path / "child"), *SUITES],
        cwd=PROJECT_ROOT,
        env=dbt_env({REMOTE_ENV: connect_server.url}),
        capture_output=True,
        text=True,
        timeout=1800,
    )  # fmt: skip
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-3000:]
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-3000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) >= 20, summary
    assert not re.search(r"failed|error|skipped", summary), summary
    assert connect_server.token not in done.stdout + done.stderr
