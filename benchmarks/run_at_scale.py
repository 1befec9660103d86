"""A one-model `dbt run` in a namespace of 10,000 tables against the same run in one of 100.

    python benchmarks/run_at_scale.py --tables 1000 --repeat 1   # smoke, a few minutes
    python benchmarks/run_at_scale.py --repeat 3                 # 100 vs 10,000 tables

Two roots are made once, each with ``--namespaces`` namespaces (100) holding the tables: the small
one ``--namespaces`` tables, the large one ``--tables``. The same project runs on each: one table
model in the first namespace that reads one of its tables. Each repeat runs `dbt run` in a fresh
process on each root, interleaved, and the ratio of the medians (large / small) is the growth a
user sees from the namespace's size alone (goal <= 1.2). The model writes a new version of its
table each time, so every run after the first is the "next version of an existing table" case.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from harness import dbt_executable, machine, prepare_class_archive, ratio_line, run_measured, spread

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
GOAL = 1.2
MODEL = "select id, id * 2 as doubled from {{ source('first', 't_0') }}\n"


def make_root(workdir: Path, tables: int, namespaces: int) -> None:
    """The root under ``workdir/warehouse`` and a one-model project reading its first table."""
    import pyarrow as pa

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace(str(workdir / "warehouse"))
    data = pa.table({"id": pa.array(range(100), pa.int64())})
    for n in range(namespaces):
        namespace.create_namespace([f"ns_{n}"])
    for t in range(tables):
        namespace.create_table([f"ns_{t % namespaces}", f"t_{t}"], data)
    profile = {"type": "lancens", "root": str(workdir / "warehouse"), "schema": "ns_0",
               "master": "local[2]", "threads": 1}  # fmt: skip
    (workdir / "models").mkdir()
    (workdir / "dbt_project.yml").write_text(
        "name: scale\nversion: '1.0'\nconfig-version: 2\nprofile: scale\nmodel-paths: ['models']\n"
        "models:\n  scale:\n    +materialized: table\n"
    )
    (workdir / "profiles.yml").write_text(json.dumps({"scale": {"target": "t", "outputs": {"t": profile}}}))
    (workdir / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: first\n    schema: ns_0\n    tables:\n      - name: t_0\n"
    )
    (workdir / "models" / "scale_model.sql").write_text(MODEL)


def dbt_run(workdir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `dbt run` in a fresh process."""
    command = [dbt_executable(), "run", "--project-dir", str(workdir), "--profiles-dir", str(workdir)]
    measured = run_measured(command, workdir)
    return measured.wall, measured.cpu


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--tables", type=int, default=10_000, help="tables in the large root")
    parser.add_argument("--namespaces", type=int, default=100, help="namespaces in each root")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        make_root(Path(args.dir), args.tables, args.namespaces)
        return

    print(machine(), flush=True)
    print(prepare_class_archive(), flush=True)
    sizes = {"small": args.namespaces, "large": args.tables}
    wall: dict[str, list[float]] = {size: [] for size in sizes}
    cpu: dict[str, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory(prefix="run_at_scale_") as tmp:
        workdirs = {size: Path(tmp) / size for size in sizes}
        for size, tables in sizes.items():
            workdirs[size].mkdir()
            made = run_measured(
                [sys.executable, os.path.abspath(__file__), "--worker", "--dir", str(workdirs[size]),
                 "--tables", str(tables), "--namespaces", str(args.namespaces)],
                workdirs[size],
            )  # fmt: skip
            print(f"  {size:<6} {tables} tables in {args.namespaces} namespaces, made in {made.wall:.0f}s")
            dbt_run(workdirs[size])  # from here on, every timed run writes a next version of the table
        for attempt in range(args.repeat):
            order = list(sizes) if attempt % 2 == 0 else list(reversed(sizes))
            for size in order:
                seconds, cpu_seconds = dbt_run(workdirs[size])
                wall[size].append(seconds)
                cpu[size].append(cpu_seconds)
                print(f"  {size:<6} dbt run {seconds:.2f}s wall, {cpu_seconds:.2f}s CPU", flush=True)
    for size in sizes:
        print(f"{size} ({sizes[size]} tables): wall {spread(wall[size])}, CPU {spread(cpu[size])}")
    print(ratio_line(f"one-model dbt run, {args.tables} / {args.namespaces} tables, wall", wall["large"],
                     wall["small"], GOAL))  # fmt: skip
    print(ratio_line("the same, CPU", cpu["large"], cpu["small"], GOAL))


if __name__ == "__main__":
    main()
