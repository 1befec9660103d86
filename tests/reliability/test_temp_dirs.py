"""A dbt process leaves nothing of its own in the temporary directory, however it ends (issue 50).

Every invocation used to leave an empty `dbt-lancens-warehouse-*`, and one that exited while the
warm-up ran a `dbt-lancens-warm-up-*`. Now both live in the process's directory (spark/scratch.py),
removed at exit, or by the next process when a kill left it. Real dbt processes with a private
TMPDIR, so what is left there is theirs alone.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from dbt.adapters.lancens.spark.scratch import PREFIX
from tests.reliability.helpers import kill_group, make_project, wait_for

# What a dbt process made in the temporary directory, before and after the process directory.
OURS = (PREFIX, "dbt-lancens-warehouse-", "dbt-lancens-warm-up-")


def _left(temp: Path) -> list[str]:
    return sorted(entry.name for entry in temp.iterdir() if entry.name.startswith(OURS))


def test_parse_errors_kills_and_runs_leave_no_temporary_directories(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # the class archive's directory is in TMPDIR too: a new one there would start a dump beside the suite
    env = {"TMPDIR": str(temp), "DBT_LANCENS_CLASS_ARCHIVE": "off"}
    project = make_project(tmp_path / "project", str(tmp_path / "root"), sample=False)
    project.write("models/one.sql", "select 1 as id")

    # `run` starts Spark on a background thread while dbt parses; the parse fails and dbt exits
    project.write("models/broken.sql", "select {{ broken( }}")
    failed = project.run("run", env=env)
    assert failed.returncode == 2 and "Compilation Error in model broken" in failed.output, failed.output
    assert _left(temp) == []
    project.remove("models/broken.sql")

    # a SIGKILL leaves the process's directory: no exit handler runs
    victim = project.start("run", env=env)
    try:
        warehouse = f"{PREFIX}*/spark-warehouse-*"
        wait_for(lambda: any(temp.glob(warehouse)), "the session's start", process=victim)
    finally:
        kill_group(victim)
    (abandoned,) = _left(temp)
    then = time.time() - 3600  # past the minute a starting process's directory is left alone
    os.utime(temp / abandoned, (then, then))

    done = project.run("run", env=env)
    assert done.returncode == 0, done.output
    assert done.results["one"]["status"] == "success"
    assert _left(temp) == []
