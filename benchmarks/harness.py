"""What every benchmark shares: the machine line, child processes, medians and ratio lines.

The benchmarks run on a small machine shared with other work, so each one compares dbt-lancens with
its baseline side by side in the same run, interleaved, ``--repeat`` times, and reports the ratio of
the medians together with the core count and load average the figures were taken under.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPOSITORY = BENCHMARKS.parent


def machine() -> str:
    """One line naming what the figures depend on: cores, load, and the versions measured."""
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    versions = ", ".join(
        f"{name} {_version(name)}" for name in ("pyspark", "pylance", "pyarrow", "dbt-core", "dbt-spark")
    )
    return (
        f"machine: {cores} cores ({usable} usable), load average {load}; {versions}; dbt-lancens {_commit()}"
    )


def _commit() -> str:
    """The repository's commit (and whether the work tree differs), so figures name the code measured."""
    try:
        head = subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(REPOSITORY), "status", "--porcelain", "--", "dbt"],
                               capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return head + (" (dbt/ modified)" if dirty else "")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a benchmark subprocess: loopback Spark, this interpreter for workers."""
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    env.update(extra or {})
    return env


def dbt_executable() -> str:
    """The ``dbt`` entry point installed beside this interpreter (the project's virtualenv)."""
    return str(Path(sys.executable).with_name("dbt"))


@dataclass(frozen=True)
class Measured:
    """One process run: its wall seconds, and the CPU seconds of it and everything it started."""

    wall: float
    cpu: float
    stdout: str = ""

    def result(self) -> dict:
        """The JSON object a worker printed on its last stdout line."""
        return json.loads(self.stdout.strip().splitlines()[-1])


_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux), so their CPU time reaches our RUSAGE_CHILDREN.

    pyspark does not wait for the JVM it launched, nor the JVM for every Python daemon: without
    this their CPU seconds would be lost when the dbt process exits first. Done on the first
    measured run, never on import: a test process that imports a benchmark for its helpers must not
    adopt (and so leave unreaped) the orphans of its other tests, such as a JVM another process waits
    for.
    """
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans() -> None:
    """Wait for adopted descendants (a JVM still shutting down) so their CPU time is counted."""
    while _become_subreaper():
        try:
            os.wait()
        except ChildProcessError:
            return


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(command: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> Measured:
    """Run ``command`` in ``cwd``: wall seconds until it exits, CPU seconds of its whole process tree.

    Exits with the output's tail when it fails. The CPU figure is much less disturbed by other
    work on a shared machine than the wall time, so the benchmarks report both.
    """
    _reap_orphans()
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        list(command), cwd=cwd, env=child_env(env), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    _reap_orphans()
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {cwd}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return Measured(elapsed, _children_cpu() - cpu, done.stdout)


def run_timed(command: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> float:
    """Wall seconds of ``command`` run in ``cwd``; exits with its output tail when it fails."""
    return run_measured(command, cwd, env).wall


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def median_ms(call: Callable[[], object], repeat: int) -> float:
    """Milliseconds of ``call``, the median of ``repeat`` calls in this process (engine operations)."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def spread(values: Sequence[float]) -> str:
    """``median (min-max, n=N)`` of one measurement's repeats."""
    return f"{median(values):.2f}s ({min(values):.2f}-{max(values):.2f}, n={len(values)})"


def ratio_line(label: str, ours: Sequence[float], baseline: Sequence[float], target: float) -> str:
    """The ratio of the medians, the per-repeat ratios (same-repeat pairs) and whether it meets its target."""
    ratio = median(ours) / median(baseline)
    pairs = ", ".join(f"{a / b:.2f}" for a, b in zip(ours, baseline, strict=True))
    verdict = "met" if ratio <= target else "NOT met"
    return f"{label} = {ratio:.2f} (per repeat: {pairs}; target <= {target}: {verdict})"


_MAKE_CLASS_ARCHIVE = """
from dbt.adapters.lancens.spark import class_archive, get_or_create_session
spark = get_or_create_session(master="local[1]", class_archive_dir=class_archive.default_directory())
spark.sql("select 1").collect()
"""


def prepare_class_archive() -> str:
    """Make the driver JVM's class archive (``spark/class_archive.py``) before anything is timed, as
    a user's first ``dbt run`` does, and wait for its dump: the timed runs then all map it, and no
    dump runs beside (or is counted in) a timed build. A line saying what was done.

    ``DBT_LANCENS_CLASS_ARCHIVE=off`` measures dbt-lancens without the archive."""
    from dbt.adapters.lancens.spark import class_archive

    directory = class_archive.default_directory()
    if directory is None:
        return f"class archive: off ({class_archive.SWITCH}=off)"
    start = time.perf_counter()
    # The dumper outlives the process that started it and is adopted by this subreaper, so
    # run_timed returns once the dump has ended.
    run_timed([sys.executable, "-c", _MAKE_CLASS_ARCHIVE], REPOSITORY)
    archives = [name for name in os.listdir(directory) if name.endswith(".jsa")]
    failed = [name for name in os.listdir(directory) if name.endswith(".failed")]
    if failed:
        return f"class archive: a dump failed ({', '.join(failed)} in {directory}), runs go without"
    return f"class archive: {len(archives)} in {directory} (ready after {time.perf_counter() - start:.0f}s)"
