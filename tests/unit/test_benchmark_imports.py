"""Importing a benchmark module for its helpers (tests/reliability/test_s3_requests.py does) must not
change the importing process: a test process that became a child subreaper on import adopted every
orphaned JVM of the suite and never reaped it, so a class-archive dumper waited forever on a zombie."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
_PR_GET_CHILD_SUBREAPER = 37

_PROBE = f"""
import ctypes, sys
sys.path.insert(0, {str(BENCHMARKS)!r})
import harness, object_store
flag = ctypes.c_int(-1)
assert ctypes.CDLL(None).prctl({_PR_GET_CHILD_SUBREAPER}, ctypes.byref(flag), 0, 0, 0) == 0
print(flag.value)
"""


def test_importing_the_benchmark_helpers_adopts_no_orphans() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "0"
