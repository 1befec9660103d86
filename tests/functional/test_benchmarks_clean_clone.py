"""`benchmarks/*.py` run from a clean clone: a `git clone` of this repository's committed state holds
every file a benchmark reads (`dbt_run.py` once failed there: it copied an untracked
`sample_project/macros`).

In the clone every benchmark script answers `--help`, and every project `dbt_run.py` builds (each
shape, for dbt-lancens and for dbt-spark) is written by `dbt_projects.write_project` and parsed by
`dbt parse`, all six in one dbt process (`run_many`: the same dbtRunner code path as the CLI; a
process each cost a dbt start-up, and what is checked is the parse, not the process). (A full
`dbt_run.py --shape sample --rows 1000` from a clean clone also runs; it is left out here because
it builds with dbt-spark as well, minutes of CPU.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.reliability.helpers import run_many

REPO = Path(__file__).parents[2]
# Helper modules the scripts import; they have no command line of their own.
LIBRARIES = {"dbt_projects.py", "harness.py", "profile_analysis.py", "worker_result.py"}
WRITE_PROJECTS = """
import sys
from pathlib import Path
from dbt_projects import ADAPTERS, SHAPES, write_project
for shape in SHAPES.values():
    for adapter in ADAPTERS:
        write_project(shape, adapter, Path(sys.argv[1]) / shape.name / adapter, "local[1]")
"""


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_benchmarks_run_from_a_clean_clone(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=300)
    benchmarks = clone / "benchmarks"
    scripts = sorted(p.name for p in benchmarks.glob("*.py") if p.name not in LIBRARIES)
    assert "dbt_run.py" in scripts
    for script in scripts:
        done = _run([sys.executable, script, "--help"], benchmarks)
        assert done.returncode == 0, f"{script}: {done.stderr[-2000:]}"
        assert "usage:" in done.stdout, script

    projects = tmp_path / "projects"
    done = _run([sys.executable, "-c", WRITE_PROJECTS, str(projects)], benchmarks)
    assert done.returncode == 0, done.stderr[-3000:]
    written = sorted(path.parent for path in projects.glob("*/*/dbt_project.yml"))
    assert len(written) == 6  # sample, wide, many x lancens, spark
    outcomes = run_many([[str(project), "parse"] for project in written], tmp_path)
    for project, parsed in zip(written, outcomes, strict=True):
        assert parsed["success"], (project, parsed["exception"], parsed["log"][-3000:])
        assert (project / "target" / "manifest.json").is_file()
