"""`dbt seed` of one CSV: dbt-lancens (pyarrow CSV -> one Lance commit) vs dbt-spark `method: session`.

    python benchmarks/seed_load.py              # 200,000 rows
    python benchmarks/seed_load.py --rows 2000  # smoke run
    python benchmarks/seed_load.py --spark-timeout 1800   # give up on dbt-spark after 30 minutes

Both sides seed the SAME file (ids, names, amounts, dates, booleans, and a free-text column with
quotes, commas and empty values), once each, on the same machine. Each side runs in its own
subprocess with its own working directory: dbt-spark's session method starts a Hive-enabled Spark
whose Derby metastore lands in the cwd, and one process can host only one SparkContext. Each worker
runs `dbt seed` once to start Spark and create the schema (on a one-row copy of the file), then
times a second `dbt seed` of the full file in the same process: the node's own execution time from
dbt's run results (reading the CSV, building the table, committing). Reported: both times and the
ratio lancens / dbt-spark (target <= 0.2). dbt-spark's seed formats every row into SQL in Python;
when it does not finish within `--spark-timeout`, the ratio printed is an upper bound.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from worker_result import worker_result

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

SEED = "bench_seed"


def write_csv(path: Path, rows: int) -> None:
    """A seed with the column kinds real seeds have; every 7th note is empty (NULL), some quoted."""
    notes = ["plain", 'says "hi", twice', "", "comma, inside", "x"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "customer", "amount", "order_date", "paid", "note"])
        for i in range(rows):
            writer.writerow(
                [i, f"customer_{i % 1000}", f"{(i * 37) % 10000 / 100:.2f}",
                 f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}", "true" if i % 3 else "false",
                 notes[i % 5] if i % 7 else ""]
            )  # fmt: skip


def write_project(workdir: Path, profile: dict, csv_file: Path) -> None:
    (workdir / "seeds").mkdir(exist_ok=True)
    (workdir / "dbt_project.yml").write_text(
        "name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\nseed-paths: ['seeds']\n"
    )
    (workdir / "profiles.yml").write_text(json.dumps({"bench": {"target": "t", "outputs": {"t": profile}}}))
    shutil.copyfile(csv_file, workdir / "seeds" / f"{SEED}.csv")


def dbt_seed(workdir: Path) -> float:
    """Run `dbt seed --full-refresh` in process; the seed node's execution time in seconds."""
    from dbt.cli.main import dbtRunner

    args = [
        "seed",
        "--full-refresh",
        "--project-dir",
        str(workdir),
        "--profiles-dir",
        str(workdir),
        "--quiet",
    ]
    result = dbtRunner().invoke(args)
    if not result.success:
        raise SystemExit(f"dbt seed failed: {result.exception or result.result}")
    (node,) = result.result.results
    return float(node.execution_time)


def count_rows(kind: str, workdir: Path) -> int:
    """Rows in the seeded table, read back by each side's own reader (pylance / Spark)."""
    if kind == "lancens":
        import lance

        from dbt.adapters.lancens.namespace import DirectoryNamespace

        info = DirectoryNamespace(str(workdir / "warehouse")).describe_table(["bench", SEED])
        return lance.dataset(info.location).count_rows()
    from pyspark.sql import SparkSession

    # dbt-spark's session method created the process's session; getOrCreate returns it.
    return SparkSession.builder.getOrCreate().table(f"bench.{SEED}").count()


def worker(kind: str, workdir: Path, csv_file: Path) -> None:
    if kind == "lancens":
        profile = {"type": "lancens", "root": str(workdir / "warehouse"), "schema": "bench",
                   "master": "local[2]", "threads": 1}  # fmt: skip
    else:
        profile = {"type": "spark", "method": "session", "host": "NA", "schema": "bench", "threads": 1}
    warmup = workdir / "warmup.csv"
    with csv_file.open() as source:
        warmup.write_text(source.readline() + source.readline())
    write_project(workdir, profile, warmup)
    warm_s = dbt_seed(workdir)  # starts Spark, creates the schema
    write_project(workdir, profile, csv_file)
    start = time.perf_counter()
    seed_s = dbt_seed(workdir)
    wall_s = time.perf_counter() - start
    print(json.dumps({"kind": kind, "seed_s": seed_s, "wall_s": wall_s, "warmup_s": warm_s,
                      "rows": count_rows(kind, workdir)}))  # fmt: skip


def run_worker(kind: str, base: Path, csv_file: Path, timeout: float | None = None) -> dict | None:
    """The worker's result, or None when it did not finish within `timeout` seconds."""
    workdir = base / kind
    workdir.mkdir()
    command = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--dir", str(workdir),
               "--csv", str(csv_file)]  # fmt: skip
    return worker_result(command, workdir, kind, timeout)


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--spark-timeout", type=float, default=None, help="seconds (default: no limit)")
    parser.add_argument("--worker", choices=["lancens", "spark"], help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--csv", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.dir), Path(args.csv))
        return
    with tempfile.TemporaryDirectory(prefix="seed_load_") as tmp:
        base = Path(tmp)
        csv_file = base / f"{SEED}.csv"
        write_csv(csv_file, args.rows)
        lancens = run_worker("lancens", base, csv_file)
        spark = run_worker("spark", base, csv_file, args.spark_timeout)
    assert lancens is not None
    print(f"{'adapter':<10}{'rows':>10}{'seed node s':>14}{'dbt seed wall s':>17}")
    for run in (lancens, spark):
        if run is not None:
            print(f"{run['kind']:<10}{run['rows']:>10}{run['seed_s']:>14.2f}{run['wall_s']:>17.2f}")
        if run is not None and run["rows"] != args.rows:
            raise SystemExit(f"{run['kind']} loaded {run['rows']} rows, expected {args.rows}")
    if spark is None:
        print(f"spark     {args.rows:>10}  did not finish within {args.spark_timeout:.0f} s")
        ratio = lancens["seed_s"] / args.spark_timeout
        print(
            f"\nlancens / dbt-spark (session) seed time for {args.rows} rows: < {ratio:.3g} (target <= 0.2)"
        )
        return
    ratio = lancens["seed_s"] / spark["seed_s"]
    print(f"\nlancens / dbt-spark (session) seed time for {args.rows} rows: {ratio:.3g} (target <= 0.2)")


if __name__ == "__main__":
    main()
