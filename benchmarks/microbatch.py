"""Microbatch backfill vs one full build of the same rows, dbt-lancens, each a fresh `dbt run`.

    python benchmarks/microbatch.py --days 20 --rows 20000 --repeat 1   # smoke
    python benchmarks/microbatch.py                                     # 1,000 days, 1,000,000 rows

One project, one raw event table (``--rows`` rows spread evenly over ``--days`` days, a Lance table
written through the namespace engine) and two models with the same SQL: ``events_full``
(``materialized='table'``) and ``events_batched`` (``incremental_strategy='microbatch'``, daily
batches, ``event_time`` on the source so each batch reads only its day). The backfill is
``dbt run --select events_batched --event-time-start <first day> --event-time-end <last day + 1>``
on an empty table: one batch per day. Each repeat restores the project from a pristine copy and runs
both builds, alternating which goes first. Printed: wall and CPU times, the Lance versions each
build left (``_versions`` of the table), the batch count, the rows (checked equal) and the ratio
backfill/full build (goal <= 2.0).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
from pathlib import Path

from dbt_projects import profile_yml
from harness import dbt_executable, machine, prepare_class_archive, ratio_line, run_measured, spread

GOAL = 2.0
FIRST_DAY = dt.date(2022, 1, 1)
MODEL_SQL = "select event_id, event_ts, user_id, amount from {{ source('raw', 'events') }}\n"


def write_project(directory: Path, master: str, threads: int) -> None:
    models = directory / "models"
    models.mkdir(parents=True)
    (directory / "dbt_project.yml").write_text(
        "name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\nmodel-paths: ['models']\n"
    )
    (directory / "profiles.yml").write_text(profile_yml("lancens", master, threads=threads))
    (models / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n"
        "      - name: events\n        config:\n          event_time: event_ts\n"
    )
    (models / "events_full.sql").write_text("{{ config(materialized='table') }}\n" + MODEL_SQL)
    (models / "events_batched.sql").write_text(
        "{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',"
        f" batch_size='day', begin='{FIRST_DAY.isoformat()}') }}}}\n" + MODEL_SQL
    )


def write_raw(project: Path, rows: int, days: int) -> None:
    """``rows`` events, evenly over ``days`` days from FIRST_DAY (UTC timestamps)."""
    import numpy as np
    import pyarrow as pa

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    index = np.arange(rows, dtype=np.int64)
    start_us = (
        int(dt.datetime(FIRST_DAY.year, FIRST_DAY.month, FIRST_DAY.day, tzinfo=dt.UTC).timestamp()) * 10**6
    )
    day_us = 86_400 * 10**6
    offsets = (index * days // rows) * day_us + (index * 7_919_000_003) % day_us
    events = pa.table(
        {
            "event_id": index + 1,
            "event_ts": pa.array(start_us + offsets, pa.timestamp("us", tz="UTC")),
            "user_id": (index * 7919) % 10_000,
            "amount": (index % 10_000) / 100.0,
        }
    )
    namespace = DirectoryNamespace(str(project / "warehouse"))
    namespace.create_namespace(["raw"])
    namespace.create_table(["raw", "events"], events)


def table_facts(project: Path) -> None:
    """Versions and rows of both model tables, as JSON (run in a subprocess: lance must not be
    loaded in the parent, which forks the next dbt processes)."""
    import lance

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace(str(project / "warehouse"))
    facts = {}
    for model in ("events_full", "events_batched"):
        table_id = ["analytics", model]
        if not namespace.table_exists(table_id):
            continue
        dataset = lance.dataset(namespace.describe_table(table_id).location)
        facts[model] = {"versions": len(dataset.versions()), "rows": dataset.count_rows()}
    print(json.dumps(facts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="dbt threads (2, as the other benchmarks); dbt runs the model itself on one of them, so "
        "two batches run at once from 3 on (docs/materializations.md)",
    )
    parser.add_argument("--worker", choices=["raw", "facts"], help=argparse.SUPPRESS)
    parser.add_argument("--project", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "raw":
        write_raw(args.project, args.rows, args.days)
        return
    if args.worker == "facts":
        table_facts(args.project)
        return

    print(machine(), flush=True)
    print(prepare_class_archive(), flush=True)
    end = FIRST_DAY + dt.timedelta(days=args.days)
    builds = {
        "full build": ["--select", "events_full"],
        "microbatch backfill": ["--select", "events_batched", "--event-time-start", FIRST_DAY.isoformat(),
                                "--event-time-end", end.isoformat()],
    }  # fmt: skip
    walls: dict[str, list[float]] = {name: [] for name in builds}
    cpus: dict[str, list[float]] = {name: [] for name in builds}
    with tempfile.TemporaryDirectory(prefix="microbatch-bench-") as tmp:
        project, pristine = Path(tmp) / "project", Path(tmp) / "pristine"
        write_project(project, args.master, args.threads)
        script = [sys.executable, __file__, "--project", str(project)]
        run_measured(
            [*script, "--worker", "raw", "--rows", str(args.rows), "--days", str(args.days)], project
        )
        shutil.copytree(project, pristine)
        for attempt in range(args.repeat):
            shutil.rmtree(project)
            shutil.copytree(pristine, project)
            order = list(builds) if attempt % 2 == 0 else list(reversed(builds))
            for name in order:
                command = [
                    dbt_executable(),
                    "run",
                    "--project-dir",
                    ".",
                    "--profiles-dir",
                    ".",
                    *builds[name],
                ]
                run = run_measured(command, project)
                walls[name].append(run.wall)
                cpus[name].append(run.cpu)
                results = json.loads((project / "target" / "run_results.json").read_text())["results"]
                batches = sum(len((r.get("batch_results") or {}).get("successful", [])) for r in results)
                print(f"  repeat {attempt + 1} {name:<20} {run.wall:8.2f}s wall {run.cpu:8.2f}s CPU"
                      f"  batches {batches}", flush=True)  # fmt: skip
            facts = run_measured([*script, "--worker", "facts"], project).result()
            print(f"  repeat {attempt + 1} tables: {json.dumps(facts)}", flush=True)
            rows = {model: fact["rows"] for model, fact in facts.items()}
            if len(set(rows.values())) != 1:
                sys.exit(f"the two builds hold different row counts: {rows}")
    for name in builds:
        print(f"  {name:<20} wall {spread(walls[name])}, CPU {spread(cpus[name])}")
    print(f"\ndays={args.days} rows={args.rows} threads={args.threads} repeat={args.repeat}\n{machine()}")
    print(
        ratio_line(
            "microbatch backfill/full build, wall", walls["microbatch backfill"], walls["full build"], GOAL
        )
    )
    print(
        ratio_line(
            "microbatch backfill/full build, CPU ", cpus["microbatch backfill"], cpus["full build"], GOAL
        )
    )


if __name__ == "__main__":
    main()
