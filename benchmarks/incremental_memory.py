"""Driver memory of an incremental append: the dbt process and its JVM for N rows vs 10 x N rows.

    python benchmarks/incremental_memory.py --rows 100000        # smoke
    python benchmarks/incremental_memory.py                      # 1,000,000 and 10,000,000 rows

One project with one incremental model (`incremental_strategy='append'`) of four columns over
Spark's `range()`: a first `dbt run` builds it with one row, then one measured `dbt run` appends
`--rows` rows and another `10 x --rows` (fresh processes, smaller first). While each runs, its process
tree is sampled every 0.1 s from /proc: the peak resident memory (VmHWM) of the dbt process and of
its JVM, which together are Spark's driver, and the largest sum of the resident memory of the Python
workers (the tasks' processes, which each hold one batch). Printed per size: wall seconds, the rows
the table gained (checked), the three peaks in MiB; then the ratio of the driver's peaks (10 x N over
N). Bounded: the ratio stays near 1 however many rows an append writes (goal <= 1.5).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from dbt_projects import PROFILE_NAME, profile_yml
from harness import child_env, dbt_executable, machine, prepare_class_archive

GOAL = 1.5
MODEL_SQL = """{{ config(materialized='incremental', incremental_strategy='append') }}
select id, id % 97 as user_id, cast(id as double) * 0.5 as amount, concat('event-', id) as label
from range({{ var('first', 0) }}, {{ var('first', 0) }} + {{ var('rows', 1) }})
"""


@dataclass
class Peaks:
    """Peak resident memory (KiB) of one `dbt run`'s processes."""

    dbt: int = 0
    jvm: int = 0
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


def _sample(process: subprocess.Popen, peaks: Peaks, done: threading.Event) -> None:
    while not done.is_set():
        peaks.dbt = max(peaks.dbt, _status(process.pid, "VmHWM"))
        workers = 0
        for pid in _descendants(process.pid):
            kind = _kind(pid)  # read each time: a process can exec java after it appeared
            if kind == "jvm":
                peaks.jvm = max(peaks.jvm, _status(pid, "VmHWM"))
            elif kind == "python":
                workers += _status(pid, "VmRSS")
        peaks.workers = max(peaks.workers, workers)
        time.sleep(0.1)


def dbt_run(project: Path, variables: str) -> tuple[float, Peaks]:
    """One `dbt run` in `project` with `--vars`; its wall seconds and memory peaks."""
    command = [dbt_executable(), "run", "--vars", variables, "--profiles-dir", str(project)]
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


def stored_rows(project: Path) -> int:
    import lance

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace(str(project / "warehouse"))
    return lance.dataset(namespace.describe_table(["analytics", "events"]).location).count_rows()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the smaller append")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    print(machine(), flush=True)
    print(prepare_class_archive(), flush=True)
    with tempfile.TemporaryDirectory(prefix="lancens-incremental-memory-") as tmp:
        project = Path(tmp)
        (project / "models").mkdir()
        (project / "dbt_project.yml").write_text(
            f"name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: {PROFILE_NAME}\n"
            "model-paths: ['models']\n"
        )
        (project / "profiles.yml").write_text(profile_yml("lancens", args.master, threads=1))
        (project / "models" / "events.sql").write_text(MODEL_SQL)
        dbt_run(project, "{first: 0, rows: 1}")
        stored = stored_rows(project)
        driver = []
        for rows in (args.rows, 10 * args.rows):
            wall, peaks = dbt_run(project, f"{{first: {stored}, rows: {rows}}}")
            total = stored_rows(project)
            added, stored = total - stored, total
            if added != rows:
                sys.exit(f"the append of {rows} rows added {added}")
            driver.append(peaks.dbt + peaks.jvm)
            print(
                f"append of {rows:,} rows: {wall:.1f} s; peak RSS MiB: dbt process {peaks.dbt / 1024:.0f}, "
                f"JVM {peaks.jvm / 1024:.0f}, driver (both) {driver[-1] / 1024:.0f}, "
                f"Python workers (sum) {peaks.workers / 1024:.0f}",
                flush=True,
            )
    ratio = driver[1] / driver[0]
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"driver peak, 10 x N / N = {ratio:.2f} (goal <= {GOAL}: {verdict})")
    print(machine())


if __name__ == "__main__":
    main()
