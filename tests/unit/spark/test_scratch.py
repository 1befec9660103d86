"""The process's temporary directory (spark/scratch.py): gone when its process ends, however it ends.

Real processes: each child makes its directory in a private temporary directory (TMPDIR), prints
it, and then exits, or waits to be killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dbt.adapters.lancens.spark import scratch

ROOT = Path(__file__).parents[3]
CHILD = """
import sys, time
from dbt.adapters.lancens.spark.scratch import process_directory
print(process_directory(), flush=True)
if sys.argv[1] == "wait":
    time.sleep(600)
sys.exit(int(sys.argv[1]) if sys.argv[1] != "wait" else 0)
"""


def _start(temp: Path, how: str) -> tuple[subprocess.Popen[str], Path]:
    """A child process that made its directory in `temp`; `how`: an exit code, or "wait"."""
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, how], env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert child.stdout is not None
    directory = Path(child.stdout.readline().strip())
    assert directory.parent == temp and directory.name.startswith(scratch.PREFIX)
    return child, directory


def _age(directory: Path, seconds: float = 3600) -> None:
    """As if `directory` had been made `seconds` ago (past the grace a new one is given)."""
    then = time.time() - seconds
    os.utime(directory, (then, then))


def test_a_process_removes_its_directory_when_it_exits_with_an_error(tmp_path: Path) -> None:
    child, directory = _start(tmp_path, "2")
    assert child.wait(timeout=60) == 2
    assert not directory.exists()


def test_a_killed_process_directory_is_removed_by_the_next_and_a_running_one_is_kept(tmp_path: Path) -> None:
    killed, abandoned = _start(tmp_path, "wait")
    running, held = _start(tmp_path, "wait")
    foreign = tmp_path / "dbt-lancens-somebody-else"
    foreign.mkdir()
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
        assert abandoned.is_dir()  # a killed process runs no exit handler
        for directory in (abandoned, held, foreign):
            _age(directory)

        scratch.remove_abandoned(str(tmp_path))

        assert not abandoned.exists()
        assert held.is_dir() and foreign.is_dir()
    finally:
        running.kill()
        running.wait(timeout=60)


def test_a_young_directory_is_left_to_the_process_that_is_taking_it(tmp_path: Path) -> None:
    """Between making its directory and locking its owner file, a starting process holds no lock."""
    starting = tmp_path / f"{scratch.PREFIX}starting"
    starting.mkdir()

    scratch.remove_abandoned(str(tmp_path))
    assert starting.is_dir()

    _age(starting)
    scratch.remove_abandoned(str(tmp_path))
    assert not starting.exists()
