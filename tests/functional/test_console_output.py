"""`dbt build` as a user runs it: the console carries dbt's lines only; Spark's output goes to logs/.

Lance's Rust logger (`WARN ... No existing dataset ... will be created` for every new table), the
JVM's banners, log4j warnings (`CreateNamespaceExec ... created concurrently`) and Spark's progress
bars used to be interleaved with dbt's output. A real `dbt` process in a fresh interpreter, so no
setting of the test process leaks in.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PROFILE = """\
console:
  target: dev
  outputs:
    dev:
      type: lancens
      root: ./warehouse
      schema: analytics
      master: "local[1]"
      threads: 2
"""

PROJECT = """\
name: console
version: "1.0.0"
config-version: 2
profile: console
models:
  console:
    +materialized: table
"""

# dbt's default console format: every line starts with the time it was logged.
DBT_LINE = re.compile(r"^\d\d:\d\d:\d\d ")


def _project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "seeds").mkdir()
    (root / "profiles.yml").write_text(PROFILE)
    (root / "dbt_project.yml").write_text(PROJECT)
    (root / "seeds" / "numbers.csv").write_text("id,amount\n1,10\n2,20\n3,30\n")
    (root / "models" / "totals.sql").write_text("select sum(amount) as total from {{ ref('numbers') }}")
    (root / "models" / "doubled.sql").write_text(
        "{{ config(materialized='view') }}\nselect id, amount * 2 as amount from {{ ref('numbers') }}"
    )
    (root / "models" / "top.sql").write_text("select * from {{ ref('doubled') }} where amount > 20")
    return root


def test_console_carries_only_dbt_lines(tmp_path: Path) -> None:
    project = _project(tmp_path / "console")
    dbt = Path(sys.executable).with_name("dbt")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    env.pop("LANCE_LOG", None)
    done = subprocess.run(
        [str(dbt), "--no-use-colors", "build", "--project-dir", ".", "--profiles-dir", "."],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Completed successfully" in done.stdout
    foreign = [line for line in (done.stdout + done.stderr).splitlines() if line and not DBT_LINE.match(line)]
    assert foreign == []
    spark_log = project / "logs" / "spark" / "spark.log"
    assert "log4j" in spark_log.read_text()  # Spark's output still exists, in the project's logs/
