"""`dbt run`: dbt-lancens vs dbt-spark (session method, Parquet) on the same project, side by side.

    python benchmarks/dbt_run.py --shape many --rows 1000 --repeat 1   # smoke
    python benchmarks/dbt_run.py --shape all --repeat 3                # sample, wide and many

Shapes (``dbt_projects.py``): ``sample`` (the sample project's models, 1,000,000 orders),
``wide`` (8 view/table/incremental models over 1,000,000 events: joins, aggregates, windows),
``many`` (40 chained table models of 10,000 rows: the per-model overhead). ``--rows`` overrides
each shape's row count.

dbt-lancens runs twice, once per read path (issue 47): ``lancens`` with ``spark_connector: jvm``
(the JVM connector, the default path) and ``lancens-py`` with ``spark_connector: python`` (the
Python data source), beside dbt-spark. For each the project and its raw tables are made once, then
copied aside; every repeat restores that copy (same path) and runs ``dbt run`` as a fresh process in
it, so each build starts from an empty warehouse and pays its own JVM start, as a user's ``dbt
run`` does. Which goes first rotates with each repeat. Printed: each build, the medians, each model's median
execution time (dbt's run_results.json) and the ratios lancens/dbt-spark of the medians (goal <= 1.0)
of the wall time and of the CPU time of each build's whole process tree (dbt, JVM, Python workers):
on a machine shared with other work the CPU figure is the steadier of the two.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from dbt_projects import ADAPTERS, SHAPES, Shape, write_project, write_raw
from harness import (
    dbt_executable,
    machine,
    median,
    prepare_class_archive,
    ratio_line,
    run_measured,
    run_timed,
    spread,
)

TARGET = 1.0
# What is built: (adapter, dbt-lancens' read path), by the name printed.
RUNS = {"lancens": ("lancens", "jvm"), "lancens-py": ("lancens", "python"), "spark": ("spark", None)}


def prepare(shape: Shape, run: str, base: Path, rows: int, master: str) -> tuple[Path, Path]:
    """Project and raw tables for one run; returns (project dir, pristine copy)."""
    adapter, connector = RUNS[run]
    project = base / run / "project"
    write_project(shape, adapter, project, master)
    if connector is not None:  # the read path, explicit: a failed jvm path fails rather than falls back
        profile = project / "profiles.yml"
        text = profile.read_text()
        profile.write_text(
            text.replace("type: lancens\n", f"type: lancens\n      spark_connector: {connector}\n")
        )
    command = [sys.executable, __file__, "--generate", adapter, "--shape", shape.name,
               "--project", str(project), "--rows", str(rows), "--master", master]  # fmt: skip
    seconds = run_timed(command, project)
    print(f"  {run:<10} raw data written in {seconds:.1f}s", flush=True)
    pristine = base / run / "pristine"
    shutil.copytree(project, pristine, symlinks=True)
    return project, pristine


def restore(project: Path, pristine: Path) -> None:
    shutil.rmtree(project)
    shutil.copytree(pristine, project, symlinks=True)


def model_times(project: Path) -> dict[str, float]:
    """Each model's execution time in the last ``dbt run`` (from target/run_results.json)."""
    results = json.loads((project / "target" / "run_results.json").read_text())
    return {result["unique_id"].split(".")[-1]: result["execution_time"] for result in results["results"]}


def bench_shape(
    shape: Shape, rows: int, repeat: int, master: str, runs: list[str], keep: Path | None = None
) -> list[str]:
    """Build ``shape`` ``repeat`` times per adapter; the ratio lines (wall, CPU) for the summary.

    ``runs`` names the builds compared (a 10M-row run of all three takes long on a small machine);
    ``keep`` is a directory the built projects are left in, for looking at their plans afterwards.
    """
    print(
        f"\n== shape {shape.name}: {shape.describe} (rows={rows}, repeat={repeat}, master={master})",
        flush=True,
    )
    walls: dict[str, list[float]] = {run: [] for run in RUNS}
    cpus: dict[str, list[float]] = {run: [] for run in RUNS}
    models: dict[str, dict[str, list[float]]] = {run: {} for run in RUNS}
    names = list(runs)
    with tempfile.TemporaryDirectory(prefix=f"dbt-run-{shape.name}-") as tmp:
        base = Path(tmp) if keep is None else keep / shape.name
        prepared = {run: prepare(shape, run, base, rows, master) for run in names}
        for attempt in range(repeat):
            order = names[attempt % len(names) :] + names[: attempt % len(names)]
            for adapter in order:
                project, pristine = prepared[adapter]
                restore(project, pristine)
                run = run_measured(
                    [dbt_executable(), "run", "--project-dir", ".", "--profiles-dir", "."], project
                )
                walls[adapter].append(run.wall)
                cpus[adapter].append(run.cpu)
                for model, elapsed in model_times(project).items():
                    models[adapter].setdefault(model, []).append(elapsed)
                print(
                    f"  repeat {attempt + 1} {adapter:<10} dbt run {run.wall:7.2f}s wall {run.cpu:7.2f}s CPU",
                    flush=True,
                )
    print(f"  {'model':<24}{'jvm s':>9}{'python s':>10}{'dbt-spark s':>13}{'jvm/spark':>11}{'py/spark':>10}")
    for model in sorted(models[names[0]]):
        jvm, python = (
            median(models["lancens"].get(model, [float("nan")])),
            median(models["lancens-py"].get(model, [float("nan")])),
        )
        theirs = median(models["spark"].get(model, [float("nan")]))
        print(
            f"  {model:<24}{jvm:>9.2f}{python:>10.2f}{theirs:>13.2f}"
            f"{jvm / theirs:>11.2f}{python / theirs:>10.2f}"
        )
    for run in names:
        print(f"  {run:<10} dbt run wall {spread(walls[run])}, CPU {spread(cpus[run])}")
    lines = []
    for ours, theirs, label in (
        ("lancens", "spark", "lancens jvm/dbt-spark"),
        ("lancens-py", "spark", "lancens python/dbt-spark"),
        ("lancens", "lancens-py", "lancens jvm/python"),
    ):
        if ours not in names or theirs not in names:
            continue
        lines.append(ratio_line(f"{shape.name:<7} dbt run wall {label}", walls[ours], walls[theirs], TARGET))
        lines.append(ratio_line(f"{shape.name:<7} dbt run CPU  {label}", cpus[ours], cpus[theirs], TARGET))
    print("\n".join("  " + line for line in lines))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=[*SHAPES, "all"], default="sample")
    parser.add_argument("--rows", type=int, help="override each shape's row count")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--runs", default=",".join(RUNS), help=f"comma-separated builds to compare, of {', '.join(RUNS)}"
    )
    parser.add_argument("--keep", type=Path, help="leave the built projects in this (new) directory")
    parser.add_argument("--generate", choices=ADAPTERS, help=argparse.SUPPRESS)
    parser.add_argument("--project", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        shape = SHAPES[args.shape]
        write_raw(shape, args.generate, args.project, args.project.parent / "raw", args.rows, args.master)
        return

    runs = [run.strip() for run in args.runs.split(",") if run.strip()]
    unknown = [run for run in runs if run not in RUNS]
    if unknown or not runs:
        parser.error(f"--runs: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(RUNS)}")
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep: {args.keep} exists; name a new directory")
    print(machine(), flush=True)
    print(prepare_class_archive(), flush=True)
    shapes = list(SHAPES.values()) if args.shape == "all" else [SHAPES[args.shape]]
    summary = []
    for shape in shapes:
        summary += bench_shape(
            shape, args.rows or shape.default_rows, args.repeat, args.master, runs, args.keep
        )
    print("\n" + machine())
    print("\n".join(summary))


if __name__ == "__main__":
    main()
