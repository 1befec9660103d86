"""Embeddings computed by the pipeline: rows embedded per second per core with `lancens-minilm`, for a
full build and for an incremental run where 1% of the rows' text changed.

    python benchmarks/embeddings.py               # 5,000 rows, local[2]
    python benchmarks/embeddings.py --rows 500    # smoke run

One incremental model (`unique_key='id'`, `embeddings` with `lancens-minilm`) over generated
sentences, built with `dbt run` in a subprocess, then run again with every 100th row's text changed.
Reported per run: wall time of the node (dbt's run results), the rows embedded and reused (the run's
response, from Spark accumulators), and embedded rows per second per core (`--cores` Spark cores).
The goal of the incremental run: it embeds only the 1% that changed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from dbt_projects import PROFILE_NAME, profile_yml
from harness import child_env, dbt_executable, machine

MODEL = """
{{ config(materialized='incremental', unique_key='id',
          embeddings=[{'source': 'body', 'vector': 'body_vector', 'function': 'lancens-minilm',
                       'batch_size': 64}]) }}
select id,
       concat('Article ', id, ': how to ', element_at(array('return', 'track', 'pay for', 'pick up',
              'cancel', 'gift'), cast(id % 6 + 1 as int)), ' an order placed on day ', id % 31,
              {% if var('round', 1) == 2 -%}
                case when id % 100 = 0 then ' (updated)' else '' end
              {%- else %}''{% endif %})
         as body
from range({{ var('rows') }}) as t(id)
"""


def write_project(root: Path, cores: int) -> Path:
    project = root / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        f"name: bench\nversion: '1.0.0'\nconfig-version: 2\nprofile: {PROFILE_NAME}\n", encoding="utf-8"
    )
    # the benchmarks' one profile: loopback Spark, the root at ./warehouse of the project
    (project / "profiles.yml").write_text(
        profile_yml("lancens", f"local[{cores}]", threads=1), encoding="utf-8"
    )
    (project / "models" / "articles.sql").write_text(MODEL, encoding="utf-8")
    return project


def run(project: Path, rows: int, round_: int) -> dict:
    command = [dbt_executable(), "run", "--project-dir", str(project), "--profiles-dir", str(project),
               "--vars", json.dumps({"rows": rows, "round": round_})]  # fmt: skip
    done = subprocess.run(command, cwd=project, env=child_env(), capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stdout[-4000:] + done.stderr[-2000:])
    (result,) = json.loads((project / "target" / "run_results.json").read_text())["results"]
    counts = re.search(r"(\d+) embedded, (\d+) reused", result["adapter_response"].get("_message", ""))
    embedded, reused = (int(counts[1]), int(counts[2])) if counts else (None, None)
    return {"seconds": result["execution_time"], "embedded": embedded, "reused": reused}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        project = write_project(Path(tmp), args.cores)
        for label, round_ in (("full build", 1), ("incremental, 1% changed", 2)):
            result = run(project, args.rows, round_)
            rate = (result["embedded"] or 0) / result["seconds"] / args.cores
            print(f"{label:26} {result['seconds']:8.1f} s  embedded {result['embedded']:>7}  "
                  f"reused {result['reused']:>7}  {rate:8.1f} rows/s/core")  # fmt: skip


if __name__ == "__main__":
    main()
