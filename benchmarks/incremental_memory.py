"""Driver memory of every incremental strategy and of a snapshot: the dbt process and its JVM for N
changed rows vs 10 x N, and a merge's wall time against a `table` build of the same rows.

    python benchmarks/incremental_memory.py --rows 100000 --target 1000000     # smoke
    python benchmarks/incremental_memory.py                     # 1,000,000 vs 10,000,000 on 10,000,000
    python benchmarks/incremental_memory.py --strategies merge snapshot

One project per strategy (`append`, `merge`, `delete+insert`, `insert_overwrite` without and with
`partition_by`, `microbatch`, a `check` and a `timestamp` snapshot) over Spark's `range()`: a
first run builds a target of `--target` rows (ids 0..target), then each measured run changes N
rows, half updates (the last N/2 ids, with a new label and, for the `timestamp` snapshot, a later
`updated_at`) and half inserts (the next N/2 ids); the target is rebuilt before the 10 x N run.
`insert_overwrite` with `partition_by` replaces the partitions (blocks of 100,000 ids) the change
touches; `microbatch` replaces its one day's batch. Fresh processes,
smaller first. While each runs, its process tree is sampled every 0.1 s from /proc: the peak
resident memory (VmHWM) of the dbt process and of its JVM, which together are Spark's driver, and
the largest sum of the resident memory of the Python workers (the tasks' processes). Printed per
run: wall seconds, the rows the table holds after it (checked), the three peaks in MiB; per
strategy the ratio of the driver's peaks (10 x N over N, goal <= 1.2); and the wall time of the N-row
merge over a `table` build of the same N rows (goal <= 1.5), the two run in turn `--merge-repeat`
times (the median of the pairs' ratios: the machine's load moves both alike). With `--dbt-spark`,
dbt-spark's `insert_overwrite` (session method, Parquet, `partition_by` the same blocks) replaces
the same partitions as `insert_overwrite+partition_by`, measured the same way, its wall time beside
ours. Bounded: no strategy takes the model's rows to the driver (docs/materializations.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from dbt_projects import PROFILE_NAME, profile_yml
from harness import child_env, dbt_executable, machine, prepare_class_archive

MEMORY_GOAL = 1.2
MERGE_GOAL = 1.5
_COLUMNS = """id, id % 97 as user_id, cast(id as double) * 0.5 as amount,
  concat('event-', id, '-r{{ var('round') }}') as label"""
_RANGE = "from range({{ var('lo') }}, {{ var('hi') }})"
_BLOCK = 100_000  # ids per `partition_by` partition
MODELS = {
    "append": "{{ config(materialized='incremental', incremental_strategy='append') }}",
    "merge": "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}",
    "delete+insert": "{{ config(materialized='incremental', incremental_strategy='delete+insert',"
    " unique_key='id') }}",
    "insert_overwrite": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}",
    "insert_overwrite+partition_by": "{{ config(materialized='incremental',"
    " incremental_strategy='insert_overwrite', partition_by=['part']) }}",
    "microbatch": "{{ config(materialized='incremental', incremental_strategy='microbatch',"
    " event_time='event_ts', batch_size='day', begin='2024-01-01') }}",
}
_EXTRA = {
    "insert_overwrite+partition_by": f", cast(id div {_BLOCK} as int) as part",
    # every row in one day (ids are milliseconds): one batch, replaced whole
    "microbatch": ", timestamp'2024-01-01 00:00:00'"
    " + make_interval(0, 0, 0, 0, 0, 0, id / 1000.0) as event_ts",
}


def _snapshot(config: str, extra: str = "") -> str:
    """A snapshot `events` of the model's columns (and `extra`) with `config`."""
    return (
        "{% snapshot events %}\n{{ config(unique_key='id', " + config + ") }}\n"
        f"select {_COLUMNS}{extra}\n{_RANGE}\n{{% endsnapshot %}}\n"
    )


# `check` compares the label; `timestamp` takes each round's rows as updated a day later (round 2's
# updates are newer, its inserts new)
SNAPSHOTS = {
    "snapshot": _snapshot("strategy='check', check_cols=['label']"),
    "snapshot-timestamp": _snapshot(
        "strategy='timestamp', updated_at='updated_at'",
        ",\n  timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, {{ var('round') }}) as updated_at",
    ),
}
STRATEGIES = (*MODELS, *SNAPSHOTS)
DBT_SPARK = "dbt-spark insert_overwrite+partition_by"
_DBT_SPARK_MODEL = (
    "{{ config(materialized='incremental', incremental_strategy='insert_overwrite',"
    " partition_by=['part'], file_format='parquet') }}"
)
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]


@dataclass
class Peaks:
    """Peak resident memory (KiB) of one `dbt run`'s processes."""

    dbt: int = 0
    jvm: int = 0  # the driver's JVM (in `local[...]` Spark's executor too)
    executors: int = 0  # the largest sum of executor JVMs' resident memory (`local-cluster[...]`)
    workers: int = 0


def _status(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def _kind(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return "gone"
    return "jvm" if command.endswith(b"java") else "python" if b"python" in command else "other"


def _parent_jvm(pid: int, jvms: set[int]) -> bool:
    """Whether a JVM is among `pid`'s ancestors (an executor of `local-cluster`, below the driver)."""
    for _ in range(64):
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
        if pid in jvms:
            return True
        if pid <= 1:
            return False
    return False


def _sample(process: subprocess.Popen, peaks: Peaks, done: threading.Event) -> None:
    while not done.is_set():
        peaks.dbt = max(peaks.dbt, _status(process.pid, "VmHWM"))
        workers = executors = 0
        descendants = _descendants(process.pid)
        jvms = {pid for pid in descendants if _kind(pid) == "jvm"}  # read each time: a process can exec java
        for pid in descendants:
            if pid in jvms and _parent_jvm(pid, jvms):
                executors += _status(pid, "VmRSS")  # an executor: the driver's JVM started it
            elif pid in jvms:
                peaks.jvm = max(peaks.jvm, _status(pid, "VmHWM"))
            elif _kind(pid) == "python":
                workers += _status(pid, "VmRSS")
        peaks.workers = max(peaks.workers, workers)
        peaks.executors = max(peaks.executors, executors)
        time.sleep(0.1)


def dbt_command(project: Path, command: list[str]) -> tuple[float, Peaks]:
    """One dbt `command` in `project`; its wall seconds and memory peaks."""
    command = [dbt_executable(), *command, "--profiles-dir", str(project)]
    peaks = Peaks()
    done = threading.Event()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=project, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    sampler = threading.Thread(target=_sample, args=(process, peaks, done))
    sampler.start()
    output, _ = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{output[-4000:]}")
    return time.perf_counter() - start, peaks


def stored_rows(project: Path, name: str = "events") -> int:
    import lance

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace(str(project / "warehouse"))
    return lance.dataset(namespace.describe_table(["analytics", name]).location).count_rows()


def parquet_rows(project: Path) -> int:
    """The rows of dbt-spark's `events` table: its Parquet files under Spark's warehouse directory."""
    import pyarrow.dataset as pads

    location = project / "spark-warehouse" / "analytics.db" / "events"
    return pads.dataset(str(location), format="parquet", partitioning="hive").count_rows()


def make_project(directory: Path, strategy: str, master: str, driver_memory: str | None = None) -> Path:
    """A project of one model `events` (or snapshot) configured with `strategy` (`DBT_SPARK`: the
    partitioned `insert_overwrite` for dbt-spark)."""
    (directory / "models").mkdir(parents=True)
    (directory / "snapshots").mkdir()
    (directory / "dbt_project.yml").write_text(
        f"name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: {PROFILE_NAME}\n"
        "model-paths: ['models']\nsnapshot-paths: ['snapshots']\n"
    )
    adapter = "spark" if strategy == DBT_SPARK else "lancens"
    config = {"spark.driver.memory": driver_memory} if driver_memory else None
    (directory / "profiles.yml").write_text(profile_yml(adapter, master, config, threads=1))
    if strategy in SNAPSHOTS:
        (directory / "snapshots" / "events.sql").write_text(SNAPSHOTS[strategy])
    elif strategy == DBT_SPARK:
        extra = _EXTRA["insert_overwrite+partition_by"]
        (directory / "models" / "events.sql").write_text(
            f"{_DBT_SPARK_MODEL}\nselect {_COLUMNS}{extra}\n{_RANGE}\n"
        )
    else:
        select = f"select {_COLUMNS}{_EXTRA.get(strategy, '')}\n{_RANGE}\n"
        (directory / "models" / "events.sql").write_text(f"{MODELS[strategy]}\n{select}")
    return directory


def run_strategy(project: Path, strategy: str, target: int, rows: int, rebuild: bool) -> tuple[float, Peaks]:
    """Build the target (`rebuild`: again, from scratch), then change `rows` rows; the change's run."""
    command = (
        ["snapshot"] if strategy in SNAPSHOTS else ["run", *(WINDOW if strategy == "microbatch" else [])]
    )
    if rebuild:
        refresh = [] if strategy in SNAPSHOTS else ["--full-refresh"]
        if strategy in SNAPSHOTS and (project / "warehouse").exists():
            shutil.rmtree(project / "warehouse")
        dbt_command(project, [*command, *refresh, "--vars", f"{{round: 1, lo: 0, hi: {target}}}"])
    change = f"{{round: 2, lo: {target - rows // 2}, hi: {target + rows // 2}}}"
    return dbt_command(project, [*command, "--vars", change])


def expected_rows(strategy: str, target: int, rows: int) -> int:
    """The rows the table holds after the change (a snapshot keeps the closed records too)."""
    if strategy == "append":
        return target + rows
    if strategy in ("insert_overwrite", "microbatch"):
        return rows
    if strategy in ("insert_overwrite+partition_by", DBT_SPARK):  # blocks before the first changed stay
        return (target - rows // 2) // _BLOCK * _BLOCK + rows
    return target + rows // 2 + (rows // 2 if strategy in SNAPSHOTS else 0)


def table_build(directory: Path, rows: int, master: str) -> float:
    """The wall seconds of a `table` model of `rows` rows of the same columns."""
    project = make_project(directory, "append", master)
    (project / "models" / "events.sql").write_text(
        f"{{{{ config(materialized='table') }}}}\nselect {_COLUMNS}\n{_RANGE}\n"
    )
    wall, _ = dbt_command(project, ["run", "--vars", f"{{round: 1, lo: 0, hi: {rows}}}"])
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="changed rows of the smaller run")
    parser.add_argument("--target", type=int, default=10_000_000, help="rows of the target table")
    parser.add_argument("--strategies", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--merge-repeat", type=int, default=1, help="merge / table build pairs")
    parser.add_argument(
        "--dbt-spark", action="store_true", help="also dbt-spark's partitioned insert_overwrite on Parquet"
    )
    parser.add_argument("--no-10x", action="store_true", help="only the N-row change (no memory ratio)")
    parser.add_argument(
        "--driver-memory",
        help="the driver JVM's heap (spark.driver.memory, e.g. 512m; default Spark's 1g): a run of 10 x N"
        " rows that completes in a smaller heap shows the JVM's growth is heap it was allowed, not rows held",
    )
    args = parser.parse_args()
    print(machine(), flush=True)
    print(prepare_class_archive(), flush=True)
    walls: dict[str, float] = {}
    strategies = [*args.strategies, *([DBT_SPARK] if args.dbt_spark else [])]
    sizes = (args.rows,) if args.no_10x else (args.rows, 10 * args.rows)
    with tempfile.TemporaryDirectory(prefix="lancens-incremental-memory-") as tmp:
        for strategy in strategies:
            name = strategy.replace("+", "_").replace(" ", "_")
            project = make_project(Path(tmp) / name, strategy, args.master, args.driver_memory)
            driver = []
            for rows in sizes:
                wall, peaks = run_strategy(project, strategy, args.target, rows, rebuild=True)
                walls[f"{strategy} {rows}"] = wall
                count = parquet_rows if strategy == DBT_SPARK else stored_rows
                stored, expected = count(project), expected_rows(strategy, args.target, rows)
                if stored != expected:
                    sys.exit(f"{strategy} of {rows} changed rows left {stored} rows, not {expected}")
                driver.append(peaks.dbt + peaks.jvm)
                print(
                    f"{strategy}, {rows:,} changed rows on {args.target:,}: {wall:.1f} s, {stored:,} rows; "
                    f"peak RSS MiB: dbt process {peaks.dbt / 1024:.0f}, JVM {peaks.jvm / 1024:.0f}, "
                    f"driver (both) {driver[-1] / 1024:.0f}, Python workers (sum) {peaks.workers / 1024:.0f}"
                    + (f", executor JVMs (sum) {peaks.executors / 1024:.0f}" if peaks.executors else ""),
                    flush=True,
                )
            if len(driver) == 2:
                ratio = driver[1] / driver[0]
                verdict = "met" if ratio <= MEMORY_GOAL else "NOT met"
                print(f"{strategy}: driver peak, 10 x N / N = {ratio:.2f} (goal <= {MEMORY_GOAL}: {verdict})")
        if args.dbt_spark and "insert_overwrite+partition_by" in args.strategies:
            for rows in sizes:
                ours, theirs = walls[f"insert_overwrite+partition_by {rows}"], walls[f"{DBT_SPARK} {rows}"]
                print(
                    f"insert_overwrite of {rows:,} rows' partitions: lancens {ours:.1f} s / "
                    f"dbt-spark Parquet {theirs:.1f} s = {ours / theirs:.2f}"
                )
        if "merge" in args.strategies:
            merge_vs_table(Path(tmp), args.rows, args.target, args.master, args.merge_repeat, walls)
    print(machine())


def merge_vs_table(tmp: Path, rows: int, target: int, master: str, repeat: int, walls: dict) -> None:
    """The N-row merge's wall over a `table` build of N rows: the first pair uses the merge measured
    above; each further pair runs the merge again (target rebuilt) right before a table build."""
    ratios = []
    for attempt in range(repeat):
        if attempt:
            project = Path(tmp) / "merge"
            walls[f"merge {rows}"], _ = run_strategy(project, "merge", target, rows, rebuild=True)
        build = table_build(Path(tmp) / f"table{attempt}", rows, master)
        ratios.append(walls[f"merge {rows}"] / build)
        print(
            f"merge of {rows:,} rows {walls[f'merge {rows}']:.1f} s / table build of them {build:.1f} s",
            flush=True,
        )
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= MERGE_GOAL else "NOT met"
    print(
        f"merge / table build, median of {repeat} pairs: {ratio:.2f} "
        f"(pairs {', '.join(f'{r:.2f}' for r in ratios)}; goal <= {MERGE_GOAL}: {verdict})"
    )


if __name__ == "__main__":
    main()
